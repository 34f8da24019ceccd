package audit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/evidencetest"
)

// identityFindings are the findings of the evidence item's identity check.
func identityFindings(it Item) []string {
	var out []string
	for _, c := range it.Checks {
		if c.Name != runner.CheckIdentity {
			continue
		}
		for _, f := range c.Findings {
			out = append(out, f.File+": "+f.Msg)
		}
	}
	return out
}

// Evidence is checked against the exact wheels of its target's bundle,
// never against wheel files that happen to lie beside it: without a bundle
// that checks out, the identity check fails, naming the bundle, even when
// the wheels beside it are exactly the ones the run installed.
func TestEvidenceNeedsTheBundlesWheels(t *testing.T) {
	const unknown = "demo-1.0-t1.tar.gz: the wheels of the target's bundle are not known (it is not beside the evidence, or does not check out), so nothing shows which wheels the evidence is for: check the evidence beside its bundle"
	tests := []struct {
		name   string
		bundle []byte // the bundle beside the evidence; nil for none
	}{
		{"no bundle, the run's wheel beside it", nil},
		{"a bundle that does not check out", []byte("not a bundle")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			whl := writeWheel(t, dir, "demo-1.0-py3-none-any.whl", "Metadata-Version: 2.4\nName: demo\nVersion: 1.0\n")
			sha, _, err := checksum.File(filepath.Join(dir, whl))
			if err != nil {
				t.Fatal(err)
			}
			archive := evidencetest.Write(t, dir, "demo", "1.0", "t1", []store.FileDigest{{Name: whl, SHA256: sha}})
			if tt.bundle != nil {
				if err := os.WriteFile(filepath.Join(dir, dist.NamesOf("demo", "1.0").Bundle("t1")), tt.bundle, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// verify of the archive alone, and of the folder it is in.
			lone, err := Evidence(context.Background(), archive, Options{})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Paths(context.Background(), []string{dir}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var inFolder *Item
			for i, it := range rep.Items {
				if it.Kind == "evidence" {
					inFolder = &rep.Items[i]
				}
			}
			if inFolder == nil {
				t.Fatalf("verify of the folder audited no evidence: %+v", rep.Items)
			}
			for what, it := range map[string]Item{"the archive": lone, "the folder": *inFolder} {
				if got := identityFindings(it); len(got) != 1 || got[0] != unknown {
					t.Errorf("verify of %s: identity findings %q, want exactly %q", what, got, unknown)
				}
			}
		})
	}
}
