package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/policies"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestEvidenceOf: the workers and traces are the raw records (every
// attempt, by slot then attempt), the figures those stats.Workload
// recomputes from them, and the findings are the check's.
func TestEvidenceOf(t *testing.T) {
	checked := fixtureChecked(t)
	e := EvidenceOf("linux-x86_64", "e.tar.gz", checked, DefaultBounds())
	if !e.Present || e.OK || len(e.Findings) != 1 || !strings.HasPrefix(e.Findings[0], "aggregates: throughput/summary.json: ") {
		t.Fatalf("present %v, ok %v, findings %q", e.Present, e.OK, e.Findings)
	}
	if len(e.Lanes) != 2 || e.Lanes[0].Cases == nil || e.Lanes[1].Crossover == nil {
		t.Fatalf("lanes %+v", e.Lanes)
	}
	var ids []string
	for _, c := range e.Lanes[0].Cases.Results {
		ids = append(ids, c.ID+" "+c.Status)
	}
	if want := []string{"add/i32 PASS", "div/zero SKIP", "log/subnormal FAIL", "mul/f64 PASS"}; !slices.Equal(ids, want) {
		t.Errorf("cases %q, want %q", ids, want)
	}
	x := e.Lanes[1].Crossover
	var names []string
	for _, w := range x.Workloads {
		names = append(names, w.Name)
	}
	if want := []string{"attention", "conv", "matmul"}; !slices.Equal(names, want) {
		t.Fatalf("workloads %q, want %q", names, want)
	}
	att := x.Workloads[0]
	var order []string
	for _, k := range att.Workers {
		order = append(order, k.Role[:1]+string(rune('0'+k.Slot))+"."+string(rune('0'+k.Attempt))+" "+k.Outcome)
	}
	if want := []string{"c1.1 ok", "r2.1 startup-failure", "r2.2 ok", "r3.1 ok", "c4.1 ok"}; !slices.Equal(order, want) {
		t.Errorf("attention workers %q, want %q", order, want)
	}
	if att.Workers[1].Chosen || !att.Workers[2].Chosen {
		t.Errorf("the retried reference's attempt 2 is the chosen one: %+v", att.Workers[1:3])
	}
	byWorkload := map[string][]float64{}
	for _, m := range checked.Measurements {
		if m.Workload == "attention" && m.Slot == 4 {
			byWorkload["c4"] = m.Steps
		}
	}
	c4 := att.Workers[4]
	if !slices.Equal(c4.StepsS, byWorkload["c4"]) {
		t.Errorf("trace of slot 4 is not its record's steps")
	}
	st, err := stats.Worker(c4.StepsS, 3)
	if err != nil {
		t.Fatal(err)
	}
	if c4.TS != st.T || c4.RobustCV != st.RobustCV || !slices.Equal(c4.Dropped, st.Dropped()) {
		t.Errorf("slot 4 T %v robust CV %v dropped %v, want %v %v %v", c4.TS, c4.RobustCV, c4.Dropped, st.T, st.RobustCV, st.Dropped())
	}
	if !slices.ContainsFunc(att.Workers, func(w Worker) bool { return w.OverBound }) {
		t.Errorf("no attention worker over the CV bound %v", x.MaxRobustCV)
	}
	for _, w := range x.Workloads[1:] {
		for _, k := range w.Workers {
			if k.OverBound {
				t.Errorf("%s slot %d over the bound: robust CV %v", w.Name, k.Slot, k.RobustCV)
			}
		}
	}
	if got := EvidenceOf("t", "absent.tar.gz", nil, DefaultBounds()); got.Present || got.Lanes == nil || got.Findings == nil {
		t.Errorf("absent evidence: %+v", got)
	}
}

