package provenance

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

// Identifiers of the formats this package reads and writes.
const (
	// StatementType is the in-toto Statement v1 "_type".
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateType is the SLSA Provenance v1 predicate type.
	PredicateType = "https://slsa.dev/provenance/v1"
	// PayloadType is the DSSE payload type of an in-toto statement.
	PayloadType = "application/vnd.in-toto+json"
	// BuildType is the SLSA build type of an mkrelease release build.
	BuildType = "https://mkrelease.dev/buildtypes/release/v1"
	// BundleMediaType is the media type of a Sigstore bundle v0.3.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
)

// Subject is an artifact the provenance is about: a file of the release by
// its base name, with its sha256 in lowercase hex.
type Subject struct {
	Name   string
	SHA256 string
}

// Dependency is an in-toto ResourceDescriptor: an input of the build. At
// least one of URI and Digest is set. Digest maps an in-toto algorithm
// name to its value, lowercase hex for the standard algorithms ("sha256",
// "sha1" for a git commit, "dirHash" for a tree hash: see [DirHash]).
type Dependency struct {
	Name             string
	URI              string
	Digest           map[string]string
	DownloadLocation string
	Annotations      map[string]any
}

// Provenance holds the facts of one release build, the SLSA Provenance v1
// predicate plus its subjects.
type Provenance struct {
	// Subjects are every artifact the build produced and vouches for (each
	// wheel, bundle and the SBOM), by file name. The statement lists them
	// sorted by name.
	Subjects []Subject
	// BuildType is the SLSA build type; empty means [BuildType].
	BuildType string
	// ExternalParameters are the inputs a user controls: the digests of
	// release.toml and release.lock, the targets, the project name and
	// version.
	ExternalParameters map[string]any
	// InternalParameters are inputs set by mkrelease itself, such as
	// source_date_epoch.
	InternalParameters map[string]any
	// ResolvedDependencies are the materials, in the order given: sources,
	// overlays, dependency wheels, toolchains.
	ResolvedDependencies []Dependency
	// Byproducts are what the run made that is not a subject
	// (runDetails.byproducts): a merged release names its parts here.
	Byproducts []Dependency
	// BuilderID identifies the builder (runDetails.builder.id).
	BuilderID string
	// BuilderVersion maps component to version, {"mkrelease": "0.1.0"}.
	BuilderVersion map[string]string
	// InvocationID, StartedOn and FinishedOn describe this run; they differ
	// between two runs of the same build, which is why a signed statement is
	// not among the reproducible artifacts. Zero values are left out.
	InvocationID string
	StartedOn    time.Time
	FinishedOn   time.Time
}

// JSON shapes of the in-toto Statement v1 and SLSA Provenance v1. Struct
// fields marshal in declaration order and maps in key order, so the bytes
// are a function of the values.
type (
	statementJSON struct {
		Type          string          `json:"_type"`
		Subject       []subjectJSON   `json:"subject"`
		PredicateType string          `json:"predicateType"`
		Predicate     json.RawMessage `json:"predicate"`
	}
	subjectJSON struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	}
	predicateJSON struct {
		BuildDefinition buildDefinitionJSON `json:"buildDefinition"`
		RunDetails      runDetailsJSON      `json:"runDetails"`
	}
	buildDefinitionJSON struct {
		BuildType            string                   `json:"buildType"`
		ExternalParameters   map[string]any           `json:"externalParameters"`
		InternalParameters   map[string]any           `json:"internalParameters,omitempty"`
		ResolvedDependencies []resourceDescriptorJSON `json:"resolvedDependencies,omitempty"`
	}
	resourceDescriptorJSON struct {
		Name             string            `json:"name,omitempty"`
		URI              string            `json:"uri,omitempty"`
		Digest           map[string]string `json:"digest,omitempty"`
		DownloadLocation string            `json:"downloadLocation,omitempty"`
		Annotations      map[string]any    `json:"annotations,omitempty"`
	}
	runDetailsJSON struct {
		Builder    builderJSON              `json:"builder"`
		Metadata   *metadataJSON            `json:"metadata,omitempty"`
		Byproducts []resourceDescriptorJSON `json:"byproducts,omitempty"`
	}
	builderJSON struct {
		ID      string            `json:"id"`
		Version map[string]string `json:"version,omitempty"`
	}
	metadataJSON struct {
		InvocationID string `json:"invocationId,omitempty"`
		StartedOn    string `json:"startedOn,omitempty"`
		FinishedOn   string `json:"finishedOn,omitempty"`
	}
)

