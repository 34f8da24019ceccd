package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
	"github.com/mkrelease/mkrelease/release"
)

// TestStepCachesDoNotOutliveARun: what a step writes into its Go build
// cache or its tools' cache folder is gone at its next run, whatever the
// cache folder, so a hostile build (a commit since reverted) cannot plant
// a compiled package in a later build of the genuine sources. The control
// gives the same action one persistent cache, as steps had before: the
// second run finds what the first planted.
func TestStepCachesDoNotOutliveARun(t *testing.T) {
	f := newFakeToolchain(t)
	f.c.Build.Steps[0].Run = []string{"sh", "-c", `mkdir -p "$GOCACHE"; cat "$GOCACHE/planted" "$MKRELEASE_STEP_CACHE/planted" 2>/dev/null; ` +
		`echo TROJAN > "$GOCACHE/planted" && echo TROJAN > "$MKRELEASE_STEP_CACHE/planted" && : > "$MKRELEASE_OUT/x"`}
	exe := executor.New(context.Background(), executor.Options{})
	tcs, err := Toolchains(context.Background(), f.c, digestmemo.Memo{}, exe)
	if err != nil {
		t.Fatal(err)
	}
	r := &release.Release{Config: f.c, Epoch: 1793491200, CacheDir: t.TempDir(),
		Found: &lock.Lock{Sources: []lock.Source{{Name: "up", Tree: "h1:abc"}}, Toolchains: tcs}}
	persistent := t.TempDir()
	for _, c := range []struct {
		name    string
		shared  bool // the control: one persistent cache for both runs
		planted bool
	}{
		{"a run's own caches", false, false},
		{"control: a persistent cache", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := Action(r, f.c.Targets[0], f.c.Build.Steps[0], exe.Sandbox().Level())
			if c.shared {
				a.Env["GOCACHE"] = filepath.Join(persistent, "go")
				a.Caches, a.Cache = []string{a.Env["GOCACHE"]}, filepath.Join(persistent, "step")
			}
			var second string
			for run := range 2 {
				d := t.TempDir()
				p := executor.Paths{Workspace: filepath.Join(d, "ws"), Out: filepath.Join(d, "out"), Scratch: filepath.Join(d, "scratch")}
				for _, dir := range []string{p.Workspace, p.Out} {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				res, err := exe.Run(context.Background(), a, p)
				if err != nil {
					t.Fatalf("run %d: %v\n%s", run, err, res.Log)
				}
				second = string(res.Log)
			}
			if got := strings.Count(second, "TROJAN"); (got == 2) != c.planted || got == 1 {
				t.Errorf("the second run found %d planted cache entries (want %v):\n%s", got, c.planted, second)
			}
		})
	}
}
