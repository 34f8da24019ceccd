package provenance

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/finding"
)

// Step names a check of [Verifier.Verify], in the order they run.
type Step string

// The verification steps. A *[VerifyError] carries the one that failed.
const (
	StepBundle        Step = "bundle"         // VerifyBundle only: the bundle parses, is v0.3, key-based, carries a DSSE envelope
	StepEnvelope      Step = "envelope"       // the DSSE envelope parses
	StepPayloadType   Step = "payload-type"   // payloadType is application/vnd.in-toto+json
	StepSignature     Step = "signature"      // a signature by a trusted key verifies
	StepStatement     Step = "statement"      // the payload is an in-toto Statement v1 with well-formed subjects
	StepPredicateType Step = "predicate-type" // predicateType is SLSA Provenance v1
	StepPredicate     Step = "predicate"      // the predicate has the fields SLSA Provenance v1 requires
	StepSubjects      Step = "subjects"       // the subjects are exactly the expected artifacts
)

// VerifyError is a failed verification step. Expected and Actual hold the
// values compared, where there are two (a digest, a type, key ids); Name is
// the subject or artifact a "subjects" finding is about. Err is the
// underlying cause, if any (a JSON syntax error).
type VerifyError struct {
	Step     Step
	Name     string
	Expected string
	Actual   string
	Msg      string
	Err      error
}

// Error names the step, what failed, and the values compared.
func (e *VerifyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provenance %s check: %s", e.Step, e.Msg)
	if e.Expected != "" || e.Actual != "" {
		fmt.Fprintf(&b, " (expected %s, got %s)", orNone(e.Expected), orNone(e.Actual))
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *VerifyError) Unwrap() error { return e.Err }

// Finding returns the failure as a finding: Check is the step, File the
// subject or artifact (Name), Want and Got the values compared (Expected
// and Actual), and Msg what failed followed by the cause, if any.
func (e *VerifyError) Finding() finding.Finding {
	msg := e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return finding.Finding{Check: string(e.Step), File: e.Name, Want: e.Expected, Got: e.Actual, Msg: msg}
}

// Findings returns the findings of an error that verification returned:
// one for each *[VerifyError] it joins (errors.Join, as the subjects step
// reports every difference), in order; a VerifyError wrapped in another
// error gives its own finding. An error that is not a VerifyError (a bad
// option, such as no artifacts to bind to) becomes a finding with an
// empty Check and the error's text as Msg. It returns nil for nil.
func Findings(err error) []finding.Finding {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []finding.Finding
		for _, e := range j.Unwrap() {
			out = append(out, Findings(e)...)
		}
		return out
	}
	var ve *VerifyError
	if errors.As(err, &ve) {
		return []finding.Finding{ve.Finding()}
	}
	return []finding.Finding{{Msg: err.Error()}}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// ArtifactPolicy says which artifacts the statement must be about. It is a
// required argument of Verify: build it with [WithArtifacts], or opt out
// explicitly with [WithoutArtifactsUnsafe]. The zero value is refused.
type ArtifactPolicy struct {
	files  map[string]string
	unsafe bool
}

// WithArtifacts binds the statement to files (base name → sha256 in hex):
// every one must be a subject with that digest, and every subject must be
// one of them.
func WithArtifacts(files map[string]string) ArtifactPolicy {
	m := make(map[string]string, len(files))
	for name, sha := range files {
		m[name] = strings.ToLower(sha)
	}
	return ArtifactPolicy{files: m}
}

// WithoutArtifactsUnsafe skips the binding of the statement to artifacts:
// Verify then only says that a trusted key signed some SLSA provenance,
// not that it is about the files at hand. Use it to inspect a statement,
// never to accept a release.
func WithoutArtifactsUnsafe() ArtifactPolicy { return ArtifactPolicy{unsafe: true} }

// Verifier checks signed provenance against a set of trusted public keys.
type Verifier struct {
	keys []trustedKey
}

type trustedKey struct {
	id     string // KeyID
	dsseID string // the keyid Sign writes into envelopes
	pub    crypto.PublicKey
}

// verify checks sig over message the way [Signer] signs: ECDSA (ASN.1
// DER) and RSA PKCS #1 v1.5 over the SHA-256 digest, pure Ed25519.
func (k trustedKey) verify(message, sig []byte) bool {
	digest := sha256.Sum256(message)
	switch pub := k.pub.(type) {
	case *ecdsa.PublicKey:
		return ecdsa.VerifyASN1(pub, digest[:], sig)
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) == nil
	case ed25519.PublicKey:
		return ed25519.Verify(pub, message, sig)
	}
	return false
}

