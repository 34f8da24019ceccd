package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/evidence"
)

// fakeVerifier is a verifier with small, deterministic lanes that show
// every way a lane can go wrong. Its cases lane imports the installed
// release (so it runs against the bundle's wheels); its worker misbehaves
// by workload.
var fakeVerifier = map[string]string{
	"cases.py": `import json, os
import demo_app

def case(**c):
    with open(os.environ["MKRELEASE_CASES"], "a") as f:
        f.write(json.dumps(c) + "\n")

case(id="answer", status="PASS" if demo_app.answer() == 42 else "FAIL", tier="1",
     metrics={"value": demo_app.answer()}, tolerance={"abs": 0}, duration_s=0.01)
case(id="math/bad", status="FAIL", tier="1", metrics={"got": 3, "want": 4},
     tolerance={"abs": 0}, duration_s=0.02, message="2 + 2 gave 3")
case(id="skipped", status="SKIP", tier="2", duration_s=0, message="not on this platform")
# The lane's own HOME and TMPDIR are scratch folders mkrelease replaces by
# placeholders: recording them is fine.
case(id="home", status="PASS", tier="2", duration_s=0,
     message="config in " + os.path.expanduser("~") + ", scratch in " + os.environ["TMPDIR"])
`,
	"leak.py": `import json, os, sys
what = sys.argv[1]
message = {"home": "read /home/alice/.config/demo.toml",
           "token": "auth with ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}[what]
with open(os.environ["MKRELEASE_CASES"], "a") as f:
    f.write(json.dumps({"id": "reads-config", "status": "PASS", "duration_s": 0.01, "message": message}) + "\n")
`,
	"worker.py": `import hashlib, json, os, sys, time

workload = os.environ["MKRELEASE_WORKLOAD"]
role = os.environ["MKRELEASE_ROLE"]
steps = int(os.environ["MKRELEASE_STEPS"])
if os.environ.get("MKRELEASE_WARMUPS") != "1":  # the lane's warmups
    sys.exit("MKRELEASE_WARMUPS is %r, want '1'" % os.environ.get("MKRELEASE_WARMUPS"))

def emit(**event):
    print(json.dumps(event), flush=True)

if workload == "ref-startup" and role == "reference":
    marker = os.path.join(os.environ["TMPDIR"], "ref-startup-crashed")
    if not os.path.exists(marker):
        open(marker, "w").close()
        sys.exit(3)  # dies before reporting ready: a start-up failure
emit(event="ready")
pause = 0.004 if role == "candidate" else 0.008
for i in range(steps):
    if workload == "cand-crash" and role == "candidate" and i == 2:
        sys.exit(4)
    if workload == "ref-late" and role == "reference" and i == 2:
        sys.exit(5)
    if workload == "hang" and role == "candidate" and i == 1:
        time.sleep(3600)
    t0 = time.perf_counter()
    time.sleep(pause)
    emit(event="step", i=i, seconds=time.perf_counter() - t0)
result = b"wrong" if workload == "wrong" and role == "candidate" else b"right"
emit(event="result", sha256=hashlib.sha256(result).hexdigest())
`,
}

const fakeLanes = `
[evidence]
verifier = "verifier"

[[evidence.lane]]
name = "cases"
kind = "cases"
run = ["${PYTHON}", "${VERIFIER}/cases.py"]

[[evidence.lane]]
name = "leak-home"
kind = "cases"
run = ["${PYTHON}", "${VERIFIER}/leak.py", "home"]

[[evidence.lane]]
name = "leak-token"
kind = "cases"
run = ["${PYTHON}", "${VERIFIER}/leak.py", "token"]

[[evidence.lane]]
name = "speed"
kind = "crossover"
candidate = ["${PYTHON}", "${VERIFIER}/worker.py"]
reference = ["${PYTHON}", "${VERIFIER}/worker.py"]
steps = 6
warmups = 1
timeout = "4s"
max_host_load = 0 # the workers time sleeps to test outcomes, not the wheels: no load watch
`

