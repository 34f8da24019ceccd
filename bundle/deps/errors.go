package deps

import (
	"fmt"
	"strings"
)

// Kind classifies a [RefusalError].
type Kind string

// The reasons Resolve refuses a requirement.
const (
	// KindMissing: no locked package has the required name (for the
	// target and Python).
	KindMissing Kind = "missing"
	// KindVersion: the locked version is not allowed by the requirement's
	// specifier.
	KindVersion Kind = "version"
	// KindAmbiguous: more than one candidate: two locked entries apply to
	// the same Python, or two wheels fit equally well.
	KindAmbiguous Kind = "ambiguous"
	// KindNoFit: the package has wheels, but none installs on the target.
	KindNoFit Kind = "no-fit"
	// KindSdistOnly: the only file of the package is an sdist.
	KindSdistOnly Kind = "sdist-only"
	// KindNotFound: no source has a file of the locked package.
	KindNotFound Kind = "not-found"
	// KindHashMismatch: the bytes of a file are not the pinned ones.
	KindHashMismatch Kind = "hash-mismatch"
	// KindUnsupported: the requirement or the lock entry cannot be
	// bundled (a direct reference, a vcs, directory or archive source).
	KindUnsupported Kind = "unsupported"
	// KindBadWheel: the wheel is damaged or its metadata does not match.
	KindBadWheel Kind = "bad-wheel"
	// KindRequiresPython: the package does not support one of the
	// target's Pythons.
	KindRequiresPython Kind = "requires-python"
	// KindMarker: a marker cannot be evaluated.
	KindMarker Kind = "marker"
	// KindLock: the lock as a whole does not cover the target (its
	// requires-python or environments).
	KindLock Kind = "lock"
	// KindFetch: a source could not be read (network or file system).
	KindFetch Kind = "fetch"
)

// RefusalError is one reason the closure of a target cannot be built:
// which requirement, of which wheel, for which of the target's Pythons,
// what is wrong and what to do.
type RefusalError struct {
	// Kind says what is wrong, for callers that switch on it.
	Kind Kind
	// Target is the target's name (or platform tag).
	Target string
	// Requirement is the requirement as written in the requiring wheel's
	// metadata (canonical form); "" for refusals about the lock itself.
	Requirement string
	// RequiredBy is the file name of the wheel that declares the
	// requirement (one of the release's own wheels or a dependency).
	RequiredBy string
	// Package is the normalised name of the required package.
	Package string
	// Pythons are the target's Python versions the refusal applies to.
	Pythons []string
	// Detail says what is wrong.
	Detail string
	// Remedy says what to do.
	Remedy string
	// Err is the underlying error, such as a *HashMismatchError, if any.
	Err error
}

// Error implements the error interface.
func (e *RefusalError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "target %s", e.Target)
	if len(e.Pythons) > 0 {
		fmt.Fprintf(&b, " (Python %s)", strings.Join(e.Pythons, ", "))
	}
	switch {
	case e.Requirement != "" && e.RequiredBy != "":
		fmt.Fprintf(&b, ": requirement %q of %s", e.Requirement, e.RequiredBy)
	case e.Requirement != "":
		fmt.Fprintf(&b, ": requirement %q", e.Requirement)
	case e.RequiredBy != "":
		fmt.Fprintf(&b, ": %s", e.RequiredBy)
	}
	fmt.Fprintf(&b, ": %s: %s", e.Kind, e.Detail)
	if e.Remedy != "" {
		b.WriteString(" (" + e.Remedy + ")")
	}
	return b.String()
}

// Unwrap returns Err.
func (e *RefusalError) Unwrap() error { return e.Err }

// ResolveError lists every refusal found while resolving a target's
// closure. errors.As finds each *RefusalError through Unwrap.
type ResolveError struct {
	// Target is the target's name (or platform tag).
	Target string
	// Refusals are in a stable order: by package, then requirement.
	Refusals []*RefusalError
}

// Error lists the refusals, one per line.
func (e *ResolveError) Error() string {
	if len(e.Refusals) == 1 {
		return e.Refusals[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "target %s: %d dependency problems:", e.Target, len(e.Refusals))
	for _, r := range e.Refusals {
		b.WriteString("\n\t" + r.Error())
	}
	return b.String()
}

// Unwrap returns the refusals.
func (e *ResolveError) Unwrap() []error {
	errs := make([]error, len(e.Refusals))
	for i, r := range e.Refusals {
		errs[i] = r
	}
	return errs
}

// NotFoundError reports a locked package for which no source has a file.
type NotFoundError struct {
	// Package and Version name the locked package.
	Package, Version string
	// Searched lists the places looked in.
	Searched []string
}

// Error implements the error interface.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no file of %s %s found (searched %s)", e.Package, e.Version, strings.Join(e.Searched, "; "))
}

// NoWheelError reports a locked package whose wheels do not install on the
// interpreter being served.
type NoWheelError struct {
	// Package and Version name the locked package.
	Package, Version string
	// Available are the wheel file names found (or named by the lock).
	Available []string
	// Sdists are source distributions seen, which are never used.
	Sdists []string
}

// Error implements the error interface.
func (e *NoWheelError) Error() string {
	s := fmt.Sprintf("no wheel of %s %s fits: available %s", e.Package, e.Version, strings.Join(e.Available, ", "))
	if len(e.Sdists) > 0 {
		s += " (and sdists " + strings.Join(e.Sdists, ", ") + ", which are never used)"
	}
	return s
}

// SdistOnlyError reports a locked package that has only source
// distributions.
type SdistOnlyError struct {
	// Package and Version name the locked package.
	Package, Version string
	// Files are the sdists seen.
	Files []string
}

// Error implements the error interface.
func (e *SdistOnlyError) Error() string {
	return fmt.Sprintf("%s %s has only an sdist (%s): sdists are not installed from a bundle: lock a wheel", e.Package, e.Version, strings.Join(e.Files, ", "))
}

// HashMismatchError reports a file whose bytes are not the pinned ones.
type HashMismatchError struct {
	// File is the file name and Location where its bytes came from.
	File, Location string
	// Got is the sha256 of the bytes read; Want the pinned digests.
	Got  string
	Want []string
	// GotSize and WantSize are set when the size differs from the lock's.
	GotSize, WantSize int64
}

// Error implements the error interface.
func (e *HashMismatchError) Error() string {
	if e.WantSize > 0 && e.GotSize != e.WantSize {
		return fmt.Sprintf("%s from %s has %d bytes, the lock says %d", e.File, e.Location, e.GotSize, e.WantSize)
	}
	return fmt.Sprintf("%s from %s has sha256 %s, not the pinned %s", e.File, e.Location, e.Got, strings.Join(e.Want, " or "))
}

// AmbiguousError reports more than one candidate where exactly one must be
// chosen: two lock entries for one package, or two equally good wheels.
type AmbiguousError struct {
	// Package is the normalised name of the package.
	Package string
	// Candidates describe the competing entries or files.
	Candidates []string
}

// Error implements the error interface.
func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("more than one candidate for %s: %s", e.Package, strings.Join(e.Candidates, "; "))
}

// FetchError reports a source that could not be read.
type FetchError struct {
	// Location is the URL or path.
	Location string
	// Err is what went wrong.
	Err error
}

// Error implements the error interface.
func (e *FetchError) Error() string { return fmt.Sprintf("fetch %s: %v", e.Location, e.Err) }

// Unwrap returns Err.
func (e *FetchError) Unwrap() error { return e.Err }
