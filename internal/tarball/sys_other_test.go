//go:build !unix

package tarball

import (
	"os"
	"testing"
)

// setUmask does nothing: there is no umask outside Unix, so the test's
// modes are only those of the entries and files.
func setUmask(mask int) int { return 0 }

// notRegular makes a file at path that is not a regular file: a folder
// (there are no FIFOs here).
func notRegular(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}
