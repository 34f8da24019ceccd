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

// restoreWays are the ways Restore puts a stored file in place: copying
// it, cloning it (a reflink, which a test stands in for by a copy where
// the file system makes none), each with and without a digest memo
// remembering the stored files.
var restoreWays = []string{"copy", "clone", "copy+memo", "clone+memo"}

// restoreWay sets c up to restore the way how (one of restoreWays).
func restoreWay(t *testing.T, c *Cache, how string) {
	t.Helper()
	c.clone = noClone
	if strings.HasPrefix(how, "clone") {
		c.clone = copyClone
	}
	if strings.HasSuffix(how, "+memo") {
		rememberIntact(t, c)
	}
}

// Every kind of damage is detected, the entry is removed, and nothing is
// left in the destination.
func TestRestoreRefusesDamage(t *testing.T) {
	for _, how := range restoreWays {
		for _, tc := range damageCases {
			t.Run(how+"/"+tc.name, func(t *testing.T) { restoreDamaged(t, how, tc.damage, tc.reason) })
		}
	}
}

// noClone makes Restore and Put copy, as on a file system without
// reflinks.
func noClone(_, _ *os.File) error { return errors.ErrUnsupported }

// copyClone stands in for a reflink: dst gets src's bytes, and is a file
// of its own, as a clone is.
func copyClone(dst, src *os.File) error {
	_, err := io.Copy(dst, src)
	return err
}

// restoreDamaged restores the sample entry after damage, the way how
// (restoreWays), and checks that it is refused for reason and removed.
// With a memo the entry is first restored intact once, so that the
// damaged restore can answer from what the memo remembered.
func restoreDamaged(t *testing.T, how string, damage func(*testing.T, string), reason string) {
	c, _ := putSample(t)
	restoreWay(t, c, how)
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

// Restore gives each output a file of its own, copied or cloned, never the
// stored file under a second name: a person who edits a restored output
// in place, even keeping its size and modification time (which a digest
// memo would not see), changes that copy only, and the next restore
// serves the recorded bytes.
func TestRestoreGivesOwnFiles(t *testing.T) {
	for _, how := range restoreWays {
		t.Run(how, func(t *testing.T) {
			c, e := putSample(t)
			restoreWay(t, c, how)
			dst := t.TempDir()
			if _, err := c.Restore(key, step, target, declared, dst); err != nil {
				t.Fatal(err)
			}
			for _, o := range e.Outputs {
				stored, _ := os.Stat(filepath.Join(c.entryDir(key), "out", filepath.FromSlash(o.Path)))
				restored, _ := os.Stat(filepath.Join(dst, filepath.FromSlash(o.Path)))
				if os.SameFile(stored, restored) {
					t.Errorf("restored %s is the stored file under a second name", o.Path)
				}
				if sum, _, err := checksum.File(filepath.Join(dst, filepath.FromSlash(o.Path))); err != nil || sum != o.SHA256 {
					t.Errorf("%s: %s %v, want %s", o.Path, sum, err, o.SHA256)
				}
			}
			editInPlace(t, filepath.Join(dst, "tool"))
			again := t.TempDir()
			if _, err := c.Restore(key, step, target, declared, again); err != nil {
				t.Fatalf("Restore after a restored output was edited = %v, want the entry served", err)
			}
			if sum, _, _ := checksum.File(filepath.Join(again, "tool")); sum != output(t, e, "tool").SHA256 {
				t.Errorf("restored tool after the edit has sha256 %s, want the recorded %s", sum, output(t, e, "tool").SHA256)
			}
		})
	}
}

// editInPlace changes the first byte of the file p through its own name
// (the same inode), and puts its size and modification time back.
func editInPlace(t *testing.T, p string) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x20
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// A folder without entry.json where an entry belongs (a removal or a store
// cut short) is no entry: Restore discards it with a CorruptError naming
// the key, and the action stored again is served. Before, it was a miss
// that made every later Put fail ("rename ...: file exists").
func TestHalfEntryHeals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"entry.json removed", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "entry.json")) }},
		{"only part of out/ left", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "entry.json"))
			os.Remove(filepath.Join(dir, "log.txt"))
			os.Remove(filepath.Join(dir, "out", "tool"))
		}},
		{"an empty folder", func(t *testing.T, dir string) {
			os.RemoveAll(dir)
			mustMkdir(t, dir)
		}},
		{"a read-only folder", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "entry.json"))
			os.Chmod(filepath.Join(dir, "out", "lib"), 0o555)
			t.Cleanup(func() {
				filepath.WalkDir(filepath.Dir(dir), func(p string, d fs.DirEntry, _ error) error { os.Chmod(p, 0o755); return nil })
			})
		}},
		{"a file", func(t *testing.T, dir string) {
			os.RemoveAll(dir)
			mustWrite(t, dir, "not an entry", 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := putSample(t)
			dir := c.entryDir(key)
			tc.damage(t, dir)
			// A leftover of an interrupted store does not get in the way either.
			mustMkdir(t, filepath.Join(filepath.Dir(dir), ".tmp-"+key[:8]+"-123"))
			dst := t.TempDir()
			_, err := c.Restore(key, step, target, declared, dst)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Key != key {
				t.Fatalf("Restore of a half entry = %v, want a CorruptError for %s", err, key)
			}
			if left := filesIn(t, dst); len(left) > 0 {
				t.Errorf("left in destination: %v", left)
			}
			src := t.TempDir()
			mustMkdir(t, filepath.Join(src, "lib"))
			mustWrite(t, filepath.Join(src, "tool"), "#!/bin/sh\necho hi\n", 0o755)
			mustWrite(t, filepath.Join(src, "lib", "x.so"), "ELF...", 0o644)
			if _, err := c.Put(key, step, target, src, declared, nil); err != nil {
				t.Fatalf("Put after the half entry was discarded: %v", err)
			}
			if _, err := c.Restore(key, step, target, declared, t.TempDir()); err != nil {
				t.Fatalf("Restore of the entry stored again: %v", err)
			}
		})
	}
}

