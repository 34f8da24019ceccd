package actioncache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
)

const (
	key    = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	step   = "build"
	target = "linux-x86_64"
)

// declared are the sample step's outputs, as a release.toml would list them.
var declared = []string{"tool", "lib/x.so"}

func putSample(t *testing.T) (*Cache, *Entry) {
	t.Helper()
	c := &Cache{Dir: t.TempDir()}
	src := t.TempDir()
	mustMkdir(t, filepath.Join(src, "lib"))
	mustWrite(t, filepath.Join(src, "tool"), "#!/bin/sh\necho hi\n", 0o700)
	mustWrite(t, filepath.Join(src, "lib", "x.so"), "ELF...", 0o600)
	e, err := c.Put(key, step, target, src, declared, []byte("log\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c, e
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, name, data string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
}

// editEntry rewrites entry.json of the entry in dir through fn.
func editEntry(t *testing.T, dir string, fn func(e *Entry)) {
	t.Helper()
	name := filepath.Join(dir, "entry.json")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	fn(&e)
	b, err = json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, name, string(b), 0o644)
}

// output returns the record of path p in e.
func output(t *testing.T, e *Entry, p string) *Output {
	t.Helper()
	for i := range e.Outputs {
		if e.Outputs[i].Path == p {
			return &e.Outputs[i]
		}
	}
	t.Fatalf("entry has no output %s", p)
	return nil
}

// filesIn lists every file and folder below dir.
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestPutRestore(t *testing.T) {
	c, e := putSample(t)
	if len(e.Outputs) != 2 || e.Outputs[0].Path != "lib/x.so" || e.Outputs[1].Mode != 0o755 || e.Outputs[0].Mode != 0o644 {
		t.Fatalf("entry = %+v", e)
	}
	dst := t.TempDir()
	// The declared outputs may be written in any order and non-canonically.
	got, err := c.Restore(key, step, target, []string{"./lib//x.so", "tool"}, dst)
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
	for name, want := range map[string]fs.FileMode{"tool": 0o755, "lib/x.so": 0o644} {
		if st, err := os.Stat(filepath.Join(dst, name)); err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", name, st.Mode(), err, want)
		}
	}
	if log, _ := c.Log(key); string(log) != "log\n" {
		t.Errorf("log = %q", log)
	}
}

// An action without outputs (a test step) round-trips.
func TestPutRestoreNoOutputs(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	if _, err := c.Put(key, "test", target, t.TempDir(), nil, []byte("ok\n")); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	e, err := c.Restore(key, "test", target, nil, dst)
	if err != nil || len(e.Outputs) != 0 {
		t.Fatalf("Restore = %+v, %v", e, err)
	}
	if left := filesIn(t, dst); len(left) != 0 {
		t.Errorf("destination holds %v", left)
	}
}

func TestRestoreMiss(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	if _, err := c.Restore(key, step, target, declared, t.TempDir()); !errors.Is(err, ErrMiss) {
		t.Errorf("Restore on empty cache = %v, want ErrMiss", err)
	}
}

