// Package treehash defines which files make up a source tree and computes
// its "h1:" hash, the hash golang.org/x/mod/sumdb/dirhash defines (Hash1)
// and go.sum uses.
//
// The file set of a tree rooted at R is every regular file below R,
// recursively, named by its slash-separated path relative to R, with these
// rules:
//   - directories named .git, .hg, .svn or .bzr are skipped wherever they
//     are: version-control metadata is not source; so are __pycache__
//     folders, which Python writes next to the code it imports;
//   - a symbolic link, device, FIFO or socket anywhere in the tree is an
//     error naming it: its meaning depends on the machine;
//   - a path containing a newline is an error (Hash1 cannot express it);
//   - directories themselves, empty or not, do not count, and neither do
//     modes or times: h1 covers names and contents only.
//
// Hash1 is: for each file in byte order of its name, the line
// "<hex sha256 of content>  <name>\n"; h1 is "h1:" followed by the standard
// base64 of the sha256 of those lines. Files are hashed once each, in
// parallel, and [Sum] keeps the per-file digests so a drift can name the
// file that changed.
package treehash

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// skipDirs are version-control folders left out of every tree.
var skipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true, "__pycache__": true}

// File is one member of a tree with the sha256 of its content.
type File struct {
	Path   string // slash-separated, relative to the root
	SHA256 string // lowercase hex
}

// Line renders the file as a Hash1 summary line without its newline.
func (f File) Line() string { return f.SHA256 + "  " + f.Path }

// ParseLine reads a summary line written by [File.Line].
func ParseLine(s string) (File, error) {
	sum, name, ok := strings.Cut(s, "  ")
	if !ok || len(sum) != 64 || name == "" {
		return File{}, fmt.Errorf("malformed tree line %q: want \"<sha256>  <path>\"", s)
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return File{}, fmt.Errorf("malformed tree line %q: %w", s, err)
	}
	return File{Path: name, SHA256: sum}, nil
}

// Sum is the hash of a tree and of each of its files, sorted by path.
type Sum struct {
	H1    string
	Files []File
}

// List returns the file set of root, sorted, as slash-separated paths.
func List(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case d.IsDir():
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		case t.IsRegular():
			if strings.ContainsAny(rel, "\n\r") {
				return fmt.Errorf("%s: file name contains a newline", rel)
			}
			files = append(files, rel)
			return nil
		case t&fs.ModeSymlink != 0:
			return fmt.Errorf("%s: symbolic link in source tree: replace it with the file it points to (trees are hashed by content, links depend on the machine)", rel)
		default:
			return fmt.Errorf("%s: special file (%v) in source tree: remove it", rel, t)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("list tree %s: %w", root, err)
	}
	sort.Strings(files)
	return files, nil
}

// Hasher gives the sha256 of a file, perhaps from a memo of earlier runs
// (digestmemo's Table).
type Hasher interface {
	SHA256(path string) (sha string, size int64, err error)
}

// Hash computes the Sum of the tree at root, hashing files on all cores.
func Hash(ctx context.Context, root string) (Sum, error) {
	return HashWith(ctx, root, nil)
}

// HashWith is Hash with the files' digests asked of h (nil: read them).
func HashWith(ctx context.Context, root string, h Hasher) (Sum, error) {
	names, err := List(root)
	if err != nil {
		return Sum{}, err
	}
	files := make([]File, len(names))
	for i, n := range names {
		files[i].Path = n
	}
	workers := min(runtime.GOMAXPROCS(0), max(len(files), 1))
	jobs := make(chan int)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := range jobs {
				if errs[w] != nil {
					continue
				}
				p := filepath.Join(root, filepath.FromSlash(files[i].Path))
				if h != nil {
					files[i].SHA256, _, errs[w] = h.SHA256(p)
				} else {
					files[i].SHA256, errs[w] = hashFile(p)
				}
			}
		}(w)
	}
feed:
	for i := range files {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Sum{}, err
	}
	for _, err := range errs {
		if err != nil {
			return Sum{}, fmt.Errorf("hash tree %s: %w", root, err)
		}
	}
	return Sum{H1: H1(files), Files: files}, nil
}

func hashFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// H1 computes the h1: hash of files, which must be sorted by path.
func H1(files []File) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s  %s\n", f.SHA256, f.Path)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// ChangeKind says how a file differs between two trees.
type ChangeKind string

// The kinds of change.
const (
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
	Changed ChangeKind = "changed"
)

// Change is one file that differs between an expected and a found tree.
type Change struct {
	Path     string
	Kind     ChangeKind
	Expected string // sha256 in the expected tree ("" when added)
	Found    string // sha256 in the found tree ("" when removed)
}

// String renders the change for a message.
func (c Change) String() string {
	switch c.Kind {
	case Added:
		return c.Path + ": added"
	case Removed:
		return c.Path + ": removed"
	}
	return fmt.Sprintf("%s: changed (sha256 %s, expected %s)", c.Path, short(c.Found), short(c.Expected))
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Diff lists the files that differ between want and got, both sorted.
func Diff(want, got []File) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || (i < len(want) && want[i].Path < got[j].Path):
			out = append(out, Change{Path: want[i].Path, Kind: Removed, Expected: want[i].SHA256})
			i++
		case i == len(want) || got[j].Path < want[i].Path:
			out = append(out, Change{Path: got[j].Path, Kind: Added, Found: got[j].SHA256})
			j++
		default:
			if want[i].SHA256 != got[j].SHA256 {
				out = append(out, Change{Path: want[i].Path, Kind: Changed, Expected: want[i].SHA256, Found: got[j].SHA256})
			}
			i++
			j++
		}
	}
	return out
}

// Copy copies the file set of src into dst (created if needed), keeping
// only the executable bit of each file's mode: files become 0755 or 0644,
// directories 0755. It refuses what List refuses.
func Copy(ctx context.Context, src, dst string) error {
	names, err := List(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("copy tree: %w", err)
	}
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := CopyFile(filepath.Join(src, filepath.FromSlash(n)), filepath.Join(dst, filepath.FromSlash(n))); err != nil {
			return fmt.Errorf("copy tree %s: %w", src, err)
		}
	}
	return nil
}

// CopyFile copies one regular file, creating parent folders, with mode 0755
// when the source is executable by anyone and 0644 otherwise.
func CopyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", from)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, NormalMode(st.Mode()))
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", to, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(to, NormalMode(st.Mode()))
}

// NormalMode maps a file mode to 0755 when any executable bit is set and to
// 0644 otherwise: the only modes mkrelease writes.
func NormalMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}
