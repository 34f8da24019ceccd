package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/proctest"
)

func sandboxed(t *testing.T) *Executor {
	t.Helper()
	e := New(context.Background(), Options{})
	if !e.Sandbox().Isolated {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox on CI: %s", e.Sandbox().Reason)
		}
		t.Skipf("no sandbox here: %s", e.Sandbox().Reason)
	}
	return e
}

// TestSandboxView runs, inside a step, each thing a hostile step would try
// and, outside it, the same thing as a control: each attempt succeeds on
// the host and fails in the sandbox.
func TestSandboxView(t *testing.T) {
	e := sandboxed(t)
	host := t.TempDir()
	secret := filepath.Join(host, "signing.key")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(host, "victim.txt")
	if err := os.WriteFile(victim, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(host, "agent.sock")
	for _, addr := range []string{sock, "@mkrelease-executor-test-" + strconv.Itoa(os.Getpid())} {
		serve(t, "unix", addr)
	}
	exe, _ := os.Executable()
	home, _ := os.UserHomeDir()
	self := strconv.Itoa(os.Getpid())
	// noControl marks the cases whose host-side control would change the
	// host (writing into /usr as root) or holds on any host anyway.
	const noControl = true
	for _, c := range []struct {
		name      string
		argv      []string
		env       map[string]string
		noControl bool
	}{
		{"read a file outside its folders", []string{"cat", secret}, nil, false},
		{"list the user's home", []string{"ls", home}, nil, false},
		{"write outside its folders", []string{"sh", "-c", "echo changed > " + victim}, nil, false},
		{"see mkrelease's process", []string{"cat", "/proc/" + self + "/environ"}, nil, false},
		{"see any host process", []string{"sh", "-c", "test $(ls /proc | grep -c '^[0-9]') -gt 8"}, nil, noControl},
		{"reach a host Unix socket", []string{exe}, map[string]string{"EXECUTOR_TEST_HELPER": "dialunix", "EXECUTOR_TEST_ADDR": sock}, false},
		{"reach an abstract Unix socket", []string{exe}, map[string]string{"EXECUTOR_TEST_HELPER": "dialunix", "EXECUTOR_TEST_ADDR": "@mkrelease-executor-test-" + self}, false},
		{"read /etc/shadow", []string{"cat", "/etc/shadow"}, nil, noControl},
		{"write into a system folder", []string{"touch", "/usr/mkrelease-escape"}, nil, noControl},
		{"write into the root folder", []string{"touch", "/mkrelease-escape"}, nil, noControl},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := action(c.argv...)
			a.Tools = []string{exe}
			for k, v := range c.env {
				a.Env[k] = v
			}
			res, err := e.Run(context.Background(), a, paths(t))
			var se *StepError
			if !errors.As(err, &se) {
				t.Errorf("in the sandbox: err = %v, want the step to fail; output:\n%s", err, res.Log)
			}
			// The control: the same command on the host succeeds, so the
			// sandbox is what stopped it.
			if c.noControl {
				return
			}
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Env = os.Environ()
			for k, v := range c.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("control on the host failed too (%v: %s): the case proves nothing", err, out)
			}
			os.WriteFile(victim, []byte("original"), 0o644)
			os.Remove(filepath.Join(os.TempDir(), "mkrelease-sandbox-escape-"+self))
		})
	}
	// /tmp is the sandbox's own: what a step writes there never reaches
	// the host.
	escape := filepath.Join("/tmp", "mkrelease-sandbox-escape-"+self)
	if _, err := e.Run(context.Background(), action("sh", "-c", "echo x > "+escape), paths(t)); err != nil {
		t.Errorf("a step could not write its own /tmp: %v", err)
	}
	if _, err := os.Stat(escape); err == nil {
		os.Remove(escape)
		t.Errorf("a step wrote %s on the host", escape)
	}
	if b, _ := os.ReadFile(victim); string(b) != "original" {
		t.Errorf("a host file was changed from a step: %q", b)
	}
}

// tmpProbe lists what is under the temporary folders and /run, then tries
// to connect to the Unix socket $SOCK by its path and through every
// /proc/PID/root and /proc/PID/cwd; it prints "entry PATH" and "reached
// PATH" lines. A step runs it after writing files of its own.
const tmpProbe = `
import os, socket, sys
sock = os.environ["SOCK"]
for top in ("/tmp", "/var/tmp", "/dev/shm", "/run"):
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            print("entry", os.path.join(root, n))
tries = [sock]
for pid in os.listdir("/proc"):
    if pid.isdigit() or pid in ("self", "thread-self"):
        tries += ["/proc/%s/root%s" % (pid, sock), "/proc/%s/cwd/%s" % (pid, os.path.relpath(sock, "/"))]
for path in tries:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        print("reached", path)
    except OSError:
        pass
    finally:
        s.close()
`

