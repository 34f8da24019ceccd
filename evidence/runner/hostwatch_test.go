package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/hostload"
	"github.com/mkrelease/mkrelease/internal/progress"
)

// shWorker is a crossover worker in sh: ready, $MKRELEASE_STEPS steps of
// $STEP_SLEEP seconds each (none: no sleep), the workload's digest.
const shWorker = `printf '{"event": "ready"}\n'
i=0
while [ "$i" -lt "$MKRELEASE_STEPS" ]; do
  [ -n "$STEP_SLEEP" ] && sleep "$STEP_SLEEP"
  printf '{"event": "step", "i": %d, "seconds": 0.01}\n' "$i"
  i=$((i+1))
done
printf '{"event": "result", "sha256": "%s"}\n' ` + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// output is what a run prints on stderr off a terminal: the log lines
// and the progress meter's plain lines, in order.
type output struct {
	mu    sync.Mutex
	b     strings.Builder
	meter *progress.Meter
}

func newOutput() *output {
	o := &output{}
	o.meter = progress.New(writerFunc(func(p []byte) (int, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.b.Write(p)
	}), progress.Options{})
	return o
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// log is a laneEnv's log, as the command's logger writes it.
func (o *output) log(format string, args ...any) {
	fmt.Fprintf(o.meter.Writer(), "mkrelease: "+format+"\n", args...)
}

func (o *output) lines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Split(strings.TrimSpace(o.b.String()), "\n")
}

// shEnv is a lane environment whose commands find sh, writing to o.
func shEnv(t *testing.T, o *output) laneEnv {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	dir := t.TempDir()
	return laneEnv{vars: map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir, "TMPDIR": dir},
		expand: map[string]string{}, dir: dir, log: o.log}
}

// TestCasesLaneEndPrintedOnce: a cases lane's end is one line, whose
// counts are those of the records the summary counts, whether the lane
// writes its cases as it goes or all at its end (as the example's
// determinism lane does: the progress count then saw none, and a second
// line said "cases: 0"); the progress figures never exceed it.
func TestCasesLaneEndPrintedOnce(t *testing.T) {
	for _, tt := range []struct {
		name, script string
		want         string // the end line, but its time
	}{
		{"as it goes", `for i in 1 2 3 4 5; do printf '{"id": "c%d", "status": "PASS", "duration_s": 0.1}\n' $i >> "$MKRELEASE_CASES"; sleep 0.3; done`,
			"5 cases in _: 5 passed, 0 failed, 0 errors, 0 skipped"},
		{"all at the end", `sleep 1.2; for i in 1 2 3 4 5 6 7; do printf '{"id": "c%d", "status": "PASS", "duration_s": 0.1}\n' $i >> "$MKRELEASE_CASES"; done`,
			"7 cases in _: 7 passed, 0 failed, 0 errors, 0 skipped"},
		{"a bad line, a failure, a blank line and an exit status", `sleep 1.1; printf '{"id": "a", "status": "PASS", "duration_s": 0}\n\n{"id": "b", "status": "FAIL", "duration_s": 0}\nnot json\n{"id": "c", "status": "SKIP", "duration_s": 0}\n' > "$MKRELEASE_CASES"; exit 3`,
			// a, b, c; the bad line and the exit status are errors.
			"5 cases in _: 1 passed, 1 failed, 2 errors, 1 skipped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOutput()
			env := shEnv(t, o)
			l := config.Lane{Name: "sem", Kind: config.LaneCases, Run: []string{"sh", "-c", tt.script},
				Timeout: config.Duration{Duration: time.Minute}, CaseTimeout: config.Duration{Duration: time.Minute}}
			ctx := progress.NewContext(context.Background(), o.meter)
			cases, _, err := runCases(ctx, l, env, env.dir+"/cases.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			lines := o.lines()
			t.Logf("output:\n%s", strings.Join(lines, "\n"))
			end := regexp.MustCompile(`^mkrelease: lane sem: (.*) in [0-9.]+m?s(.*)$`)
			var ends []string
			for _, line := range lines {
				if m := end.FindStringSubmatch(line); m != nil {
					ends = append(ends, m[1]+" in _"+m[2])
				}
			}
			if len(ends) != 1 || ends[0] != tt.want {
				t.Fatalf("end lines %q, want one: %q", ends, tt.want)
			}
			// The counts are the summary's, which `evidence run` prints.
			sum, err := Recompute([]config.Lane{l}, cases, nil)
			if err != nil {
				t.Fatal(err)
			}
			n := sum.Lanes[0].Cases.Counts
			if want := fmt.Sprintf("%d cases in _: %d passed, %d failed, %d errors, %d skipped", n.Total, n.Pass, n.Fail, n.Error+n.Invalid, n.Skip); ends[0] != want {
				t.Errorf("end line %q, summary %q", ends[0], want)
			}
			// A progress line while it ran shows no more than that.
			prog := regexp.MustCompile(`^mkrelease: lane sem: cases (\d+)`)
			for _, line := range lines {
				if m := prog.FindStringSubmatch(line); m != nil {
					var k int
					fmt.Sscan(m[1], &k)
					if k > n.Total {
						t.Errorf("progress %q shows more than the %d cases recorded", line, n.Total)
					}
				}
			}
		})
	}
}

