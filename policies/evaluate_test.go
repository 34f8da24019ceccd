package policies

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	wheel  = "vexl-0.3.0-py3-none-manylinux_2_34_x86_64.whl"
	plugin = "vexl_plugin-0.3.0-py3-none-manylinux_2_34_x86_64.whl"
	x86    = "linux-x86_64"
	arm    = "linux-aarch64"
	evx86  = "vexl-0.3.0-verifier-evidence-linux-x86_64.tar.gz"
	evarm  = "vexl-0.3.0-verifier-evidence-linux-aarch64.tar.gz"
	prov   = "vexl-0.3.0.intoto.jsonl"
)

func ptr(f float64) *float64 { return &f }

// passing is a release every default rule allows: one target, a cases lane
// and a crossover lane over three workloads in two phases.
func passing() Input {
	return Input{
		Release:    Release{Project: "vexl", Version: "0.3.0", Targets: []string{x86}},
		Parameters: DefaultParameters(),
		Artifacts: []Artifact{
			{Name: wheel, Kind: "wheel", Target: x86, SHA256: strings.Repeat("1", 64), Verified: true},
			{Name: plugin, Kind: "wheel", Target: x86, SHA256: strings.Repeat("2", 64), Verified: true},
			{Name: "vexl-0.3.0-linux-x86_64.tar.gz", Kind: "bundle", Target: x86, SHA256: strings.Repeat("3", 64), Verified: true},
			{Name: "vexl-0.3.0.spdx.json", Kind: "sbom", SHA256: strings.Repeat("4", 64), Verified: true},
		},
		Provenance: Provenance{Present: true, File: prov, SignedByTrustedKey: true, KeyID: "SHA256:release", SubjectsMatch: true,
			Sandbox: Sandbox{Recorded: true, Isolated: true, Name: "bubblewrap 0.8.0", Namespaces: []string{"user", "mount", "pid", "ipc", "uts", "net"}}},
		Evidence: []Evidence{{
			Target: x86, Present: true, File: evx86, SignedByTrustedKey: true, KeyID: "SHA256:verifier",
			WheelsMatch: true, Sanitised: true, StoreIntact: true, AggregatesMatch: true,
			DeclaredLanes: []DeclaredLane{{Name: "semantic", Kind: LaneCases}, {Name: "throughput", Kind: LaneCrossover}},
			Lanes: []Lane{
				{Name: "semantic", Kind: LaneCases, Cases: &Cases{Total: 319, Pass: 318, Skip: 1}},
				{Name: "throughput", Kind: LaneCrossover, Crossover: &Crossover{
					Overall: Board{Geomean: 7.6, Lo: 5.3, Hi: ptr(11.0), N: 3, Bounded: true},
					Phases: []Board{
						{Phase: "elementwise", Geomean: 6.3, Lo: 6.3, N: 1},
						{Phase: "fused", Geomean: 8.3, Lo: 6.4, Hi: ptr(10.8), N: 2, Bounded: true},
					},
					Workloads: []Workload{
						{Workload: "axpy-f64", Phase: "elementwise", R: 6.3, Usable: true, MaxRobustCV: 0.021},
						{Workload: "gelu-f32", Phase: "fused", R: 7.9, Usable: true, MaxRobustCV: 0.034},
						{Workload: "layernorm-f32", Phase: "fused", R: 8.7, Usable: true, MaxRobustCV: 0.05},
					},
				}},
			},
		}},
		Channel: Channel{Exists: true, PublishedVersions: []string{"0.2.0"}, Newest: "0.2.0"},
	}
}

func crossover(in *Input) *Crossover { return in.Evidence[0].Lanes[1].Crossover }
func cases(in *Input) *Cases         { return in.Evidence[0].Lanes[0].Cases }

func newEvaluator(t *testing.T, extra ...Module) *Evaluator {
	t.Helper()
	e, err := NewEvaluator(t.Context(), extra)
	if err != nil {
		t.Fatalf("NewEvaluator: %v", err)
	}
	return e
}

func messagesOf(d *Decision) []string {
	msgs := []string{}
	for _, x := range d.Denials {
		msgs = append(msgs, x.Message)
	}
	return msgs
}

