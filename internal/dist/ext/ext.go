// Package ext holds the file-name extensions of the standards a release
// folder's names follow, for the packages that implement those standards
// below package dist (the wheel format): the wheel's (PEP 427) and the
// source distribution's (PEP 625, and the older ones indexes still hold).
// Package dist builds every release file name from them; no other package
// spells one.
package ext

// Wheel ends every wheel's file name.
const Wheel = ".whl"

// Sdist is the one extension PEP 625 allows a source distribution, and
// the extension of every tar.gz archive of a release (bundles, evidence).
const Sdist = ".tar.gz"

// OldSdists are the extensions of source distributions before PEP 625,
// which indexes and find-links folders still hold, in the order they are
// tried after [Sdist].
var OldSdists = [...]string{".zip", ".tar.bz2", ".tar.xz", ".tgz", ".tar"}
