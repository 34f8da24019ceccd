package extract

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/mholt/archives"
	"github.com/mkrelease/mkrelease/internal/extract/namefold"
	"github.com/mkrelease/mkrelease/internal/extract/zipaudit"
)

// kind is what an extracted path is.
type kind uint8

const (
	kindNone        kind = iota
	kindImplicitDir      // created as the parent of an entry
	kindDir              // a directory entry
	kindFile             // a regular file, mode 0644
	kindExecFile         // a regular file, mode 0755
	kindSymlink
)

// pathKey is a 128-bit keyed hash of a cleaned path. Keeping hashes rather
// than names bounds memory per entry whatever the name lengths; the seeds
// are random per extraction, so an archive cannot aim at a collision.
type pathKey [2]uint64

// entryType is the type of an archive entry.
type entryType uint8

const (
	typeFile entryType = iota
	typeDir
	typeSymlink
	typeHardLink
	typeSpecial
)

// state is one extraction in progress.
type state struct {
	ctx      context.Context
	archive  string
	strip    int
	symlinks bool
	lim      limits
	settings Settings
	root     *os.Root
	rep      *Report

	seeds   [2]maphash.Seed
	seen    map[pathKey]kind
	lastDir string // a directory known to exist, to skip parent checks
	created int    // entries read plus implicit directories, for MaxEntries

	// nfc and fold map the keys of every path's NFC and case-folded forms
	// to the path (fold is nil when case collisions are allowed).
	nfc, fold map[pathKey]nameRef

	// tar audits a tar stream as archive/tar reads it (nil for zip).
	tar *tarAudit
	// zip lists the audited central directory of a zip, which the walk
	// must follow entry by entry; zipNext is the next one.
	zip     []zipaudit.Entry
	zipNext int

	compressed func() int64
	buf        []byte
	// err is the first error returned by the entry handler, returned as is
	// rather than as wrapped by the archives package.
	err error
}

