package tarball

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/klauspost/pgzip"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
)

// Level is the deflate level of every archive. Changing it (or the pinned
// klauspost/compress and klauspost/pgzip versions) changes the bytes of
// every archive. Level 6: bundles are mostly wheels, already compressed,
// and klauspost's levels up to 6 detect incompressible input and pass over
// it about 7 times faster than level 7 (0.11 s against 0.73 s for a 160 MiB
// wheel, for the same size); on text-heavy trees level 6 is about 1.5 %
// larger than level 7.
const Level = 6

// BlockSize is the number of uncompressed bytes pgzip compresses as one
// independent block. Block boundaries are a function of the input only, so
// the output does not depend on how many blocks are compressed at once;
// changing BlockSize changes the bytes of every archive.
const BlockSize = 1 << 20

// gzipOS is the gzip header's OS byte: 255, "unknown" (what Go's
// compress/gzip writes), so the header says nothing about the host.
const gzipOS = 255

// maxNameLen bounds full entry names (PATH_MAX on Linux; internal/extract
// refuses longer names).
const maxNameLen = 4096

// maxUSTARTime is the largest mtime the 11 octal digits of a USTAR header
// hold (year 2242); beyond it a PAX "mtime" record would be needed.
const maxUSTARTime = 1<<33 - 1

// copyBufSize is the size of the reads from each file.
const copyBufSize = 256 << 10

// Entry is one file (or directory) of an archive.
type Entry struct {
	// Path is slash-separated and relative to the root folder
	// ("wheels/vexl_compiler-0.3.0-py3-none-any.whl"): no empty, "." or
	// ".." element, not absolute, no backslash or control character.
	Path string
	// File is read for the content, unless Data is set; only its content
	// and size are used (never its mode, owner or times). It must be a
	// regular file (or a symlink to one).
	File string
	// Data is the content when File is empty (nil means an empty file).
	Data []byte
	// Mode is the file's mode: 0755 when any executable bit is set, else
	// 0644. With fs.ModeDir set the entry is a directory (0755) and File
	// and Data must be empty. Any other type bit (symlink, device, pipe,
	// socket) is refused.
	Mode fs.FileMode
	// SHA256 is the hex sha256 of File's content when the caller already
	// knows it: Key uses it instead of reading the file; Write ignores it.
	SHA256 string
}

// Options are the archive-wide settings.
type Options struct {
	// Root is the single top-level folder every entry is under
	// ("vexl-0.3.0-linux-x86_64"); one path element, required.
	Root string
	// MTime is the modification time of every entry, in seconds since
	// the Unix epoch (SOURCE_DATE_EPOCH); negative values are clamped to
	// 0, values beyond 2242 (which USTAR cannot hold) are refused.
	MTime int64
	// Concurrency is how many blocks are compressed at once; 0 means
	// GOMAXPROCS. It changes speed and memory only, never the bytes.
	Concurrency int
}

// item is one archive member in write order.
type item struct {
	name string // full name as stored, directories with a trailing "/"
	dir  bool
	mode int64
	e    *Entry // nil for implied directories
	size int64  // for File entries, the size seen when planning
}

// Write writes the archive of entries to w and returns its sha256 (hex)
// and size. Entries may be given in any order. Nothing is written when an
// entry is refused; a read error or a cancelled ctx stops the write with
// an error, leaving w with a partial archive (use [WriteFile] for an
// all-or-nothing file).
func Write(ctx context.Context, w io.Writer, entries []Entry, o Options) (sha string, size int64, err error) {
	items, mtime, err := plan(entries, o)
	if err != nil {
		return "", 0, err
	}
	blocks := o.Concurrency
	if blocks <= 0 {
		blocks = runtime.GOMAXPROCS(0)
	}
	sink := &hashWriter{w: w, h: sha256.New()}
	gz, err := pgzip.NewWriterLevel(sink, Level)
	if err == nil {
		err = gz.SetConcurrency(BlockSize, blocks)
	}
	if err != nil {
		return "", 0, fmt.Errorf("tarball: set up gzip: %w", err)
	}
	gz.Header = pgzip.Header{ModTime: time.Unix(0, 0), OS: gzipOS}
	tw := tar.NewWriter(gz)

	// stop ends the write early when ctx is done or w has failed.
	stop := func() error {
		if err := sink.failure(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("tarball: %w", err)
		}
		return nil
	}
	err = writeItems(stop, tw, items, mtime)
	if err == nil {
		if err = tw.Close(); err != nil {
			err = fmt.Errorf("tarball: finish tar stream: %w", err)
		}
	}
	if err != nil {
		// Nothing more reaches w, but the compressor still runs to its
		// end so that its goroutines finish.
		sink.abandon()
	}
	if cerr := gz.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("tarball: finish gzip stream: %w", cerr)
	}
	if ferr := sink.failure(); ferr != nil {
		err = ferr // the root cause
	}
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(sink.h.Sum(nil)), sink.n, nil
}

