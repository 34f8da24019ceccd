package cachetrim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Files removes exactly the old regular files the patterns and ours pick,
// and the folders below root that leaves empty.
func TestFiles(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	const maxUnused = 5 * 24 * time.Hour
	root := filepath.Join(t.TempDir(), "cache")
	files := []struct {
		name string
		age  time.Duration
		kept bool
	}{
		{"old-memo", 6 * 24 * time.Hour, false},
		{"young-memo", time.Hour, true},
		{"just-within", maxUnused, true},
		{"tables/old-table", 30 * 24 * time.Hour, false},
		{"tables/young-table", time.Hour, true},
		{"ab/old.json", 9 * 24 * time.Hour, false},     // its folder goes with it
		{"cd/not-ours.json", 9 * 24 * time.Hour, true}, // ours refuses it
		{"deep/er/old", 9 * 24 * time.Hour, true},      // no pattern reaches it
	}
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
			t.Fatal(err)
		}
	}
	// An old folder is no file to remove.
	if err := os.Mkdir(filepath.Join(root, "old-folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(root, "old-folder"), now.Add(-90*24*time.Hour), now.Add(-90*24*time.Hour))
	ours := func(name string) bool { return !strings.Contains(name, "not-ours") }
	n, err := Files(root, []string{"*", "tables/*", "*/*.json"}, ours, now, maxUnused)
	if err != nil || n != 3 {
		t.Errorf("Files = %d, %v; want 3 removed", n, err)
	}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(f.name)))
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s: kept %v, want %v", f.name, kept, f.kept)
		}
	}
	for dir, kept := range map[string]bool{"ab": false, "tables": true, "cd": true, "old-folder": true, ".": true} {
		if _, err := os.Stat(filepath.Join(root, dir)); (err == nil) != kept {
			t.Errorf("folder %s: kept %v, want %v", dir, err == nil, kept)
		}
	}
	if n, err := Files(filepath.Join(root, "none"), []string{"*"}, nil, now, maxUnused); n != 0 || err != nil {
		t.Errorf("Files of no folder = %d, %v", n, err)
	}
}
