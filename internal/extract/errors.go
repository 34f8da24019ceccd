package extract

import (
	"errors"
	"fmt"
	"strings"
)

// Reasons for refusing an archive. Every refusal is an [*EntryError] whose
// Reason is one of these, so callers can test for a kind of problem with
// [errors.Is].
var (
	// ErrTraversal: a name has a ".." element (with "/" or "\" separators).
	ErrTraversal = errors.New("path traversal (\"..\" element)")
	// ErrAbsolute: a name is absolute ("/x", "\x", "//host/x") or has a
	// Windows drive letter ("C:x", "C:\x").
	ErrAbsolute = errors.New("absolute path")
	// ErrInvalidName: a name is empty, too long (over 4096 bytes, or for
	// the file system), contains a NUL byte or a backslash, names the
	// extraction root itself, or ends in "/" without being a directory.
	ErrInvalidName = errors.New("invalid name")
	// ErrStripComponents: a file or link has no more path elements than
	// Options.StripComponents removes.
	ErrStripComponents = errors.New("entry is not below the stripped leading directories")
	// ErrSymlink: the archive holds a symlink and Options.AllowSymlinks is
	// false.
	ErrSymlink = errors.New("symlinks are not allowed")
	// ErrLinkEscape: a symlink or hard link target leaves the extraction
	// root (or cannot be proved not to), or an entry would be written
	// through an earlier symlink.
	ErrLinkEscape = errors.New("link escapes the extraction root")
	// ErrBadLink: a link target is empty or malformed, or a hard link does
	// not point at a regular file extracted earlier.
	ErrBadLink = errors.New("invalid link")
	// ErrSpecialFile: a device, FIFO, socket or other non-regular entry.
	ErrSpecialFile = errors.New("special file")
	// ErrDuplicate: two entries have the same path after cleaning and
	// stripping, or an entry would replace or go through an earlier
	// non-directory entry, or the file system already has the name (for
	// example because it folds case).
	ErrDuplicate = errors.New("duplicate entry")
	// ErrTooMany: more entries (counting directories created implicitly)
	// than Limits.MaxEntries.
	ErrTooMany = errors.New("too many entries")
	// ErrTooLarge: a file is larger than Limits.MaxFileBytes, or the
	// extracted total would exceed Limits.MaxTotalBytes.
	ErrTooLarge = errors.New("too large")
	// ErrBomb: the extracted bytes exceed Limits.MaxRatio times the
	// compressed bytes read plus Limits.RatioAllowance (decompression bomb).
	ErrBomb = errors.New("compression ratio too high (decompression bomb)")
	// ErrFormat: the content is not a supported archive format.
	ErrFormat = errors.New("unsupported or unrecognised archive format")
	// ErrCorrupt: the archive cannot be read (bad header, checksum,
	// truncation, trailing garbage).
	ErrCorrupt = errors.New("corrupt or truncated archive")
	// ErrAmbiguous: other tools would read the archive differently: a tar
	// meta header that readers apply differently, a ustar field that
	// disagrees with its PAX or GNU replacement, a sparse file, a zip whose
	// local headers, data descriptors or byte ranges disagree with its
	// central directory, prepended or trailing data (see the package
	// documentation for the full list).
	ErrAmbiguous = errors.New("ambiguous archive (other tools would read it differently)")
)

// EntryError reports why an archive was refused. It names the archive and,
// when the problem is with one entry, that entry.
type EntryError struct {
	// Archive is the archive's name as given to Extract or ExtractFile.
	Archive string
	// Entry is the entry's name exactly as stored in the archive, or ""
	// when the problem concerns the archive as a whole.
	Entry string
	// Reason is one of the Err* sentinel errors of this package.
	Reason error
	// Detail says precisely what was wrong (may be empty).
	Detail string
	// Err is the underlying error, if any (may be nil).
	Err error
	// Offset is where the problem is: the byte offset of the entry's
	// header or of the structure at fault, in the archive file for zip and
	// in the decompressed tar stream for the tar formats; -1 when the
	// refusal is not about one place.
	Offset int64

	advice string
}

