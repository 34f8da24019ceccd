// Package artifact is the registry of files a release produces: each has a
// typed kind, its path in the output folder, the target it belongs to and
// its digest. Stages add artifacts as they write them; later stages select
// them with filters that combine, and always get copies.
package dist

import (
	"sort"
	"sync"
)

// Kind is what an artifact is.
type Kind int

// The artifact kinds.
const (
	// KindBinary is a build output (executable, shared library, header).
	KindBinary Kind = iota + 1
	// KindManifest is the record of the build inputs and outputs.
	KindManifest
	// KindWheel is a Python wheel.
	KindWheel
	// KindBundle is an offline install bundle (.tar.gz) of one target.
	KindBundle
	// KindSBOM is the SPDX document of the release.
	KindSBOM
	// KindNotes are the release notes.
	KindNotes
	// KindProvenance is a signed statement (DSSE envelope or Sigstore bundle):
	// not reproducible, not in SHA256SUMS.
	KindProvenance
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindBinary:
		return "binary"
	case KindManifest:
		return "manifest"
	case KindWheel:
		return "wheel"
	case KindBundle:
		return "bundle"
	case KindSBOM:
		return "sbom"
	case KindNotes:
		return "notes"
	case KindProvenance:
		return "provenance"
	}
	return "unknown"
}

// Artifact is one file of the release.
type Artifact struct {
	Kind Kind
	// Path is slash-separated, relative to the output folder.
	Path string
	// Target is the target the file belongs to ("" when shared).
	Target string
	// Step is the build step that produced it, for binaries.
	Step string
	// Name is the distribution name, for wheels.
	Name string
	// PlatformTag is the platform tag, for wheels.
	PlatformTag string
	SHA256      string
	Size        int64
}

// Filter selects artifacts.
type Filter func(Artifact) bool

// ByKind selects artifacts of kind k.
func ByKind(k Kind) Filter { return func(a Artifact) bool { return a.Kind == k } }

// ByTarget selects artifacts of target t.
func ByTarget(t string) Filter { return func(a Artifact) bool { return a.Target == t } }

// And selects artifacts every filter selects.
func And(fs ...Filter) Filter {
	return func(a Artifact) bool {
		for _, f := range fs {
			if !f(a) {
				return false
			}
		}
		return true
	}
}

// Not selects what f does not.
func Not(f Filter) Filter { return func(a Artifact) bool { return !f(a) } }

// List is a concurrency-safe set of artifacts.
type List struct {
	mu    sync.Mutex
	items []Artifact
}

// Add records artifacts.
func (l *List) Add(as ...Artifact) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, as...)
}

// Filter returns copies of the artifacts f selects (all when f is nil),
// sorted by path.
func (l *List) Filter(f Filter) []Artifact {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Artifact
	for _, a := range l.items {
		if f == nil || f(a) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
