package provenance

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mkrelease/mkrelease/internal/dist"
)

// Envelope is a DSSE envelope, decoded: the payload and signatures as bytes.
type Envelope struct {
	PayloadType string
	Payload     []byte
	Signatures  []Signature
}

// Signature is one signature of an [Envelope]. KeyID is the signer's claim,
// not authenticated: verification tries every trusted key.
type Signature struct {
	KeyID string
	Sig   []byte
}

// Equal reports whether e and o have the same payload type, payload and
// signatures in the same order: whether a .sigstore.json bundle carries the
// envelope of the .intoto.jsonl beside it.
func (e Envelope) Equal(o Envelope) bool {
	if e.PayloadType != o.PayloadType || !bytes.Equal(e.Payload, o.Payload) || len(e.Signatures) != len(o.Signatures) {
		return false
	}
	for i := range e.Signatures {
		if e.Signatures[i].KeyID != o.Signatures[i].KeyID || !bytes.Equal(e.Signatures[i].Sig, o.Signatures[i].Sig) {
			return false
		}
	}
	return true
}

// JSON forms of the DSSE envelope (also the dsseEnvelope of a Sigstore
// bundle, whose protobuf JSON mapping has the same field names) and of the
// bundle.
type (
	envelopeJSON struct {
		PayloadType string          `json:"payloadType"`
		Payload     string          `json:"payload"`
		Signatures  []signatureJSON `json:"signatures"`
	}
	signatureJSON struct {
		KeyID string `json:"keyid,omitempty"`
		Sig   string `json:"sig"`
	}
	bundleJSON struct {
		MediaType            string                    `json:"mediaType"`
		VerificationMaterial *verificationMaterialJSON `json:"verificationMaterial"`
		DSSEEnvelope         *envelopeJSON             `json:"dsseEnvelope,omitempty"`
		MessageSignature     json.RawMessage           `json:"messageSignature,omitempty"`
	}
	verificationMaterialJSON struct {
		PublicKey            *publicKeyIdentifierJSON `json:"publicKey,omitempty"`
		Certificate          json.RawMessage          `json:"certificate,omitempty"`
		X509CertificateChain json.RawMessage          `json:"x509CertificateChain,omitempty"`
		TlogEntries          []json.RawMessage        `json:"tlogEntries,omitempty"`
	}
	publicKeyIdentifierJSON struct {
		Hint string `json:"hint,omitempty"`
	}
)

func (e Envelope) toJSON() envelopeJSON {
	j := envelopeJSON{PayloadType: e.PayloadType, Payload: base64.StdEncoding.EncodeToString(e.Payload)}
	for _, s := range e.Signatures {
		j.Signatures = append(j.Signatures, signatureJSON{KeyID: s.KeyID, Sig: base64.StdEncoding.EncodeToString(s.Sig)})
	}
	return j
}

// PAE is the DSSE v1 pre-authentication encoding of a payload, the bytes a
// DSSE signature signs:
//
//	"DSSEv1" SP LEN(payloadType) SP payloadType SP LEN(payload) SP payload
//
// with LEN the byte count in ASCII decimal and SP one space.
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(payloadType) + len(payload) + 32)
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}

// Sign signs an in-toto statement (from [Provenance.Statement]) with s and
// returns it in the two forms a release carries:
//
//   - envelope: the DSSE envelope as one line of JSON ending in "\n", the
//     NAME-VERSION.intoto.jsonl that `cosign verify-blob-attestation
//     --signature` reads. payloadType is "application/vnd.in-toto+json",
//     one signature, whose keyid is the key's OpenSSH SHA-256 fingerprint
//     ("SHA256:…"), the form DSSE verifiers built on go-securesystemslib
//     (sigstore-go, cosign's bundle path) match; any other non-empty keyid
//     makes them skip the signature.
//   - bundle: a Sigstore bundle v0.3 (NAME-VERSION.sigstore.json) with the
//     same envelope as dsseEnvelope and verificationMaterial.publicKey.hint
//     set to the key id. It has no transparency log entry or timestamp: it
//     is verified offline against a trusted public key.
//
// Before returning, Sign verifies its own signature with the signer's public
// key, so a signer that signs with another key, or a KMS that returns a
// signature in another format, fails here rather than at the auditor.
func Sign(ctx context.Context, s Signer, statement []byte) (envelope, bundle []byte, err error) {
	var st struct {
		Type string `json:"_type"`
	}
	if err := json.Unmarshal(statement, &st); err != nil {
		return nil, nil, fmt.Errorf("sign: the statement is not JSON: %w", err)
	}
	if st.Type != StatementType {
		return nil, nil, fmt.Errorf("sign: the statement's _type is %q, expected %q", st.Type, StatementType)
	}
	if err := Ready(ctx, s); err != nil {
		return nil, nil, fmt.Errorf("sign: %w", err)
	}
	pub := s.Public()
	keyID := KeyID(pub)
	if keyID == "" {
		return nil, nil, fmt.Errorf("sign: the signer's public key (%T) cannot be encoded", pub)
	}
	sig, err := s.SignMessage(ctx, PAE(PayloadType, statement))
	if err != nil {
		return nil, nil, fmt.Errorf("sign with key %s: %w", keyID, err)
	}
	env := Envelope{PayloadType: PayloadType, Payload: statement, Signatures: []Signature{{KeyID: dsseKeyID(pub), Sig: sig}}}

	self, err := NewVerifier(pub)
	if err != nil {
		return nil, nil, fmt.Errorf("sign: %w", err)
	}
	if _, err := self.verify(env.toJSON(), WithoutArtifactsUnsafe()); err != nil {
		return nil, nil, fmt.Errorf("sign with key %s: the signature made does not verify: %w", keyID, err)
	}

	envelope, err = marshalJSON(env.toJSON())
	if err != nil {
		return nil, nil, fmt.Errorf("sign: %w", err)
	}
	envJSON := env.toJSON()
	bundle, err = marshalJSON(bundleJSON{
		MediaType:            BundleMediaType,
		VerificationMaterial: &verificationMaterialJSON{PublicKey: &publicKeyIdentifierJSON{Hint: keyID}},
		DSSEEnvelope:         &envJSON,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("sign: %w", err)
	}
	return append(envelope, '\n'), append(bundle, '\n'), nil
}

// decodeBase64 accepts standard and URL-safe base64, padded or not, as the
// DSSE specification asks of a verifier.
func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// Statements lists the release provenance files of a release folder: each
// file whose name [dist.Guess] reads as a release's DSSE statements,
// NAME-VERSION.intoto.jsonl ([dist.Names.Provenance]); evidence's statements
// and verification summaries are kinds of their own. A folder that
// cannot be read lists none.
func Statements(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if c, n := dist.Guess(name); c.Kind == dist.KindProvenance && name == n.Provenance() {
			out = append(out, filepath.Join(dir, name))
		}
	}
	return out
}
