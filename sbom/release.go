package sbom

import (
	"fmt"

	"github.com/mkrelease/mkrelease/internal/pin"
)

// Release is everything the SBOM describes; the caller (the bundle stage)
// fills it.
type Release struct {
	// Name and Version are the release's (PEP 503-normalised name, PEP 440
	// normalised version).
	Name, Version string
	// License is the SPDX license expression the project declares; ""
	// means NOASSERTION.
	License string
	// Supplier is "Organization: NAME (EMAIL)" or "Person: NAME (EMAIL)"
	// (the email part is optional), as SPDX §7.5 writes it; "" means
	// NOASSERTION.
	Supplier string
	// Created is the SOURCE_DATE_EPOCH in seconds, never the wall clock.
	// It must be positive.
	Created int64
	// Tool names the generator with its version, e.g. "mkrelease-0.1.0-dev".
	Tool string
	// Target, when set, makes the document the SBOM of that one target
	// (the SBOM inside its offline bundle) rather than of the release:
	// Targets must hold that target alone, the document is named
	// NAME-VERSION-TARGET and its namespace starts with that name. The
	// caller passes only the sources and overlays the target's build read;
	// toolchains of other targets are left out as for any document.
	Target string
	// Targets are the targets this document covers.
	Targets []Target
	// Sources are the pinned sources the release (or, with Target, that
	// target's build) is built from.
	Sources []Source
	// Overlays are the overlays applied to the sources.
	Overlays []Overlay
	// Toolchains are the locked toolchains.
	Toolchains []Toolchain
}

// Target is one build target of the release.
type Target struct {
	// Name is the target's name, e.g. "linux-x86_64".
	Name string
	// Wheels are the release's own wheels for the target.
	Wheels []Package
	// Dependencies are the third-party wheels of the target's closure.
	Dependencies []Package
	// Bundle is the target's offline bundle when this document describes
	// it, else nil (the SBOM inside a bundle cannot describe the bundle).
	Bundle *File
}

// Package is one wheel: the release's own or a dependency.
type Package struct {
	// Name is the distribution name (normalised here when it is not) and
	// Version its version.
	Name, Version string
	// FileName is the wheel's file name.
	FileName string
	// SHA256 is the hex digest of the wheel file.
	SHA256 string
	// License is the SPDX expression the wheel's metadata declares
	// (License-Expression); "" means NOASSERTION (for the release's own
	// wheels: the release's License).
	License string
	// Supplier is derived from Author/Author-email/Maintainer in the form
	// of Release.Supplier; "" means NOASSERTION (for the release's own
	// wheels: the release's Supplier).
	Supplier string
	// DownloadLocation is the URL the wheel was fetched from; "" or
	// "NOASSERTION" when there is none.
	DownloadLocation string
	// DependsOn names (normalised or not) the packages of the same target
	// this one requires, for DEPENDS_ON relationships. Each must be one of
	// the target's wheels or dependencies.
	DependsOn []string
}

// File is a file the document describes by name and digests: a target's
// offline bundle.
type File struct {
	// Name is the file's base name, e.g. "vexl-0.3.0-linux-x86_64.tar.gz".
	Name string
	// SHA256 is the hex SHA-256 of the file.
	SHA256 string
	// SHA1 is the hex SHA-1 of the file: SPDX 2.3 §8.4 requires a SHA1
	// checksum on every File.
	SHA1 string
}

// Source kinds, as release.lock writes them.
const (
	SourceLocal   = pin.LocalName
	SourceGit     = pin.GitName
	SourceArchive = pin.ArchiveName
)

// Source is one pinned source, as release.lock records it, and who
// supplies it. The document reads the pin's Name, Kind (SourceLocal,
// SourceGit or SourceArchive), Location, Commit (git only; required
// there), SHA256 (the archive file's digest; archive only, required there)
// and Tree (the "h1:" hash of the pinned tree; required); the pin's other
// fields are ignored.
type Source struct {
	pin.Source
	// Supplier is who supplies the source ([[source]] supplier in
	// release.toml), in the form of Release.Supplier; "" means NOASSERTION.
	// A source is the upstream's: it does not inherit the release's
	// supplier.
	Supplier string `json:"supplier,omitempty"`
}

// Overlay is one overlay applied to a source.
type Overlay struct {
	// Name is the overlay's name in release.toml.
	Name string
	// Source names the Source it applies to.
	Source string
	// Path is the project-relative, slash-separated path of the patch file
	// or overlay folder.
	Path string
	// SHA256 and SHA1 are the hex digests of the patch file. Both are
	// required for a patch (SPDX 2.3 §8.4 requires SHA1 on a File); both
	// are empty for a tree overlay.
	SHA256, SHA1 string
	// Tree is the "h1:" hash of an overlay folder (tree overlays only).
	Tree string
	// Result is the "h1:" hash of the source tree after this overlay, as
	// locked; optional, recorded in a comment.
	Result string
}

// Toolchain is one locked toolchain.
type Toolchain struct {
	// Name is the toolchain's name in release.toml, e.g. "go" or "cc".
	Name string
	// Target is the target it builds for; "" for every target.
	Target string
	// Supplier is who supplies the toolchain ([[toolchain]] supplier in
	// release.toml), in the form of Release.Supplier; "" means NOASSERTION.
	Supplier string `json:",omitempty"`
	// Version is the toolchain's identity line as release.lock locks it
	// (the first line its version command printed), e.g. "go version
	// go1.26.8 linux/amd64". The document's versionInfo is the version
	// read from it (1.26.8), and its comment quotes the line.
	Version string
}

// Error is one field of a Release that Generate refuses. Generate returns
// every such error it finds, joined (errors.Join); use errors.As to get the
// first, or the Unwrap() []error method of the joined error for all of them.
type Error struct {
	// Field locates the value, e.g.
	// `targets["linux-x86_64"].dependencies["numpy"].sha256`.
	Field string
	// Msg says what is wrong and what to do.
	Msg string
}

// Error returns "sbom: FIELD: MSG".
func (e *Error) Error() string { return fmt.Sprintf("sbom: %s: %s", e.Field, e.Msg) }
