//go:build linux

package runner

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/procgroup"
	"github.com/mkrelease/mkrelease/internal/proctest"
	"github.com/mkrelease/mkrelease/internal/sandbox"
)

// escapingWorker is a crossover worker that speaks the lane protocol and,
// on the first attempt of each role, starts three children that try to
// outlive it, each sleeping with "MARKER-ROLE-KIND" in its command line:
// one in a process group of its own, one in a session of its own
// (setsid), and one orphaned by a double fork. It waits until all three
// run, then the candidate reports ready and two steps and hangs, and the
// reference hangs before reporting ready. Every later attempt succeeds.
const escapingWorker = `
import hashlib, json, os, subprocess, sys, time

marker, role = sys.argv[1], os.environ["MKRELEASE_ROLE"]

def say(**event):
    print(json.dumps(event), flush=True)

try:
    os.close(os.open(role + ".first", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
except FileExistsError:
    say(event="ready")
    for i in range(int(os.environ["MKRELEASE_STEPS"])):
        say(event="step", i=i, seconds=0.001)
    say(event="result", sha256=hashlib.sha256(os.environ["MKRELEASE_WORKLOAD"].encode()).hexdigest())
    sys.exit(0)

def sleeper(kind):
    up = f"{role}-{kind}.up"
    code = "import sys, time; open(sys.argv[1], 'w').close(); time.sleep(600)"
    return up, [sys.executable, "-c", code, up, f"{marker}-{role}-{kind}"]

ups = []
up, argv = sleeper("pgroup"); ups.append(up)
subprocess.Popen(argv, preexec_fn=lambda: os.setpgid(0, 0))
up, argv = sleeper("setsid"); ups.append(up)
subprocess.Popen(argv, start_new_session=True)
up, argv = sleeper("doublefork"); ups.append(up)
pid = os.fork()
if pid == 0:
    if os.fork() == 0:
        os.execv(sys.executable, argv)
    os._exit(0)
os.waitpid(pid, 0)
while not all(os.path.exists(u) for u in ups):
    time.sleep(0.01)
if role == "candidate":
    say(event="ready")
    say(event="step", i=0, seconds=0.25)
    say(event="step", i=1, seconds=0.5)
time.sleep(600)
`

// childKinds are the ways escapingWorker's children try to outlive it.
var childKinds = []string{"pgroup", "setsid", "doublefork"}

