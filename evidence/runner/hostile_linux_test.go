package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/sandbox"
)

// hostileLane is a cases lane that tries, one case each, to take what a
// lane must not: the project's signing key, the user's home folder, the
// environment of mkrelease (its /proc entry), the list of the host's
// processes, the folder mkrelease runs in, a TCP server on the host's
// 127.0.0.1, a Unix socket below the host's /tmp, and the virtualenv (a
// module the next lane imports, planted); targets.json beside
// it says where each is. Each case says "got:" and what it took, or
// "denied:" and the error.
const hostileLane = `import json, os, socket

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "targets.json")) as f:
    targets = json.load(f)

def case(id, fn):
    try:
        got = fn()
        msg = ("got: " + got) if got else "denied: nothing found"
    except Exception as e:
        msg = "denied: %s: %s" % (type(e).__name__, e)
    with open(os.environ["MKRELEASE_CASES"], "a") as f:
        f.write(json.dumps({"id": id, "status": "FAIL" if msg.startswith("got:") else "PASS", "duration_s": 0, "message": msg}) + "\n")

def read(p):
    with open(p, "rb") as f:
        return f.read().decode("utf-8", "replace")

def processes():
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = read("/proc/%s/cmdline" % pid).replace("\0", " ")
            except OSError:
                continue
            if targets["self"] in cmdline:
                found.append(pid + ": " + cmdline)
    return " | ".join(found)

def dial(family, addr):
    s = socket.socket(family)
    s.settimeout(3)
    try:
        s.connect(addr)
        return s.recv(200).decode()
    finally:
        s.close()

case("signing-key", lambda: read(targets["key"]))
case("home-list", lambda: " ".join(sorted(os.listdir(targets["home"]))))
case("home-read", lambda: read(os.path.join(targets["home"], "notes.txt")))
case("mkrelease-environ", lambda: read("/proc/%d/environ" % targets["pid"]).replace("\0", " "))
case("processes", processes)
case("mkrelease-folder", lambda: " ".join(sorted(os.listdir(targets["cwd"]))))
host, port = targets["tcp"].rsplit(":", 1)
case("tcp", lambda: dial(socket.AF_INET, (host, int(port))))
case("unix-socket", lambda: dial(socket.AF_UNIX, targets["unix"]))

def plant():
    import installed
    with open(installed.__file__, "w") as f:
        f.write("VALUE = 13\n")
    return "planted-in-the-virtualenv " + installed.__file__

# The clean lane runs next: in the sandbox it shares this virtualenv.
case("virtualenv", plant)
`

// cleanLane is a well-behaved cases lane: it imports a module of its
// virtualenv and one of the verifier, and writes and reads back files in
// its HOME, its TMPDIR, its working folder and /tmp.
const cleanLane = `import json, os
import installed, helper

def case(id, ok, msg=None):
    c = {"id": id, "status": "PASS" if ok else "FAIL", "duration_s": 0}
    if msg:
        c["message"] = msg
    with open(os.environ["MKRELEASE_CASES"], "a") as f:
        f.write(json.dumps(c) + "\n")

case("virtualenv", installed.VALUE == 42)
case("verifier", helper.double(21) == 42)
for name, folder in (("home", os.environ["HOME"]), ("tmpdir", os.environ["TMPDIR"]), ("cwd", "."), ("tmp", "/tmp")):
    p = os.path.join(folder, "clean-lane-file")
    try:
        with open(p, "w") as f:
            f.write("mine")
        with open(p) as f:
            case("write-" + name, f.read() == "mine")
    except OSError as e:
        case("write-" + name, False, str(e))
`

// hostileRun is a verifier run of the lanes hostile and clean, from the
// prepare stage to the lanes (the virtualenvs made with python directly,
// rather than from a bundle), with the secrets the hostile lane goes for.
type hostileRun struct {
	r       *evidenceRun
	secrets map[string]string // by the case that goes for it
	log     *bytes.Buffer
}

