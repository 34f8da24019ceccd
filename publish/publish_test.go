package publish

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/policies"
)

func f(x float64) *float64 { return &x }

func TestParameters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     config.Policy
		allow bool
		want  policies.Parameters
	}{
		{"defaults", config.Policy{}, false, policies.DefaultParameters()},
		{"overrides", config.Policy{MinThroughputGeomean: f(1.05), MinOverall: f(1), MinPhase: f(0.5), MinWorkload: f(0.25), MaxRobustCV: f(0.2)}, true,
			policies.Parameters{MinThroughputGeomean: 1.05, MinOverall: 1, MinPhase: 0.5, MinWorkload: 0.25, MaxRobustCV: 0.2, AllowDowngrade: true}},
		{"zero is a value, not unset", config.Policy{MinWorkload: f(0)}, false,
			func() policies.Parameters { p := policies.DefaultParameters(); p.MinWorkload = 0; return p }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parameters(tc.p, tc.allow); got != tc.want {
				t.Errorf("parameters = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestKind(t *testing.T) {
	for name, want := range map[string]string{
		"vexl_plugin-0.3.0-py3-none-manylinux_2_34_x86_64.whl":        "wheel",
		"vexl_plugin-0.3.0-py3-none-manylinux_2_34_x86_64.whl.sha256": "sidecar",
		"vexl-0.3.0-linux-x86_64.tar.gz":                              "bundle",
		"vexl-0.3.0-verifier-evidence-linux-x86_64.tar.gz":            "",
		"vexl-0.3.0-verifier-evidence-linux-x86_64.intoto.jsonl":      "",
		"vexl-0.3.0-verifier-evidence-linux-x86_64.tar.gz.sha256":     "",
		"vexl-0.3.0.spdx.json":                                        "sbom",
		"vexl-0.3.0.intoto.jsonl":                                     "provenance",
		"vexl-0.3.0.sigstore.json":                                    "provenance",
		"SHA256SUMS":                                                  "checksums",
		"manifest.json":                                               "manifest",
		"RELEASE_NOTES.md":                                            "notes",
		"something.bin":                                               "other",
	} {
		if got := kind(name); got != want {
			t.Errorf("kind(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestPolicyDigest(t *testing.T) {
	a := []policies.PolicyDigest{{Name: "default/a.rego", SHA256: "11"}, {Name: "default/b.rego", SHA256: "22"}}
	b := []policies.PolicyDigest{{Name: "default/a.rego", SHA256: "11"}, {Name: "default/b.rego", SHA256: "23"}}
	c := a[:1]
	da, db, dc := PolicyDigest(a), PolicyDigest(a), PolicyDigest(c)
	if da != db || len(da) != 64 {
		t.Fatalf("PolicyDigest not stable: %s %s", da, db)
	}
	if PolicyDigest(b) == da || dc == da {
		t.Errorf("PolicyDigest does not change with a module's digest or the set of modules")
	}
}

func TestLanes(t *testing.T) {
	s := &runner.Summary{Lanes: []runner.LaneSummary{
		{Name: "semantic", Kind: "cases", Cases: &stats.CaseSummary{
			Counts:  stats.Counts{Total: 4, Pass: 2, Fail: 1, Skip: 1},
			Failing: []stats.CaseRef{{Lane: "semantic", ID: "log/subnormal", Status: "FAIL"}},
		}},
		{Name: "throughput", Kind: "crossover", Crossover: &stats.Summary{
			Overall: stats.Board{N: 1, Geomean: 2, Lo: 0, Hi: math.Inf(1)},
			Phases:  []stats.Board{{Phase: "p", N: 2, Geomean: 2, Lo: 1.5, Hi: 2.5, Bounded: true}},
			Workloads: []stats.WorkloadSummary{
				{Workload: "w1", Phase: "p", Usable: true, R: 2, MaxRobustCV: 0.03},
				{Workload: "w2", Phase: "p", Failures: []stats.Failure{{Slot: 1, Role: "candidate", Reason: "crash"}}},
			},
			Unusable: 1,
		}},
	}}
	hi := 2.5
	want := []policies.Lane{
		{Name: "semantic", Kind: "cases", Cases: &policies.Cases{Total: 4, Pass: 2, Fail: 1, Skip: 1,
			Failing: []policies.FailingCase{{ID: "log/subnormal", Status: "FAIL"}}}},
		{Name: "throughput", Kind: "crossover", Crossover: &policies.Crossover{
			Overall: policies.Board{N: 1, Geomean: 2},
			Phases:  []policies.Board{{Phase: "p", N: 2, Geomean: 2, Lo: 1.5, Hi: &hi, Bounded: true}},
			Workloads: []policies.Workload{
				{Workload: "w1", Phase: "p", R: 2, Usable: true, MaxRobustCV: 0.03},
				{Workload: "w2", Phase: "p", Failures: []string{"slot 1 candidate: crash"}},
			},
		}},
	}
	if got := lanes(s); !reflect.DeepEqual(got, want) {
		t.Errorf("lanes:\n got %+v\nwant %+v", got, want)
	}
}

func TestTargetsWithEvidence(t *testing.T) {
	dist := t.TempDir()
	cfg := &config.Config{
		Project: config.Project{NormalizedName: "vexl", Version: "0.3.0"},
		Targets: []config.Target{{Name: "linux-x86_64"}, {Name: "linux-aarch64"}, {Name: "macos-arm64"}},
	}
	for _, name := range []string{"vexl-0.3.0-verifier-evidence-linux-aarch64.tar.gz", "vexl-0.3.0-verifier-evidence-macos-arm64.intoto.jsonl"} {
		if err := os.WriteFile(filepath.Join(dist, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	with, without := TargetsWithEvidence(cfg, dist)
	if !reflect.DeepEqual(with, []string{"linux-aarch64"}) || !reflect.DeepEqual(without, []string{"linux-x86_64", "macos-arm64"}) {
		t.Errorf("with %v, without %v", with, without)
	}
}