func newState(ctx context.Context, archive string, root *os.Root, opts Options, lim limits, rep *Report) *state {
	s := &state{
		ctx:      ctx,
		archive:  archive,
		strip:    opts.StripComponents,
		symlinks: opts.AllowSymlinks,
		lim:      lim,
		settings: opts.Settings,
		root:     root,
		rep:      rep,
		seeds:    [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		seen:     make(map[pathKey]kind),
		nfc:      make(map[pathKey]nameRef),
		fold:     make(map[pathKey]nameRef),
		buf:      make([]byte, 64<<10),
	}
	if opts.AllowCaseCollisions {
		s.fold = nil
	}
	return s
}

// nameRef is a path recorded for collision checks: its key, and the entry
// (counted from 1) that created it.
type nameRef struct {
	exact pathKey
	entry int
}

func (s *state) key(p string) pathKey {
	return pathKey{maphash.String(s.seeds[0], p), maphash.String(s.seeds[1], p)}
}

// run extracts the archive read from r into s.root.
func (s *state) run(r io.Reader, work string) error {
	src, err := s.open(r, work)
	if err != nil {
		return err
	}
	defer src.close()
	s.rep.Format = src.format
	s.compressed = src.compressed
	defer func() { s.rep.ArchiveBytes = src.compressed() }()

	walkErr := src.walk(s.ctx, s.handle)
	if s.tar != nil && s.tar.v != nil && (s.err == nil || errors.Is(s.err, errTarAudit)) {
		return s.refuse(s.tar.vName, s.tar.v)
	}
	if s.err != nil {
		return s.err
	}
	if walkErr != nil {
		if ctxErr := s.ctx.Err(); ctxErr != nil {
			return fmt.Errorf("extract %s: %w", s.archive, ctxErr)
		}
		if errors.Is(walkErr, tar.ErrHeader) && s.rep.Entries == 0 && src.format != FormatTar {
			return s.refuse("", &violation{reason: ErrFormat, detail: "the " + src.format + " stream does not hold a tar archive", err: walkErr})
		}
		return s.readError(walkErr)
	}
	return src.finish()
}

// handle is the archives.FileHandler for every entry.
func (s *state) handle(ctx context.Context, f archives.FileInfo) error {
	if err := s.entry(ctx, f); err != nil {
		if s.err == nil {
			if ee := (*EntryError)(nil); !errors.As(err, &ee) {
				err = fmt.Errorf("extract %s: entry %q: %w", s.archive, f.NameInArchive, err)
			}
			s.err = err
		}
		return err
	}
	return nil
}

func (s *state) entry(ctx context.Context, f archives.FileInfo) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	name := f.NameInArchive
	s.rep.Entries++
	if s.tar != nil {
		if v := s.tar.check(name); v != nil {
			if v == s.tar.v {
				return s.refuse(s.tar.vName, v)
			}
			return s.refuse(name, v)
		}
	}
	if s.zip != nil {
		i := s.zipNext
		s.zipNext++
		if i >= len(s.zip) || s.zip[i].Name != name {
			return s.refuse(name, refusal(ErrCorrupt, "the zip reader and the audit of the central directory disagree on entry %d; refusing what cannot be checked", i+1))
		}
	}
	if err := s.count(name); err != nil {
		return err
	}
	clean, v := cleanName(name)
	if v != nil {
		return s.refuse(name, v)
	}
	typ, what := classify(f)
	switch {
	case typ == typeSpecial:
		return s.refuse(name, refusal(ErrSpecialFile, "%s", what))
	case typ == typeSymlink && !s.symlinks:
		return s.refuse(name, refusal(ErrSymlink, "symlink to %q", f.LinkTarget))
	case typ != typeDir && strings.HasSuffix(name, "/"):
		return s.refuse(name, refusal(ErrInvalidName, "name ends in \"/\" but the entry is a %s", what))
	}
	p, ok := stripName(clean, s.strip)
	if !ok {
		switch {
		case typ == typeDir:
			return nil // the root itself, or a stripped leading directory
		case clean == ".":
			return s.refuse(name, refusal(ErrInvalidName, "a %s cannot be the extraction root", what))
		}
		return s.refuse(name, refusal(ErrStripComponents, "a %s with %d path elements, and %d are stripped", what, depth(clean), s.strip))
	}
	switch typ {
	case typeDir:
		return s.dir(name, p)
	case typeSymlink:
		return s.symlink(name, p, f.LinkTarget)
	case typeHardLink:
		return s.hardLink(name, p, f.LinkTarget)
	}
	return s.file(name, p, f)
}

// classify returns an entry's type and a description of it.
func classify(f archives.FileInfo) (entryType, string) {
	if hdr, ok := f.Header.(*tar.Header); ok {
		switch hdr.Typeflag {
		case tar.TypeReg, tar.TypeCont, tar.TypeGNUSparse:
			return typeFile, "regular file"
		case tar.TypeDir:
			return typeDir, "directory"
		case tar.TypeSymlink:
			return typeSymlink, "symlink"
		case tar.TypeLink:
			return typeHardLink, "hard link"
		case tar.TypeChar:
			return typeSpecial, "character device"
		case tar.TypeBlock:
			return typeSpecial, "block device"
		case tar.TypeFifo:
			return typeSpecial, "FIFO"
		}
		return typeSpecial, fmt.Sprintf("unsupported tar entry type %q", hdr.Typeflag)
	}
	m := f.Mode()
	switch m.Type() {
	case 0:
		return typeFile, "regular file"
	case fs.ModeDir:
		return typeDir, "directory"
	case fs.ModeSymlink:
		return typeSymlink, "symlink"
	}
	switch {
	case m&fs.ModeCharDevice != 0:
		return typeSpecial, "character device"
	case m&fs.ModeDevice != 0:
		return typeSpecial, "block device"
	case m&fs.ModeNamedPipe != 0:
		return typeSpecial, "FIFO"
	case m&fs.ModeSocket != 0:
		return typeSpecial, "socket"
	}
	return typeSpecial, fmt.Sprintf("irregular file (mode %s)", m)
}

