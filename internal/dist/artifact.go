package dist

import (
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Kind is what a file of a release folder is.
type Kind int

// The kinds. The reproducible ones are artifacts: the artifact list and
// SHA256SUMS list them, each has a sidecar. Signed statements and evidence
// are taken or signed after the build and differ on every run.
const (
	// KindOther is a file no pattern of the release matches.
	KindOther Kind = iota
	// KindBinary is a build output (executable, shared library, header),
	// under build/TARGET/.
	KindBinary
	// KindManifest is manifest.json, the record of the build inputs and
	// outputs.
	KindManifest
	// KindWheel is a Python wheel.
	KindWheel
	// KindBundle is an offline install bundle (.tar.gz) of one target.
	KindBundle
	// KindSBOM is the SPDX document of the release.
	KindSBOM
	// KindCycloneDX is a CycloneDX document of the release.
	KindCycloneDX
	// KindNotes are the release notes.
	KindNotes
	// KindArtifacts is the artifact list, artifacts.json.
	KindArtifacts
	// KindChecksums is SHA256SUMS.
	KindChecksums
	// KindSidecar is a FILE.sha256 sidecar.
	KindSidecar
	// KindProvenance is the signed provenance (DSSE envelopes or a
	// Sigstore bundle).
	KindProvenance
	// KindEvidence is a target's verifier evidence archive.
	KindEvidence
	// KindEvidenceStatements are the signed statements of an evidence
	// archive.
	KindEvidenceStatements
	// KindVSA is a signed verification summary.
	KindVSA
	// KindPart is part.json, the record of a part: what one machine built
	// of a release, for `mkrelease merge`.
	KindPart
	// KindPartStatement is a part's signed statement, naming its files.
	KindPartStatement
)

// lastKind is the last kind ParseKind knows.
const lastKind = KindPartStatement

// spec holds the name and the properties of each kind.
func (k Kind) spec() (name string, reproducible, subject bool) {
	switch k {
	case KindBinary:
		return "binary", true, false
	case KindManifest:
		return "manifest", true, false
	case KindWheel:
		return "wheel", true, true
	case KindBundle:
		return "bundle", true, true
	case KindSBOM:
		return "sbom", true, true
	case KindCycloneDX:
		return "cyclonedx", true, true
	case KindNotes:
		return "notes", true, false
	case KindArtifacts:
		return "artifacts", true, false
	case KindChecksums:
		return "checksums", false, false
	case KindSidecar:
		return "sidecar", false, false
	case KindProvenance:
		return "provenance", false, false
	case KindEvidence:
		return "evidence", false, false
	case KindEvidenceStatements:
		return "evidence-statements", false, false
	case KindVSA:
		return "vsa", false, false
	case KindPart:
		return "part", false, false
	case KindPartStatement:
		return "part-statement", false, false
	}
	return "other", false, false
}

// String names the kind, as the artifact list and the policy input spell
// it.
func (k Kind) String() string { name, _, _ := k.spec(); return name }

// Reproducible reports whether files of kind k are a pure function of the
// release's inputs: those are the artifacts, listed in the artifact list
// and SHA256SUMS, each with a sidecar. SHA256SUMS and the sidecars are
// derived from the list, so they are not artifacts themselves.
func (k Kind) Reproducible() bool { _, r, _ := k.spec(); return r }

// Subject reports whether the signed provenance names files of kind k as
// its subjects: what a user installs or audits, not the records about
// them.
func (k Kind) Subject() bool { _, _, s := k.spec(); return s }

// Summarised reports whether a publish's verification summary names files
// of kind k as its subjects: the provenance's subjects, and the release
// notes, whose published copy publish writes itself (their Validation
// section comes from the evidence it checked).
func (k Kind) Summarised() bool { return k.Subject() || k == KindNotes }

// ParseKind returns the kind a name (as [Kind.String] spells it) stands
// for.
func ParseKind(name string) (Kind, bool) {
	for k := KindBinary; k <= lastKind; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return KindOther, name == "other"
}

// MarshalText spells the kind.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name; an unknown name is an error.
func (k *Kind) UnmarshalText(b []byte) error {
	v, ok := ParseKind(string(b))
	if !ok {
		return &unknownKindError{string(b)}
	}
	*k = v
	return nil
}

type unknownKindError struct{ name string }

func (e *unknownKindError) Error() string { return "unknown artifact kind " + strconv.Quote(e.name) }

// Artifact is one file of the release.
type Artifact struct {
	Kind Kind `json:"kind"`
	// Path is slash-separated, relative to the output folder.
	Path string `json:"path"`
	// Target is the target the file belongs to ("" when shared).
	Target string `json:"target,omitempty"`
	// Step is the build step that produced it, for binaries.
	Step string `json:"step,omitempty"`
	// Name is the distribution name, for wheels.
	Name string `json:"distribution,omitempty"`
	// PlatformTag is the platform tag, for wheels.
	PlatformTag string `json:"platform_tag,omitempty"`
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
}

// Filter selects artifacts.
type Filter func(Artifact) bool

// ByKind selects artifacts of kind k.
func ByKind(k Kind) Filter { return func(a Artifact) bool { return a.Kind == k } }

// ByTarget selects artifacts of target t.
func ByTarget(t string) Filter { return func(a Artifact) bool { return a.Target == t } }

// WheelsOf selects the wheels target t installs: those built for it and
// the shared ones (no target: a pure-Python wheel, py3-none-any, is one
// file for every target and every target's bundle holds it).
func WheelsOf(t string) Filter {
	return func(a Artifact) bool { return a.Kind == KindWheel && (a.Target == t || a.Target == "") }
}

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

// Subjects selects what the signed provenance vouches for
// ([Kind.Subject]): one filter for every signer and checker. The
// verification summary vouches for these and the release notes
// ([Kind.Summarised]).
func Subjects() Filter { return func(a Artifact) bool { return a.Kind.Subject() } }

// TopLevel selects the files at the top of the release folder (not the
// build outputs under build/).
func TopLevel() Filter {
	return func(a Artifact) bool { return !strings.Contains(a.Path, "/") }
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
