package pyfind

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestFindAndPick(t *testing.T) {
	found := Find(context.Background(), Options{})
	if len(found) == 0 {
		t.Skip("no CPython 3 on this machine")
	}
	for i, in := range found {
		if i > 0 && found[i-1].Minor >= in.Minor {
			t.Errorf("not one per minor, oldest first: %v", found)
		}
		if in.Implementation != "cpython" || in.Major != 3 {
			t.Errorf("%+v", in)
		}
	}
	newest := found[len(found)-1]
	if got, ok := Pick(found, nil); !ok || got != newest {
		t.Errorf("Pick(all) = %v", got)
	}
	if _, ok := Pick(found, []string{"2.7"}); ok {
		t.Error("Pick found a version not on the machine")
	}
}

// pyenv's folders are searched even when PATH does not lead there.
func TestFindLooksInPyenv(t *testing.T) {
	real := Find(context.Background(), Options{})
	if len(real) == 0 {
		t.Skip("no CPython 3 on this machine")
	}
	root := t.TempDir()
	bin := filepath.Join(root, "versions", real[0].Version, "bin")
	os.MkdirAll(bin, 0o755)
	link := filepath.Join(bin, "python"+real[0].MinorVersion())
	if err := os.Symlink(real[0].Path, link); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": t.TempDir(), "PYENV_ROOT": root, "HOME": t.TempDir()}
	got := Find(context.Background(), Options{Getenv: func(k string) string { return env[k] }})
	if len(got) != 1 || got[0].Path != link {
		t.Errorf("Find with an empty PATH and a pyenv root = %v, want %s", got, link)
	}
}
