package provenance_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mkrelease/mkrelease/provenance"
)

func TestStatementsListsTheReleaseProvenanceOnly(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"demo-1.0.intoto.jsonl",
		"demo-1.0.intoto.jsonl.sha256",
		"demo-1.0.sigstore.json",
		"demo-1.0.vsa.intoto.jsonl",
		"demo-1.0-verifier-evidence-linux.intoto.jsonl",
		"demo-1.0-verifier-evidence-linux.v2.intoto.jsonl",
		"demo-1.0-verifier-evidence-linux.tar.gz",
		"demo-1.0.spdx.json",
		"other-2.0.intoto.jsonl",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := provenance.Statements(dir)
	want := []string{filepath.Join(dir, "demo-1.0.intoto.jsonl"), filepath.Join(dir, "other-2.0.intoto.jsonl")}
	if !slices.Equal(got, want) {
		t.Errorf("Statements = %q, want %q", got, want)
	}
	if got := provenance.Statements(filepath.Join(dir, "missing")); got != nil {
		t.Errorf("Statements of a missing folder = %q, want none", got)
	}
}
