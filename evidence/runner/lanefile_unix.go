//go:build unix

package runner

import (
	"fmt"
	"os"
	"syscall"
)

// openLaneFile opens for reading a file a lane writes (its cases file),
// only when it is a regular file: never through a symbolic link the lane
// put in its place (O_NOFOLLOW), which would have mkrelease read, outside
// the sandbox, a file the lane cannot, and never waiting on a FIFO
// (O_NONBLOCK).
func openLaneFile(file string) (*os.File, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	return f, nil
}