var fakeWorkloads = []string{"ok", "wrong", "cand-crash", "ref-startup", "ref-late", "hang"}

// TestEvidenceFakeLanes runs small fake lanes against a built release and
// checks exactly what the evidence records: a FAIL case, a wrong result,
// a candidate crash (not retried), a reference start-up crash (retried
// once, both attempts kept), a reference crash after start-up (not
// retried), a hanging worker (timed out), and lanes that write a home path
// or a token (rejected, naming file and offset, nothing written).
func TestEvidenceFakeLanes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release and installs it in virtualenvs")
	}
	r := closureProject(t)
	lanes := fakeLanes
	for _, w := range fakeWorkloads {
		phase := "p1"
		if w == "ref-startup" || w == "ref-late" || w == "hang" {
			phase = "p2"
		}
		lanes += fmt.Sprintf("\n[[evidence.lane.workload]]\nname = %q\nphase = %q\n", w, phase)
	}
	cfg, err := os.ReadFile(filepath.Join(r.dir, "release.toml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(r.dir, "release.toml"), string(cfg)+lanes)
	for name, src := range fakeVerifier {
		write(t, filepath.Join(r.dir, "verifier", name), src)
	}
	r.mustMkrelease(t, "build")
	dist := filepath.Join(r.dir, "dist")
	name := evidenceRoot("demo-app", "2.0", "linux-x86_64")
	archive := filepath.Join(dist, name+".tar.gz")

	t.Run("leaks are rejected", func(t *testing.T) {
		for _, tt := range []struct{ lane, kind, secret string }{
			{"leak-home", "home-path", "/home/alice"},
			{"leak-token", "github-token", "ghp_"},
		} {
			out, errOut, code := r.mkrelease(t, "evidence", "run", "--lane", tt.lane)
			if code != 1 {
				t.Fatalf("%s: exit %d, want 1\n%s\n%s", tt.lane, code, out, errOut)
			}
			// The offset is where the value sits in the staged records file:
			// the first line, as mkrelease encodes a case.
			line, _ := json.Marshal(evidence.Case{Lane: tt.lane, ID: "reads-config", Status: "PASS", Duration: 0.01,
				Message: map[string]string{"leak-home": "read /home/alice/.config/demo.toml",
					"leak-token": "auth with ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}[tt.lane]})
			offset := bytes.Index(line, []byte(tt.secret))
			want := fmt.Sprintf("%s/cases.jsonl: offset %d: %s", tt.lane, offset, tt.kind)
			if !strings.Contains(errOut, want) || !strings.Contains(errOut, "the evidence was rejected") {
				t.Errorf("%s: stderr does not name %q:\n%s", tt.lane, want, errOut)
			}
			if strings.Contains(errOut, "A1b2C3d4E5f6") {
				t.Errorf("%s: the refusal repeats the secret:\n%s", tt.lane, errOut)
			}
			if m, _ := filepath.Glob(filepath.Join(dist, "*"+evidenceInfix+"*")); len(m) != 0 {
				t.Errorf("%s: rejected evidence left files behind: %v", tt.lane, m)
			}
		}
	})

	out, errOut, code := r.mkrelease(t, "evidence", "run", "--lane", "cases", "--lane", "speed")
	if code != 1 {
		t.Fatalf("evidence run: exit %d, want 1 (written, but lanes failed)\n%s\n%s", code, out, errOut)
	}
	t.Run("report", func(t *testing.T) {
		for _, want := range []string{
			"FAIL  linux-x86_64 cases: 4 cases: 2 passed, 1 failed, 0 errors, 1 skipped\n        FAIL math/bad\n",
			"FAIL  linux-x86_64 speed: 6 workloads, 4 unusable; overall r = ",
			"        unusable wrong (slot 1 candidate: wrong result; slot 4 candidate: wrong result)\n",
			"        unusable cand-crash (slot 1 candidate: crash; slot 4 candidate: crash)\n",
			"        unusable ref-late (slot 2 reference: crash; slot 3 reference: crash)\n",
			"        unusable hang (slot 1 candidate: timeout; slot 4 candidate: timeout)\n",
			"wrote " + filepath.Join("dist", name+".tar.gz"),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(errOut, "not every lane passed") {
			t.Errorf("stderr does not say the lanes failed:\n%s", errOut)
		}
	})

	t.Run("attempts", func(t *testing.T) {
		type attempt struct {
			slot, attempt int
			role, outcome string
		}
		want := map[string][]attempt{
			"ok":          {{1, 1, "candidate", "ok"}, {2, 1, "reference", "ok"}, {3, 1, "reference", "ok"}, {4, 1, "candidate", "ok"}},
			"wrong":       {{1, 1, "candidate", "wrong-result"}, {2, 1, "reference", "ok"}, {3, 1, "reference", "ok"}, {4, 1, "candidate", "wrong-result"}},
			"cand-crash":  {{1, 1, "candidate", "failure"}, {2, 1, "reference", "ok"}, {3, 1, "reference", "ok"}, {4, 1, "candidate", "failure"}},
			"ref-startup": {{1, 1, "candidate", "ok"}, {2, 1, "reference", "startup-failure"}, {2, 2, "reference", "ok"}, {3, 1, "reference", "ok"}, {4, 1, "candidate", "ok"}},
			"ref-late":    {{1, 1, "candidate", "ok"}, {2, 1, "reference", "failure"}, {3, 1, "reference", "failure"}, {4, 1, "candidate", "ok"}},
			"hang":        {{1, 1, "candidate", "timeout"}, {2, 1, "reference", "ok"}, {3, 1, "reference", "ok"}, {4, 1, "candidate", "timeout"}},
		}
		got := map[string][]attempt{}
		for _, m := range readMeasurements(t, archive, name+"/speed/measurements.jsonl") {
			got[m.Workload] = append(got[m.Workload], attempt{m.Slot, m.Attempt, m.Role, m.Outcome})
			if m.Outcome == "ok" && len(m.Steps) != 6 {
				t.Errorf("%s slot %d: %d steps, want 6", m.Workload, m.Slot, len(m.Steps))
			}
		}
		for w, as := range want {
			if fmt.Sprint(got[w]) != fmt.Sprint(as) {
				t.Errorf("%s: attempts %v, want %v", w, got[w], as)
			}
		}
	})

	t.Run("verify accepts the evidence", func(t *testing.T) {
		out, errOut, code := r.mkrelease(t, "verify", dist, "--key", filepath.Join(r.dir, ".mkrelease", "dev.pub"))
		if code != 0 || !strings.Contains(out, name+".tar.gz: aggregates") {
			t.Errorf("verify: exit %d\n%s\n%s", code, out, errOut)
		}
	})

	t.Run("evidence for other wheels is refused", func(t *testing.T) {
		// Rebuild with a changed wheel: the evidence beside it is for the old
		// digest, so the rebuild drops it (keep a copy aside first).
		aside := t.TempDir()
		for _, f := range []string{name + ".tar.gz", name + ".intoto.jsonl"} {
			copyFile(t, filepath.Join(dist, f), filepath.Join(aside, f))
		}
		write(t, filepath.Join(r.dir, "py", "demo_app", "__init__.py"), "import example\nimport wheel\n\ndef answer():\n    return 43\n")
		r.mustMkrelease(t, "lock")
		_, buildErr, code := r.mkrelease(t, "build")
		if code != 0 || !strings.Contains(buildErr, "dropped the verifier evidence of the previous build evidence="+name+".tar.gz target=") ||
			!strings.Contains(buildErr, "it is for other wheels: demo_app-2.0-py3-none-any.whl was ") {
			t.Errorf("rebuild with a changed wheel: exit %d, want a warning that the evidence was dropped and why\n%s", code, buildErr)
		}
		out, errOut, code := r.mkrelease(t, "evidence", "import", filepath.Join(aside, name+".tar.gz"), "--key", filepath.Join(r.dir, ".mkrelease", "dev.pub"))
		want := "identity: demo_app-2.0-py3-none-any.whl: the evidence is for sha256 "
		if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, "evidence for other wheels") {
			t.Errorf("import: exit %d, want 1 naming %q\n%s\n%s", code, want, out, errOut)
		}
		if m, _ := filepath.Glob(filepath.Join(dist, "*"+evidenceInfix+"*")); len(m) != 0 {
			t.Errorf("refused evidence was imported: %v", m)
		}
	})
}

func readMeasurements(t *testing.T, archive, member string) []evidence.Measurement {
	t.Helper()
	out, err := exec.Command("tar", "-xzOf", archive, member).Output()
	if err != nil {
		t.Fatalf("tar -xzOf %s %s: %v", archive, member, err)
	}
	var ms []evidence.Measurement
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m evidence.Measurement
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// checkEvidence runs the embedded default's verifier lanes on the built
// release a: every lane passes (the other targets, which cannot run here,
// are skipped with the remedy), mkrelease verify accepts the evidence, and
// the evidence imports into the independent build b, whose wheels are the
// same bytes.
// checkEvidence runs the README's main command, `mkrelease release`, which
// gathers the evidence of the embedded default and publishes it, then
// checks the evidence and what was published. It copies the x86_64
// evidence (archive and statements) into keep, which outlives the test.
func checkEvidence(t *testing.T, a, b run, keep string) {
	relOut, errOut := releaseDefault(t, a)
	defer t.Run("published", func(t *testing.T) { checkRelease(t, a, relOut) })
	out := relOut
	for _, lane := range []string{"semantic", "semantic-baseline", "determinism", "throughput"} {
		if !strings.Contains(out, "PASS  linux-x86_64 "+lane+": ") {
			t.Errorf("lane %s did not pass:\n%s", lane, out)
		}
	}
	if strings.Contains(out, "FAIL") {
		t.Errorf("a lane failed:\n%s", out)
	}
	for _, tg := range targets[1:] {
		if !strings.Contains(errOut, "skipped a target this machine cannot run target="+tg.name) {
			t.Errorf("the %s target was not skipped with a warning:\n%s", tg.name, errOut)
		}
	}
	name := evidenceRoot("vexl", "0.3.0", "linux-x86_64")
	pubA := filepath.Join(a.dir, ".mkrelease", "dev.pub")
	out, errOut, code := a.mkrelease(t, "verify", filepath.Join(a.dir, "dist"), "--key", pubA)
	if code != 0 || !strings.Contains(out, "ok    "+filepath.Join(a.dir, "dist", name+".tar.gz")+": identity") {
		t.Fatalf("verify dist: exit %d\n%s\n%s", code, out, errOut)
	}
	// The archive's own sidecar is checkable with sha256sum -c.
	cmd := exec.Command("sha256sum", "-c", name+".tar.gz.sha256", name+".intoto.jsonl.sha256")
	cmd.Dir = filepath.Join(a.dir, "dist")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}

	aside := keep
	for _, f := range []string{name + ".tar.gz", name + ".intoto.jsonl"} {
		copyFile(t, filepath.Join(a.dir, "dist", f), filepath.Join(aside, f))
	}
	if b.dir == "" {
		return // the whole suite moves the evidence to a second build
	}
	out, errOut, code = b.mkrelease(t, "evidence", "import", filepath.Join(aside, name+".tar.gz"), "--key", pubA)
	if code != 0 || !strings.Contains(out, "imported ") {
		t.Fatalf("evidence import into the second build: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = b.mkrelease(t, "verify", filepath.Join(b.dir, "dist"), "--key", pubA)
	if code != 0 {
		t.Errorf("verify of the second build with imported evidence: exit %d\n%s\n%s", code, out, errOut)
	}
	// Without the key that signed it, the same import is refused.
	os.Remove(filepath.Join(b.dir, "dist", name+".tar.gz"))
	_, errOut, code = b.mkrelease(t, "evidence", "import", filepath.Join(aside, name+".tar.gz"))
	if code != 1 || !strings.Contains(errOut, "signature: ") {
		t.Errorf("import without the signer's key: exit %d, want 1 with signature findings\n%s", code, errOut)
	}
}

// shortThroughput cuts the throughput lane of the embedded default's
// release.toml in dir down to the first workload of each phase (2 of 11):
// the same protocol (steps, warm-ups, the candidate and the reference
// alternating in each worker, the noise bound), on fewer workloads, so that
// the default part of the suite gathers evidence in about a minute instead
// of four or five. The policies judge the workloads the lane declares, so
// the short lane passes or fails by the same rules.
func shortThroughput(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "release.toml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const block = "[[evidence.lane.workload]]\n"
	src := string(b)
	lane := strings.Index(src, "name = \"throughput\"\n")
	if lane < 0 {
		t.Fatal("release.toml has no throughput lane")
	}
	first := lane + strings.Index(src[lane:], block)
	rest := src[first:]
	// The lane's workloads run up to the next table that is not one.
	end := len(rest)
	for i := len(block); i < len(rest); {
		j := strings.Index(rest[i:], "\n[")
		if j < 0 {
			break
		}
		i += j + 1
		if !strings.HasPrefix(rest[i:], block) {
			end = i
			break
		}
		i += len(block)
	}
	var kept []string
	seen := map[string]bool{}
	for _, w := range strings.SplitAfter(rest[:end], block)[1:] {
		w = strings.TrimSuffix(w, block)
		m := regexp.MustCompile(`(?m)^phase = "([^"]+)"`).FindStringSubmatch(w)
		if m == nil {
			t.Fatalf("a throughput workload without a phase:\n%s", w)
		}
		if !seen[m[1]] {
			seen[m[1]] = true
			kept = append(kept, block+strings.TrimRight(w, "\n")+"\n\n")
		}
	}
	if len(kept) < 2 {
		t.Fatalf("throughput lane: %d phases, want at least 2", len(kept))
	}
	short := src[:first] + strings.Join(kept, "") + rest[end:]
	if err := os.WriteFile(p, []byte(short), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("short throughput lane: %d workloads, one per phase", len(kept))
}

// TestShortThroughput checks the cut the default part makes: one workload
// per phase left, everything else of release.toml as it was, and the
// result still a configuration `mkrelease check` accepts.
func TestShortThroughput(t *testing.T) {
	t.Parallel() // see parallelTests in e2e_test.go
	dir := project(t, t.TempDir())
	before, _ := os.ReadFile(filepath.Join(dir, "release.toml"))
	shortThroughput(t, dir)
	after, _ := os.ReadFile(filepath.Join(dir, "release.toml"))
	count := func(b []byte) int { return strings.Count(string(b), "[[evidence.lane.workload]]") }
	if count(before) < 4 || count(after) != 2 {
		t.Fatalf("workloads: %d before, %d after; want 2 after (one per phase)", count(before), count(after))
	}
	for _, keep := range []string{`name = "axpy-f64"`, `name = "muladd-chain-f64"`, "[policy]", "steps = 12", `name = "determinism"`} {
		if !strings.Contains(string(after), keep) {
			t.Errorf("the short release.toml lost %s", keep)
		}
	}
	if strings.Contains(string(after), `name = "polynomial-f64"`) {
		t.Error("the short release.toml kept a second elementwise workload")
	}
	r := run{dir: dir, umask: "022", env: []string{"HOME=" + t.TempDir(), "MKRELEASE_CACHE=" + t.TempDir()}}
	r.mustMkrelease(t, "check")
}
