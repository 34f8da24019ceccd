package executor

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The path-mapping flags the executor adds for a step that uses no further
// source.
const mapFlags = "-ffile-prefix-map=" + WorkspacePlaceholder + "=. -gno-record-gcc-switches"

func TestCompilerFlags(t *testing.T) {
	for _, tc := range []struct {
		name                string
		extra               map[string]string
		uses                []string
		cflags, cxxflags    string
		otherKey, otherWant string
	}{
		{name: "none set: the mapping alone, no -O2 -g of ours",
			cflags: mapFlags, cxxflags: mapFlags},
		{name: "user CFLAGS kept, mapping appended",
			extra:  map[string]string{"CFLAGS": "-O3 -march=x86-64-v2 -DNDEBUG"},
			cflags: "-O3 -march=x86-64-v2 -DNDEBUG " + mapFlags, cxxflags: mapFlags},
		{name: "user CXXFLAGS kept, CFLAGS the mapping alone",
			extra:  map[string]string{"CXXFLAGS": "-O2 -std=c++17"},
			cflags: mapFlags, cxxflags: "-O2 -std=c++17 " + mapFlags},
		{name: "an empty CFLAGS is the mapping alone",
			extra:  map[string]string{"CFLAGS": ""},
			cflags: mapFlags, cxxflags: mapFlags},
		{name: "a further source is mapped to its name",
			extra: map[string]string{"CFLAGS": "-Os"}, uses: []string{"sdk"},
			cflags:   "-Os -ffile-prefix-map=" + WorkspacePlaceholder + "=. -ffile-prefix-map=" + SourcePlaceholder("sdk") + "=sdk -gno-record-gcc-switches",
			cxxflags: "-ffile-prefix-map=" + WorkspacePlaceholder + "=. -ffile-prefix-map=" + SourcePlaceholder("sdk") + "=sdk -gno-record-gcc-switches"},
		{name: "cgo's flags are the user's alone (no per-run path)",
			extra:  map[string]string{"CGO_CFLAGS": "-O2 -g"},
			cflags: mapFlags, cxxflags: mapFlags, otherKey: "CGO_CFLAGS", otherWant: "-O2 -g"},
		{name: "no CGO_CFLAGS of ours",
			cflags: mapFlags, cxxflags: mapFlags, otherKey: "CGO_CFLAGS", otherWant: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Environment(EnvOptions{Epoch: 1, Extra: tc.extra, Uses: tc.uses})
			if env["CFLAGS"] != tc.cflags {
				t.Errorf("CFLAGS = %q, want %q", env["CFLAGS"], tc.cflags)
			}
			if env["CXXFLAGS"] != tc.cxxflags {
				t.Errorf("CXXFLAGS = %q, want %q", env["CXXFLAGS"], tc.cxxflags)
			}
			if tc.otherKey != "" && env[tc.otherKey] != tc.otherWant {
				t.Errorf("%s = %q, want %q", tc.otherKey, env[tc.otherKey], tc.otherWant)
			}
		})
	}
}

// makefile is an upstream Makefile with a default of its own for CFLAGS;
// __FILE__ is absolute (the rule names $(CURDIR)), and with -g the object
// records the folder it was compiled in.
const makefile = `CFLAGS ?= -O2
hello.o: hello.c
	$(CC) $(CFLAGS) -c -o $(MKRELEASE_OUT)/hello.o $(CURDIR)/hello.c
`

const helloC = `const char *where(void) { return __FILE__; }
int triple(int x) { return 3 * x; }
`

// TestCompilerFlagsWithMake builds a small C project with the real C
// compiler and make, in two workspaces of different names: with the
// user's CFLAGS (debug info included) the objects are identical and hold
// neither workspace, and a Makefile's own `CFLAGS ?=` default gives way to
// the exported CFLAGS, as docs/building.md ("C and C++ flags") says.
func TestCompilerFlagsWithMake(t *testing.T) {
	for _, tool := range []string{"cc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	e := New(context.Background(), Options{})
	// build returns the folders as the step saw them, its log and the
	// object it compiled.
	build := func(t *testing.T, wsName string, extra map[string]string, argv ...string) (Paths, string, []byte) {
		t.Helper()
		d := t.TempDir()
		p := Paths{Workspace: filepath.Join(d, wsName), Out: filepath.Join(d, "out"), Scratch: filepath.Join(d, "scratch")}
		for _, x := range []string{p.Workspace, p.Out} {
			if err := os.MkdirAll(x, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, content := range map[string]string{"Makefile": makefile, "hello.c": helloC} {
			if err := os.WriteFile(filepath.Join(p.Workspace, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		a := Action{Step: "s", Target: "t", Argv: argv, Env: Environment(EnvOptions{Epoch: 1793491200, Extra: extra})}
		res, err := e.Run(context.Background(), a, p)
		if err != nil {
			t.Fatalf("make: %v", err)
		}
		obj, err := os.ReadFile(filepath.Join(p.Out, "hello.o"))
		if err != nil {
			t.Fatal(err)
		}
		seenPaths, _ := seen(e, p, "")
		return seenPaths, string(res.Log), obj
	}

	t.Run("user CFLAGS with debug info: path-independent", func(t *testing.T) {
		user := map[string]string{"CFLAGS": "-O2 -g"}
		p1, log, obj1 := build(t, "ws", user, "make")
		p2, _, obj2 := build(t, "a-much-longer-workspace-name", user, "make")
		if want := "cc -O2 -g -ffile-prefix-map=" + p1.Workspace + "=. -gno-record-gcc-switches -c"; !strings.Contains(log, want) {
			t.Errorf("make ran no %q:\n%s", want, log)
		}
		if !bytes.Contains(obj1, []byte(".debug_info")) {
			t.Fatal("hello.o has no debug info: the test proves nothing")
		}
		for _, p := range []Paths{p1, p2} {
			if bytes.Contains(obj1, []byte(p.Workspace)) || bytes.Contains(obj2, []byte(p.Workspace)) {
				t.Errorf("an object holds the workspace %s", p.Workspace)
			}
		}
		if !bytes.Equal(obj1, obj2) {
			t.Error("the objects built in two workspaces differ")
		}
	})

	t.Run("control: without the mapping the workspace leaks", func(t *testing.T) {
		// A command-line CFLAGS replaces the environment's, mapping
		// included: this is what the check above would catch.
		p, _, obj := build(t, "ws", nil, "make", "CFLAGS=-O2 -g")
		if !bytes.Contains(obj, []byte(p.Workspace)) {
			t.Fatal("an object compiled without the mapping does not hold its workspace: the test above proves nothing")
		}
	})

	t.Run("no CFLAGS in release.toml: the mapping alone replaces the Makefile default", func(t *testing.T) {
		p, log, _ := build(t, "ws", nil, "make")
		want := "cc -ffile-prefix-map=" + p.Workspace + "=. -gno-record-gcc-switches -c"
		if !strings.Contains(log, want) || strings.Contains(log, "-O2") || strings.Contains(log, " -g ") {
			t.Errorf("make ran not exactly %q:\n%s", want, log)
		}
	})
}
