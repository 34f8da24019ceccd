package bundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/pyfind"
)

// TestInstallKilledHeals kills the real `mkrelease install` with SIGKILL
// at points spread over the whole window between "verified" and
// "installed", while it installs a bundle the bundle stage wrote, offline,
// with the machine's CPython, venv and ensurepip: when the folder appears
// (marker only), once bin/python is there, while ensurepip unpacks pip,
// once pip's metadata is written, while pip installs the bundle, once it
// has, and after a tenth, three tenths, half, seven tenths and nine tenths
// of the window an uninterrupted install takes. Each time a folder left
// behind carries the marker, and the next install into the same --venv
// recreates it, saying so, and succeeds: pip check, run with the
// virtualenv's python, is clean and no marker is left. Once the install
// recreating the folder is itself killed as it starts removing it, and the
// install after it succeeds too. The controls: an uninterrupted install
// leaves no marker and the next reuses its virtualenv; a virtualenv
// without pip that mkrelease did not create is refused, named, and left
// as it is.
func TestInstallKilledHeals(t *testing.T) {
	if testing.Short() {
		t.Skip("kills mkrelease install at a dozen points and installs again after each: about 2.5 minutes of CPU")
	}
	target := map[string]string{"amd64": "linux-x86_64", "arm64": "linux-aarch64"}[runtime.GOARCH]
	if target == "" {
		t.Skip("the test bundle has no target for linux/" + runtime.GOARCH)
	}
	pythons := []string{"3.11", "3.12", "3.13"} // demoRelease's
	in, ok := pyfind.Pick(pyfind.Find(context.Background(), pyfind.Options{}), pythons)
	if !ok {
		t.Skip("no CPython " + strings.Join(pythons, ", ") + " on this machine")
	}
	if out, err := exec.Command(in.Path, "-I", "-c", "import venv, ensurepip").CombinedOutput(); err != nil {
		t.Skipf("%s has no venv or ensurepip: %v\n%s", in.Path, err, out)
	}
	work := t.TempDir()
	mk := filepath.Join(work, "mkrelease")
	if out, err := exec.Command("go", "build", "-o", mk, "github.com/mkrelease/mkrelease/cmd/mkrelease").CombinedOutput(); err != nil {
		t.Fatalf("go build mkrelease: %v\n%s", err, out)
	}
	r, cs := demoRelease(t, t.TempDir(), target)
	if err := (Stage{Closures: cs}).writeBundle(context.Background(), r, target, ""); err != nil {
		t.Fatal(err)
	}
	bundlePath := filepath.Join(r.Stage, "demo-app-2.0-"+target+".tar.gz")
	tmp := filepath.Join(work, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	// The bundle is extracted below TMPDIR, which a kill leaves behind.
	env := append(CleanEnv(os.Environ()), "TMPDIR="+tmp)
	start := func(venv string) *installRun {
		return startInstall(t, env, mk, "install", bundlePath, "--venv", venv, "--python", in.Path)
	}
	pipCheck := func(t *testing.T, venv string) {
		t.Helper()
		out, err := exec.Command(VenvPython(venv), "-I", "-m", "pip", "--isolated", "--disable-pip-version-check", "check").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "No broken requirements found.") {
			t.Errorf("pip check in %s: %v\n%s", venv, err, out)
		}
	}
	// installs runs one install to its end and checks that it succeeded,
	// recreating the folder when note; it returns how long it took
	// from "verified".
	installs := func(t *testing.T, venv string, note bool) time.Duration {
		t.Helper()
		run := start(venv)
		elapsed := run.wait(t)
		if run.err != nil || !strings.Contains(run.stdout(), "installed into a new virtualenv "+venv) ||
			!strings.Contains(run.stdout(), "demo-app==2.0") || !strings.Contains(run.stdout(), "example==21.12") {
			t.Fatalf("install into %s: %v\n%s\n%s", venv, run.err, run.stdout(), run.stderr())
		}
		if got := strings.Contains(run.stderr(), "mkrelease: the virtualenv "+venv+" was left by an interrupted install; recreating it\n"); got != note {
			t.Errorf("the note on recreating %s: %v, want %v:\n%s", venv, got, note, run.stderr())
		}
		if _, err := os.Lstat(filepath.Join(venv, installMarker)); err == nil {
			t.Errorf("a completed install left %s", filepath.Join(venv, installMarker))
		}
		pipCheck(t, venv)
		return elapsed
	}

	began := time.Now()
	base := filepath.Join(work, "base")
	window := installs(t, base, false)
	t.Logf("an uninterrupted install takes %v from \"verified\"", window.Round(time.Millisecond))
	reuse := start(base)
	reuse.wait(t)
	if reuse.err != nil || !strings.Contains(reuse.stdout(), "installed into the existing virtualenv "+base) {
		t.Errorf("a second install did not reuse %s: %v\n%s\n%s", base, reuse.err, reuse.stdout(), reuse.stderr())
	}
	// A virtualenv without pip that mkrelease did not create.
	broken := filepath.Join(work, "broken")
	if out, err := exec.Command(in.Path, "-I", "-m", "venv", "--without-pip", broken).CombinedOutput(); err != nil {
		t.Fatalf("python -m venv --without-pip: %v\n%s", err, out)
	}
	refused := start(broken)
	refused.wait(t)
	if code := exitCode(refused.err); code != 1 || !strings.Contains(refused.stderr(), "the virtualenv "+broken+" has no working pip: nothing installed") ||
		!strings.Contains(refused.stderr(), "mkrelease did not create it, so it leaves it as it is") {
		t.Errorf("install into a virtualenv without pip exited %d:\n%s", code, refused.stderr())
	}
	if _, err := os.Stat(filepath.Join(broken, "pyvenv.cfg")); err != nil {
		t.Errorf("the refused install removed the virtualenv it did not create: %v", err)
	}

	sitePackages := func(venv, name string) bool {
		m, _ := filepath.Glob(filepath.Join(venv, "lib", "python3.*", "site-packages", name))
		return len(m) > 0
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	type point struct {
		name string
		// at says, polled every 2 ms from "verified", when to kill; frac,
		// when at is nil, kills that fraction of the window in.
		at   func(venv string) bool
		frac float64
		// killRecovery kills the install recreating the folder too, as
		// it starts removing it.
		killRecovery bool
	}
	points := []point{
		{name: "the folder appears", at: func(v string) bool { return exists(v) }},
		{name: "the virtualenv's python appears", at: func(v string) bool { return exists(VenvPython(v)) }},
		{name: "ensurepip unpacks pip", at: func(v string) bool { return sitePackages(v, "pip/_internal") }},
		{name: "pip's metadata is written", at: func(v string) bool { return sitePackages(v, "pip-*.dist-info/RECORD") }, killRecovery: true},
		{name: "pip installs the bundle", at: func(v string) bool { return sitePackages(v, "demo_app") || sitePackages(v, "example") }},
		{name: "the bundle is installed", at: func(v string) bool {
			return sitePackages(v, "demo_app-2.0.dist-info/RECORD") && sitePackages(v, "example-21.12.dist-info/RECORD")
		}},
		{name: "a tenth of the window", frac: 0.1},
		{name: "three tenths of the window", frac: 0.3},
		{name: "half the window", frac: 0.5},
		{name: "seven tenths of the window", frac: 0.7},
		{name: "nine tenths of the window", frac: 0.9},
	}
	var mu sync.Mutex
	var states []string
	for i, p := range points {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			var venv string
			// A run faster than the one measured may end before a
			// fraction of the window: it is tried again, on a new
			// folder, with the window that run took.
			for attempt, w := 1, window; ; attempt++ {
				venv = filepath.Join(work, fmt.Sprintf("venv%d-%d", i, attempt))
				run := start(venv)
				if run.killWhen(t, func(since time.Duration) bool {
					if p.at != nil {
						return p.at(venv)
					}
					return since >= time.Duration(p.frac*float64(w))
				}) {
					break
				}
				if p.at != nil || attempt == 4 {
					t.Fatalf("the install ended before the kill point, %d times", attempt)
				}
				w, _ = run.sinceVerified()
				t.Logf("the install ended before the kill point: again, with a window of %v", w.Round(time.Millisecond))
			}
			state := venvState(venv)
			mu.Lock()
			states = append(states, p.name+": "+state)
			mu.Unlock()
			left := exists(venv)
			if left && !exists(filepath.Join(venv, installMarker)) {
				t.Fatalf("the kill left %s without the marker (%s)", venv, state)
			}
			if p.killRecovery {
				if !left {
					t.Fatalf("the kill left no folder for the recovery to remove")
				}
				recovery := start(venv)
				if !recovery.killWhen(t, func(time.Duration) bool { return recovery.recreating() }) {
					t.Fatal("the recovery ended before it was killed")
				}
				state := venvState(venv)
				t.Logf("the recovery killed as it removes the folder left: %s", state)
				if exists(venv) && !exists(filepath.Join(venv, installMarker)) {
					t.Fatalf("the kill of the recovery left %s without the marker (%s)", venv, state)
				}
				left = exists(venv)
			}
			installs(t, venv, left)
		})
	}
	t.Cleanup(func() {
		t.Logf("killed at %d points in %v:\n\t%s", len(states), time.Since(began).Round(time.Second), strings.Join(states, "\n\t"))
	})
}