// damageCases each spoil the sample entry (in the folder dir) in one way;
// the entry must then be a miss, never served. reason is a part of the
// CorruptError's reason.
var damageCases = []struct {
	name   string
	damage func(t *testing.T, dir string)
	reason string
}{
	{"output dropped from entry.json", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { e.Outputs = e.Outputs[1:] }) // lib/x.so gone, its file still in out/
	}, "declared output(s) not in the entry: lib/x.so"},
	{"output dropped from entry.json and out/", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { e.Outputs = e.Outputs[:1] })
		os.Remove(filepath.Join(dir, "out", "tool"))
	}, "declared output(s) not in the entry: tool"},
	{"extra output added", func(t *testing.T, dir string) {
		mustWrite(t, filepath.Join(dir, "out", "extra"), "", 0o644)
		editEntry(t, dir, func(e *Entry) {
			e.Outputs = append(e.Outputs, Output{Path: "extra", Mode: 0o644,
				SHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"})
		})
	}, "output(s) the step does not declare: extra"},
	{"unlisted file in out/", func(t *testing.T, dir string) {
		mustWrite(t, filepath.Join(dir, "out", "lib", "evil.so"), "x", 0o644)
	}, "out/lib/evil.so is not listed in entry.json"},
	{"unlisted folder in out/", func(t *testing.T, dir string) { mustMkdir(t, filepath.Join(dir, "out", "etc")) },
		"out/etc is not listed in entry.json"},
	{"renamed output", func(t *testing.T, dir string) {
		os.Rename(filepath.Join(dir, "out", "tool"), filepath.Join(dir, "out", "tool2"))
		editEntry(t, dir, func(e *Entry) { output(t, e, "tool").Path = "tool2" })
	}, "declared output(s) not in the entry: tool"},
	{"output listed twice", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { e.Outputs = append(e.Outputs, e.Outputs[1]) })
	}, "output tool is listed twice"},
	{"non-canonical path", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { output(t, e, "lib/x.so").Path = "lib/./x.so" })
	}, `output path "lib/./x.so" is not a canonical`},
	{"path escape", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { output(t, e, "tool").Path = "../../tool" })
	}, `output path "../../tool" is not a canonical`},
	{"absolute path", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { output(t, e, "tool").Path = "/bin/sh" })
	}, `output path "/bin/sh" is not a canonical`},
	{"changed byte", func(t *testing.T, dir string) {
		p := filepath.Join(dir, "out", "tool")
		b, _ := os.ReadFile(p)
		b[3] ^= 1
		mustWrite(t, p, string(b), 0o755)
	}, "tool: sha256 "},
	{"truncated file", func(t *testing.T, dir string) {
		if err := os.Truncate(filepath.Join(dir, "out", "lib", "x.so"), 2); err != nil {
			t.Fatal(err)
		}
	}, "lib/x.so: 2 bytes, recorded 6"},
	{"grown file", func(t *testing.T, dir string) {
		mustWrite(t, filepath.Join(dir, "out", "lib", "x.so"), "ELF...and more", 0o644)
	}, "lib/x.so: more than the recorded 6 bytes"},
	{"missing file", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "out", "tool")) },
		"output tool is missing from out/"},
	{"wrong mode recorded", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { output(t, e, "tool").Mode = 0o4755 })
	}, "output tool has mode 04755, not 0644 or 0755"},
	{"wrong mode stored", func(t *testing.T, dir string) {
		os.Chmod(filepath.Join(dir, "out", "lib", "x.so"), 0o755)
	}, "out/lib/x.so has mode -rwxr-xr-x, recorded -rw-r--r--"},
	{"symlink instead of file", func(t *testing.T, dir string) {
		p := filepath.Join(dir, "out", "tool")
		os.Remove(p)
		os.Symlink("/bin/sh", p)
	}, "out/tool is not a regular file"},
	{"bad sha256", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { output(t, e, "tool").SHA256 = "x" })
	}, `output tool has sha256 "x"`},
	{"garbled record", func(t *testing.T, dir string) { mustWrite(t, filepath.Join(dir, "entry.json"), "{", 0o644) },
		"unreadable entry.json"},
	{"unknown field", func(t *testing.T, dir string) {
		mustWrite(t, filepath.Join(dir, "entry.json"), `{"key":"`+key+`","serve":true}`, 0o644)
	}, `unknown field "serve"`},
	{"trailing value", func(t *testing.T, dir string) {
		b, _ := os.ReadFile(filepath.Join(dir, "entry.json"))
		mustWrite(t, filepath.Join(dir, "entry.json"), string(b)+"{}", 0o644)
	}, "more than one JSON value"},
	{"record for another key", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { e.Key = strings.Repeat("f", 64) })
	}, `entry.json names key "ffff`},
	{"record for another step", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { e.Step = "test" })
	}, `entry.json names step "test", not "build"`},
	{"record for another target", func(t *testing.T, dir string) {
		editEntry(t, dir, func(e *Entry) { e.Target = "linux-aarch64" })
	}, `entry.json names target "linux-aarch64", not "linux-x86_64"`},
}

// Every kind of damage is detected, the entry is removed, and nothing is
// left in the destination.
func TestRestoreRefusesDamage(t *testing.T) {
	for _, how := range []string{"link", "copy", "memo"} {
		for _, tc := range damageCases {
			t.Run(how+"/"+tc.name, func(t *testing.T) { restoreDamaged(t, how, tc.damage, tc.reason) })
		}
	}
}

// noLink makes Restore copy, as across file systems.
func noLink(string, string) error { return syscall.EXDEV }

