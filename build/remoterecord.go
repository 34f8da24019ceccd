package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/provenance"
)

// RecordPredicateType is the predicate type of an action record of the
// remote cache: an in-toto Statement v1 whose one subject is the action
// ("action", with the action key as its sha256) and whose predicate is
// the record of the local cache (entry.json: the key, step and target, and
// each output's path, size, mode and sha256), signed by its writer as a
// DSSE envelope, as the provenance is.
const RecordPredicateType = "https://mkrelease.dev/action-record/v1"

// recordSubject names the action in a record's statement.
const recordSubject = "action"

// signRecord returns the record of e for the remote cache, signed by s.
func signRecord(ctx context.Context, s provenance.Signer, e *actioncache.Entry) ([]byte, error) {
	st, err := provenance.NewStatement(RecordPredicateType, []provenance.Subject{{Name: recordSubject, SHA256: e.Key}}, e)
	if err != nil {
		return nil, fmt.Errorf("the record of action %s: %w", e.Key, err)
	}
	env, err := provenance.SignStatement(ctx, s, st)
	if err != nil {
		return nil, fmt.Errorf("signing the record of action %s for the remote cache: %w", e.Key, err)
	}
	return env, nil
}

// recordStatement is what openRecord reads of a record's statement.
type recordStatement struct {
	Type    string `json:"_type"`
	Subject []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// openRecord checks a record read from the remote cache: a DSSE envelope,
// signed by a key v trusts, of a statement of [RecordPredicateType] about
// the action key. It returns the writer (the key id of the key that
// signed it) and the record it vouches for, which
// [actioncache.Cache.Import] checks against the action (key, step, target,
// outputs). The error says why a record does not count: no trusted writer
// (v nil), no signature, a signature by another key, or a statement about
// something else (a trusted writer's record of another action, replayed).
func openRecord(v *provenance.Verifier, key string, data []byte) (writer string, record []byte, err error) {
	if v == nil {
		return "", nil, errors.New("no key is trusted to sign records ([cache] trusted_writers is empty)")
	}
	writer, st, err := v.VerifyEnvelope(bytes.TrimSpace(data))
	if err != nil {
		return "", nil, signatureProblem(err)
	}
	var s recordStatement
	if err := json.Unmarshal(st, &s); err != nil {
		return "", nil, fmt.Errorf("the signed statement is not JSON: %v", err)
	}
	switch {
	case s.Type != provenance.StatementType:
		return "", nil, fmt.Errorf("the signed statement's _type is %q, not %q", s.Type, provenance.StatementType)
	case s.PredicateType != RecordPredicateType:
		return "", nil, fmt.Errorf("the signed statement is a %q, not an action record (%s)", s.PredicateType, RecordPredicateType)
	case len(s.Subject) != 1 || s.Subject[0].Name != recordSubject || len(s.Subject[0].Digest) != 1 || s.Subject[0].Digest["sha256"] != key:
		return "", nil, fmt.Errorf("the signed record is not about action %s", key)
	case len(s.Predicate) == 0:
		return "", nil, errors.New("the signed statement has no predicate")
	}
	return writer, s.Predicate, nil
}

// signatureProblem says why a record's envelope did not verify, in the
// words of a record of the remote cache (the provenance's checks name the
// provenance).
func signatureProblem(err error) error {
	var ve *provenance.VerifyError
	if !errors.As(err, &ve) {
		return err
	}
	switch ve.Step {
	case provenance.StepEnvelope, provenance.StepPayloadType:
		return fmt.Errorf("unsigned: the record is not a signed statement (%s)", ve.Msg)
	case provenance.StepSignature:
		return fmt.Errorf("%s; a record counts when signed by %s", ve.Msg, strings.TrimPrefix(ve.Expected, "a signature by "))
	}
	return err
}

// unverifiedRecord is the record data holds, whoever signed it (none
// may have): the predicate of the statement a DSSE envelope carries, or
// data itself, as mkrelease wrote records before they were signed. For
// comparing with what ran here, never for serving.
func unverifiedRecord(data []byte) []byte {
	st, err := provenance.EnvelopePayload(bytes.TrimSpace(data))
	if err != nil {
		return data
	}
	var s recordStatement
	if json.Unmarshal(st, &s) != nil {
		return data
	}
	return s.Predicate
}

// diffRecord compares the outputs record (an entry's record, as Import
// reads it) names with those of e, made here, and lists every difference;
// none when they agree.
func diffRecord(e *actioncache.Entry, record []byte) []string {
	var r actioncache.Entry
	if err := json.Unmarshal(record, &r); err != nil {
		return []string{"the record is unreadable: " + err.Error()}
	}
	var diff []string
	if r.Key != e.Key {
		diff = append(diff, fmt.Sprintf("the record is of action %q", r.Key))
	}
	here := map[string]actioncache.Output{}
	for _, o := range e.Outputs {
		here[o.Path] = o
	}
	there := map[string]actioncache.Output{}
	for _, o := range r.Outputs {
		there[o.Path] = o
	}
	for _, p := range slices.Sorted(maps.Keys(here)) {
		h := here[p]
		t, ok := there[p]
		switch {
		case !ok:
			diff = append(diff, p+": not in the record")
		case t.SHA256 != h.SHA256 || t.Size != h.Size:
			diff = append(diff, fmt.Sprintf("%s: sha256 %s (%d bytes) here, %s (%d bytes) in the record", p, h.SHA256, h.Size, t.SHA256, t.Size))
		case t.Mode != h.Mode:
			diff = append(diff, fmt.Sprintf("%s: mode %o here, %o in the record", p, h.Mode, t.Mode))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(there)) {
		if _, ok := here[p]; !ok {
			diff = append(diff, p+": in the record, not made here")
		}
	}
	return diff
}
