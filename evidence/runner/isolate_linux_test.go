package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/evidence/sanitize"
	"github.com/mkrelease/mkrelease/internal/sandbox"
)

// marker returns a value no file or process holds by chance.
func marker(what string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return what + "-" + hex.EncodeToString(b)
}

// banner serves, on ln until the test ends, one line (secret) to every
// connection.
func banner(t *testing.T, ln net.Listener, secret string) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(secret + "\n"))
			c.Close()
		}
	}()
}

// TestLaneNetwork: a sandboxed lane reaches a server on the host's
// 127.0.0.1 only when it declares network = true, and the run identity
// names the lanes that did.
func TestLaneNetwork(t *testing.T) {
	python := realPython(t)
	bw, err := sandbox.Probe(context.Background(), "")
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	secret := marker("TCP-BANNER")
	banner(t, tcp, secret)
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	if out, err := exec.Command(python, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("make a virtualenv: %v\n%s", err, out)
	}
	shown, err := interpreterPaths(context.Background(), venv, nil)
	if err != nil {
		t.Fatal(err)
	}
	ls := laneSandbox{bwrap: bw, shown: shown, etc: filepath.Join(dir, "etc")}
	dial := `import json, os, socket
try:
    s = socket.create_connection(("127.0.0.1", int(os.environ["PORT"])), timeout=3)
    msg = "got: " + s.recv(100).decode()
except OSError as e:
    msg = "denied: %s" % e
with open(os.environ["MKRELEASE_CASES"], "a") as f:
    f.write(json.dumps({"id": "dial", "status": "PASS", "duration_s": 0, "message": msg}) + "\n")
`
	var lanes []config.Lane
	for _, network := range []bool{true, false} {
		l := config.Lane{Name: "net-" + strconv.FormatBool(network), Kind: config.LaneCases, Network: network,
			Run:     []string{"${PYTHON}", "-c", dial},
			Env:     map[string]string{"PORT": strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)},
			Timeout: config.Duration{Duration: time.Minute}, CaseTimeout: config.Duration{Duration: time.Minute}}
		lanes = append(lanes, l)
		own := filepath.Join(dir, l.Name)
		if err := os.MkdirAll(own, 0o755); err != nil {
			t.Fatal(err)
		}
		env := laneEnv{vars: map[string]string{"PATH": "/usr/bin:/bin"}, expand: map[string]string{"PYTHON": bundle.VenvPython(venv)},
			dir: own, log: t.Logf, box: ls.lane(l, venv, own, own)}
		cases, _, err := runCases(context.Background(), l, env, filepath.Join(own, "cases.jsonl"))
		if err != nil || len(cases) != 1 {
			t.Fatalf("%s: %+v, %v", l.Name, cases, err)
		}
		if got := strings.HasPrefix(cases[0].Message, "got: "+secret); got != network {
			t.Errorf("lane with network = %v: %q", network, cases[0].Message)
		}
	}
	if iso := ls.isolation(lanes, sanitize.Private{}); strings.Join(iso.NetworkLanes, ",") != "net-true" {
		t.Errorf("network lanes recorded: %q, want net-true", iso.NetworkLanes)
	}
}

// TestInterpreterPaths: a sandboxed lane sees its interpreter's
// installation (the prefix, wherever it lies, but for the system
// folders), and only its standard library when the prefix is a protected
// folder itself.
func TestInterpreterPaths(t *testing.T) {
	python := realPython(t)
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(python, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("make a virtualenv: %v\n%s", err, out)
	}
	out, err := exec.Command(python, "-c", "import sys, sysconfig; print(sys.base_prefix); print(sysconfig.get_path('stdlib'))").Output()
	if err != nil {
		t.Fatal(err)
	}
	prefix, stdlib, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	whole, err := interpreterPaths(context.Background(), venv, []string{filepath.Dir(prefix) + "/elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := interpreterPaths(context.Background(), venv, []string{prefix})
	if err != nil {
		t.Fatal(err)
	}
	if sandbox.InSystemDirs(prefix) {
		if len(whole) != 0 {
			t.Errorf("a system interpreter (%s) needs %q, want nothing beyond the system folders", prefix, whole)
		}
		return
	}
	if len(whole) != 1 || whole[0] != prefix {
		t.Errorf("interpreter paths %q, want its prefix %s", whole, prefix)
	}
	if !slices.Contains(narrow, stdlib) || slices.Contains(narrow, prefix) {
		t.Errorf("with its prefix protected: %q, want the standard library %s and not the prefix", narrow, stdlib)
	}
	// The interpreter runs in a sandbox that shows that much alone.
	bw, err := sandbox.Probe(context.Background(), "")
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	own := t.TempDir()
	ls := laneSandbox{bwrap: bw, shown: narrow, etc: t.TempDir()}
	env := laneEnv{vars: map[string]string{"PATH": "/usr/bin:/bin"}, dir: own, box: ls.lane(config.Lane{Name: "narrow"}, venv, own, own)}
	cmd, err := env.command(context.Background(), []string{bundle.VenvPython(venv), "-c", "import json, ssl, sys; print(sys.prefix)"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != venv {
		t.Errorf("the virtualenv's python in a sandbox showing %q: %v\n%s", narrow, err, out)
	}
}

func TestExposesAndOutermost(t *testing.T) {
	protected := []string{"/home/alice", "/work/project"}
	for _, c := range []struct {
		p    string
		want bool
	}{
		{"/home/alice/.pyenv/versions/3.12.1", false},
		{"/home/alice", true},
		{"/home", true},
		{"/", true},
		{"/work/project/.venv-python", false},
		{"/opt/python", false},
	} {
		if got := exposes(c.p, protected); got != c.want {
			t.Errorf("exposes(%s) = %v, want %v", c.p, got, c.want)
		}
	}
	got := outermost([]string{"/opt/py/bin/python3.12", "/opt/py", "/home/a/lib", "/home/a/lib/python3.12", "/home/ab"})
	if want := []string{"/home/a/lib", "/home/ab", "/opt/py"}; !slices.Equal(got, want) {
		t.Errorf("outermost = %q, want %q", got, want)
	}
}
