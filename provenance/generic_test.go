package provenance

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestSignStatementAnyPredicate(t *testing.T) {
	s, _, err := DevKey(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	st := []byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"e.tar.gz","digest":{"sha256":"` + strings.Repeat("a", 64) + `"}}],"predicateType":"https://in-toto.io/attestation/test-result/v0.1","predicate":{"result":"PASSED"}}`)
	env, err := SignStatement(context.Background(), s, st)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := NewVerifier(s.Public())
	id, got, err := v.VerifyEnvelope(env)
	if err != nil || id != KeyID(s.Public()) || string(got) != string(st) {
		t.Fatalf("VerifyEnvelope = %q, %s, %v", id, got, err)
	}
	other, _, _ := DevKey(filepath.Join(t.TempDir(), "other"))
	ov, _ := NewVerifier(other.Public())
	var ve *VerifyError
	if _, _, err := ov.VerifyEnvelope(env); !errors.As(err, &ve) || ve.Step != StepSignature {
		t.Errorf("untrusted key: %v", err)
	}
	if _, err := SignStatement(context.Background(), s, []byte(`{"_type":"x"}`)); err == nil {
		t.Error("signed a non-statement")
	}
}
