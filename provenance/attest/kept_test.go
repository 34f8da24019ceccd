package attest

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

// TestKeptWhenNothingChanged: a rebuild whose statement would differ only
// in the run's facts keeps the release folder's signed provenance; any
// other difference, or a statement that does not verify with this build's
// key, is signed again.
func TestKeptWhenNothingChanged(t *testing.T) {
	dir := t.TempDir()
	signer, _, err := provenance.DevKey(filepath.Join(dir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := provenance.DevKey(filepath.Join(dir, "other"))
	sha := strings.Repeat("a", 64)
	wheel := dist.Artifact{Kind: dist.KindWheel, Path: "demo-1.0-py3-none-any.whl", SHA256: strings.Repeat("b", 64), Size: 1}
	names := dist.NamesOf("demo", "1.0")

	// build runs the stage into a fresh staging folder over out, the folder
	// a previous build left, and returns the statement written and whether
	// it was kept.
	build := func(t *testing.T, out string, s Stage, a dist.Artifact) ([]byte, bool) {
		t.Helper()
		stage := filepath.Join(dir, "stage-"+strings.ReplaceAll(t.Name(), "/", "-"))
		os.RemoveAll(stage)
		if err := os.MkdirAll(stage, 0o755); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		r := &release.Release{
			Config:  &config.Config{Dir: dir, SHA256: sha, Project: config.Project{NormalizedName: "demo", Version: "1.0"}},
			Lock:    &lock.Lock{SHA256: sha},
			Targets: []config.Target{{Name: "linux-x86_64"}},
			Out:     out, Stage: stage, Epoch: 1793491200,
			Logger: newTestLogger(&log),
		}
		r.Artifacts.Add(a)
		if s.Getenv == nil {
			s.Getenv = func(string) string { return "" }
		}
		s.Started = time.Now()
		if err := s.Run(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		env, err := os.ReadFile(filepath.Join(stage, names.Provenance()))
		if err != nil {
			t.Fatal(err)
		}
		// The folder the next build replaces is this one.
		os.RemoveAll(out)
		if err := os.Rename(stage, out); err != nil {
			t.Fatal(err)
		}
		return env, strings.Contains(log.String(), "provenance kept")
	}

	out := filepath.Join(dir, "dist")
	first, kept := build(t, out, Stage{Signer: signer}, wheel)
	if kept {
		t.Fatal("a first build kept a provenance it had none of")
	}
	again, kept := build(t, out, Stage{Signer: signer}, wheel)
	if !kept || !bytes.Equal(again, first) {
		t.Fatalf("a rebuild with nothing changed signed again (kept %v)", kept)
	}
	ci := func(run string) func(string) string {
		return func(k string) string {
			return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": run, "GITHUB_RUN_ATTEMPT": "1",
				"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"}[k]
		}
	}
	if _, kept := build(t, out, Stage{Signer: signer, Getenv: ci("7")}, wheel); kept {
		t.Fatal("a CI run kept the provenance of a local build")
	}
	if _, kept := build(t, out, Stage{Signer: signer, Getenv: ci("7")}, wheel); !kept {
		t.Fatal("the same CI run building again signed again")
	}
	for _, tc := range []struct {
		name   string
		base   Stage // the build that made the folder: a local one when zero
		stage  Stage
		change func(a *dist.Artifact)
		tamper func()
	}{
		{name: "a changed subject", stage: Stage{Signer: signer}, change: func(a *dist.Artifact) { a.SHA256 = strings.Repeat("c", 64) }},
		{name: "another key", stage: Stage{Signer: other}},
		{name: "a CI run after a local build", stage: Stage{Signer: signer, Getenv: ci("7")}},
		// The same builder (the workflow), another run: only the invocation id differs.
		{name: "a CI run of its own", base: Stage{Signer: signer, Getenv: ci("7")}, stage: Stage{Signer: signer, Getenv: ci("8")}},
		{name: "a damaged envelope", stage: Stage{Signer: signer}, tamper: func() {
			p := filepath.Join(out, names.Provenance())
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"payload":"`), []byte(`"payload":"x`), 1), 0o644)
		}},
		{name: "a bundle of another envelope", stage: Stage{Signer: signer}, tamper: func() {
			os.WriteFile(filepath.Join(out, names.ProvenanceBundle()), []byte(`{}`), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Start from a folder holding the base build's statement.
			base := tc.base
			if base.Signer == nil {
				base = Stage{Signer: signer}
			}
			build(t, out, base, wheel)
			a := wheel
			if tc.change != nil {
				tc.change(&a)
			}
			if tc.tamper != nil {
				tc.tamper()
			}
			got, kept := build(t, out, tc.stage, a)
			if kept {
				t.Errorf("kept the old provenance")
			}
			if _, err := verifyWith(tc.stage.Signer, got); err != nil {
				t.Errorf("the statement signed again does not verify: %v", err)
			}
		})
	}
}

func verifyWith(s provenance.Signer, env []byte) (*provenance.Result, error) {
	v, err := provenance.NewVerifier(s.Public())
	if err != nil {
		return nil, err
	}
	return v.Verify(env, provenance.WithoutArtifactsUnsafe())
}

// newTestLogger logs plain text lines into w.
func newTestLogger(w *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}
