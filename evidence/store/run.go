package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Run identifies a verifier run: its run identity (docs/evidence.md, "What is written"). The evidence
// is valid only for exactly these wheel digests, native libraries, verifier
// sources, interpreter and installed distributions.
//
// The lists are sets: [Write] stores them sorted (lanes by name, the others
// by name), and [Store.Run] returns them so, with an empty list or map as
// nil. Identity is the canonical JSON of everything but ID
// ([Run.CanonicalIdentity]); Write fills it in when it is empty and refuses a
// Run whose Identity differs from it.
type Run struct {
	// ID names the run; chosen by whoever orchestrates it. Not part of the
	// identity.
	ID string
	// Target is the release target the run verified.
	Target string
	// Wheels are the exact wheels installed, by file name.
	Wheels []FileDigest
	// NativeLibraries are the installed native libraries (shared objects
	// inside or beside the wheels), by path relative to the environment.
	NativeLibraries []FileDigest
	// SourcesTreeHash is the tree hash of the verifier sources, lowercase hex.
	SourcesTreeHash string
	// Interpreter is the interpreter's version string, e.g. "CPython 3.12.4".
	Interpreter string
	// Distributions are the distributions installed in the lanes'
	// environments.
	Distributions []Distribution
	// Lanes are the names of the lanes that ran.
	Lanes []string
	// Protocol is the crossover measurement protocol.
	Protocol Protocol
	// Environment is the sanitised environment the lanes ran with (no host
	// or user names, no home or temporary paths: sanitising is the caller's
	// job; the store records what it is given).
	Environment map[string]string
	// Isolation is how the lanes ran: sandboxed or not. Evidence made
	// before mkrelease recorded it has none (the zero Isolation).
	Isolation Isolation
	// Identity is the canonical JSON of the fields above except ID.
	Identity json.RawMessage
}

// FileDigest is a file and its SHA-256.
type FileDigest struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"` // 64 lowercase hex digits
}

// Distribution is an installed distribution: name==version and the SHA-256
// of its METADATA file.
type Distribution struct {
	Name           string `json:"name"`
	Version        string `json:"version"`
	MetadataSHA256 string `json:"metadata_sha256"` // 64 lowercase hex digits
}

// Protocol is how crossover workers were measured: Steps step times per
// worker, of which the first WarmUps are warm-ups. It is zero in a run
// without crossover lanes.
type Protocol struct {
	Steps   int `json:"steps"`
	WarmUps int `json:"warmups"`
}

// Isolation levels of [Isolation.Level].
const (
	// IsolationSandbox: every lane ran in a sandbox (bubblewrap): its own
	// namespaces and a file system that shows the system, the
	// interpreter, the virtualenv and the verifier read-only and the
	// lane's own folder, and nothing else of the host.
	IsolationSandbox = "sandbox"
	// IsolationNone: the lanes ran as the user, with everything the user
	// may read and the network in reach.
	IsolationNone = "none"
)

// Isolation says how a run's lanes were isolated from the host.
type Isolation struct {
	// Level is [IsolationSandbox] or [IsolationNone].
	Level string `json:"level"`
	// Sandbox is the sandbox and its version ("bubblewrap 0.8.0"), when
	// sandboxed.
	Sandbox string `json:"sandbox,omitempty"`
	// Namespaces are the namespaces every lane had, when sandboxed; the
	// lanes in NetworkLanes had all but the network's.
	Namespaces []string `json:"namespaces,omitempty"`
	// NetworkLanes are the sandboxed lanes that kept the host's network
	// (network = true), by name.
	NetworkLanes []string `json:"network_lanes,omitempty"`
	// Reason says why the lanes were not sandboxed.
	Reason string `json:"reason,omitempty"`
}

