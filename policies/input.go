package policies

import (
	"encoding/json"
	"fmt"
)

// Input is the policy input: everything the publisher established about
// a release, as the policies see it under input. Its JSON field names are
// the contract with every policy, default or user; [Input.JSON] encodes
// it. Every field is always encoded; a nil slice is encoded as [].
type Input struct {
	Release    Release    `json:"release"`
	Parameters Parameters `json:"parameters"`
	Artifacts  []Artifact `json:"artifacts"`
	Provenance Provenance `json:"provenance"`
	// Evidence has one entry per target the publisher looked for
	// evidence for; an entry whose evidence was not found has Present
	// false.
	Evidence []Evidence `json:"evidence"`
	Channel  Channel    `json:"channel"`
}

// Release names the release being published.
type Release struct {
	Project string `json:"project"`
	// Version is the normalised PEP 440 version.
	Version string `json:"version"`
	// Targets are the targets being published; each needs evidence.
	Targets []string `json:"targets"`
}

// Parameters are the thresholds of the default policies (release.toml
// overrides [DefaultParameters]). Every ratio is expressed so that > 1
// means the candidate is faster.
type Parameters struct {
	// MinThroughputGeomean is the bound the overall geomean of every
	// crossover lane must exceed, strictly.
	MinThroughputGeomean float64 `json:"min_throughput_geomean"`
	// MinOverall is the least overall geomean of every crossover lane.
	MinOverall float64 `json:"min_overall"`
	// MinPhase is the least geomean of every phase board.
	MinPhase float64 `json:"min_phase"`
	// MinWorkload is the least r of every usable workload.
	MinWorkload float64 `json:"min_workload"`
	// MaxRobustCV is the largest robust CV (a fraction: 0.10 is 10 %)
	// allowed for any worker of a usable workload.
	MaxRobustCV float64 `json:"max_robust_cv"`
	// AllowDowngrade lets a version lower than the newest published one
	// be published.
	AllowDowngrade bool `json:"allow_downgrade"`
	// AllowUnsandboxed lets a release whose build steps ran without a
	// sandbox be published (release.toml's [build] allow_unsandboxed).
	AllowUnsandboxed bool `json:"allow_unsandboxed"`
}

// DefaultParameters are the default release policy's thresholds:
// throughput geomean > 1.00, overall ≥ 0.95, every phase ≥ 0.90, every
// workload ≥ 0.80, robust CV ≤ 10 %, no downgrade, and build steps run in
// a sandbox.
func DefaultParameters() Parameters {
	return Parameters{
		MinThroughputGeomean: 1.0,
		MinOverall:           0.95,
		MinPhase:             0.90,
		MinWorkload:          0.80,
		MaxRobustCV:          0.10,
		AllowDowngrade:       false,
		AllowUnsandboxed:     false,
	}
}

// Artifact is one artifact of the release and the outcome of verifying it.
type Artifact struct {
	// Name is the file name.
	Name string `json:"name"`
	// Kind is the artifact's kind ("wheel", "bundle", "sbom", …).
	Kind string `json:"kind"`
	// Target is the target it is for; "" when it is for every target.
	Target string `json:"target"`
	SHA256 string `json:"sha256"`
	// Verified says every check of the artifact held.
	Verified bool `json:"verified"`
	// Findings say what did not hold.
	Findings []string `json:"findings"`
}

// Provenance is the release's provenance statement and what its
// verification established.
type Provenance struct {
	// Present says the statement was found; File is its name (or the
	// name it was expected under).
	Present bool   `json:"present"`
	File    string `json:"file"`
	// SignedByTrustedKey says its DSSE envelope verifies with a trusted
	// key; KeyID names the key that signed it, when known.
	SignedByTrustedKey bool   `json:"signed_by_trusted_key"`
	KeyID              string `json:"key_id"`
	// SubjectsMatch says its subjects are exactly the release's
	// artifacts, digest for digest.
	SubjectsMatch bool     `json:"subjects_match"`
	Findings      []string `json:"findings"`
	// Sandbox is how the build steps ran, as the statement records it;
	// only a statement signed by a trusted key is read, so it is the zero
	// value (not isolated) unless SignedByTrustedKey.
	Sandbox Sandbox `json:"sandbox"`
	// UnsignedParts are the parts of a merged release that no trusted
	// key vouched for (mkrelease merge --allow-unsigned-parts), as the
	// statement records them in buildDefinition.internalParameters
	// .unsigned_parts; empty for a release built on one machine or merged
	// from signed parts. Read only from a statement signed by a trusted
	// key.
	UnsignedParts []UnsignedPart `json:"unsigned_parts"`
}

