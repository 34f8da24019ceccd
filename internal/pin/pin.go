// Package pin holds the one description of a pinned source that
// release.lock, manifest.json, the SBOM and the provenance share ([Source]),
// and the kinds of source ([Kind]: local, git, archive), each of which says
// what pins it, how the SBOM names its version and download location, and
// how the provenance records it as a resolved dependency. It also holds
// the one description of a locked toolchain ([Toolchain]: its version line
// and the digest of its executable) that release.lock, manifest.json,
// part.json and the provenance share.
//
// Materialising a source (writing its tree) is not here: package
// build/source does it, one function per kind name.
//
// A new kind of source is one new [Kind] implementation, listed in
// [Kinds], and its materialiser in build/source.
package pin

import (
	"fmt"
	"strings"
)

// Source is the pinned identity of one source, as release.lock records it
// (TOML, in this key order) and manifest.json describes it (JSON: name,
// kind, location, commit, commit_time, sha256 and tree; the archive size,
// strip_components and file list stay in the lock).
type Source struct {
	// Name is the source's name in release.toml.
	Name string `toml:"name" json:"name"`
	// Kind is the name of its [Kind]: "local", "git" or "archive".
	Kind string `toml:"kind" json:"kind"`
	// Location is the project-relative folder (local), the repository URL
	// or project-relative path (git), or the http(s) URL or
	// project-relative path (archive).
	Location string `toml:"location" json:"location"`
	// Commit is the full commit id and CommitTime its committer time in
	// seconds (git only).
	Commit     string `toml:"commit,omitempty" json:"commit,omitempty"`
	CommitTime int64  `toml:"commit_time,omitempty" json:"commit_time,omitempty"`
	// SHA256 is the hex digest of the archive file (archive only).
	SHA256 string `toml:"sha256,omitempty" json:"sha256,omitempty"`
	// Size is an archive's size in bytes (0: not recorded by an older lock).
	Size int64 `toml:"size,omitempty" json:"-"`
	// StripComponents is the number of leading path elements dropped from
	// an archive's entries.
	StripComponents int `toml:"strip_components,omitempty" json:"-"`
	// Tree is the "h1:" hash of the pinned tree.
	Tree string `toml:"tree" json:"tree"`
	// Files lists every file of a local source with its sha256, as
	// release.lock records it, so that drift is reported by file name.
	Files []string `toml:"files,omitempty" json:"-"`
	// WorkTree is, for a source read from a git work tree on the building
	// machine (a local source in a repository, a git source that is a
	// repository path), "clean" when the tree below the source is what
	// HEAD holds and "modified" when it holds changes no commit holds;
	// "" otherwise. It is a fact of the building machine: the provenance
	// records it, while the lock and manifest.json do not (a rebuild from
	// the same files without a repository writes the same manifest).
	WorkTree string `toml:"-" json:"-"`
}

// Names of the kinds, as release.toml's keys and release.lock's kind
// write them.
const (
	LocalName   = "local"
	GitName     = "git"
	ArchiveName = "archive"
)

// Kind is one kind of pinned source. Every method reads only the fields
// its kind sets.
type Kind interface {
	// Name is the kind's name in release.lock, e.g. "git".
	Name() string
	// Check says what is wrong with the value that pins s beside its
	// tree hash: the lock key of the field and a message ("", "" when it
	// is fine or the kind has none).
	Check(s Source) (field, msg string)
	// Version is the version an SBOM gives the source: its commit, or its
	// tree hash.
	Version(s Source) string
	// Resolved is the source as an SLSA resolvedDependency: its URI and
	// the digests that pin it beside the tree hash. A "sha256" digest is
	// that of the file the source is unpacked from, which the SBOM also
	// records as the package's checksum. The URI is absolute and the same
	// from any checkout: a URL as release.toml gives it, and a path of
	// the project as p names it ([Project.URI]).
	Resolved(s Source, p Project) (uri string, digest map[string]string)
	// Download is the SPDX download location (SPDX 2.3 §7.7) and
	// sourceInfo text of the source, or a message saying why its location
	// cannot go into an SBOM.
	Download(s Source) (loc, info, msg string)
}

// The kinds.
var (
	Local   Kind = local{}
	Git     Kind = git{}
	Archive Kind = archive{}
)

var kinds = []Kind{Local, Git, Archive}

// Kinds returns every kind, in the order messages list them.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }

// Lookup returns the kind named name.
func Lookup(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Name() == name {
			return k, true
		}
	}
	return nil, false
}

// Want lists the kind names for a message: `"local", "git" or "archive"`.
func Want() string {
	var b strings.Builder
	for i, k := range kinds {
		switch {
		case i == 0:
		case i == len(kinds)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", k.Name())
	}
	return b.String()
}

// local is a folder of the project, pinned by its tree hash alone.
type local struct{}

func (local) Name() string { return LocalName }

func (local) Check(Source) (string, string) { return "", "" }

func (local) Version(s Source) string { return s.Tree }

func (local) Resolved(s Source, p Project) (string, map[string]string) {
	return p.URI(s.Location), nil
}

func (local) Download(s Source) (loc, info, msg string) {
	if m := CheckProjectPath(s.Location); m != "" {
		return "", "", m
	}
	return noAssertion, fmt.Sprintf("folder %s of the project, pinned by its h1: tree hash", s.Location), ""
}

// git is a commit of a repository, pinned by its full commit id.
type git struct{}

func (git) Name() string { return GitName }

func (git) Check(s Source) (string, string) {
	if !isHex(s.Commit, 40) && !isHex(s.Commit, 64) {
		return "commit", fmt.Sprintf("%q is not a full commit id in lower-case hex: a git source is pinned by its commit", s.Commit)
	}
	return "", ""
}

func (git) Version(s Source) string { return s.Commit }

func (git) Resolved(s Source, p Project) (string, map[string]string) {
	digest := map[string]string{"gitCommit": s.Commit}
	if !isURL(s.Location) {
		// A repository kept in the project: its commit is a digest, not
		// a revision of the project's repository the URI would name.
		return p.URI(s.Location), digest
	}
	return gitURI(s.Location, s.Commit), digest
}

func (git) Download(s Source) (loc, info, msg string) { return gitLocation(s) }

// archive is a .tar.gz, .tar.xz or .zip file, pinned by its sha256.
type archive struct{}

func (archive) Name() string { return ArchiveName }

func (archive) Check(s Source) (string, string) {
	if !isHex(s.SHA256, 64) {
		return "sha256", fmt.Sprintf("%q is not a SHA-256 in lower-case hex: an archive source is pinned by its digest", s.SHA256)
	}
	return "", ""
}

func (archive) Version(s Source) string { return s.Tree }

func (archive) Resolved(s Source, p Project) (string, map[string]string) {
	digest := map[string]string{"sha256": s.SHA256}
	if !isURL(s.Location) {
		return p.URI(s.Location), digest
	}
	return s.Location, digest
}

func (archive) Download(s Source) (loc, info, msg string) { return archiveLocation(s) }

// isHex reports whether s is exactly n lower-case hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
