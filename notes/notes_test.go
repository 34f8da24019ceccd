package notes

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/evidence/store"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const (
	pluginWheel   = "vexl_plugin-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
	compilerWheel = "vexl_compiler-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
	depWheel      = "numpy_stub-1.0-py3-none-any.whl"
)

// records are the raw records of a fixture evidence run: a cases lane and
// a crossover lane of two phases.
type records struct {
	lanes []config.Lane
	cases []evidence.Case
	ms    []evidence.Measurement
	run   store.Run
}

func fixture() *records {
	r := &records{
		lanes: []config.Lane{
			{Name: "semantic", Kind: config.LaneCases},
			{Name: "throughput", Kind: config.LaneCrossover, Steps: 6, Warmups: 1, Workloads: []config.Workload{
				{Name: "axpy-f64", Phase: "vector"}, {Name: "dot-f64", Phase: "vector"}, {Name: "log-f64", Phase: "scalar"}, {Name: "exp-f64", Phase: "scalar"},
			}},
		},
		run: store.Run{ID: "run-7", Target: "linux-x86_64", SourcesTreeHash: strings.Repeat("d", 64), Interpreter: "CPython 3.12.4",
			Wheels: []store.FileDigest{
				{Name: pluginWheel, SHA256: strings.Repeat("a", 64)},
				{Name: compilerWheel, SHA256: strings.Repeat("b", 64)},
				{Name: depWheel, SHA256: strings.Repeat("c", 64)},
			},
			Lanes: []string{"semantic", "throughput"}, Protocol: store.Protocol{Steps: 6, WarmUps: 1}},
	}
	for _, id := range []string{"add/i64", "div/f64", "log/subnormal-f64", "mul/f64"} {
		r.cases = append(r.cases, evidence.Case{Lane: "semantic", ID: id, Status: evidence.StatusPass, Duration: 0.1})
	}
	// Reference steps per workload; the candidate takes 10 ms a step, with
	// a little spread so that the robust CVs differ.
	ref := map[string]float64{"axpy-f64": 0.0110, "dot-f64": 0.0105, "log-f64": 0.0102, "exp-f64": 0.0121}
	for i, w := range r.lanes[1].Workloads {
		for slot, role := range []string{evidence.RoleCandidate, evidence.RoleReference, evidence.RoleReference, evidence.RoleCandidate} {
			step := 0.0100
			if role == evidence.RoleReference {
				step = ref[w.Name]
			}
			d := step * 0.01 * float64(i+1)
			r.ms = append(r.ms, evidence.Measurement{Lane: "throughput", Workload: w.Name, Phase: w.Phase, Role: role, Slot: slot + 1, Attempt: 1,
				Outcome: evidence.OutcomeOK, Steps: []float64{1, step, step + d, step - d, step, step + 2*d}, ResultSHA256: strings.Repeat("e", 64)})
		}
	}
	return r
}

// report is what the audit's check of the fixture's evidence gives:
// the manifest's identity and the summary recomputed from the records.
func (r *records) report(t *testing.T) *runner.Report {
	t.Helper()
	sum, err := runner.Recompute(r.lanes, r.cases, r.ms)
	if err != nil {
		t.Fatal(err)
	}
	ident, err := r.run.CanonicalIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return &runner.Report{Manifest: &runner.Manifest{Schema: runner.ManifestSchema, RunID: r.run.ID, Target: r.run.Target, Identity: ident}, Summary: sum}
}

const changelog = "## 0.3.0 — 2026-11-01\n\n### Added\n- A fused fast path.\n\n### Fixed\n- `log` of a subnormal float64.\n"

