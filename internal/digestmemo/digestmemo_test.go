package digestmemo

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

func TestMemo(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no file identity here: every call hashes")
	}
	dir := t.TempDir()
	m := Memo{Dir: filepath.Join(dir, "memo")}
	exe := filepath.Join(dir, "cc")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(exe, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step, content string) {
		t.Helper()
		got, size, err := m.SHA256(exe)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if want := checksum.Bytes([]byte(content)); got != want || size != int64(len(content)) {
			t.Errorf("%s: SHA256 = %s %d, want %s %d", step, got, size, want, len(content))
		}
	}
	write("compiler one")
	check("first", "compiler one")
	memos, _ := os.ReadDir(m.Dir)
	if len(memos) != 1 {
		t.Fatalf("memos after one file: %d, want 1", len(memos))
	}
	check("remembered", "compiler one")

	// The memo is what answers: change what it holds, and the answer changes
	// (so the test above did not just hash again).
	memo := filepath.Join(m.Dir, memos[0].Name())
	fake := checksum.Bytes([]byte("other"))
	os.WriteFile(memo, []byte(fake+" 12\n"), 0o644)
	if got, _, _ := m.SHA256(exe); got != fake {
		t.Fatalf("a valid memo was not used: got %s", got)
	}

	// Every way of changing the file makes it hashed again.
	write("compiler two, same mtime")
	check("rewritten in place", "compiler two, same mtime")
	old := time.Unix(499137600, 0)
	os.Chtimes(exe, old, old)
	check("mtime set back", "compiler two, same mtime")
	swapped := filepath.Join(dir, "cc.new")
	os.WriteFile(swapped, []byte("swapped compiler!!!!!!!!"), 0o755)
	os.Chtimes(swapped, old, old)
	if err := os.Rename(swapped, exe); err != nil {
		t.Fatal(err)
	}
	check("replaced by rename, same size and mtime", "swapped compiler!!!!!!!!")
	os.Chmod(exe, 0o700)
	check("chmod", "swapped compiler!!!!!!!!")

	// A damaged memo is ignored and replaced.
	for _, e := range mustReadDir(t, m.Dir) {
		os.WriteFile(filepath.Join(m.Dir, e.Name()), []byte("garbage"), 0o644)
	}
	check("damaged memos", "swapped compiler!!!!!!!!")

	// Missing file: an error, no memo.
	if _, _, err := m.SHA256(filepath.Join(dir, "absent")); err == nil {
		t.Error("a missing file has a digest")
	}
}

func TestZeroMemoHashes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("x"), 0o644)
	got, _, err := Memo{}.SHA256(p)
	if err != nil || got != checksum.Bytes([]byte("x")) {
		t.Errorf("zero Memo: %s %v", got, err)
	}
}

func TestRead(t *testing.T) {
	sha := checksum.Bytes(nil)
	for _, tt := range []struct {
		text string
		ok   bool
	}{
		{sha + " 0\n", true},
		{sha + " 12", true},
		{sha + " -1\n", false},
		{sha + "\n", false},
		{"XYZ 1\n", false},
		{"", false},
		{sha + " 1 2\n", false},
	} {
		p := filepath.Join(t.TempDir(), "memo")
		os.WriteFile(p, []byte(tt.text), 0o644)
		if _, _, ok := read(p); ok != tt.ok {
			t.Errorf("read(%q) ok = %v, want %v", tt.text, ok, tt.ok)
		}
	}
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}
