package bundle

import (
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/pyfind"
)

// shellFunction cuts the sh function name out of script.
func shellFunction(t *testing.T, script, name string) string {
	t.Helper()
	start := strings.Index(script, "\n"+name+"() {\n")
	if start < 0 {
		t.Fatalf("install.sh has no function %s", name)
	}
	end := strings.Index(script[start:], "\n}\n")
	return script[start+1 : start+end+3]
}

// posixShell is dash where the machine has it (Debian's sh), else sh.
func posixShell(t *testing.T) string {
	t.Helper()
	for _, sh := range []string{"dash", "sh"} {
		if p, err := exec.LookPath(sh); err == nil {
			return p
		}
	}
	t.Skip("no sh")
	return ""
}

// install.sh's candidates, run by a POSIX shell, lists what `mkrelease
// install` tries (pyfind.Candidates), in its order, for the same folders
// and environment, on Unix and on Windows: the order of PATH and of the
// patterns, byte order among the names, relative folders skipped,
// PYENV_ROOT or its default, the managers' interpreters merged in byte
// order.
func TestInstallScriptCandidatesAreInstalls(t *testing.T) {
	sh := posixShell(t)
	root := t.TempDir()
	touch := func(rel ...string) {
		for _, r := range rel {
			p := filepath.Join(root, filepath.FromSlash(r))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	touch("b1/python3.9", "b1/python3.10", "b1/python3", "b1/python3.12-config", "b1/python2.7", "b1/pythonw", "b1/python3.1x",
		"b2/python3.12", "rel/python3.13", "b 3/python3.11",
		"home/.pyenv/versions/3.12.1/bin/python3.12", "home/.pyenv/versions/3.11.7/bin/python3.11", "home/.pyenv/versions/3.11.7/bin/python3",
		"home/.pyenv/versions/3.1/bin/python3.1", "home/.pyenv/versions/3.1.2/bin/python3.1",
		"pyenv-root/versions/3.13.0/bin/python3.13",
		"home/.local/share/uv/python/cpython-3.12.4-linux-x86_64-gnu/bin/python3.12",
		"win/python.exe", "win/python3.exe", "win/python3.12.exe", "win/python3.12", "win/pythonw.exe",
		"home/.pyenv/pyenv-win/versions/3.11.7/python.exe", "appdata/uv/python/cpython-3.12.4-windows-x86_64-none/python.exe")
	tools := toolsDir(t, "sort")
	j := func(rel string) string { return filepath.Join(root, rel) }
	list := func(dirs ...string) string { return strings.Join(dirs, ":") }
	for _, tc := range []struct {
		name, tag, goos string
		env             map[string]string
	}{
		{"unix, pyenv under HOME", "manylinux_2_17_x86_64", "linux",
			map[string]string{"PATH": list(j("b1"), "rel", "", j("b 3"), j("b2"), tools), "HOME": j("home")}},
		{"unix, PYENV_ROOT", "manylinux_2_17_x86_64", "linux",
			map[string]string{"PATH": list(j("b2"), tools), "HOME": j("home"), "PYENV_ROOT": j("pyenv-root")}},
		{"unix, relative PYENV_ROOT, no HOME", "manylinux_2_17_x86_64", "linux",
			map[string]string{"PATH": list(tools, j("b1")), "PYENV_ROOT": "pyenv-root"}},
		{"macOS", "macosx_13_0_arm64", "darwin",
			map[string]string{"PATH": list(j("b1"), tools), "HOME": j("home")}},
		{"windows", "win_amd64", "windows",
			map[string]string{"PATH": list(j("win"), j("b1"), tools), "USERPROFILE": j("home"), "APPDATA": j("appdata")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := sampleDocs
			d.PlatformTag = tc.tag
			script, err := InstallScript(d)
			if err != nil {
				t.Fatal(err)
			}
			fns := shellFunction(t, string(script), "candidates")
			if tc.goos == "windows" {
				fns += shellFunction(t, string(script), "shell_path")
			}
			cmd := exec.Command(sh, "-c", fns+"candidates\n")
			for k, v := range tc.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("candidates: %v", err)
			}
			// As find_python does: a line whose name matches no pattern
			// of the layout is a pattern sh left as it was.
			layout := pyfind.LayoutFor(tc.goos)
			var patterns []string
			patterns = append(patterns, layout.OnPath...)
			for _, m := range layout.Managers {
				patterns = append(patterns, path.Base(m.Glob))
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				for _, pat := range patterns {
					if ok, _ := path.Match(pat, path.Base(line)); ok {
						got = append(got, line)
						break
					}
				}
			}
			want := pyfind.Candidates(layout, func(k string) string { return tc.env[k] })
			if !slices.Equal(got, want) {
				t.Errorf("install.sh's candidates:\n%s\nmkrelease install's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(want) < 3 {
				t.Errorf("only %d candidates: the case tests little", len(want))
			}
		})
	}
}

// install.sh, run by dash on a real bundle, picks the interpreter `mkrelease
// install` picks: with a PATH whose python3 and python3.X are shims that do
// not start, the working CPython under pyenv's versions folder, with which
// it installs the bundle for real; with nothing that works, it refuses with
// the remedy, as `mkrelease install` does, and leaves no virtualenv.
func TestInstallScriptFindsWhatInstallFinds(t *testing.T) {
	if testing.Short() {
		t.Skip("creates a virtualenv and runs pip")
	}
	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		t.Skip("the test bundle is for linux-x86_64")
	}
	sh := posixShell(t)
	boundary := []string{"3.11", "3.12", "3.13"} // demoRelease's
	real, ok := pyfind.Pick(pyfind.Find(context.Background(), pyfind.Options{}), boundary)
	if !ok {
		t.Skip("no CPython " + strings.Join(boundary, ", ") + " on this machine")
	}
	_, files := testBundle(t)
	work := t.TempDir()
	root := filepath.Join(work, "demo-app-2.0-linux-x86_64")
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shims := filepath.Join(work, "shims")
	os.MkdirAll(shims, 0o755)
	broken := "#!/bin/sh\necho \"pyenv: $(basename \"$0\"): command not found\" >&2\nexit 1\n"
	for _, n := range []string{"python3", "python" + real.MinorVersion()} {
		if err := os.WriteFile(filepath.Join(shims, n), []byte(broken), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := shims + ":" + toolsDir(t, scriptTools...)

	t.Run("a broken shim on PATH, a working interpreter under pyenv", func(t *testing.T) {
		home := filepath.Join(work, "home")
		bin := filepath.Join(home, ".pyenv", "versions", real.Version, "bin")
		os.MkdirAll(bin, 0o755)
		good := filepath.Join(bin, "python"+real.MinorVersion())
		if err := os.Symlink(real.Path, good); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"PATH": path, "HOME": home}
		chosen, err := choosePython(context.Background(), InstallOptions{Getenv: func(k string) string { return env[k] }}, boundary)
		if err != nil || chosen != good {
			t.Fatalf("mkrelease install picks %q (%v), want %s", chosen, err, good)
		}
		venv := filepath.Join(work, "venv")
		stderr, code := runScript(t, sh, root, env, venv)
		if code != 0 || !strings.Contains(stderr, "install.sh: creating the virtualenv "+venv+" with "+good+"\n") ||
			!strings.Contains(stderr, "install.sh: installed demo-app 2.0 into "+venv) {
			t.Fatalf("install.sh exited %d, want 0 having used %s:\n%s", code, good, stderr)
		}
		out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-I", "-c",
			"import sys, demo_app, example; print('%d.%d' % sys.version_info[:2], demo_app.VALUE, example.VALUE)").CombinedOutput()
		if got, want := strings.TrimSpace(string(out)), real.MinorVersion()+" 1 1"; err != nil || got != want {
			t.Errorf("the virtualenv's Python says %q (%v), want %q", got, err, want)
		}
	})

	t.Run("nothing that works", func(t *testing.T) {
		env := map[string]string{"PATH": path, "HOME": t.TempDir()}
		if chosen, err := choosePython(context.Background(), InstallOptions{Getenv: func(k string) string { return env[k] }}, boundary); err == nil {
			t.Errorf("mkrelease install picks %s", chosen)
		}
		venv := filepath.Join(work, "venv-none")
		stderr, code := runScript(t, sh, root, env, venv)
		want := "install.sh: no CPython 3.11, 3.12, 3.13 that runs was found on PATH or under pyenv or uv (2 interpreters tried): install one, or pass it as the second argument: ./install.sh VENV /path/to/python3.X\n"
		if code != 1 || !strings.HasSuffix(stderr, want) {
			t.Errorf("install.sh exited %d, want 1 with %q:\n%s", code, want, stderr)
		}
		if _, err := os.Lstat(venv); err == nil {
			t.Errorf("install.sh left %s", venv)
		}
	})
}

// runScript runs install.sh of the bundle folder root with sh, the
// environment env and the arguments args; it returns its stderr and exit
// status.
func runScript(t *testing.T, sh, root string, env map[string]string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(sh, append([]string{filepath.Join(root, "install.sh")}, args...)...)
	cmd.Dir = filepath.Dir(root)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return stderr.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stderr.String(), 0
}
