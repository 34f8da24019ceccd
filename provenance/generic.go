package provenance

import (
	"context"
	"encoding/json"
	"fmt"
)

// SignStatement signs any in-toto Statement v1, whatever its predicate
// (test results, verification summaries), and returns its DSSE envelope as
// one line of JSON ending in "\n", as [Sign] writes the provenance's. The
// signature is verified with the signer's public key before returning.
func SignStatement(ctx context.Context, s Signer, statement []byte) ([]byte, error) {
	var st struct {
		Type          string `json:"_type"`
		PredicateType string `json:"predicateType"`
	}
	if err := json.Unmarshal(statement, &st); err != nil {
		return nil, fmt.Errorf("sign: the statement is not JSON: %w", err)
	}
	if st.Type != StatementType || st.PredicateType == "" {
		return nil, fmt.Errorf("sign: not an in-toto Statement v1 with a predicateType (_type %q)", st.Type)
	}
	if err := Ready(ctx, s); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	pub := s.Public()
	keyID := KeyID(pub)
	if keyID == "" {
		return nil, fmt.Errorf("sign: the signer's public key (%T) cannot be encoded", pub)
	}
	sig, err := s.SignMessage(ctx, PAE(PayloadType, statement))
	if err != nil {
		return nil, fmt.Errorf("sign with key %s: %w", keyID, err)
	}
	env := Envelope{PayloadType: PayloadType, Payload: statement, Signatures: []Signature{{KeyID: dsseKeyID(pub), Sig: sig}}}
	self, err := NewVerifier(pub)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	if _, err := self.verifySignatures(env); err != nil {
		return nil, fmt.Errorf("sign with key %s: the signature made does not verify: %w", keyID, err)
	}
	line, err := marshalJSON(env.toJSON())
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return append(line, '\n'), nil
}

// VerifyEnvelope checks a DSSE envelope of any in-toto statement: it parses,
// carries an in-toto payload, and is signed by a trusted key. It returns
// the id of that key and the statement; what the statement says (its
// predicate, its subjects) is the caller's to check. Failures are
// *[VerifyError] naming the step.
func (v *Verifier) VerifyEnvelope(envelope []byte) (keyID string, statement []byte, err error) {
	var ej envelopeJSON
	if err := json.Unmarshal(envelope, &ej); err != nil {
		return "", nil, &VerifyError{Step: StepEnvelope, Msg: "not a JSON DSSE envelope", Err: err}
	}
	env, err := decodeEnvelope(ej)
	if err != nil {
		return "", nil, err
	}
	if env.PayloadType != PayloadType {
		return "", nil, &VerifyError{Step: StepPayloadType, Msg: "the envelope does not carry an in-toto statement", Expected: PayloadType, Actual: env.PayloadType}
	}
	id, err := v.verifySignatures(env)
	if err != nil {
		return "", nil, err
	}
	return id, env.Payload, nil
}

// EnvelopePayload returns the in-toto statement a DSSE envelope carries
// without checking any signature: for reading what an envelope says when
// no key is trusted. Never act on it as if it were verified.
func EnvelopePayload(envelope []byte) ([]byte, error) {
	var ej envelopeJSON
	if err := json.Unmarshal(envelope, &ej); err != nil {
		return nil, &VerifyError{Step: StepEnvelope, Msg: "not a JSON DSSE envelope", Err: err}
	}
	env, err := decodeEnvelope(ej)
	if err != nil {
		return nil, err
	}
	if env.PayloadType != PayloadType {
		return nil, &VerifyError{Step: StepPayloadType, Msg: "the envelope does not carry an in-toto statement", Expected: PayloadType, Actual: env.PayloadType}
	}
	return env.Payload, nil
}