// NewVerifier returns a Verifier that accepts signatures by any of the
// trusted public keys (ECDSA, RSA PKCS#1 v1.5 with SHA-256, or Ed25519).
// At least one key is required.
func NewVerifier(trusted ...crypto.PublicKey) (*Verifier, error) {
	if len(trusted) == 0 {
		return nil, errors.New("provenance verifier: no trusted public key: pass at least one (LoadPublicKey reads a PEM public key such as the .pub file of `mkrelease keygen`)")
	}
	v := &Verifier{}
	for i, pub := range trusted {
		if pub == nil {
			return nil, fmt.Errorf("provenance verifier: trusted key %d is nil", i)
		}
		if err := checkKeyType(pub); err != nil {
			return nil, fmt.Errorf("provenance verifier: trusted key %d: %w", i, err)
		}
		id := KeyID(pub)
		if slices.ContainsFunc(v.keys, func(k trustedKey) bool { return k.id == id }) {
			continue
		}
		v.keys = append(v.keys, trustedKey{id: id, dsseID: dsseKeyID(pub), pub: pub})
	}
	return v, nil
}

// KeyIDs returns the ids of the trusted keys, sorted.
func (v *Verifier) KeyIDs() []string {
	ids := make([]string, 0, len(v.keys))
	for _, k := range v.keys {
		ids = append(ids, k.id)
	}
	slices.Sort(ids)
	return ids
}

// Result is what a successful verification established.
type Result struct {
	// KeyID is the id of the trusted key whose signature verified.
	KeyID string
	// Envelope is the verified envelope; Statement its payload, the signed
	// in-toto statement bytes.
	Envelope  Envelope
	Statement []byte
	// Provenance is the statement parsed: subjects (sorted by name), build
	// type, parameters (numbers as json.Number), resolved dependencies,
	// builder and run metadata.
	Provenance Provenance
	// ArtifactsBound reports that the subjects were checked against the
	// artifacts (false only with WithoutArtifactsUnsafe).
	ArtifactsBound bool
}

// Verify checks a DSSE envelope (the content of a .intoto.jsonl file), in
// this order, stopping at the first failed step:
//
//  1. envelope: it is one JSON DSSE envelope with base64 payload and signatures;
//  2. payload-type: its payloadType is application/vnd.in-toto+json;
//  3. signature: at least one signature verifies, over the DSSE PAE, with a
//     trusted key (whatever keyid it claims); when none does, the error names
//     the key ids the envelope claims and tells an untrusted key from a
//     trusted key whose signature does not verify (altered payload or
//     signature);
//  4. statement: the payload is an in-toto Statement v1 whose subjects each
//     have a file name and a sha256, no name twice;
//  5. predicate-type: it is SLSA Provenance v1;
//  6. predicate: buildDefinition.buildType, externalParameters and
//     runDetails.builder.id are present, times are RFC 3339;
//  7. subjects: per artifacts, every expected artifact is a subject with
//     the same sha256 and no subject is unaccounted for. Every mismatch is
//     reported (errors.Join of one *VerifyError each).
//
// A failure is a *[VerifyError] (errors.As) naming its step. A Result is
// returned only on success.
func (v *Verifier) Verify(envelope []byte, artifacts ArtifactPolicy) (*Result, error) {
	if err := artifacts.check(); err != nil {
		return nil, err
	}
	var env envelopeJSON
	if err := json.Unmarshal(envelope, &env); err != nil {
		return nil, &VerifyError{Step: StepEnvelope, Msg: "not a JSON DSSE envelope", Err: err}
	}
	return v.verify(env, artifacts)
}

