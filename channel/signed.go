package channel

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/provenance"
)

// statePredicate is the predicate of channel.json's signed statement: what
// channel.json says of the generation, so that the statement can be read
// alone. The subject's digest binds it to channel.json, and channel.json
// to every file of the generation.
type statePredicate struct {
	Project    string `json:"project"`
	Generation int    `json:"generation"`
	Published  string `json:"published"`
	Newest     string `json:"newest"`
}

func predicateOf(s *State) statePredicate {
	return statePredicate{Project: s.Project, Generation: s.Generation, Published: s.Published, Newest: s.Newest}
}

// signState signs data, the bytes of channel.json holding s, and returns
// the DSSE envelope of its statement (one line of JSON).
func signState(ctx context.Context, signer provenance.Signer, data []byte, s *State) ([]byte, error) {
	st, err := provenance.NewStatement(StatePredicateType,
		[]provenance.Subject{{Name: StateFile, SHA256: checksum.Bytes(data)}}, predicateOf(s))
	if err != nil {
		return nil, fmt.Errorf("channel: the statement of %s: %w", StateFile, err)
	}
	env, err := provenance.SignStatement(ctx, signer, st)
	if err != nil {
		return nil, fmt.Errorf("channel: signing %s: %w", StateFile, err)
	}
	return env, nil
}

// stateStatement is the in-toto statement of channel.json as read.
type stateStatement struct {
	Type    string `json:"_type"`
	Subject []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// verifyState checks envelope, the signed statement of channel.json,
// against data, the bytes of channel.json, and s, what they say: a key v
// trusts signed it, its one subject is channel.json with data's sha256,
// and its predicate says what s says. It returns the id of the key that
// signed it; an error says what does not hold.
func verifyState(v *provenance.Verifier, envelope, data []byte, s *State) (string, error) {
	keyID, payload, err := v.VerifyEnvelope(envelope)
	if err != nil {
		return "", err
	}
	var st stateStatement
	if err := json.Unmarshal(payload, &st); err != nil {
		return "", fmt.Errorf("the signed statement is not JSON: %w", err)
	}
	if st.Type != provenance.StatementType || st.PredicateType != StatePredicateType {
		return "", fmt.Errorf("the signed statement is not a channel state (_type %q, predicateType %q; want %q)", st.Type, st.PredicateType, StatePredicateType)
	}
	if len(st.Subject) != 1 || st.Subject[0].Name != StateFile {
		return "", fmt.Errorf("the signed statement must have one subject, %s", StateFile)
	}
	if got, want := st.Subject[0].Digest["sha256"], checksum.Bytes(data); got != want {
		return "", fmt.Errorf("it signs a %s with sha256 %s, this one has sha256 %s: %s was changed after it was signed", StateFile, got, want, StateFile)
	}
	dec := json.NewDecoder(bytes.NewReader(st.Predicate))
	dec.DisallowUnknownFields()
	var pred statePredicate
	if err := dec.Decode(&pred); err != nil {
		return "", fmt.Errorf("the signed statement's predicate: %w", err)
	}
	if want := predicateOf(s); pred != want {
		return "", fmt.Errorf("the signed statement says %+v, %s says %+v", pred, StateFile, want)
	}
	return keyID, nil
}

// trusted returns a verifier of the keys given and the signer's (nil when
// there is none of either).
func trusted(keys []crypto.PublicKey, signer provenance.Signer) (*provenance.Verifier, error) {
	if signer != nil {
		keys = append(keys[:len(keys):len(keys)], signer.Public())
	}
	if len(keys) == 0 {
		return nil, nil
	}
	return provenance.NewVerifier(keys...)
}

// checkTrust checks the channel's current state before a publish: its
// signed statement verifies with a trusted key (r.TrustedKeys or r.Signer's),
// and it is not older than r.Seen. It returns the state as a checkpoint,
// or a *RefusedError naming the file at fault and the remedy.
//
// An empty channel (DEST missing, or an empty folder, and no generations
// beside it) where r.Seen records a published generation is not a
// rollback to refuse: nothing older is
// being shown, and nothing of the old channel is re-signed. It is a channel
// started again (a fresh clone of a project whose channel is a folder in
// it; a channel wiped on purpose, or by someone else), and restart returns
// r.Seen: the new channel continues its generation numbers, so that a
// client that verified the old one sees a later generation and checks it
// for every version it saw (Checkpoint.Refuses), and the publisher is told.
func (c *Channel) checkTrust(r Release) (seen, restart *Checkpoint, err error) {
	cp := Checkpoint{Format: CheckpointFormat, Channel: c.paths.dest, Versions: []CheckpointVersion{}}
	if c.kind == destLink {
		v, err := trusted(r.TrustedKeys, r.Signer)
		if err != nil {
			return nil, nil, &UsageError{Msg: "channel: the trusted keys", Err: err}
		}
		file := filepath.Join(c.root, SignedStateFile)
		var why string
		if v == nil {
			why = "no trusted key to check it with: pass the public key that signed the channel (--key)"
		} else if env, err := os.ReadFile(file); err != nil {
			why = fmt.Sprintf("%v: the channel's state is not signed", err)
		} else if cp.KeyID, err = verifyState(v, env, c.stateData, &c.state); err != nil {
			why = err.Error()
		}
		if why != "" {
			return nil, nil, &RefusedError{Dest: c.paths.dest, Version: r.Version, Reasons: []Reason{{Rule: RuleStateNotVerified, Msg: fmt.Sprintf(
				"%s: %s; the channel's state does not verify, so it may have been tampered with: run mkrelease verify %s --key PUB.pem, "+
					"and restore the channel from a copy that verifies (or pass --key with the key that signed it)", file, why, c.paths.dest)}}}
		}
		cp.fill(&c.state, c.stateData)
	}
	if r.Seen != nil {
		if c.kind != destLink && r.Seen.Generation > 0 && !hasEntries(c.paths.gens) {
			return &cp, r.Seen, nil
		}
		if probs := r.Seen.Refuses(&cp); len(probs) > 0 {
			var rs []Reason
			for _, p := range probs {
				rs = append(rs, Reason{Rule: RuleRollback, Msg: p})
			}
			return nil, nil, &RefusedError{Dest: c.paths.dest, Version: r.Version, Reasons: rs}
		}
	}
	return &cp, nil, nil
}

// hasEntries reports whether folder dir exists with anything in it (an
// unreadable one counts as having entries).
func hasEntries(dir string) bool {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	} else if err != nil {
		return true
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) > 0 || (err != nil && !errors.Is(err, io.EOF))
}