// restoreDamaged restores the sample entry after damage, linking or (how
// "copy") copying, and checks that it is refused for reason and removed.
// With how "memo" the entry is first restored intact once with a digest
// memo, so that the damaged restore can answer from what the memo
// remembered.
func restoreDamaged(t *testing.T, how string, damage func(*testing.T, string), reason string) {
	c, _ := putSample(t)
	switch how {
	case "copy":
		c.link = noLink
	case "memo":
		rememberIntact(t, c)
	}
	damage(t, c.entryDir(key))
	dst := t.TempDir()
	_, err := c.Restore(key, step, target, declared, dst)
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("Restore = %v, want CorruptError", err)
	}
	if ce.Key != key || !strings.Contains(ce.Reason, reason) {
		t.Errorf("CorruptError = %+v, want key %s and a reason with %q", ce, key, reason)
	}
	if _, err := os.Stat(c.entryDir(key)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("damaged entry still present (%v)", err)
	}
	if left := filesIn(t, dst); len(left) > 0 {
		t.Errorf("left in destination: %v", left)
	}
	if _, err := c.Restore(key, step, target, declared, dst); !errors.Is(err, ErrMiss) {
		t.Errorf("second Restore = %v, want ErrMiss", err)
	}
}

// rememberIntact gives c a digest memo and restores its sample entry once,
// so that the memo remembers the stored files. They are dated an hour back
// first, as an entry stored in an earlier build is: files changed within
// digestmemo.Racy are never remembered, and a change made now gets a
// modification time of its own, in whatever tick the file system keeps.
func rememberIntact(t *testing.T, c *Cache) {
	t.Helper()
	c.Digests = digestmemo.Memo{Dir: t.TempDir()}
	old := time.Now().Add(-time.Hour)
	for _, p := range declared {
		if err := os.Chtimes(filepath.Join(c.entryDir(key), "out", filepath.FromSlash(p)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Restore(key, step, target, declared, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		if memos, _ := os.ReadDir(c.Digests.Dir); len(memos) != len(declared) {
			t.Fatalf("%d memos after restoring %d outputs", len(memos), len(declared))
		}
	}
}

// Restore links the stored files where it can (no bytes copied) and copies
// them where it cannot; both give the recorded files, and a linked one
// changed in place is found on the next restore, never served.
func TestRestoreLinksOrCopies(t *testing.T) {
	for _, how := range []string{"link", "copy", "memo"} {
		t.Run(how, func(t *testing.T) {
			c, e := putSample(t)
			switch how {
			case "copy":
				c.link = noLink
			case "memo":
				rememberIntact(t, c)
			}
			dst := t.TempDir()
			if _, err := c.Restore(key, step, target, declared, dst); err != nil {
				t.Fatal(err)
			}
			stored, _ := os.Stat(filepath.Join(c.entryDir(key), "out", "tool"))
			restored, _ := os.Stat(filepath.Join(dst, "tool"))
			if same := os.SameFile(stored, restored); same != (how != "copy") {
				t.Errorf("restored tool is the stored file: %v, want %v", same, how != "copy")
			}
			for _, o := range e.Outputs {
				if sum, _, err := checksum.File(filepath.Join(dst, filepath.FromSlash(o.Path))); err != nil || sum != o.SHA256 {
					t.Errorf("%s: %s %v, want %s", o.Path, sum, err, o.SHA256)
				}
			}
			// A person edits the output in place.
			if err := os.WriteFile(filepath.Join(dst, "tool"), []byte("#!/bin/sh\necho hacked\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			_, err := c.Restore(key, step, target, declared, t.TempDir())
			var ce *CorruptError
			if how != "copy" && !errors.As(err, &ce) {
				t.Errorf("Restore after the linked output changed = %v, want a CorruptError", err)
			}
			if how == "copy" && err != nil {
				t.Errorf("Restore after the copied output changed = %v, want the entry served", err)
			}
		})
	}
}

// An entry is checked against the step asked for: a step whose declared
// outputs changed (without the key changing, e.g. a hand-edited cache) is
// not served the old entry's outputs.
func TestRestoreChecksDeclaredOutputs(t *testing.T) {
	cases := []struct {
		outputs []string
		reason  string
	}{
		{[]string{"tool"}, "output(s) the step does not declare: lib/x.so"},
		{[]string{"tool", "lib/x.so", "lib/y.so"}, "declared output(s) not in the entry: lib/y.so"},
		{nil, "output(s) the step does not declare: lib/x.so, tool"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.outputs), func(t *testing.T) {
			c, _ := putSample(t)
			dst := t.TempDir()
			_, err := c.Restore(key, step, target, tc.outputs, dst)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Reason != tc.reason {
				t.Fatalf("Restore(%q) = %v, want CorruptError %q", tc.outputs, err, tc.reason)
			}
			if left := filesIn(t, dst); len(left) > 0 {
				t.Errorf("left in destination: %v", left)
			}
		})
	}
}

// Bad arguments are the caller's mistake, not a damaged entry: the entry
// is kept.
func TestRestoreRefusesBadArguments(t *testing.T) {
	cases := []struct {
		name    string
		key     string
		outputs []string
		want    string
	}{
		{"short key", "ab", declared, `action cache key "ab" is not a sha256 in lowercase hex`},
		{"escaping output", key, []string{"../tool"}, `restore step build [linux-x86_64]: declared output "../tool" is not a relative path inside the output folder`},
		{"duplicate output", key, []string{"tool", "./tool"}, `restore step build [linux-x86_64]: output "./tool" is declared twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := putSample(t)
			_, err := c.Restore(tc.key, step, target, tc.outputs, t.TempDir())
			var ce *CorruptError
			if err == nil || errors.As(err, &ce) || err.Error() != tc.want {
				t.Fatalf("Restore = %v, want %q", err, tc.want)
			}
			if _, err := c.Restore(key, step, target, declared, t.TempDir()); err != nil {
				t.Errorf("entry damaged by a refused call: %v", err)
			}
		})
	}
}

// failingFile is a destination file whose Write or Sync fails.
type failingFile struct {
	*os.File
	writeErr, syncErr error
}

func (f *failingFile) Write(b []byte) (int, error) {
	if f.writeErr != nil {
		return 0, &fs.PathError{Op: "write", Path: f.Name(), Err: f.writeErr}
	}
	return f.File.Write(b)
}

func (f *failingFile) Sync() error {
	if f.syncErr != nil {
		return &fs.PathError{Op: "sync", Path: f.Name(), Err: f.syncErr}
	}
	return f.File.Sync()
}

// A destination that cannot be written is the build's problem: Restore
// says so with the remedy, keeps the entry and leaves nothing in dst.
func TestRestoreDestinationFailure(t *testing.T) {
	devFull := func(name string, flag int, perm fs.FileMode) (dstFile, error) {
		// Linux's /dev/full: every write fails with ENOSPC, exactly as
		// on a full disk.
		f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		// Create the real name too, so the test sees it removed.
		if err := os.WriteFile(name, nil, perm); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	wrap := func(writeErr, syncErr error) func(string, int, fs.FileMode) (dstFile, error) {
		return func(name string, flag int, perm fs.FileMode) (dstFile, error) {
			f, err := os.OpenFile(name, flag, perm)
			if err != nil {
				return nil, err
			}
			return &failingFile{File: f, writeErr: writeErr, syncErr: syncErr}, nil
		}
	}
	cases := []struct {
		name   string
		open   func(string, int, fs.FileMode) (dstFile, error)
		errno  syscall.Errno
		remedy string
	}{
		{"disk full (/dev/full)", devFull, syscall.ENOSPC, "the disk holding DST is full: free some space there and build again"},
		{"quota exceeded", wrap(syscall.EDQUOT, nil), syscall.EDQUOT,
			"the disk quota on the file system holding DST is used up: free some space or raise the quota, and build again"},
		{"read-only file system", func(name string, _ int, _ fs.FileMode) (dstFile, error) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EROFS}
		}, syscall.EROFS, "the file system holding DST is read-only: build into a writable folder"},
		{"I/O error on sync", wrap(nil, syscall.EIO), syscall.EIO,
			"the device holding DST reported an I/O error: check the disk (dmesg) and build again"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat("/dev/full"); err != nil && tc.errno == syscall.ENOSPC {
				t.Skip("no /dev/full on this system")
			}
			c, _ := putSample(t)
			c.openDst = tc.open
			c.link = noLink
			dst := t.TempDir()
			_, err := c.Restore(key, step, target, declared, dst)
			var we *WriteError
			if !errors.As(err, &we) {
				t.Fatalf("Restore = %v, want a WriteError", err)
			}
			var ce *CorruptError
			if errors.As(err, &ce) {
				t.Fatalf("Restore = %v, a CorruptError", err)
			}
			if !errors.Is(err, tc.errno) {
				t.Errorf("Restore = %v, want it to wrap %v", err, tc.errno)
			}
			remedy := strings.ReplaceAll(tc.remedy, "DST", dst)
			if we.Key != key || we.Remedy != remedy || we.Path != filepath.Join(dst, "lib", "x.so") {
				t.Errorf("WriteError = %+v, want key %s, path %s, remedy %q", we, key, filepath.Join(dst, "lib", "x.so"), remedy)
			}
			want := fmt.Sprintf("restoring action cache entry %s: cannot write %s: %v; %s (the cache entry is intact)", key, we.Path, we.Err, remedy)
			if err.Error() != want {
				t.Errorf("Error() = %q, want %q", err, want)
			}
			if left := filesIn(t, dst); len(left) > 0 {
				t.Errorf("left in destination: %v", left)
			}
			// The entry survived and is served once the disk is fine.
			c.openDst = nil
			if _, err := c.Restore(key, step, target, declared, dst); err != nil {
				t.Fatalf("Restore after the failure = %v, want the entry served", err)
			}
		})
	}
}

// A full disk message reads as such, for a person.
func TestWriteErrorSaysDiskFull(t *testing.T) {
	err := newWriteError(key, "/out", "/out/tool", &fs.PathError{Op: "write", Path: "/out/tool", Err: syscall.ENOSPC})
	want := "restoring action cache entry " + key + ": cannot write /out/tool: write /out/tool: no space left on device; " +
		"the disk holding /out is full: free some space there and build again (the cache entry is intact)"
	if err.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", err, want)
	}
}

// copyTo tells a failed read (of the stored file: the entry's fault) from
// a failed write (of the destination: the build's).
func TestCopyToTellsReadFromWrite(t *testing.T) {
	readErr, writeErr := errors.New("read failed"), errors.New("write failed")
	cases := []struct {
		name       string
		in         io.Reader
		out        io.Writer
		rerr, werr error
	}{
		{"read", io.MultiReader(strings.NewReader("abc"), errReader{readErr}), io.Discard, readErr, nil},
		{"write", strings.NewReader("abc"), errWriter{writeErr}, nil, writeErr},
		{"short write", strings.NewReader("abc"), shortWriter{}, nil, io.ErrShortWrite},
		{"none", strings.NewReader("abc"), io.Discard, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, rerr, werr := copyTo(tc.out, io.Discard, tc.in)
			if rerr != tc.rerr || werr != tc.werr {
				t.Errorf("copyTo = read %v, write %v; want %v, %v", rerr, werr, tc.rerr, tc.werr)
			}
		})
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

type shortWriter struct{}

func (shortWriter) Write(b []byte) (int, error) { return len(b) - 1, nil }

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

// Put records canonical paths and refuses outputs outside the folder or
// declared twice.
func TestPutOutputs(t *testing.T) {
	cases := []struct {
		outputs []string
		want    string // the error, or "" for success
	}{
		{[]string{"./tool", "lib//x.so"}, ""},
		{[]string{"../tool"}, `cache step build [linux-x86_64]: declared output "../tool" is not a relative path inside the output folder`},
		{[]string{"/etc/passwd"}, `cache step build [linux-x86_64]: declared output "/etc/passwd" is not a relative path inside the output folder`},
		{[]string{"tool", "./tool"}, `cache step build [linux-x86_64]: output "./tool" is declared twice`},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.outputs), func(t *testing.T) {
			c := &Cache{Dir: t.TempDir()}
			src := t.TempDir()
			mustMkdir(t, filepath.Join(src, "lib"))
			mustWrite(t, filepath.Join(src, "tool"), "t", 0o755)
			mustWrite(t, filepath.Join(src, "lib", "x.so"), "x", 0o644)
			e, err := c.Put(key, step, target, src, tc.outputs, nil)
			if tc.want != "" {
				if err == nil || err.Error() != tc.want {
					t.Fatalf("Put = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Outputs) != 2 || e.Outputs[0].Path != "lib/x.so" || e.Outputs[1].Path != "tool" {
				t.Errorf("outputs = %+v, want lib/x.so and tool", e.Outputs)
			}
		})
	}
}

// Put stores a large output by a second name rather than a copy, but only
// a file nobody else names and whose mode it keeps: a file with another
// name, or a mode Put normalises, is copied, so storing changes nothing
// anyone else sees.
func TestPutLinksOnlyUnsharedFiles(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("Put copies where it cannot count a file's names")
	}
	c := &Cache{Dir: t.TempDir()}
	src := t.TempDir()
	mustWrite(t, filepath.Join(src, "alone"), "one name", 0o644)
	mustWrite(t, filepath.Join(src, "shared"), "two names", 0o644)
	if err := os.Link(filepath.Join(src, "shared"), filepath.Join(t.TempDir(), "other-name")); err != nil {
		t.Skip("no hard links here:", err)
	}
	mustWrite(t, filepath.Join(src, "private"), "mode 0600", 0o600)
	outputs := []string{"alone", "shared", "private"}
	e, err := c.Put(key, step, target, src, outputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, linked := range map[string]bool{"alone": true, "shared": false, "private": false} {
		a, _ := os.Stat(filepath.Join(src, name))
		b, _ := os.Stat(filepath.Join(c.entryDir(key), "out", name))
		if os.SameFile(a, b) != linked {
			t.Errorf("%s: stored as the same file: %v, want %v", name, !linked, linked)
		}
	}
	if st, _ := os.Stat(filepath.Join(src, "private")); st.Mode().Perm() != 0o600 {
		t.Errorf("Put changed the mode of the file it read: %v", st.Mode())
	}
	for _, o := range e.Outputs {
		want := checksum.Bytes(map[string][]byte{"alone": []byte("one name"), "shared": []byte("two names"), "private": []byte("mode 0600")}[o.Path])
		if o.SHA256 != want || o.Mode != 0o644 {
			t.Errorf("%s: recorded %s %v, want %s 0644", o.Path, o.SHA256, o.Mode, want)
		}
	}
	if _, err := c.Restore(key, step, target, outputs, t.TempDir()); err != nil {
		t.Errorf("Restore after Put: %v", err)
	}
}

// Put remembers the digests of the files it stores by a link (hashed as it
// stores them), so that the next Restore, in the build right after, reads
// none of them again; a file changed after Put is still found.
func TestPutRemembersLinkedDigests(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no file identity here: every restore hashes")
	}
	c := &Cache{Dir: t.TempDir(), Digests: digestmemo.Memo{Dir: t.TempDir()}}
	src := t.TempDir()
	mustMkdir(t, filepath.Join(src, "lib"))
	// Modes Put stores as they are: the files are linked, not copied.
	mustWrite(t, filepath.Join(src, "tool"), "#!/bin/sh\necho hi\n", 0o755)
	mustWrite(t, filepath.Join(src, "lib", "x.so"), "ELF...", 0o644)
	if st, _ := os.Stat(filepath.Join(src, "tool")); st.ModTime().UnixNano()%int64(time.Second) == 0 {
		t.Skip("this file system keeps whole-second times: a file just written is not remembered at once")
	}
	e, err := c.Put(key, step, target, src, declared, nil)
	if err != nil {
		t.Fatal(err)
	}
	memos := mustReadDirNames(t, c.Digests.Dir)
	if len(memos) != len(declared) {
		t.Fatalf("%d memos after Put of %d linked outputs, want one each", len(memos), len(declared))
	}
	// The memos answer the next Restore: planted digests are what it
	// compares, so it finds the entry damaged without reading the files.
	fake := checksum.Bytes([]byte("planted"))
	for _, m := range memos {
		os.WriteFile(filepath.Join(c.Digests.Dir, m), []byte(fmt.Sprintf("%s %d\n", fake, e.Outputs[0].Size)), 0o644)
	}
	_, err = c.Restore(key, step, target, declared, t.TempDir())
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, fake) {
		t.Fatalf("Restore with planted memos = %v, want a CorruptError naming the planted digest", err)
	}

	// Stored again, then a stored file changed in place right away: seen.
	mustWrite(t, filepath.Join(src, "tool"), "#!/bin/sh\necho hi\n", 0o755)
	if _, err := c.Put(key, step, target, src, declared, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "tool"), []byte("#!/bin/sh\necho HI\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = c.Restore(key, step, target, declared, t.TempDir())
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "tool: sha256") {
		t.Fatalf("Restore after the stored file changed = %v, want a CorruptError for tool", err)
	}
}

func mustReadDirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