// VerifyBundle verifies a Sigstore bundle (the content of a .sigstore.json
// file) as written by [Sign]: first the bundle step (media type
// application/vnd.dev.sigstore.bundle.v0.3+json, or the older spelling of
// v0.3; public-key verification material; a dsseEnvelope), then the steps
// of [Verifier.Verify] on its envelope. Transparency log entries and
// timestamps, if any, are not checked: trust comes from the key. Result
// .Envelope can be compared with the one of the .intoto.jsonl using
// [Envelope.Equal].
func (v *Verifier) VerifyBundle(bundle []byte, artifacts ArtifactPolicy) (*Result, error) {
	if err := artifacts.check(); err != nil {
		return nil, err
	}
	var b bundleJSON
	if err := json.Unmarshal(bundle, &b); err != nil {
		return nil, &VerifyError{Step: StepBundle, Msg: "not a JSON Sigstore bundle", Err: err}
	}
	switch b.MediaType {
	case BundleMediaType, "application/vnd.dev.sigstore.bundle+json;version=0.3":
	default:
		return nil, &VerifyError{Step: StepBundle, Msg: "unsupported bundle media type", Expected: BundleMediaType, Actual: b.MediaType}
	}
	switch vm := b.VerificationMaterial; {
	case vm == nil:
		return nil, &VerifyError{Step: StepBundle, Msg: "the bundle has no verificationMaterial"}
	case vm.PublicKey == nil && (vm.Certificate != nil || vm.X509CertificateChain != nil):
		return nil, &VerifyError{Step: StepBundle, Msg: "the bundle is signed with a certificate (keyless); mkrelease verifies key-signed bundles: use cosign verify-blob-attestation with --certificate-identity and --certificate-oidc-issuer",
			Expected: "publicKey", Actual: "certificate"}
	case vm.PublicKey == nil:
		return nil, &VerifyError{Step: StepBundle, Msg: "the bundle's verificationMaterial has no publicKey", Expected: "publicKey"}
	}
	if b.DSSEEnvelope == nil {
		actual := "nothing"
		if b.MessageSignature != nil {
			actual = "messageSignature"
		}
		return nil, &VerifyError{Step: StepBundle, Msg: "the bundle carries no DSSE envelope", Expected: "dsseEnvelope", Actual: actual}
	}
	return v.verify(*b.DSSEEnvelope, artifacts)
}

func (p ArtifactPolicy) check() error {
	if !p.unsafe && len(p.files) == 0 {
		return errors.New("provenance: no artifacts to bind the statement to: pass WithArtifacts(name → sha256) with the files the statement must be about, or WithoutArtifactsUnsafe() to check the signature alone")
	}
	for name, sha := range p.files {
		if !isSHA256Hex(sha) {
			return fmt.Errorf("provenance: WithArtifacts: %s: %q is not a sha256 in hex", name, sha)
		}
	}
	return nil
}

func (v *Verifier) verify(ej envelopeJSON, artifacts ArtifactPolicy) (*Result, error) {
	env, err := decodeEnvelope(ej)
	if err != nil {
		return nil, err
	}
	if env.PayloadType != PayloadType {
		return nil, &VerifyError{Step: StepPayloadType, Msg: "the envelope does not carry an in-toto statement", Expected: PayloadType, Actual: env.PayloadType}
	}
	keyID, err := v.verifySignatures(env)
	if err != nil {
		return nil, err
	}
	prov, err := parseStatement(env.Payload)
	if err != nil {
		return nil, err
	}
	res := &Result{KeyID: keyID, Envelope: env, Statement: env.Payload, Provenance: prov}
	if !artifacts.unsafe {
		if err := bindSubjects(prov.Subjects, artifacts.files); err != nil {
			return nil, err
		}
		res.ArtifactsBound = true
	}
	return res, nil
}

func decodeEnvelope(ej envelopeJSON) (Envelope, error) {
	payload, err := decodeBase64(ej.Payload)
	if err != nil {
		return Envelope{}, &VerifyError{Step: StepEnvelope, Msg: "the payload is not base64", Err: err}
	}
	if len(payload) == 0 {
		return Envelope{}, &VerifyError{Step: StepEnvelope, Msg: "the envelope has no payload"}
	}
	env := Envelope{PayloadType: ej.PayloadType, Payload: payload}
	for i, s := range ej.Signatures {
		sig, err := decodeBase64(s.Sig)
		if err != nil {
			return Envelope{}, &VerifyError{Step: StepEnvelope, Msg: fmt.Sprintf("signature %d is not base64", i), Err: err}
		}
		env.Signatures = append(env.Signatures, Signature{KeyID: s.KeyID, Sig: sig})
	}
	return env, nil
}

