package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/internal/testhook"
)

// Options control an extraction. The zero value strips nothing, refuses
// symlinks and applies the default limits.
type Options struct {
	// StripComponents drops this many leading path elements from every
	// name (like tar --strip-components), counted after cleaning, so a
	// leading "./" is not an element. A directory with no more elements
	// than that is skipped; a file or link is refused (ErrStripComponents).
	// Hard link targets are stripped the same way.
	StripComponents int

	// AllowSymlinks keeps relative symlinks whose target provably stays
	// inside the extraction root. When false, any symlink is refused
	// (ErrSymlink).
	AllowSymlinks bool

	// AllowCaseCollisions accepts two paths that differ only in case
	// ("Makefile" and "makefile"), for archives known to be extracted on a
	// case-sensitive file system only. When false, they are refused
	// (ErrDuplicate), since a case-insensitive file system (macOS,
	// Windows) would keep one file for both. Paths that are one name under
	// Unicode normalisation are refused either way.
	AllowCaseCollisions bool

	// Tee, when not nil, is written every byte of the archive as it is
	// read, and the archive is read to its end even when the extraction
	// stops early (unless ctx is cancelled), so that Tee sees all of it
	// (a read error leaves it short): a caller hashes the very bytes it
	// extracts, reading them once. With Tee, a zip is copied to a
	// temporary file first, as from a reader that cannot seek.
	Tee io.Writer

	// Limits bound what the archive may make us write.
	Limits Limits

	// Settings name where the user of the caller raises each limit, for
	// the advice of a refusal by it. A limit without one is fixed for
	// the caller's kind of archive, and the advice says so rather than
	// naming a setting that does not exist.
	Settings Settings
}

// Settings name, for the advice of a refusal, the caller's setting that
// raises each limit, as the user writes it: "max_entries of this
// [[source]] in release.toml", "--max-entries". Empty: the limit is fixed.
type Settings struct {
	Entries, FileBytes, TotalBytes, Ratio string
}

// Limits bound an extraction. In every field, zero selects the default
// (the Default* constants) and a negative value means no limit.
type Limits struct {
	// MaxEntries bounds the number of archive entries read plus the
	// directories created implicitly as parents of entries (ErrTooMany).
	MaxEntries int
	// MaxFileBytes bounds the size of each extracted file (ErrTooLarge).
	MaxFileBytes int64
	// MaxTotalBytes bounds the sum of all extracted file sizes, hard link
	// copies included (ErrTooLarge). A zip read from a stream that cannot
	// seek is first copied to a temporary file, which is bounded by it too.
	MaxTotalBytes int64
	// MaxRatio bounds the bytes extracted so far relative to the
	// compressed bytes read so far from the source (for zip: the archive's
	// size), checked as data streams (ErrBomb), so a decompression bomb is
	// stopped before much is written.
	MaxRatio float64
	// RatioAllowance is the number of bytes that may be extracted beyond
	// MaxRatio × compressed bytes, so that small archives of very
	// compressible content are not refused.
	RatioAllowance int64
}

// Default limits.
const (
	DefaultMaxEntries     = 1 << 20  // 1,048,576 entries
	DefaultMaxFileBytes   = 4 << 30  // 4 GiB per file
	DefaultMaxTotalBytes  = 16 << 30 // 16 GiB in all
	DefaultMaxRatio       = 100      // extracted ≤ 100 × compressed + allowance
	DefaultRatioAllowance = 64 << 20 // 64 MiB
)

// Report describes an extraction.
type Report struct {
	// Format is the archive format found: one of the Format* constants.
	Format string
	// Entries is the number of entries read from the archive.
	Entries int
	// Files counts the regular files written, hard link copies included.
	Files int
	// HardLinks counts the files written as copies of a hard link target.
	HardLinks int
	// Dirs counts the directories created, implicit parents included.
	Dirs int
	// Symlinks counts the symlinks created.
	Symlinks int
	// Bytes is the total size of the files written.
	Bytes int64
	// ArchiveBytes is the number of bytes read from the archive (for zip:
	// its size).
	ArchiveBytes int64
}

// limits are Limits resolved: defaults applied, "no limit" as the maximum.
type limits struct {
	entries   int
	file      int64
	total     int64
	ratio     float64 // +Inf: no ratio check
	allowance int64
}

func (o Options) resolve() (limits, error) {
	if o.StripComponents < 0 {
		return limits{}, fmt.Errorf("invalid StripComponents %d: must not be negative", o.StripComponents)
	}
	l := o.Limits
	if math.IsNaN(l.MaxRatio) {
		return limits{}, errors.New("invalid MaxRatio NaN")
	}
	pick := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return math.MaxInt64
		}
		return v
	}
	r := limits{
		entries:   int(min(pick(int64(l.MaxEntries), DefaultMaxEntries), math.MaxInt)),
		file:      pick(l.MaxFileBytes, DefaultMaxFileBytes),
		total:     pick(l.MaxTotalBytes, DefaultMaxTotalBytes),
		ratio:     l.MaxRatio,
		allowance: l.RatioAllowance,
	}
	switch {
	case r.ratio == 0:
		r.ratio = DefaultMaxRatio
	case r.ratio < 0:
		r.ratio = math.Inf(1)
	}
	switch {
	case r.allowance == 0:
		r.allowance = DefaultRatioAllowance
	case r.allowance < 0:
		r.allowance = 0
	}
	return r, nil
}

