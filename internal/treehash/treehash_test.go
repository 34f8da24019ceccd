package treehash

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestHashMatchesDirhash(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a.go": "package a\n", "sub/b.go": "package b\n", "sub/deep/c.txt": "", "Z": "upper sorts first",
	})
	got, err := Hash(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	// dirhash.Hash1 is the definition; feed it our file set.
	names, _ := List(root)
	want, err := dirhash.Hash1(names, func(n string) (io.ReadCloser, error) {
		return os.Open(filepath.Join(root, n))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.H1 != want {
		t.Errorf("Hash = %s, dirhash.Hash1 = %s", got.H1, want)
	}
	if len(got.Files) != 4 || got.Files[0].Path != "Z" {
		t.Errorf("files = %v", got.Files)
	}
}

func TestListSkipsVCSAndRefusesLinks(t *testing.T) {
	root := writeTree(t, map[string]string{"a": "1", ".git/HEAD": "ref", "x/.hg/store": "s", "x/b": "2", "pkg/__pycache__/m.cpython-311.pyc": "bytecode"})
	names, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "x/b"}; !reflect.DeepEqual(names, want) {
		t.Errorf("List = %v, want %v", names, want)
	}
	if err := os.Symlink("a", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	_, err = List(root)
	if err == nil || !strings.Contains(err.Error(), "link: symbolic link") {
		t.Errorf("List with a symlink: %v, want refusal naming it", err)
	}
}

func TestDiffNamesChanges(t *testing.T) {
	want := []File{{"a", "1"}, {"b", "2"}, {"c", "3"}}
	got := []File{{"a", "1"}, {"b", "9"}, {"d", "4"}}
	d := Diff(want, got)
	kinds := map[string]ChangeKind{}
	for _, c := range d {
		kinds[c.Path] = c.Kind
	}
	if !reflect.DeepEqual(kinds, map[string]ChangeKind{"b": Changed, "c": Removed, "d": Added}) {
		t.Errorf("Diff = %v", d)
	}
}

func TestCopyNormalisesModes(t *testing.T) {
	src := writeTree(t, map[string]string{"run.sh": "#!/bin/sh\n", "data": "x"})
	os.Chmod(filepath.Join(src, "run.sh"), 0o700)
	os.Chmod(filepath.Join(src, "data"), 0o600)
	dst := filepath.Join(t.TempDir(), "copy")
	if err := Copy(context.Background(), src, dst); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"run.sh": 0o755, "data": 0o644} {
		st, err := os.Stat(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s mode %v, want %v", name, st.Mode().Perm(), mode)
		}
	}
	a, _ := Hash(context.Background(), src)
	b, _ := Hash(context.Background(), dst)
	if a.H1 != b.H1 {
		t.Errorf("copy hashes %s, source %s", b.H1, a.H1)
	}
}

func TestParseLineRoundTrip(t *testing.T) {
	f := File{Path: "dir/a b.go", SHA256: strings.Repeat("ab", 32)}
	g, err := ParseLine(f.Line())
	if err != nil || g != f {
		t.Errorf("ParseLine(Line()) = %v, %v", g, err)
	}
	for _, bad := range []string{"", "abc  x", strings.Repeat("zz", 32) + "  x", strings.Repeat("ab", 32) + " x"} {
		if _, err := ParseLine(bad); err == nil {
			t.Errorf("ParseLine(%q) accepted", bad)
		}
	}
}

// fakeHasher answers every file with the digest of its base name and
// counts the calls.
type fakeHasher struct{ calls atomic.Int32 }

func (f *fakeHasher) SHA256(p string) (string, int64, error) {
	f.calls.Add(1)
	sum := sha256.Sum256([]byte(filepath.Base(p)))
	return hex.EncodeToString(sum[:]), 0, nil
}

func TestHashWithAsksTheHasher(t *testing.T) {
	root := writeTree(t, map[string]string{"a": "1", "sub/b": "2", "c": "3"})
	h := &fakeHasher{}
	got, err := HashWith(context.Background(), root, h)
	if err != nil {
		t.Fatal(err)
	}
	if h.calls.Load() != 3 {
		t.Errorf("hasher calls: %d, want 3", h.calls.Load())
	}
	for _, f := range got.Files {
		sum := sha256.Sum256([]byte(path.Base(f.Path)))
		if f.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: %s is not the hasher's answer", f.Path, f.SHA256)
		}
	}
	if got.H1 != H1(got.Files) {
		t.Errorf("H1 %s is not computed from the hasher's digests", got.H1)
	}
	plain, _ := Hash(context.Background(), root)
	if plain.H1 == got.H1 {
		t.Error("Hash and HashWith(fake) agree: the hasher was not used")
	}
}