// TestSandboxPrivateTmp: a step finds at /tmp, /var/tmp and /dev/shm only
// what it wrote itself, and nothing at /run, even when every folder of the
// run (the cache folder too) lies below the host's /tmp; a Unix socket the
// host serves below /tmp is unreachable from it, by its path or through
// /proc. The control runs the same probe on the host, which sees the
// host's files and reaches the socket.
func TestSandboxPrivateTmp(t *testing.T) {
	e := sandboxed(t)
	// The system's Python, which every step sees (scripts/bootstrap
	// installs it).
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the probe needs %s: %v", python, err)
		}
		t.Skipf("the probe needs %s: %v", python, err)
	}
	host, err := os.MkdirTemp("/tmp", "mkrelease-tmp-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(host) })
	sock := filepath.Join(host, "agent.sock")
	serve(t, "unix", sock)
	planted := filepath.Join(host, "host-secret.txt")
	if err := os.WriteFile(planted, []byte("the host's"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Files of the host in the other shared temporary folders, where this
	// user may write them.
	var hostFiles []string
	for _, d := range []string{"/var/tmp", "/dev/shm"} {
		if f, err := os.CreateTemp(d, "mkrelease-host-file-"); err == nil {
			f.Close()
			hostFiles = append(hostFiles, f.Name())
			t.Cleanup(func() { os.Remove(f.Name()) })
		}
	}

	// The run's folders below the host's /tmp, as with --cache-dir /tmp/x.
	mine := "mine-" + filepath.Base(host)
	a := action("sh", "-c", `echo "tmpdir=$TMPDIR"; echo mine > /tmp/$MINE-tmp && echo mine > /var/tmp/$MINE-vartmp && echo mine > /dev/shm/$MINE-shm && exec `+python+` -c "$PROBE"`)
	a.Env["SOCK"], a.Env["PROBE"], a.Env["MINE"] = sock, tmpProbe, mine
	res, err := e.Run(context.Background(), a, pathsIn(host))
	if err != nil {
		t.Fatalf("the probe failed in the sandbox: %v\n%s", err, res.Log)
	}
	var entries []string
	for _, line := range strings.Split(string(res.Log), "\n") {
		if path, ok := strings.CutPrefix(line, "entry "); ok {
			entries = append(entries, path)
		}
		if path, ok := strings.CutPrefix(line, "reached "); ok {
			t.Errorf("the step reached the host's socket at %s", path)
		}
	}
	// /tmp and /var/tmp are one folder of the step's own.
	want := []string{"/dev/shm/" + mine + "-shm", "/tmp/" + mine + "-tmp", "/tmp/" + mine + "-vartmp", "/var/tmp/" + mine + "-tmp", "/var/tmp/" + mine + "-vartmp"}
	slices.Sort(entries)
	if !slices.Equal(entries, want) {
		t.Errorf("the step found %q, want only what it wrote itself, %q\n%s", entries, want, res.Log)
	}
	if !strings.Contains(string(res.Log), "tmpdir=/tmp\n") {
		t.Errorf("TMPDIR is not the step's /tmp:\n%s", res.Log)
	}
	for _, f := range []string{"/tmp/" + mine + "-tmp", "/var/tmp/" + mine + "-vartmp", "/dev/shm/" + mine + "-shm"} {
		if _, err := os.Stat(f); err == nil {
			os.Remove(f)
			t.Errorf("the step's %s reached the host", f)
		}
	}

	// The control: the same probe on the host sees the host's files and
	// reaches the socket.
	cmd := exec.Command(python, "-c", tmpProbe)
	cmd.Env = append(os.Environ(), "SOCK="+sock)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("control on the host: %v\n%s", err, out)
	}
	for _, want := range append([]string{"entry " + planted, "reached " + sock}, func() (s []string) {
		for _, f := range hostFiles {
			s = append(s, "entry "+f)
		}
		return s
	}()...) {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("control on the host lacks %q: the probe proves nothing\n%s", want, out)
		}
	}
}

