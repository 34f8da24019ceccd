package extract

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mholt/archives"
	"github.com/ulikunitz/xz"
)

// ent describes one archive entry for the test archive builders.
type ent struct {
	name string
	typ  byte        // tar type flag; zero means regular file
	mode fs.FileMode // permission bits (zip: plus type bits)
	body string
	link string // symlink or hard link target
}

func file(name, body string) ent { return ent{name: name, typ: tar.TypeReg, mode: 0o644, body: body} }
func execFile(name, body string) ent {
	return ent{name: name, typ: tar.TypeReg, mode: 0o755, body: body}
}
func dir(name string) ent { return ent{name: name, typ: tar.TypeDir, mode: 0o755} }
func symlink(name, target string) ent {
	return ent{name: name, typ: tar.TypeSymlink, mode: 0o777, link: target}
}
func hardlink(name, target string) ent {
	return ent{name: name, typ: tar.TypeLink, mode: 0o644, link: target}
}
func special(name string, typ byte) ent { return ent{name: name, typ: typ, mode: 0o644} }

func makeTar(t testing.TB, entries ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Mode: int64(e.mode.Perm()), Linkname: e.link, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("tar header %q: %v", e.name, err)
		}
		if typ == tar.TypeReg {
			if _, err := io.WriteString(tw, e.body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func makeZip(t testing.TB, entries ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := e.mode.Perm()
		body := e.body
		switch e.typ {
		case tar.TypeDir:
			mode |= fs.ModeDir
			hdr.Method = zip.Store
		case tar.TypeSymlink:
			mode |= fs.ModeSymlink
			body = e.link
		case tar.TypeChar:
			mode |= fs.ModeDevice | fs.ModeCharDevice
		case tar.TypeBlock:
			mode |= fs.ModeDevice
		case tar.TypeFifo:
			mode |= fs.ModeNamedPipe
		case 's':
			mode |= fs.ModeSocket
		}
		hdr.SetMode(mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			t.Fatalf("zip header %q: %v", e.name, err)
		}
		if _, err := io.WriteString(w, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawTar builds a one-entry tar by hand, for names archive/tar refuses to
// write.
func rawTar(name string, typ byte, body string) []byte {
	hdr := make([]byte, 512)
	copy(hdr[0:100], name)
	copy(hdr[100:], "0000644\x00")
	copy(hdr[108:], "0000000\x00")
	copy(hdr[116:], "0000000\x00")
	copy(hdr[124:], fmt.Sprintf("%011o\x00", len(body)))
	copy(hdr[136:], "00000000000\x00")
	hdr[156] = typ
	copy(hdr[257:], "ustar\x0000")
	copy(hdr[148:156], "        ")
	sum := 0
	for _, c := range hdr {
		sum += int(c)
	}
	copy(hdr[148:], fmt.Sprintf("%06o\x00 ", sum))
	out := append(hdr, body...)
	out = append(out, make([]byte, (512-len(body)%512)%512)...)
	return append(out, make([]byte, 1024)...)
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func xzBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := xz.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// compressWith compresses b with one of the archives package's compressors
// (used for bzip2 and zstd, which the standard library cannot write).
func compressWith(t testing.TB, c archives.Compressor, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := c.OpenWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// streamOnly hides the io.ReaderAt and io.Seeker of a reader.
type streamOnly struct{ io.Reader }

// listTree describes every path under root: "dir 0755", "file 0644 <body>"
// or "symlink -> target".
func listTree(t testing.TB, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode().Type() == fs.ModeSymlink:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			got[rel] = "symlink -> " + target
		case fi.IsDir():
			got[rel] = "dir " + modeString(fi.Mode())
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			got[rel] = "file " + modeString(fi.Mode()) + " " + string(b)
		default:
			got[rel] = "special " + fi.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func modeString(m fs.FileMode) string { return fmt.Sprintf("%04o", uint32(m.Perm())) }

// entriesOf lists the names in dir, sorted.
func entriesOf(t testing.TB, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	slices.Sort(names)
	return names
}

// assertNothingLeft checks that after a failed extraction into
// parent/dest, parent is empty: no dest, no temporary directory.
func assertNothingLeft(t testing.TB, parent string) {
	t.Helper()
	if names := entriesOf(t, parent); len(names) != 0 {
		t.Fatalf("after a failed extraction the parent directory holds %q, want nothing", names)
	}
}

// escapes reports whether following the symlinks in rel (relative to root)
// can lead outside root. It resolves one element at a time, as the kernel
// does, following at most 40 links (a loop is not an escape).
func escapes(root, rel string) (bool, error) {
	var stack []string
	todo := strings.Split(rel, "/")
	hops := 0
	for len(todo) > 0 {
		elem := todo[0]
		todo = todo[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			if len(stack) == 0 {
				return true, nil
			}
			stack = stack[:len(stack)-1]
			continue
		}
		cur := path.Join(append(slices.Clone(stack), elem)...)
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(cur)))
		if err != nil || fi.Mode().Type() != fs.ModeSymlink {
			stack = append(stack, elem) // a real entry, or dangling: stays put
			continue
		}
		hops++
		if hops > 40 {
			return false, nil
		}
		target, err := os.Readlink(filepath.Join(root, filepath.FromSlash(cur)))
		if err != nil {
			return false, err
		}
		if strings.HasPrefix(target, "/") {
			return true, nil
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return false, nil
}