// count accounts for one more entry or implicit directory.
func (s *state) count(name string) error {
	s.created++
	if s.created > s.lim.entries {
		return s.refuse(name, &violation{reason: ErrTooMany, advice: s.adviceEntries(),
			detail: fmt.Sprintf("more than %d entries (directories created implicitly included)", s.lim.entries)})
	}
	return nil
}

// prepare checks that p is new (a directory may follow an implicit one)
// and creates its parent directories. It reports whether p is already an
// implicit directory.
func (s *state) prepare(name, p string, isDir bool) (bool, error) {
	switch k := s.seen[s.key(p)]; {
	case k == kindNone:
	case isDir && k == kindImplicitDir:
		return true, nil
	case k == kindImplicitDir:
		return false, s.refuse(name, refusal(ErrDuplicate, "%q is a directory holding earlier entries", p))
	default:
		return false, s.refuse(name, refusal(ErrDuplicate, "an earlier entry has the same path %q", p))
	}
	if err := s.parents(name, p); err != nil {
		return false, err
	}
	return false, s.register(name, p)
}

// register records a new path p for the collision checks, refusing it
// when an earlier path is the same name under Unicode normalisation or,
// unless allowed, case folding.
func (s *state) register(name, p string) error {
	ref := nameRef{exact: s.key(p), entry: s.rep.Entries}
	nk := s.key(namefold.NFC(p))
	if prev, ok := s.nfc[nk]; ok && prev.exact != ref.exact {
		return s.refuse(name, refusal(ErrDuplicate, "%q and a path of entry %d (the entry or one of its folders) are one name under Unicode normalisation (NFC), spelled with different code points: macOS file systems keep one file for both, and tools that compare bytes see two; rename one", p, prev.entry))
	} else if !ok {
		s.nfc[nk] = ref
	}
	if s.fold == nil {
		return nil
	}
	fk := s.key(namefold.Fold(p))
	if prev, ok := s.fold[fk]; ok && prev.exact != ref.exact {
		return s.refuse(name, refusal(ErrDuplicate, "%q and a path of entry %d (the entry or one of its folders) differ only in case: case-insensitive file systems (macOS, Windows) keep one file for both; rename one", p, prev.entry))
	} else if !ok {
		s.fold[fk] = ref
	}
	return nil
}