// TestSandboxIdentity: a step runs as the same user on every host, with its
// own host name, only its standard streams open, and its own folders
// writable.
func TestSandboxIdentity(t *testing.T) {
	e := sandboxed(t)
	p := paths(t)
	res, err := e.Run(context.Background(), action("sh", "-c",
		`echo "uid=$(id -u) gid=$(id -g) host=$(hostname)"; ls /proc/self/fd | tr '\n' ' '; echo; `+
			`echo ok > ${MKRELEASE_OUT}/o && echo ok > ws.txt && echo ok > ${TMPDIR}/t && echo ok > ${HOME}/h && echo writable`), p)
	if err != nil {
		t.Fatal(err)
	}
	log := string(res.Log)
	for _, want := range []string{"uid=1000 gid=1000 host=mkrelease-step", "writable"} {
		if !strings.Contains(log, want) {
			t.Errorf("output lacks %q:\n%s", want, log)
		}
	}
	// ls opens one descriptor of its own to read the folder: 0 1 2 3.
	if !strings.Contains(log, "\n0 1 2 3 \n") {
		t.Errorf("open descriptors in the step, want 0 1 2 (and ls's own 3):\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(p.Workspace, "ws.txt")); err != nil {
		t.Errorf("the workspace is not writable from the step: %v", err)
	}
}

// TestUnsandboxedFallback: when bubblewrap cannot run, the executor still
// runs steps and says why they are not sandboxed.
func TestUnsandboxedFallback(t *testing.T) {
	e := New(context.Background(), Options{Bwrap: "/bin/false"})
	sb := e.Sandbox()
	if sb.Isolated || sb.Level() == LevelSandbox {
		t.Fatalf("sandbox = %+v with a bubblewrap that always fails", sb)
	}
	if !strings.Contains(sb.Reason, "bubblewrap (/bin/false) could not create the sandbox's namespaces") {
		t.Errorf("reason = %q", sb.Reason)
	}
	if !strings.Contains(sb.Describe(), "NOT sandboxed") {
		t.Errorf("describe = %q", sb.Describe())
	}
	if _, err := e.Run(context.Background(), action("sh", "-c", "echo ran"), paths(t)); err != nil {
		t.Fatal(err)
	}
}

// TestSandboxLevelIsInTheKey: an output made outside the sandbox is never
// served to a sandboxed build.
func TestSandboxLevelIsInTheKey(t *testing.T) {
	a := action("true")
	a.Isolation = LevelSandbox
	b := a
	b.Isolation = LevelNetwork
	if a.Key() == b.Key() {
		t.Error("the key ignores the isolation level")
	}
	c := a
	c.Tools, c.Caches = []string{"/opt/x/bin/cc"}, []string{"/cache/go"}
	if a.Key() != c.Key() {
		t.Error("the key depends on where the tools and caches are")
	}
}

// TestStepDiesWithRunnerInSetUp: a step's processes end with the process
// that runs it even when that process is killed while bubblewrap is still
// setting up the sandbox. Each round kills the runner at a different
// moment after bubblewrap started; with bubblewrap's own parent-death
// signal alone, about half of the rounds left a step running.
func TestStepDiesWithRunnerInSetUp(t *testing.T) {
	sandboxed(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for round := range 24 {
		marker := fmt.Sprintf("%d.%d", 600+round, os.Getpid())
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), "EXECUTOR_TEST_HELPER=runstep", "EXECUTOR_TEST_DIR="+t.TempDir(),
			"EXECUTOR_TEST_SCRIPT=(sleep "+marker+" &); sleep "+marker)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// bubblewrap's command line carries the marker from its start. The
		// runner is killed once bubblewrap has cloned the process that sets
		// up the sandbox (two processes carry the marker) and before the
		// step runs, at a different moment each round.
		deadline := time.Now().Add(30 * time.Second)
		for len(proctest.WithMarker(marker)) < 2 {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: bubblewrap never started", round)
			}
		}
		time.Sleep(time.Duration(round%4) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		deadline = time.Now().Add(10 * time.Second)
		for left := proctest.WithMarker(marker); len(left) > 0; left = proctest.WithMarker(marker) {
			if time.Now().After(deadline) {
				for _, pid := range left {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Fatalf("round %d (killed %d ms into the set-up): processes %v outlived the runner by 10 s", round, round%4, left)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestSandboxWithoutOwnPIDNamespace: a host that refuses bubblewrap the
// PID namespace of mkrelease's still gets the sandbox, and the executor
// says what is weaker; on a host that allows it, nothing is.
func TestSandboxWithoutOwnPIDNamespace(t *testing.T) {
	if e := sandboxed(t); e.Sandbox().Caveat != "" || !e.pidns {
		t.Fatalf("a host whose bubblewrap runs in a PID namespace of its own: caveat %q, pidns %v", e.Sandbox().Caveat, e.pidns)
	}
	real, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	// A bubblewrap that refuses to run as the first process of a PID
	// namespace, as a host's limits would refuse that namespace.
	fake := filepath.Join(t.TempDir(), "bwrap")
	script := "#!/bin/sh\nif [ $$ -eq 1 ]; then echo 'no PID namespace for you' >&2; exit 1; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e := New(context.Background(), Options{Bwrap: fake})
	sb := e.Sandbox()
	if !sb.Isolated || e.pidns {
		t.Fatalf("sandbox = %+v, pidns %v: want the sandbox without the PID namespace", sb, e.pidns)
	}
	for _, want := range []string{"may outlive a mkrelease killed", "no PID namespace for you"} {
		if !strings.Contains(sb.Caveat, want) {
			t.Errorf("caveat %q lacks %q", sb.Caveat, want)
		}
	}
	res, err := e.Run(context.Background(), action("sh", "-c", "echo ran in $(hostname)"), paths(t))
	if err != nil || !strings.Contains(string(res.Log), "ran in mkrelease-step") {
		t.Errorf("a step without the PID namespace: %v\n%s", err, res.Log)
	}
}

// TestToolRoots: a toolchain's installation folder is shown whole, but
// never the user's home folder: a tool in ~/bin shows ~/bin, one in ~
// itself only its own file.
func TestToolRoots(t *testing.T) {
	d := t.TempDir()
	home := filepath.Join(d, "home", "alice")
	for _, f := range []string{"home/alice/bin/mytool", "home/alice/loose", "home/alice/.cargo/bin/cargo", "opt/llvm/bin/clang", "opt/plain/tool"} {
		path := filepath.Join(d, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		tool string
		want string
	}{
		{"home/alice/bin/mytool", "home/alice/bin"},
		{"home/alice/loose", "home/alice/loose"},
		{"home/alice/.cargo/bin/cargo", "home/alice/.cargo"},
		{"opt/llvm/bin/clang", "opt/llvm"},
		{"opt/plain/tool", "opt/plain"},
	} {
		got := toolRoots([]string{filepath.Join(d, c.tool)}, "", home)
		if want := []string{filepath.Join(d, c.want)}; !slices.Equal(got, want) {
			t.Errorf("toolRoots(%s) = %q, want %q", c.tool, got, want)
		}
	}
	// The control: with no home to protect, ~/bin's parent is shown.
	if got := toolRoots([]string{filepath.Join(d, "home/alice/bin/mytool")}, "", ""); !slices.Equal(got, []string{home}) {
		t.Errorf("without a home folder: %q, want %q", got, home)
	}
}

// TestSandboxHidesToolchainCredentials: a toolchain folder's credentials
// file reads empty in a step, and the step's /etc/hosts does not name the
// machine; the host's files are as they were.
func TestSandboxHidesToolchainCredentials(t *testing.T) {
	e := sandboxed(t)
	root := filepath.Join(t.TempDir(), "cargo")
	tool := filepath.Join(root, "bin", "cargo")
	creds := filepath.Join(root, "credentials.toml")
	for f, content := range map[string]string{tool: "#!/bin/sh\necho cargo 1.0\n", creds: "[registry]\ntoken = \"cio-secret-token\"\n"} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := action("sh", "-c", `"$TOOL" && echo "creds=[$(cat "$CREDS")]" && cat /etc/hosts`)
	a.Env["TOOL"], a.Env["CREDS"] = tool, creds
	a.Tools = []string{tool}
	res, err := e.Run(context.Background(), a, paths(t))
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Log)
	}
	log := string(res.Log)
	if !strings.Contains(log, "cargo 1.0\n") || !strings.Contains(log, "creds=[]\n") {
		t.Errorf("the step ran its toolchain and read its credentials as:\n%s", log)
	}
	if name, err := os.Hostname(); err == nil && name != "localhost" && strings.Contains(log, name) {
		t.Errorf("the step's /etc/hosts names the machine %q:\n%s", name, log)
	}
	if b, _ := os.ReadFile(creds); !strings.Contains(string(b), "cio-secret-token") {
		t.Errorf("the host's credentials file changed: %q", b)
	}
}
