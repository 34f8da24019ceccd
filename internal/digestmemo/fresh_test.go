package digestmemo

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

// fineTimes skips the test where the file system of dir keeps file times
// coarser than the kernel's clock tick (whole seconds): there a file just
// written is never remembered at once, which is the rule working.
func fineTimes(t *testing.T, p string) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.ModTime().UnixNano()%int64(time.Second) == 0 {
		t.Skipf("%s keeps whole-second times: a fresh file is never remembered at once", p)
	}
}

// A file hashed moments after it was written is remembered at once, under
// the name it has later, once the file system's clock moved past its last
// write; a write after the hash began is always seen.
func TestHashLinkedFresh(t *testing.T) {
	if !identities {
		t.Skip("no file identity here: every call hashes")
	}
	content := []byte("a wheel written just now")
	want := checksum.Bytes(content)
	write := func(t *testing.T) (m Memo, p string) {
		t.Helper()
		dir := t.TempDir()
		m = Memo{Dir: filepath.Join(dir, "memo")}
		p = filepath.Join(dir, "tmp", "f.whl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		fineTimes(t, p)
		return m, p
	}
	hash := func(t *testing.T, m Memo, p string) Fresh {
		t.Helper()
		d, err := m.HashLinkedFresh(p)
		if err != nil {
			t.Fatal(err)
		}
		if d.SHA256 != want || d.Size != int64(len(content)) {
			t.Fatalf("HashLinkedFresh = %s %d, want %s %d", d.SHA256, d.Size, want, len(content))
		}
		return d
	}
	memos := func(m Memo) int {
		es, _ := os.ReadDir(m.Dir)
		return len(es)
	}

	t.Run("remembered under its later name", func(t *testing.T) {
		m, p := write(t)
		d := hash(t, m, p)
		if !d.settled {
			t.Fatal("a file hashed after the file system's clock passed its write is not settled")
		}
		// Committed: its folder is renamed, as an action cache entry's is.
		final := filepath.Join(filepath.Dir(filepath.Dir(p)), "final", "f.whl")
		if err := os.Rename(filepath.Dir(p), filepath.Dir(final)); err != nil {
			t.Fatal(err)
		}
		m.RememberLinked(final, d)
		es := mustReadDir(t, m.Dir)
		if len(es) != 1 {
			t.Fatalf("%d memos, want 1", len(es))
		}
		// The memo answers: a planted digest comes back.
		fake := checksum.Bytes([]byte("planted"))
		os.WriteFile(filepath.Join(m.Dir, es[0].Name()), []byte(fake+" 24\n"), 0o644)
		if got, _, _ := m.SHA256Linked(final); got != fake {
			t.Errorf("SHA256Linked = %s, want the remembered %s", got, fake)
		}
		// No probe is left in the folder.
		if es := mustReadDir(t, filepath.Dir(final)); len(es) != 1 {
			t.Errorf("folder holds %d files, want only the wheel", len(es))
		}
	})

	t.Run("written again after the hash, same size", func(t *testing.T) {
		m, p := write(t)
		d := hash(t, m, p)
		// However soon, the write gets a later time than the one hashed:
		// the hash began after the file system's clock passed it.
		if err := os.WriteFile(p, []byte("a wheel WRITTEN just now"), 0o644); err != nil {
			t.Fatal(err)
		}
		m.RememberLinked(p, d)
		if n := memos(m); n != 0 {
			t.Fatalf("a file written after its hash was remembered (%d memos)", n)
		}
		if got, _, _ := m.SHA256Linked(p); got == want {
			t.Error("SHA256Linked returned the digest of the bytes before the write")
		}
	})

	t.Run("clock never passes", func(t *testing.T) {
		// A modification time ahead of the clock stands for a file system
		// that keeps coarse times: its clock does not pass the file's
		// time within the wait, and the digest is not remembered.
		m, p := write(t)
		ahead := time.Now().Add(time.Hour)
		os.Chtimes(p, ahead, ahead)
		start := time.Now()
		d := hash(t, m, p)
		if waited := time.Since(start); waited > 10*tickWait {
			t.Errorf("waited %v for the clock, bound is %v", waited, tickWait)
		}
		m.RememberLinked(p, d)
		if n := memos(m); n != 0 {
			t.Errorf("remembered a file whose time the clock did not pass (%d memos)", n)
		}
	})

	t.Run("zero memo only hashes", func(t *testing.T) {
		_, p := write(t)
		d := hash(t, Memo{}, p)
		Memo{}.RememberLinked(p, d) // must not panic or write anywhere
		if d.settled {
			t.Error("a memo that remembers nothing marked a digest to remember")
		}
	})

	t.Run("missing file", func(t *testing.T) {
		m, p := write(t)
		if _, err := m.HashLinkedFresh(p + ".absent"); err == nil {
			t.Error("a missing file has a digest")
		}
	})
}
