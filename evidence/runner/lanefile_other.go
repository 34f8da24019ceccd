//go:build !unix

package runner

import (
	"fmt"
	"os"
)

// openLaneFile opens for reading a file a lane writes (its cases file),
// only when it is a regular file, and the one found before opening it
// (not a link put in its place meanwhile).
func openLaneFile(file string) (*os.File, error) {
	before, err := os.Lstat(file)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !os.SameFile(before, st) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened", file)
	}
	return f, nil
}
