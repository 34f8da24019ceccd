package platform

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

// A memo answers exactly what Inspect finds, for the content it was kept
// for and the inspector version it was kept by, and nothing else.
func TestMemo(t *testing.T) {
	var bins []string
	for _, p := range []string{"/bin/ls", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"} {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			bins = append(bins, real)
		}
	}
	if len(bins) == 0 {
		t.Skip("no system ELF binaries here")
	}
	dir := t.TempDir()
	m := Memo{Dir: filepath.Join(dir, "memo"), Version: checksum.Bytes([]byte("inspector one"))}
	for _, p := range bins {
		sha, _, err := checksum.File(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Inspect(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range []string{"inspected", "remembered"} {
			got, err := m.Inspect(p, sha)
			if err != nil {
				t.Fatalf("%s %s: %v", p, step, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s:\n got %+v\nwant %+v", p, step, got, want)
			}
		}
		// The memo is what answers the second time: one planted in its
		// place comes back, under the path asked about.
		file := m.file(sha)
		if _, err := os.Stat(file); err != nil {
			t.Fatalf("%s: no memo kept: %v", p, err)
		}
		os.WriteFile(file, []byte(`{"OS":"windows","Arch":"arm64"}`), 0o644)
		if got, _ := m.Inspect(p, sha); got.OS != Windows || got.File != p {
			t.Errorf("%s: a planted memo was not used: %+v", p, got)
		}
		// Another inspector version does not read it.
		other := Memo{Dir: m.Dir, Version: checksum.Bytes([]byte("inspector two"))}
		if got, _ := other.Inspect(p, sha); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: another version read this one's memo: %+v", p, got)
		}
		// A damaged memo is ignored and written again.
		os.WriteFile(file, []byte("{"), 0o644)
		if got, _ := m.Inspect(p, sha); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: damaged memo: %+v", p, got)
		}
		if got, _ := m.Inspect(p, sha); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: memo written again: %+v", p, got)
		}
	}

	// Not a binary: the error Inspect gives, and nothing remembered.
	py := filepath.Join(dir, "mod.py")
	os.WriteFile(py, []byte("print('hi')\n"), 0o644)
	sha, _, _ := checksum.File(py)
	if _, err := m.Inspect(py, sha); !errors.Is(err, ErrNotBinary) {
		t.Errorf("Inspect(mod.py) = %v, want ErrNotBinary", err)
	}
	if _, err := os.Stat(m.file(sha)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a memo was kept for a non-binary (%v)", err)
	}

	// Without a digest, a version or a folder, every call inspects.
	for _, mm := range []Memo{{}, {Dir: m.Dir}, {Version: m.Version}} {
		if got, err := mm.Inspect(bins[0], ""); err != nil || !reflect.DeepEqual(got, mustInspect(t, bins[0])) {
			t.Errorf("%+v: %+v %v", mm, got, err)
		}
	}
}

func mustInspect(t *testing.T, p string) Need {
	t.Helper()
	n, err := Inspect(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Trim removes the memos written over maxUnused ago, whatever inspector
// wrote them, and leaves younger memos and everything that is not a memo.
func TestMemoTrim(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	const maxUnused = 5 * 24 * time.Hour
	dir := filepath.Join(t.TempDir(), "platform")
	one := Memo{Dir: dir, Version: checksum.Bytes([]byte("inspector one"))}
	two := Memo{Dir: dir, Version: checksum.Bytes([]byte("inspector two"))}
	type file struct {
		path string
		age  time.Duration
		kept bool
	}
	var files []file
	memo := func(m Memo, content string, age time.Duration, kept bool) {
		files = append(files, file{m.file(checksum.Bytes([]byte(content))), age, kept})
	}
	memo(one, "old binary", 6*24*time.Hour, false)
	memo(two, "old binary", 30*24*time.Hour, false)
	memo(one, "binary in use", time.Hour, true)
	memo(two, "binary just within", maxUnused, true)
	files = append(files,
		file{filepath.Join(dir, "README"), 90 * 24 * time.Hour, true},                          // not a memo
		file{filepath.Join(dir, "zz", "notes.json"), 90 * 24 * time.Hour, true},                // not a memo's name
		file{filepath.Join(dir, "ab", checksum.Bytes(nil)+".json"), 90 * 24 * time.Hour, true}, // in another shard than its name's
	)
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(`{"OS":"linux"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f.path, now.Add(-f.age), now.Add(-f.age)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := Memo{Dir: dir}.Trim(now, maxUnused)
	if err != nil || n != 2 {
		t.Errorf("Trim = %d, %v; want 2 removed", n, err)
	}
	for _, f := range files {
		_, err := os.Stat(f.path)
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s (%v old): kept %v, want %v", f.path, f.age, kept, f.kept)
		}
	}
	// A shard left empty goes with its last memo.
	keptShards := map[string]bool{}
	for _, f := range files {
		if f.kept {
			keptShards[filepath.Dir(f.path)] = true
		}
	}
	for _, f := range files {
		if shard := filepath.Dir(f.path); !keptShards[shard] {
			if _, err := os.Stat(shard); err == nil {
				t.Errorf("empty shard %s kept", shard)
			}
		}
	}
	// No folder: nothing to do.
	if n, err := (Memo{Dir: filepath.Join(t.TempDir(), "none")}).Trim(now, maxUnused); n != 0 || err != nil {
		t.Errorf("Trim of no folder = %d, %v", n, err)
	}
}