func release(rep *runner.Report) Release {
	return Release{Project: "vexl", Version: "0.3.0", Changelog: []byte(changelog), Targets: []Target{
		{Name: "linux-x86_64", Evidence: "vexl-0.3.0-verifier-evidence-linux-x86_64.tar.gz", Report: rep},
	}}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("notes differ from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestGolden: the whole notes of a fixture release, byte for byte, twice
// (the same facts give the same bytes).
func TestGolden(t *testing.T) {
	rep := fixture().report(t)
	got := Markdown(release(rep))
	if again := Markdown(release(fixture().report(t))); !bytes.Equal(got, again) {
		t.Fatal("Markdown is not deterministic")
	}
	golden(t, "release_notes.golden", got)
}

// TestGoldenNoChangelog: without the folder's notes the Validation section
// follows a heading naming the release; a target without evidence says so.
func TestGoldenNoChangelog(t *testing.T) {
	r := release(fixture().report(t))
	r.Changelog = nil
	r.Targets = append(r.Targets, Target{Name: "macos-arm64", Evidence: "vexl-0.3.0-verifier-evidence-macos-arm64.tar.gz"})
	golden(t, "no_changelog.golden", Markdown(r))
}

// lineWith returns the line of notes that holds marker.
func lineWith(t *testing.T, notes []byte, marker string) string {
	t.Helper()
	for l := range strings.SplitSeq(string(notes), "\n") {
		if strings.Contains(l, marker) {
			return l
		}
	}
	t.Fatalf("no line holds %q in\n%s", marker, notes)
	return ""
}

// TestChangedRecord: changing one raw record changes exactly the figures
// it feeds, and nothing else of the notes.
func TestChangedRecord(t *testing.T) {
	base := Markdown(release(fixture().report(t)))
	for _, tc := range []struct {
		name   string
		change func(r *records)
		// lines are the markers of the lines that must change; every
		// other line must stay.
		lines []string
		want  []string // substrings the changed notes must hold
	}{
		{"a step time of one reference worker", func(r *records) {
			for i, m := range r.ms {
				if m.Workload == "log-f64" && m.Slot == 2 {
					r.ms[i].Steps = []float64{1, 0.0150, 0.0150, 0.0150, 0.0150, 0.0150}
				}
			}
		}, []string{"| throughput | overall |", "| throughput | phase scalar |"}, nil},
		{"a noisy candidate worker", func(r *records) {
			r.ms[0].Steps = []float64{1, 0.0100, 0.0130, 0.0070, 0.0100, 0.0120}
		}, []string{"| throughput | overall |", "| throughput | phase vector |", "Worst robust CV"}, []string{"(throughput/axpy-f64)."}},
		{"a case that fails", func(r *records) { r.cases[2].Status = evidence.StatusFail },
			[]string{"| semantic | cases |"}, []string{"| semantic | cases | | 3/4 PASS, 1 FAIL (log/subnormal-f64 FAIL) |"}},
		{"the interpreter", func(r *records) { r.run.Interpreter = "CPython 3.13.1" },
			[]string{"- Interpreter:"}, []string{"- Interpreter: CPython 3.13.1\n"}},
		{"a wheel's digest", func(r *records) { r.run.Wheels[0].SHA256 = strings.Repeat("f", 64) },
			[]string{pluginWheel}, []string{"- `" + strings.Repeat("f", 64) + "  " + pluginWheel + "`\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fixture()
			tc.change(r)
			got := Markdown(release(r.report(t)))
			for _, m := range tc.lines {
				if before, after := lineWith(t, base, m), lineWith(t, got, m); before == after {
					t.Errorf("line %q did not change", before)
				}
			}
			for _, w := range tc.want {
				if !bytes.Contains(got, []byte(w)) {
					t.Errorf("the notes do not hold %q:\n%s", w, got)
				}
			}
			bl, gl := strings.Split(string(base), "\n"), strings.Split(string(got), "\n")
			if len(bl) != len(gl) {
				t.Fatalf("%d lines, were %d", len(gl), len(bl))
			}
			for i := range bl {
				changed := bl[i] != gl[i]
				expected := false
				for _, m := range tc.lines {
					expected = expected || strings.Contains(bl[i], m)
				}
				if changed && !expected {
					t.Errorf("line %d changed too: %q -> %q", i+1, bl[i], gl[i])
				}
			}
		})
	}
}

// TestChangedStepFigure: the figure quoted is the recomputed one: halving
// every candidate step of one workload doubles its r, which moves the
// phase board to the geometric mean the records imply.
func TestChangedStepFigure(t *testing.T) {
	r := fixture()
	for i, m := range r.ms {
		if m.Workload == "exp-f64" && m.Role == evidence.RoleCandidate {
			for j := range m.Steps {
				r.ms[i].Steps[j] /= 2
			}
		}
	}
	rep := r.report(t)
	lane, _ := rep.Summary.Lane("throughput")
	var phase stats.Board
	for _, p := range lane.Crossover.Phases {
		if p.Phase == "scalar" {
			phase = p
		}
	}
	base, _ := fixture().report(t).Summary.Lane("throughput")
	var before stats.Board
	for _, p := range base.Crossover.Phases {
		if p.Phase == "scalar" {
			before = p
		}
	}
	if want := before.Geomean * math.Sqrt2; math.Abs(phase.Geomean-want) > 1e-9 {
		t.Fatalf("scalar geomean %v, want %v", phase.Geomean, want)
	}
	line := lineWith(t, Markdown(release(rep)), "| throughput | phase scalar |")
	if want := "| throughput | phase scalar | 2 | " + Board(phase) + " |"; line != want || !strings.Contains(line, "r = "+R(phase.Geomean)) {
		t.Errorf("line %q, want %q", line, want)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"r rounds to 4 decimals", R(1.03438263), "1.0344"},
		{"r of exactly 1", R(1), "1.0000"},
		{"percent", Percent(0.029651), "2.97%"},
		{"percent of 0", Percent(0), "0.00%"},
		{"bounded board", Board(stats.Board{N: 3, Geomean: 1.0343826354, Lo: 1.01, Hi: 1.0588, Bounded: true}), "r = 1.0344 (95 % interval 1.0100–1.0588)"},
		{"one workload", Board(stats.Board{N: 1, Geomean: 1.2, Hi: math.Inf(1)}), "r = 1.2000 (95 % interval unbounded)"},
		{"no workload", Board(stats.Board{}), "no usable workload"},
		{"all pass", Cases(&stats.CaseSummary{Counts: stats.Counts{Total: 319, Pass: 319}}), "319/319 PASS"},
		{"mixed", Cases(&stats.CaseSummary{Counts: stats.Counts{Total: 6, Pass: 2, Fail: 1, Error: 1, Skip: 1, Invalid: 1},
			Failing: []stats.CaseRef{{ID: "a", Status: "FAIL"}, {ID: "b", Status: "ERROR"}}}), "2/6 PASS, 1 FAIL, 1 ERROR, 1 SKIP, 1 invalid (a FAIL, b ERROR)"},
		{"platform of pure wheels", platform("t", store.Run{Wheels: []store.FileDigest{{Name: depWheel}}}), "t (pure Python wheels)"},
		{"platform tags", platform("t", store.Run{Target: "linux-x86_64", Wheels: []store.FileDigest{{Name: pluginWheel}, {Name: depWheel}, {Name: compilerWheel}}}),
			"linux-x86_64 (manylinux2014_x86_64, manylinux_2_17_x86_64)"},
		{"heading level", strings.Repeat("#", headingLevel("### 1.0\ntext")), "###"},
		{"no heading", strings.Repeat("#", headingLevel("1.0\n")), "#"},
		{"not a heading", strings.Repeat("#", headingLevel("#hashtag")), "#"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

// Markdown reads the report, never writes it.
func TestMarkdownLeavesTheReport(t *testing.T) {
	rep := fixture().report(t)
	lane, _ := rep.Summary.Lane("throughput")
	before := append([]stats.WorkloadSummary(nil), lane.Crossover.Workloads...)
	Markdown(release(rep))
	for i, w := range lane.Crossover.Workloads {
		if w.Lane != before[i].Lane {
			t.Errorf("workload %d: lane %q, was %q", i, w.Lane, before[i].Lane)
		}
	}
}
