//go:build mkrelease_testhooks

package extract

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestExtractFileCounted: with the test hooks, ExtractFile counts one
// "extract" keyed by the archive's absolute path.
func TestExtractFileCounted(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	if err := os.WriteFile("a.tar", makeTar(t, file("x", "body")), 0o644); err != nil {
		t.Fatal(err)
	}
	counts := filepath.Join(t.TempDir(), "counts")
	t.Setenv("MKRELEASE_TEST_COUNT", counts)
	if _, err := ExtractFile(context.Background(), "a.tar", "out", Options{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(counts)
	if want := "extract\t" + filepath.Join(work, "a.tar") + "\n"; err != nil || string(data) != want {
		t.Errorf("counted %q (%v), want %q", data, err, want)
	}
}
