package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "two" || st.Mode().Perm() != 0o600 {
		t.Errorf("content %q mode %v", b, st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporaries left: %v", entries)
	}
}

func TestWriteNew(t *testing.T) {
	for _, tc := range []struct {
		name    string
		old     string // "" when the file does not exist
		wantErr bool
	}{
		{name: "new file", wantErr: false},
		{name: "existing file kept", old: "precious", wantErr: true},
		{name: "existing empty file kept", old: "\x00", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "key")
			if tc.old != "" {
				if err := os.WriteFile(p, []byte(tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteNew(p, []byte("secret"), 0o600)
			if tc.wantErr {
				if !errors.Is(err, fs.ErrExist) {
					t.Fatalf("WriteNew over an existing file: %v, want fs.ErrExist", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			want, wantMode := "secret", fs.FileMode(0o600)
			if tc.wantErr {
				want, wantMode = tc.old, 0o644
			}
			b, _ := os.ReadFile(p)
			st, _ := os.Stat(p)
			if string(b) != want || st.Mode().Perm() != wantMode {
				t.Errorf("content %q mode %v, want %q %v", b, st.Mode().Perm(), want, wantMode)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("temporaries left: %v", entries)
			}
		})
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "f"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	f.Abort() // idempotent
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("abort left %v", entries)
	}
	if err := f.Commit(); err == nil {
		t.Error("commit after abort succeeded")
	}
}

func TestReplaceDir(t *testing.T) {
	testReplaceDir(t, ReplaceDir)
}

// TestReplaceDirMovesAside takes the path of platforms and file systems
// that cannot exchange two folders (Windows): the result is the same.
func TestReplaceDirMovesAside(t *testing.T) {
	noExchange := func(a, b string) error { return errors.ErrUnsupported }
	testReplaceDir(t, func(staged, final string) error { return replaceDir(staged, final, noExchange) })
}

func testReplaceDir(t *testing.T, replace func(staged, final string) error) {
	t.Helper()
	parent := t.TempDir()
	final := filepath.Join(parent, "dist")
	for i, content := range []string{"first", "second"} {
		stage, err := TempDir(final)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(stage, "a"), []byte(content), 0o644)
		if i == 0 {
			os.WriteFile(filepath.Join(stage, "only-first"), nil, 0o644)
		}
		if err := replace(stage, final); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(final, "a"))
		if string(b) != content {
			t.Errorf("round %d: a = %q", i, b)
		}
	}
	if _, err := os.Stat(filepath.Join(final, "only-first")); err == nil {
		t.Error("the old folder's content survived the replacement")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("staging folders left: %v", entries)
	}
}