// UnsignedPart is a part merged without a signature by a trusted key.
type UnsignedPart struct {
	// Targets are the targets the part held.
	Targets []string `json:"targets"`
	// PartSHA256 is the sha256 of its part.json.
	PartSHA256 string `json:"part_sha256"`
	// Reason says why no trusted key vouched for it.
	Reason string `json:"reason"`
}

// Sandbox is how the build steps ran, as the signed provenance records it
// in buildDefinition.internalParameters.sandbox.
type Sandbox struct {
	// Recorded says the provenance records it. A provenance that does not
	// counts as not isolated.
	Recorded bool `json:"recorded"`
	// Isolated says every step ran in the sandbox (own user, mount, PID,
	// IPC, UTS and network namespaces).
	Isolated bool `json:"isolated"`
	// Name is the sandbox and its version ("bubblewrap 0.8.0").
	Name string `json:"sandbox"`
	// Namespaces are the namespaces each step got.
	Namespaces []string `json:"namespaces"`
	// Reason says why the steps were not isolated, when they were not.
	Reason string `json:"reason"`
}

// Evidence is the verifier evidence of one target and what checking it
// established. The figures of its lanes are the ones mkrelease recomputed
// from the raw records, never the summaries the evidence carries.
type Evidence struct {
	Target string `json:"target"`
	// Present says the evidence was found; File is its name (or the name
	// it was expected under).
	Present bool   `json:"present"`
	File    string `json:"file"`
	// SignedByTrustedKey says its statement verifies with a trusted
	// verifier key; KeyID names the key that signed it, when known.
	SignedByTrustedKey bool   `json:"signed_by_trusted_key"`
	KeyID              string `json:"key_id"`
	// WheelsMatch says its run identity names exactly the release's
	// wheel digests.
	WheelsMatch bool `json:"wheels_match"`
	// Sanitised says no file holds a private value or a credential.
	Sanitised bool `json:"sanitised"`
	// StoreIntact says the SQLite store passes its integrity check and
	// agrees with the records row for row.
	StoreIntact bool `json:"store_intact"`
	// AggregatesMatch says every summary the evidence carries agrees
	// with the figures recomputed from its raw records.
	AggregatesMatch bool              `json:"aggregates_match"`
	Findings        []EvidenceFinding `json:"findings"`
	Lanes           []Lane            `json:"lanes"`
	// DeclaredLanes are the lanes release.toml declares for the target
	// ([[evidence.lane]], in its order): the evidence must hold each one,
	// of its kind.
	DeclaredLanes []DeclaredLane `json:"declared_lanes"`
}

// DeclaredLane is one [[evidence.lane]] of release.toml.
type DeclaredLane struct {
	Name string `json:"name"`
	// Kind is [LaneCases] or [LaneCrossover].
	Kind string `json:"kind"`
}

// EvidenceFinding is one failed check of evidence (evidence/runner's
// Finding): the default policies quote the findings of the check that
// matches a rule ("signature", "identity", "sanitised", "store",
// "aggregates").
type EvidenceFinding struct {
	Check   string `json:"check"`
	File    string `json:"file"`
	Message string `json:"message"`
}

// The kinds of lane.
const (
	LaneCases     = "cases"
	LaneCrossover = "crossover"
)

// Lane is one verifier lane of the evidence: Cases is set for a
// [LaneCases] lane, Crossover for a [LaneCrossover] lane.
type Lane struct {
	Name      string     `json:"name"`
	Kind      string     `json:"kind"`
	Cases     *Cases     `json:"cases,omitempty"`
	Crossover *Crossover `json:"crossover,omitempty"`
}

// Cases counts the cases of a cases lane by status.
type Cases struct {
	Total int `json:"total"`
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
	// Invalid counts cases with no id or a status that is none of PASS,
	// FAIL, ERROR and SKIP.
	Invalid int `json:"invalid"`
	// Failing lists every case that neither passed nor was skipped
	// (FAIL, ERROR and invalid ones).
	Failing []FailingCase `json:"failing"`
}

