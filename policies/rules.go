package policies

import "slices"

// The rule ids of the default policies, in the order a refusal lists
// them. Every denial of a default policy starts with its rule id in
// brackets: "[evidence.workload] linux-x86_64 throughput/axpy-f64: r =
// 0.7612 is below the minimum 0.80".
const (
	// RuleInput: the policy input is missing or not shaped like [Input]
	// (a field missing or of the wrong type).
	RuleInput = "policy.input"
	// RuleArtifactPresent: the release has no artifacts.
	RuleArtifactPresent = "artifact.present"
	// RuleArtifactVerified: an artifact does not verify.
	RuleArtifactVerified = "artifact.verified"
	// RuleProvenancePresent: there is no provenance statement.
	RuleProvenancePresent = "provenance.present"
	// RuleProvenanceSigned: the provenance is not signed by a trusted key.
	RuleProvenanceSigned = "provenance.signed"
	// RuleProvenanceSubjects: the provenance's subjects are not the
	// release's artifacts.
	RuleProvenanceSubjects = "provenance.subjects"
	// RuleBuildSandboxed: the signed provenance says the build steps ran
	// without a sandbox (or does not say they ran in one), and
	// allow_unsandboxed is not set.
	RuleBuildSandboxed = "build.sandboxed"
	// RuleBuildPartsSigned: the signed provenance says the release was
	// merged from parts no trusted key vouched for (mkrelease merge
	// --allow-unsigned-parts).
	RuleBuildPartsSigned = "build.parts_signed"
	// RuleEvidencePresent: a target being released has no evidence (or
	// the release names no targets).
	RuleEvidencePresent = "evidence.present"
	// RuleEvidenceSigned: evidence is not signed by a trusted verifier key.
	RuleEvidenceSigned = "evidence.signed"
	// RuleEvidenceWheels: evidence is not for the exact wheel digests.
	RuleEvidenceWheels = "evidence.wheels"
	// RuleEvidenceSanitised: evidence is not sanitised.
	RuleEvidenceSanitised = "evidence.sanitised"
	// RuleEvidenceStore: the evidence store is not intact.
	RuleEvidenceStore = "evidence.store"
	// RuleEvidenceAggregates: a summary in the evidence disagrees with
	// its raw records.
	RuleEvidenceAggregates = "evidence.aggregates"
	// RuleEvidenceLanes: evidence has no lanes, lacks a lane release.toml
	// declares (or has it of another kind), has a lane of an unknown
	// kind, or a lane without its figures.
	RuleEvidenceLanes = "evidence.lanes"
	// RuleEvidenceCases: a correctness case did not pass, a lane ran no
	// case (or skipped them all), or its counts do not add up.
	RuleEvidenceCases = "evidence.cases"
	// RuleEvidenceThroughput: an overall geomean is not strictly above
	// min_throughput_geomean.
	RuleEvidenceThroughput = "evidence.throughput"
	// RuleEvidenceOverall: an overall geomean is below min_overall, or
	// the overall board has no usable workload.
	RuleEvidenceOverall = "evidence.overall"
	// RuleEvidencePhase: a phase geomean is below min_phase, or a phase
	// board has no usable workload.
	RuleEvidencePhase = "evidence.phase"
	// RuleEvidenceWorkload: a usable workload's r is below min_workload.
	RuleEvidenceWorkload = "evidence.workload"
	// RuleEvidenceWorkloadUnusable: a workload is not usable (a worker
	// failed).
	RuleEvidenceWorkloadUnusable = "evidence.workload_unusable"
	// RuleEvidenceNoise: a usable workload's robust CV is above
	// max_robust_cv.
	RuleEvidenceNoise = "evidence.noise"
	// RuleChannelRepublish: the version is already published with other
	// bytes.
	RuleChannelRepublish = "channel.republish"
	// RuleChannelDowngrade: the version is lower than the newest
	// published one and downgrades are not allowed.
	RuleChannelDowngrade = "channel.downgrade"
)

// defaultRules are the rule ids of the default policies, in report order.
var defaultRules = [...]string{
	RuleInput,
	RuleArtifactPresent, RuleArtifactVerified,
	RuleProvenancePresent, RuleProvenanceSigned, RuleProvenanceSubjects,
	RuleBuildSandboxed, RuleBuildPartsSigned,
	RuleEvidencePresent, RuleEvidenceSigned, RuleEvidenceWheels, RuleEvidenceSanitised,
	RuleEvidenceStore, RuleEvidenceAggregates, RuleEvidenceLanes, RuleEvidenceCases,
	RuleEvidenceThroughput, RuleEvidenceOverall, RuleEvidencePhase,
	RuleEvidenceWorkload, RuleEvidenceWorkloadUnusable, RuleEvidenceNoise,
	RuleChannelRepublish, RuleChannelDowngrade,
}

// DefaultRules returns the rule ids of the default policies in the order
// a refusal lists them.
func DefaultRules() []string { return slices.Clone(defaultRules[:]) }

// ruleRank orders rule ids: the default rules in report order, then any
// other id.
func ruleRank(id string) int {
	if i := slices.Index(defaultRules[:], id); i >= 0 {
		return i
	}
	return len(defaultRules)
}
