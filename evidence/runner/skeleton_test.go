package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/scaffold"
)

// TestInitSkeletonSpeaksTheProtocol runs the verifier skeleton `mkrelease
// init` writes, with the lanes of the release.toml it writes, through this
// package's own readers: the cases lane's lines are valid cases, and the
// crossover worker's protocol is read without a finding.
func TestInitSkeletonSpeaksTheProtocol(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	dir := t.TempDir()
	for name, data := range map[string]string{
		"Makefile":         "libdemo.so: demo.c\n",
		"demo/__init__.py": "ANSWER = 42\n",
		"site/placeholder": "",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := scaffold.Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := scaffold.Host{GOOS: "linux", GOARCH: "amd64", Pythons: []string{"3.12"}, Commit: strings.Repeat("a", 40)}
	files, err := scaffold.Files(p, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scaffold.Write(dir, files); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(filepath.Join(dir, "release.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Evidence.Lanes) != 2 {
		t.Fatalf("lanes %+v, want one cases and one crossover lane", cfg.Evidence.Lanes)
	}
	verifier := filepath.Join(dir, filepath.FromSlash(cfg.Evidence.Verifier))
	env := laneEnv{
		// The package is importable, as from the installed wheel; the
		// library is not installed.
		vars:   map[string]string{"PATH": os.Getenv("PATH"), "PYTHONPATH": dir, "HOME": dir},
		expand: map[string]string{"PYTHON": python, "VERIFIER": verifier},
		dir:    t.TempDir(),
		log:    t.Logf,
	}
	ctx := context.Background()

	cases, _, err := runCases(ctx, cfg.Evidence.Lanes[0], env, filepath.Join(t.TempDir(), "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]evidence.Case{}
	for _, c := range cases {
		got[c.ID] = c
	}
	if c := got["import/demo"]; c.Status != evidence.StatusPass {
		t.Errorf("import/demo: %+v, want PASS (all cases: %+v)", c, cases)
	}
	if c := got["library/demo/libdemo.so"]; c.Status != evidence.StatusFail || !strings.Contains(c.Message, "not installed") {
		t.Errorf("library/demo/libdemo.so: %+v, want FAIL: not installed", c)
	}
	if len(cases) != 2 {
		t.Errorf("cases %+v, want the two smoke cases and no lane error", cases)
	}

	l := cfg.Evidence.Lanes[1]
	l.Steps, l.Warmups = 3, 0
	ms, err := runCrossover(ctx, l, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 4 {
		t.Fatalf("%d measurements, want 4: %+v", len(ms), ms)
	}
	for _, m := range ms {
		if m.Outcome != evidence.OutcomeOK || len(m.Steps) != 3 || m.ResultSHA256 != ms[0].ResultSHA256 {
			t.Errorf("slot %d (%s): outcome %s %q, %d steps, result %s", m.Slot, m.Role, m.Outcome, m.Error, len(m.Steps), m.ResultSHA256)
		}
	}
}
