package fsmode

import (
	"io/fs"
	"testing"
)

func TestName(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		0o644:                             "regular file",
		fs.ModeDir | 0o755:                "directory",
		fs.ModeSymlink | 0o777:            "symbolic link",
		fs.ModeNamedPipe:                  "named pipe",
		fs.ModeSocket:                     "socket",
		fs.ModeDevice | fs.ModeCharDevice: "character device",
		fs.ModeDevice:                     "device",
		fs.ModeIrregular:                  "irregular file",
	} {
		if got := Name(m); got != want {
			t.Errorf("Name(%v) = %q, want %q", m, got, want)
		}
	}
}
