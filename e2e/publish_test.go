package e2e

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/testhook"
	"github.com/mkrelease/mkrelease/internal/testpart"
	"github.com/mkrelease/mkrelease/policies"
)

// gateVerifier is a verifier whose every figure comes from params.json in
// its folder, which a test rewrites before `mkrelease evidence run`: the
// cases lane writes "pass" PASS cases and, with "fail", one FAIL case; the
// crossover worker sleeps not at all but reports synthetic step times,
// "candidate" and "reference" seconds per step (per-workload overrides in
// "workloads", a workload's "noise" multiplying its steps in turn).
var gateVerifier = map[string]string{
	"cases.py": `import json, os
import demo_app

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "params.json")) as f:
    params = json.load(f)

def case(**c):
    with open(os.environ["MKRELEASE_CASES"], "a") as f:
        f.write(json.dumps(c) + "\n")

for i in range(params["pass"]):
    case(id="check/%d" % i, status="PASS", tier="1", metrics={"answer": demo_app.answer()},
         tolerance={"abs": 0}, duration_s=0.01)
if params["fail"]:
    case(id="math/bad", status="FAIL", tier="1", metrics={"got": 3, "want": 4},
         tolerance={"abs": 0}, duration_s=0.02, message="2 + 2 gave 3")
`,
	"worker.py": `import hashlib, json, os

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "params.json")) as f:
    params = json.load(f)
workload = os.environ["MKRELEASE_WORKLOAD"]
role = os.environ["MKRELEASE_ROLE"]
steps = int(os.environ["MKRELEASE_STEPS"])
over = params.get("workloads", {}).get(workload, {})
base = over.get(role, params[role])
noise = over.get("noise", [1.0])

def emit(**event):
    print(json.dumps(event), flush=True)

emit(event="ready")
for i in range(steps):
    emit(event="step", i=i, seconds=base * noise[i % len(noise)])
emit(event="result", sha256=hashlib.sha256(b"demo").hexdigest())
`,
}

// gateWorkloads are the crossover lane's workloads and their phases.
var gateWorkloads = []struct{ name, phase string }{
	{"a1", "p1"}, {"a2", "p1"}, {"a3", "p1"}, {"b1", "p2"}, {"b2", "p2"},
}

const gateLanes = `
[evidence]
verifier = "verifier"

[[evidence.lane]]
name = "cases"
kind = "cases"
run = ["${PYTHON}", "${VERIFIER}/cases.py"]

[[evidence.lane]]
name = "speed"
kind = "crossover"
candidate = ["${PYTHON}", "${VERIFIER}/worker.py"]
reference = ["${PYTHON}", "${VERIFIER}/worker.py"]
steps = 8
warmups = 1
timeout = "60s"
max_host_load = 0 # the workers report made-up step times: the host's load cannot change them
`

// gateParams are the verifier's parameters.
type gateParams struct {
	Pass      int                       `json:"pass"`
	Fail      bool                      `json:"fail"`
	Candidate float64                   `json:"candidate"`
	Reference float64                   `json:"reference"`
	Workloads map[string]map[string]any `json:"workloads,omitempty"`
}

// passing: every case passes, every workload has r = 2.0 and robust CV 0.
func passing() gateParams {
	return gateParams{Pass: 3, Candidate: 0.004, Reference: 0.008}
}

// noise makes the 7 steps after the warm-up 1, 1.25, 1.5, 1, 1.25, 1.5, 2
// times the base: the slowest (2) is dropped, the kept steps have median
// 1.25 and median absolute deviation 0.25, so robust CV = 1.4826 · 0.25 /
// 1.25 = 29.652 %.
var noise = []any{1.0, 1.0, 1.25, 1.5, 1.0, 1.25, 1.5, 2.0}

// gateProject makes the demo project with the gate verifier and builds it.
func gateProject(t *testing.T) run {
	t.Helper()
	r := closureProject(t)
	lanes := gateLanes
	for _, w := range gateWorkloads {
		lanes += fmt.Sprintf("\n[[evidence.lane.workload]]\nname = %q\nphase = %q\n", w.name, w.phase)
	}
	cfg := mustRead(t, filepath.Join(r.dir, "release.toml"))
	write(t, filepath.Join(r.dir, "release.toml"), string(cfg)+lanes)
	for name, src := range gateVerifier {
		write(t, filepath.Join(r.dir, "verifier", name), src)
	}
	setParams(t, r, passing())
	r.mustMkrelease(t, "build")
	return r
}

func setParams(t *testing.T, r run, p gateParams) {
	t.Helper()
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(r.dir, "verifier", "params.json"), string(b)+"\n")
}

// clone copies the project folder of r (its dist, dev key and lock with
// it) to a new folder; the copy runs with r's environment.
func clone(t *testing.T, r run) run {
	t.Helper()
	return cloneInto(t, r, t.TempDir())
}

// cloneInto is clone into a new folder in parent.
func cloneInto(t *testing.T, r run, parent string) run {
	t.Helper()
	dir := filepath.Join(parent, "demo")
	copyTree(t, r.dir, dir)
	return run{dir: dir, env: slices.Clone(r.env), umask: r.umask}
}

// variant rebuilds a clone of r after change edits its sources.
func variant(t *testing.T, r run, change func(dir string)) run {
	t.Helper()
	v := clone(t, r)
	change(v.dir)
	v.mustMkrelease(t, "lock")
	v.mustMkrelease(t, "build")
	return v
}

