package executor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a helper command run inside the sandbox.
func TestMain(m *testing.M) {
	switch os.Getenv("EXECUTOR_TEST_HELPER") {
	case "dial":
		c, err := net.DialTimeout("tcp", os.Getenv("EXECUTOR_TEST_ADDR"), 2*time.Second)
		if err != nil {
			fmt.Println("dial failed:", err)
			os.Exit(7)
		}
		c.Close()
		fmt.Println("connected")
		os.Exit(0)
	case "dialunix":
		c, err := net.DialTimeout("unix", os.Getenv("EXECUTOR_TEST_ADDR"), 2*time.Second)
		if err != nil {
			fmt.Println("dial failed:", err)
			os.Exit(7)
		}
		c.Close()
		fmt.Println("connected")
		os.Exit(0)
	case "runstep":
		// A stand-in for mkrelease: it runs one step, in the sandbox when
		// the host has one, until it is killed.
		d := os.Getenv("EXECUTOR_TEST_DIR")
		p := pathsIn(d)
		// Many sources make the sandbox's set-up long enough to be killed in.
		p.Sources = map[string]string{}
		for i := range 400 {
			src := filepath.Join(d, "src", fmt.Sprint(i))
			os.MkdirAll(src, 0o755)
			p.Sources[fmt.Sprint(i)] = src
		}
		_, err := New(context.Background(), Options{}).Run(context.Background(), action("sh", "-c", os.Getenv("EXECUTOR_TEST_SCRIPT")), p)
		fmt.Println(err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serve listens on addr until the test ends, accepting and closing every
// connection.
func serve(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
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
	return ln
}

func paths(t *testing.T) Paths {
	t.Helper()
	return pathsIn(t.TempDir())
}

// pathsIn makes a step's folders in d.
func pathsIn(d string) Paths {
	p := Paths{Workspace: filepath.Join(d, "ws"), Out: filepath.Join(d, "out"), Scratch: filepath.Join(d, "scratch")}
	for _, x := range []string{p.Workspace, p.Out} {
		os.MkdirAll(x, 0o755)
	}
	return p
}

// seen is where a step run by e sees the folders p (and the step cache
// folder cache): at the sandbox's fixed places, or where they are.
func seen(e *Executor, p Paths, cache string) (Paths, string) {
	if !e.Sandbox().Isolated {
		return p, cache
	}
	v := insideView(p, cache, nil)
	return v.inside, v.insideCache
}

func action(argv ...string) Action {
	return Action{Step: "s", Target: "t", Argv: argv, Env: Environment(EnvOptions{Epoch: 1793491200})}
}

func TestKeyIgnoresRunPathsAndPATH(t *testing.T) {
	a := action("go", "build", "-o", "${MKRELEASE_OUT}/x")
	a.Inputs = map[string]string{"source:x": "h1:abc"}
	k := a.Key()
	b := a
	b.Env = Environment(EnvOptions{Epoch: 1793491200})
	b.Env["PATH"] = "/somewhere/else"
	b.Env["GOCACHE"] = "/other/cache"
	b.Cache = "/other/step-cache"
	if b.Key() != k {
		t.Error("key depends on PATH, GOCACHE or the step's cache folder")
	}
	for name, change := range map[string]func(*Action){
		"argv":   func(a *Action) { a.Argv = append([]string{}, "go", "vet") },
		"env":    func(a *Action) { a.Env = Environment(EnvOptions{Epoch: 1793491201}) },
		"input":  func(a *Action) { a.Inputs = map[string]string{"source:x": "h1:abd"} },
		"dir":    func(a *Action) { a.Dir = "sub" },
		"output": func(a *Action) { a.Outputs = []string{"x"} },
	} {
		c := a
		change(&c)
		if c.Key() == k {
			t.Errorf("key ignores a change of %s", name)
		}
	}
}

func TestEnvironmentIsSealed(t *testing.T) {
	t.Setenv("MKRELEASE_TEST_SECRET", "leak")
	e := New(context.Background(), Options{})
	hostPaths := paths(t)
	res, err := e.Run(context.Background(), action("sh", "-c", "env; umask"), hostPaths)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := seen(e, hostPaths, "")
	log := string(res.Log)
	for _, want := range []string{"TZ=UTC", "LC_ALL=C.UTF-8", "SOURCE_DATE_EPOCH=1793491200", "HOME=" + p.Scratch + "/home",
		"MKRELEASE_OUT=" + p.Out, "-trimpath -buildvcs=false", "0022"} {
		if !strings.Contains(log, want) {
			t.Errorf("environment lacks %q:\n%s", want, log)
		}
	}
	// The C flags are the path mapping alone: no -O2 -g of mkrelease's.
	lines := strings.Split(log, "\n")
	for _, want := range []string{"CFLAGS", "CXXFLAGS"} {
		if line := want + "=-ffile-prefix-map=" + p.Workspace + "=. -gno-record-gcc-switches"; !slices.Contains(lines, line) {
			t.Errorf("environment lacks the line %q:\n%s", line, log)
		}
	}
	for _, line := range strings.Split(log, "\n") {
		// CGO_CFLAGS enters Go build IDs: a per-run path there makes
		// c-shared libraries differ between workspaces.
		if strings.HasPrefix(line, "CGO_") && (strings.Contains(line, p.Workspace) || strings.Contains(line, hostPaths.Workspace)) {
			t.Errorf("per-run path in %s", line)
		}
	}
	if strings.Contains(log, "leak") || strings.Contains(log, "@SCRATCH@") {
		t.Errorf("host variable or placeholder leaked:\n%s", log)
	}
}

func TestPassEnvNeverPassesMkreleaseSecrets(t *testing.T) {
	t.Setenv("MKRELEASE_KEY_PASSWORD", "s3cret")
	t.Setenv("MKRELEASE_TEST_PASSED", "yes")
	env := Environment(EnvOptions{Epoch: 1, PassEnv: []string{"MKRELEASE_KEY_PASSWORD", "MKRELEASE_TEST_PASSED", "HOME"}})
	for _, k := range []string{"MKRELEASE_KEY_PASSWORD", "MKRELEASE_TEST_PASSED"} {
		if _, ok := env[k]; ok {
			t.Errorf("pass_env passed %s into a step", k)
		}
	}
}

func TestNetworkIsCutOff(t *testing.T) {
	e := New(context.Background(), Options{})
	if !e.Sandbox().Network {
		t.Skipf("no network namespace here: %s", e.Sandbox().Reason)
	}
	ln := serve(t, "tcp", "127.0.0.1:0")
	exe, _ := os.Executable()
	a := action(exe)
	a.Tools = []string{exe} // the sandbox shows a toolchain's folder
	a.Env["EXECUTOR_TEST_HELPER"] = "dial"
	a.Env["EXECUTOR_TEST_ADDR"] = ln.Addr().String()
	_, err := e.Run(context.Background(), a, paths(t))
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("dialing the host from a step: %v, want a StepError", err)
	}
	if !strings.Contains(se.Tail, "dial failed") || !strings.Contains(err.Error(), "step s [t]") {
		t.Errorf("error = %v", err)
	}
	// The same helper outside the sandbox does connect: the test can fail.
	out, err := runHelperOnHost(exe, ln.Addr().String())
	if err != nil || !strings.Contains(out, "connected") {
		t.Fatalf("helper could not connect on the host either (%v: %s): the test proves nothing", err, out)
	}
}

func TestFailureCarriesTail(t *testing.T) {
	e := New(context.Background(), Options{})
	_, err := e.Run(context.Background(), action("sh", "-c", "for i in $(seq 1 100); do echo line $i; done; echo boom >&2; exit 3"), paths(t))
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(se.Tail, "boom") || !strings.Contains(se.Tail, "line 100") || strings.Contains(se.Tail, "line 1\n") {
		t.Errorf("tail = %q", se.Tail)
	}
	if se.ExitCode() != 1 {
		t.Errorf("exit code %d", se.ExitCode())
	}
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	e := New(context.Background(), Options{})
	p := paths(t)
	a := action("sh", "-c", "(sleep 30; touch ${MKRELEASE_OUT}/late) & wait")
	a.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := e.Run(context.Background(), a, p)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want timeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("run took %v after a 300ms timeout", d)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"OUT": "/o", "V": "1.0"}
	for in, want := range map[string]string{
		"${OUT}/x":        "/o/x",
		"-X a.V=${V}":     "-X a.V=1.0",
		"$OUT ${NOPE} $$": "$OUT ${NOPE} $$",
		"${OUT":           "${OUT",
		"${V}${V}":        "1.01.0",
	} {
		if got := Expand(in, env); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEnvironmentExpandsExtra checks that a target's or step's variable
// may name the step's own folders and sources, which stay placeholders
// (so the key holds no per-run path), once, and that ToolPath goes first on
// PATH.
func TestEnvironmentExpandsExtra(t *testing.T) {
	t.Setenv("PATH", "/usr/bin:/bin")
	env := Environment(EnvOptions{Epoch: 1, Uses: []string{"sdk"}, ToolPath: []string{"/p/.toolchains/zig"}, Extra: map[string]string{
		"ZIG_GLOBAL_CACHE_DIR": "${TMPDIR}/zig-cache",
		"CGO_LDFLAGS":          "-F${MKRELEASE_SOURCE_SDK}/Frameworks",
		"CFLAGS":               "-O1 -I${HOME}/include",
		"ONCE":                 "${ZIG_GLOBAL_CACHE_DIR}",
		"LITERAL":              "$HOME ${NOT_SET}",
	}})
	for k, want := range map[string]string{
		"ZIG_GLOBAL_CACHE_DIR": ScratchPlaceholder + "/tmp/zig-cache",
		"CGO_LDFLAGS":          "-F" + SourcePlaceholder("sdk") + "/Frameworks",
		"ONCE":                 "${TMPDIR}/zig-cache",
		"LITERAL":              "$HOME ${NOT_SET}",
		"PATH":                 "/p/.toolchains/zig" + string(os.PathListSeparator) + "/usr/bin:/bin",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if want := "-O1 -I" + ScratchPlaceholder + "/home/include -ffile-prefix-map=" + WorkspacePlaceholder + "=. -ffile-prefix-map=" +
		SourcePlaceholder("sdk") + "=sdk -gno-record-gcc-switches"; env["CFLAGS"] != want {
		t.Errorf("CFLAGS = %q, want %q", env["CFLAGS"], want)
	}
}

func TestSearchPath(t *testing.T) {
	sep := string(os.PathListSeparator)
	for _, tc := range []struct {
		dirs       []string
		path, want string
	}{
		{nil, "/usr/bin", "/usr/bin"},
		{[]string{"/a"}, "", "/a"},
		{[]string{"/a", "/b"}, "/usr/bin", "/a" + sep + "/b" + sep + "/usr/bin"},
	} {
		if got := SearchPath(tc.dirs, tc.path); got != tc.want {
			t.Errorf("SearchPath(%q, %q) = %q, want %q", tc.dirs, tc.path, got, tc.want)
		}
	}
}

// TestStepCache: $MKRELEASE_STEP_CACHE is the action's Cache, kept from one
// run to the next (what a run writes there, the next one finds); without a
// Cache it is a folder of the run's scratch. A variable naming a folder below it is resolved at run
// time and enters the key with the placeholder, the same on every machine.
func TestStepCache(t *testing.T) {
	e := New(context.Background(), Options{})
	cache := filepath.Join(t.TempDir(), "steps", "t", "s")
	a := Action{Step: "s", Target: "t", Cache: cache, Env: Environment(EnvOptions{Epoch: 1793491200,
		Extra: map[string]string{"ZIG_GLOBAL_CACHE_DIR": "${MKRELEASE_STEP_CACHE}/zig"}})}
	if got := a.Env["ZIG_GLOBAL_CACHE_DIR"]; got != CachePlaceholder+"/zig" {
		t.Fatalf("ZIG_GLOBAL_CACHE_DIR = %q before the run, want the placeholder %q", got, CachePlaceholder+"/zig")
	}
	a.Argv = []string{"sh", "-c", `echo "$MKRELEASE_STEP_CACHE $ZIG_GLOBAL_CACHE_DIR"; cat "$MKRELEASE_STEP_CACHE/runs" 2>/dev/null; echo run >> "$MKRELEASE_STEP_CACHE/runs"`}
	for run, wantRuns := range []string{"", "run\n"} {
		p := paths(t)
		res, err := e.Run(context.Background(), a, p)
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, res.Log)
		}
		_, c := seen(e, p, cache)
		want := c + " " + c + "/zig\n" + wantRuns
		if string(res.Log) != want {
			t.Errorf("run %d printed %q, want %q", run, res.Log, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(cache, "runs")); err != nil || string(b) != "run\nrun\n" {
		t.Errorf("the step cache holds %q %v after two runs", b, err)
	}

	a.Cache = ""
	p := paths(t)
	res, err := e.Run(context.Background(), a, p)
	if err != nil {
		t.Fatalf("without a Cache: %v\n%s", err, res.Log)
	}
	if sp, c := seen(e, p, filepath.Join(p.Scratch, "cache")); string(res.Log) != c+" "+c+"/zig\n" || !strings.HasPrefix(c, sp.Scratch+"/") && c != sp.Scratch+"/cache" && !e.Sandbox().Isolated {
		want := c + " " + c + "/zig\n"
		t.Errorf("without a Cache the step printed %q, want %q (a folder of its scratch)", res.Log, want)
	}
}
