package policies

import (
	"slices"
	"strings"
)

// Remedy says what to do about the denials of one default rule.
type Remedy struct {
	// Rule is the rule id ("evidence.noise").
	Rule string `json:"rule"`
	// Text is what to do, with the commands to run; where the rule is
	// about targets' evidence, the commands name the targets denied.
	Text string `json:"text"`
}

// targetsFlag stands, in a remedy's text, for the --target flags of the
// targets its denials name.
const targetsFlag = "{targets}"

// evidenceRun is the command that gathers evidence for the targets denied.
const evidenceRun = "`mkrelease evidence run" + targetsFlag + "`"

// remedyText is what to do about a denial of a default rule; "" for a
// rule whose message already says it (build.sandboxed, channel.*) and
// for any other rule.
func remedyText(rule string) string {
	switch rule {
	case RuleInput:
		return "mkrelease makes the policy input itself, so this is a defect of mkrelease: report it with what " +
			"`mkrelease publish --dry-run` prints"
	case RuleArtifactPresent:
		return "build the release first (`mkrelease build`), or point --dist at the release folder"
	case RuleArtifactVerified:
		return "`mkrelease verify dist` names the file and the check at fault; rebuild with `mkrelease build` " +
			"rather than editing the release folder"
	case RuleProvenancePresent:
		return "the provenance is written and signed by `mkrelease build`: rebuild, or put NAME-VERSION.intoto.jsonl " +
			"back beside the artifacts it was signed with"
	case RuleProvenanceSigned:
		return "trust the key that signed it (`--key PUB.pem`, or [signing] trusted_keys in release.toml), " +
			"or rebuild with a trusted signing key ([signing] key)"
	case RuleProvenanceSubjects:
		return "when the provenance's signature could not be checked, trust its key first (above); otherwise the " +
			"release folder changed after it was built: `mkrelease verify dist` names the files that differ, and " +
			"`mkrelease build` makes them again"
	case RuleBuildPartsSigned:
		return "build each part with its machine's signing key ([signing] key, or `mkrelease build --target T --part --key KEY`) " +
			"and merge again without --allow-unsigned-parts, trusting those keys (`mkrelease merge PART... --trusted-key PUB.pem`, " +
			"or [signing] trusted_keys in release.toml)"
	case RuleEvidencePresent:
		return "gather it on a machine of the target's platform (" + evidenceRun +
			") and bring it here with `mkrelease evidence import FILE`, then publish again"
	case RuleEvidenceSigned:
		return "trust the verifier's key (`--key PUB.pem`, or [signing] trusted_keys), or gather the evidence " +
			"again with a trusted key (" + evidenceRun + ")"
	case RuleEvidenceWheels:
		return "the evidence was made for other wheels (an earlier build?): gather it again for these " +
			"(" + evidenceRun + "), or import the evidence made from this release's bundles"
	case RuleEvidenceSanitised:
		return "keep the value the finding names (file and offset) out of what the verifier records, " +
			"then gather the evidence again (" + evidenceRun + ")"
	case RuleEvidenceStore:
		return "the evidence archive was damaged or edited after it was made: gather it again " +
			"(" + evidenceRun + ") or import the archive as it was signed"
	case RuleEvidenceAggregates:
		return "the archive's summaries were not made from its records by mkrelease: gather the evidence " +
			"again (" + evidenceRun + ") or import the archive as it was signed"
	case RuleEvidenceLanes:
		return "run every lane release.toml declares, without --lane (" + evidenceRun +
			"), or import evidence that has them all"
	case RuleEvidenceCases:
		return "`mkrelease report` lists every case with its message: fix what fails, rebuild, and gather the " +
			"evidence again (" + evidenceRun + ")"
	case RuleEvidenceThroughput, RuleEvidenceOverall, RuleEvidencePhase, RuleEvidenceWorkload:
		return throughputRemedy
	case RuleEvidenceWorkloadUnusable:
		return "a worker crashed, timed out or computed another result than the other role's: " +
			"`mkrelease report` shows every attempt's outcome; fix the cause, rebuild if it is in the wheels, and gather " +
			"the evidence again (" + evidenceRun + ")"
	case RuleEvidenceNoise:
		return "the host disturbed those workers' timings; gather the evidence again on a quiet machine " +
			"(" + evidenceRun + ", then publish). `mkrelease report --html FILE` plots every " +
			"worker's steps. A bound that does not fit the project's machines is [policy] max_robust_cv in release.toml"
	}
	return ""
}

const throughputRemedy = "the candidate is not fast enough against its bound: `mkrelease report --html FILE` plots " +
	"every workload's r and its workers' steps; make it faster, rebuild, and gather the evidence again (" + evidenceRun +
	"); or, if a bound does not fit the project, change it in release.toml's [policy] (the verification summary records it)"

// Remedies says what to do about denials of a release of targets: one
// Remedy per default rule they name, in report order, its commands naming
// the targets denied. Denials of a user's policy, and of a default rule
// whose message already says what to do, get none.
func Remedies(denials []Denial, targets []string) []Remedy {
	var rules []string
	denied := map[string][]string{}
	for _, d := range denials {
		text := remedyText(d.Rule)
		if text == "" || !isDefault(d.Policy) {
			continue
		}
		if !slices.Contains(rules, d.Rule) {
			rules = append(rules, d.Rule)
		}
		if t := deniedTarget(d, targets); t != "" && !slices.Contains(denied[d.Rule], t) {
			denied[d.Rule] = append(denied[d.Rule], t)
		}
	}
	slices.SortStableFunc(rules, func(a, b string) int { return ruleRank(a) - ruleRank(b) })
	out := make([]Remedy, 0, len(rules))
	for _, r := range rules {
		text := strings.ReplaceAll(remedyText(r), targetsFlag, targetFlags(denied[r])) // none: every target
		if r == RuleEvidencePresent && len(denied[r]) > 0 && !slices.ContainsFunc(denials, func(d Denial) bool { return d.Rule != RuleEvidencePresent }) {
			text += othersNow(denied[r], targets)
		}
		out = append(out, Remedy{Rule: r, Text: text})
	}
	return out
}

// othersNow says, when missing evidence is all that stops a release, how
// to publish the targets that have theirs now; "" when every target
// lacks it.
func othersNow(missing, targets []string) string {
	others := slices.DeleteFunc(slices.Clone(targets), func(t string) bool { return slices.Contains(missing, t) })
	if len(others) == 0 {
		return ""
	}
	return "; or publish the targets that have it now (`mkrelease publish" + targetFlags(others) + "`) and the others once theirs is here"
}

// targetFlags is " --target T" for each of targets, "" for none.
func targetFlags(targets []string) string {
	var b strings.Builder
	for _, t := range targets {
		b.WriteString(" --target " + t)
	}
	return b.String()
}

// deniedTarget is the target an evidence denial names: the word after
// the rule id ("[evidence.noise] linux-x86_64 throughput/…",
// "[evidence.present] linux-x86_64: …") when it is one of targets, else "".
func deniedTarget(d Denial, targets []string) string {
	if !strings.HasPrefix(d.Rule, "evidence.") {
		return ""
	}
	rest, ok := strings.CutPrefix(d.Message, "["+d.Rule+"] ")
	if !ok {
		return ""
	}
	word, _, _ := strings.Cut(rest, " ")
	word = strings.TrimSuffix(word, ":")
	if !slices.Contains(targets, word) {
		return ""
	}
	return word
}