// Put stores a half entry's action again even when nothing restored it
// first: the folder in its way is discarded.
func TestPutReplacesHalfEntry(t *testing.T) {
	c, _ := putSample(t)
	dir := c.entryDir(key)
	os.Remove(filepath.Join(dir, "entry.json"))
	src := t.TempDir()
	mustMkdir(t, filepath.Join(src, "lib"))
	mustWrite(t, filepath.Join(src, "tool"), "#!/bin/sh\necho hi\n", 0o755)
	mustWrite(t, filepath.Join(src, "lib", "x.so"), "ELF...", 0o644)
	if _, err := c.Put(key, step, target, src, declared, nil); err != nil {
		t.Fatalf("Put over a half entry: %v", err)
	}
	if _, err := c.Restore(key, step, target, declared, t.TempDir()); err != nil {
		t.Fatalf("Restore: %v", err)
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
			c.clone = noClone
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

// Put stores a copy (or a clone) of each output, never a second name of
// the file it read: that file stays the caller's (a wheel in the output
// folder), and changing it in place, even keeping its size and time,
// leaves the entry as recorded. Put does not change the file it reads.
func TestPutStoresOwnFiles(t *testing.T) {
	for _, how := range []string{"copy", "clone"} {
		t.Run(how, func(t *testing.T) {
			c := &Cache{Dir: t.TempDir(), Digests: digestmemo.Memo{Dir: t.TempDir()}, clone: noClone}
			if how == "clone" {
				c.clone = copyClone
			}
			src := t.TempDir()
			mustWrite(t, filepath.Join(src, "alone"), "one name", 0o644)
			mustWrite(t, filepath.Join(src, "private"), "mode 0600", 0o600)
			outputs := []string{"alone", "private"}
			e, err := c.Put(key, step, target, src, outputs, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range outputs {
				a, _ := os.Stat(filepath.Join(src, name))
				b, _ := os.Stat(filepath.Join(c.entryDir(key), "out", name))
				if os.SameFile(a, b) {
					t.Errorf("%s: stored as a second name of the file Put read", name)
				}
			}
			if st, _ := os.Stat(filepath.Join(src, "private")); st.Mode().Perm() != 0o600 {
				t.Errorf("Put changed the mode of the file it read: %v", st.Mode())
			}
			for _, o := range e.Outputs {
				want := checksum.Bytes(map[string][]byte{"alone": []byte("one name"), "private": []byte("mode 0600")}[o.Path])
				if o.SHA256 != want || o.Mode != 0o644 {
					t.Errorf("%s: recorded %s %v, want %s 0644", o.Path, o.SHA256, o.Mode, want)
				}
			}
			editInPlace(t, filepath.Join(src, "alone"))
			dst := t.TempDir()
			if _, err := c.Restore(key, step, target, outputs, dst); err != nil {
				t.Fatalf("Restore after the file Put read was edited: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(dst, "alone")); string(b) != "one name" {
				t.Errorf("restored %q, want the stored %q", b, "one name")
			}
		})
	}
}

// Put remembers the digests of the files it stores (hashed as it stores
// them), so that the next Restore, in the build right after, reads none
// of them again; a stored file changed after Put is still found.
func TestPutRemembersDigests(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no file identity here: every restore hashes")
	}
	c := &Cache{Dir: t.TempDir(), Digests: digestmemo.Memo{Dir: t.TempDir()}}
	src := t.TempDir()
	mustMkdir(t, filepath.Join(src, "lib"))
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
		t.Fatalf("%d memos after Put of %d outputs, want one each", len(memos), len(declared))
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
	if _, err := c.Put(key, step, target, src, declared, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.entryDir(key), "out", "tool"), []byte("#!/bin/sh\necho HI\n"), 0o755); err != nil {
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
