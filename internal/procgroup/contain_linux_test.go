package procgroup

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mkrelease/mkrelease/internal/proctest"
)

// escapeScript starts two sleepers that a group kill misses or that
// outlive the shell: one in a session (and group) of its own, one
// orphaned by a double fork. Both sleep $0 seconds, a number unique to the
// test (the marker), and touch a file in the folder $1 first. It prints
// "up" once both run, then waits.
const escapeScript = `setsid sh -c 'touch "$1/a"; exec sleep "$0"' "$0" "$1" &
(sh -c 'touch "$1/b"; exec sleep "$0"' "$0" "$1" &)
while [ ! -e "$1/a" ] || [ ! -e "$1/b" ]; do sleep 0.01; done
echo up; wait`

// sleepMarker is a number of seconds (about 10 minutes) that no other
// process sleeps, which names the test's sleepers; whatever sleeps it is
// killed when the test ends.
func sleepMarker(t *testing.T) string {
	n, err := rand.Int(rand.Reader, big.NewInt(1e9))
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("600.%09d", n.Int64())
	t.Cleanup(func() { killMarked(marker) })
	return marker
}

func killMarked(marker string) {
	for _, pid := range proctest.WithMarker(marker) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// containment is what the host offers, or a skip.
func containment(t *testing.T) Containment {
	t.Helper()
	c := ProbeContainment(context.Background())
	if !c.PIDNamespace {
		t.Skipf("no PID namespace here: %s", c.Caveat)
	}
	return c
}

// startUp starts cmd and waits for the "up" line it prints.
func startUp(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "up\n" {
		Kill(cmd)
		cmd.Wait()
		t.Fatalf("%s printed %q (%v), want up", cmd.Args, line, err)
	}
}

// TestContainedCommandLeavesNothingBehind: whether a confined command is
// stopped or ends by itself, the processes it started end with it, even
// those that left its session or were orphaned, by the time Wait returns.
// Its process group alone (the zero Containment, the negative control)
// leaves the one in a session of its own running.
func TestContainedCommandLeavesNothingBehind(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	c := containment(t)
	tests := []struct {
		name    string
		c       Containment
		cancel  bool // else the shell exits once its children run
		survive bool
	}{
		{"cancelled", c, true, false},
		{"exited", c, false, false},
		{"group only, cancelled", Containment{}, true, true},
		{"group only, exited", Containment{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := sleepMarker(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			script := escapeScript
			if !tt.cancel {
				script = strings.TrimSuffix(script, "; wait")
				if script == escapeScript {
					t.Fatal("escapeScript no longer ends in wait")
				}
			}
			cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script, marker, t.TempDir())
			tt.c.KillOnCancel(cmd)
			startUp(t, cmd)
			if tt.cancel {
				cancel()
			}
			start := time.Now()
			err := cmd.Wait()
			t.Logf("Wait returned %v after %s", err, time.Since(start).Round(time.Millisecond))
			if tt.cancel == (err == nil) {
				t.Errorf("Wait: %v", err)
			}
			left := proctest.WithMarker(marker)
			switch {
			case tt.survive && len(left) == 0:
				t.Error("nothing outlived a group kill: the check cannot fail")
			case !tt.survive && len(left) > 0:
				t.Errorf("%d processes outlived the confined command: %v", len(left), left)
			}
		})
	}
}

// TestContainedCommandDiesWithParent: when mkrelease is killed (SIGKILL),
// the processes a confined command started end too, even one in a session
// of its own.
func TestContainedCommandDiesWithParent(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	containment(t)
	marker := sleepMarker(t)
	parent := helper("contained-parent", map[string]string{"PROCGROUP_TEST_SCRIPT": escapeScript, "PROCGROUP_TEST_MARKER": marker, "PROCGROUP_TEST_DIR": t.TempDir()})
	startUp(t, parent)
	if n := len(proctest.WithMarker(marker)); n < 2 {
		t.Fatalf("%d processes carry the marker, want the 2 sleepers and more", n)
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	for deadline := time.Now().Add(10 * time.Second); len(proctest.WithMarker(marker)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived their SIGKILLed mkrelease by 10 s: %v", proctest.WithMarker(marker))
		}
	}
}

// viewScript prints what a confined command sees of itself: its pid, the
// pid /proc says it has (read by the shell itself), ...
const viewScript = `read -r procpid rest < /proc/self/stat; echo "pid=$$"; echo "procpid=$procpid"; echo "comm=$(cat /proc/$$/comm)"; echo "procs=$(ls /proc | grep -c '^[0-9]')"; echo "uid=$(id -u)"; grep -E '^Cap(Prm|Eff|Amb):' /proc/self/status | tr -d '\t'`

// TestContainedView: a confined command has a pid of the namespace, sees
// a /proc of its namespace (its pid names it there, and few processes
// are there), keeps its user, and a user who is not root gains no capability
// in the namespace. mkrelease's own /proc is untouched. Run as root, the
// test also runs as nobody (a helper), the way most users run mkrelease.
func TestContainedView(t *testing.T) {
	c := containment(t)
	if !c.OwnProc {
		t.Skipf("no /proc of the namespace's own here: %s", c.Caveat)
	}
	check := func(t *testing.T, out string, uid int) {
		t.Helper()
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				got[k] = v
			} else if k, v, ok := strings.Cut(line, ":"); ok {
				got[k] = v
			}
		}
		if got["pid"] == "1" || got["pid"] != got["procpid"] || got["comm"] != "sh" || got["uid"] != strconv.Itoa(uid) {
			t.Errorf("pid %s, /proc/self %s, /proc/$$/comm %q, uid %s: want the same pid (not the init's), sh, uid %d\n%s", got["pid"], got["procpid"], got["comm"], got["uid"], uid, out)
		}
		if n, err := strconv.Atoi(got["procs"]); err != nil || n > 6 {
			t.Errorf("%s processes in the namespace's /proc, want the few of the namespace\n%s", got["procs"], out)
		}
		caps := []string{"CapAmb"}
		if uid != 0 {
			caps = append(caps, "CapPrm", "CapEff")
		}
		for _, k := range caps {
			if v, ok := got[k]; !ok || strings.Trim(v, "0") != "" {
				t.Errorf("%s %q, want none\n%s", k, v, out)
			}
		}
	}
	t.Run("as this user", func(t *testing.T) {
		cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", viewScript)
		c.KillOnCancel(cmd)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		check(t, string(out), os.Geteuid())
		if pid, err := os.Readlink("/proc/self"); err != nil || pid != strconv.Itoa(os.Getpid()) {
			t.Errorf("mkrelease's /proc/self is %q (%v), want %d: the namespace's /proc leaked out", pid, err, os.Getpid())
		}
	})
	t.Run("as nobody", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("only root can become nobody")
		}
		res := runHelper(t, "probe-and-run", map[string]string{"PROCGROUP_TEST_SETUP": "nobody", "PROCGROUP_TEST_SCRIPT": viewScript})
		if !res.Containment.PIDNamespace || !res.Containment.OwnProc || res.Err != "" {
			t.Fatalf("as nobody: %+v", res)
		}
		check(t, res.Output, 65534)
	})
}

