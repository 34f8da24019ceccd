package actioncache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func putSample(t *testing.T) (*Cache, *Entry) {
	t.Helper()
	c := &Cache{Dir: t.TempDir()}
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "lib"), 0o755)
	os.WriteFile(filepath.Join(src, "tool"), []byte("#!/bin/sh\necho hi\n"), 0o700)
	os.WriteFile(filepath.Join(src, "lib", "x.so"), []byte("ELF..."), 0o600)
	e, err := c.Put(key, "build", "linux-x86_64", src, []string{"tool", "lib/x.so"}, []byte("log\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c, e
}

func TestPutRestore(t *testing.T) {
	c, e := putSample(t)
	if len(e.Outputs) != 2 || e.Outputs[0].Path != "lib/x.so" || e.Outputs[1].Mode != 0o755 || e.Outputs[0].Mode != 0o644 {
		t.Fatalf("entry = %+v", e)
	}
	dst := t.TempDir()
	got, err := c.Restore(key, dst)
	if err != nil {
		t.Fatal(err)
	}
	if got.Outputs[1].SHA256 != e.Outputs[1].SHA256 {
		t.Errorf("restored entry differs")
	}
	b, err := os.ReadFile(filepath.Join(dst, "tool"))
	if err != nil || !strings.Contains(string(b), "echo hi") {
		t.Errorf("restored tool: %q %v", b, err)
	}
	if st, _ := os.Stat(filepath.Join(dst, "tool")); st.Mode().Perm() != 0o755 {
		t.Errorf("tool mode %v", st.Mode())
	}
	if log, _ := c.Log(key); string(log) != "log\n" {
		t.Errorf("log = %q", log)
	}
}

func TestRestoreMiss(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	if _, err := c.Restore(key, t.TempDir()); !errors.Is(err, ErrMiss) {
		t.Errorf("Restore on empty cache = %v, want ErrMiss", err)
	}
}

// Every kind of damage is detected, the entry is removed, and nothing is
// left in the destination.
func TestRestoreRefusesDamage(t *testing.T) {
	damage := map[string]func(dir string){
		"flipped byte": func(dir string) {
			p := filepath.Join(dir, "out", "tool")
			b, _ := os.ReadFile(p)
			b[3] ^= 1
			os.WriteFile(p, b, 0o755)
		},
		"truncated output": func(dir string) { os.Truncate(filepath.Join(dir, "out", "lib", "x.so"), 2) },
		"missing output":   func(dir string) { os.Remove(filepath.Join(dir, "out", "tool")) },
		"garbled record":   func(dir string) { os.WriteFile(filepath.Join(dir, "entry.json"), []byte("{"), 0o644) },
		"record for another key": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "entry.json"))
			os.WriteFile(filepath.Join(dir, "entry.json"), []byte(strings.Replace(string(b), key, strings.Repeat("f", 64), 1)), 0o644)
		},
		"escaping path": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "entry.json"))
			os.WriteFile(filepath.Join(dir, "entry.json"), []byte(strings.Replace(string(b), `"tool"`, `"../../tool"`, 1)), 0o644)
		},
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			c, _ := putSample(t)
			fn(c.entryDir(key))
			dst := t.TempDir()
			_, err := c.Restore(key, dst)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("Restore = %v, want CorruptError", err)
			}
			if _, err := os.Stat(c.entryDir(key)); !os.IsNotExist(err) {
				t.Errorf("damaged entry still present")
			}
			left, _ := os.ReadDir(dst)
			var files []string
			filepath.WalkDir(dst, func(p string, d os.DirEntry, _ error) error {
				if !d.IsDir() {
					files = append(files, p)
				}
				return nil
			})
			if len(files) > 0 {
				t.Errorf("files left in destination: %v (%d entries)", files, len(left))
			}
			if _, err := c.Restore(key, dst); !errors.Is(err, ErrMiss) {
				t.Errorf("second Restore = %v, want ErrMiss", err)
			}
		})
	}
}

func TestPutLeavesNoTemporaries(t *testing.T) {
	c, _ := putSample(t)
	entries, _ := os.ReadDir(filepath.Dir(c.entryDir(key)))
	if len(entries) != 1 || entries[0].Name() != key {
		t.Errorf("cache shard holds %v", entries)
	}
	// Putting a missing output fails and leaves nothing.
	if _, err := c.Put(strings.Repeat("a", 64), "s", "t", t.TempDir(), []string{"nope"}, nil); err == nil {
		t.Error("Put of a missing output succeeded")
	}
	shard, _ := os.ReadDir(filepath.Join(c.Dir, "actions", "aa"))
	if len(shard) != 0 {
		t.Errorf("failed Put left %v", shard)
	}
}