// verifySignatures returns the KeyID of the first trusted key that verifies
// a signature of env. Every signature is tried with every trusted key: the
// keyid in the envelope is an unauthenticated hint, used only to explain a
// failure.
func (v *Verifier) verifySignatures(env Envelope) (string, error) {
	var trusted []string
	byDSSE := map[string]string{} // DSSE keyid (OpenSSH fingerprint) → KeyID
	for _, k := range v.keys {
		trusted = append(trusted, k.id+" ("+k.dsseID+")")
		byDSSE[k.dsseID] = k.id
	}
	slices.Sort(trusted)
	expected := "a signature by " + strings.Join(trusted, " or ")
	if len(env.Signatures) == 0 {
		return "", &VerifyError{Step: StepSignature, Msg: "the envelope has no signatures", Expected: expected, Actual: "0 signatures"}
	}
	pae := PAE(env.PayloadType, env.Payload)
	for _, s := range env.Signatures {
		for _, k := range v.keys {
			if k.verify(pae, s.Sig) {
				return k.id, nil
			}
		}
	}
	var claimed, reasons []string
	for i, s := range env.Signatures {
		id := s.KeyID
		if id == "" {
			id = "(no keyid)"
		}
		claimed = append(claimed, id)
		if s.KeyID == "" {
			reasons = append(reasons, fmt.Sprintf("signature %d names no key and no trusted key verifies it", i))
		} else if kid, ok := byDSSE[s.KeyID]; ok || slices.ContainsFunc(v.keys, func(k trustedKey) bool { return k.id == s.KeyID }) {
			if !ok {
				kid = s.KeyID
			}
			reasons = append(reasons, fmt.Sprintf("signature %d by trusted key %s does not verify: the payload or the signature was altered", i, kid))
		} else {
			reasons = append(reasons, fmt.Sprintf("signature %d is by untrusted key %s", i, s.KeyID))
		}
	}
	return "", &VerifyError{Step: StepSignature, Msg: strings.Join(reasons, "; "),
		Expected: expected, Actual: "signatures by " + strings.Join(claimed, ", ")}
}

// statementIn and predicateIn are what Verify reads of a statement: only
// the fields it checks or returns; unknown fields are ignored, as in-toto
// asks of a consumer.
type (
	statementIn struct {
		Type          string          `json:"_type"`
		Subject       []subjectJSON   `json:"subject"`
		PredicateType string          `json:"predicateType"`
		Predicate     json.RawMessage `json:"predicate"`
	}
	predicateIn struct {
		BuildDefinition *struct {
			BuildType            string                   `json:"buildType"`
			ExternalParameters   map[string]any           `json:"externalParameters"`
			InternalParameters   map[string]any           `json:"internalParameters"`
			ResolvedDependencies []resourceDescriptorJSON `json:"resolvedDependencies"`
		} `json:"buildDefinition"`
		RunDetails *struct {
			Builder *struct {
				ID      string            `json:"id"`
				Version map[string]string `json:"version"`
			} `json:"builder"`
			Metadata   *metadataJSON            `json:"metadata"`
			Byproducts []resourceDescriptorJSON `json:"byproducts"`
		} `json:"runDetails"`
	}
)