// realPython is the interpreter itself, not a version manager's shim
// (which takes a second to start).
func realPython(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("finds processes in Linux's /proc")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	out, err := exec.Command(python, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("python3: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// uniqueMarker is a marker no other process carries, and kills whatever
// carries it when the test ends.
func uniqueMarker(t *testing.T) string {
	b := make([]byte, 8)
	rand.Read(b)
	marker := "mkrelease-escapee-" + hex.EncodeToString(b)
	t.Cleanup(func() {
		for _, pid := range proctest.WithMarker(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return marker
}

// TestTimedOutWorkerLeavesNothingBehind runs a crossover lane whose
// candidate hangs after reporting two steps and whose first reference
// hangs before reporting ready, both having started children that left
// their process group, their session or their parent: when their time is
// up, every one of those children is gone with them, and the evidence
// keeps both attempts (timeout, and a start-up failure that was retried).
// The workers run in the lane's sandbox, as where bubblewrap works, and
// in a procgroup.Containment, as where it does not.
func TestTimedOutWorkerLeavesNothingBehind(t *testing.T) {
	python := realPython(t)
	t.Run("sandboxed", func(t *testing.T) {
		bw, err := sandbox.Probe(context.Background(), "")
		if err != nil {
			t.Skipf("no sandbox here: %v", err)
		}
		// The worker runs on the python of a virtualenv, which the
		// sandbox shows with its interpreter, from a read-only folder; it
		// writes in its own.
		venv := filepath.Join(t.TempDir(), "venv")
		if out, err := exec.Command(python, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
			t.Fatalf("make a virtualenv: %v\n%s", err, out)
		}
		shown, err := interpreterPaths(context.Background(), venv, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkTimedOutWorker(t, bundle.VenvPython(venv), func(scripts, own string) *laneBox {
			ls := laneSandbox{bwrap: bw, shown: append(shown, scripts), etc: t.TempDir()}
			return ls.lane(config.Lane{Name: "speed"}, venv, own, own)
		})
	})
	t.Run("contained", func(t *testing.T) {
		if c := procgroup.ProbeContainment(context.Background()); !c.PIDNamespace {
			t.Skipf("workers cannot be confined here: %s", c.Caveat)
		}
		checkTimedOutWorker(t, python, func(string, string) *laneBox { return nil })
	})
}

// checkTimedOutWorker is TestTimedOutWorkerLeavesNothingBehind with the
// worker run by python, in the sandbox box returns for the folders of the
// worker's script (read-only) and its own (none: contained).
func checkTimedOutWorker(t *testing.T, python string, box func(scripts, own string) *laneBox) {
	marker := uniqueMarker(t)
	dir, scripts := t.TempDir(), t.TempDir()
	script := filepath.Join(scripts, "worker.py")
	if err := os.WriteFile(script, []byte(escapingWorker), 0o644); err != nil {
		t.Fatal(err)
	}
	const limit = 3 * time.Second
	l := config.Lane{Name: "speed", Kind: config.LaneCrossover, Timeout: config.Duration{Duration: limit}, Steps: 4, Warmups: 1,
		Candidate: []string{python, script, marker}, Reference: []string{python, script, marker},
		Workloads: []config.Workload{{Name: "add", Phase: "p1"}}}
	env := laneEnv{
		vars:   map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir, "TMPDIR": dir},
		expand: map[string]string{},
		dir:    dir,
		log:    t.Logf,
		box:    box(scripts, dir),
	}
	start := time.Now()
	ms, err := runCrossover(context.Background(), l, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the lane took %s", time.Since(start).Round(10*time.Millisecond))

	// Every child ran (it wrote its file), and none outlived its worker.
	for _, role := range []string{evidence.RoleCandidate, evidence.RoleReference} {
		for _, kind := range childKinds {
			if _, err := os.Stat(filepath.Join(dir, role+"-"+kind+".up")); err != nil {
				t.Errorf("the %s's %s child never ran: %v", role, kind, err)
			}
		}
	}
	if left := survivors(marker); len(left) > 0 {
		t.Errorf("processes outlived their timed-out workers:\n%s", strings.Join(left, "\n"))
	}

	// The records: slot 1 timed out with its two steps; slot 2 failed to
	// start in time and was retried; the rest succeeded.
	type want struct {
		slot, attempt int
		outcome       string
		steps         int
		error         string
	}
	wants := []want{
		{1, 1, evidence.OutcomeTimeout, 2, "timed out after 3s, at step 2 of 4"},
		{2, 1, evidence.OutcomeStartupFailure, 0, "timed out after 3s before reporting ready"},
		{2, 2, evidence.OutcomeOK, 4, ""},
		{3, 1, evidence.OutcomeOK, 4, ""},
		{4, 1, evidence.OutcomeOK, 4, ""},
	}
	checkRecords := func(from string, ms []evidence.Measurement) {
		t.Helper()
		if len(ms) != len(wants) {
			t.Fatalf("%s: %d measurements, want %d: %+v", from, len(ms), len(wants), ms)
		}
		for i, w := range wants {
			m := ms[i]
			if m.Slot != w.slot || m.Attempt != w.attempt || m.Outcome != w.outcome || len(m.Steps) != w.steps || m.Error != w.error {
				t.Errorf("%s: record %d: slot %d attempt %d %s, %d steps, error %q; want slot %d attempt %d %s, %d steps, error %q",
					from, i, m.Slot, m.Attempt, m.Outcome, len(m.Steps), m.Error, w.slot, w.attempt, w.outcome, w.steps, w.error)
			}
		}
		if got := ms[0].Steps; !slices.Equal(got, []float64{0.25, 0.5}) {
			t.Errorf("%s: the timed-out worker's steps %v, want the two it reported, [0.25 0.5]", from, got)
		}
	}
	checkRecords("runCrossover", ms)

	// What is written: measurements.jsonl, the store, the recomputed
	// summary and the report.
	sum, err := Recompute([]config.Lane{l}, nil, ms)
	if err != nil {
		t.Fatal(err)
	}
	run := store.Run{ID: "run-1", Target: "linux-x86_64", SourcesTreeHash: hex64('d'), Interpreter: "CPython 3.12.0",
		Lanes: []string{"speed"}, Protocol: store.Protocol{Steps: 4, WarmUps: 1}}
	cfg := &config.Config{Project: config.Project{NormalizedName: "demo", Version: "1.0"}}
	stage := filepath.Join(t.TempDir(), "evidence")
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if err := writeStage(stage, cfg, "linux-x86_64", run, []config.Lane{l}, hostWatch{}, nil, ms, sum, at, at); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(stage, "speed", "measurements.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var written []evidence.Measurement
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var m evidence.Measurement
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		written = append(written, m)
	}
	checkRecords("measurements.jsonl", written)
	st, err := store.Open(filepath.Join(stage, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored, err := st.Measurements()
	if err != nil {
		t.Fatal(err)
	}
	checkRecords("the store", stored)

	var ls LaneSummary
	data, err := os.ReadFile(filepath.Join(stage, "speed", "summary.json"))
	if err == nil {
		err = json.Unmarshal(data, &ls)
	}
	if err != nil || ls.Crossover == nil || len(ls.Crossover.Workloads) != 1 {
		t.Fatalf("summary.json: %v\n%s", err, data)
	}
	w := ls.Crossover.Workloads[0]
	if w.Usable || len(w.Failures) != 1 || w.Failures[0].Slot != 1 || w.Failures[0].Attempt != 1 || w.Failures[0].Outcome != evidence.OutcomeTimeout {
		t.Errorf("summary: usable %v, failures %+v; want slot 1 attempt 1 timeout", w.Usable, w.Failures)
	}
	if res, err := stats.Workload(written, l.Warmups); err != nil || res.Workers[1].Attempt != 2 || res.Workers[1].Attempts != 2 {
		t.Errorf("recomputed from measurements.jsonl: %+v, %v; want slot 2's attempt 2 of 2 chosen", res.Workers, err)
	}
	if md, _ := os.ReadFile(filepath.Join(stage, "speed", "report.md")); !strings.Contains(string(md), "unusable: slot 1 timeout") {
		t.Errorf("report.md does not show the timed-out attempt:\n%s", md)
	}
}

// TestEscapingWorkerOutlivesAPlainKill is the negative control of
// TestTimedOutWorkerLeavesNothingBehind: the same worker, started as a
// plain command and killed alone once it reported ready, leaves its three
// children running, which the check finds.
func TestEscapingWorkerOutlivesAPlainKill(t *testing.T) {
	python := realPython(t)
	marker := uniqueMarker(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "worker.py")
	if err := os.WriteFile(script, []byte(escapingWorker), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, script, marker)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MKRELEASE_ROLE=candidate")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	if strings.TrimSpace(line) != `{"event": "ready"}` {
		t.Fatalf("the worker said %q (%v), want ready", line, err)
	}
	left := survivors(marker)
	for _, kind := range childKinds {
		if !slices.ContainsFunc(left, func(s string) bool { return strings.HasSuffix(s, marker+"-candidate-"+kind) }) {
			t.Errorf("the %s child did not outlive its killed worker; survivors:\n%s", kind, strings.Join(left, "\n"))
		}
	}
}

// survivors describes the live processes carrying marker.
func survivors(marker string) []string {
	var out []string
	for _, pid := range proctest.WithMarker(marker) {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		out = append(out, "  "+strconv.Itoa(pid)+": "+strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
	}
	return out
}
