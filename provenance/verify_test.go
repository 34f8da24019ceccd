package provenance_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/mkrelease/mkrelease/provenance"
)

func signSample(t *testing.T, s provenance.Signer, p provenance.Provenance) (envelope, bundle []byte) {
	t.Helper()
	st, err := p.Statement()
	if err != nil {
		t.Fatal(err)
	}
	envelope, bundle, err = provenance.Sign(context.Background(), s, st)
	if err != nil {
		t.Fatal(err)
	}
	return envelope, bundle
}

func verifier(t *testing.T, s provenance.Signer) *provenance.Verifier {
	t.Helper()
	v, err := provenance.NewVerifier(s.Public())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSignVerifyRoundTrip(t *testing.T) {
	s := newFakeSigner(t)
	env, bundle := signSample(t, s, sampleProvenance())
	if !bytes.HasSuffix(env, []byte("\n")) || bytes.Count(env, []byte("\n")) != 1 {
		t.Errorf("envelope is not one JSON line ending in a newline: %q", env)
	}
	v := verifier(t, s)
	res, err := v.Verify(env, provenance.WithArtifacts(releaseDigests()))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if want := provenance.KeyID(s.Public()); res.KeyID != want {
		t.Errorf("KeyID = %s, want %s", res.KeyID, want)
	}
	if !res.ArtifactsBound {
		t.Error("ArtifactsBound = false with WithArtifacts")
	}
	p := res.Provenance
	if len(p.Subjects) != 4 || p.Subjects[0].Name != "vexl-0.3.0-linux-x86_64.tar.gz" {
		t.Errorf("Subjects = %v", p.Subjects)
	}
	if p.BuildType != provenance.BuildType || p.BuilderID != "https://mkrelease.dev/builders/local" || p.BuilderVersion["mkrelease"] != "0.1.0-dev" {
		t.Errorf("build type / builder = %q %q %v", p.BuildType, p.BuilderID, p.BuilderVersion)
	}
	if got := p.ExternalParameters["release_toml_sha256"]; got != sha("release.toml") {
		t.Errorf("externalParameters.release_toml_sha256 = %v", got)
	}
	if got := p.InternalParameters["source_date_epoch"]; got != json.Number("1700000000") {
		t.Errorf("internalParameters.source_date_epoch = %#v, want json.Number 1700000000", got)
	}
	if len(p.ResolvedDependencies) != 4 || p.ResolvedDependencies[2].Digest["sha256"] != sha("numpy") || p.ResolvedDependencies[3].URI != "pkg:golang/go@1.26.8" {
		t.Errorf("ResolvedDependencies = %+v", p.ResolvedDependencies)
	}
	if want := time.Date(2026, 11, 30, 7, 1, 30, 500_000_000, time.UTC); !p.FinishedOn.Equal(want) || p.InvocationID == "" {
		t.Errorf("FinishedOn = %v, InvocationID = %q", p.FinishedOn, p.InvocationID)
	}
	st, _ := sampleProvenance().Statement()
	if !bytes.Equal(res.Statement, st) {
		t.Error("Result.Statement is not the signed statement")
	}

	// The bundle carries the same envelope and verifies the same way.
	bres, err := v.VerifyBundle(bundle, provenance.WithArtifacts(releaseDigests()))
	if err != nil {
		t.Fatalf("VerifyBundle: %v", err)
	}
	if !bres.Envelope.Equal(res.Envelope) || bres.KeyID != res.KeyID {
		t.Error("the bundle's envelope differs from the .intoto.jsonl one")
	}
	var b struct {
		MediaType            string
		VerificationMaterial struct{ PublicKey struct{ Hint string } }
	}
	if err := json.Unmarshal(bundle, &b); err != nil {
		t.Fatal(err)
	}
	if b.MediaType != "application/vnd.dev.sigstore.bundle.v0.3+json" || b.VerificationMaterial.PublicKey.Hint != res.KeyID {
		t.Errorf("bundle mediaType %q, hint %q", b.MediaType, b.VerificationMaterial.PublicKey.Hint)
	}
}

// pubVerifier is a go-securesystemslib DSSE verifier for a public key,
// with no key id of its own: like sigstore-go's, it then matches an
// envelope's keyid against the key's OpenSSH fingerprint.
type pubVerifier struct{ pub crypto.PublicKey }

func (p pubVerifier) Verify(_ context.Context, data, sig []byte) error {
	h := sha256.Sum256(data)
	if !ecdsa.VerifyASN1(p.pub.(*ecdsa.PublicKey), h[:], sig) {
		return errors.New("bad signature")
	}
	return nil
}
func (p pubVerifier) KeyID() (string, error)   { return "", nil }
func (p pubVerifier) Public() crypto.PublicKey { return p.pub }

// TestSecureSystemsLibAccepts cross-checks the envelope (PAE, base64,
// keyid) with go-securesystemslib's DSSE verifier, the one sigstore-go and
// sigstore/sigstore's pkg/signature/dsse use.
func TestSecureSystemsLibAccepts(t *testing.T) {
	s := newFakeSigner(t)
	env, _ := signSample(t, s, sampleProvenance())
	var e dsse.Envelope
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	ev, err := dsse.NewEnvelopeVerifier(pubVerifier{s.Public()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Verify(context.Background(), &e); err != nil {
		t.Errorf("go-securesystemslib refuses the envelope: %v", err)
	}
	ev2, _ := dsse.NewEnvelopeVerifier(pubVerifier{newFakeSigner(t).Public()})
	if _, err := ev2.Verify(context.Background(), &e); err == nil {
		t.Error("go-securesystemslib accepts the envelope with another key")
	}
}

func TestPAE(t *testing.T) {
	// The example of the DSSE specification.
	got := provenance.PAE("http://example.com/HelloWorld", []byte("hello world"))
	if want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"; string(got) != want {
		t.Errorf("PAE = %q, want %q", got, want)
	}
}

// envelope helpers for the failure table.
type rawEnvelope struct {
	PayloadType string `json:"payloadType"`
	Payload     string `json:"payload"`
	Signatures  []struct {
		KeyID string `json:"keyid"`
		Sig   string `json:"sig"`
	} `json:"signatures"`
}

func editEnvelope(t *testing.T, env []byte, edit func(*rawEnvelope)) []byte {
	t.Helper()
	var e rawEnvelope
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	edit(&e)
	out, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func flipByte(t *testing.T, b64 string, i int) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	b[i%len(b)] ^= 0x01
	return base64.StdEncoding.EncodeToString(b)
}

// signRaw signs arbitrary payload bytes with an arbitrary payload type, as
// an attacker or a buggy producer could.
func signRaw(t *testing.T, s provenance.Signer, payloadType string, payload []byte) []byte {
	t.Helper()
	sig, err := s.SignMessage(context.Background(), provenance.PAE(payloadType, payload))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(map[string]any{
		"payloadType": payloadType,
		"payload":     base64.StdEncoding.EncodeToString(payload),
		"signatures":  []map[string]string{{"keyid": "", "sig": base64.StdEncoding.EncodeToString(sig)}},
	})
	return out
}

// editStatement re-signs the sample statement after edit.
func editStatement(t *testing.T, s provenance.Signer, edit func(map[string]any)) []byte {
	t.Helper()
	raw, err := sampleProvenance().Statement()
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	edit(st)
	payload, _ := json.Marshal(st)
	return signRaw(t, s, provenance.PayloadType, payload)
}

func TestVerifyFailures(t *testing.T) {
	s := newFakeSigner(t)
	other := newFakeSigner(t)
	good, _ := signSample(t, s, sampleProvenance())
	byOther, _ := signSample(t, other, sampleProvenance())
	digests := releaseDigests()
	const wheel = "vexl-0.3.0-py3-none-manylinux_2_17_x86_64.whl"

	for _, tc := range []struct {
		name     string
		envelope []byte
		files    map[string]string // nil: releaseDigests()
		step     provenance.Step
		subject  string // VerifyError.Name, when set
		expected string // VerifyError.Expected, when set
		actual   string // substring of VerifyError.Actual, when set
		msg      string // substring of the message
	}{
		{name: "garbage", envelope: []byte("{not json"), step: provenance.StepEnvelope, msg: "not a JSON DSSE envelope"},
		{name: "two envelopes", envelope: append(bytes.Clone(good), good...), step: provenance.StepEnvelope},
		{name: "payload not base64", envelope: editEnvelope(t, good, func(e *rawEnvelope) { e.Payload = "%%%" }), step: provenance.StepEnvelope, msg: "not base64"},
		{name: "empty payload", envelope: editEnvelope(t, good, func(e *rawEnvelope) { e.Payload = "" }), step: provenance.StepEnvelope, msg: "no payload"},
		{name: "wrong payload type", envelope: signRaw(t, s, "application/json", mustStatement(t)), step: provenance.StepPayloadType,
			expected: "application/vnd.in-toto+json", actual: "application/json"},
		{name: "payload type changed after signing", envelope: editEnvelope(t, good, func(e *rawEnvelope) { e.PayloadType = "application/json" }),
			step: provenance.StepPayloadType},
		{name: "no signatures", envelope: editEnvelope(t, good, func(e *rawEnvelope) { e.Signatures = nil }), step: provenance.StepSignature, actual: "0 signatures"},
		{name: "untrusted key", envelope: byOther, step: provenance.StepSignature,
			actual: provenance.DSSEKeyIDForTest(other.Public()), msg: "untrusted key " + provenance.DSSEKeyIDForTest(other.Public())},
		{name: "flipped payload byte", envelope: editEnvelope(t, good, func(e *rawEnvelope) { e.Payload = flipByte(t, e.Payload, 100) }),
			step: provenance.StepSignature, msg: "trusted key " + provenance.KeyID(s.Public()) + " does not verify"},
		{name: "flipped signature byte", envelope: editEnvelope(t, good, func(e *rawEnvelope) { e.Signatures[0].Sig = flipByte(t, e.Signatures[0].Sig, 20) }),
			step: provenance.StepSignature, msg: "does not verify"},
		{name: "signature without keyid", envelope: editEnvelope(t, byOther, func(e *rawEnvelope) { e.Signatures[0].KeyID = "" }),
			step: provenance.StepSignature, msg: "names no key"},
		{name: "payload not JSON", envelope: signRaw(t, s, provenance.PayloadType, []byte("hello")), step: provenance.StepStatement},
		{name: "data after the statement", envelope: signRaw(t, s, provenance.PayloadType, append(mustStatement(t), '}')), step: provenance.StepStatement,
			msg: "data after the JSON value"},
		{name: "wrong statement type", envelope: editStatement(t, s, func(st map[string]any) { st["_type"] = "https://in-toto.io/Statement/v0.1" }),
			step: provenance.StepStatement, expected: provenance.StatementType, actual: "https://in-toto.io/Statement/v0.1"},
		{name: "subject without sha256", envelope: editStatement(t, s, func(st map[string]any) {
			st["subject"].([]any)[0].(map[string]any)["digest"] = map[string]any{"sha512": "ab"}
		}), step: provenance.StepStatement, msg: "malformed"},
		{name: "wrong predicate type", envelope: editStatement(t, s, func(st map[string]any) { st["predicateType"] = "https://slsa.dev/provenance/v0.2" }),
			step: provenance.StepPredicateType, expected: provenance.PredicateType, actual: "https://slsa.dev/provenance/v0.2"},
		{name: "predicate without builder", envelope: editStatement(t, s, func(st map[string]any) {
			delete(st["predicate"].(map[string]any), "runDetails")
		}), step: provenance.StepPredicate, msg: "runDetails.builder.id"},
		{name: "subject removed and re-signed", envelope: editStatement(t, s, func(st map[string]any) {
			subs := st["subject"].([]any)
			st["subject"] = append([]any{}, subs[:1]...)
			st["subject"] = append(st["subject"].([]any), subs[2:]...) // drops subs[1], the compiler wheel
		}), step: provenance.StepSubjects, subject: wheel, expected: digests[wheel], msg: "is not a subject"},
		{name: "extra subject", envelope: good, files: without(digests, wheel), step: provenance.StepSubjects, subject: wheel,
			actual: digests[wheel], msg: "unaccounted for"},
		{name: "wrong digest", envelope: good, files: with(digests, wheel, sha("another build")), step: provenance.StepSubjects, subject: wheel,
			expected: sha("another build"), actual: digests[wheel], msg: "differs"},
		{name: "subject renamed", envelope: good, files: with(without(digests, wheel), "vexl-0.3.1-py3-none-any.whl", digests[wheel]),
			step: provenance.StepSubjects},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := tc.files
			if files == nil {
				files = digests
			}
			res, err := verifier(t, s).Verify(tc.envelope, provenance.WithArtifacts(files))
			if err == nil {
				t.Fatalf("Verify succeeded (%+v), want a %s failure", res.KeyID, tc.step)
			}
			if res != nil {
				t.Error("Verify returned a result with an error")
			}
			ve := asVerifyError(t, err)
			if ve.Step != tc.step {
				t.Fatalf("step = %q, want %q (error: %v)", ve.Step, tc.step, err)
			}
			if tc.subject != "" && ve.Name != tc.subject {
				t.Errorf("Name = %q, want %q", ve.Name, tc.subject)
			}
			if tc.expected != "" && ve.Expected != tc.expected {
				t.Errorf("Expected = %q, want %q", ve.Expected, tc.expected)
			}
			if tc.actual != "" && !strings.Contains(ve.Actual, tc.actual) {
				t.Errorf("Actual = %q, want it to contain %q", ve.Actual, tc.actual)
			}
			if tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", err, tc.msg)
			}
			if !strings.Contains(err.Error(), "provenance "+string(tc.step)+" check") {
				t.Errorf("error %q does not name its step", err)
			}
		})
	}
}

