//go:build unix

package extract

import (
	"maps"
	"syscall"
	"testing"
)

// TestUmask checks that modes are normalised whatever the umask.
func TestUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	data := makeTar(t, file("a/b", "x"), execFile("a/run", "y"), dir("d/"))
	dest, _, err := extractBytes(t, data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "dir 0755", "a/b": "file 0644 x", "a/run": "file 0755 y", "d": "dir 0755"}
	if got := listTree(t, dest); !maps.Equal(got, want) {
		t.Errorf("tree under umask 077:\n got %q\nwant %q", got, want)
	}
}