// TestContainedExitStatus: the init exits with the command's status, and
// with 128+N, saying so, when signal N killed the command.
func TestContainedExitStatus(t *testing.T) {
	c := containment(t)
	for _, tt := range []struct {
		script string
		code   int
		stderr string
	}{
		{"exit 0", 0, ""},
		{"exit 3", 3, ""},
		{"kill -9 $$", 137, "was killed by signal 9 (killed)"},
	} {
		cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", tt.script)
		c.KillOnCancel(cmd)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		code := 0
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", tt.script, err)
		}
		if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("%s: status %d, stderr %q; want %d, %q", tt.script, code, stderr.String(), tt.code, tt.stderr)
		}
	}
	// A command that cannot start makes the init fail, saying why.
	cmd := exec.CommandContext(context.Background(), "/bin/sh")
	cmd.Path = "/nonexistent/worker"
	c.KillOnCancel(cmd)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != initFailed || !strings.Contains(string(out), "/nonexistent/worker") {
		t.Errorf("a command that cannot start: %v: %s", err, out)
	}
}

// TestProbeFallsBack: a host that refuses the mount of a /proc (here a
// /proc partly hidden by a mount nobody may remove, as in a container)
// still gets the PID namespace, with a caveat; one that refuses PID
// namespaces (here their limit, 0, in a user namespace) gets neither,
// with a caveat, and commands still run.
func TestProbeFallsBack(t *testing.T) {
	containment(t)
	t.Run("no /proc mount", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("only root can hide a part of /proc from nobody")
		}
		res := runHelper(t, "probe-and-run", map[string]string{"PROCGROUP_TEST_SETUP": "masked-proc", "PROCGROUP_TEST_SCRIPT": `read -r procpid rest < /proc/self/stat; echo "$$ $procpid"`})
		c := res.Containment
		t.Logf("caveat: %s", c.Caveat)
		if !c.PIDNamespace || c.OwnProc || !strings.Contains(c.Caveat, "sees mkrelease's /proc") || !strings.Contains(c.Caveat, "mount /proc: operation not permitted") {
			t.Errorf("containment %+v, want a PID namespace without a /proc of its own, and a caveat naming the mount", c)
		}
		// Its pid is the namespace's, /proc's mkrelease's.
		if pid, procpid, _ := strings.Cut(strings.TrimSpace(res.Output), " "); res.Err != "" || pid == procpid || pid == "" {
			t.Errorf("the command: %q %s; want pids of two namespaces", res.Output, res.Err)
		}
	})
	t.Run("no PID namespace", func(t *testing.T) {
		res := runHelper(t, "probe-and-run", map[string]string{"PROCGROUP_TEST_SETUP": "no-pidns", "PROCGROUP_TEST_SCRIPT": `echo "ran"`})
		c := res.Containment
		t.Logf("caveat: %s", c.Caveat)
		if c.PIDNamespace || c.OwnProc || !strings.Contains(c.Caveat, "refused a PID namespace") || !strings.Contains(c.Caveat, "no space left on device") {
			t.Errorf("containment %+v, want none and a caveat naming the refusal", c)
		}
		if res.Err != "" || strings.TrimSpace(res.Output) != "ran" {
			t.Errorf("the command: %q %s", res.Output, res.Err)
		}
	})
}