// Statement returns the in-toto Statement v1 with the SLSA Provenance v1
// predicate, as compact JSON (no trailing newline: it is a DSSE payload).
// The bytes depend only on p: struct fields in a fixed order, map keys
// sorted, subjects sorted by name, times in UTC RFC 3339. It refuses a
// statement that could not be verified later: no subject, a subject name
// that is not a plain file name or appears twice, a digest that is not 64
// lowercase hex digits, a dependency with neither URI nor digest, an empty
// builder id.
func (p Provenance) Statement() ([]byte, error) {
	if len(p.Subjects) == 0 {
		return nil, errors.New("provenance statement: no subjects (list every wheel, bundle and the SBOM)")
	}
	if p.BuilderID == "" {
		return nil, errors.New("provenance statement: no builder id")
	}
	pred := predicateJSON{
		BuildDefinition: buildDefinitionJSON{
			BuildType:          p.BuildType,
			ExternalParameters: p.ExternalParameters,
			InternalParameters: p.InternalParameters,
		},
		RunDetails: runDetailsJSON{Builder: builderJSON{ID: p.BuilderID, Version: p.BuilderVersion}},
	}
	if pred.BuildDefinition.BuildType == "" {
		pred.BuildDefinition.BuildType = BuildType
	}
	if pred.BuildDefinition.ExternalParameters == nil {
		pred.BuildDefinition.ExternalParameters = map[string]any{} // required by SLSA, even when empty
	}
	for i, d := range p.ResolvedDependencies {
		if err := checkDescriptor(d); err != nil {
			return nil, fmt.Errorf("provenance statement: resolved dependency %d (%q): %w", i, d.Name, err)
		}
		pred.BuildDefinition.ResolvedDependencies = append(pred.BuildDefinition.ResolvedDependencies, resourceDescriptorJSON(d))
	}
	for i, d := range p.Byproducts {
		if err := checkDescriptor(d); err != nil {
			return nil, fmt.Errorf("provenance statement: byproduct %d (%q): %w", i, d.Name, err)
		}
		pred.RunDetails.Byproducts = append(pred.RunDetails.Byproducts, resourceDescriptorJSON(d))
	}
	md := metadataJSON{InvocationID: p.InvocationID, StartedOn: formatTime(p.StartedOn), FinishedOn: formatTime(p.FinishedOn)}
	if md != (metadataJSON{}) {
		pred.RunDetails.Metadata = &md
	}
	out, err := NewStatement(PredicateType, p.Subjects, pred)
	if err != nil {
		return nil, fmt.Errorf("provenance statement: %w", err)
	}
	return out, nil
}

// checkDescriptor refuses a resource descriptor that names nothing (no URI
// and no digest) or carries a malformed digest.
func checkDescriptor(d Dependency) error {
	if d.URI == "" && len(d.Digest) == 0 {
		return errors.New("neither a URI nor a digest")
	}
	for alg, v := range d.Digest {
		if err := checkDigestValue(alg, v); err != nil {
			return err
		}
	}
	return nil
}

// NewStatement returns an in-toto Statement v1 as compact JSON (no HTML
// escaping): the subjects sorted by name, each a file name with a sha256
// and none listed twice, and the predicate as given. The provenance, the
// verification summaries and the verifier evidence's statements are all
// made by it.
func NewStatement(predicateType string, subjects []Subject, predicate any) ([]byte, error) {
	if len(subjects) == 0 {
		return nil, errors.New("no subjects")
	}
	sorted := slices.Clone(subjects)
	slices.SortFunc(sorted, func(a, b Subject) int { return strings.Compare(a.Name, b.Name) })
	st := statementJSON{Type: StatementType, PredicateType: predicateType}
	for i, s := range sorted {
		if err := checkSubject(s); err != nil {
			return nil, err
		}
		if i > 0 && sorted[i-1].Name == s.Name {
			return nil, fmt.Errorf("subject %q listed twice", s.Name)
		}
		st.Subject = append(st.Subject, subjectJSON{Name: s.Name, Digest: map[string]string{"sha256": s.SHA256}})
	}
	raw, err := marshalJSON(predicate)
	if err != nil {
		return nil, err
	}
	st.Predicate = raw
	return marshalJSON(st)
}

// marshalJSON is json.Marshal without HTML escaping ("<", ">", "&" stay as
// they are) and without the trailing newline of an Encoder.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func checkSubject(s Subject) error {
	if err := checksum.CheckName(s.Name); err != nil {
		return fmt.Errorf("subject name %q: %w", s.Name, err)
	}
	if !isSHA256Hex(s.SHA256) {
		return fmt.Errorf("subject %q: sha256 %q is not 64 lowercase hex digits", s.Name, s.SHA256)
	}
	return nil
}

func isSHA256Hex(s string) bool {
	return len(s) == 64 && isLowerHex(s)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

// checkDigestValue checks the in-toto DigestSet rule that the standard
// algorithms (and dirHash) use lowercase hex, with the length of the
// algorithm where it is fixed.
func checkDigestValue(alg, v string) error {
	want := map[string]int{"sha256": 64, "sha512": 128, "sha384": 96, "sha224": 56, "sha1": 40, "dirHash": 64}[alg]
	switch {
	case alg == "":
		return errors.New("digest with an empty algorithm name")
	case !isLowerHex(v):
		return fmt.Errorf("digest %s: %q is not lowercase hex", alg, v)
	case want != 0 && len(v) != want:
		return fmt.Errorf("digest %s: %d hex digits, expected %d", alg, len(v), want)
	}
	return nil
}

// DirHash converts a golang.org/x/mod/sumdb/dirhash "h1:" tree hash (as
// release.lock records for a local source tree) into the in-toto digest
// {"dirHash": hex}: the same sha256, in lowercase hex instead of base64,
// as the in-toto DigestSet specification defines dirHash.
func DirHash(h1 string) (map[string]string, error) {
	b64, ok := strings.CutPrefix(h1, "h1:")
	if !ok {
		return nil, fmt.Errorf("tree hash %q: not an h1: hash", h1)
	}
	sum, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(sum) != 32 {
		return nil, fmt.Errorf("tree hash %q: not base64 of 32 bytes", h1)
	}
	return map[string]string{"dirHash": hex.EncodeToString(sum)}, nil
}