// TestCountLines: the progress count is the lines readCases reads as
// records: complete, not blank.
func TestCountLines(t *testing.T) {
	for data, want := range map[string]int{
		"":                0,
		"a\n":             1,
		"a\n\n \t\r\nb\n": 2,
		"a\nb":            1, // b is not complete yet
		"\u00a0\n":        0, // blank to bytes.TrimSpace too
		strings.Repeat("x", 100<<10) + "\n" + strings.Repeat(" ", 70<<10) + "\n": 1,
	} {
		file := t.TempDir() + "/cases.jsonl"
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := countLines(file); got != want {
			t.Errorf("countLines(%.20q...) = %d, want %d", data, got, want)
		}
	}
}

// crossoverLane is a crossover lane of the sh worker over n workloads.
func crossoverLane(n int, laneTimeout, workerTimeout time.Duration) config.Lane {
	l := config.Lane{Name: "speed", Kind: config.LaneCrossover, Steps: 4, Warmups: 1,
		Candidate: []string{"sh", "-c", shWorker}, Reference: []string{"sh", "-c", shWorker},
		Timeout: config.Duration{Duration: workerTimeout}, LaneTimeout: config.Duration{Duration: laneTimeout}}
	for i := range n {
		l.Workloads = append(l.Workloads, config.Workload{Name: fmt.Sprintf("w%d", i+1), Phase: "p"})
	}
	return l
}

