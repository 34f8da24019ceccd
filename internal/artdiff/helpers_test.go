package artdiff

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// epoch is the default mtime of test archive members (even seconds, as
// MS-DOS times need).
func epoch() time.Time { return time.Date(2024, 1, 2, 3, 4, 6, 0, time.UTC) }

// zmember is a zip member to write.
type zmember struct {
	name  string
	body  string
	mode  fs.FileMode // 0644 when 0
	mtime time.Time   // epoch when zero
	store bool        // stored instead of deflated
}

// zipOpts are whole-archive options of mkzip.
type zipOpts struct {
	comment string
	level   int // deflate level; flate.DefaultCompression when 0
}

// mkzip builds a zip archive in memory.
func mkzip(o zipOpts, members ...zmember) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	if o.level != 0 {
		w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(out, o.level)
		})
	}
	for _, m := range members {
		h := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: m.mtime}
		if m.store {
			h.Method = zip.Store
		}
		if h.Modified.IsZero() {
			h.Modified = epoch()
		}
		mode := m.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		fw, err := w.CreateHeader(h)
		must(err)
		_, err = io.WriteString(fw, m.body)
		must(err)
	}
	if o.comment != "" {
		must(w.SetComment(o.comment))
	}
	must(w.Close())
	return buf.Bytes()
}

// tmember is a tar entry to write.
type tmember struct {
	name  string
	body  string
	mode  int64 // 0644 (0755 for a directory) when 0
	mtime time.Time
	typ   byte // tar.TypeReg, or tar.TypeDir for a name ending in "/", when 0
	link  string
	uid   int
}

// tarOpts are whole-archive options of mktar and mktgz.
type tarOpts struct {
	level   int       // gzip level; gzip.BestCompression when 0
	gzMtime time.Time // gzip header mtime
}

// mktar builds a tar archive in memory.
func mktar(members ...tmember) []byte {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Mode: m.mode, ModTime: m.mtime, Typeflag: m.typ, Linkname: m.link, Uid: m.uid, Format: tar.FormatUSTAR}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
			if m.name[len(m.name)-1] == '/' {
				h.Typeflag = tar.TypeDir
			}
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if h.ModTime.IsZero() {
			h.ModTime = epoch()
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(m.body))
		}
		must(w.WriteHeader(h))
		if h.Typeflag == tar.TypeReg {
			_, err := io.WriteString(w, m.body)
			must(err)
		}
	}
	must(w.Close())
	return buf.Bytes()
}

// mktgz builds a tar.gz archive in memory.
func mktgz(o tarOpts, members ...tmember) []byte {
	return gz(o, mktar(members...))
}

// gz compresses data.
func gz(o tarOpts, data []byte) []byte {
	level := o.level
	if level == 0 {
		level = gzip.BestCompression
	}
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, level)
	must(err)
	w.ModTime = o.gzMtime
	_, err = w.Write(data)
	must(err)
	must(w.Close())
	return buf.Bytes()
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// changed returns a copy of ms with member i changed by f.
func changed[M any](ms []M, i int, f func(*M)) []M {
	ms = slices.Clone(ms)
	f(&ms[i])
	return ms
}

// write writes data to a new file in dir and returns its path.
func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// compareBytes writes a and b to files and compares them as name.
func compareBytes(t testing.TB, name string, a, b []byte) (*Difference, error) {
	t.Helper()
	dir := t.TempDir()
	return Compare(name, write(t, dir, "original/"+name, a), write(t, dir, "rebuilt/"+name, b))
}