// ExtractFile extracts the archive file at path archive into the new
// directory dest, like [Extract]. The archive must be a regular file.
func ExtractFile(ctx context.Context, archive, dest string, opts Options) (*Report, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", archive, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", archive, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("extract %s: not a regular file (%s); give the path of an archive file", archive, fi.Mode().Type())
	}
	testhook.Count(testhook.CountExtract, archive)
	return Extract(ctx, archive, f, dest, opts)
}

// Extract reads an archive from r and extracts it into the new directory
// dest, enforcing the rules in the package documentation. The format is
// recognised from the content; name is used in messages only.
//
// If r is also an [io.ReaderAt] and an [io.Seeker] (an *os.File, a
// *bytes.Reader), the archive is read from its current offset to its end
// without buffering; otherwise a zip is first copied to a temporary file
// beside dest (tar formats always stream).
//
// dest must not exist and its parent must. Entries are written into a
// temporary directory beside dest, flushed to stable storage and renamed
// to dest only when the whole archive has been extracted; on any error
// the temporary directory is removed, so dest either holds the complete
// archive or does not exist.
//
// Refusals are *EntryError values whose Reason is one of the Err* sentinel
// errors; cancellation of ctx returns its error, wrapped. On error the
// returned Report (non-nil once extraction has started) tells how far
// extraction had got before it was undone.
func Extract(ctx context.Context, name string, r io.Reader, dest string, opts Options) (rep *Report, err error) {
	if opts.Tee != nil {
		tee := io.TeeReader(r, opts.Tee)
		defer func() {
			if ctx.Err() == nil {
				io.Copy(io.Discard, tee) // the rest, for Tee alone
			}
		}()
		r = tee
	}
	lim, err := opts.resolve()
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", name, err)
	}
	if dest == "" {
		return nil, fmt.Errorf("extract %s: empty destination directory name", name)
	}
	dest = filepath.Clean(dest)
	if _, err := os.Lstat(dest); err == nil {
		return nil, fmt.Errorf("extract %s: destination %s: %w; extract into a new directory or remove it first", name, dest, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("extract %s: destination: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("extract %s: %w", name, err)
	}

	parent := filepath.Dir(dest)
	prefix := filepath.Base(dest)
	if len(prefix) > 200 { // leave room for the suffix within NAME_MAX
		prefix = strings.ToValidUTF8(prefix[:200], "")
	}
	work, err := os.MkdirTemp(parent, prefix+".extract-*")
	if err != nil {
		return nil, fmt.Errorf("extract %s: create a temporary directory beside the destination: %w", name, err)
	}
	defer func() {
		// On success the extracted tree has already been renamed out.
		if rmErr := os.RemoveAll(work); rmErr != nil {
			err = errors.Join(err, fmt.Errorf("extract %s: remove temporary directory %s: %w; remove it by hand", name, work, rmErr))
		}
	}()
	rootPath := filepath.Join(work, "root")
	if err := mkdirNormalised(rootPath); err != nil {
		return nil, fmt.Errorf("extract %s: %w", name, err)
	}
	root, err := os.OpenRoot(rootPath)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", name, err)
	}
	defer root.Close()

	rep = &Report{}
	s := newState(ctx, name, root, opts, lim, rep)
	if err := s.run(r, work); err != nil {
		return rep, err
	}
	if err := flushTree(rootPath); err != nil {
		return rep, fmt.Errorf("extract %s: flush extracted files to disk: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("extract %s: %w", name, err)
	}
	if err := renameNoReplace(rootPath, dest); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return rep, fmt.Errorf("extract %s: destination %s appeared during extraction: %w; extract into a new directory", name, dest, err)
		}
		return rep, fmt.Errorf("extract %s: move into place: %w", name, err)
	}
	syncDir(parent) // best effort: makes the rename itself durable
	return rep, nil
}

// mkdirNormalised creates a directory with mode 0755 whatever the umask.
func mkdirNormalised(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755)
}

// syncDir fsyncs a directory, ignoring errors (some file systems refuse).
func syncDir(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = f.Sync()
	_ = f.Close()
}

// renameChecked renames old to new unless new exists. The check and the
// rename are not atomic; it is the fallback where the platform has no
// no-replace rename.
func renameChecked(old, new string) error {
	if _, err := os.Lstat(new); err == nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: fs.ErrExist}
	}
	return os.Rename(old, new)
}
