package channel

import (
	"bytes"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mkrelease/mkrelease/internal/testhook"
)

// Fixtures a crash test starts from.
const (
	// fixtureHistory: 0.1.0 and 0.2.0 published (generations 1 and 2),
	// plus what earlier killed publishes left: the temporary link, a
	// temporary generation, a complete generation never switched to and
	// a generation half collected.
	fixtureHistory = "history"
	// fixtureEmptyDir: DEST is an empty folder.
	fixtureEmptyDir = "empty-dir"
)

// hookPoints are every testhook.Crash point of Publish, in the order a
// publish of 0.3.0 reaches them, with the fixture that reaches it and
// whether a publish killed there has already switched DEST to the new
// state.
var hookPoints = []struct {
	point    string
	fixture  string
	switched bool
}{
	{"publish/locked", fixtureHistory, false},
	{"cleanup/removed-link", fixtureHistory, false},
	{"cleanup/removed", fixtureHistory, false},
	{"cleanup/synced", fixtureHistory, false},
	{"stage/created", fixtureHistory, false},
	{"stage/linked", fixtureHistory, false},
	{"stage/copy-partial", fixtureHistory, false},
	{"stage/copied", fixtureHistory, false},
	{"stage/metadata", fixtureHistory, false},
	{"stage/simple-root", fixtureHistory, false},
	{"stage/simple-project", fixtureHistory, false},
	{"stage/find-links", fixtureHistory, false},
	{"stage/index", fixtureHistory, false},
	{"stage/state", fixtureHistory, false},
	{"stage/signed", fixtureHistory, false},
	{"stage/synced", fixtureHistory, false},
	{"stage/renamed", fixtureHistory, false},
	{"stage/synced-generations", fixtureHistory, false},
	{"switch/link-created", fixtureHistory, false},
	{"switch/removed-empty-dest", fixtureEmptyDir, false},
	{"switch/before-rename", fixtureHistory, false},
	{"switch/renamed", fixtureHistory, true},
	{"switch/synced", fixtureHistory, true},
	{"gc/moved-aside", fixtureHistory, true},
	{"gc/removed", fixtureHistory, true},
	{"gc/synced", fixtureHistory, true},
	{"publish/done", fixtureHistory, true},
}

// TestHookPointsExist checks that hookPoints lists exactly the
// testhook.Crash calls of the package, each a distinct call site, so the
// crash test can neither miss a point nor test a stale name.
func TestHookPointsExist(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	inCode := map[string]string{} // point -> position
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Crash" {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "testhook" {
				return true
			}
			pos := fset.Position(call.Pos()).String()
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s: testhook.Crash with a point that is not a string literal", pos)
				return true
			}
			name, _ := strconv.Unquote(lit.Value)
			if prev, dup := inCode[name]; dup {
				t.Errorf("hook point %s is used at %s and %s; each place needs its own name", name, prev, pos)
			}
			inCode[name] = pos
			return true
		})
	}
	listed := map[string]bool{}
	for _, h := range hookPoints {
		if listed[h.point] {
			t.Errorf("hook point %s listed twice", h.point)
		}
		listed[h.point] = true
		if _, ok := inCode[h.point]; !ok {
			t.Errorf("hook point %s is listed but no testhook.Crash names it", h.point)
		}
	}
	for name, pos := range inCode {
		if !listed[name] {
			t.Errorf("%s: hook point %s is not in hookPoints: the crash test does not cover it", pos, name)
		}
	}
	if len(inCode) < 20 {
		t.Errorf("%d hook points, want at least 20", len(inCode))
	}
}

// buildCrashBinary builds internal/crashtest with the test hooks compiled in.
func buildCrashBinary(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if root := os.Getenv("GOROOT"); root != "" {
			goBin = filepath.Join(root, "bin", "go")
		}
	}
	if goBin == "" {
		t.Fatal("the crash test builds a helper binary and needs the go command on PATH (or GOROOT set)")
	}
	bin := filepath.Join(t.TempDir(), "crashtest")
	cmd := exec.Command(goBin, "build", "-tags", "mkrelease_testhooks", "-o", bin, "./internal/crashtest")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the crash helper: %v\n%s", err, out)
	}
	return bin
}

