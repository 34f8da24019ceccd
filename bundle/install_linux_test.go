package bundle

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
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
	pids := filepath.Join(dir, "pids")
	t.Setenv("FAKEPY_PIDS", pids)
	// A stand-in interpreter: it answers the probe, makes a "virtualenv"
	// holding a copy of itself, and as pip starts a child that inherits
	// its output, writes both pids and waits.
	py := filepath.Join(dir, "python3.99")
	script := `#!/bin/sh
if [ "$2" = "-c" ]; then echo cpython 3.99.0; exit 0; fi
if [ "$3" = "venv" ]; then mkdir -p "$4/bin" && cp "$0" "$4/bin/python"; exit; fi
if [ "$3" = "pip" ]; then
	sleep 300 &
	echo "$! $$" > "$FAKEPY_PIDS.tmp" && mv "$FAKEPY_PIDS.tmp" "$FAKEPY_PIDS"
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
		if b, err := os.ReadFile(pids); err == nil {
			for _, f := range strings.Fields(string(b)) {
				pid, _ := strconv.Atoi(f)
				started = append(started, pid)
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