// Error returns a message naming the archive, the entry, the problem and
// what to do about it.
func (e *EntryError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "extract %s: ", e.Archive)
	if e.Entry != "" {
		fmt.Fprintf(&b, "entry %q: ", e.Entry)
	}
	if e.Offset >= 0 {
		fmt.Fprintf(&b, "at offset %d: ", e.Offset)
	}
	if e.Reason != nil {
		b.WriteString(e.Reason.Error())
	} else {
		b.WriteString("refused")
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	advice := e.advice
	if advice == "" {
		advice = adviceFor(e.Reason)
	}
	b.WriteString("; ")
	b.WriteString(advice)
	return b.String()
}

// Unwrap returns the Reason and the underlying error, so that errors.Is
// matches both the sentinel and, for example, fs.ErrExist.
func (e *EntryError) Unwrap() []error {
	var errs []error
	if e.Reason != nil {
		errs = append(errs, e.Reason)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

const (
	adviceUnsafe  = "the archive is unsafe or corrupt: obtain it again from its source and check its digest"
	adviceCorrupt = "the archive is corrupt or truncated: obtain it again from its source and check its digest"
	adviceFormat  = "supported formats are tar, tar.gz, tar.xz, tar.bz2, tar.zst and zip, recognised by content; repack the archive in one of them"
	adviceSymlink = "symlinks are refused for this archive: obtain an archive without symlinks"
	adviceStrip   = "the archive does not have the expected leading directories: check its layout or the strip-components setting"
	adviceAmbig   = "the archive is crafted or made by an unusual tool, and what it holds depends on who reads it: obtain it again from its source and check its digest; if it is genuine, repack it with a standard tool (tar --format=pax, or zip) and pin that"
)

// limitAdvice is the advice of a refusal by a limit on what ("number of
// entries", "file size", "total size"): obtain the archive again, or, when
// the caller names the setting that raises the limit (Options.Settings),
// raise it if the archive is genuine.
func limitAdvice(what, setting string) string {
	if setting == "" {
		return "the archive is unsafe or corrupt: obtain it again from its source (the limit on its " + what + " is fixed for this kind of archive)"
	}
	return "the archive is unsafe or corrupt: obtain it again from its source, or raise " + setting + " if its " + what + " is expected"
}

// ratioAdvice is limitAdvice for the compression ratio.
func ratioAdvice(setting string) string {
	if setting == "" {
		return "the archive is a decompression bomb or unusually compressible: obtain it again from its source (the limit on its compression ratio is fixed for this kind of archive)"
	}
	return "the archive is a decompression bomb or unusually compressible: obtain it again from its source, or raise " + setting + " if its compression ratio is expected"
}

func adviceFor(reason error) string {
	switch reason {
	case ErrCorrupt:
		return adviceCorrupt
	case ErrFormat:
		return adviceFormat
	case ErrSymlink:
		return adviceSymlink
	case ErrStripComponents:
		return adviceStrip
	case ErrAmbiguous:
		return adviceAmbig
	case ErrTooMany:
		return limitAdvice("number of entries", "")
	case ErrTooLarge:
		return limitAdvice("size", "")
	case ErrBomb:
		return ratioAdvice("")
	default:
		return adviceUnsafe
	}
}

// violation is a refusal found by a pure check, before the archive and
// entry names are known; (*state).refuse turns it into an *EntryError.
type violation struct {
	reason error
	detail string
	advice string
	err    error
	// offset is where the problem is, when hasOffset.
	offset    int64
	hasOffset bool
}

func (v *violation) Error() string { return v.reason.Error() + ": " + v.detail }

func refusal(reason error, format string, args ...any) *violation {
	return &violation{reason: reason, detail: fmt.Sprintf(format, args...)}
}