// TestCrashSafety kills a publish of 0.3.0 at every hook point and checks
// that the channel shows exactly the old or exactly the new state, passes
// Verify, and that the next publish succeeds and removes every leftover.
func TestCrashSafety(t *testing.T) {
	bin := buildCrashBinary(t)
	fixtures := map[string]string{}
	// history: two generations, then leftovers of killed publishes.
	{
		parent := filepath.Join(t.TempDir(), "history")
		dest := filepath.Join(parent, "ch")
		mustPublish(t, dest, release(t, "0.1.0", ""))
		mustPublish(t, dest, release(t, "0.2.0", ""))
		gens := filepath.Join(parent, ".ch.generations")
		must(t, os.Symlink(".ch.generations/g-000009", filepath.Join(parent, ".ch.link-tmp")))
		for _, d := range []string{".g-000003.tmp-1234/releases", "g-000007/releases", ".trash-g-000001/simple"} {
			must(t, os.MkdirAll(filepath.Join(gens, d), 0o755))
			must(t, os.WriteFile(filepath.Join(gens, d, "partial"), []byte("x"), 0o644))
		}
		fixtures[fixtureHistory] = parent
	}
	{
		parent := filepath.Join(t.TempDir(), "empty")
		must(t, os.MkdirAll(filepath.Join(parent, "ch"), 0o755))
		fixtures[fixtureEmptyDir] = parent
	}
	old := map[string][]string{fixtureHistory: {"0.1.0", "0.2.0"}, fixtureEmptyDir: {}}
	r := release(t, "0.3.0", "")

	for _, h := range hookPoints {
		t.Run(strings.ReplaceAll(h.point, "/", "-"), func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "p")
			copyTree(t, fixtures[h.fixture], parent)
			dest := filepath.Join(parent, "ch")
			oldVersions := old[h.fixture]
			newVersions := append(slices.Clone(oldVersions), "0.3.0")

			// The child must die by SIGKILL at exactly this point.
			cmd := exec.Command(bin, append([]string{dest, r.Project, r.Version}, r.Assets...)...)
			cmd.Env = append(os.Environ(), "MKRELEASE_TEST_CRASH_AT="+h.point)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the publish was not killed at %s: %v\nstderr: %s", h.point, err, stderr.String())
			}
			ws, ok := exit.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the publish ended with %v, not SIGKILL at %s\nstderr: %s", err, h.point, stderr.String())
			}
			if !strings.Contains(stderr.String(), testhook.CrashMarker+h.point+"\n") {
				t.Fatalf("the publish was killed, but not at %s: stderr %q", h.point, stderr.String())
			}

			// Exactly the old or the new state, as the point says.
			got := versions(t, dest)
			want := oldVersions
			if h.switched {
				want = newVersions
			}
			if !slices.Equal(got, want) {
				t.Fatalf("after a kill at %s the channel shows %v, want %v (old %v, new %v)", h.point, got, want, oldVersions, newVersions)
			}
			if len(got) > 0 {
				mustVerify(t, dest)
			}

			// The next publish completes the job and removes every leftover.
			res, err := Publish(context.Background(), dest, r)
			if err != nil {
				t.Fatalf("publish after a kill at %s: %v", h.point, err)
			}
			if res.NoOp != h.switched {
				t.Errorf("NoOp = %v after a kill at %s", res.NoOp, h.point)
			}
			if got := versions(t, dest); !slices.Equal(got, newVersions) {
				t.Errorf("versions %v, want %v", got, newVersions)
			}
			rep := mustVerify(t, dest)
			if len(rep.Leftovers) != 0 {
				t.Errorf("leftovers after the next publish: %v", rep.Leftovers)
			}
			if got, want := listDir(t, parent), []string{".ch.generations", ".ch.lock", "ch"}; !slices.Equal(got, want) {
				t.Errorf("DEST's folder holds %v, want %v", got, want)
			}
			wantGens := []string{"g-000002", "g-000003"}
			if h.fixture == fixtureEmptyDir {
				wantGens = []string{"g-000001"}
			}
			if got := listDir(t, filepath.Join(parent, ".ch.generations")); !slices.Equal(got, wantGens) {
				t.Errorf("generations %v, want %v", got, wantGens)
			}
		})
	}
}