func newHostileRun(t *testing.T, python, bwrap string) hostileRun {
	t.Helper()
	h := hostileRun{secrets: map[string]string{}, log: &bytes.Buffer{}}
	project := t.TempDir()
	write := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The project's development key, the user's home and mkrelease's
	// environment (this test process stands for mkrelease).
	h.secrets["signing-key"] = marker("PRIVATE-KEY")
	write(filepath.Join(project, ".mkrelease", "dev.key"), "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"+h.secrets["signing-key"]+"\n")
	home := t.TempDir()
	h.secrets["home-list"] = marker("home-entry")
	h.secrets["home-read"] = marker("HOME-NOTES")
	write(filepath.Join(home, h.secrets["home-list"]), "")
	write(filepath.Join(home, "notes.txt"), h.secrets["home-read"])
	t.Setenv("HOME", home)
	// /proc/PID/environ is the environment the process started with: its
	// longest entry.
	environ, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range strings.Split(string(environ), "\x00") {
		if len(e) > len(h.secrets["mkrelease-environ"]) {
			h.secrets["mkrelease-environ"] = e
		}
	}
	h.secrets["processes"] = filepath.Base(os.Args[0])
	// The folder mkrelease runs in (here the package's, outside /tmp).
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	h.secrets["mkrelease-folder"] = "isolate_linux_test.go"
	// A TCP server on the host's loopback and a Unix socket below its /tmp.
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.secrets["tcp"] = marker("TCP-BANNER")
	banner(t, tcp, h.secrets["tcp"])
	sockDir, err := os.MkdirTemp("/tmp", "mkrelease-lane-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	unix, err := net.Listen("unix", filepath.Join(sockDir, "agent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	h.secrets["unix-socket"] = marker("UNIX-BANNER")
	banner(t, unix, h.secrets["unix-socket"])
	h.secrets["virtualenv"] = "planted-in-the-virtualenv"

	targets, err := json.Marshal(map[string]any{"key": filepath.Join(project, ".mkrelease", "dev.key"), "home": home,
		"pid": os.Getpid(), "self": h.secrets["processes"], "cwd": cwd, "tcp": tcp.Addr().String(), "unix": unix.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(project, "verifier", "targets.json"), string(targets))
	write(filepath.Join(project, "verifier", "hostile.py"), hostileLane)
	write(filepath.Join(project, "verifier", "clean.py"), cleanLane)
	write(filepath.Join(project, "verifier", "helper.py"), "def double(x):\n    return 2 * x\n")
	limit := config.Duration{Duration: time.Minute}
	cfg := &config.Config{Dir: project, File: filepath.Join(project, "release.toml"),
		Project: config.Project{NormalizedName: "demo", Version: "1.0"},
		Evidence: config.Evidence{Verifier: "verifier", Lanes: []config.Lane{
			{Name: "hostile", Kind: config.LaneCases, Run: []string{"${PYTHON}", "${VERIFIER}/hostile.py"}, Timeout: limit, CaseTimeout: limit},
			{Name: "clean", Kind: config.LaneCases, Run: []string{"${PYTHON}", "${VERIFIER}/clean.py"}, Timeout: limit, CaseTimeout: limit},
		}}}
	h.r = &evidenceRun{
		o:      RunOptions{Config: cfg, Target: "linux-x86_64", Getenv: os.Getenv, Bwrap: bwrap},
		log:    slog.New(slog.NewTextHandler(h.log, nil)),
		lanes:  cfg.Evidence.Lanes,
		opened: &bundle.Opened{Root: t.TempDir()}, // no wheels: the identity lists none
	}
	t.Cleanup(h.r.close)
	ctx := context.Background()
	if err := h.r.prepare(ctx); err != nil {
		t.Fatal(err)
	}
	// The virtualenvs, as the bundle's install makes them (pip has run:
	// a module is installed): one the lanes share in the sandbox, one per
	// lane without it.
	h.r.python = python
	mkVenv := func(venv string) {
		t.Helper()
		if out, err := exec.Command(python, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
			t.Fatalf("make a virtualenv: %v\n%s", err, out)
		}
		site, _ := filepath.Glob(filepath.Join(venv, "lib", "python3.*", "site-packages"))
		if len(site) != 1 {
			t.Fatalf("site-packages of %s: %v", venv, site)
		}
		write(filepath.Join(site[0], "installed.py"), "VALUE = 42\n")
	}
	h.r.venvs = make([]string, len(h.r.lanes))
	h.r.venvs[0] = filepath.Join(h.r.work, "venvs", "shared")
	mkVenv(h.r.venvs[0])
	own, err := h.r.isolate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, venv := range h.r.venvs[1:] {
		if own {
			mkVenv(venv)
		} else if venv != h.r.venvs[0] {
			t.Fatalf("in the sandbox the lanes have the virtualenvs %q, want one", h.r.venvs)
		}
	}
	if err := h.r.runLanes(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// messages are the hostile lane's case messages by case, and the clean
// lane's cases that did not pass.
func (h hostileRun) messages(t *testing.T) (hostile map[string]string, cleanFailed []string) {
	t.Helper()
	hostile = map[string]string{}
	clean := 0
	for _, c := range h.r.cases {
		switch c.Lane {
		case "hostile":
			hostile[c.ID] = c.Message
		case "clean":
			clean++
			if c.Status != evidence.StatusPass {
				cleanFailed = append(cleanFailed, c.ID+": "+c.Status+" "+c.Message)
			}
		}
	}
	if len(hostile) != len(h.secrets) || clean != 6 {
		t.Fatalf("hostile cases %v and %d clean ones, want %d and 6: %+v\n%s", hostile, clean, len(h.secrets), h.r.cases, h.log)
	}
	return hostile, cleanFailed
}

// TestHostileLaneFindsNothing runs a lane that goes for the project's
// key, the home folder, mkrelease's environment, the host's processes,
// the folder mkrelease runs in, a TCP server on the host's 127.0.0.1, a
// Unix socket below /tmp and the virtualenv: in the sandbox every attempt
// is denied, the evidence written holds none of it and records the
// sandbox, and a clean lane run after it in the same virtualenv passes
// (it imports the module the hostile lane tried to change). The control is the same run without the sandbox
// (a bubblewrap that cannot run), where every attempt succeeds: the
// sandbox is what stopped them.
func TestHostileLaneFindsNothing(t *testing.T) {
	python := realPython(t)
	if _, err := sandbox.Probe(context.Background(), ""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox on CI: %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}

	t.Run("sandboxed", func(t *testing.T) {
		h := newHostileRun(t, python, "")
		hostile, cleanFailed := h.messages(t)
		for id, secret := range h.secrets {
			t.Logf("%s: %s", id, hostile[id])
			if msg := hostile[id]; !strings.HasPrefix(msg, "denied: ") || strings.Contains(msg, secret) {
				t.Errorf("%s: the lane %q", id, msg)
			}
		}
		if len(cleanFailed) > 0 {
			t.Errorf("the clean lane failed in the sandbox: %q", cleanFailed)
		}
		if !strings.Contains(h.log.String(), `msg="verifier lanes run sandboxed"`) {
			t.Errorf("the run does not say the lanes run sandboxed:\n%s", h.log)
		}
		// The evidence as written: none of the secrets, and the isolation
		// in the run identity.
		ctx := context.Background()
		if err := h.r.records(ctx); err != nil {
			t.Fatal(err)
		}
		if err := h.r.stageIt(ctx); err != nil {
			t.Fatal(err)
		}
		err := filepath.WalkDir(h.r.stage, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			for id, secret := range h.secrets {
				if bytes.Contains(data, []byte(secret)) {
					t.Errorf("%s holds what %s went for (%s)", p, id, secret)
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var m Manifest
		data, err := os.ReadFile(filepath.Join(h.r.stage, "manifest.json"))
		if err == nil {
			err = json.Unmarshal(data, &m)
		}
		if err != nil {
			t.Fatal(err)
		}
		id, err := store.ParseIdentity(m.RunID, m.Identity)
		if err != nil {
			t.Fatal(err)
		}
		if iso := id.Isolation; iso.Level != store.IsolationSandbox || !strings.HasPrefix(iso.Sandbox, "bubblewrap") ||
			strings.Join(iso.Namespaces, ",") != "user,mount,pid,ipc,uts,network" || len(iso.NetworkLanes) != 0 {
			t.Errorf("the run identity records the isolation %+v", iso)
		}
	})

	t.Run("control without the sandbox", func(t *testing.T) {
		h := newHostileRun(t, python, "/bin/false")
		hostile, cleanFailed := h.messages(t)
		for id, secret := range h.secrets {
			if msg := hostile[id]; !strings.HasPrefix(msg, "got: ") || !strings.Contains(msg, secret) {
				t.Errorf("%s: on the host the lane %q, want it to get %s: the case proves nothing", id, msg, secret)
			}
		}
		if len(cleanFailed) > 0 {
			t.Errorf("the clean lane failed: %q", cleanFailed)
		}
		if !strings.Contains(h.log.String(), `msg="verifier lanes run NOT sandboxed`) {
			t.Errorf("the run does not warn that the lanes run unsandboxed:\n%s", h.log)
		}
		iso := h.r.sandbox.isolation(h.r.lanes, h.r.private)
		if iso.Level != store.IsolationNone || !strings.Contains(iso.Reason, "bubblewrap (/bin/false) could not create the sandbox's namespaces") {
			t.Errorf("isolation without the sandbox: %+v", iso)
		}
	})
}
