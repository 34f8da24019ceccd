package bundle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/proctest"
)

// TestInstallCancelEndsPip: an install interrupted while pip runs returns
// at once, ends what pip started (here a process that holds pip's output
// open and would keep the install waiting for minutes), and removes the
// virtualenv it created.
func TestInstallCancelEndsPip(t *testing.T) {
	tag, _ := hostPlatformTag()
	if tag == "" {
		t.Skip("no platform tag known for this machine")
	}
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	t.Setenv("FAKEPY_READY", ready)
	// The child's command line names it: the pids pip sees may be those
	// of a PID namespace of its own.
	sleepArg := fmt.Sprintf("300.%d", time.Now().UnixNano()%1e9)
	t.Setenv("FAKEPY_SLEEP", sleepArg)
	// A stand-in interpreter: it answers the probe, makes a "virtualenv"
	// holding a copy of itself, and as pip starts a child that inherits
	// its output, says it is ready and waits.
	py := filepath.Join(dir, "python3.99")
	script := `#!/bin/sh
if [ "$2" = "-c" ]; then echo cpython 3.99.0; exit 0; fi
if [ "$3" = "venv" ]; then mkdir -p "$4/bin" && cp "$0" "$4/bin/python"; exit; fi
if [ "$3" = "pip" ]; then
	sleep "$FAKEPY_SLEEP" &
	touch "$FAKEPY_READY"
	wait
fi
exit 3
`
	if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	reqs := []byte("x\n")
	os.WriteFile(filepath.Join(root, "requirements.txt"), reqs, 0o644)
	o := &Opened{Root: root, requirements: checksum.Bytes(reqs),
		Manifest: &dist.Manifest{Bundle: &dist.ManifestBundle{Target: "t1", PlatformTag: tag, Pythons: []string{"3.99"}}}}
	venv := filepath.Join(t.TempDir(), "venv")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Install(ctx, o, InstallOptions{Venv: venv, Python: py, Getenv: func(string) string { return "" }})
		done <- err
	}()
	var started []int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			started = append(proctest.WithMarker(sleepArg), proctest.WithMarker(VenvPython(venv))...)
			if len(started) < 2 {
				t.Fatalf("found the processes %v of the stand-in pip, want it and its child", started)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stand-in pip did not start within 20 s")
		}
	}
	t.Cleanup(func() {
		for _, pid := range started {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "pip could not install the bundle") {
			t.Errorf("Install: %v, want pip's failure", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Install still waits 20 s after it was cancelled: a process pip started holds its output open")
	}
	for _, pid := range started {
		for deadline := time.Now().Add(5 * time.Second); proctest.Running(pid); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d, started by pip, outlived the cancelled install by 5 s", pid)
			}
		}
	}
	if _, err := os.Stat(venv); err == nil {
		t.Errorf("the cancelled install left the virtualenv %s it created", venv)
	}
}

// markerPython is a stand-in CPython 3.99: it answers the probe; as venv
// it fails unless the folder already carries the install marker, and
// makes bin/python (a copy of itself) and lib/pip; as pip it fails without
// lib/pip (as a virtualenv without pip does), notes in $FAKEPY_LOG whether
// the marker was there while pip installed, fails when $FAKEPY_PIP_FAIL is
// set, and prints what check and list print.
const markerPython = `#!/bin/sh
if [ "$2" = "-c" ]; then echo cpython 3.99.0; exit 0; fi
if [ "$3" = "venv" ]; then
	[ -f "$4/.mkrelease-installing" ] || { echo "no marker in $4" >&2; exit 9; }
	mkdir -p "$4/bin" "$4/lib/pip" && cp "$0" "$4/bin/python"; exit
fi
venv=$(dirname "$(dirname "$0")")
if [ "$3" = "pip" ]; then
	[ -d "$venv/lib/pip" ] || { echo "$0: No module named pip" >&2; exit 1; }
	case "$7" in
	--version) echo "pip 99.0" ;;
	install)
		if [ -f "$venv/.mkrelease-installing" ]; then echo "install: marker" >> "$FAKEPY_LOG"; else echo "install: no marker" >> "$FAKEPY_LOG"; fi
		[ -z "$FAKEPY_PIP_FAIL" ] || exit 1 ;;
	check) echo "No broken requirements found." ;;
	list) echo '[{"name": "demo-app", "version": "2.0"}]' ;;
	esac
	exit
fi
exit 3
`

