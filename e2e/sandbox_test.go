package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/proctest"
)

// The password a hostile step hunts for in mkrelease's environment.
const hostilePassword = "hostile-step-test-password-8c1f"

// hostileProject writes a small project whose step "first" is benign and
// whose step "evil" (when evil is set) tries every escape a build step
// could: it reports each attempt in $MKRELEASE_OUT/report.txt, "NAME:
// blocked" or "NAME: ESCAPED ...", and always exits 0. The paths it aims at
// are baked into the script, as an attacker who knows the layout would.
func hostileProject(t *testing.T, dir, cache, home, sock string, tcpPort int, evil bool) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "src", "hello.txt"), []byte("hello\n"), 0o644))
	script := fmt.Sprintf(`#!/bin/sh
PROJECT=%q CACHE=%q HOSTHOME=%q SOCK=%q PORT=%d PASS=%q
R=$MKRELEASE_OUT/report.txt
: > "$R"
say() { echo "$1: $2" >> "$R"; }

# 1. mkrelease's own environment, through any process's /proc entry
hit=""
for f in /proc/[0-9]*/environ; do grep -qa "$PASS" "$f" 2>/dev/null && hit="$hit $f"; done
[ -n "$hit" ] && say environ "ESCAPED$hit" || say environ blocked

# 2. the project's signing key, by path and through other processes' cwd
hit=""
cat "$PROJECT/.mkrelease/dev.key" >/dev/null 2>&1 && hit="$hit $PROJECT/.mkrelease/dev.key"
for d in /proc/[0-9]*/cwd; do ls "$d/.mkrelease" >/dev/null 2>&1 && hit="$hit $d"; done
[ -n "$hit" ] && say key "ESCAPED$hit" || say key blocked

# 3. writing outside its folders: the project, the user's home, the cache
hit=""
for f in "$PROJECT/PWNED" "$HOSTHOME/PWNED" "$CACHE/PWNED" "$PROJECT/src/hello.txt"; do
  (echo pwned > "$f") 2>/dev/null && hit="$hit $f"
done
[ -n "$hit" ] && say write "ESCAPED$hit" || say write blocked

# 4. host sockets: a Unix socket by path, an abstract one, TCP on loopback
hit=""
for a in "$SOCK" "@${SOCK##*/}"; do
  /usr/bin/python3 -c 'import socket,sys; a=sys.argv[1]; a="\0"+a[1:] if a[0]=="@" else a; s=socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(a)' "$a" 2>/dev/null && hit="$hit unix:$a"
done
/usr/bin/python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2)' "$PORT" 2>/dev/null && hit="$hit tcp:$PORT"
[ -n "$hit" ] && say socket "ESCAPED$hit" || say socket blocked

# 5. the action cache: rewrite the entry of step "first"
hit=""
for f in "$CACHE"/actions/*/*/out/first.txt "$CACHE"/actions/*/*/entry.json; do
  [ -e "$f" ] && (echo evil > "$f") 2>/dev/null && hit="$hit $f"
done
ls "$CACHE/actions" >/dev/null 2>&1 && hit="$hit (listed $CACHE/actions)"
[ -n "$hit" ] && say cache "ESCAPED$hit" || say cache blocked

# 6. descriptors mkrelease inherited (the test passes one open on a secret)
hit=""
for fd in /proc/$$/fd/*; do
  case "$(readlink "$fd")" in *secret-descriptor*) hit="$hit $fd";; esac
done
[ -n "$hit" ] && say descriptor "ESCAPED$hit" || say descriptor blocked

# 7. the caches of another step: step "first"'s Go build cache and cache
# folder, which its run made (a step's own are writable: it may fill them)
hit=""
for d in "$CACHE/go-build/t1/first" "$CACHE/steps/t1/first"; do
  [ -e "$d" ] && hit="$hit (sees $d)"
  (echo pwned > "$d/PWNED") 2>/dev/null && hit="$hit $d/PWNED"
done
[ -n "$hit" ] && say stepcache "ESCAPED$hit" || say stepcache blocked
(mkdir -p "$GOCACHE" && echo mine > "$MKRELEASE_STEP_CACHE/mine" && echo mine > "$GOCACHE/mine") 2>/dev/null && say own-cache writable || say own-cache "not writable"

# 8. a process that outlives the step
(sleep 600.31337 &)
say background started
cp hello.txt "$MKRELEASE_OUT/evil.txt"
`, dir, cache, home, sock, tcpPort, hostilePassword)
	must(os.WriteFile(filepath.Join(dir, "src", "hostile.sh"), []byte(script), 0o755))
	cfg := `[project]
name = "hostile"
version = "1.0"
[build]
source_date_epoch = 1793491200
[[source]]
name = "up"
local = "src"
[[target]]
name = "t1"
[[build.step]]
name = "first"
source = "up"
run = ["sh", "-c", "echo ok > ${MKRELEASE_OUT}/first.txt"]
outputs = ["first.txt"]
`
	if evil {
		cfg += `[[build.step]]
name = "evil"
source = "up"
run = ["sh", "./hostile.sh"]
outputs = ["report.txt", "evil.txt"]
`
	}
	must(os.WriteFile(filepath.Join(dir, "release.toml"), []byte(cfg), 0o644))
}