// TestCrossoverProgress: after each workload but the last a line says
// how far the lane is and how long it may still take; its end is one
// line, whose count of workloads is the summary's.
func TestCrossoverProgress(t *testing.T) {
	o := newOutput()
	env := shEnv(t, o)
	l := crossoverLane(3, 10*time.Minute, time.Minute)
	ctx := progress.NewContext(context.Background(), o.meter)
	ms, err := runCrossover(ctx, l, env)
	if err != nil {
		t.Fatal(err)
	}
	lines := o.lines()
	t.Logf("output:\n%s", strings.Join(lines, "\n"))
	want := []*regexp.Regexp{
		regexp.MustCompile(`^mkrelease: lane speed: 3 workloads, at most 10m0s \(lane_timeout\)$`),
		regexp.MustCompile(`^mkrelease: lane speed: 1/3 workloads, \d+s elapsed, at most (10m0s|9m[0-5]?\ds) left$`),
		regexp.MustCompile(`^mkrelease: lane speed: 2/3 workloads, \d+s elapsed, at most (10m0s|9m[0-5]?\ds) left$`),
		regexp.MustCompile(`^mkrelease: lane speed: 3 workloads, 12 workers \(12 attempts\) in [0-9.]+m?s$`),
	}
	var got []string
	for _, line := range lines {
		// Not the workers' lines, nor the progress meter's (every 5 s).
		if strings.HasPrefix(line, "mkrelease: lane speed: ") && !strings.Contains(line, " slot ") && !strings.Contains(line, "not fully confined") &&
			!strings.HasPrefix(line, "mkrelease: lane speed: workers ") {
			got = append(got, line)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("lane lines:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i, re := range want {
		if !re.MatchString(got[i]) {
			t.Errorf("line %d %q, want %s", i, got[i], re)
		}
	}
	sum, err := Recompute([]config.Lane{l}, nil, ms)
	if err != nil {
		t.Fatal(err)
	}
	if x := sum.Lanes[0].Crossover; len(x.Workloads) != 3 || x.Unusable != 0 {
		t.Errorf("summary: %d workloads, %d unusable; want 3, 0", len(x.Workloads), x.Unusable)
	}
}

// TestLaneTimeoutStopsTheLane: a lane that runs out of its lane_timeout
// stops at once, its worker included, with the refusal naming the bound
// and what to do; the worker's own timeout is far off.
func TestLaneTimeoutStopsTheLane(t *testing.T) {
	o := newOutput()
	env := shEnv(t, o)
	env.vars["STEP_SLEEP"] = "1"
	l := crossoverLane(2, 1500*time.Millisecond, time.Minute)
	start := time.Now()
	ms, err := runCrossover(context.Background(), l, env)
	took := time.Since(start)
	var stopped *LaneStoppedError
	if !errors.As(err, &stopped) || stopped.Rule != RuleLaneTimeout || ms != nil {
		t.Fatalf("runCrossover = %d measurements, %v; want a lane_timeout refusal", len(ms), err)
	}
	if took > 10*time.Second {
		t.Errorf("the lane stopped after %s, its lane_timeout is 1.5s", took)
	}
	msg := err.Error()
	for _, s := range []string{"[evidence.lane_timeout] speed: the lane ran longer than its lane_timeout 1.5s and was stopped in workload 1 of 2 (w1); no evidence was written",
		"Rerun on an idle machine (`mkrelease evidence run`)", "raise lane_timeout in its [[evidence.lane]] table of release.toml"} {
		if !strings.Contains(msg, s) {
			t.Errorf("refusal %q does not say %q", msg, s)
		}
	}
	if stopped.ExitCode() != 1 {
		t.Errorf("exit code %d", stopped.ExitCode())
	}
}

// replay is a hostWatch whose samples say the run queue is queue on 2
// CPUs, one sample a (pretended) second, taken every 10 ms.
func replay(queue int) hostWatch {
	var mu sync.Mutex
	t0, i := time.Unix(1796669865, 0), 0
	return hostWatch{
		read: func() (hostload.Sample, error) {
			mu.Lock()
			defer mu.Unlock()
			i++
			return hostload.Sample{At: t0.Add(time.Duration(i) * time.Second), Running: queue,
				CPU: hostload.CPUTimes{User: uint64(100 * i), Idle: uint64(100 * i), StealKnown: true}}, nil
		},
		cpus: hostload.CPUs{Online: 2, Allowed: 2}, policy: hostload.DefaultPolicy, interval: 10 * time.Millisecond,
	}
}

// TestHostTooBusyStopsTheLane: a crossover lane whose host is too busy
// stops at once with the load's refusal; on an idle host (the negative
// control) the same lane runs to its end.
func TestHostTooBusyStopsTheLane(t *testing.T) {
	o := newOutput()
	env := shEnv(t, o)
	env.vars["STEP_SLEEP"] = "1"
	env.watch = replay(21)
	l := crossoverLane(2, time.Hour, time.Minute)
	start := time.Now()
	ms, err := runCrossover(context.Background(), l, env)
	var stopped *LaneStoppedError
	if !errors.As(err, &stopped) || stopped.Rule != RuleHostTooBusy || ms != nil {
		t.Fatalf("runCrossover = %d measurements, %v; want a host_too_busy refusal", len(ms), err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the lane stopped after %s; ten replayed samples take 0.1s", took)
	}
	stopped.Target = "linux-x86_64"
	want := "[evidence.host_too_busy] linux-x86_64 speed: the machine is too busy for timings to mean anything: " +
		"run queue 21 on 2 CPUs over 10 s, steal 0 %; a lane is timed with at most 4 runnable tasks beyond the lane's own 2 on 2 CPUs, and at most 10 % steal. " +
		"The lane was stopped after "
	if msg := stopped.Error(); !strings.HasPrefix(msg, want) ||
		!strings.HasSuffix(msg, ", in workload 1 of 2 (w1), and no evidence was written: rerun on an idle machine (`mkrelease evidence run --target linux-x86_64`), "+
			"or, on a machine never quieter than this (a shared runner), raise max_host_load in its [[evidence.lane]] table of release.toml") {
		t.Errorf("refusal:\n%s\nwant\n%s...", msg, want)
	}

	// The negative control: the same lane, without the sleeps, on a host
	// whose run queue is the lane's own: it runs to its end.
	env = shEnv(t, o)
	env.watch = replay(2)
	env.vars["STEP_SLEEP"] = "0.05" // the lane outlasts a window of samples
	if ms, err := runCrossover(context.Background(), l, env); err != nil || len(ms) != 8 {
		t.Errorf("idle host: %d measurements, %v; want 8 and no refusal", len(ms), err)
	}
}

// TestLaneStoppedByTheRun: a lane whose run is cancelled (Ctrl-C)
// returns the run's cause, not a refusal of the host.
func TestLaneStoppedByTheRun(t *testing.T) {
	o := newOutput()
	env := shEnv(t, o)
	env.vars["STEP_SLEEP"] = "1"
	env.watch = replay(2)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := runCrossover(ctx, crossoverLane(2, time.Hour, time.Minute), env)
	var stopped *LaneStoppedError
	if errors.As(err, &stopped) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("runCrossover = %v, want the run's own deadline", err)
	}
}

// TestStoppedErrorWithoutLoad: a lane_timeout refusal on a host whose
// load is not watched says nothing of the load.
func TestStoppedErrorWithoutLoad(t *testing.T) {
	e := &LaneStoppedError{Rule: RuleLaneTimeout, Target: "t", Lane: "l", Done: 3, Total: 11, Workload: "w4", LaneTimeout: 30 * time.Minute}
	want := "[evidence.lane_timeout] t l: the lane ran longer than its lane_timeout 30m0s and was stopped in workload 4 of 11 (w4); " +
		"no evidence was written. Rerun on an idle machine (`mkrelease evidence run --target t`), or, if the lane needs longer on this one, " +
		"raise lane_timeout in its [[evidence.lane]] table of release.toml"
	if got := e.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
}

// TestMaxHostLoad: a lane's max_host_load is the run queue limit it is
// watched with. On a replayed host with 21 runnable tasks on 2 CPUs the
// lane with the default limit refuses (the control), and the same lane
// with max_host_load = 0 runs to its end, saying once that the host's
// load is not watched; with 7 runnable tasks (5 beyond the lane's own),
// the default (4 on 2 CPUs) refuses and max_host_load = 3 (6) runs. The
// evidence's manifest records the watch each lane ran under.
func TestMaxHostLoad(t *testing.T) {
	ptr := func(x float64) *float64 { return &x }
	for _, tt := range []struct {
		name    string
		queue   int
		max     *float64
		refused string // the limit the refusal names; "" when the lane runs to its end
		record  ManifestHostWatch
	}{
		{"busy host, default", 21, nil, "at most 4 runnable tasks beyond the lane's own 2 on 2 CPUs, and at most 10 % steal", ManifestHostWatch{}},
		{"busy host, watch off", 21, ptr(0), "",
			ManifestHostWatch{Watched: false, MaxHostLoad: 0, Off: "max_host_load = 0 in its [[evidence.lane]] table turns the watch off"}},
		{"loaded host, default", 7, nil, "at most 4 runnable tasks beyond the lane's own 2 on 2 CPUs", ManifestHostWatch{}},
		{"loaded host, raised", 7, ptr(3), "", ManifestHostWatch{Watched: true, MaxHostLoad: 3, MaxSteal: 0.1, Window: "10s"}},
		{"loaded host, explicit default", 7, ptr(2), "at most 4 runnable tasks beyond the lane's own 2 on 2 CPUs", ManifestHostWatch{}},
		{"idle host, default", 2, nil, "", ManifestHostWatch{Watched: true, MaxHostLoad: 2, MaxSteal: 0.1, Window: "10s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newOutput()
			env := shEnv(t, o)
			env.vars["STEP_SLEEP"] = "0.05" // the lane outlasts a window of replayed samples
			env.watch = replay(tt.queue)
			l := crossoverLane(2, time.Hour, time.Minute)
			l.MaxHostLoad = tt.max
			ms, err := runCrossover(context.Background(), l, env)
			lines := o.lines()
			notWatched := 0
			for _, line := range lines {
				if strings.Contains(line, "the host's load is not watched") {
					notWatched++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[l.HostLoadLimit() == 0]; notWatched != want {
				t.Errorf("%d lines say the load is not watched, want %d:\n%s", notWatched, want, strings.Join(lines, "\n"))
			}
			if tt.refused != "" {
				var stopped *LaneStoppedError
				if !errors.As(err, &stopped) || stopped.Rule != RuleHostTooBusy || ms != nil {
					t.Fatalf("runCrossover = %d measurements, %v; want a host_too_busy refusal", len(ms), err)
				}
				if !strings.Contains(err.Error(), tt.refused) {
					t.Errorf("refusal %q does not name the limit %q", err, tt.refused)
				}
				return
			}
			if err != nil || len(ms) != 8 {
				t.Fatalf("runCrossover = %d measurements, %v; want 8 and no refusal", len(ms), err)
			}

			// What the evidence says of the watch.
			sum, err := Recompute([]config.Lane{l}, nil, ms)
			if err != nil {
				t.Fatal(err)
			}
			run := store.Run{ID: "run-1", Target: "linux-x86_64", SourcesTreeHash: hex64('d'), Interpreter: "CPython 3.12.0",
				Lanes: []string{"speed"}, Protocol: store.Protocol{Steps: l.Steps, WarmUps: l.Warmups}}
			cfg := &config.Config{Project: config.Project{NormalizedName: "demo", Version: "1.0"}}
			stage := filepath.Join(t.TempDir(), "evidence")
			at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
			if err := writeStage(stage, cfg, "linux-x86_64", run, []config.Lane{l}, env.watch, nil, ms, sum, at, at); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(stage, dist.ManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			var m Manifest
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if len(m.Lanes) != 1 || m.Lanes[0].HostWatch == nil || *m.Lanes[0].HostWatch != tt.record {
				t.Errorf("manifest.json:\n%s\nwant the lane's host_watch %+v", data, tt.record)
			}
		})
	}
}

// TestHostWatchRecordOff: where the host's load cannot be read (not
// Linux), the evidence says the lane was not watched and why, whatever
// its max_host_load.
func TestHostWatchRecordOff(t *testing.T) {
	host := hostWatch{off: hostload.ErrUnsupported.Error()}
	l := crossoverLane(1, time.Hour, time.Minute)
	want := ManifestHostWatch{MaxHostLoad: 2, Off: hostload.ErrUnsupported.Error()}
	if got := host.record(l); *got != want {
		t.Errorf("record = %+v, want %+v", *got, want)
	}
	if w := replay(2).forLane(l); w.policy.MaxQueuePerCPU != config.DefaultMaxHostLoad || config.DefaultMaxHostLoad != hostload.DefaultPolicy.MaxQueuePerCPU {
		t.Errorf("a lane without max_host_load is watched with %v runnable tasks per CPU; config's default %v, hostload's %v",
			w.policy.MaxQueuePerCPU, config.DefaultMaxHostLoad, hostload.DefaultPolicy.MaxQueuePerCPU)
	}
}
