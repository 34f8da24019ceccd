package report

import (
	"math"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/policies"
	"github.com/mkrelease/mkrelease/publish"
)

// steps makes n step times around base seconds: three slow warm-ups, a
// deterministic wobble of ±spread, and one slow step at index slow.
func steps(n int, base, spread float64, slow int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = base * (1 + spread*math.Sin(float64(i)*1.7))
		if i < 3 {
			out[i] = base * (1.6 - 0.2*float64(i))
		}
		if i == slow {
			out[i] = base * 1.3
		}
	}
	return out
}

// workerRecords are one workload's ABBA workers: candidate at cand
// seconds a step, reference at ref.
func workerRecords(lane, workload, phase string, cand, ref, spread float64) []evidence.Measurement {
	var ms []evidence.Measurement
	for slot, role := range map[int]string{1: "candidate", 2: "reference", 3: "reference", 4: "candidate"} {
		base := ref
		if role == "candidate" {
			base = cand
		}
		// Linear drift over the run, which ABBA cancels.
		base *= 1 + 0.01*float64(slot-1)
		ms = append(ms, evidence.Measurement{Lane: lane, Workload: workload, Phase: phase, Role: role, Slot: slot, Attempt: 1,
			Outcome: evidence.OutcomeOK, Steps: steps(16, base, spread, 7+slot), ResultSHA256: "ab"})
	}
	return ms
}

// fixtureChecked is a checked evidence archive of two lanes: cases (one
// failing, one skipped) and crossover (three workloads in two phases; one
// with a reference start-up retried, one over the CV bound).
func fixtureChecked(t *testing.T) *runner.Report {
	t.Helper()
	cases := []evidence.Case{
		{Lane: "semantic", ID: "add/i32", Status: "PASS", Tier: "core", Duration: 0.012},
		{Lane: "semantic", ID: "log/subnormal", Status: "FAIL", Tier: "math", Duration: 0.034, Message: "ulp error 3 > 2 <b>"},
		{Lane: "semantic", ID: "div/zero", Status: "SKIP", Tier: "core", Duration: 0},
		{Lane: "semantic", ID: "mul/f64", Status: "PASS", Tier: "core", Duration: 0.02},
	}
	var ms []evidence.Measurement
	ms = append(ms, workerRecords("throughput", "matmul", "compile", 0.010, 0.012, 0.01)...)
	ms = append(ms, workerRecords("throughput", "conv", "run", 0.020, 0.021, 0.02)...)
	noisy := workerRecords("throughput", "attention", "run", 0.030, 0.033, 0.15)
	for i := range noisy {
		if noisy[i].Slot == 2 { // the reference of slot 2 failed to start, then ran
			failed := noisy[i]
			failed.Attempt, failed.Outcome, failed.Steps, failed.ResultSHA256, failed.Error = 1, evidence.OutcomeStartupFailure, []float64{}, "", "worker exited before ready"
			noisy[i].Attempt = 2
			noisy = append(noisy, failed)
			break
		}
	}
	ms = append(ms, noisy...)
	workloads := []config.Workload{{Name: "matmul", Phase: "compile"}, {Name: "conv", Phase: "run"}, {Name: "attention", Phase: "run"}}
	specs := []runner.LaneSpec{{Name: "semantic", Kind: config.LaneCases}, {Name: "throughput", Kind: config.LaneCrossover, Warmups: 3, Workloads: workloads}}
	sum, err := runner.RecomputeSpecs(specs, cases, ms)
	if err != nil {
		t.Fatal(err)
	}
	return &runner.Report{
		Report: finding.Report{Subject: "dist/demo-1.0-verifier-evidence-linux-x86_64.tar.gz", Checks: []string{runner.CheckAggregates}, Findings: []runner.Finding{
			{Check: runner.CheckAggregates, File: "throughput/summary.json", Msg: "says something else than its raw records; the values recomputed from the records are the ones used"},
		}},
		Manifest: &runner.Manifest{Schema: runner.ManifestSchema, Lanes: []runner.ManifestLane{
			{Name: "semantic", Kind: config.LaneCases}, {Name: "throughput", Kind: config.LaneCrossover, Warmups: 3, Workloads: workloads}}},
		Summary: sum, Cases: cases, Measurements: ms,
	}
}

