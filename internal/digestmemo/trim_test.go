package digestmemo

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Trim removes the memos and tables not written for maxUnused, and
// nothing else.
func TestTrim(t *testing.T) {
	dir := t.TempDir()
	m := Memo{Dir: filepath.Join(dir, "memo")}
	now := time.Now()
	old := now.Add(-48 * time.Hour)
	files := []struct {
		name string
		old  bool
	}{
		{"stale-memo", true}, {"fresh-memo", false},
		{"tables/stale-table", true}, {"tables/fresh-table", false},
	}
	for _, f := range files {
		p := filepath.Join(m.Dir, filepath.FromSlash(f.name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if f.old {
			os.Chtimes(p, old, old)
		}
	}
	n, err := m.Trim(now, 24*time.Hour)
	if err != nil || n != 2 {
		t.Fatalf("Trim = %d %v, want 2 removed", n, err)
	}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(m.Dir, filepath.FromSlash(f.name)))
		if kept := err == nil; kept == f.old {
			t.Errorf("%s: kept %v", f.name, kept)
		}
	}
	if _, err := os.Stat(filepath.Join(m.Dir, "tables")); err != nil {
		t.Error("Trim removed the tables folder")
	}
	if n, err := (Memo{}).Trim(now, 0); n != 0 || err != nil {
		t.Errorf("zero Memo: %d %v", n, err)
	}
}