func TestWriteText(t *testing.T) {
	allowed := fixtureReport(t)
	allowed.Decision = &Decision{Allow: true, Channel: "/srv/ch", Denials: []policies.Denial{}}
	allowed.Evidence = allowed.Evidence[1:]
	channelReport := &Report{Schema: Schema, Kind: KindChannel, Path: "ch", Project: "demo", Channel: &Channel{Generation: 2, Newest: "1.0", Versions: []Version{
		{Version: "0.9", Assets: []Asset{{Name: "demo-0.9.spdx.json", SHA256: hex('1'), Size: 10}}},
		{Version: "1.0", Assets: []Asset{{Name: "demo-1.0.vsa.intoto.jsonl", SHA256: hex('2'), Size: 20}},
			VSA: &VSA{File: "demo-1.0.vsa.intoto.jsonl", Result: "PASSED", PolicyURI: "https://github.com/mkrelease/mkrelease/policies", PolicySHA256: hex('3'), Subjects: 4,
				Finding: "signature not checked: pass --key PUB.pem (or list it in [signing] trusted_keys)"}},
	}}}
	for _, tc := range []struct {
		name    string
		r       *Report
		want    []string
		notWant []string
	}{
		{"refused release", fixtureReport(t), []string{
			"release demo 1.0 (dist), targets linux-x86_64, linux-aarch64\n",
			"artifacts (3)\n",
			"  ok   " + hex('a') + "  demo-1.0-linux-x86_64.tar.gz\n",
			"  FAIL " + hex('b') + "  demo-1.0-py3-none-manylinux_2_17_x86_64.whl\n       RECORD: demo/lib.so: sha256 mismatch\n",
			"evidence linux-x86_64 (demo-1.0-verifier-evidence-linux-x86_64.tar.gz): 1 finding\n",
			"  lane semantic (cases): 4 cases, 2 PASS, 1 FAIL, 0 ERROR, 1 SKIP\n    FAIL log/subnormal ulp error 3 > 2 <b>\n",
			"  lane throughput (crossover): overall geomean ",
			"    workload attention (run): r ",
			"(bound 10.0%) OVER\n",
			"evidence linux-aarch64: none (demo-1.0-verifier-evidence-linux-aarch64.tar.gz not found)\n",
			"decision: REFUSE, 2 denials (no channel configured: decided as for a first publish)\n  [" + policies.RuleArtifactVerified + "] ",
			"\nwhat to do:\n  [evidence.present] gather it (`mkrelease evidence run --target linux-aarch64`) <b>here</b>\n",
		}, []string{"add/i32", "div/zero"}},
		{"allowed release", allowed, []string{"decision: ALLOW (/srv/ch)\n"}, []string{"REFUSE", "lane ", "what to do"}},
		{"channel", channelReport, []string{
			"channel ch: demo, generation 2, newest 1.0\n",
			"version 0.9 (1 assets)\n  " + hex('1') + "  demo-0.9.spdx.json\n  verification summary: none published\n",
			"  verification summary demo-1.0.vsa.intoto.jsonl: PASSED, policy https://github.com/mkrelease/mkrelease/policies sha256:" + hex('3') + ", 4 subjects\n    signature not checked",
		}, []string{"decision", "artifacts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, tc.r); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("output has %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// jsonFields lists the JSON field paths of type t ("evidence[].lanes[].name").
func jsonFields(t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			prefix += "[]"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[Report]().PkgPath() {
		return // another package's type: its own contract (stats, policies)
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		p := name
		if prefix != "" {
			p = prefix + "." + name
		}
		*out = append(*out, p)
		jsonFields(f.Type, p, out)
	}
}

// TestJSONFields fixes the field set of mkrelease report --json: a field
// added, renamed or dropped changes the contract and must change here.
func TestJSONFields(t *testing.T) {
	var got []string
	jsonFields(reflect.TypeFor[Report](), "", &got)
	want := []string{
		"schema", "kind", "path", "project", "version", "targets",
		"artifacts", "artifacts[].name", "artifacts[].kind", "artifacts[].target", "artifacts[].sha256", "artifacts[].verified", "artifacts[].findings",
		"evidence", "evidence[].version", "evidence[].target", "evidence[].file", "evidence[].present", "evidence[].ok", "evidence[].findings",
		"evidence[].lanes", "evidence[].lanes[].name", "evidence[].lanes[].kind",
		"evidence[].lanes[].cases", "evidence[].lanes[].cases.counts", "evidence[].lanes[].cases.results",
		"evidence[].lanes[].cases.results[].id", "evidence[].lanes[].cases.results[].status", "evidence[].lanes[].cases.results[].tier",
		"evidence[].lanes[].cases.results[].duration_s", "evidence[].lanes[].cases.results[].message",
		"evidence[].lanes[].crossover", "evidence[].lanes[].crossover.overall", "evidence[].lanes[].crossover.phases",
		"evidence[].lanes[].crossover.workloads",
		"evidence[].lanes[].crossover.workloads[].name", "evidence[].lanes[].crossover.workloads[].phase", "evidence[].lanes[].crossover.workloads[].usable",
		"evidence[].lanes[].crossover.workloads[].r", "evidence[].lanes[].crossover.workloads[].max_cv", "evidence[].lanes[].crossover.workloads[].max_robust_cv",
		"evidence[].lanes[].crossover.workloads[].failures", "evidence[].lanes[].crossover.workloads[].workers",
		"evidence[].lanes[].crossover.workloads[].workers[].slot", "evidence[].lanes[].crossover.workloads[].workers[].role",
		"evidence[].lanes[].crossover.workloads[].workers[].attempt", "evidence[].lanes[].crossover.workloads[].workers[].chosen",
		"evidence[].lanes[].crossover.workloads[].workers[].outcome", "evidence[].lanes[].crossover.workloads[].workers[].error",
		"evidence[].lanes[].crossover.workloads[].workers[].steps_s", "evidence[].lanes[].crossover.workloads[].workers[].dropped",
		"evidence[].lanes[].crossover.workloads[].workers[].t_s", "evidence[].lanes[].crossover.workloads[].workers[].cv",
		"evidence[].lanes[].crossover.workloads[].workers[].robust_cv", "evidence[].lanes[].crossover.workloads[].workers[].over_bound",
		"evidence[].lanes[].crossover.max_robust_cv", "evidence[].lanes[].crossover.min_workload",
		"decision", "decision.allow", "decision.channel", "decision.denials", "decision.remedies", "decision.policies",
		"channel", "channel.generation", "channel.newest", "channel.versions", "channel.versions[].version",
		"channel.versions[].assets", "channel.versions[].assets[].name", "channel.versions[].assets[].sha256", "channel.versions[].assets[].size",
		"channel.versions[].vsa", "channel.versions[].vsa.file", "channel.versions[].vsa.signature_verified", "channel.versions[].vsa.finding",
		"channel.versions[].vsa.result", "channel.versions[].vsa.policy_uri", "channel.versions[].vsa.policy_sha256", "channel.versions[].vsa.subjects",
	}
	if !slices.Equal(got, want) {
		t.Errorf("JSON fields changed:\n got %q\nwant %q", got, want)
	}
	// The encoded report has exactly the declared top-level fields (a
	// release has no channel), every list encoded.
	data, err := json.Marshal(fixtureReport(t))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, v := range top {
		keys = append(keys, k)
		if string(v) == "null" {
			t.Errorf("%s is null", k)
		}
	}
	slices.Sort(keys)
	if want := []string{"artifacts", "decision", "evidence", "kind", "path", "project", "schema", "targets", "version"}; !slices.Equal(keys, want) {
		t.Errorf("top-level keys %q, want %q", keys, want)
	}
	if bytes.Contains(data, []byte(`"steps_s":null`)) || bytes.Contains(data, []byte(`"failures":null`)) {
		t.Errorf("a list is encoded as null: %s", data)
	}
}

func renderHTML(t *testing.T, r *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteHTMLGolden pins the page for the fixture release (run with
// -update to rewrite it) and that rendering it twice gives the same bytes.
func TestWriteHTMLGolden(t *testing.T) {
	got := renderHTML(t, fixtureReport(t))
	if again := renderHTML(t, fixtureReport(t)); !bytes.Equal(got, again) {
		t.Fatal("two renderings of the same report differ")
	}
	golden := filepath.Join("testdata", "release.golden.html")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run TestWriteHTMLGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("page differs from %s (run with -update if the change is meant)", golden)
	}
}

// TestWriteHTMLSelfContained: the page names nothing outside itself, its
// plots are there with their classes, and every string is escaped.
func TestWriteHTMLSelfContained(t *testing.T) {
	page := string(renderHTML(t, fixtureReport(t)))
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<script`), regexp.MustCompile(`(?i)\b(src|href|xlink:href|action|srcset)\s*=`),
		regexp.MustCompile(`(?i)url\(`), regexp.MustCompile(`(?i)@import`), regexp.MustCompile(`(?i)(https?|ftp|wss?):`), regexp.MustCompile(`//[a-z0-9.-]+\.[a-z]{2,}/`),
	} {
		if loc := bad.FindStringIndex(page); loc != nil {
			// The policy URI of a VSA is text, never in a release page.
			t.Errorf("page has %q at %d: %q", bad.String(), loc[0], page[max(loc[0]-40, 0):min(loc[1]+40, len(page))])
		}
	}
	for _, want := range []string{
		`<svg class="dot-plot" data-lane="throughput"`,
		`<circle class="r-dot" data-workload="matmul"`,
		`<circle class="board-dot" data-board="overall"`,
		`<line class="interval" `,
		`<svg class="trace-plot" data-workload="attention"`,
		`<g class="trace candidate" data-worker="1.1" data-role="candidate" data-slot="1"`,
		`<g class="trace reference failed" data-worker="2.1" data-role="reference" data-slot="2" data-attempt="1"`,
		`<svg class="cv-plot" data-workload="conv"`,
		`<rect class="cv-bar reference over" data-worker=`,
		`<line class="cv-bound" `,
		`<li class="denial" data-rule="evidence.present"><code>[evidence.present] no evidence for target linux-aarch64 &lt;script&gt;alert(1)&lt;/script&gt;</code></li>`,
		`ulp error 3 &gt; 2 &lt;b&gt;`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// ABBA order: the trace groups of a workload come slot 1, 2, 3, 4.
	att := page[strings.Index(page, `<svg class="trace-plot" data-workload="attention"`):]
	att = att[:strings.Index(att, "</svg>")]
	var slots []string
	for _, m := range regexp.MustCompile(`data-worker="([0-9.]+)"`).FindAllStringSubmatch(att, -1) {
		slots = append(slots, m[1])
	}
	if want := []string{"1.1", "2.1", "2.2", "3.1", "4.1"}; !slices.Equal(slots, want) {
		t.Errorf("trace order %q, want %q", slots, want)
	}
}

func TestProse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain <b>", "plain &lt;b&gt;"},
		{"run `mkrelease build`, then `a <b>`", "run <code>mkrelease build</code>, then <code>a &lt;b&gt;</code>"},
		{"unclosed `x & y", "unclosed <code>x &amp; y</code>"},
	} {
		if got := string(prose(tc.in)); got != tc.want {
			t.Errorf("prose(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
