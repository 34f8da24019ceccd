package deps

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pep508"
)

// Lock formats, as in [Lock.Format].
const (
	FormatPylock       = "pylock.toml"
	FormatRequirements = "requirements"
)

// Lock is a parsed lock file: the packages it pins and what it says about
// the environments it was made for.
type Lock struct {
	// File is the path the lock was read from, for messages.
	File string
	// Format is FormatPylock or FormatRequirements.
	Format string
	// RequiresPython is pylock.toml's top-level requires-python, parsed;
	// nil when absent (always for requirements files).
	RequiresPython *pep440.Specifiers
	// Environments are pylock.toml's environments markers; the lock
	// applies to an environment in which at least one of them holds. Empty
	// means every environment.
	Environments []*pep508.Marker
	// Packages are the locked packages in file order.
	Packages []Locked
	// Notes are lines or keys that were read but have no effect, each with
	// the reason (for example a --find-links line of a requirements file:
	// sources come from the Finder, not from the lock).
	Notes []Note
}

// Note is a part of a lock file that was ignored, and why.
type Note struct {
	// Where is "FILE:LINE" or "FILE: packages[i] (name)".
	Where string
	// Msg says what was ignored and why.
	Msg string
}

// String renders the note as "where: msg".
func (n Note) String() string { return n.Where + ": " + n.Msg }

// Locked is one package pinned by a lock.
type Locked struct {
	// Name is the normalised project name (PEP 503).
	Name string
	// Version is the normalised PEP 440 version.
	Version string
	// Marker, when not nil, restricts the environments the entry applies
	// to: it is considered only where the marker holds (or may hold, for
	// variables a target does not determine).
	Marker *pep508.Marker
	// RequiresPython is the entry's requires-python (pylock.toml), or nil.
	RequiresPython *pep440.Specifiers
	// Wheels are the wheel files the lock allows for the package. A
	// pylock.toml entry names each wheel with its own hash; a requirements
	// file gives only hashes, so each of its LockedFiles has just a SHA256
	// and any wheel of the package whose bytes have one of those digests is
	// allowed.
	Wheels []LockedFile
	// Sdist is the source distribution the lock lists, if any. It is never
	// used: a package that has nothing but an sdist is refused where it is
	// needed.
	Sdist *LockedFile
	// Source names a pylock.toml source that is neither a wheel nor an
	// sdist ("vcs", "directory" or "archive"); such an entry is refused
	// where it is needed.
	Source string
	// Index is pylock.toml's packages.index: the simple repository the
	// files came from, for the SBOM ("" when unknown).
	Index string
	// Where locates the entry for messages: "FILE:LINE" for a requirements
	// file, "FILE: packages[i]" for pylock.toml.
	Where string
}

// LockedFile is one file a lock allows: a wheel or an sdist.
type LockedFile struct {
	// Name is the file name; "" when the lock does not say (requirements
	// files give only hashes).
	Name string
	// URL is where the lock says the file is, or "".
	URL string
	// Path is the local path the lock gives, made absolute against the
	// lock's folder, or "".
	Path string
	// Size is the size the lock records, or 0 when unknown.
	Size int64
	// SHA256 is the pinned digest, lower-case hex.
	SHA256 string
}

// Hashes returns the distinct pinned sha256 digests of p's wheels, sorted.
func (p *Locked) Hashes() []string {
	var hs []string
	for _, w := range p.Wheels {
		hs = append(hs, w.SHA256)
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}

// String renders p as "name==version" plus its marker, for messages.
func (p *Locked) String() string {
	s := p.Name + "==" + p.Version
	if p.Marker != nil {
		s += " ; " + p.Marker.String()
	}
	return s
}

// namesWheels reports whether the lock names p's wheel files (pylock.toml)
// rather than only pinning hashes (requirements files).
func (p *Locked) namesWheels() bool {
	for _, w := range p.Wheels {
		if w.Name != "" {
			return true
		}
	}
	return false
}

// LockError reports a lock file that cannot be used, naming the file and
// the line or entry.
type LockError struct {
	// File is the lock file.
	File string
	// Line is the 1-based line of a requirements file, or of a key or
	// TOML error of a pylock.toml; 0 when an entry is named instead.
	Line int
	// Column is the 1-based column in Line of a pylock.toml key or TOML
	// error; 0 when unknown.
	Column int
	// Entry names a pylock.toml entry, e.g. `packages[2] (numpy)`, or a key
	// path such as `lock-version`; "" for requirements files.
	Entry string
	// Msg says what is wrong.
	Msg string
	// Hint says what to do; it may be empty.
	Hint string
}

// Error implements the error interface.
func (e *LockError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	if e.Entry != "" {
		b.WriteString(": " + e.Entry)
	}
	b.WriteString(": " + e.Msg)
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

// isHexDigest reports whether s is 64 hex digits.
func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