// WriteFile writes the archive of entries to path atomically (a temporary
// name in the same folder, synced and renamed into place; mode 0644) and
// returns its sha256 (hex) and size. On any error path is left untouched.
func WriteFile(ctx context.Context, path string, entries []Entry, o Options) (sha string, size int64, err error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return "", 0, fmt.Errorf("%w (check that the folder exists and is writable)", err)
	}
	defer f.Abort() // no-op after Commit
	sha, size, err = Write(ctx, f, entries, o)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return "", 0, err
	}
	return sha, size, nil
}

func writeItems(stop func() error, tw *tar.Writer, items []item, mtime time.Time) error {
	buf := make([]byte, copyBufSize)
	for _, it := range items {
		if err := stop(); err != nil {
			return err
		}
		hdr := &tar.Header{
			Name:    it.name,
			Mode:    it.mode,
			ModTime: mtime,
			Format:  tar.FormatUnknown, // USTAR when it fits, else PAX
		}
		if it.dir {
			hdr.Typeflag = tar.TypeDir
			if err := tw.WriteHeader(hdr); err != nil {
				return fmt.Errorf("tarball: entry %s: %w", it.name, err)
			}
			continue
		}
		hdr.Typeflag = tar.TypeReg
		if it.e.File == "" {
			hdr.Size = int64(len(it.e.Data))
			err := tw.WriteHeader(hdr)
			if err == nil {
				_, err = tw.Write(it.e.Data)
			}
			if err != nil {
				return fmt.Errorf("tarball: entry %s: %w", it.name, err)
			}
			continue
		}
		if err := writeFile(stop, tw, hdr, it, buf); err != nil {
			return err
		}
	}
	return nil
}

// writeFile copies one file into the archive, reading it once.
func writeFile(stop func() error, tw *tar.Writer, hdr *tar.Header, it item, buf []byte) error {
	src := it.e.File
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("tarball: entry %s: %w", it.name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("tarball: entry %s: %w", it.name, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("tarball: entry %s: %s is not a regular file (%v); archives hold regular files and directories only", it.name, src, st.Mode().Type())
	}
	if st.Size() != it.size {
		return changedError(it.name, src)
	}
	hdr.Size = st.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("tarball: entry %s: %w", it.name, err)
	}
	if err := copyExact(stop, tw, f, hdr.Size, buf); err != nil {
		if serr := stop(); serr != nil {
			return serr // cancelled, or the output failed
		}
		if errors.Is(err, errSizeChanged) {
			return changedError(it.name, src)
		}
		return fmt.Errorf("tarball: entry %s: read %s: %w", it.name, src, err)
	}
	return nil
}

func changedError(name, src string) error {
	return fmt.Errorf("tarball: entry %s: %s changed size while it was being archived; make sure nothing writes to it during the build, then retry", name, src)
}

var errSizeChanged = errors.New("size changed")