// hostRun is one mkrelease run of the hostile project, as the user runs it,
// with a secret in its environment and a secret open on descriptor 3.
func hostRun(t *testing.T, dir, cache, home string, extraEnv []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(mkrelease, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MKRELEASE_CACHE=" + cache,
		"MKRELEASE_KEY_PASSWORD=" + hostilePassword, "TMPDIR=" + filepath.Join(home, "tmp")}, extraEnv...)
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	secret, err := os.Create(filepath.Join(home, "secret-descriptor"))
	if err != nil {
		t.Fatal(err)
	}
	defer secret.Close()
	cmd.ExtraFiles = []*os.File{secret}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return o.String(), e.String(), code
}

// listenAll starts a Unix socket listener at sock, an abstract one named
// after it, and a TCP listener on loopback; it returns the TCP port.
func listenAll(t *testing.T, sock string) int {
	t.Helper()
	var lns []net.Listener
	for _, l := range [][2]string{{"unix", sock}, {"unix", "@" + filepath.Base(sock)}, {"tcp", "127.0.0.1:0"}} {
		ln, err := net.Listen(l[0], l[1])
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
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
	return lns[2].Addr().(*net.TCPAddr).Port
}

// report reads the hostile step's report.
func report(t *testing.T, dist string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dist, "build", "t1", "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		m[k] = v
	}
	return m
}

func snapshotTrees(t *testing.T, roots ...string) map[string][]byte {
	t.Helper()
	all := map[string][]byte{}
	for _, r := range roots {
		for k, v := range tree(t, r) {
			if strings.HasPrefix(k, "dist/") || strings.HasPrefix(k, "tmp/") {
				continue // the build's own output, the run's scratch
			}
			all[filepath.Join(r, k)] = v
		}
	}
	return all
}

var escapes = []string{"environ", "key", "write", "socket", "cache", "descriptor", "stepcache"}

