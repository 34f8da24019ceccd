//go:build unix

package tarball

import (
	"syscall"
	"testing"
)

// setUmask sets the process's umask and returns the previous one.
func setUmask(mask int) int { return syscall.Umask(mask) }

// notRegular makes a file at path that is not a regular file: a FIFO.
func notRegular(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}
