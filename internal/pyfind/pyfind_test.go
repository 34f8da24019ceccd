package pyfind

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// machineFind is Find on this machine as it is, run once for the tests
// that compare with it (each run probes every shim on PATH: seconds).
var machineFind = sync.OnceValue(func() []Interpreter { return Find(context.Background(), Options{}) })

func TestFindAndPick(t *testing.T) {
	found := machineFind()
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
	real := machineFind()
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

// The order of the candidates is the documented one: each absolute PATH
// folder in order, each OnPath pattern in order, names in byte order;
// then every manager's interpreters together, in byte order of their
// paths. Relative folders are skipped.
func TestCandidates(t *testing.T) {
	root := t.TempDir()
	touch := func(rel ...string) {
		for _, r := range rel {
			p := filepath.Join(root, filepath.FromSlash(r))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	touch("bin1/python3.9", "bin1/python3.10", "bin1/python3", "bin1/python3.12-config", "bin1/python3.12-gdb.py", "bin1/python3.6m", "bin1/python2.7", "bin1/pythonw",
		"bin2/python3.12",
		"home/.pyenv/versions/3.12.1/bin/python3.12", "home/.pyenv/versions/3.11.7/bin/python3.11", "home/.pyenv/versions/3.11.7/bin/python3",
		"pyenv-root/versions/3.13.0/bin/python3.13",
		"home/.local/share/uv/python/cpython-3.12.4-linux-x86_64-gnu/bin/python3.12",
		"win/python.exe", "win/python3.exe", "win/python3.12.exe", "win/python3.9.exe", "win/python3.12-config.exe", "win/python3.12", "win/pythonw.exe",
		"home/.pyenv/pyenv-win/versions/3.11.7/python.exe", "appdata/uv/python/cpython-3.12.4-windows-x86_64-none/python.exe")
	j := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	list := func(dirs ...string) string { return strings.Join(dirs, string(os.PathListSeparator)) }
	for _, tc := range []struct {
		name string
		goos string
		env  map[string]string
		want []string
	}{
		{"unix, pyenv under HOME", "linux",
			map[string]string{"PATH": list(j("bin1"), "relative/bin", "", j("bin2")), "HOME": j("home")},
			// python3.X, then python3.XY: not the shims' python3.X-config,
			// python3.X-gdb.py or python3.Xm
			[]string{j("bin1/python3"), j("bin1/python3.9"), j("bin1/python3.10"),
				j("bin2/python3"), j("bin2/python3.12"),
				j("home/.local/share/uv/python/cpython-3.12.4-linux-x86_64-gnu/bin/python3.12"),
				j("home/.pyenv/versions/3.11.7/bin/python3.11"), j("home/.pyenv/versions/3.12.1/bin/python3.12")}},
		{"unix, PYENV_ROOT", "linux",
			map[string]string{"PATH": j("bin2"), "HOME": j("home"), "PYENV_ROOT": j("pyenv-root")},
			[]string{j("bin2/python3"), j("bin2/python3.12"),
				j("home/.local/share/uv/python/cpython-3.12.4-linux-x86_64-gnu/bin/python3.12"),
				j("pyenv-root/versions/3.13.0/bin/python3.13")}},
		{"unix, relative PYENV_ROOT and no HOME", "linux",
			map[string]string{"PATH": j("bin2"), "PYENV_ROOT": "pyenv-root"},
			[]string{j("bin2/python3"), j("bin2/python3.12")}},
		{"windows", "windows",
			map[string]string{"PATH": j("win"), "USERPROFILE": j("home"), "APPDATA": j("appdata")},
			[]string{j("win/python.exe"), j("win/python3.exe"), j("win/python3.9.exe"), j("win/python3.12.exe"),
				j("appdata/uv/python/cpython-3.12.4-windows-x86_64-none/python.exe"),
				j("home/.pyenv/pyenv-win/versions/3.11.7/python.exe")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Candidates(LayoutFor(tc.goos), func(k string) string { return tc.env[k] })
			if !slices.Equal(got, tc.want) {
				t.Errorf("candidates =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// Find runs every candidate: a shim on PATH that does not start is
// skipped for a working interpreter of the same version under pyenv, and
// an interpreter in a relative PATH folder is not run at all.
func TestFindSkipsShimsAndRelativeFolders(t *testing.T) {
	real := machineFind()
	if len(real) == 0 {
		t.Skip("no CPython 3 on this machine")
	}
	py := real[len(real)-1]
	work := t.TempDir()
	shims, home, cwd := filepath.Join(work, "shims"), filepath.Join(work, "home"), filepath.Join(work, "cwd")
	bin := filepath.Join(home, ".pyenv", "versions", py.Version, "bin")
	for _, d := range []string{shims, bin, filepath.Join(cwd, "here")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shim := "#!/bin/sh\necho \"pyenv: $(basename \"$0\"): command not found\" >&2\nexit 127\n"
	for _, p := range []string{filepath.Join(shims, "python3"), filepath.Join(shims, "python"+py.MinorVersion())} {
		if err := os.WriteFile(p, []byte(shim), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	good := filepath.Join(bin, "python"+py.MinorVersion())
	if err := os.Symlink(py.Path, good); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(py.Path, filepath.Join(cwd, "here", "python3")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	env := map[string]string{"PATH": "here" + string(os.PathListSeparator) + shims, "HOME": home}
	got := Find(context.Background(), Options{Getenv: func(k string) string { return env[k] }})
	if len(got) != 1 || got[0].Path != good {
		t.Errorf("Find = %+v, want only %s (not the shims, not ./here/python3)", got, good)
	}
	delete(env, "HOME")
	if got := Find(context.Background(), Options{Getenv: func(k string) string { return env[k] }}); len(got) != 0 {
		t.Errorf("Find with only shims and a relative folder = %+v, want nothing", got)
	}
}