// FailingCase is one case that neither passed nor was skipped.
type FailingCase struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// Crossover is the boards of a crossover lane.
type Crossover struct {
	Overall   Board      `json:"overall"`
	Phases    []Board    `json:"phases"`
	Workloads []Workload `json:"workloads"`
}

// Board is the geometric mean of r over a set of workloads (every usable
// workload, or those of one phase) with its 95 % interval.
type Board struct {
	// Phase names the phase; "" (and omitted) for the overall board.
	Phase   string  `json:"phase,omitempty"`
	Geomean float64 `json:"geomean"`
	Lo      float64 `json:"lo"`
	// Hi is the upper end of the interval; nil (JSON null) when it is
	// unbounded, i.e. fewer than two usable workloads.
	Hi *float64 `json:"hi"`
	// N is the number of usable workloads the board is over.
	N       int  `json:"n"`
	Bounded bool `json:"bounded"`
	// Unusable counts the workloads left out of the board.
	Unusable int `json:"unusable"`
}

// Workload is the outcome of one workload of a crossover lane.
type Workload struct {
	Workload string `json:"workload"`
	Phase    string `json:"phase"`
	// R is the workload's ratio (> 1: the candidate is faster); 0 when
	// not usable.
	R float64 `json:"r"`
	// Usable is false when a worker failed; Failures then say how
	// ("slot 1 candidate: crash").
	Usable bool `json:"usable"`
	// MaxRobustCV is the largest robust CV of its four workers.
	MaxRobustCV float64  `json:"max_robust_cv"`
	Failures    []string `json:"failures"`
}

// Channel is the state of the channel the release is published to, as
// the publisher found it. The publisher compares PEP 440 versions; the
// policies never compare version strings.
type Channel struct {
	Exists            bool     `json:"exists"`
	PublishedVersions []string `json:"published_versions"`
	// Newest is the newest published version; "" when there is none.
	Newest string `json:"newest"`
	// SameVersionPublished says the release's version is already
	// published; SameVersionIdentical that it was with the same bytes.
	SameVersionPublished bool `json:"same_version_published"`
	SameVersionIdentical bool `json:"same_version_identical"`
	// VersionLowerThanNewest says the release's version is lower than
	// Newest.
	VersionLowerThanNewest bool `json:"version_lower_than_newest"`
}

// JSON encodes the input as the policies see it: every nil slice as [],
// two-space indentation and a trailing newline. It fails on a NaN or
// infinite figure, which JSON cannot carry.
func (in Input) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(in.normalised(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("policies: encoding the policy input: %w", err)
	}
	return append(b, '\n'), nil
}

// normalised returns a copy of in whose nil slices are empty, so that the
// policies see [] rather than null.
func (in Input) normalised() Input {
	out := in
	out.Release.Targets = orEmpty(in.Release.Targets)
	out.Artifacts = make([]Artifact, len(in.Artifacts))
	for i, a := range in.Artifacts {
		a.Findings = orEmpty(a.Findings)
		out.Artifacts[i] = a
	}
	out.Provenance.Findings = orEmpty(in.Provenance.Findings)
	out.Provenance.Sandbox.Namespaces = orEmpty(in.Provenance.Sandbox.Namespaces)
	out.Provenance.UnsignedParts = make([]UnsignedPart, len(in.Provenance.UnsignedParts))
	for i, p := range in.Provenance.UnsignedParts {
		p.Targets = orEmpty(p.Targets)
		out.Provenance.UnsignedParts[i] = p
	}
	out.Evidence = make([]Evidence, len(in.Evidence))
	for i, e := range in.Evidence {
		e.Findings = orEmpty(e.Findings)
		e.DeclaredLanes = orEmpty(e.DeclaredLanes)
		lanes := make([]Lane, len(e.Lanes))
		for j, l := range e.Lanes {
			if l.Cases != nil {
				c := *l.Cases
				c.Failing = orEmpty(c.Failing)
				l.Cases = &c
			}
			if l.Crossover != nil {
				x := *l.Crossover
				x.Phases = orEmpty(x.Phases)
				ws := make([]Workload, len(x.Workloads))
				for k, w := range x.Workloads {
					w.Failures = orEmpty(w.Failures)
					ws[k] = w
				}
				x.Workloads = ws
				l.Crossover = &x
			}
			lanes[j] = l
		}
		e.Lanes = lanes
		out.Evidence[i] = e
	}
	out.Channel.PublishedVersions = orEmpty(in.Channel.PublishedVersions)
	return out
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
