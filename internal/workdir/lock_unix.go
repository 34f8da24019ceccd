//go:build unix

package workdir

import (
	"os"

	"golang.org/x/sys/unix"
)

// lock takes an exclusive lock on f: waiting for it when wait, else failing
// at once when another process holds it.
func lock(f *os.File, wait bool) error {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}