// copyExact copies exactly size bytes from r to w and checks that r ends
// there, calling stop between reads.
func copyExact(stop func() error, w io.Writer, r io.Reader, size int64, buf []byte) error {
	left := size
	for left > 0 {
		if err := stop(); err != nil {
			return err
		}
		b := buf
		if int64(len(b)) > left {
			b = b[:left]
		}
		n, err := r.Read(b)
		if n > 0 {
			if _, werr := w.Write(b[:n]); werr != nil {
				return werr
			}
			left -= int64(n)
		}
		if err == io.EOF {
			if left > 0 {
				return errSizeChanged
			}
			break
		}
		if err != nil {
			return err
		}
	}
	// The file must end here: one more byte means it grew.
	var one [1]byte
	for {
		n, err := r.Read(one[:])
		if n > 0 {
			return errSizeChanged
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// hashWriter hashes and counts what it passes on to w. It never returns
// an error to the compressor (whose Close would then leave a goroutine
// behind): the first error of w is kept for failure, and from then on, or
// once abandoned, writes are dropped.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64

	mu      sync.Mutex
	err     error
	dropped bool
}

func (s *hashWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped || s.err != nil {
		return len(p), nil
	}
	n, err := s.w.Write(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		s.err = fmt.Errorf("tarball: write archive: %w", err)
	}
	return len(p), nil
}

// failure returns the first error of w, if any.
func (s *hashWriter) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// abandon drops every later write.
func (s *hashWriter) abandon() {
	s.mu.Lock()
	s.dropped = true
	s.mu.Unlock()
}

// plan validates the entries and returns every member, implied
// directories included, in write order.
func plan(entries []Entry, o Options) ([]item, time.Time, error) {
	if err := checkElement(o.Root); err != nil {
		return nil, time.Time{}, fmt.Errorf("tarball: root folder %q: %w; give one folder name such as NAME-VERSION-TARGET", o.Root, err)
	}
	mtime := o.MTime
	if mtime < 0 {
		mtime = 0
	}
	if mtime > maxUSTARTime {
		return nil, time.Time{}, fmt.Errorf("tarball: mtime %d is after the year 2242, which a USTAR header cannot hold; check SOURCE_DATE_EPOCH", o.MTime)
	}
	byName := map[string]*item{} // key: name without trailing "/"
	folded := map[string]string{}
	var items []*item
	add := func(it *item) error {
		key := strings.TrimSuffix(it.name, "/")
		if prev, ok := byName[key]; ok {
			switch {
			case prev.dir && it.dir && (prev.e == nil || it.e == nil):
				// An implied directory also given explicitly.
				if it.e != nil {
					prev.e = it.e
				}
				return nil
			case prev.dir != it.dir:
				return fmt.Errorf("tarball: %s is both a file and a directory; rename one of them", key)
			default:
				return fmt.Errorf("tarball: entry %s is given twice; each path may appear once", key)
			}
		}
		fold := strings.ToLower(key)
		if other, ok := folded[fold]; ok {
			return fmt.Errorf("tarball: entries %s and %s differ only in letter case and would collide when extracted on macOS or Windows; rename one of them", other, key)
		}
		folded[fold] = key
		byName[key] = it
		items = append(items, it)
		return nil
	}
	if err := add(&item{name: o.Root + "/", dir: true, mode: 0o755}); err != nil {
		return nil, time.Time{}, err
	}
	for i := range entries {
		e := &entries[i]
		if err := checkPath(e.Path); err != nil {
			return nil, time.Time{}, fmt.Errorf("tarball: entry path %q: %w; give a clean relative path such as wheels/x.whl", e.Path, err)
		}
		full := o.Root + "/" + e.Path
		if len(full)+1 > maxNameLen {
			return nil, time.Time{}, fmt.Errorf("tarball: entry %s: name is %d bytes long, more than %d; shorten it", full, len(full), maxNameLen)
		}
		// Parent directories, implied.
		for i := len(o.Root) + 1; i < len(full); i++ {
			if full[i] == '/' {
				if err := add(&item{name: full[:i+1], dir: true, mode: 0o755}); err != nil {
					return nil, time.Time{}, err
				}
			}
		}
		t := e.Mode.Type()
		switch {
		case t == fs.ModeDir:
			if e.File != "" || e.Data != nil {
				return nil, time.Time{}, fmt.Errorf("tarball: entry %s is a directory but has content; drop File and Data, or fs.ModeDir", full)
			}
			if err := add(&item{name: full + "/", dir: true, mode: 0o755, e: e}); err != nil {
				return nil, time.Time{}, err
			}
			continue
		case t != 0:
			return nil, time.Time{}, fmt.Errorf("tarball: entry %s has mode %v; archives hold regular files and directories only (no links, devices, pipes or sockets)", full, e.Mode)
		}
		if e.File != "" && e.Data != nil {
			return nil, time.Time{}, fmt.Errorf("tarball: entry %s has both File and Data; give one", full)
		}
		mode := int64(0o644)
		if e.Mode&0o111 != 0 {
			mode = 0o755
		}
		it := &item{name: full, mode: mode, e: e}
		if e.File != "" {
			st, err := os.Stat(e.File)
			if err != nil {
				return nil, time.Time{}, fmt.Errorf("tarball: entry %s: %w", full, err)
			}
			if !st.Mode().IsRegular() {
				return nil, time.Time{}, fmt.Errorf("tarball: entry %s: %s is not a regular file (%v); archives hold regular files and directories only", full, filepath.Clean(e.File), st.Mode().Type())
			}
			it.size = st.Size()
		}
		if err := add(it); err != nil {
			return nil, time.Time{}, err
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].name < items[j].name })
	out := make([]item, len(items))
	for i, it := range items {
		out[i] = *it
	}
	return out, time.Unix(mtime, 0), nil
}

// checkPath checks an entry path relative to the root.
func checkPath(p string) error {
	if p == "" {
		return errors.New("empty path")
	}
	if strings.HasPrefix(p, "/") {
		return errors.New("absolute path")
	}
	first := true
	for elem := range strings.SplitSeq(p, "/") {
		if err := checkElement(elem); err != nil {
			return err
		}
		if first && len(elem) >= 2 && elem[1] == ':' && isLetter(elem[0]) {
			return errors.New("starts with a Windows drive letter")
		}
		first = false
	}
	return nil
}

// checkElement checks one path element.
func checkElement(elem string) error {
	switch elem {
	case "":
		return errors.New("empty path element (leading, trailing or doubled \"/\")")
	case ".":
		return errors.New("\".\" element")
	case "..":
		return errors.New("\"..\" element (path traversal)")
	}
	if !utf8.ValidString(elem) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range elem {
		switch {
		case r == '/':
			return errors.New("contains \"/\"")
		case r == '\\':
			return errors.New("contains a backslash")
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("contains control character %U", r)
		}
	}
	return nil
}

func isLetter(c byte) bool {
	c |= 0x20
	return 'a' <= c && c <= 'z'
}