// TestHostileStep: a build step tries every escape. In the sandbox each
// fails, the build succeeds, and nothing outside the step's folders
// changes; the same step run without the sandbox (a host whose kernel
// refuses namespaces) escapes, which shows the attempts are real.
func TestHostileStep(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Fatal("bubblewrap is not installed: scripts/bootstrap installs it")
	}
	root := t.TempDir()
	dir, cache, home := filepath.Join(root, "project"), filepath.Join(root, "cache"), filepath.Join(root, "home")
	sock := filepath.Join(root, "mkrelease-e2e-agent.sock")
	port := listenAll(t, sock)
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine example.invalid password hunter2\n"), 0o600)

	// The benign step alone first: its cache entry is what "evil" attacks.
	hostileProject(t, dir, cache, home, sock, port, false)
	mustHost := func(args ...string) string {
		t.Helper()
		out, errOut, code := hostRun(t, dir, cache, home, nil, args...)
		if code != 0 {
			t.Fatalf("mkrelease %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
		}
		return out + errOut
	}
	mustHost("lock")
	mustHost("build")
	// The development signing key exists (build creates it on first use).
	if _, err := os.Stat(filepath.Join(dir, ".mkrelease", "dev.key")); err != nil {
		t.Fatalf("no signing key in the project to steal: %v", err)
	}
	hostileProject(t, dir, cache, home, sock, port, true)
	mustHost("lock")
	before := snapshotTrees(t, dir, home, cache)

	out := mustHost("build")
	if !strings.Contains(out, "sandboxed (bubblewrap") {
		t.Errorf("build does not say it sandboxed the steps:\n%s", out)
	}
	rep := report(t, filepath.Join(dir, "dist"))
	for _, name := range escapes {
		if rep[name] != "blocked" {
			t.Errorf("escape %s: %s", name, rep[name])
		}
	}
	if rep["own-cache"] != "writable" {
		t.Errorf("the step's own GOCACHE and $MKRELEASE_STEP_CACHE: %s, want writable", rep["own-cache"])
	}
	after := snapshotTrees(t, dir, home, cache)
	for k, v := range before {
		if !bytes.Equal(after[k], v) {
			t.Errorf("%s changed during the build", k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok && !strings.HasPrefix(k, cache+"/") {
			t.Errorf("%s appeared during the build", k)
		}
	}
	if len(proctest.WithMarker("600.31337")) > 0 {
		t.Error("a process the step started in the background outlived the step")
	}
	// The next build serves step "first" from its untouched entry.
	mustHost("build")
	if b, _ := os.ReadFile(filepath.Join(dir, "dist", "build", "t1", "first.txt")); string(b) != "ok\n" {
		t.Errorf("first.txt after the attack = %q, want the benign step's output", b)
	}

	t.Run("without the sandbox the same step escapes", func(t *testing.T) {
		root := t.TempDir()
		dir, cache, home := filepath.Join(root, "project"), filepath.Join(root, "cache"), filepath.Join(root, "home")
		os.MkdirAll(home, 0o755)
		hostileProject(t, dir, cache, home, sock, port, false)
		noSandbox := []string{"MKRELEASE_BWRAP=/bin/false"}
		for _, args := range [][]string{{"lock"}, {"build"}} {
			if out, errOut, code := hostRun(t, dir, cache, home, noSandbox, args...); code != 0 {
				t.Fatalf("mkrelease %v: exit %d\n%s\n%s", args, code, out, errOut)
			}
		}
		hostileProject(t, dir, cache, home, sock, port, true)
		hostRun(t, dir, cache, home, noSandbox, "lock")
		out, errOut, code := hostRun(t, dir, cache, home, noSandbox, "build")
		if code != 0 {
			t.Fatalf("unsandboxed build: exit %d\n%s\n%s", code, out, errOut)
		}
		if !strings.Contains(errOut, "NOT SANDBOXED") || !strings.Contains(out, "NOT sandboxed, network isolated only: bubblewrap (/bin/false)") {
			t.Errorf("the unsandboxed build does not say so loudly:\n%s\n%s", out, errOut)
		}
		rep := report(t, filepath.Join(dir, "dist"))
		// The network namespace still holds for TCP, and Go passes no
		// descriptor on; everything else is open to a step without the sandbox.
		for _, name := range []string{"key", "write", "cache"} {
			if !strings.HasPrefix(rep[name], "ESCAPED") {
				t.Errorf("escape %s without the sandbox: %s (the attempt does not work: the sandboxed result proves nothing)", name, rep[name])
			}
		}
		// Two escapes are closed outside the sandbox too: mkrelease takes
		// the key's password out of its environment when it starts (no
		// /proc/PID/environ holds it), and no step's caches outlive its run
		// (there is no other step's cache to reach).
		for _, name := range []string{"environ", "stepcache"} {
			if rep[name] != "blocked" {
				t.Errorf("escape %s without the sandbox: %s, want blocked by mkrelease itself", name, rep[name])
			}
		}
		for _, d := range []string{"go-build", "steps"} {
			if _, err := os.Stat(filepath.Join(cache, d)); err == nil {
				t.Errorf("the cache folder holds steps' caches (%s) after a build", d)
			}
		}
		m, err := os.ReadFile(filepath.Join(dir, "dist", "manifest.json"))
		if err != nil || !bytes.Contains(m, []byte(`"sandboxed": false`)) || !bytes.Contains(m, []byte(`"isolation": "network"`)) {
			t.Errorf("manifest.json does not record the unsandboxed build:\n%s", m)
		}
	})
}

// TestStepDiesWithMkrelease: a step still running when mkrelease is killed
// with SIGKILL dies with it, and the next build removes the folders the
// killed one left.
func TestStepDiesWithMkrelease(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's")
	}
	root := t.TempDir()
	dir, cache, home := filepath.Join(root, "project"), filepath.Join(root, "cache"), filepath.Join(root, "home")
	tmp := filepath.Join(home, "tmp")
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.MkdirAll(tmp, 0o755)
	os.WriteFile(filepath.Join(dir, "src", "x"), []byte("x\n"), 0o644)
	cfg := func(run string) string {
		return `[project]
name = "slow"
version = "1.0"
[build]
source_date_epoch = 1793491200
[[source]]
name = "up"
local = "src"
[[target]]
name = "t1"
[[build.step]]
name = "slow"
source = "up"
run = ["sh", "-c", "` + run + `"]
outputs = ["x"]
`
	}
	os.WriteFile(filepath.Join(dir, "release.toml"), []byte(cfg("(sleep 600.4242 &); sleep 600.4243; cp x ${MKRELEASE_OUT}/x")), 0o644)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MKRELEASE_CACHE=" + cache, "TMPDIR=" + tmp}
	lock := exec.Command(mkrelease, "lock")
	lock.Dir, lock.Env = dir, env
	if out, err := lock.CombinedOutput(); err != nil {
		t.Fatalf("lock: %v\n%s", err, out)
	}
	cmd := exec.Command(mkrelease, "build")
	cmd.Dir, cmd.Env = dir, env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(proctest.WithMarker("600.4242")) == 0 || len(proctest.WithMarker("600.4243")) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the step never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for len(proctest.WithMarker("600.4242")) > 0 || len(proctest.WithMarker("600.4243")) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the step's processes outlived the SIGKILLed mkrelease by 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	left := func() []string {
		a, _ := filepath.Glob(filepath.Join(dir, ".dist.tmp-*"))
		b, _ := filepath.Glob(filepath.Join(tmp, "mkrelease-build-*"))
		return append(a, b...)
	}
	if len(left()) != 2 {
		t.Fatalf("the killed build left %v, want its staging and scratch folders (else this test shows nothing)", left())
	}
	os.WriteFile(filepath.Join(dir, "release.toml"), []byte(cfg("cp x ${MKRELEASE_OUT}/x")), 0o644)
	for _, args := range [][]string{{"lock"}, {"build"}} {
		c := exec.Command(mkrelease, args...)
		c.Dir, c.Env = dir, env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		} else if args[0] == "build" && !strings.Contains(string(out), "removed a folder an interrupted run left") {
			t.Errorf("build does not say it removed the left-overs:\n%s", out)
		}
	}
	if l := left(); len(l) != 0 {
		t.Errorf("left-overs of the killed build are still there: %v", l)
	}
}