// ruleTests check every default rule: each row changes the passing input
// and lists every message it must give, exactly (none: allowed).
var ruleTests = []struct {
	name   string
	change func(*Input)
	want   []string
}{
	{"passing", func(*Input) {}, nil},

	// artifact.*
	{"no artifacts", func(in *Input) { in.Artifacts = nil },
		[]string{"[artifact.present] the release has no artifacts"}},
	{"artifact does not verify", func(in *Input) {
		in.Artifacts[1].Verified = false
		in.Artifacts[1].Findings = []string{"RECORD: vexl_plugin/_native.so: sha256 mismatch", "sidecar: missing"}
	}, []string{"[artifact.verified] " + plugin + " (wheel, linux-x86_64) does not verify: RECORD: vexl_plugin/_native.so: sha256 mismatch; sidecar: missing"}},
	{"artifact with many findings", func(in *Input) {
		in.Artifacts[0].Verified = false
		in.Artifacts[0].Findings = []string{"a", "b", "c", "d", "e"}
	}, []string{"[artifact.verified] " + wheel + " (wheel, linux-x86_64) does not verify: a; b; c (and 2 more)"}},
	{"artifact without findings or target", func(in *Input) { in.Artifacts[3].Verified = false },
		[]string{"[artifact.verified] vexl-0.3.0.spdx.json (sbom) does not verify (no finding recorded)"}},

	// provenance.*
	{"no provenance", func(in *Input) { in.Provenance = Provenance{File: prov} },
		[]string{"[provenance.present] there is no provenance statement (expected vexl-0.3.0.intoto.jsonl)"}},
	{"no provenance, no name", func(in *Input) { in.Provenance = Provenance{} },
		[]string{"[provenance.present] there is no provenance statement"}},
	{"provenance untrusted", func(in *Input) {
		in.Provenance.SignedByTrustedKey = false
		in.Provenance.KeyID = "SHA256:stranger"
		in.Provenance.Findings = []string{"signature: key SHA256:stranger is not trusted"}
	}, []string{"[provenance.signed] provenance vexl-0.3.0.intoto.jsonl is not signed by a trusted key (key SHA256:stranger): signature: key SHA256:stranger is not trusted"}},
	{"provenance unsigned", func(in *Input) { in.Provenance.SignedByTrustedKey, in.Provenance.KeyID = false, "" },
		[]string{"[provenance.signed] provenance vexl-0.3.0.intoto.jsonl is not signed by a trusted key"}},
	{"provenance subjects", func(in *Input) { in.Provenance.SubjectsMatch = false },
		[]string{"[provenance.subjects] the subjects of provenance vexl-0.3.0.intoto.jsonl do not match the release's artifacts"}},

	// build.sandboxed
	{"build not sandboxed", func(in *Input) {
		in.Provenance.Sandbox = Sandbox{Recorded: true, Reason: "bubblewrap is not installed"}
	}, []string{"[build.sandboxed] the build steps ran without a sandbox (bubblewrap is not installed); rebuild where user namespaces are allowed, or set [build] allow_unsandboxed = true"}},
	{"provenance records no sandbox", func(in *Input) { in.Provenance.Sandbox = Sandbox{} },
		[]string{"[build.sandboxed] the build steps ran without a sandbox (the provenance does not record a sandbox); rebuild where user namespaces are allowed, or set [build] allow_unsandboxed = true"}},
	{"not sandboxed, no reason", func(in *Input) { in.Provenance.Sandbox = Sandbox{Recorded: true} },
		[]string{"[build.sandboxed] the build steps ran without a sandbox (no reason recorded); rebuild where user namespaces are allowed, or set [build] allow_unsandboxed = true"}},
	{"not sandboxed, allowed", func(in *Input) {
		in.Parameters.AllowUnsandboxed = true
		in.Provenance.Sandbox = Sandbox{Recorded: true, Reason: "bubblewrap is not installed"}
	}, nil},
	{"sandbox of an untrusted provenance is not judged", func(in *Input) {
		in.Provenance.SignedByTrustedKey, in.Provenance.KeyID = false, ""
		in.Provenance.Sandbox = Sandbox{}
	}, []string{"[provenance.signed] provenance vexl-0.3.0.intoto.jsonl is not signed by a trusted key"}},

	// build.parts_signed
	{"merged from unsigned parts", func(in *Input) {
		in.Provenance.UnsignedParts = []UnsignedPart{
			{Targets: []string{x86}, PartSHA256: strings.Repeat("5", 64), Reason: "no part statement"},
			{Targets: []string{arm, "macos-arm64"}, PartSHA256: strings.Repeat("6", 64), Reason: "part statement not checked: no trusted key"},
		}
	}, []string{ // in the order of their messages, as every rule's denials
		"[build.parts_signed] the part of linux-aarch64, macos-arm64 (part.json sha256 " + strings.Repeat("6", 64) + ") was merged without a trusted signature (part statement not checked: no trusted key), with mkrelease merge --allow-unsigned-parts",
		"[build.parts_signed] the part of linux-x86_64 (part.json sha256 " + strings.Repeat("5", 64) + ") was merged without a trusted signature (no part statement), with mkrelease merge --allow-unsigned-parts",
	}},
	{"unsigned parts are refused even where unsandboxed builds are allowed", func(in *Input) {
		in.Parameters.AllowUnsandboxed = true
		in.Provenance.UnsignedParts = []UnsignedPart{{Targets: []string{x86}, PartSHA256: strings.Repeat("5", 64), Reason: "no part statement"}}
	}, []string{"[build.parts_signed] the part of linux-x86_64 (part.json sha256 " + strings.Repeat("5", 64) + ") was merged without a trusted signature (no part statement), with mkrelease merge --allow-unsigned-parts"}},
	{"parts of an untrusted provenance are not judged", func(in *Input) {
		in.Provenance.SignedByTrustedKey, in.Provenance.KeyID = false, ""
		in.Provenance.UnsignedParts = []UnsignedPart{{Targets: []string{x86}, PartSHA256: strings.Repeat("5", 64), Reason: "no part statement"}}
	}, []string{"[provenance.signed] provenance vexl-0.3.0.intoto.jsonl is not signed by a trusted key"}},

	// evidence.* facts
	{"no targets", func(in *Input) { in.Release.Targets = nil },
		[]string{"[evidence.present] the release names no targets"}},
	{"evidence not present", func(in *Input) { in.Evidence[0].Present = false },
		[]string{"[evidence.present] linux-x86_64: there is no verifier evidence for this target (expected " + evx86 + ")"}},
	{"evidence for one of two targets", func(in *Input) { in.Release.Targets = []string{arm, x86} },
		[]string{"[evidence.present] linux-aarch64: there is no verifier evidence for this target"}},
	{"evidence for one of two targets, other missing", func(in *Input) {
		in.Release.Targets = []string{x86, arm}
		in.Evidence = append(in.Evidence, Evidence{Target: arm, File: evarm})
	}, []string{"[evidence.present] linux-aarch64: there is no verifier evidence for this target (expected " + evarm + ")"}},
	{"evidence of an unreleased target is ignored", func(in *Input) {
		in.Evidence = append(in.Evidence, Evidence{Target: arm, Present: true, File: evarm})
	}, nil},
	{"evidence untrusted", func(in *Input) {
		in.Evidence[0].SignedByTrustedKey = false
		in.Evidence[0].KeyID = "SHA256:stranger"
		in.Evidence[0].Findings = []EvidenceFinding{
			{Check: "signature", File: evx86 + ".intoto.jsonl", Message: "key SHA256:stranger is not trusted"},
			{Check: "store", Message: "not shown: another check"},
		}
	}, []string{"[evidence.signed] linux-x86_64: evidence " + evx86 + " is not signed by a trusted verifier key (key SHA256:stranger): " + evx86 + ".intoto.jsonl: key SHA256:stranger is not trusted"}},
	{"evidence for other wheels", func(in *Input) {
		in.Evidence[0].WheelsMatch = false
		in.Evidence[0].Findings = []EvidenceFinding{{Check: "identity", File: "manifest.json", Message: "wheel " + plugin + ": sha256 abc, want 222"}}
	}, []string{"[evidence.wheels] linux-x86_64: evidence " + evx86 + " is not for the exact wheel digests of this release: manifest.json: wheel " + plugin + ": sha256 abc, want 222"}},
	{"evidence not sanitised", func(in *Input) { in.Evidence[0].Sanitised = false },
		[]string{"[evidence.sanitised] linux-x86_64: evidence " + evx86 + " is not sanitised"}},
	{"evidence store broken", func(in *Input) { in.Evidence[0].StoreIntact = false },
		[]string{"[evidence.store] linux-x86_64: the store of evidence " + evx86 + " is not intact"}},
	{"evidence aggregates disagree", func(in *Input) { in.Evidence[0].AggregatesMatch = false },
		[]string{"[evidence.aggregates] linux-x86_64: a summary in evidence " + evx86 + " disagrees with its raw records"}},
	{"evidence without lanes", func(in *Input) { in.Evidence[0].Lanes = nil },
		[]string{
			"[evidence.lanes] linux-x86_64: evidence " + evx86 + " has no lanes",
			"[evidence.lanes] linux-x86_64: lane semantic is declared in release.toml but missing from the evidence",
			"[evidence.lanes] linux-x86_64: lane throughput is declared in release.toml but missing from the evidence",
		}},
	{"lane of unknown kind", func(in *Input) { in.Evidence[0].Lanes[0].Kind = "fuzz" },
		[]string{
			"[evidence.lanes] linux-x86_64 semantic: release.toml declares a cases lane, but the evidence has a fuzz lane",
			`[evidence.lanes] linux-x86_64 semantic: unknown lane kind "fuzz"`,
		}},
	// Declared lanes: `evidence run --lane semantic` leaves throughput out.
	{"declared lane missing", func(in *Input) { in.Evidence[0].Lanes = in.Evidence[0].Lanes[:1] },
		[]string{"[evidence.lanes] linux-x86_64: lane throughput is declared in release.toml but missing from the evidence"}},
	{"declared lane of another kind", func(in *Input) {
		in.Evidence[0].Lanes[1] = Lane{Name: "throughput", Kind: LaneCases, Cases: &Cases{Total: 1, Pass: 1}}
	}, []string{"[evidence.lanes] linux-x86_64 throughput: release.toml declares a crossover lane, but the evidence has a cases lane"}},
	{"an undeclared lane is judged like any other", func(in *Input) {
		in.Evidence[0].Lanes = append(in.Evidence[0].Lanes, Lane{Name: "determinism", Kind: LaneCases, Cases: &Cases{Total: 2, Fail: 2,
			Failing: []FailingCase{{ID: "a", Status: "FAIL"}, {ID: "b", Status: "FAIL"}}}})
	}, []string{
		"[evidence.cases] linux-x86_64 determinism: case a is FAIL, not PASS",
		"[evidence.cases] linux-x86_64 determinism: case b is FAIL, not PASS",
	}},
	{"declared lanes of the second target", func(in *Input) {
		in.Release.Targets = []string{x86, arm}
		ev := in.Evidence[0]
		ev.Target, ev.File, ev.Lanes = arm, evarm, ev.Lanes[1:]
		in.Evidence = append(in.Evidence, ev)
	}, []string{"[evidence.lanes] linux-aarch64: lane semantic is declared in release.toml but missing from the evidence"}},
	{"declared lanes of evidence not present are not judged", func(in *Input) {
		in.Evidence[0].Present = false
		in.Evidence[0].Lanes = nil
	}, []string{"[evidence.present] linux-x86_64: there is no verifier evidence for this target (expected " + evx86 + ")"}},
	{"cases lane without counts", func(in *Input) { in.Evidence[0].Lanes[0].Cases = nil },
		[]string{"[evidence.lanes] linux-x86_64 semantic: a cases lane without its case counts"}},
	{"crossover lane without boards", func(in *Input) { in.Evidence[0].Lanes[1].Crossover = nil },
		[]string{"[evidence.lanes] linux-x86_64 throughput: a crossover lane without its boards"}},

	// evidence.cases
	{"failing cases", func(in *Input) {
		*cases(in) = Cases{Total: 319, Pass: 316, Fail: 1, Error: 1, Skip: 1,
			Failing: []FailingCase{{ID: "func/x", Status: "FAIL"}, {ID: "io/y", Status: "ERROR"}}}
	}, []string{
		"[evidence.cases] linux-x86_64 semantic: case func/x is FAIL, not PASS",
		"[evidence.cases] linux-x86_64 semantic: case io/y is ERROR, not PASS",
	}},
	{"invalid cases", func(in *Input) {
		*cases(in) = Cases{Total: 319, Pass: 317, Skip: 0, Invalid: 2,
			Failing: []FailingCase{{ID: "", Status: "PASS"}, {ID: "func/z", Status: "TIMEOUT"}}}
	}, []string{
		`[evidence.cases] linux-x86_64 semantic: invalid case (id "", status "PASS")`,
		`[evidence.cases] linux-x86_64 semantic: invalid case (id "func/z", status "TIMEOUT")`,
	}},
	{"skipped cases are allowed", func(in *Input) { *cases(in) = Cases{Total: 319, Pass: 1, Skip: 318} }, nil},
	{"every case skipped", func(in *Input) { *cases(in) = Cases{Total: 3, Skip: 3} },
		[]string{"[evidence.cases] linux-x86_64 semantic: no case passed (all 3 skipped)"}},
	{"no cases", func(in *Input) { *cases(in) = Cases{} },
		[]string{"[evidence.cases] linux-x86_64 semantic: the lane ran no cases"}},
	{"failing cases not listed", func(in *Input) {
		*cases(in) = Cases{Total: 319, Pass: 317, Fail: 2, Failing: []FailingCase{{ID: "a", Status: "FAIL"}}}
	},
		[]string{
			"[evidence.cases] linux-x86_64 semantic: 2 cases did not pass (FAIL 2, ERROR 0, invalid 0) but 1 are listed",
			"[evidence.cases] linux-x86_64 semantic: case a is FAIL, not PASS",
		}},
	{"case counts do not add up", func(in *Input) { cases(in).Total = 320 },
		[]string{"[evidence.cases] linux-x86_64 semantic: the case counts do not add up (PASS 318 + FAIL 0 + ERROR 0 + SKIP 1 + invalid 0 = 319, total 320)"}},

	// evidence.throughput: strictly above 1.00
	{"throughput geomean exactly 1.00", func(in *Input) { crossover(in).Overall.Geomean = 1.0 },
		[]string{"[evidence.throughput] linux-x86_64 throughput: overall geomean 1.0000 is not above the minimum 1.00"}},
	{"throughput geomean 1.0000001", func(in *Input) { crossover(in).Overall.Geomean = 1.0000001 }, nil},
	{"throughput geomean 0.97", func(in *Input) { crossover(in).Overall.Geomean = 0.97 },
		[]string{"[evidence.throughput] linux-x86_64 throughput: overall geomean 0.9700 is not above the minimum 1.00"}},

	// evidence.overall (≥ 0.95), judged alone with min_throughput_geomean 0.5
	{"overall geomean 0.95", func(in *Input) {
		in.Parameters.MinThroughputGeomean = 0.5
		crossover(in).Overall.Geomean = 0.95
	}, nil},
	{"overall geomean 0.9499", func(in *Input) {
		in.Parameters.MinThroughputGeomean = 0.5
		crossover(in).Overall.Geomean = 0.9499
	}, []string{"[evidence.overall] linux-x86_64 throughput: overall geomean 0.9499 is below the minimum 0.95"}},
	{"overall geomean 0.94999 is shown in full", func(in *Input) {
		in.Parameters.MinThroughputGeomean = 0.5
		crossover(in).Overall.Geomean = 0.94999
	}, []string{"[evidence.overall] linux-x86_64 throughput: overall geomean 0.94999 is below the minimum 0.95"}},
	{"overall board empty", func(in *Input) { crossover(in).Overall = Board{Unusable: 3} },
		[]string{"[evidence.overall] linux-x86_64 throughput: no usable workload (n = 0)"}},

	// evidence.phase (≥ 0.90)
	{"phase geomean 0.90", func(in *Input) { crossover(in).Phases[1].Geomean = 0.90 }, nil},
	{"phase geomean 0.8999", func(in *Input) { crossover(in).Phases[1].Geomean = 0.8999 },
		[]string{"[evidence.phase] linux-x86_64 throughput/fused: phase geomean 0.8999 is below the minimum 0.90"}},
	{"phase board empty", func(in *Input) { crossover(in).Phases[0] = Board{Phase: "elementwise", Unusable: 1} },
		[]string{"[evidence.phase] linux-x86_64 throughput/elementwise: no usable workload in this phase (n = 0)"}},

	// evidence.workload (≥ 0.80)
	{"workload r 0.80", func(in *Input) { crossover(in).Workloads[0].R = 0.80 }, nil},
	{"workload r 0.7999", func(in *Input) { crossover(in).Workloads[0].R = 0.7999 },
		[]string{"[evidence.workload] linux-x86_64 throughput/axpy-f64: r = 0.7999 is below the minimum 0.80"}},
	{"workload r 0.7612", func(in *Input) { crossover(in).Workloads[0].R = 0.76123 },
		[]string{"[evidence.workload] linux-x86_64 throughput/axpy-f64: r = 0.7612 is below the minimum 0.80"}},
	{"workload unusable", func(in *Input) {
		crossover(in).Workloads[0] = Workload{Workload: "axpy-f64", Phase: "elementwise",
			Failures: []string{"slot 1 candidate: crash", "slot 4 candidate: crash"}}
	}, []string{"[evidence.workload_unusable] linux-x86_64 throughput/axpy-f64: not usable: slot 1 candidate: crash; slot 4 candidate: crash"}},
	{"workload unusable without failures", func(in *Input) {
		crossover(in).Workloads[2] = Workload{Workload: "layernorm-f32", Phase: "fused"}
	}, []string{"[evidence.workload_unusable] linux-x86_64 throughput/layernorm-f32: not usable (no failure recorded)"}},

	// evidence.noise (robust CV ≤ 10 %)
	{"robust CV 0.10", func(in *Input) { crossover(in).Workloads[1].MaxRobustCV = 0.10 }, nil},
	{"robust CV 0.1001", func(in *Input) { crossover(in).Workloads[1].MaxRobustCV = 0.1001 },
		[]string{"[evidence.noise] linux-x86_64 throughput/gelu-f32: robust CV 10.01% is above the maximum 10.00%"}},
	{"robust CV 0.100001 is shown in full", func(in *Input) { crossover(in).Workloads[1].MaxRobustCV = 0.100001 },
		[]string{"[evidence.noise] linux-x86_64 throughput/gelu-f32: robust CV 10.0001% is above the maximum 10.00%"}},
	{"robust CV of an unusable workload is not judged", func(in *Input) {
		in.Parameters.MinThroughputGeomean = 0.5
		crossover(in).Workloads[1] = Workload{Workload: "gelu-f32", Phase: "fused", MaxRobustCV: 0.5, Failures: []string{"slot 2 reference: startup failed twice"}}
	}, []string{"[evidence.workload_unusable] linux-x86_64 throughput/gelu-f32: not usable: slot 2 reference: startup failed twice"}},

	// channel.*
	{"republish identical", func(in *Input) {
		in.Channel.PublishedVersions = []string{"0.2.0", "0.3.0"}
		in.Channel.Newest = "0.3.0"
		in.Channel.SameVersionPublished, in.Channel.SameVersionIdentical = true, true
	}, nil},
	{"republish different", func(in *Input) {
		in.Channel.PublishedVersions = []string{"0.2.0", "0.3.0"}
		in.Channel.Newest = "0.3.0"
		in.Channel.SameVersionPublished = true
	}, []string{"[channel.republish] vexl 0.3.0 is already published with different bytes; publish a new version"}},
	{"downgrade", func(in *Input) {
		in.Channel.PublishedVersions = []string{"0.2.0", "0.4.0"}
		in.Channel.Newest = "0.4.0"
		in.Channel.VersionLowerThanNewest = true
	}, []string{"[channel.downgrade] vexl 0.3.0 is lower than the newest published version 0.4.0; publish it anyway with `mkrelease publish --allow-downgrade`"}},
	{"downgrade allowed", func(in *Input) {
		in.Parameters.AllowDowngrade = true
		in.Channel.PublishedVersions = []string{"0.2.0", "0.4.0"}
		in.Channel.Newest = "0.4.0"
		in.Channel.VersionLowerThanNewest = true
	}, nil},
	{"new channel", func(in *Input) { in.Channel = Channel{} }, nil},

	// Parameters come from the input.
	{"min_workload 0.5 lets 0.7 pass", func(in *Input) {
		in.Parameters.MinWorkload = 0.5
		crossover(in).Workloads[0].R = 0.7
	}, nil},
	{"min_workload 0.9 refuses 0.85", func(in *Input) {
		in.Parameters.MinWorkload = 0.9
		crossover(in).Workloads[0].R = 0.85
	}, []string{"[evidence.workload] linux-x86_64 throughput/axpy-f64: r = 0.8500 is below the minimum 0.90"}},
	{"thresholds with more digits are shown in full", func(in *Input) {
		in.Parameters.MinWorkload = 0.875
		in.Parameters.MaxRobustCV = 0.0125
		crossover(in).Workloads[0].R = 0.85
	}, []string{
		"[evidence.workload] linux-x86_64 throughput/axpy-f64: r = 0.8500 is below the minimum 0.875",
		"[evidence.noise] linux-x86_64 throughput/axpy-f64: robust CV 2.10% is above the maximum 1.25%",
		"[evidence.noise] linux-x86_64 throughput/gelu-f32: robust CV 3.40% is above the maximum 1.25%",
		"[evidence.noise] linux-x86_64 throughput/layernorm-f32: robust CV 5.00% is above the maximum 1.25%",
	}},
	{"min_throughput_geomean 8 refuses 7.6", func(in *Input) { in.Parameters.MinThroughputGeomean = 8 },
		[]string{"[evidence.throughput] linux-x86_64 throughput: overall geomean 7.6000 is not above the minimum 8.00"}},
}

