//go:build unix

package sandbox

import (
	"os"
	"strconv"
	"syscall"
)

// CloseInherited marks every descriptor above stderr close-on-exec. Go
// opens its own descriptors that way, but one mkrelease inherited from
// whatever started it (a pipe, a credential helper's socket) would
// otherwise pass on into every command it starts, sandboxed or not (the
// sandbox keeps the descriptors it is given). The descriptors are listed
// from /proc/self/fd (Linux), else /dev/fd (macOS and the BSDs); where
// neither can be read nothing is marked.
func CloseInherited() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		if entries, err = os.ReadDir("/dev/fd"); err != nil {
			return
		}
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