// installRun is a running mkrelease, its output watched.
type installRun struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out, log bytes.Buffer
	verified time.Time
	done     chan struct{}
	err      error
}

// startInstall starts mkrelease with args and env.
func startInstall(t *testing.T, env []string, mk string, args ...string) *installRun {
	t.Helper()
	r := &installRun{cmd: exec.Command(mk, args...), done: make(chan struct{})}
	r.cmd.Env = env
	r.cmd.Stdout = lockedWriter{&r.mu, &r.out, nil}
	r.cmd.Stderr = lockedWriter{&r.mu, &r.log, func(b []byte) {
		if r.verified.IsZero() && bytes.Contains(b, []byte(" verified (")) {
			r.verified = time.Now()
		}
	}}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.done
	})
	return r
}

// lockedWriter appends to a buffer under mu and calls seen with all
// written so far.
type lockedWriter struct {
	mu   *sync.Mutex
	buf  *bytes.Buffer
	seen func([]byte)
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen != nil {
		w.seen(w.buf.Bytes())
	}
	return len(p), nil
}

func (r *installRun) stdout() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

func (r *installRun) stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

func (r *installRun) recreating() bool {
	return strings.Contains(r.stderr(), "was left by an interrupted install; recreating it")
}

// sinceVerified is how long ago mkrelease printed "verified", and whether
// it has.
func (r *installRun) sinceVerified() (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.verified.IsZero() {
		return 0, false
	}
	return time.Since(r.verified), true
}