func TestRules(t *testing.T) {
	e := newEvaluator(t)
	for _, tt := range ruleTests {
		t.Run(tt.name, func(t *testing.T) {
			in := passing()
			tt.change(&in)
			d, err := e.Evaluate(t.Context(), in)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			got := messagesOf(d)
			want := tt.want
			if want == nil {
				want = []string{}
			}
			if !slices.Equal(got, want) {
				t.Errorf("denials:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			if d.Allow != (len(want) == 0) {
				t.Errorf("Allow = %v with %d denials", d.Allow, len(got))
			}
			if (d.Err() == nil) != d.Allow {
				t.Errorf("Err() = %v, Allow = %v", d.Err(), d.Allow)
			}
			for _, x := range d.Denials {
				if !slices.Contains(DefaultRules(), x.Rule) || !strings.HasPrefix(x.Message, "["+x.Rule+"] ") {
					t.Errorf("denial %q: rule %q is not a default rule", x.Message, x.Rule)
				}
				if !strings.HasPrefix(x.Policy, "default/") {
					t.Errorf("denial %q: policy %q", x.Message, x.Policy)
				}
			}
		})
	}
}

// TestEveryRuleDenies checks that the rows of ruleTests exercise every
// default rule.
func TestEveryRuleDenies(t *testing.T) {
	seen := map[string]bool{}
	for _, tt := range ruleTests {
		for _, m := range tt.want {
			seen[ruleID(m)] = true
		}
	}
	seen[RuleInput] = true // TestMalformedInput
	for _, r := range DefaultRules() {
		if !seen[r] {
			t.Errorf("no test denies by rule %s", r)
		}
	}
}

// failing is a release that breaks most default rules at once, each
// with findings or failures to quote.
func failing() Input {
	in := passing()
	in.Release.Targets = []string{x86, arm}
	in.Artifacts[0].Verified = false
	in.Provenance.SignedByTrustedKey, in.Provenance.KeyID = false, ""
	in.Provenance.SubjectsMatch = false
	in.Evidence[0].Sanitised = false
	in.Evidence[0].StoreIntact = false
	in.Evidence[0].DeclaredLanes = append(in.Evidence[0].DeclaredLanes, DeclaredLane{Name: "determinism", Kind: LaneCases})
	*cases(&in) = Cases{Total: 319, Pass: 318, Fail: 1, Failing: []FailingCase{{ID: "func/x", Status: "FAIL"}}}
	x := crossover(&in)
	x.Overall.Geomean = 0.91
	x.Phases[1].Geomean = 0.85
	x.Workloads[0].R = 0.7
	x.Workloads[1].MaxRobustCV = 0.2
	x.Workloads[2] = Workload{Workload: "layernorm-f32", Phase: "fused", Failures: []string{"slot 1 candidate: crash"}}
	in.Channel.SameVersionPublished = true
	in.Channel.VersionLowerThanNewest = true
	in.Channel.Newest = "0.4.0"
	return in
}

func TestNoShortCircuit(t *testing.T) {
	d, err := Evaluate(t.Context(), failing(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"[artifact.verified] " + wheel + " (wheel, linux-x86_64) does not verify (no finding recorded)",
		"[provenance.signed] provenance vexl-0.3.0.intoto.jsonl is not signed by a trusted key",
		"[provenance.subjects] the subjects of provenance vexl-0.3.0.intoto.jsonl do not match the release's artifacts",
		"[evidence.present] linux-aarch64: there is no verifier evidence for this target",
		"[evidence.sanitised] linux-x86_64: evidence " + evx86 + " is not sanitised",
		"[evidence.store] linux-x86_64: the store of evidence " + evx86 + " is not intact",
		"[evidence.lanes] linux-x86_64: lane determinism is declared in release.toml but missing from the evidence",
		"[evidence.cases] linux-x86_64 semantic: case func/x is FAIL, not PASS",
		"[evidence.throughput] linux-x86_64 throughput: overall geomean 0.9100 is not above the minimum 1.00",
		"[evidence.overall] linux-x86_64 throughput: overall geomean 0.9100 is below the minimum 0.95",
		"[evidence.phase] linux-x86_64 throughput/fused: phase geomean 0.8500 is below the minimum 0.90",
		"[evidence.workload] linux-x86_64 throughput/axpy-f64: r = 0.7000 is below the minimum 0.80",
		"[evidence.workload_unusable] linux-x86_64 throughput/layernorm-f32: not usable: slot 1 candidate: crash",
		"[evidence.noise] linux-x86_64 throughput/gelu-f32: robust CV 20.00% is above the maximum 10.00%",
		"[channel.republish] vexl 0.3.0 is already published with different bytes; publish a new version",
		"[channel.downgrade] vexl 0.3.0 is lower than the newest published version 0.4.0; publish it anyway with `mkrelease publish --allow-downgrade`",
	}
	if got := messagesOf(d); !slices.Equal(got, want) {
		t.Errorf("denials:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	err = d.Err()
	var refused *RefusedError
	if !errors.As(err, &refused) || len(refused.Denials) != len(want) {
		t.Fatalf("Err() = %v, want a *RefusedError with %d denials", err, len(want))
	}
	if c, ok := err.(interface{ ExitCode() int }); !ok || c.ExitCode() != 1 {
		t.Errorf("Err() has no exit code 1")
	}
	var denial *Denial
	if !errors.As(err, &denial) || denial.Rule != RuleArtifactVerified {
		t.Errorf("errors.As(*Denial) = %+v, want the first denial", denial)
	}
	if !strings.Contains(err.Error(), "(16 reasons):\n  [artifact.verified] ") {
		t.Errorf("Err().Error() = %q", err.Error())
	}
}

func TestHiNull(t *testing.T) {
	const doc = `{"phase": "fused", "geomean": 7.9, "lo": 7.9, "hi": null, "n": 1, "bounded": false, "unusable": 0}`
	var b Board
	if err := json.Unmarshal([]byte(doc), &b); err != nil {
		t.Fatal(err)
	}
	if b.Hi != nil {
		t.Fatalf("hi: null decoded as %v", *b.Hi)
	}
	in := passing()
	crossover(&in).Phases[0].Hi = ptr(6.3) // only the phase decoded has hi null
	crossover(&in).Phases[1] = b
	out, err := in.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc2 struct {
		Evidence []struct {
			Lanes []struct {
				Crossover struct {
					Phases []map[string]any
				}
			}
		}
	}
	if err := json.Unmarshal(out, &doc2); err != nil {
		t.Fatal(err)
	}
	if hi, ok := doc2.Evidence[0].Lanes[1].Crossover.Phases[1]["hi"]; !ok || hi != nil {
		t.Errorf("JSON() has hi %v (present: %v), want null", hi, ok)
	}
	// The null reaches the policies: a user rule sees it.
	user := Module{Name: "unbounded.rego", Source: `package mkrelease.release

deny contains sprintf("[user.unbounded] %s", [b.phase]) if {
	some e in input.evidence
	some l in e.lanes
	some b in l.crossover.phases
	b.hi == null
}
`}
	d, err := Evaluate(t.Context(), in, []Module{user})
	if err != nil {
		t.Fatal(err)
	}
	want := []Denial{{Rule: "user.unbounded", Message: "[user.unbounded] fused", Policy: "unbounded.rego"}}
	if !slices.Equal(d.Denials, want) {
		t.Errorf("denials = %+v, want %+v", d.Denials, want)
	}
}

func TestInputJSON(t *testing.T) {
	out, err := (Input{}).JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"targets": []`, `"artifacts": []`, `"findings": []`, `"evidence": []`, `"published_versions": []`, `"unsigned_parts": []`} {
		if !strings.Contains(string(out), s) {
			t.Errorf("JSON() of an empty input lacks %s:\n%s", s, out)
		}
	}
	if !strings.HasSuffix(string(out), "}\n") {
		t.Errorf("JSON() does not end in a newline")
	}
	in := passing()
	crossover(&in).Overall.Geomean = 0 / zero()
	if _, err := in.JSON(); err == nil {
		t.Errorf("JSON() of a NaN geomean succeeded")
	}
	if _, err := Evaluate(t.Context(), in, nil); err == nil {
		t.Errorf("Evaluate of a NaN geomean succeeded")
	}
	// The round trip keeps every field.
	in = passing()
	b, err := in.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Input
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, err := back.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(b2) {
		t.Errorf("JSON round trip changed the input:\n%s\n%s", b, b2)
	}
}

func zero() float64 { return 0 }

func TestUserModule(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "extra.rego")
	src := `package mkrelease.release

import data.mkrelease.lib

# Every wheel must be for a released target.
deny contains msg if {
	some a in input.artifacts
	a.kind == "wheel"
	not a.target in lib.targets
	msg := sprintf("[user.wheel_target] %s is for %s, which is not released", [a.name, a.target])
}

deny contains msg if {
	input.parameters.min_workload < 0.85
	msg := sprintf("[user.min_workload] min_workload %v is below the house minimum 0.85", [input.parameters.min_workload])
}
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	mods, err := LoadFiles([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	e := newEvaluator(t, mods...)
	in := passing()
	in.Artifacts[0].Target = arm
	in.Artifacts[2].Verified = false
	d, err := e.Evaluate(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Denial{
		{Rule: RuleArtifactVerified, Message: "[artifact.verified] vexl-0.3.0-linux-x86_64.tar.gz (bundle, linux-x86_64) does not verify (no finding recorded)", Policy: "default/artifact.rego"},
		{Rule: "user.min_workload", Message: "[user.min_workload] min_workload 0.8 is below the house minimum 0.85", Policy: file},
		{Rule: "user.wheel_target", Message: "[user.wheel_target] " + wheel + " is for linux-aarch64, which is not released", Policy: file},
	}
	if !slices.Equal(d.Denials, want) {
		t.Errorf("denials:\n  %+v\nwant\n  %+v", d.Denials, want)
	}
	pols := d.Policies
	if len(pols) != len(Defaults())+1 || pols[len(pols)-1].Name != file || pols[len(pols)-1].SHA256 != mods[0].SHA256() {
		t.Errorf("Policies = %+v", pols)
	}

	in.Parameters.MinWorkload = 0.9
	in.Artifacts[0].Target = x86
	in.Artifacts[2].Verified = true
	if d, err := e.Evaluate(t.Context(), in); err != nil || !d.Allow {
		t.Errorf("Evaluate = %+v, %v; want allowed", d, err)
	}
}

// TestUserMessageWithoutRule: a user message need not carry a rule id;
// it sorts after those that do.
func TestUserMessageWithoutRule(t *testing.T) {
	user := Module{Name: "plain.rego", Source: "package mkrelease.release\n\ndeny contains \"no releases on Fridays\"\n\ndeny contains \"[z.custom] zzz\"\n"}
	in := passing()
	in.Channel.SameVersionPublished = true
	d, err := Evaluate(t.Context(), in, []Module{user})
	if err != nil {
		t.Fatal(err)
	}
	want := []Denial{
		{Rule: RuleChannelRepublish, Message: "[channel.republish] vexl 0.3.0 is already published with different bytes; publish a new version", Policy: "default/channel.rego"},
		{Rule: "z.custom", Message: "[z.custom] zzz", Policy: "plain.rego"},
		{Rule: "", Message: "no releases on Fridays", Policy: "plain.rego"},
	}
	if !slices.Equal(d.Denials, want) {
		t.Errorf("denials:\n  %+v\nwant\n  %+v", d.Denials, want)
	}
}

func TestBadModules(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // the error's text
	}{
		{"syntax error", "package mkrelease.release\n\ndeny contains msg if {\n\tmsg := \"x\"\n\tinput.a ==\n}\n",
			"policies do not compile (1 error):\n  policy bad.rego:6:1: rego_parse_error: unexpected } token"},
		{"rego v0 syntax", "package mkrelease.release\n\ndeny[msg] {\n\tmsg := \"x\"\n}\n",
			"policy bad.rego:3:"},
		{"unsafe variable", "package mkrelease.release\n\ndeny contains msg if {\n\tinput.a == 1\n}\n",
			"policies do not compile (1 error):\n  policy bad.rego:3:1: rego_unsafe_var_error: var msg is unsafe"},
		{"http.send", "package mkrelease.release\n\ndeny contains msg if {\n\tr := http.send({\"method\": \"GET\", \"url\": \"https://example.com\"})\n\tmsg := r.body\n}\n",
			"policy bad.rego:4:7: rego_type_error: undefined function http.send"},
		{"time.now_ns", "package mkrelease.release\n\ndeny contains \"late\" if time.now_ns() > 0\n",
			"policy bad.rego:3:25: rego_type_error: undefined function time.now_ns"},
		{"deny in another package", "package mycompany.release\n\ndeny contains \"x\" if true\n",
			"policy bad.rego:3:1: rego_compile_error: rule deny of data.mycompany.release is never evaluated: mkrelease reads data.mkrelease.release.deny (declare `package mkrelease.release`)"},
		{"deny of another type", "package mkrelease.release\n\ndeny := true\n",
			"policy bad.rego:3:1: rego_type_error: conflicting rules data.mkrelease.release.deny found"},
		{"empty", "", "policies do not compile (1 error):\n  policy bad.rego: rego_parse_error: empty module"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewEvaluator(t.Context(), []Module{{Name: "bad.rego", Source: tt.src}})
			if err == nil {
				t.Fatal("NewEvaluator succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewEvaluator: %v\nwant it to contain %q", err, tt.want)
			}
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.File != "bad.rego" {
				t.Errorf("errors.As(*PolicyError) = %+v", pe)
			}
			if c, ok := err.(interface{ ExitCode() int }); !ok || c.ExitCode() != 2 {
				t.Errorf("error has no exit code 2")
			}
		})
	}
}

func TestRuntimeError(t *testing.T) {
	user := Module{Name: "conflict.rego", Source: `package mkrelease.release

level := 1 if input.release.project == "vexl"

level := 2 if input.release.version == "0.3.0"

deny contains "[user.level] too high" if level > 5
`}
	_, err := Evaluate(t.Context(), passing(), []Module{user})
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.File != "conflict.rego" || pe.Line != 3 {
		t.Fatalf("Evaluate: %v (%+v); want a *PolicyError at conflict.rego:3", err, pe)
	}
	if want := "policy conflict.rego:3:1: evaluation failed: eval_conflict_error: complete rules must not produce multiple outputs"; err.Error() != want {
		t.Errorf("Evaluate: %v\nwant %s", err, want)
	}
}

func TestNonStringDenial(t *testing.T) {
	user := Module{Name: "obj.rego", Source: "package mkrelease.release\n\ndeny contains {\"rule\": \"x\"}\n"}
	_, err := Evaluate(t.Context(), passing(), []Module{user})
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.File != "obj.rego" {
		t.Fatalf("Evaluate: %v; want a *PolicyError naming obj.rego", err)
	}
}

func TestModuleNames(t *testing.T) {
	for _, mods := range [][]Module{
		{{Name: "", Source: "package x\n"}},
		{{Name: "a.rego", Source: "package x\n"}, {Name: "a.rego", Source: "package y\n"}},
		{{Name: "default/lib.rego", Source: "package x\n"}},
	} {
		if _, err := NewEvaluator(t.Context(), mods); err == nil {
			t.Errorf("NewEvaluator(%+v) succeeded", mods)
		}
	}
}

func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.rego", "package mkrelease.release\n")
	other := write("other.rego", "package mkrelease.lib.extra\n")
	notRego := write("policy.txt", "package x\n")
	big := write("big.rego", strings.Repeat("#", MaxPolicySize+1))
	if err := os.Mkdir(filepath.Join(dir, "dir.rego"), 0o755); err != nil {
		t.Fatal(err)
	}

	mods, err := LoadFiles([]string{good, other})
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 2 || mods[0].Name != good || mods[1].Source != "package mkrelease.lib.extra\n" {
		t.Errorf("LoadFiles = %+v", mods)
	}
	for _, tt := range []struct {
		paths []string
		want  string
	}{
		{[]string{notRego}, "policy " + notRego + ": not a Rego policy: the file name must end in .rego"},
		{[]string{filepath.Join(dir, "missing.rego")}, "policy " + filepath.Join(dir, "missing.rego") + ": cannot read it: no such file or directory"},
		{[]string{filepath.Join(dir, "dir.rego")}, "policy " + filepath.Join(dir, "dir.rego") + ": not a regular file (d---------)"},
		{[]string{big}, "policy " + big + ": larger than 1048576 bytes"},
		{[]string{good, filepath.Join(dir, ".", "good.rego")}, "policy " + filepath.Join(dir, ".", "good.rego") + ": given twice"},
	} {
		_, err := LoadFiles(tt.paths)
		var pe *PolicyError
		if err == nil || err.Error() != tt.want || !errors.As(err, &pe) || pe.ExitCode() != 2 {
			t.Errorf("LoadFiles(%q) = %v\nwant %s", tt.paths, err, tt.want)
		}
	}
}

// A release's policy files are read beneath the project and named as
// configured: one that is a symbolic link out of the project, or reached
// through a folder linked out, is refused naming the link; one linked
// inside is read.
func TestLoadProjectFiles(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "project")
	for name, src := range map[string]string{"project/policy/good.rego": "package mkrelease.release\n", "outside/evil.rego": "package mkrelease.release\n"} {
		p := filepath.Join(top, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"evil.rego": "../outside/evil.rego", "ext": "../outside", "alias.rego": "policy/good.rego"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skip("symbolic links:", err)
		}
	}
	mods, err := LoadProjectFiles(dir, []string{"policy/good.rego", "alias.rego"})
	if err != nil || len(mods) != 2 || mods[0].Name != "policy/good.rego" || mods[1].Name != "alias.rego" || mods[1].Source != "package mkrelease.release\n" {
		t.Fatalf("LoadProjectFiles = %+v, %v", mods, err)
	}
	for _, tt := range []struct {
		rels []string
		want string
	}{
		{[]string{"evil.rego"}, "policy evil.rego: cannot read it: evil.rego is a symbolic link to ../outside/evil.rego, outside the project: copy the file into the project in place of the link"},
		{[]string{"ext/evil.rego"}, "policy ext/evil.rego: cannot read it: ext/evil.rego: ext is a symbolic link to ../outside, outside the project"},
		{[]string{"missing.rego"}, "policy missing.rego: cannot read it: missing.rego: no such file"},
		{[]string{"policy/good.txt"}, "policy policy/good.txt: not a Rego policy"},
	} {
		_, err := LoadProjectFiles(dir, tt.rels)
		var pe *PolicyError
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.As(err, &pe) || pe.ExitCode() != 2 {
			t.Errorf("LoadProjectFiles(%q) = %v\nwant %s", tt.rels, err, tt.want)
		}
	}
}

func TestDefaults(t *testing.T) {
	var names []string
	for _, m := range Defaults() {
		names = append(names, m.Name)
		b, err := os.ReadFile(m.Name)
		if err != nil || string(b) != m.Source {
			t.Errorf("%s differs from the embedded default (%v)", m.Name, err)
		}
	}
	want := []string{"default/artifact.rego", "default/build.rego", "default/channel.rego", "default/evidence.rego", "default/input.rego",
		"default/lib.rego", "default/provenance.rego", "default/throughput.rego"}
	if !slices.Equal(names, want) {
		t.Errorf("Defaults() = %q, want %q", names, want)
	}
	e := newEvaluator(t)
	pols := e.Policies()
	if len(pols) != len(want) || pols[0].Name != want[0] || len(pols[0].SHA256) != 64 {
		t.Errorf("Policies() = %+v", pols)
	}
}

func TestCancelled(t *testing.T) {
	e := newEvaluator(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.Evaluate(ctx, passing()); !errors.Is(err, context.Canceled) {
		t.Errorf("Evaluate with a cancelled context: %v", err)
	}
}

// TestMalformedInput: an input that is not shaped like Input is refused
// by [policy.input], with every field at fault, never passed and never an
// evaluation error.
func TestMalformedInput(t *testing.T) {
	e := newEvaluator(t)
	good, err := passing().JSON()
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(good, &obj); err != nil {
		t.Fatal(err)
	}
	without := func(key string) []byte {
		m := map[string]any{}
		for k, v := range obj {
			if k != key {
				m[k] = v
			}
		}
		b, _ := json.Marshal(m)
		return b
	}
	for _, tc := range []struct {
		name  string
		input []byte
		want  string
	}{
		{"null", []byte(`null`), "[policy.input] the input is not a JSON object"},
		{"array", []byte(`[]`), "[policy.input] the input is not a JSON object"},
		{"number", []byte(`0`), "[policy.input] the input is not a JSON object"},
		{"string", []byte(`"release"`), "[policy.input] the input is not a JSON object"},
		{"empty object", []byte(`{}`), "[policy.input] (Root): release is required"},
		{"no parameters", without("parameters"), "[policy.input] (Root): parameters is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := e.evaluateJSON(t.Context(), tc.input)
			if err != nil {
				t.Fatalf("evaluateJSON: %v", err)
			}
			if d.Allow || !slices.Contains(messagesOf(d), tc.want) {
				t.Errorf("denials %q, want one %q", messagesOf(d), tc.want)
			}
		})
	}
}

// TestEveryFieldRemoved removes each field of a passing input, at every
// depth, in turn: each input is refused by [policy.input] (a lane without
// its figures by [evidence.lanes]) without an evaluation error.
func TestEveryFieldRemoved(t *testing.T) {
	e := newEvaluator(t)
	good, err := passing().JSON()
	if err != nil {
		t.Fatal(err)
	}
	var root any
	if err := json.Unmarshal(good, &root); err != nil {
		t.Fatal(err)
	}
	// paths lists every object field as a path of keys and indexes.
	var paths [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				p := append(slices.Clone(path), k)
				paths = append(paths, p)
				walk(c, p)
			}
		case []any:
			for i, c := range x {
				walk(c, append(slices.Clone(path), i))
			}
		}
	}
	walk(root, nil)
	if len(paths) < 50 {
		t.Fatalf("only %d fields", len(paths))
	}
	for _, p := range paths {
		var doc any
		json.Unmarshal(good, &doc)
		v := doc
		for _, step := range p[:len(p)-1] {
			switch s := step.(type) {
			case string:
				v = v.(map[string]any)[s]
			case int:
				v = v.([]any)[s]
			}
		}
		delete(v.(map[string]any), p[len(p)-1].(string))
		b, _ := json.Marshal(doc)
		d, err := e.evaluateJSON(t.Context(), b)
		if err != nil {
			t.Errorf("without %v: evaluation error %v", p, err)
			continue
		}
		want := RuleInput
		if k := p[len(p)-1]; k == "cases" || k == "crossover" {
			want = RuleEvidenceLanes // optional in the schema: a lane carries the one of its kind
		}
		if d.Allow || !slices.ContainsFunc(d.Denials, func(x Denial) bool { return x.Rule == want }) {
			t.Errorf("without %v: denials %q, want a [%s] one", p, messagesOf(d), want)
		}
	}
}