// helperResult is what the probe-and-run helper prints.
type helperResult struct {
	Containment Containment
	Output      string
	Err         string
}

// helper is the test binary (through /proc/self/exe, which nobody may run
// wherever the binary lies) as the helper mode.
func helper(mode string, env map[string]string) *exec.Cmd {
	cmd := exec.Command(self)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "PROCGROUP_TEST_HELPER="+mode)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func runHelper(t *testing.T, mode string, env map[string]string) helperResult {
	t.Helper()
	cmd := helper(mode, env)
	switch env["PROCGROUP_TEST_SETUP"] {
	case "nobody":
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	case "no-pidns":
		// Root of a user namespace of its own, whose limits it may set.
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}}
	case "masked-proc":
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res helperResult
	if err != nil || json.Unmarshal(out, &res) != nil {
		t.Fatalf("helper %s: %v: %s%s", mode, err, out, stderr.Bytes())
	}
	return res
}

// containHelper is the test binary as a stand-in for mkrelease, for the
// tests above; it returns the exit status.
func containHelper(mode string) int {
	switch mode {
	case "contained-parent":
		// Start the script confined and wait: the test kills this process.
		c := ProbeContainment(context.Background())
		cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", os.Getenv("PROCGROUP_TEST_SCRIPT"), os.Getenv("PROCGROUP_TEST_MARKER"), os.Getenv("PROCGROUP_TEST_DIR"))
		c.KillOnCancel(cmd)
		cmd.Stdout = os.Stdout
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "probe-and-run":
		if err := helperSetup(os.Getenv("PROCGROUP_TEST_SETUP")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var res helperResult
		res.Containment = ProbeContainment(context.Background())
		cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", os.Getenv("PROCGROUP_TEST_SCRIPT"))
		res.Containment.KillOnCancel(cmd)
		out, err := cmd.CombinedOutput()
		res.Output = string(out)
		if err != nil {
			res.Err = err.Error()
		}
		json.NewEncoder(os.Stdout).Encode(res)
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n", mode)
	return 2
}

// helperSetup makes the helper's host: "nobody" is done by the test (the
// helper starts as nobody); "masked-proc" hides /proc/sys under a mount
// (the helper has a mount namespace of its own) and starts the helper
// again as nobody, who may not remove it (a process that changed its user
// without starting a program may not set up a user namespace); "no-pidns"
// sets the limit of PID namespaces of the helper's user namespace to 0.
func helperSetup(setup string) error {
	switch setup {
	case "masked-proc":
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("make the mounts private: %w", err)
		}
		if err := unix.Mount("tmpfs", "/proc/sys", "tmpfs", 0, ""); err != nil {
			return fmt.Errorf("mount over /proc/sys: %w", err)
		}
		if err := syscall.Setgroups(nil); err != nil {
			return fmt.Errorf("setgroups: %w", err)
		}
		if err := syscall.Setgid(65534); err != nil {
			return fmt.Errorf("setgid: %w", err)
		}
		if err := syscall.Setuid(65534); err != nil {
			return fmt.Errorf("setuid: %w", err)
		}
		env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PROCGROUP_TEST_SETUP=") })
		return fmt.Errorf("start again as nobody: %w", syscall.Exec(self, []string{self}, env))
	case "no-pidns":
		return os.WriteFile("/proc/sys/user/max_pid_namespaces", []byte("0\n"), 0o644)
	}
	return nil
}
