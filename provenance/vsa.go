package provenance

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// VSAPredicateType is the SLSA Verification Summary Attestation v1
// predicate type.
const VSAPredicateType = "https://slsa.dev/verification_summary/v1"

// VSA results.
const (
	VSAPassed = "PASSED"
	VSAFailed = "FAILED"
)

// VSA is a SLSA Verification Summary Attestation: who verified which
// artifacts, against which policy and which attestations, with what
// result.
type VSA struct {
	// Subjects are the artifacts verified (wheels, bundles, SBOM, and the
	// release notes publish writes).
	Subjects []Subject
	// VerifierID identifies the verifier (verifier.id); VerifierVersion
	// maps component to version.
	VerifierID      string
	VerifierVersion map[string]string
	// TimeVerified is when the verification ran.
	TimeVerified time.Time
	// ResourceURI names what was verified as a whole (the release).
	ResourceURI string
	// PolicyURI and PolicyDigest identify the policy set evaluated: the
	// digest covers every policy module (see Policies).
	PolicyURI    string
	PolicyDigest map[string]string
	// PolicyModules, when set, names every policy module with its sha256
	// hex digest (policy.annotations.modules), so that an auditor sees
	// which modules the digest covers.
	PolicyModules map[string]string
	// PolicyParameters, when set, are the parameters the policies were
	// evaluated with (policy.annotations.parameters): thresholds are part
	// of what was verified.
	PolicyParameters map[string]any
	// InputAttestations are the attestations the decision read
	// (provenance, evidence statements), each with its digest.
	InputAttestations []Dependency
	// Result is VSAPassed or VSAFailed.
	Result string
	// VerifiedLevels are the SLSA levels the verification confirms.
	VerifiedLevels []string
}

type vsaPredicateJSON struct {
	Verifier           builderJSON              `json:"verifier"`
	TimeVerified       string                   `json:"timeVerified"`
	ResourceURI        string                   `json:"resourceUri"`
	Policy             resourceDescriptorJSON   `json:"policy"`
	InputAttestations  []resourceDescriptorJSON `json:"inputAttestations,omitempty"`
	VerificationResult string                   `json:"verificationResult"`
	VerifiedLevels     []string                 `json:"verifiedLevels"`
	SLSAVersion        string                   `json:"slsaVersion"`
}

// Statement returns the in-toto Statement v1 with the VSA v1 predicate as
// compact JSON, subjects sorted by name. It refuses what could not be
// checked later: no subject, a bad digest, no verifier id, resource URI or
// policy, a result other than PASSED or FAILED.
func (v VSA) Statement() ([]byte, error) {
	if len(v.Subjects) == 0 {
		return nil, errors.New("verification summary: no subjects")
	}
	if v.VerifierID == "" || v.ResourceURI == "" || v.PolicyURI == "" {
		return nil, errors.New("verification summary: the verifier id, resource URI and policy URI are required")
	}
	if v.Result != VSAPassed && v.Result != VSAFailed {
		return nil, fmt.Errorf("verification summary: result %q is not PASSED or FAILED", v.Result)
	}
	pred := vsaPredicateJSON{
		Verifier:           builderJSON{ID: v.VerifierID, Version: v.VerifierVersion},
		TimeVerified:       formatTime(v.TimeVerified),
		ResourceURI:        v.ResourceURI,
		Policy:             resourceDescriptorJSON{URI: v.PolicyURI, Digest: v.PolicyDigest},
		VerificationResult: v.Result,
		VerifiedLevels:     v.VerifiedLevels,
		SLSAVersion:        "1.0",
	}
	if len(v.PolicyModules) > 0 {
		mods := map[string]any{}
		for name, d := range v.PolicyModules {
			if err := checkDigestValue("sha256", d); err != nil {
				return nil, fmt.Errorf("verification summary: policy module %s: %w", name, err)
			}
			mods[name] = d
		}
		pred.Policy.Annotations = map[string]any{"modules": mods}
	}
	if len(v.PolicyParameters) > 0 {
		if pred.Policy.Annotations == nil {
			pred.Policy.Annotations = map[string]any{}
		}
		pred.Policy.Annotations["parameters"] = v.PolicyParameters
	}
	if pred.VerifiedLevels == nil {
		pred.VerifiedLevels = []string{}
	}
	for alg, d := range v.PolicyDigest {
		if err := checkDigestValue(alg, d); err != nil {
			return nil, fmt.Errorf("verification summary: policy: %w", err)
		}
	}
	for i, a := range v.InputAttestations {
		if a.URI == "" && len(a.Digest) == 0 {
			return nil, fmt.Errorf("verification summary: input attestation %d (%q) has neither a URI nor a digest", i, a.Name)
		}
		for alg, d := range a.Digest {
			if err := checkDigestValue(alg, d); err != nil {
				return nil, fmt.Errorf("verification summary: input attestation %d (%q): %w", i, a.Name, err)
			}
		}
		pred.InputAttestations = append(pred.InputAttestations, resourceDescriptorJSON(a))
	}
	out, err := NewStatement(VSAPredicateType, v.Subjects, pred)
	if err != nil {
		return nil, fmt.Errorf("verification summary: %w", err)
	}
	return out, nil
}

// ParseVSA reads the VSA predicate of a statement (as VerifyEnvelope
// returns it): the subjects and the fields above.
func ParseVSA(statement []byte) (VSA, error) {
	var st struct {
		Type          string          `json:"_type"`
		Subject       []subjectJSON   `json:"subject"`
		PredicateType string          `json:"predicateType"`
		Predicate     json.RawMessage `json:"predicate"`
	}
	if err := json.Unmarshal(statement, &st); err != nil {
		return VSA{}, fmt.Errorf("verification summary: %w", err)
	}
	if st.Type != StatementType || st.PredicateType != VSAPredicateType {
		return VSA{}, fmt.Errorf("verification summary: predicate type %q, want %s", st.PredicateType, VSAPredicateType)
	}
	var p vsaPredicateJSON
	if err := json.Unmarshal(st.Predicate, &p); err != nil {
		return VSA{}, fmt.Errorf("verification summary: predicate: %w", err)
	}
	v := VSA{VerifierID: p.Verifier.ID, VerifierVersion: p.Verifier.Version, ResourceURI: p.ResourceURI,
		PolicyURI: p.Policy.URI, PolicyDigest: p.Policy.Digest, Result: p.VerificationResult, VerifiedLevels: p.VerifiedLevels}
	if params, ok := p.Policy.Annotations["parameters"].(map[string]any); ok {
		v.PolicyParameters = params
	}
	if mods, ok := p.Policy.Annotations["modules"].(map[string]any); ok {
		v.PolicyModules = map[string]string{}
		for name, d := range mods {
			if s, ok := d.(string); ok {
				v.PolicyModules[name] = s
			}
		}
	}
	if t, err := time.Parse(time.RFC3339, p.TimeVerified); err == nil {
		v.TimeVerified = t
	}
	for _, s := range st.Subject {
		v.Subjects = append(v.Subjects, Subject{Name: s.Name, SHA256: s.Digest["sha256"]})
	}
	for _, a := range p.InputAttestations {
		v.InputAttestations = append(v.InputAttestations, Dependency(a))
	}
	return v, nil
}