// TestInstallMarker: a virtualenv Install creates carries the marker
// while pip runs and not after; a folder an interrupted install left (the
// marker naming it) is recreated with a note, and a staged folder a kill
// left beside it is swept; a folder whose marker names another place, a
// link to a marked folder, a marked home folder and a virtualenv without
// pip that Install did not create are refused, naming the folder, and
// left as they are.
func TestInstallMarker(t *testing.T) {
	tag, _ := hostPlatformTag()
	if tag == "" {
		t.Skip("no platform tag known for this machine")
	}
	bin := t.TempDir()
	py := filepath.Join(bin, "python3.99")
	if err := os.WriteFile(py, []byte(markerPython), 0o755); err != nil {
		t.Fatal(err)
	}
	reqs := []byte("x\n")
	write := func(t *testing.T, p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// abandoned makes dir look like what a killed install leaves: the
	// marker naming dir, and what Python had put there so far.
	abandoned := func(t *testing.T, dir string, files ...string) {
		real, err := filepath.EvalSymlinks(filepath.Dir(dir))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, installMarker), string(markerContent(filepath.Join(real, filepath.Base(dir)))))
		for _, f := range files {
			write(t, filepath.Join(dir, f), "partial")
		}
	}
	const note = "was left by an interrupted install; recreating it"
	cases := []struct {
		name    string
		prepare func(t *testing.T, venv string) (home string)
		env     []string
		err     string   // "" for success
		note    bool     // the recreation note printed
		kept    []string // paths relative to venv's parent that must remain
		gone    []string // and that must not
	}{
		{name: "a new virtualenv", gone: []string{"venv/" + installMarker}},
		{name: "left by a kill after Python began: recreated", prepare: func(t *testing.T, venv string) string {
			abandoned(t, venv, "bin/python", "lib/python3.99/site-packages/pip/__init__.py")
			return ""
		}, note: true, gone: []string{"venv/" + installMarker, "venv/lib/python3.99"}},
		{name: "left by a kill before Python ran: recreated", prepare: func(t *testing.T, venv string) string {
			abandoned(t, venv)
			return ""
		}, note: true, gone: []string{"venv/" + installMarker}},
		{name: "a staged folder a kill left beside it is swept, another folder kept", prepare: func(t *testing.T, venv string) string {
			staged := filepath.Join(filepath.Dir(venv), ".venv.tmp-123")
			real, _ := filepath.EvalSymlinks(filepath.Dir(venv))
			write(t, filepath.Join(staged, installMarker), string(markerContent(filepath.Join(real, "venv"))))
			other := filepath.Join(filepath.Dir(venv), ".venv.tmp-456")
			write(t, filepath.Join(other, installMarker), string(markerContent(filepath.Join(real, "venv"))))
			write(t, filepath.Join(other, "mine"), "x")
			return ""
		}, gone: []string{".venv.tmp-123", "venv/" + installMarker}, kept: []string{".venv.tmp-456/mine"}},
		{name: "moved here from elsewhere: refused", prepare: func(t *testing.T, venv string) string {
			write(t, filepath.Join(venv, installMarker), string(markerContent("/elsewhere/venv")))
			write(t, filepath.Join(venv, "precious"), "x")
			return ""
		}, err: "carries .mkrelease-installing, the mark of an interrupted mkrelease install, but it does not name this folder",
			kept: []string{"venv/precious", "venv/" + installMarker}},
		{name: "the marker is a link: refused", prepare: func(t *testing.T, venv string) string {
			abandoned(t, filepath.Join(filepath.Dir(venv), "other"))
			write(t, filepath.Join(venv, "precious"), "x")
			real, _ := filepath.EvalSymlinks(filepath.Dir(venv))
			write(t, filepath.Join(filepath.Dir(venv), "content"), string(markerContent(filepath.Join(real, "venv"))))
			if err := os.Symlink(filepath.Join(filepath.Dir(venv), "content"), filepath.Join(venv, installMarker)); err != nil {
				t.Fatal(err)
			}
			return ""
		}, err: "that is not a regular file", kept: []string{"venv/precious", "venv/" + installMarker}},
		{name: "an outsized marker: refused", prepare: func(t *testing.T, venv string) string {
			write(t, filepath.Join(venv, installMarker), strings.Repeat("x", 5000))
			write(t, filepath.Join(venv, "precious"), "x")
			return ""
		}, err: "that is not a regular file of at most 4 KiB", kept: []string{"venv/precious"}},
		{name: "a link to a folder a kill left: refused", prepare: func(t *testing.T, venv string) string {
			target := filepath.Join(filepath.Dir(venv), "target")
			abandoned(t, target, "precious")
			if err := os.Symlink(target, venv); err != nil {
				t.Fatal(err)
			}
			return ""
		}, err: "it is a symbolic link (to ", kept: []string{"venv", "target/precious", "target/" + installMarker}},
		{name: "the home folder carries a marker: refused", prepare: func(t *testing.T, venv string) string {
			abandoned(t, venv, "precious")
			return venv
		}, err: "it is (or holds) ", kept: []string{"venv/precious"}},
		{name: "a folder holding the home folder carries a marker: refused", prepare: func(t *testing.T, venv string) string {
			abandoned(t, venv, "home/precious")
			return filepath.Join(venv, "home")
		}, err: "it is (or holds) ", kept: []string{"venv/home/precious"}},
		{name: "a virtualenv without pip it did not create: refused", prepare: func(t *testing.T, venv string) string {
			write(t, filepath.Join(venv, "precious"), "x")
			if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(py)
			if err := os.WriteFile(filepath.Join(venv, "bin", "python"), data, 0o755); err != nil {
				t.Fatal(err)
			}
			return ""
		}, err: "has no working pip: nothing installed", kept: []string{"venv/precious", "venv/bin/python"}},
		{name: "a good virtualenv it did not create: reused", prepare: func(t *testing.T, venv string) string {
			cmd := exec.Command(py, "-I", "-m", "venv", venv)
			os.MkdirAll(venv, 0o755)
			write(t, filepath.Join(venv, installMarker), "")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			os.Remove(filepath.Join(venv, installMarker))
			write(t, filepath.Join(venv, "precious"), "x")
			return ""
		}, kept: []string{"venv/precious", "venv/lib/pip"}, gone: []string{"venv/" + installMarker}},
		{name: "pip fails in a new virtualenv: removed", env: []string{"FAKEPY_PIP_FAIL=1"},
			err: "pip could not install the bundle", gone: []string{"venv"}},
		{name: "pip fails in a recreated virtualenv: removed", env: []string{"FAKEPY_PIP_FAIL=1"}, prepare: func(t *testing.T, venv string) string {
			abandoned(t, venv, "bin/python")
			return ""
		}, note: true, err: "pip could not install the bundle", gone: []string{"venv"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			logFile := filepath.Join(work, "pip.log")
			t.Setenv("FAKEPY_LOG", logFile)
			t.Setenv("FAKEPY_PIP_FAIL", "")
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			parent := filepath.Join(work, "parent")
			os.MkdirAll(parent, 0o755)
			venv := filepath.Join(parent, "venv")
			home := filepath.Join(work, "home")
			if tc.prepare != nil {
				if h := tc.prepare(t, venv); h != "" {
					home = h
				}
			}
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, "requirements.txt"), reqs, 0o644)
			o := &Opened{Root: root, requirements: checksum.Bytes(reqs),
				Manifest: &dist.Manifest{Bundle: &dist.ManifestBundle{Target: "t1", PlatformTag: tag, Pythons: []string{"3.99"},
					Dependencies: []dist.ManifestArtifact{{Name: "demo-app==2.0"}}}}}
			var log strings.Builder
			res, err := Install(context.Background(), o, InstallOptions{Venv: venv, Python: py, Log: &log,
				Getenv: func(k string) string {
					if k == "HOME" {
						return home
					}
					return ""
				}})
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Install: %v\n%s", err, log.String())
				}
				pipLog, _ := os.ReadFile(logFile)
				if res.Created && string(pipLog) != "install: marker\n" {
					t.Errorf("pip installed into the new virtualenv with %q, want the marker there", pipLog)
				}
				if !slices.Equal(res.Packages, []string{"demo-app==2.0"}) {
					t.Errorf("installed %q", res.Packages)
				}
			} else {
				var ie *InstallError
				switch {
				case err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ie):
					t.Errorf("Install: %v, want an *InstallError with %q", err, tc.err)
				case tc.kept != nil && !strings.Contains(err.Error(), venv):
					t.Errorf("the refusal does not name %s: %v", venv, err)
				case ie.Hint == "" && !strings.HasPrefix(tc.err, "pip"):
					t.Errorf("the refusal gives no remedy: %v", err)
				}
			}
			if got := strings.Contains(log.String(), "mkrelease: the virtualenv "+venv+" "+note); got != tc.note {
				t.Errorf("note printed: %v, want %v:\n%s", got, tc.note, log.String())
			}
			for _, p := range tc.kept {
				if _, err := os.Lstat(filepath.Join(parent, p)); err != nil {
					t.Errorf("%s is gone: %v", p, err)
				}
			}
			for _, p := range tc.gone {
				if _, err := os.Lstat(filepath.Join(parent, p)); err == nil {
					t.Errorf("%s is still there", p)
				}
			}
		})
	}
}
