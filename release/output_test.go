package release

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/artifact"
)

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, files map[string]string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(p, 0o755)
		for f, c := range files {
			os.WriteFile(filepath.Join(p, f), []byte(c), 0o644)
		}
		return p
	}
	ok := []string{filepath.Join(dir, "absent"), mk("empty", nil), mk("earlier", map[string]string{"manifest.json": `{"schema":"` + ManifestSchema + `"}`})}
	for _, p := range ok {
		if err := CheckOutput(p); err != nil {
			t.Errorf("CheckOutput(%s) = %v", p, err)
		}
	}
	bad := []string{mk("notes", map[string]string{"notes.txt": "mine"}), mk("other", map[string]string{"manifest.json": `{"schema":"x"}`})}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	bad = append(bad, filepath.Join(dir, "file"))
	for _, p := range bad {
		var oe *OutputError
		if err := CheckOutput(p); !errors.As(err, &oe) || oe.ExitCode() != 2 {
			t.Errorf("CheckOutput(%s) = %v, want an OutputError", p, err)
		}
	}
}

// The manifest holds no run-specific paths and is byte-stable.
func TestManifestIsStable(t *testing.T) {
	build := func(stage string) []byte {
		r := &Release{
			Config:  &config.Config{Project: config.Project{NormalizedName: "demo", Version: "1.0"}, SHA256: "aa", Targets: []config.Target{{Name: "t1", Env: map[string]string{"GOOS": "linux", "CC": "gcc"}}}},
			Lock:    &lock.Lock{SHA256: "bb"},
			Targets: []config.Target{{Name: "t1", Env: map[string]string{"GOOS": "linux", "CC": "gcc"}}},
			Epoch:   1793491200, Stage: stage,
			Found: &lock.Lock{Sources: []lock.Source{{Name: "s", Kind: "local", Location: "src", Tree: "h1:x", Files: []string{"should not appear"}}}},
		}
		r.Artifacts.Add(artifact.Artifact{Kind: artifact.Binary, Path: "build/t1/b", Target: "t1", SHA256: "cc", Size: 1},
			artifact.Artifact{Kind: artifact.Binary, Path: "build/t1/a", Target: "t1", SHA256: "dd", Size: 2})
		if err := (ManifestStage{}).Run(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(stage, "manifest.json"))
		return b
	}
	a, b := build(t.TempDir()), build(t.TempDir())
	if string(a) != string(b) {
		t.Errorf("manifest differs between runs:\n%s\n%s", a, b)
	}
	var m Manifest
	if err := json.Unmarshal(a, &m); err != nil {
		t.Fatal(err)
	}
	if m.Targets[0].Outputs[0].Path != "build/t1/a" || a[len(a)-1] != '\n' {
		t.Errorf("outputs not sorted or no trailing newline: %s", a)
	}
	if strings.Contains(string(a), "should not appear") || strings.Contains(string(a), os.TempDir()) {
		t.Errorf("manifest leaks file lists or temporary paths:\n%s", a)
	}
}