// setVersion changes the demo project's version and its changelog section.
func setVersion(t *testing.T, dir, version string) {
	t.Helper()
	cfg := string(mustRead(t, filepath.Join(dir, "release.toml")))
	if !strings.Contains(cfg, "version = \"2.0\"\n") {
		t.Fatalf("release.toml has no version 2.0:\n%s", cfg)
	}
	write(t, filepath.Join(dir, "release.toml"), strings.Replace(cfg, "version = \"2.0\"\n", fmt.Sprintf("version = %q\n", version), 1))
	write(t, filepath.Join(dir, "CHANGELOG.md"), fmt.Sprintf("# Changelog\n\n## %s\n- depends on example and wheel\n", version))
}

// runEvidence runs the lanes with params; a lane that did not pass exits
// 1, but the evidence must be written either way.
func runEvidence(t *testing.T, r run, version string, p gateParams, args ...string) string {
	t.Helper()
	setParams(t, r, p)
	out, errOut, code := r.mkrelease(t, append([]string{"evidence", "run"}, args...)...)
	archive := filepath.Join(r.dir, "dist", evidenceRoot("demo-app", version, "linux-x86_64")+".tar.gz")
	if _, err := os.Stat(archive); err != nil || (code != 0 && code != 1) {
		t.Fatalf("evidence run: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	return out
}

// inParallel runs the jobs as parallel subtests of a subtest named name
// and stops the test when one failed.
func inParallel(t *testing.T, name string, jobs map[string]func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		for _, n := range slices.Sorted(maps.Keys(jobs)) {
			job := jobs[n]
			t.Run(n, func(t *testing.T) {
				t.Parallel()
				job(t)
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
}

// snapshot describes every entry below root, hidden ones and symbolic
// links included (a link by its target, a file by mode and digest).
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[rel] = "link -> " + target
		case d.IsDir():
			m[rel] = "dir " + info.Mode().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = fmt.Sprintf("file %s %x", info.Mode(), sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameSnapshot reports how two snapshots differ ("" when they do not).
func sameSnapshot(before, after map[string]string) string {
	var diffs []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			diffs = append(diffs, "removed "+k)
		} else if w != v {
			diffs = append(diffs, fmt.Sprintf("changed %s: %s -> %s", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, "added "+k+" ("+after[k]+")")
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "\n")
}

var refusalHeader = regexp.MustCompile(`(?m)^mkrelease: publish refused by the release policies \((\d+) reasons?\):$`)

// refusalReasons returns the reasons a refused publish printed, checking
// the header's count and the closing line.
func refusalReasons(t *testing.T, stderr string) []string {
	t.Helper()
	m := refusalHeader.FindStringSubmatchIndex(stderr)
	if m == nil {
		t.Fatalf("stderr has no policy refusal header:\n%s", stderr)
	}
	n, _ := strconv.Atoi(stderr[m[2]:m[3]])
	var reasons []string
	for _, l := range strings.Split(stderr[m[1]:], "\n")[1:] {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		reasons = append(reasons, strings.TrimPrefix(l, "  "))
	}
	if len(reasons) != n {
		t.Errorf("the header announces %d reasons, %d are printed:\n%s", n, len(reasons), stderr)
	}
	if !strings.Contains(stderr, "\nmkrelease: nothing was published\n") {
		t.Errorf("stderr does not say nothing was published:\n%s", stderr)
	}
	checkRemedies(t, reasons, stderr)
	return reasons
}

// checkRemedies checks what a refusal says to do: one line per default
// rule denied, unless its message says it, each naming the targets its
// reasons name in its evidence command.
func checkRemedies(t *testing.T, reasons []string, stderr string) {
	t.Helper()
	saysItself := []string{policies.RuleBuildSandboxed, policies.RuleChannelRepublish, policies.RuleChannelDowngrade}
	remedies := map[string]string{}
	if _, block, ok := strings.Cut(stderr, "\nmkrelease: what to do:\n"); ok {
		for _, l := range strings.Split(block, "\n") {
			rest, ok := strings.CutPrefix(l, "  [")
			if !ok {
				break
			}
			rule, text, _ := strings.Cut(rest, "] ")
			if _, dup := remedies[rule]; dup {
				t.Errorf("two remedies for rule %s:\n%s", rule, stderr)
			}
			remedies[rule] = text
		}
	}
	denied := map[string][]string{} // rule -> the targets its reasons name
	for _, r := range reasons {
		rule, rest, _ := strings.Cut(strings.TrimPrefix(r, "["), "] ")
		target, _, _ := strings.Cut(rest, " ")
		denied[rule] = append(denied[rule], strings.TrimSuffix(target, ":"))
	}
	for rule, targets := range denied {
		text, ok := remedies[rule]
		switch {
		case !slices.Contains(policies.DefaultRules(), rule) || slices.Contains(saysItself, rule):
			if ok {
				t.Errorf("rule %s got a remedy it should not: %q", rule, text)
			}
		case !ok:
			t.Errorf("no remedy for rule %s:\n%s", rule, stderr)
		case strings.HasPrefix(rule, "evidence."):
			for _, target := range targets {
				if !strings.Contains(text, "--target "+target) {
					t.Errorf("the remedy for %s does not name target %s: %q", rule, target, text)
				}
			}
		}
	}
	for rule := range remedies {
		if _, ok := denied[rule]; !ok {
			t.Errorf("a remedy for rule %s, which denied nothing:\n%s", rule, stderr)
		}
	}
}

// checkReasons checks that the reasons are exactly want: each want is a
// whole line, or a prefix when it ends with "…"; every reason must match
// a want and every want a reason.
func checkReasons(t *testing.T, reasons, want []string) {
	t.Helper()
	match := func(w, r string) bool {
		if p, ok := strings.CutSuffix(w, "…"); ok {
			return strings.HasPrefix(r, p)
		}
		return r == w
	}
	for _, w := range want {
		if !slices.ContainsFunc(reasons, func(r string) bool { return match(w, r) }) {
			t.Errorf("no reason %q among:\n  %s", w, strings.Join(reasons, "\n  "))
		}
	}
	for _, r := range reasons {
		if !slices.ContainsFunc(want, func(w string) bool { return match(w, r) }) {
			t.Errorf("unexpected reason %q", r)
		}
	}
}

const evArch20 = "demo-app-2.0-verifier-evidence-linux-x86_64.tar.gz"

// TestPublishGate builds the demo release and variants of it, gathers
// evidence that is fine or wrong in exactly one way each, and checks that
// publish refuses each wrong one with exactly the reasons it has, writing
// nothing, and publishes the good one (verify accepts the channel; a
// second identical publish is a no-op; a dry run writes nothing).
func TestPublishGate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds releases and runs verifier lanes")
	}
	t.Parallel() // see parallelTests in e2e_test.go
	base := gateProject(t)
	pub := filepath.Join(base.dir, ".mkrelease", "dev.pub")
	// pristine: built, no evidence. other: the same version with other
	// wheel bytes. lower: version 1.9.
	pristine := clone(t, base)
	other := variant(t, base, func(dir string) {
		write(t, filepath.Join(dir, "py", "demo_app", "__init__.py"), "import example\nimport wheel\n\ndef answer():\n    return 43\n")
	})
	lower := variant(t, base, func(dir string) { setVersion(t, dir, "1.9") })
	if bytes.Equal(mustRead(t, filepath.Join(base.dir, "dist", "demo_app-2.0-py3-none-any.whl")),
		mustRead(t, filepath.Join(other.dir, "dist", "demo_app-2.0-py3-none-any.whl"))) {
		t.Fatal("the other build's wheel has the same bytes")
	}

	keyDir := t.TempDir()
	untrustedKey := filepath.Join(keyDir, "untrusted.key")
	untrustedPub := filepath.Join(keyDir, "untrusted.pub")
	keyEnv := append(slices.Clone(base.env), "MKRELEASE_KEY_PASSWORD=not-trusted-anywhere")
	run{dir: keyDir, env: keyEnv, umask: "022"}.mustMkrelease(t, "keygen", "--key", untrustedKey, "--pub", untrustedPub)

	// Evidence for every variant, two at a time.
	var mu sync.Mutex
	ev := map[string]run{}
	job := func(name string, from run, version string, p gateParams, args ...string) func(t *testing.T) {
		parent := t.TempDir() // the test's: it outlives the job
		return func(t *testing.T) {
			r := cloneInto(t, from, parent)
			if len(args) > 0 {
				r.env = append(r.env, "MKRELEASE_KEY_PASSWORD=not-trusted-anywhere")
			}
			runEvidence(t, r, version, p, args...)
			mu.Lock()
			ev[name] = r
			mu.Unlock()
		}
	}
	failing := passing()
	failing.Fail = true
	slowWorkload := passing()
	slowWorkload.Workloads = map[string]map[string]any{"a1": {"reference": 0.0028}} // r = 0.7
	slowPhase := passing()
	slowPhase.Workloads = map[string]map[string]any{"b1": {"reference": 0.0034}, "b2": {"reference": 0.0034}} // r = 0.85 each
	noisy := passing()
	noisy.Workloads = map[string]map[string]any{"a2": {"noise": noise}}
	even := passing()
	even.Reference = even.Candidate // every r is 1
	inParallel(t, "evidence", map[string]func(t *testing.T){
		"pass":      job("pass", pristine, "2.0", passing()),
		"other":     job("other", other, "2.0", passing()),
		"lower":     job("lower", lower, "1.9", passing()),
		"untrusted": job("untrusted", pristine, "2.0", passing(), "--key", "file://"+untrustedKey),
		"fail-case": job("fail-case", pristine, "2.0", failing),
		"workload":  job("workload", pristine, "2.0", slowWorkload),
		"phase":     job("phase", pristine, "2.0", slowPhase),
		"noise":     job("noise", pristine, "2.0", noisy),
		"even":      job("even", pristine, "2.0", even),
	})

	// refused publishes from project from (copied first, prepared by
	// prepare) to a channel in a new folder, or to channel when given.
	refused := func(t *testing.T, from run, prepare func(r run), channel string, want []string, extra ...string) run {
		t.Helper()
		r := clone(t, from)
		if prepare != nil {
			prepare(r)
		}
		if channel == "" {
			channel = filepath.Join(t.TempDir(), "chan")
		}
		parent := filepath.Dir(channel)
		chBefore, distBefore := snapshot(t, parent), snapshot(t, filepath.Join(r.dir, "dist"))
		out, errOut, code := r.mkrelease(t, append([]string{"publish", "--to", channel, "--key", pub}, extra...)...)
		if code != 1 {
			t.Fatalf("publish: exit %d, want 1\n%s\n%s", code, out, errOut)
		}
		reasons := refusalReasons(t, errOut)
		checkReasons(t, reasons, want)
		t.Logf("refused:\n  %s", strings.Join(reasons, "\n  "))
		if strings.Contains(out, "published") {
			t.Errorf("stdout of a refused publish:\n%s", out)
		}
		if d := sameSnapshot(chBefore, snapshot(t, parent)); d != "" {
			t.Errorf("a refused publish changed the channel's folder:\n%s", d)
		}
		if d := sameSnapshot(distBefore, snapshot(t, filepath.Join(r.dir, "dist"))); d != "" {
			t.Errorf("a refused publish changed the release folder:\n%s", d)
		}
		return r
	}
	// published publishes r to channel.
	published := func(t *testing.T, r run, channel, version string, generation int, extra ...string) string {
		t.Helper()
		out, errOut, code := r.mkrelease(t, append([]string{"publish", "--to", channel, "--key", pub}, extra...)...)
		if code != 0 {
			t.Fatalf("publish: exit %d\n%s\n%s", code, out, errOut)
		}
		assets := 2 // the verification summary and its sidecar
		entries, _ := os.ReadDir(filepath.Join(r.dir, "dist"))
		for _, e := range entries {
			if e.Type().IsRegular() {
				assets++
			}
		}
		want := fmt.Sprintf("published demo-app %s to %s (generation %d, %d assets, verification summary demo-app-%s.vsa.intoto.jsonl)\n"+
			"channel: %s\n"+
			"install: python3 -m pip install --index-url file://%s/simple/ demo-app==%s\n",
			version, channel, generation, assets, version, channel, channel, version)
		if !strings.HasPrefix(out, want) {
			t.Errorf("publish printed\n%s\nwant it to begin with\n%s", out, want)
		}
		if got, err := os.Readlink(channel); err != nil || got != fmt.Sprintf(".%s.generations/g-%06d", filepath.Base(channel), generation) {
			t.Errorf("%s -> %q (%v), want generation %d", channel, got, err, generation)
		}
		return out
	}
	verifyChannel := func(t *testing.T, r run, channel string) {
		t.Helper()
		out, errOut, code := r.mkrelease(t, "verify", channel, "--key", pub)
		if code != 0 || !strings.Contains(out, "every check holds") {
			t.Errorf("verify %s: exit %d\n%s\n%s", channel, code, out, errOut)
		}
	}

	t.Run("passes", func(t *testing.T) {
		r := clone(t, ev["pass"])
		channel := filepath.Join(t.TempDir(), "chan")
		distBefore := snapshot(t, filepath.Join(r.dir, "dist"))

		out, errOut, code := r.mkrelease(t, "publish", "--to", channel, "--key", pub, "--dry-run")
		var dry struct {
			Decision struct {
				Allow    bool              `json:"allow"`
				Denials  []json.RawMessage `json:"denials"`
				Policies []json.RawMessage `json:"policies"`
			} `json:"decision"`
			Input struct {
				Release struct {
					Project, Version string
					Targets          []string
				} `json:"release"`
				Evidence []json.RawMessage `json:"evidence"`
			} `json:"input"`
			Assets []string `json:"assets"`
		}
		if code != 0 {
			t.Fatalf("publish --dry-run: exit %d\n%s\n%s", code, out, errOut)
		}
		if err := json.Unmarshal([]byte(out), &dry); err != nil {
			t.Fatalf("publish --dry-run printed no JSON: %v\n%s", err, out)
		}
		if !dry.Decision.Allow || len(dry.Decision.Denials) != 0 || len(dry.Decision.Policies) == 0 ||
			dry.Input.Release.Version != "2.0" || len(dry.Input.Evidence) != 1 || !slices.Contains(dry.Assets, evArch20) {
			t.Errorf("dry run: %s", out)
		}
		if _, err := os.Lstat(channel); err == nil {
			t.Errorf("a dry run created %s", channel)
		}
		if entries, _ := os.ReadDir(filepath.Dir(channel)); len(entries) != 0 {
			t.Errorf("a dry run wrote into the channel's folder: %v", entries)
		}
		if d := sameSnapshot(distBefore, snapshot(t, filepath.Join(r.dir, "dist"))); d != "" {
			t.Errorf("a dry run changed the release folder:\n%s", d)
		}

		published(t, r, channel, "2.0", 1)
		verifyChannel(t, r, channel)
		// The channel's notes: the folder's (the changelog's section),
		// then the figures of the evidence the verifier's parameters
		// imply, and the digest of the wheel it ran on.
		const wheel = "demo_app-2.0-py3-none-any.whl"
		notes := string(mustRead(t, filepath.Join(channel, "releases", "2.0", dist.NotesFile)))
		built := string(mustRead(t, filepath.Join(r.dir, "dist", dist.NotesFile)))
		for _, want := range []string{
			"\n### Validation\n",
			"\n| cases | cases | | 3/3 PASS |\n",
			"\n| speed | overall | 5 | r = 2.0000 (95 % interval 2.0000–2.0000) |\n",
			"\n| speed | phase p1 | 3 | r = 2.0000 (95 % interval 2.0000–2.0000) |\n",
			"\n| speed | phase p2 | 2 | r = 2.0000 (95 % interval 2.0000–2.0000) |\n",
			"\nWorst robust CV: 0.00% (speed/a1).\n",
			"\n- `" + fileSHA(t, filepath.Join(r.dir, "dist", wheel)) + "  " + wheel + "`\n",
		} {
			if !strings.HasPrefix(notes, built) || !strings.Contains(notes, want) {
				t.Errorf("the channel's %s does not begin with the folder's and hold %q:\n%s", dist.NotesFile, want, notes)
			}
		}
		if d := sameSnapshot(distBefore, snapshot(t, filepath.Join(r.dir, "dist"))); d != "" {
			t.Errorf("publish changed the release folder:\n%s", d)
		}

		before := snapshot(t, filepath.Dir(channel))
		out, errOut, code = r.mkrelease(t, "publish", "--to", channel, "--key", pub)
		if code != 0 || !strings.Contains(out, "demo-app 2.0 is already published in "+channel+" with the same bytes: nothing to do") {
			t.Errorf("second publish: exit %d\n%s\n%s", code, out, errOut)
		}
		if d := sameSnapshot(before, snapshot(t, filepath.Dir(channel))); d != "" {
			t.Errorf("the no-op publish changed the channel:\n%s", d)
		}
	})

	t.Run("a. no evidence", func(t *testing.T) {
		refused(t, pristine, nil, "", []string{
			"[evidence.present] linux-x86_64: there is no verifier evidence for this target (expected " + evArch20 + ")",
		})
	})

	t.Run("b. evidence for other wheels", func(t *testing.T) {
		refused(t, pristine, func(r run) {
			m, _ := filepath.Glob(filepath.Join(ev["other"].dir, "dist", "*"+evidenceInfix+"*"))
			if len(m) < 4 {
				t.Fatalf("the other build's evidence: %v", m)
			}
			for _, f := range m {
				copyFile(t, f, filepath.Join(r.dir, "dist", filepath.Base(f)))
			}
		}, "", []string{
			"[evidence.wheels] linux-x86_64: evidence " + evArch20 + " is not for the exact wheel digests of this release: …",
		})
	})

	t.Run("c. evidence signed by an untrusted key", func(t *testing.T) {
		// The reason names the key, by its OpenSSH fingerprint.
		block, _ := pem.Decode(mustRead(t, untrustedPub))
		if block == nil {
			t.Fatalf("%s is not PEM", untrustedPub)
		}
		key, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		sshKey, err := ssh.NewPublicKey(key)
		if err != nil {
			t.Fatal(err)
		}
		fp := ssh.FingerprintSHA256(sshKey)
		r := refused(t, ev["untrusted"], nil, "", []string{
			"[evidence.signed] linux-x86_64: evidence " + evArch20 + " is not signed by a trusted verifier key: " +
				evidenceRoot("demo-app", "2.0", "linux-x86_64") + ".intoto.jsonl line 1: provenance signature check: signature 0 is by untrusted key " + fp + " …",
		})
		// The same evidence passes once its key is trusted: the denial was
		// the key's.
		out, errOut, code := r.mkrelease(t, "publish", "--to", filepath.Join(t.TempDir(), "chan"), "--key", pub, "--key", untrustedPub, "--dry-run")
		if code != 0 || !strings.Contains(out, `"allow": true`) {
			t.Errorf("with the evidence key trusted: exit %d\n%s\n%s", code, out, errOut)
		}
	})

	t.Run("d. a failing case", func(t *testing.T) {
		refused(t, ev["fail-case"], nil, "", []string{"[evidence.cases] linux-x86_64 cases: case math/bad is FAIL, not PASS"})
	})

	t.Run("e. a workload below 0.80", func(t *testing.T) {
		refused(t, ev["workload"], nil, "", []string{"[evidence.workload] linux-x86_64 speed/a1: r = 0.7000 is below the minimum 0.80"})
	})

	t.Run("f. a phase below 0.90", func(t *testing.T) {
		refused(t, ev["phase"], nil, "", []string{"[evidence.phase] linux-x86_64 speed/p2: phase geomean 0.8500 is below the minimum 0.90"})
	})

	t.Run("g. robust CV above 10%", func(t *testing.T) {
		refused(t, ev["noise"], nil, "", []string{"[evidence.noise] linux-x86_64 speed/a2: robust CV 29.65% is above the maximum 10.00%"})
	})

	t.Run("h. overall geomean exactly 1.00", func(t *testing.T) {
		refused(t, ev["even"], nil, "", []string{"[evidence.throughput] linux-x86_64 speed: overall geomean 1.0000 is not above the minimum 1.00"})
	})

	t.Run("i. a wheel changed after the evidence", func(t *testing.T) {
		const wheel = "demo_app-2.0-py3-none-any.whl"
		refused(t, ev["pass"], func(r run) {
			dist := filepath.Join(r.dir, "dist")
			copyFile(t, filepath.Join(other.dir, "dist", wheel), filepath.Join(dist, wheel))
			fixChecksums(t, dist, wheel)
			// The folder's own checks hold for the new wheel: only what
			// recorded the old one can tell.
			if out, errOut, code := r.mkrelease(t, "verify", filepath.Join(dist, wheel)); code != 0 {
				t.Fatalf("the replacement wheel does not verify on its own: exit %d\n%s\n%s", code, out, errOut)
			}
		}, "", []string{
			// The SBOM, manifest.json and the provenance recorded the old wheel.
			"[artifact.verified] " + wheel + " (wheel, linux-x86_64) does not verify: sbom: the SBOM records sha256 …",
			"[evidence.wheels] linux-x86_64: evidence " + evArch20 + " is not for the exact wheel digests of this release: " +
				wheel + ": sha256 " + fileSHA(t, filepath.Join(other.dir, "dist", wheel)) + ", but the evidence was taken on the wheel in the bundle, sha256 " +
				fileSHA(t, filepath.Join(base.dir, "dist", wheel)) + ": the wheel changed after the evidence was taken…",
			"[provenance.subjects] the subjects of provenance demo-app-2.0.intoto.jsonl do not match the release's artifacts…",
		})
	})

	t.Run("j. another build of a published version", func(t *testing.T) {
		channel := filepath.Join(t.TempDir(), "chan")
		published(t, clone(t, ev["pass"]), channel, "2.0", 1)
		refused(t, ev["other"], nil, channel, []string{
			"[channel.republish] demo-app 2.0 is already published with different bytes; publish a new version",
		})
		// The other build alone passes the gate.
		r := clone(t, ev["other"])
		if out, errOut, code := r.mkrelease(t, "publish", "--to", filepath.Join(t.TempDir(), "chan"), "--key", pub, "--dry-run"); code != 0 {
			t.Errorf("the other build alone: exit %d\n%s\n%s", code, out, errOut)
		}
		verifyChannel(t, r, channel)
	})

	t.Run("k. a downgrade", func(t *testing.T) {
		channel := filepath.Join(t.TempDir(), "chan")
		published(t, clone(t, ev["pass"]), channel, "2.0", 1)
		r := refused(t, ev["lower"], nil, channel, []string{
			"[channel.downgrade] demo-app 1.9 is lower than the newest published version 2.0; publish it anyway with `mkrelease publish --allow-downgrade`",
		})
		published(t, r, channel, "1.9", 2, "--allow-downgrade")
		verifyChannel(t, r, channel)
		var st struct {
			Newest   string `json:"newest"`
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
		}
		if err := json.Unmarshal(mustRead(t, filepath.Join(channel, "channel.json")), &st); err != nil {
			t.Fatal(err)
		}
		if st.Newest != "2.0" || len(st.Versions) != 2 || st.Versions[0].Version != "1.9" {
			t.Errorf("channel.json after the downgrade: %+v", st)
		}
	})
}

// crashPoints are the testhook.Crash points of a channel publish (see
// channel/doc.go), and whether DEST already shows the new state when a
// publish is killed there.
var crashPoints = []struct {
	point    string
	switched bool
	// sampled: the point is in the default test part, one or two of
	// each phase of a publish; the whole suite kills at every point.
	sampled bool
}{
	{"publish/locked", false, true},
	{"cleanup/removed-link", false, false},
	{"cleanup/removed", false, true},
	{"cleanup/synced", false, false},
	{"stage/created", false, false},
	{"stage/linked", false, false},
	{"stage/copy-partial", false, true},
	{"stage/copied", false, false},
	{"stage/metadata", false, false},
	{"stage/simple-root", false, false},
	{"stage/simple-project", false, false},
	{"stage/find-links", false, false},
	{"stage/index", false, false},
	{"stage/state", false, false},
	{"stage/signed", false, true},
	{"stage/synced", false, false},
	{"stage/renamed", false, false},
	{"stage/synced-generations", false, false},
	{"switch/link-created", false, true},
	{"switch/removed-empty-dest", false, false},
	{"switch/before-rename", false, true},
	{"switch/renamed", true, true},
	{"switch/synced", true, true},
	{"gc/moved-aside", true, false},
	{"gc/removed", true, false},
	{"gc/synced", true, false},
	{"publish/done", true, true},
}

// hooked runs bin (mkrelease with the test hooks) in dir.
func hooked(t *testing.T, bin, dir string, env []string, args ...string) (stdout, stderr string, killed bool, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if ws.Signal() != syscall.SIGKILL {
				t.Fatalf("%s died by %v, not SIGKILL\n%s", bin, ws.Signal(), e.String())
			}
			killed = true
		}
	default:
		t.Fatal(err)
	}
	return o.String(), e.String(), killed, code
}

// publishedTime is channel.json's time of publishing.
var publishedTime = regexp.MustCompile(`("published": )"[^"]*"`)

var vsaSize = regexp.MustCompile(`("name": "[^"]*\.vsa\.intoto\.jsonl(?:\.sha256)?",\s*"sha256": "[^"]*",\s*"size": )\d+`)

// channelTree reads the channel DEST shows, the verification summary (signed
// anew at every publish) and its sidecar, their digests and sizes replaced
// by placeholders, as are channel.json's time and its signed statement: the
// rest must be identical byte for byte.
func channelTree(t *testing.T, dest string) (map[string][]byte, string) {
	t.Helper()
	target, err := os.Readlink(dest)
	if err != nil {
		t.Fatalf("%s is not a link: %v", dest, err)
	}
	if !regexp.MustCompile(`^\.` + regexp.QuoteMeta(filepath.Base(dest)) + `\.generations/g-\d{6}$`).MatchString(target) {
		t.Fatalf("%s -> %s, not a generation", dest, target)
	}
	m := tree(t, filepath.Join(filepath.Dir(dest), target))
	var digests []string
	for k, v := range m {
		if strings.HasSuffix(k, ".vsa.intoto.jsonl") || strings.HasSuffix(k, ".vsa.intoto.jsonl.sha256") {
			digests = append(digests, hex.EncodeToString(sum(v)))
			m[k] = []byte("(verification summary)")
		}
	}
	for k, v := range m {
		for _, d := range digests {
			v = bytes.ReplaceAll(v, []byte(d), []byte("(digest)"))
		}
		switch k {
		case "channel.json":
			v = vsaSize.ReplaceAll(v, []byte("${1}0"))
			v = publishedTime.ReplaceAll(v, []byte("${1}(time)"))
		case "channel.intoto.jsonl":
			v = []byte("(signed state)") // signs the time and the summary's digest
		}
		m[k] = v
	}
	return m, target
}

func sameTree(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

func treeDiff(a, b map[string][]byte) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "only in the first: "+k)
		} else if !bytes.Equal(v, w) {
			out = append(out, "differs: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "only in the second: "+k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestPublishCrashSafety kills `mkrelease publish` (built with the test
// hooks) at every crash point of the channel it reaches while publishing
// 2.1 into a channel holding 2.0: the channel shows exactly the old or
// exactly the new release, verifies, and the next publish completes it.
// The default test part kills it at a sample of the points, one or two of
// each phase (crashPoints' sampled); the whole suite at every one, and
// the channel package's own crash test (with the hooks) at every one in
// both parts.
func TestPublishCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds releases and runs verifier lanes")
	}
	t.Parallel() // see parallelTests in e2e_test.go
	a := gateProject(t)
	b := variant(t, a, func(dir string) { setVersion(t, dir, "2.1") })
	pub := filepath.Join(a.dir, ".mkrelease", "dev.pub")
	bin := hookedMkrelease
	inParallel(t, "prepare", map[string]func(t *testing.T){
		"evidence 2.0": func(t *testing.T) { runEvidence(t, a, "2.0", passing()) },
		"evidence 2.1": func(t *testing.T) { runEvidence(t, b, "2.1", passing()) },
	})

	// clean: 2.0 published, nothing else.
	clean := filepath.Join(t.TempDir(), "clean")
	os.MkdirAll(clean, 0o755)
	a.mustMkrelease(t, "publish", "--to", filepath.Join(clean, "ch"), "--key", pub)
	oldTree, oldTarget := channelTree(t, filepath.Join(clean, "ch"))
	oldRaw := tree(t, filepath.Join(clean, ".ch.generations", "g-000001"))
	publishTo := func(dest string) []string { return []string{"publish", "--to", dest, "--key", pub} }

	// Publishing 2.1 reads the release folder once: every file hashed
	// once, every bundle and evidence archive extracted once, every asset
	// copied into the channel once.
	counted := filepath.Join(t.TempDir(), "counted")
	copyTree(t, clean, counted)
	publishReadsOnce(t, bin, b, publishTo(filepath.Join(counted, "ch")))

	// leftovers: the same, after a publish of 2.1 killed with its next
	// generation complete and the temporary link made; the cleanup points
	// are reached only from here.
	leftovers := filepath.Join(t.TempDir(), "leftovers")
	copyTree(t, clean, leftovers)
	if _, errOut, killed, _ := hooked(t, bin, b.dir, append(slices.Clone(b.env), "MKRELEASE_TEST_CRASH_AT=switch/link-created"),
		publishTo(filepath.Join(leftovers, "ch"))...); !killed {
		t.Fatalf("preparing the leftovers: the publish was not killed\n%s", errOut)
	}
	if got := listDir(t, leftovers); !slices.Contains(got, ".ch.link-tmp") {
		t.Fatalf("the killed publish left %v, want a temporary link", got)
	}

	// The reference: 2.1 published over clean without a kill.
	ref := filepath.Join(t.TempDir(), "ref")
	copyTree(t, clean, ref)
	b.mustMkrelease(t, publishTo(filepath.Join(ref, "ch"))...)
	newTree, _ := channelTree(t, filepath.Join(ref, "ch"))
	if sameTree(oldTree, newTree) {
		t.Fatal("the reference publish did not change the channel")
	}

	var hit, missed []string
	points := 0
	for _, cp := range crashPoints {
		if !cp.sampled && !testpart.Full() {
			continue
		}
		points++
		t.Run(strings.ReplaceAll(cp.point, "/", "-"), func(t *testing.T) {
			fixture := clean
			if strings.HasPrefix(cp.point, "cleanup/") {
				fixture = leftovers
			}
			parent := filepath.Join(t.TempDir(), "p")
			copyTree(t, fixture, parent)
			dest := filepath.Join(parent, "ch")

			out, errOut, killed, code := hooked(t, bin, b.dir, append(slices.Clone(b.env), "MKRELEASE_TEST_CRASH_AT="+cp.point), publishTo(dest)...)
			marker := strings.Contains(errOut, testhook.CrashMarker+cp.point+"\n")
			switch {
			case killed && marker:
				hit = append(hit, cp.point)
			case !killed && code == 0 && !strings.Contains(errOut, testhook.CrashMarker):
				missed = append(missed, cp.point)
				t.Logf("%s is not reached by this publish", cp.point)
			default:
				t.Fatalf("publish with a crash at %s: killed %v, exit %d\n%s\n%s", cp.point, killed, code, out, errOut)
			}

			// Exactly the old channel or exactly the new one, as the point says.
			got, target := channelTree(t, dest)
			isOld := target == oldTarget && sameTree(got, oldTree) && sameTree(tree(t, filepath.Join(parent, target)), oldRaw)
			isNew := !isOld && sameTree(got, newTree)
			switch {
			case !isOld && !isNew:
				t.Fatalf("after a kill at %s DEST -> %s is neither the old channel nor the new one:\nagainst the old:\n%s\nagainst the new:\n%s",
					cp.point, target, treeDiff(oldTree, got), treeDiff(newTree, got))
			case marker && isNew != cp.switched:
				t.Errorf("after a kill at %s DEST shows the new channel: %v, want %v", cp.point, isNew, cp.switched)
			case !marker && !isNew:
				t.Errorf("a publish that ran to the end shows the old channel")
			}
			if o, e, c := b.mkrelease(t, "verify", dest, "--key", pub); c != 0 {
				t.Errorf("verify after a kill at %s: exit %d\n%s\n%s", cp.point, c, o, e)
			}

			// The next publish completes the job (or has nothing to do).
			out, errOut, code = b.mkrelease(t, publishTo(dest)...)
			wantOut := "published demo-app 2.1 to " + dest + " (generation 2, "
			if isNew {
				wantOut = "demo-app 2.1 is already published in " + dest + " with the same bytes: nothing to do"
			}
			if code != 0 || !strings.Contains(out, wantOut) {
				t.Fatalf("publish after a kill at %s: exit %d, want %q\n%s\n%s", cp.point, code, wantOut, out, errOut)
			}
			if got, target := channelTree(t, dest); !sameTree(got, newTree) || target != ".ch.generations/g-000002" {
				t.Errorf("after the next publish DEST -> %s differs from the reference:\n%s", target, treeDiff(newTree, got))
			}
			if o, e, c := b.mkrelease(t, "verify", dest, "--key", pub); c != 0 {
				t.Errorf("verify after the next publish: exit %d\n%s\n%s", c, o, e)
			}
			if got := listDir(t, parent); !slices.Equal(got, []string{".ch.generations", ".ch.lock", "ch"}) {
				t.Errorf("after the next publish DEST's folder holds %v", got)
			}
			if got := listDir(t, filepath.Join(parent, ".ch.generations")); !slices.Equal(got, []string{"g-000001", "g-000002"}) {
				t.Errorf("after the next publish the generations are %v", got)
			}
		})
	}
	t.Logf("killed at %d points: %s", len(hit), strings.Join(hit, " "))
	t.Logf("not reached: %s", strings.Join(missed, " "))
	want := 20 // of 27: the rest are not reached by this publish
	if !testpart.Full() {
		want = points // each sampled point is reached
	}
	if len(hit) < want {
		t.Errorf("the publish was killed at %d points of %d, want at least %d", len(hit), points, want)
	}
}

// publishReadsOnce runs publish (args) in r with the counting hook on, and
// checks what it read of r's release folder: each file hashed once at
// most and each published asset exactly once (the plan, the policy input
// and the summary share those digests), each bundle and evidence archive
// extracted exactly once (the audit's facts serve the selection and the
// evidence check), each asset copied into the channel once.
func publishReadsOnce(t *testing.T, bin string, r run, args []string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "count.log")
	if _, errOut, killed, code := hooked(t, bin, r.dir, append(slices.Clone(r.env), "MKRELEASE_TEST_COUNT="+log), args...); killed || code != 0 {
		t.Fatalf("counted publish: exit %d\n%s", code, errOut)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	folder, err := filepath.Abs(filepath.Join(r.dir, "dist"))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]map[string]int{} // point → file of the folder → times
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		point, key, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("count line %q", line)
		}
		rel, err := filepath.Rel(folder, key)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // a member of an extracted archive, a staged file
		}
		if counts[point] == nil {
			counts[point] = map[string]int{}
		}
		counts[point][filepath.ToSlash(rel)]++
	}
	entries, err := os.ReadDir(folder)
	if err != nil {
		t.Fatal(err)
	}
	var bundles, evidence int
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		if n := counts["hash"][name]; n != 1 {
			t.Errorf("%s hashed %d times, want once", name, n)
		}
		c, _ := dist.Guess(name)
		switch c.Kind {
		case dist.KindBundle, dist.KindEvidence:
			if c.Kind == dist.KindBundle {
				bundles++
			} else {
				evidence++
			}
			if n := counts["extract"][name]; n != 1 {
				t.Errorf("%s extracted %d times, want once", name, n)
			}
		}
	}
	for rel, n := range counts["hash"] {
		if n > 1 {
			t.Errorf("%s hashed %d times", rel, n)
		}
	}
	for rel, n := range counts["copy"] {
		if n != 1 {
			t.Errorf("%s copied into the channel %d times", rel, n)
		}
	}
	if bundles == 0 || evidence == 0 || len(counts["copy"]) == 0 {
		t.Errorf("counted %d bundles, %d evidence archives, %d copies: the hook saw nothing to check", bundles, evidence, len(counts["copy"]))
	}
}