// identity is the JSON form of a run identity. Its field order is the
// canonical one; lists are never null.
type identity struct {
	Target          string            `json:"target"`
	Wheels          []FileDigest      `json:"wheels"`
	NativeLibraries []FileDigest      `json:"native_libraries"`
	SourcesTreeHash string            `json:"sources_tree_hash"`
	Interpreter     string            `json:"interpreter"`
	Distributions   []Distribution    `json:"distributions"`
	Lanes           []string          `json:"lanes"`
	Protocol        Protocol          `json:"protocol"`
	Environment     map[string]string `json:"environment"`
	Isolation       Isolation         `json:"isolation,omitzero"`
}

// normalized returns r with its sets sorted, and empty lists and maps nil,
// without touching r's own slices and map. Identity is left as it is.
func (r Run) normalized() Run {
	byName := func(a, b FileDigest) int { return strings.Compare(a.Name, b.Name) }
	r.Wheels = nilIfEmpty(slices.SortedStableFunc(slices.Values(r.Wheels), byName))
	r.NativeLibraries = nilIfEmpty(slices.SortedStableFunc(slices.Values(r.NativeLibraries), byName))
	r.Distributions = nilIfEmpty(slices.SortedStableFunc(slices.Values(r.Distributions), func(a, b Distribution) int {
		return strings.Compare(a.Name, b.Name)
	}))
	r.Lanes = nilIfEmpty(slices.Sorted(slices.Values(r.Lanes)))
	if len(r.Environment) == 0 {
		r.Environment = nil
	}
	r.Isolation.Namespaces = nilIfEmpty(slices.Clone(r.Isolation.Namespaces))
	r.Isolation.NetworkLanes = nilIfEmpty(slices.Sorted(slices.Values(r.Isolation.NetworkLanes)))
	return r
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// CanonicalIdentity returns the canonical JSON of r's identity: every field
// but ID and Identity, in a fixed order, the sets sorted, empty lists as []
// and an empty environment as {}, no insignificant white space and no HTML
// escaping. Equal identities give equal bytes.
func (r Run) CanonicalIdentity() (json.RawMessage, error) {
	n := r.normalized()
	id := identity{
		Target:          n.Target,
		Wheels:          emptyIfNil(n.Wheels),
		NativeLibraries: emptyIfNil(n.NativeLibraries),
		SourcesTreeHash: n.SourcesTreeHash,
		Interpreter:     n.Interpreter,
		Distributions:   emptyIfNil(n.Distributions),
		Lanes:           emptyIfNil(n.Lanes),
		Protocol:        n.Protocol,
		Environment:     n.Environment,
		Isolation:       n.Isolation,
	}
	if id.Environment == nil {
		id.Environment = map[string]string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(id); err != nil {
		return nil, fmt.Errorf("encode run identity: %w", err)
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// ParseIdentity decodes a run identity (the canonical JSON
// [Run.CanonicalIdentity] writes, as an evidence manifest records it) into
// a normalised Run with ID runID: an unknown field or trailing data is an
// error.
func ParseIdentity(runID string, data []byte) (Run, error) {
	var id identity
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&id); err != nil {
		return Run{}, fmt.Errorf("decode run identity: %w", err)
	}
	if dec.More() {
		return Run{}, errors.New("decode run identity: trailing data")
	}
	r := Run{
		ID:              runID,
		Target:          id.Target,
		Wheels:          id.Wheels,
		NativeLibraries: id.NativeLibraries,
		SourcesTreeHash: id.SourcesTreeHash,
		Interpreter:     id.Interpreter,
		Distributions:   id.Distributions,
		Lanes:           id.Lanes,
		Protocol:        id.Protocol,
		Environment:     id.Environment,
		Isolation:       id.Isolation,
	}
	r = r.normalized()
	r.Identity = json.RawMessage(slices.Clone(data))
	return r, nil
}

// identityDigest is the identity_sha256 column of an identity.
func identityDigest(identity []byte) string {
	sum := sha256.Sum256(identity)
	return hex.EncodeToString(sum[:])
}

// validate reports what makes r unfit to store, or nil.
func (r Run) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("run: "+format, args...)) }
	if r.ID == "" {
		bad("empty ID")
	}
	if r.Target == "" {
		bad("empty Target")
	}
	if r.Interpreter == "" {
		bad("empty Interpreter")
	}
	if r.SourcesTreeHash == "" || !isLowerHex(r.SourcesTreeHash) {
		bad("SourcesTreeHash %q is not lowercase hex", r.SourcesTreeHash)
	}
	for _, set := range []struct {
		field string
		files []FileDigest
	}{{"Wheels", r.Wheels}, {"NativeLibraries", r.NativeLibraries}} {
		seen := map[string]bool{}
		for i, f := range set.files {
			switch {
			case f.Name == "":
				bad("%s[%d]: empty name", set.field, i)
			case seen[f.Name]:
				bad("%s[%d]: %s listed twice", set.field, i, f.Name)
			}
			seen[f.Name] = true
			if !isSHA256(f.SHA256) {
				bad("%s[%d] %s: sha256 %q is not 64 lowercase hex digits", set.field, i, f.Name, f.SHA256)
			}
		}
	}
	seen := map[string]bool{}
	for i, d := range r.Distributions {
		switch {
		case d.Name == "":
			bad("Distributions[%d]: empty name", i)
		case seen[d.Name]:
			bad("Distributions[%d]: %s listed twice", i, d.Name)
		}
		seen[d.Name] = true
		if d.Version == "" {
			bad("Distributions[%d] %s: empty version", i, d.Name)
		}
		if !isSHA256(d.MetadataSHA256) {
			bad("Distributions[%d] %s: metadata sha256 %q is not 64 lowercase hex digits", i, d.Name, d.MetadataSHA256)
		}
	}
	seen = map[string]bool{}
	for i, l := range r.Lanes {
		switch {
		case l == "":
			bad("Lanes[%d]: empty lane name", i)
		case seen[l]:
			bad("Lanes[%d]: %s listed twice", i, l)
		}
		seen[l] = true
	}
	if r.Protocol != (Protocol{}) && (r.Protocol.Steps <= 0 || r.Protocol.WarmUps < 0 || r.Protocol.WarmUps >= r.Protocol.Steps) {
		bad("Protocol: %d steps with %d warm-ups (want steps > 0 and 0 <= warm-ups < steps, or both 0 for a run without crossover lanes)", r.Protocol.Steps, r.Protocol.WarmUps)
	}
	for k := range r.Environment {
		if k == "" {
			bad("Environment: empty variable name")
		}
	}
	switch iso := r.Isolation; iso.Level {
	case "":
		if iso.Sandbox != "" || len(iso.Namespaces) > 0 || len(iso.NetworkLanes) > 0 || iso.Reason != "" {
			bad("Isolation: no level, but %+v", iso)
		}
	case IsolationSandbox:
		if iso.Sandbox == "" || len(iso.Namespaces) == 0 || iso.Reason != "" {
			bad("Isolation: a sandboxed run names its sandbox and namespaces, and no reason (got %+v)", iso)
		}
		for _, l := range iso.NetworkLanes {
			if !slices.Contains(r.Lanes, l) {
				bad("Isolation: network lane %s is not a lane of the run", l)
			}
		}
	case IsolationNone:
		if iso.Reason == "" || iso.Sandbox != "" || len(iso.Namespaces) > 0 || len(iso.NetworkLanes) > 0 {
			bad("Isolation: a run without a sandbox says why, and names no sandbox, namespaces or network lanes (got %+v)", iso)
		}
	default:
		bad("Isolation: level %q is not %q or %q", iso.Level, IsolationSandbox, IsolationNone)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(r.Identity) > 0 {
		want, err := r.CanonicalIdentity()
		if err != nil {
			return err
		}
		if !bytes.Equal(r.Identity, want) {
			return fmt.Errorf("run: Identity is not the canonical identity of the run's fields (want %s)", want)
		}
	}
	return nil
}

func isSHA256(s string) bool { return len(s) == 64 && isLowerHex(s) }

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
