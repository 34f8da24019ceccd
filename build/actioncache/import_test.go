package actioncache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// remoteSample is the sample entry as another cache holds it: its record
// and its blobs by sha256.
func remoteSample(t *testing.T) (Entry, map[string][]byte) {
	t.Helper()
	src, e := putSample(t)
	blobs := map[string][]byte{}
	for _, o := range e.Outputs {
		f, err := src.Open(key, o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(f)
		f.Close()
		blobs[o.SHA256] = b
	}
	return *e, blobs
}

// noLimit accepts an entry of any size.
const noLimit = math.MaxInt64

func fetchFrom(blobs map[string][]byte) Fetch {
	return func(o Output, w io.Writer) error {
		b, ok := blobs[o.SHA256]
		if !ok {
			return ErrMiss
		}
		_, err := w.Write(b)
		return err
	}
}

func record(t *testing.T, e Entry) []byte {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestImportRestore(t *testing.T) {
	e, blobs := remoteSample(t)
	c := &Cache{Dir: t.TempDir()}
	if _, err := c.Import(key, step, target, declared, record(t, e), noLimit, Origin{}, fetchFrom(blobs)); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	got, err := c.Restore(key, step, target, declared, dst)
	if err != nil {
		t.Fatalf("Restore of an imported entry: %v", err)
	}
	if len(got.Outputs) != 2 {
		t.Fatalf("entry = %+v", got)
	}
	if st, err := os.Stat(filepath.Join(dst, "tool")); err != nil || st.Mode() != 0o755 {
		t.Errorf("tool: %v %v", st, err)
	}
}

// Whatever is wrong with an entry from elsewhere is a *CorruptError, and
// nothing reaches the local cache: the next Restore is a miss.
func TestImportRefuses(t *testing.T) {
	e, blobs := remoteSample(t)
	sha := func(p string) string { return output(t, &e, p).SHA256 }
	for _, tc := range []struct {
		name   string
		data   func() []byte
		fetch  Fetch
		reason string
	}{
		{"tampered blob", func() []byte { return record(t, e) }, func(o Output, w io.Writer) error {
			b := append([]byte(nil), blobs[o.SHA256]...)
			b[0] ^= 1
			_, err := w.Write(b)
			return err
		}, ": sha256 "},
		{"longer blob", func() []byte { return record(t, e) }, func(o Output, w io.Writer) error {
			_, err := w.Write(append(append([]byte(nil), blobs[o.SHA256]...), strings.Repeat("x", 1<<20)...))
			return err
		}, "more than the recorded"},
		{"shorter blob", func() []byte { return record(t, e) }, func(o Output, w io.Writer) error {
			_, err := w.Write(blobs[o.SHA256][:1])
			return err
		}, "bytes, recorded"},
		{"undeclared output", func() []byte {
			x := e
			x.Outputs = append(append([]Output(nil), e.Outputs...), Output{Path: "extra", Mode: 0o644, SHA256: sha("tool"), Size: 1})
			return record(t, x)
		}, fetchFrom(blobs), "output(s) the step does not declare: extra"},
		{"missing output", func() []byte {
			x := e
			x.Outputs = e.Outputs[:1]
			return record(t, x)
		}, fetchFrom(blobs), "declared output(s) not in the entry: tool"},
		{"path escape", func() []byte {
			x := e
			x.Outputs = append([]Output(nil), e.Outputs...)
			x.Outputs[1].Path = "../tool"
			return record(t, x)
		}, fetchFrom(blobs), "not a canonical relative path"},
		{"other step", func() []byte {
			x := e
			x.Step = "other"
			return record(t, x)
		}, fetchFrom(blobs), `names step "other"`},
		{"other key", func() []byte {
			x := e
			x.Key = strings.Repeat("f", 64)
			return record(t, x)
		}, fetchFrom(blobs), "names key"},
		{"bad mode", func() []byte {
			x := e
			x.Outputs = append([]Output(nil), e.Outputs...)
			x.Outputs[1].Mode = 0o4755
			return record(t, x)
		}, fetchFrom(blobs), "not 0644 or 0755"},
		{"unknown field", func() []byte {
			return []byte(strings.Replace(string(record(t, e)), `"key"`, `"log":"x","key"`, 1))
		}, fetchFrom(blobs), "unknown field"},
		{"two values", func() []byte { return append(record(t, e), []byte("{}")...) }, fetchFrom(blobs), "more than one JSON value"},
		{"not JSON", func() []byte { return []byte("<html>") }, fetchFrom(blobs), "unreadable record"},
		{"too large", func() []byte { return make([]byte, MaxEntrySize+1) }, fetchFrom(blobs), "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cache{Dir: t.TempDir()}
			_, err := c.Import(key, step, target, declared, tc.data(), noLimit, Origin{}, tc.fetch)
			var ce *CorruptError
			if !errors.As(err, &ce) || !strings.Contains(ce.Reason, tc.reason) {
				t.Fatalf("Import = %v, want a CorruptError with %q", err, tc.reason)
			}
			if _, err := c.Restore(key, step, target, declared, t.TempDir()); !errors.Is(err, ErrMiss) {
				t.Errorf("Restore after a refused import = %v, want ErrMiss", err)
			}
			if dir := filepath.Join(c.Dir, "actions", key[:2]); exists(dir) {
				if left := filesIn(t, dir); len(left) != 0 {
					t.Errorf("left in the cache: %v", left)
				}
			}
		})
	}
}

// A fetch that fails is a *FetchError (the server's fault, not the
// entry's), and nothing is stored.
func TestImportFetchError(t *testing.T) {
	e, _ := remoteSample(t)
	c := &Cache{Dir: t.TempDir()}
	down := errors.New("connection refused")
	_, err := c.Import(key, step, target, declared, record(t, e), noLimit, Origin{}, func(Output, io.Writer) error { return down })
	var fe *FetchError
	if !errors.As(err, &fe) || !errors.Is(err, down) {
		t.Fatalf("Import = %v, want a FetchError", err)
	}
	if _, err := c.Restore(key, step, target, declared, t.TempDir()); !errors.Is(err, ErrMiss) {
		t.Errorf("Restore = %v, want ErrMiss", err)
	}
}

// A fetch that learns the blob is not the recorded size before reading it
// (a server announcing another length) refuses the entry as corrupt.
func TestImportBlobSizeAnnounced(t *testing.T) {
	e, _ := remoteSample(t)
	c := &Cache{Dir: t.TempDir()}
	_, err := c.Import(key, step, target, declared, record(t, e), noLimit, Origin{}, func(o Output, w io.Writer) error {
		return fmt.Errorf("%w: the server announces %d bytes", ErrBlobSize, o.Size+1)
	})
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "the server announces") {
		t.Fatalf("Import = %v, want a CorruptError naming the announced size", err)
	}
}