func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func parseStatement(payload []byte) (Provenance, error) {
	var st statementIn
	if err := decodeJSON(payload, &st); err != nil {
		return Provenance{}, &VerifyError{Step: StepStatement, Msg: "the payload is not a JSON statement", Err: err}
	}
	if st.Type != StatementType {
		return Provenance{}, &VerifyError{Step: StepStatement, Msg: "not an in-toto Statement v1", Expected: StatementType, Actual: st.Type}
	}
	if len(st.Subject) == 0 {
		return Provenance{}, &VerifyError{Step: StepStatement, Msg: "the statement has no subjects"}
	}
	var p Provenance
	for i, s := range st.Subject {
		sub := Subject{Name: s.Name, SHA256: s.Digest["sha256"]}
		if err := checkSubject(sub); err != nil {
			return Provenance{}, &VerifyError{Step: StepStatement, Name: s.Name, Msg: fmt.Sprintf("subject %d is malformed", i), Err: err}
		}
		p.Subjects = append(p.Subjects, sub)
	}
	slices.SortFunc(p.Subjects, func(a, b Subject) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(p.Subjects); i++ {
		if p.Subjects[i].Name == p.Subjects[i-1].Name {
			return Provenance{}, &VerifyError{Step: StepStatement, Name: p.Subjects[i].Name, Msg: fmt.Sprintf("subject %q is listed twice", p.Subjects[i].Name)}
		}
	}
	if st.PredicateType != PredicateType {
		return Provenance{}, &VerifyError{Step: StepPredicateType, Msg: "the statement is not SLSA provenance", Expected: PredicateType, Actual: st.PredicateType}
	}
	var pred predicateIn
	if err := decodeJSON(st.Predicate, &pred); err != nil {
		return Provenance{}, &VerifyError{Step: StepPredicate, Msg: "the predicate is not a JSON object", Err: err}
	}
	bd, rd := pred.BuildDefinition, pred.RunDetails
	switch {
	case bd == nil:
		return Provenance{}, &VerifyError{Step: StepPredicate, Msg: "no buildDefinition"}
	case bd.BuildType == "":
		return Provenance{}, &VerifyError{Step: StepPredicate, Msg: "no buildDefinition.buildType"}
	case bd.ExternalParameters == nil:
		return Provenance{}, &VerifyError{Step: StepPredicate, Msg: "no buildDefinition.externalParameters"}
	case rd == nil || rd.Builder == nil || rd.Builder.ID == "":
		return Provenance{}, &VerifyError{Step: StepPredicate, Msg: "no runDetails.builder.id"}
	}
	p.BuildType = bd.BuildType
	p.ExternalParameters = bd.ExternalParameters
	p.InternalParameters = bd.InternalParameters
	for _, d := range bd.ResolvedDependencies {
		p.ResolvedDependencies = append(p.ResolvedDependencies, Dependency(d))
	}
	for _, d := range rd.Byproducts {
		p.Byproducts = append(p.Byproducts, Dependency(d))
	}
	p.BuilderID = rd.Builder.ID
	p.BuilderVersion = rd.Builder.Version
	if md := rd.Metadata; md != nil {
		p.InvocationID = md.InvocationID
		for _, t := range []struct {
			field, value string
			dst          *time.Time
		}{{"startedOn", md.StartedOn, &p.StartedOn}, {"finishedOn", md.FinishedOn, &p.FinishedOn}} {
			if t.value == "" {
				continue
			}
			parsed, err := time.Parse(time.RFC3339Nano, t.value)
			if err != nil {
				return Provenance{}, &VerifyError{Step: StepPredicate, Msg: "runDetails.metadata." + t.field + " is not an RFC 3339 time", Err: err}
			}
			*t.dst = parsed
		}
	}
	return p, nil
}

// bindSubjects checks that subjects and files (name → sha256) are the same
// set with the same digests, reporting every difference.
func bindSubjects(subjects []Subject, files map[string]string) error {
	var errs []error
	have := make(map[string]string, len(subjects))
	for _, s := range subjects {
		have[s.Name] = s.SHA256
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		want := files[name]
		got, ok := have[name]
		switch {
		case !ok:
			errs = append(errs, &VerifyError{Step: StepSubjects, Name: name, Expected: want,
				Msg: fmt.Sprintf("artifact %s is not a subject of the statement", name)})
		case got != want:
			errs = append(errs, &VerifyError{Step: StepSubjects, Name: name, Expected: want, Actual: got,
				Msg: fmt.Sprintf("the statement's sha256 of %s differs from the artifact's", name)})
		}
	}
	for _, s := range subjects {
		if _, ok := files[s.Name]; !ok {
			errs = append(errs, &VerifyError{Step: StepSubjects, Name: s.Name, Actual: s.SHA256,
				Msg: fmt.Sprintf("subject %s is not among the artifacts being verified (unaccounted for)", s.Name)})
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