// fixtureResult is a dry run's result for a release of two targets, one
// without evidence.
func fixtureResult(t *testing.T) *publish.Result {
	const ev = "demo-1.0-verifier-evidence-linux-x86_64.tar.gz"
	return &publish.Result{
		Input: policies.Input{
			Release:    policies.Release{Project: "demo", Version: "1.0", Targets: []string{"linux-x86_64", "linux-aarch64"}},
			Parameters: policies.DefaultParameters(),
			Artifacts: []policies.Artifact{
				{Name: "demo-1.0.spdx.json", Kind: "sbom", SHA256: hex('c'), Verified: true},
				{Name: "demo-1.0-linux-x86_64.tar.gz", Kind: "bundle", Target: "linux-x86_64", SHA256: hex('a'), Verified: true},
				{Name: "demo-1.0-py3-none-manylinux_2_17_x86_64.whl", Kind: "wheel", Target: "linux-x86_64", SHA256: hex('b'), Verified: false,
					Findings: []string{"RECORD: demo/lib.so: sha256 mismatch"}},
			},
			Evidence: []policies.Evidence{
				{Target: "linux-x86_64", File: ev, Present: true},
				{Target: "linux-aarch64", File: "demo-1.0-verifier-evidence-linux-aarch64.tar.gz"},
			},
		},
		// The rule ids and the modules denying them are the default
		// policies' own; the evidence denial and the remedy carry markup,
		// which every rendering must escape.
		Decision: &policies.Decision{Allow: false,
			Denials: []policies.Denial{
				{Rule: policies.RuleArtifactVerified, Message: "[" + policies.RuleArtifactVerified + "] demo-1.0-py3-none-manylinux_2_17_x86_64.whl (wheel, linux-x86_64) does not verify: RECORD: demo/lib.so: sha256 mismatch",
					Policy: defaultPolicyOf(t, policies.RuleArtifactVerified)},
				{Rule: policies.RuleEvidencePresent, Message: "[" + policies.RuleEvidencePresent + "] no evidence for target linux-aarch64 <script>alert(1)</script>",
					Policy: defaultPolicyOf(t, policies.RuleEvidencePresent)},
			},
			Remedies: []policies.Remedy{
				{Rule: policies.RuleEvidencePresent, Text: "gather it (`mkrelease evidence run --target linux-aarch64`) <b>here</b>"},
			},
			Policies: []policies.PolicyDigest{
				{Name: defaultPolicyOf(t, policies.RuleArtifactVerified), SHA256: hex('d')},
				{Name: defaultPolicyOf(t, policies.RuleEvidencePresent), SHA256: hex('e')},
			},
		},
		Evidence: map[string]*runner.Report{ev: fixtureChecked(t)},
	}
}

// defaultPolicyOf is the name of the default policy module whose denials
// carry rule ("default/artifact.rego" for artifact.verified): the one
// module whose source has a message starting "[RULE]".
func defaultPolicyOf(t *testing.T, rule string) string {
	t.Helper()
	var names []string
	for _, m := range policies.Defaults() {
		if strings.Contains(m.Source, `"[`+rule+`]`) {
			names = append(names, m.Name)
		}
	}
	if len(names) != 1 {
		t.Fatalf("default policy modules with [%s] denials: %q, want one", rule, names)
	}
	return names[0]
}

func hex(c byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// fixtureReport is the report of fixtureResult.
func fixtureReport(t *testing.T) *Report {
	return fromResult("dist", "", fixtureResult(t), DefaultBounds())
}