// TestVerifyReportsEverySubjectProblem: a missing and an extra subject at
// once give two errors, both found with errors.As over the join.
func TestVerifyReportsEverySubjectProblem(t *testing.T) {
	s := newFakeSigner(t)
	env, _ := signSample(t, s, sampleProvenance())
	files := with(without(releaseDigests(), "vexl-0.3.0.spdx.json"), "vexl-0.3.0.cdx.json", sha("x"))
	_, err := verifier(t, s).Verify(env, provenance.WithArtifacts(files))
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 2 {
		t.Fatalf("error %v: want two joined findings", err)
	}
	names := map[string]bool{}
	for _, e := range joined.Unwrap() {
		ve := asVerifyError(t, e)
		if ve.Step != provenance.StepSubjects {
			t.Errorf("step %q", ve.Step)
		}
		names[ve.Name] = true
	}
	if !names["vexl-0.3.0.spdx.json"] || !names["vexl-0.3.0.cdx.json"] {
		t.Errorf("findings name %v", names)
	}
	fs := provenance.Findings(err)
	if len(fs) != 2 {
		t.Fatalf("Findings = %+v, want two", fs)
	}
	for i, f := range fs {
		ve := asVerifyError(t, joined.Unwrap()[i])
		if f.Check != string(provenance.StepSubjects) || f.File != ve.Name || f.Want != ve.Expected || f.Got != ve.Actual || f.Msg != ve.Msg {
			t.Errorf("finding %+v of %+v", f, ve)
		}
	}
	if f := fs[0]; f.File != "vexl-0.3.0.cdx.json" || f.Want == "" || f.Got != "" {
		t.Errorf("the missing subject's finding %+v: want the artifact's digest as Want", f)
	}
	if f := fs[1]; f.File != "vexl-0.3.0.spdx.json" || f.Want != "" || f.Got == "" {
		t.Errorf("the unaccounted subject's finding %+v: want its digest as Got", f)
	}
}