// A record whose outputs declare more bytes in all than the caller
// accepts is refused before anything is fetched or written, whatever the
// sizes (crafted ones that would wrap a sum round included).
func TestImportRefusesOversize(t *testing.T) {
	e, blobs := remoteSample(t)
	for _, tc := range []struct {
		name  string
		sizes []int64 // by output, as e.Outputs
		max   int64
		ok    bool
	}{
		{"10^13 bytes", []int64{1e13, 18}, 2 << 30, false},
		{"sum over the limit", []int64{1 << 30, 1<<30 + 1}, 2 << 30, false},
		{"wrapping sum", []int64{math.MaxInt64, math.MaxInt64}, 2 << 30, false},
		{"at the limit", []int64{6, 18}, 24, true},
		{"one byte over", []int64{6, 18}, 23, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := e
			x.Outputs = append([]Output(nil), e.Outputs...)
			for i := range x.Outputs {
				x.Outputs[i].Size = tc.sizes[i]
			}
			if tc.ok {
				x = e
			}
			c := &Cache{Dir: t.TempDir()}
			fetched := 0
			_, err := c.Import(key, step, target, declared, record(t, x), tc.max, Origin{}, func(o Output, w io.Writer) error {
				fetched++
				return fetchFrom(blobs)(o, w)
			})
			if tc.ok {
				if err != nil {
					t.Fatalf("Import at the limit = %v", err)
				}
				return
			}
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Key != key || tl.Max != tc.max {
				t.Fatalf("Import = %v, want a TooLargeError with max %d", err, tc.max)
			}
			if fetched != 0 {
				t.Errorf("Import fetched %d outputs of an oversize entry", fetched)
			}
			if dir := filepath.Join(c.Dir, "actions", key[:2]); exists(dir) {
				if left := filesIn(t, dir); len(left) != 0 {
					t.Errorf("left in the cache: %v", left)
				}
			}
		})
	}
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// An imported entry keeps where it came from (origin.json); an entry built
// here has no origin; one an mkrelease before origins imported (its
// import log, no origin.json) is imported with no writer; an unreadable
// origin.json is an error. Forget removes an entry, and a missing one is
// nothing to forget.
func TestImportOrigin(t *testing.T) {
	e, blobs := remoteSample(t)
	want := Origin{Cache: "https://cache.example.org/mk", Writer: strings.Repeat("a", 64)}
	for _, tc := range []struct {
		name     string
		change   func(t *testing.T, dir string)
		imported bool
		origin   Origin
		err      string
	}{
		{"imported", func(*testing.T, string) {}, true, want, ""},
		{"imported before origins", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, originFile)) }, true, Origin{}, ""},
		{"built here", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, originFile))
			mustWrite(t, filepath.Join(dir, "log.txt"), "compiling\n", 0o644)
		}, false, Origin{}, ""},
		{"damaged origin", func(t *testing.T, dir string) { mustWrite(t, filepath.Join(dir, originFile), "{", 0o644) }, true, Origin{}, "origin.json is unreadable"},
		{"unknown field", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, originFile), `{"writer":"x","trusted":true}`, 0o644)
		}, true, Origin{}, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cache{Dir: t.TempDir()}
			if _, err := c.Import(key, step, target, declared, record(t, e), noLimit, want, fetchFrom(blobs)); err != nil {
				t.Fatal(err)
			}
			tc.change(t, c.entryDir(key))
			o, imported, err := c.Origin(key)
			if imported != tc.imported || o != tc.origin || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Origin = %+v, %v, %v; want %+v, %v, error %q", o, imported, err, tc.origin, tc.imported, tc.err)
			}
			if err := c.Forget(key); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Restore(key, step, target, declared, t.TempDir()); !errors.Is(err, ErrMiss) {
				t.Errorf("Restore after Forget = %v, want a miss", err)
			}
			if err := c.Forget(key); err != nil {
				t.Errorf("Forget of a missing entry = %v", err)
			}
		})
	}
}