// wait waits for the end, at most two minutes, and returns how long it
// took from "verified".
func (r *installRun) wait(t *testing.T) time.Duration {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("mkrelease install still runs after two minutes:\n%s", r.stderr())
	}
	d, _ := r.sinceVerified()
	return d
}

// killWhen kills mkrelease with SIGKILL once it has printed "verified" and
// at says so, polled every 2 ms. It returns false when mkrelease ended
// first, having installed.
func (r *installRun) killWhen(t *testing.T, at func(since time.Duration) bool) bool {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for ; ; time.Sleep(2 * time.Millisecond) {
		select {
		case <-r.done:
			if r.err != nil || !strings.Contains(r.stdout(), "installed into a new virtualenv") {
				t.Fatalf("mkrelease install failed before the kill point: %v\n%s\n%s", r.err, r.stdout(), r.stderr())
			}
			return false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no kill point within two minutes:\n%s", r.stderr())
		}
		if since, ok := r.sinceVerified(); ok && at(since) {
			break
		}
	}
	r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
	var ee *exec.ExitError
	if !errors.As(r.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("mkrelease install ended (%v) before the kill:\n%s\n%s", r.err, r.stdout(), r.stderr())
	}
	if strings.Contains(r.stdout(), "installed") {
		t.Fatalf("killed after \"installed\":\n%s", r.stdout())
	}
	return true
}

// venvState says what a kill left in venv.
func venvState(venv string) string {
	if _, err := os.Lstat(venv); err != nil {
		return "no folder"
	}
	files := 0
	filepath.WalkDir(venv, func(string, os.DirEntry, error) error { files++; return nil })
	var have []string
	for _, p := range []string{installMarker, "bin/python", "lib/python3.*/site-packages/pip/_internal", "lib/python3.*/site-packages/pip-*.dist-info/RECORD",
		"lib/python3.*/site-packages/demo_app", "lib/python3.*/site-packages/demo_app-2.0.dist-info/RECORD"} {
		if m, _ := filepath.Glob(filepath.Join(venv, p)); len(m) > 0 {
			have = append(have, p)
		}
	}
	return fmt.Sprintf("%d entries; %s", files, strings.Join(have, ", "))
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