// TestVerifyErrorFinding: a finding carries the step, the subject, the
// values compared and the message with its cause; Error's text is the
// finding's rendered as before.
func TestVerifyErrorFinding(t *testing.T) {
	ve := &provenance.VerifyError{Step: provenance.StepPayloadType, Name: "x", Expected: "a", Actual: "b", Msg: "wrong", Err: errors.New("cause")}
	if got, want := ve.Error(), "provenance payload-type check: wrong (expected a, got b): cause"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	f := ve.Finding()
	if f.Check != "payload-type" || f.File != "x" || f.Want != "a" || f.Got != "b" || f.Msg != "wrong: cause" {
		t.Errorf("Finding() = %+v", f)
	}
	if fs := provenance.Findings(fmt.Errorf("wrapped: %w", ve)); len(fs) != 1 || fs[0] != f {
		t.Errorf("Findings(wrapped) = %+v", fs)
	}
	if fs := provenance.Findings(errors.New("plain")); len(fs) != 1 || fs[0].Check != "" || fs[0].Msg != "plain" {
		t.Errorf("Findings(plain) = %+v", fs)
	}
	if provenance.Findings(nil) != nil {
		t.Error("Findings(nil) not nil")
	}
}

func TestArtifactBindingIsRequired(t *testing.T) {
	s := newFakeSigner(t)
	env, bundle := signSample(t, s, sampleProvenance())
	v := verifier(t, s)
	for _, tc := range []struct {
		name   string
		policy provenance.ArtifactPolicy
	}{
		{"zero policy", provenance.ArtifactPolicy{}},
		{"nil files", provenance.WithArtifacts(nil)},
		{"empty files", provenance.WithArtifacts(map[string]string{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for form, f := range map[string]func([]byte, provenance.ArtifactPolicy) (*provenance.Result, error){"Verify": v.Verify, "VerifyBundle": v.VerifyBundle} {
				in := env
				if form == "VerifyBundle" {
					in = bundle
				}
				_, err := f(in, tc.policy)
				if err == nil || !strings.Contains(err.Error(), "WithoutArtifactsUnsafe()") {
					t.Errorf("%s error = %v, want one that names WithoutArtifactsUnsafe()", form, err)
				}
			}
		})
	}
	t.Run("bad expected digest", func(t *testing.T) {
		_, err := v.Verify(env, provenance.WithArtifacts(map[string]string{"a.whl": "xyz"}))
		if err == nil || !strings.Contains(err.Error(), "a.whl") {
			t.Errorf("error = %v, want one naming a.whl", err)
		}
	})
	t.Run("unsafe opt-out", func(t *testing.T) {
		res, err := v.Verify(env, provenance.WithoutArtifactsUnsafe())
		if err != nil {
			t.Fatal(err)
		}
		if res.ArtifactsBound {
			t.Error("ArtifactsBound = true without artifacts")
		}
		if len(res.Provenance.Subjects) != 4 {
			t.Errorf("Subjects = %v", res.Provenance.Subjects)
		}
	})
}

func TestNewVerifier(t *testing.T) {
	_, err := provenance.NewVerifier()
	if err == nil || !strings.Contains(err.Error(), "LoadPublicKey") {
		t.Errorf("NewVerifier() error = %v, want one saying what to pass", err)
	}
	if _, err := provenance.NewVerifier(nil); err == nil {
		t.Error("NewVerifier(nil) succeeded")
	}
	if _, err := provenance.NewVerifier("not a key"); err == nil {
		t.Error("NewVerifier(string) succeeded")
	}
	a, b := newFakeSigner(t), newFakeSigner(t)
	v, err := provenance.NewVerifier(a.Public(), b.Public(), a.Public())
	if err != nil {
		t.Fatal(err)
	}
	if got := v.KeyIDs(); len(got) != 2 {
		t.Errorf("KeyIDs = %v, want 2 (duplicates merged)", got)
	}
	// Either trusted key verifies.
	env, _ := signSample(t, b, sampleProvenance())
	res, err := v.Verify(env, provenance.WithArtifacts(releaseDigests()))
	if err != nil || res.KeyID != provenance.KeyID(b.Public()) {
		t.Errorf("Verify with the second trusted key: %v, %v", res, err)
	}
}

func TestVerifyBundleFailures(t *testing.T) {
	s := newFakeSigner(t)
	_, bundle := signSample(t, s, sampleProvenance())
	edit := func(f func(map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(bundle, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		out, _ := json.Marshal(m)
		return out
	}
	for _, tc := range []struct {
		name   string
		bundle []byte
		step   provenance.Step
		msg    string
	}{
		{"garbage", []byte("]"), provenance.StepBundle, "not a JSON Sigstore bundle"},
		{"v0.1 media type", edit(func(m map[string]any) { m["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=0.1" }), provenance.StepBundle, "media type"},
		{"certificate", edit(func(m map[string]any) {
			m["verificationMaterial"] = map[string]any{"certificate": map[string]any{"rawBytes": "AAAA"}}
		}), provenance.StepBundle, "certificate"},
		{"no verification material", edit(func(m map[string]any) { delete(m, "verificationMaterial") }), provenance.StepBundle, "verificationMaterial"},
		{"message signature", edit(func(m map[string]any) {
			delete(m, "dsseEnvelope")
			m["messageSignature"] = map[string]any{"signature": "AAAA"}
		}), provenance.StepBundle, "no DSSE envelope"},
		{"tampered envelope", edit(func(m map[string]any) {
			e := m["dsseEnvelope"].(map[string]any)
			e["payload"] = flipByte(t, e["payload"].(string), 50)
		}), provenance.StepSignature, "does not verify"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := verifier(t, s).VerifyBundle(tc.bundle, provenance.WithArtifacts(releaseDigests()))
			ve := asVerifyError(t, err)
			if ve.Step != tc.step || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error = %v (step %q), want step %q and %q", err, ve.Step, tc.step, tc.msg)
			}
		})
	}
	t.Run("the older v0.3 media type", func(t *testing.T) {
		b := edit(func(m map[string]any) { m["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=0.3" })
		if _, err := verifier(t, s).VerifyBundle(b, provenance.WithArtifacts(releaseDigests())); err != nil {
			t.Error(err)
		}
	})
}

// lyingSigner signs with one key but claims another.
type lyingSigner struct{ claims, signs *fakeSigner }

func (l lyingSigner) Public() crypto.PublicKey { return l.claims.Public() }
func (l lyingSigner) SignMessage(ctx context.Context, m []byte) ([]byte, error) {
	return l.signs.SignMessage(ctx, m)
}

type errSigner struct{ *fakeSigner }

func (errSigner) SignMessage(context.Context, []byte) ([]byte, error) {
	return nil, errors.New("kms unavailable")
}

func TestSignRefuses(t *testing.T) {
	s := newFakeSigner(t)
	st := mustStatement(t)
	for _, tc := range []struct {
		name      string
		signer    provenance.Signer
		statement []byte
		want      string
	}{
		{"not JSON", s, []byte("x"), "not JSON"},
		{"not a statement", s, []byte(`{"_type":"x"}`), "_type"},
		{"signer with another key", lyingSigner{claims: s, signs: newFakeSigner(t)}, st, "does not verify"},
		{"signer error", errSigner{s}, st, "kms unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := provenance.Sign(context.Background(), tc.signer, tc.statement)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Sign error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func mustStatement(t *testing.T) []byte {
	t.Helper()
	st, err := sampleProvenance().Statement()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func without(m map[string]string, name string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != name {
			out[k] = v
		}
	}
	return out
}

func with(m map[string]string, name, sha string) map[string]string {
	out := without(m, name)
	out[name] = sha
	return out
}
