// Package policies holds mkrelease's release policies, written in Rego v1,
// and evaluates them: the decision whether a release may be published.
//
// It provides:
//
//   - the default policies, embedded from default/*.rego ([Defaults]): one
//     file per family of rules (artifact, provenance, build, evidence,
//     throughput, channel, input), with default/lib.rego holding their
//     helpers and the input's JSON schema; user policies (release.toml's
//     [policy] files, read by [LoadProjectFiles] or [LoadFiles]) are
//     evaluated with them and can only add reasons to refuse;
//   - the policy input, [Input]: everything the publisher established
//     about a release (its artifacts, provenance, each target's evidence
//     with the figures recomputed from the raw records, the channel), with
//     the thresholds in [Parameters] ([DefaultParameters], overridden by
//     release.toml's [policy]);
//   - the evaluation, [NewEvaluator] and [Evaluator.Evaluate] (or
//     [Evaluate] for one input): hermetic (no network, clock or
//     randomness), failing closed (a missing or mistyped figure is a
//     denial, a rule that fails at run time fails the evaluation), giving a
//     [Decision] with every denial of package [Package]'s deny set, in
//     report order, and the digest of every module evaluated;
//   - the rule ids: every denial of a default policy starts with its rule
//     id in brackets ("[evidence.noise] ..."), declared as the Rule…
//     constants ([RuleArtifactVerified], [RuleEvidencePresent], ...) and
//     listed in report order by [DefaultRules];
//   - the remedies: what to do about each default rule denied, with the
//     commands to run ([Remedies], [Remedy]);
//   - the errors: [RefusedError] for a refusal (every denial and remedy),
//     [CompileError] and [PolicyError] for a policy that cannot be read,
//     compiled or run.
//
// Package publish builds the input and acts on the decision; package
// report shows it. docs/publishing.md describes the rules and thresholds
// for users, and docs/troubleshooting.md each rule id with its cause and
// remedy.
package policies
