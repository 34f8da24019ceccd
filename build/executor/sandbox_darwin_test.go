package executor

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shortPaths are a step's folders under /tmp: a Unix socket's path must
// fit in 104 bytes on macOS, which t.TempDir's folders may not leave.
func shortPaths(t *testing.T) Paths {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "mkx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	p := Paths{Workspace: filepath.Join(d, "ws"), Out: filepath.Join(d, "out"), Scratch: filepath.Join(d, "s")}
	for _, x := range []string{p.Workspace, p.Out, filepath.Join(p.Scratch, "tmp")} {
		if err := os.MkdirAll(x, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// listenUnix serves a Unix socket at path until the test ends.
func listenUnix(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

func TestSeatbeltReportsNetworkOnly(t *testing.T) {
	e := New(context.Background(), Options{})
	sb := e.Sandbox()
	if sb.Isolated {
		t.Fatalf("sandbox = %+v: nothing on macOS isolates like bubblewrap", sb)
	}
	if _, err := os.Stat(sandboxExec); err != nil {
		if sb.Network || !strings.Contains(sb.Reason, "missing") {
			t.Errorf("without sandbox-exec: %+v", sb)
		}
		t.Skip("no sandbox-exec here")
	}
	if !sb.Network || sb.Level() != LevelNetwork || sb.Reason != macReason {
		t.Errorf("sandbox = %+v, level %s", sb, sb.Level())
	}
}

// TestSeatbeltUnixSockets: a step reaches a Unix socket in its own scratch
// folder, not one of the host's.
func TestSeatbeltUnixSockets(t *testing.T) {
	e := New(context.Background(), Options{})
	if e.seatbelt == "" {
		t.Skipf("no sandbox-exec: %s", e.Sandbox().Reason)
	}
	exe, _ := os.Executable()
	p := shortPaths(t)
	inside := filepath.Join(p.Scratch, "tmp", "in.sock")
	listenUnix(t, inside)
	outside := filepath.Join(filepath.Dir(p.Scratch), "out.sock")
	listenUnix(t, outside)
	for _, c := range []struct {
		sock string
		ok   bool
	}{{inside, true}, {outside, false}} {
		a := action(exe)
		a.Env["EXECUTOR_TEST_HELPER"] = "dialunix"
		a.Env["EXECUTOR_TEST_ADDR"] = c.sock
		res, err := e.Run(context.Background(), a, p)
		var se *StepError
		switch {
		case c.ok && err != nil:
			t.Errorf("dial %s from the step: %v\n%s", c.sock, err, res.Log)
		case !c.ok && !errors.As(err, &se):
			t.Errorf("dial %s from the step: err = %v, want it refused\n%s", c.sock, err, res.Log)
		}
	}
	// The control: the host reaches the outside socket, so the profile is
	// what refused the step.
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "EXECUTOR_TEST_HELPER=dialunix", "EXECUTOR_TEST_ADDR="+outside)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "connected") {
		t.Fatalf("the host could not reach %s either (%v: %s): the test proves nothing", outside, err, out)
	}
}
