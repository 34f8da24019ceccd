package publish

import (
	"context"
	"crypto"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/evidencetest"
	"github.com/mkrelease/mkrelease/policies"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/wheel"
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
		"vexl-0.3.0.cdx.json":                                         "cyclonedx",
		"vexl-0.3.0.cdx.json.sha256":                                  "sidecar",
		"vexl-0.3.0.intoto.jsonl":                                     "provenance",
		"vexl-0.3.0.sigstore.json":                                    "provenance",
		"SHA256SUMS":                                                  "checksums",
		"manifest.json":                                               "manifest",
		"artifacts.json":                                              "artifacts",
		"artifacts.json.sha256":                                       "sidecar",
		"RELEASE_NOTES.md":                                            "notes",
		"something.bin":                                               "other",
	} {
		if got := kind(dist.NamesOf("vexl", "0.3.0"), name); got != want {
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

func TestSandboxFacts(t *testing.T) {
	stmt := func(internal string) []byte {
		return []byte(`{"_type":"https://in-toto.io/Statement/v1","predicate":{"buildDefinition":{"internalParameters":` + internal + `}}}`)
	}
	for _, tc := range []struct {
		name      string
		statement []byte
		want      policies.Sandbox
	}{
		{"isolated", stmt(`{"source_date_epoch":1,"sandbox":{"isolated":true,"sandbox":"bubblewrap 0.8.0","namespaces":["user","mount","pid","ipc","uts","net"],"level":"sandbox"}}`),
			policies.Sandbox{Recorded: true, Isolated: true, Name: "bubblewrap 0.8.0", Namespaces: []string{"user", "mount", "pid", "ipc", "uts", "net"}}},
		{"not isolated", stmt(`{"sandbox":{"isolated":false,"sandbox":"","namespaces":["net"],"reason":"bubblewrap is not installed"}}`),
			policies.Sandbox{Recorded: true, Namespaces: []string{"net"}, Reason: "bubblewrap is not installed"}},
		{"no sandbox record", stmt(`{"source_date_epoch":1}`), policies.Sandbox{}},
		{"no internal parameters", []byte(`{"predicate":{"buildDefinition":{}}}`), policies.Sandbox{}},
		{"null record", stmt(`{"sandbox":null}`), policies.Sandbox{}},
		{"record without isolated", stmt(`{"sandbox":{"sandbox":"bubblewrap 0.8.0"}}`),
			policies.Sandbox{Recorded: true, Reason: `the provenance's buildDefinition.internalParameters.sandbox has no "isolated"`}},
		{"isolated is not a bool", stmt(`{"sandbox":{"isolated":"yes"}}`),
			policies.Sandbox{Recorded: true, Reason: "the provenance's buildDefinition.internalParameters.sandbox is malformed (json: cannot unmarshal string into Go struct field .isolated of type bool)"}},
		{"not JSON", []byte(`{`), policies.Sandbox{Reason: "the provenance cannot be read: unexpected end of JSON input"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sandboxFacts(tc.statement); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("sandboxFacts =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

// writeProvenance signs a provenance statement whose internal parameters
// record sandbox (none when nil) into dist, and returns the key that
// verifies it.
func writeProvenance(t *testing.T, dist string, sandbox map[string]any) crypto.PublicKey {
	t.Helper()
	signer, _, err := provenance.DevKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]any{"source_date_epoch": 1700000000}
	if sandbox != nil {
		internal["sandbox"] = sandbox
	}
	p := provenance.Provenance{
		Subjects:           []provenance.Subject{{Name: "vexl-0.3.0-linux-x86_64.tar.gz", SHA256: strings.Repeat("a", 64)}},
		InternalParameters: internal,
		BuilderID:          "https://example.org/builder",
	}
	st, err := p.Statement()
	if err != nil {
		t.Fatal(err)
	}
	env, _, err := provenance.Sign(t.Context(), signer, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, "vexl-0.3.0.intoto.jsonl"), env, 0o644); err != nil {
		t.Fatal(err)
	}
	// A channel takes a release with a wheel. The folder is no whole
	// release (its audit denies), which is of no matter here.
	fn, err := wheel.NewFilename("vexl", "0.3.0", "py3", "none", "any")
	if err != nil {
		t.Fatal(err)
	}
	md := &wheel.Metadata{}
	md.Add("Metadata-Version", "2.1")
	md.Add("Name", "vexl")
	md.Add("Version", "0.3.0")
	meta, err := md.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wheel.Write(t.Context(), &wheel.Contents{
		Name:    fn,
		Members: []wheel.Member{{Path: "vexl/__init__.py", Data: []byte("\n"), Mode: 0o644}},
		DistInfo: []wheel.Member{
			{Path: "METADATA", Data: meta, Mode: 0o644},
			{Path: "WHEEL", Data: []byte("Wheel-Version: 1.0\nGenerator: mkrelease-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"), Mode: 0o644},
		},
		Epoch: 1793491200,
	}, dist); err != nil {
		t.Fatal(err)
	}
	return signer.Public()
}

// TestRunInput: the policy input Run builds carries, for every target,
// the lanes release.toml declares, and, from the signed provenance, how
// the build steps ran, with [build] allow_unsandboxed as a parameter; the
// default policy judges them.
func TestRunInput(t *testing.T) {
	const sandboxDenial = "[build.sandboxed] the build steps ran without a sandbox (bubblewrap is not installed); rebuild where user namespaces are allowed, or set [build] allow_unsandboxed = true"
	isolated := map[string]any{"isolated": true, "sandbox": "bubblewrap 0.8.0", "namespaces": []string{"user", "mount", "pid", "ipc", "uts", "net"}, "level": "sandbox"}
	bare := map[string]any{"isolated": false, "sandbox": "", "namespaces": []string{"net"}, "level": "network", "reason": "bubblewrap is not installed"}
	for _, tc := range []struct {
		name    string
		sandbox map[string]any
		allow   bool
		want    policies.Sandbox
		denial  string // a [build.sandboxed] denial expected, or ""
	}{
		{"sandboxed", isolated, false,
			policies.Sandbox{Recorded: true, Isolated: true, Name: "bubblewrap 0.8.0", Namespaces: []string{"user", "mount", "pid", "ipc", "uts", "net"}}, ""},
		{"not sandboxed", bare, false,
			policies.Sandbox{Recorded: true, Namespaces: []string{"net"}, Reason: "bubblewrap is not installed"}, sandboxDenial},
		{"not sandboxed, allowed", bare, true,
			policies.Sandbox{Recorded: true, Namespaces: []string{"net"}, Reason: "bubblewrap is not installed"}, ""},
		{"not recorded", nil, false, policies.Sandbox{},
			"[build.sandboxed] the build steps ran without a sandbox (the provenance does not record a sandbox); rebuild where user namespaces are allowed, or set [build] allow_unsandboxed = true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dist := t.TempDir()
			key := writeProvenance(t, dist, tc.sandbox)
			cfg := &config.Config{
				File:    "release.toml",
				Project: config.Project{NormalizedName: "vexl", Version: "0.3.0"},
				Targets: []config.Target{{Name: "linux-x86_64"}, {Name: "linux-aarch64"}},
				Build:   config.Build{AllowUnsandboxed: tc.allow},
				Evidence: config.Evidence{Lanes: []config.Lane{
					{Name: "semantic", Kind: config.LaneCases}, {Name: "throughput", Kind: config.LaneCrossover},
				}},
			}
			res, err := Run(t.Context(), Options{Config: cfg, Dist: dist, To: filepath.Join(t.TempDir(), "channel"),
				TrustedKeys: []crypto.PublicKey{key}, DryRun: true})
			var refused *policies.RefusedError
			if !errors.As(err, &refused) || res == nil {
				t.Fatalf("Run = %v, want a refusal (the folder holds no release)", err)
			}
			in := res.Input
			wantLanes := []policies.DeclaredLane{{Name: "semantic", Kind: "cases"}, {Name: "throughput", Kind: "crossover"}}
			if len(in.Evidence) != 2 {
				t.Fatalf("evidence entries %+v, want one per target", in.Evidence)
			}
			for _, e := range in.Evidence {
				if !reflect.DeepEqual(e.DeclaredLanes, wantLanes) {
					t.Errorf("%s: declared lanes %+v, want %+v", e.Target, e.DeclaredLanes, wantLanes)
				}
			}
			if in.Parameters.AllowUnsandboxed != tc.allow {
				t.Errorf("allow_unsandboxed = %v, want %v", in.Parameters.AllowUnsandboxed, tc.allow)
			}
			if !in.Provenance.SignedByTrustedKey || !reflect.DeepEqual(in.Provenance.Sandbox, tc.want) {
				t.Errorf("provenance %+v, want signed with sandbox %+v", in.Provenance, tc.want)
			}
			var got []string
			for _, d := range res.Decision.Denials {
				if d.Rule == policies.RuleBuildSandboxed {
					got = append(got, d.Message)
				}
			}
			if want := []string{tc.denial}; tc.denial == "" && len(got) > 0 || tc.denial != "" && !reflect.DeepEqual(got, want) {
				t.Errorf("[build.sandboxed] denials %q, want %q", got, tc.denial)
			}
		})
	}
}

// An untrusted provenance says nothing about the sandbox: only the
// provenance rules refuse it.
func TestRunUntrustedProvenanceSandbox(t *testing.T) {
	dist := t.TempDir()
	writeProvenance(t, dist, map[string]any{"isolated": true, "sandbox": "bubblewrap 0.8.0", "namespaces": []string{"user"}})
	other := writeProvenance(t, t.TempDir(), nil) // a key that did not sign dist's provenance
	cfg := &config.Config{File: "release.toml", Project: config.Project{NormalizedName: "vexl", Version: "0.3.0"},
		Targets: []config.Target{{Name: "linux-x86_64"}}}
	res, err := Run(t.Context(), Options{Config: cfg, Dist: dist, To: filepath.Join(t.TempDir(), "channel"),
		TrustedKeys: []crypto.PublicKey{other}, DryRun: true})
	if res == nil || err == nil {
		t.Fatalf("Run = %v, want a refusal", err)
	}
	if res.Input.Provenance.SignedByTrustedKey || !reflect.DeepEqual(res.Input.Provenance.Sandbox, policies.Sandbox{}) {
		t.Errorf("provenance %+v, want untrusted with no sandbox facts", res.Input.Provenance)
	}
}

// fakeDestination records what publish asks of a Destination.
type fakeDestination struct {
	empty     string // an empty channel's folder, to plan against
	exists    bool
	planned   []channel.Release
	published int
	// hashed are the digests of the planned assets, by path, taken while
	// planning: files publish staged are gone once Run returns.
	hashed map[string]channel.Asset
	err    error
}

func (f *fakeDestination) Plan(ctx context.Context, r channel.Release) (*channel.Plan, error) {
	f.planned = append(f.planned, r)
	f.hashed = map[string]channel.Asset{}
	for _, p := range r.Assets {
		sha, size, err := checksum.File(p)
		if err != nil {
			f.err = err
			continue
		}
		f.hashed[p] = channel.Asset{Name: filepath.Base(p), SHA256: sha, Size: size}
	}
	ch, err := channel.Open(f.empty)
	if err != nil {
		return nil, err
	}
	return ch.Plan(ctx, r)
}

func (f *fakeDestination) Exists() bool { return f.exists }

func (f *fakeDestination) Publish(context.Context, channel.Release) (*channel.Result, error) {
	f.published++
	return &channel.Result{}, nil
}

// Publish plans through its Destination, handing it the digests the folder
// was loaded with, reads whether it exists from it, and on a dry run (or a
// refusal) never publishes there.
func TestRunThroughADestination(t *testing.T) {
	dist := t.TempDir()
	key := writeProvenance(t, dist, nil)
	cfg := &config.Config{File: "release.toml", Project: config.Project{NormalizedName: "vexl", Version: "0.3.0"},
		Targets: []config.Target{{Name: "linux-x86_64"}}}
	dest := &fakeDestination{empty: filepath.Join(t.TempDir(), "ch"), exists: true}
	res, err := Run(t.Context(), Options{Config: cfg, Dist: dist, To: "remote://example", Destination: dest,
		TrustedKeys: []crypto.PublicKey{key}, DryRun: true})
	if res == nil {
		t.Fatalf("Run: %v", err)
	}
	if len(dest.planned) != 1 || dest.published != 0 {
		t.Fatalf("planned %d times, published %d times; want one plan and no publish", len(dest.planned), dest.published)
	}
	r := dest.planned[0]
	if len(r.Assets) == 0 {
		t.Fatal("no assets planned")
	}
	if dest.err != nil {
		t.Fatal(dest.err)
	}
	for _, p := range r.Assets {
		h := dest.hashed[p]
		if k, ok := r.Known[p]; !ok || k.SHA256 != h.SHA256 || k.Size != h.Size {
			t.Errorf("%s: known %+v, the file has %s (%d bytes)", p, k, h.SHA256, h.Size)
		}
	}
	if !res.Input.Channel.Exists {
		t.Error("the policy input does not say the destination exists")
	}
}

// Evidence whose target's bundle is not in the folder is compared with no
// wheels, never with the wheels beside it: its identity fails once, naming
// the bundle, and the policy refuses it as evidence for other wheels.
func TestRunEvidenceWithoutItsBundle(t *testing.T) {
	dir := t.TempDir()
	key := writeProvenance(t, dir, nil)
	whl := filepath.Join(dir, "vexl-0.3.0-py3-none-any.whl")
	sha, _, err := checksum.File(whl)
	if err != nil {
		t.Fatal(err)
	}
	evidencetest.Write(t, dir, "vexl", "0.3.0", "linux-x86_64", []store.FileDigest{{Name: filepath.Base(whl), SHA256: sha}})
	cfg := &config.Config{File: "release.toml", Project: config.Project{NormalizedName: "vexl", Version: "0.3.0"},
		Targets: []config.Target{{Name: "linux-x86_64"}}}
	res, err := Run(t.Context(), Options{Config: cfg, Dist: dir, To: filepath.Join(t.TempDir(), "channel"),
		TrustedKeys: []crypto.PublicKey{key}, DryRun: true})
	if res == nil || err == nil {
		t.Fatalf("Run = %v, want a refusal", err)
	}
	e := res.Input.Evidence[0]
	var identity []policies.EvidenceFinding
	for _, f := range e.Findings {
		if f.Check == "identity" {
			identity = append(identity, f)
		}
	}
	want := []policies.EvidenceFinding{{Check: "identity", File: "vexl-0.3.0-linux-x86_64.tar.gz",
		Message: "the wheels of the target's bundle are not known (it is not beside the evidence, or does not check out), so nothing shows which wheels the evidence is for: check the evidence beside its bundle"}}
	if !e.Present || e.WheelsMatch || !reflect.DeepEqual(identity, want) {
		t.Errorf("evidence present %v, wheels match %v, identity findings %+v; want present, not matching, %+v", e.Present, e.WheelsMatch, identity, want)
	}
	if !slices.ContainsFunc(res.Decision.Denials, func(d policies.Denial) bool { return d.Rule == policies.RuleEvidenceWheels }) {
		t.Errorf("denials %+v, want an [%s] one", res.Decision.Denials, policies.RuleEvidenceWheels)
	}
}
