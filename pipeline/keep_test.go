package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

func TestKeepEvidence(t *testing.T) {
	signer, _, err := provenance.DevKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	names := dist.NamesOf("demo", "1.0")
	const wheel = "demo-1.0-py3-none-any.whl"
	wheelSHA := checksum.Bytes([]byte("wheel"))
	// previous writes an output folder holding evidence for target t1 of a
	// run that installed the wheel with digest sha.
	previous := func(t *testing.T, sha string) string {
		out := t.TempDir()
		archive := []byte("evidence archive")
		if err := os.WriteFile(filepath.Join(out, names.Evidence("t1")), archive, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := provenance.NewStatement("https://example.org/summary", []provenance.Subject{
			{Name: names.Evidence("t1"), SHA256: checksum.Bytes(archive)}, {Name: wheel, SHA256: sha}}, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		env, err := provenance.SignStatement(context.Background(), signer, st)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, names.EvidenceStatements("t1")), env, 0o644); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		evidence string // the wheel digest the evidence is for
		built    bool   // the build made t1's wheel
		target   string // the wheel's target: "" for a pure wheel every target holds
		targets  []string
		kept     bool
		log      string
	}{
		{"same wheels", wheelSHA, true, "t1", nil, true, "kept the verifier evidence"},
		{"changed wheel", checksum.Bytes([]byte("old wheel")), true, "t1", nil, false, "it is for other wheels: " + wheel + " was "},
		{"target not built", wheelSHA, false, "t1", nil, false, "this build made no wheels for target t1"},
		{"same pure wheel, target built", wheelSHA, true, "", []string{"t1"}, true, "kept the verifier evidence"},
		{"same pure wheel, only another target built", wheelSHA, true, "", []string{"t2"}, false, "this build made no wheels for target t1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			r := &release.Release{Config: &config.Config{Project: config.Project{NormalizedName: "demo", Version: "1.0"}},
				Out: previous(t, tc.evidence), Stage: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			for _, name := range tc.targets {
				r.Targets = append(r.Targets, config.Target{Name: name})
			}
			if tc.built {
				r.Artifacts.Add(dist.Artifact{Kind: dist.KindWheel, Path: wheel, Target: tc.target, SHA256: wheelSHA, Size: 5})
			}
			if err := (KeepEvidenceStage{}).Run(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{names.Evidence("t1"), names.EvidenceStatements("t1"), dist.Sidecar(names.Evidence("t1"))} {
				_, err := os.Stat(filepath.Join(r.Stage, f))
				if (err == nil) != tc.kept {
					t.Errorf("%s in the new folder: %v, want kept=%v", f, err, tc.kept)
				}
			}
			if !strings.Contains(logs.String(), tc.log) {
				t.Errorf("log lacks %q:\n%s", tc.log, logs.String())
			}
		})
	}
}