// parents creates the missing parent directories of p, refusing to go
// through anything but a directory. Every recorded directory has only
// directories as ancestors, so the walk up stops at the first one found.
func (s *state) parents(name, p string) error {
	dir := path.Dir(p)
	if dir == "." || dir == s.lastDir {
		return nil
	}
	var missing []string
	d := dir
walk:
	for d != "." {
		switch k := s.seen[s.key(d)]; k {
		case kindNone:
			missing = append(missing, d)
			d = path.Dir(d)
		case kindDir, kindImplicitDir:
			break walk
		case kindSymlink:
			return s.refuse(name, refusal(ErrLinkEscape, "%q is a symlink earlier in the archive, and nothing is written through a symlink", d))
		default:
			return s.refuse(name, refusal(ErrDuplicate, "%q is a file earlier in the archive, not a directory", d))
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := s.count(name); err != nil {
			return err
		}
		if err := s.register(name, missing[i]); err != nil {
			return err
		}
		if err := s.mkdir(name, missing[i]); err != nil {
			return err
		}
		s.seen[s.key(missing[i])] = kindImplicitDir
	}
	s.lastDir = dir
	return nil
}

func (s *state) mkdir(name, p string) error {
	if err := s.root.Mkdir(p, 0o755); err != nil {
		return s.diskError(name, p, err)
	}
	if err := s.root.Chmod(p, 0o755); err != nil {
		return s.diskError(name, p, err)
	}
	s.rep.Dirs++
	return nil
}

func (s *state) dir(name, p string) error {
	implicit, err := s.prepare(name, p, true)
	if err != nil {
		return err
	}
	if !implicit {
		if err := s.mkdir(name, p); err != nil {
			return err
		}
	}
	s.seen[s.key(p)] = kindDir
	return nil
}

func (s *state) symlink(name, p, target string) error {
	if v := checkSymlinkTarget(p, target); v != nil {
		return s.refuse(name, v)
	}
	if _, err := s.prepare(name, p, false); err != nil {
		return err
	}
	if err := s.root.Symlink(target, p); err != nil {
		return s.diskError(name, p, err)
	}
	s.seen[s.key(p)] = kindSymlink
	s.rep.Symlinks++
	return nil
}

func (s *state) file(name, p string, f archives.FileInfo) error {
	if v := s.checkSize(f.Size()); v != nil {
		return s.refuse(name, v)
	}
	if _, err := s.prepare(name, p, false); err != nil {
		return err
	}
	k := kindFile
	if f.Mode().Perm()&0o111 != 0 {
		k = kindExecFile
	}
	rc, err := f.Open()
	if err != nil {
		return s.refuse(name, &violation{reason: ErrCorrupt, detail: "cannot read the entry", err: err})
	}
	defer rc.Close()
	if err := s.create(name, p, k, rc, true); err != nil {
		return err
	}
	s.rep.Files++
	return nil
}

// hardLink materialises a hard link as a copy of the regular file it
// points at, which must have been extracted earlier.
func (s *state) hardLink(name, p, target string) error {
	clean, v := cleanName(target)
	if v != nil {
		reason := ErrBadLink
		if v.reason == ErrTraversal || v.reason == ErrAbsolute {
			reason = ErrLinkEscape
		}
		detail := v.detail
		if detail == "" {
			detail = v.reason.Error()
		}
		return s.refuse(name, refusal(reason, "hard link target %q: %s", target, detail))
	}
	tp, ok := stripName(clean, s.strip)
	if !ok {
		return s.refuse(name, refusal(ErrLinkEscape, "hard link target %q is not below the stripped leading directories", target))
	}
	k := s.seen[s.key(tp)]
	if k != kindFile && k != kindExecFile {
		return s.refuse(name, refusal(ErrBadLink, "hard link target %q is not a regular file extracted earlier", target))
	}
	src, err := s.root.Open(tp)
	if err != nil {
		return s.diskError(name, tp, err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return s.diskError(name, tp, err)
	}
	if v := s.checkSize(fi.Size()); v != nil {
		return s.refuse(name, v)
	}
	if _, err := s.prepare(name, p, false); err != nil {
		return err
	}
	if err := s.create(name, p, k, src, false); err != nil {
		return err
	}
	s.rep.Files++
	s.rep.HardLinks++
	return nil
}

// create writes a new regular file at p with the contents of src.
func (s *state) create(name, p string, k kind, src io.Reader, fromArchive bool) error {
	mode := fs.FileMode(0o644)
	if k == kindExecFile {
		mode = 0o755
	}
	// O_EXCL: never reuse or follow anything already there.
	f, err := s.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return s.diskError(name, p, err)
	}
	s.seen[s.key(p)] = k
	err = f.Chmod(mode) // whatever the umask
	if err == nil {
		err = s.copy(name, f, src, fromArchive)
	}
	if err == nil && syncEachFile {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil && closeErr != nil {
		err = closeErr
	}
	if err != nil {
		var ee *EntryError
		if errors.As(err, &ee) || s.ctx.Err() != nil {
			return err
		}
		return s.diskError(name, p, err)
	}
	return nil
}

// copy streams src into dst, enforcing the size and ratio limits before
// each write, so nothing beyond a limit is ever written.
func (s *state) copy(name string, dst io.Writer, src io.Reader, fromArchive bool) error {
	var written int64
	for stalls := 0; ; {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		n, rerr := src.Read(s.buf)
		if n == 0 && rerr == nil {
			if stalls++; stalls > maxStalls {
				rerr = io.ErrNoProgress
			}
		} else {
			stalls = 0
		}
		if n > 0 {
			if v := s.admit(written, int64(n)); v != nil {
				return s.refuse(name, v)
			}
			if _, err := dst.Write(s.buf[:n]); err != nil {
				return err
			}
			written += int64(n)
			s.rep.Bytes += int64(n)
		}
		switch {
		case rerr == nil:
		case errors.Is(rerr, io.EOF):
			return nil
		case s.ctx.Err() != nil:
			return s.ctx.Err()
		case fromArchive:
			return s.refuse(name, &violation{reason: ErrCorrupt, detail: "reading the entry's data", err: rerr})
		default:
			return rerr
		}
	}
}

// checkSize refuses a file whose declared size is over a limit.
func (s *state) checkSize(size int64) *violation {
	switch {
	case size < 0 || size > s.lim.file:
		return &violation{reason: ErrTooLarge, advice: s.adviceFile(),
			detail: fmt.Sprintf("file of %d bytes, more than the limit of %d", uint64(size), s.lim.file)}
	case size > s.lim.total-s.rep.Bytes:
		return s.totalViolation()
	}
	return nil
}

// admit checks that n more bytes may be written to a file that has
// written bytes so far.
func (s *state) admit(written, n int64) *violation {
	if written+n > s.lim.file {
		return &violation{reason: ErrTooLarge, advice: s.adviceFile(),
			detail: fmt.Sprintf("file larger than the limit of %d bytes", s.lim.file)}
	}
	total := s.rep.Bytes + n
	if total > s.lim.total {
		return s.totalViolation()
	}
	if compressed := s.compressed(); float64(total) > s.lim.ratio*float64(compressed)+float64(s.lim.allowance) {
		return &violation{reason: ErrBomb, advice: s.adviceRatio(),
			detail: fmt.Sprintf("%d bytes would be extracted from %d archive bytes read, more than %g times as many plus %d", total, compressed, s.lim.ratio, s.lim.allowance)}
	}
	return nil
}

func (s *state) totalViolation() *violation {
	return &violation{reason: ErrTooLarge, advice: s.adviceTotal(),
		detail: fmt.Sprintf("the extracted files would exceed the total limit of %d bytes", s.lim.total)}
}

// The advice of the refusals by a limit, naming the caller's setting.
func (s *state) adviceEntries() string {
	return limitAdvice("number of entries", s.settings.Entries)
}
func (s *state) adviceFile() string  { return limitAdvice("file size", s.settings.FileBytes) }
func (s *state) adviceTotal() string { return limitAdvice("total size", s.settings.TotalBytes) }
func (s *state) adviceRatio() string { return ratioAdvice(s.settings.Ratio) }

// refuse turns a violation into an *EntryError for the named entry.
func (s *state) refuse(name string, v *violation) *EntryError {
	off := int64(-1)
	if v.hasOffset {
		off = v.offset
	}
	return &EntryError{Archive: s.archive, Entry: name, Reason: v.reason, Detail: v.detail, Err: v.err, Offset: off, advice: v.advice}
}

// diskError reports a failure to write the extracted tree. A name that
// already exists on disk although the archive did not have it before means
// the file system folds case or normalises Unicode.
func (s *state) diskError(name, p string, err error) error {
	if errors.Is(err, fs.ErrExist) {
		return s.refuse(name, &violation{reason: ErrDuplicate, err: err,
			detail: fmt.Sprintf("%q already exists on disk although no earlier entry has that name (the file system may fold case or normalise Unicode)", p)})
	}
	if errors.Is(err, syscall.ENAMETOOLONG) {
		return s.refuse(name, &violation{reason: ErrInvalidName, err: err,
			detail: fmt.Sprintf("%q is too long for the file system", p)})
	}
	return fmt.Errorf("extract %s: entry %q: write %s: %w", s.archive, name, p, err)
}
