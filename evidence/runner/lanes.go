package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mkrelease/mkrelease/internal/progress"
	"io"
	"io/fs"
	"math"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/internal/procgroup"
	"github.com/mkrelease/mkrelease/internal/sandbox"
)

// laneEnv is what a lane's commands run with.
type laneEnv struct {
	// vars are the environment (PATH with the venv first, HOME and TMPDIR
	// in the scratch folder, the lane's variables).
	vars map[string]string
	// expand are the ${NAME} values of argv: PYTHON, VERIFIER, STEPS,
	// WORKLOAD.
	expand map[string]string
	dir    string // working folder
	log    func(format string, args ...any)
	// box is the sandbox every command runs in (see isolate.go); nil
	// runs them as the user.
	box *laneBox
	// contain confines each command run without a sandbox (the zero
	// value: its process group only).
	contain procgroup.Containment
	// watch watches the host's load while a crossover lane runs (the
	// zero value watches nothing).
	watch hostWatch
}

func (e laneEnv) with(extra map[string]string) laneEnv {
	c := e
	c.vars = map[string]string{}
	for k, v := range e.vars {
		c.vars[k] = v
	}
	for k, v := range extra {
		c.vars[k] = v
	}
	c.expand = map[string]string{}
	for k, v := range e.expand {
		c.expand[k] = v
	}
	return c
}

func (e laneEnv) command(ctx context.Context, argv []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	args := make([]string, len(argv))
	for i, a := range argv {
		args[i] = executor.Expand(a, e.expand)
	}
	// An inherited descriptor would pass into the lane, sandbox or not.
	sandbox.CloseInherited()
	var cmd *exec.Cmd
	if e.box != nil {
		var err error
		if cmd, err = e.box.command(ctx, args, e.dir); err != nil {
			return nil, err
		}
	} else {
		cmd = exec.CommandContext(ctx, args[0], args[1:]...)
		e.contain.KillOnCancel(cmd) // and procgroup.WaitDelay
	}
	cmd.Dir = e.dir
	cmd.Env = envList(e.vars)
	return cmd, nil
}

// envList is vars as a sorted environment list.
func envList(vars map[string]string) []string {
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// runCases runs a cases lane: its command writes one JSON line per case to
// $MKRELEASE_CASES. The lane is stopped when it exceeds its timeout or
// reports no case for CaseTimeout; then, or when it exits with a failure,
// an ERROR case records why. Lines that are not valid cases are ERROR
// cases too: what a lane writes is never trusted as is.
func runCases(ctx context.Context, l config.Lane, env laneEnv, file string) ([]evidence.Case, string, error) {
	env = env.with(l.Env)
	env.vars["MKRELEASE_CASES"] = file
	env.vars["MKRELEASE_LANE"] = l.Name
	ctx, cancel := context.WithTimeout(ctx, l.Timeout.Duration)
	defer cancel()
	cmd, err := env.command(ctx, l.Run)
	if err != nil {
		return nil, "", fmt.Errorf("lane %s: %w", l.Name, err)
	}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &capped{w: &log}, &capped{w: &log}
	if err := cmd.Start(); err != nil {
		return []evidence.Case{laneError(l.Name, "start", "the lane's command could not start: "+err.Error())}, "", nil
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Watch progress: the cases reported so far, each complete non-blank
	// line of the cases file (every one becomes a record: a case, or an
	// ERROR saying why the line is not one). The progress display shows
	// the count (a plain line every few seconds off a terminal); the
	// lane's end is the one line logged below, with the counts of the
	// records, which the summary counts too.
	task := progress.FromContext(ctx).Start("lane "+l.Name+": cases", 0, progress.Items)
	defer task.DoneQuiet()
	start := time.Now()
	lastLines, lastChange := 0, start
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var waitErr error
	stalled := false
wait:
	for {
		select {
		case waitErr = <-done:
			break wait
		case <-tick.C:
			n := countLines(file)
			if n != lastLines {
				task.Add(int64(n - lastLines))
				lastLines, lastChange = n, time.Now()
			}
			if time.Since(lastChange) > l.CaseTimeout.Duration {
				stalled = true
				cancel()
				waitErr = <-done
				break wait
			}
		}
	}
	took := time.Since(start)
	cases, bad := readCases(l.Name, file)
	switch {
	case stalled:
		last := "before its first case"
		if len(cases) > 0 {
			last = "after case " + cases[len(cases)-1].ID
		}
		cases = append(cases, laneError(l.Name, "case-timeout", fmt.Sprintf("no case reported for %s %s: the lane was stopped (raise case_timeout if a case really takes longer)", l.CaseTimeout.Duration, last)))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		cases = append(cases, laneError(l.Name, "timeout", fmt.Sprintf("the lane ran longer than its timeout %s and was stopped", l.Timeout.Duration)))
	case waitErr != nil:
		cases = append(cases, laneError(l.Name, "exit", fmt.Sprintf("the lane's command failed (%v); last output:\n%s", waitErr, executor.Tail(log.Bytes(), 12))))
	}
	cases = append(cases, bad...)
	if len(cases) == 0 {
		cases = append(cases, laneError(l.Name, "no-cases", "the lane reported no case"))
	}
	env.log("%s", casesEnd(l.Name, cases, took))
	return cases, log.String(), nil
}

// casesEnd is a cases lane's end line: its records counted as the summary
// counts them (stats.Cases), in the order `mkrelease evidence run` prints
// them: "lane semantic: 319 cases in 1m20.8s: 319 passed, 0 failed, 0
// errors, 0 skipped". A line the lane wrote that is not a case, and the
// lane's own failure (a timeout, an exit status), are errors.
func casesEnd(lane string, cases []evidence.Case, took time.Duration) string {
	n := stats.Cases(cases).Counts
	return fmt.Sprintf("lane %s: %d cases in %s: %d passed, %d failed, %d errors, %d skipped",
		lane, n.Total, round(took), n.Pass, n.Fail, n.Error+n.Invalid, n.Skip)
}

func laneError(lane, id, msg string) evidence.Case {
	return evidence.Case{Lane: lane, ID: lane + "/" + id, Status: evidence.StatusError, Tier: "lane", Message: msg}
}

// countLines counts the complete lines of file that are not blank, as
// readCases sees them (it skips blank lines, and reads each other one as
// a case or an ERROR record).
func countLines(file string) int {
	f, err := openLaneFile(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	n, blank := 0, true
	for {
		chunk, err := r.ReadSlice('\n')
		if len(bytes.TrimSpace(chunk)) > 0 {
			blank = false
		}
		switch {
		case err == nil:
			if !blank {
				n++
			}
			blank = true
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return n
		}
	}
}

// readCases reads and validates a cases file: each line one case with an
// id, a known status and finite numbers; the lane field is set by
// mkrelease. Invalid lines become ERROR cases naming the line; a file
// that is not a regular one (a link, a FIFO) is not read, and an ERROR
// case says so.
func readCases(lane, file string) (cases, bad []evidence.Case) {
	f, err := openLaneFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, []evidence.Case{laneError(lane, "cases-file", "the lane's cases file could not be read: "+err.Error())}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	seen := map[string]bool{}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c evidence.Case
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			bad = append(bad, laneError(lane, "line-"+strconv.Itoa(n), "not a case: "+err.Error()))
			continue
		}
		c.Lane = lane
		switch {
		case c.ID == "":
			bad = append(bad, laneError(lane, "line-"+strconv.Itoa(n), "a case without an id"))
			continue
		case seen[c.ID]:
			bad = append(bad, laneError(lane, "line-"+strconv.Itoa(n), "case "+c.ID+" reported twice"))
			continue
		}
		switch c.Status {
		case evidence.StatusPass, evidence.StatusFail, evidence.StatusError, evidence.StatusSkip:
		default:
			bad = append(bad, laneError(lane, "line-"+strconv.Itoa(n), fmt.Sprintf("case %s: status %q is not PASS, FAIL, ERROR or SKIP", c.ID, c.Status)))
			continue
		}
		if !finite(c.Duration) || c.Duration < 0 || !finiteMap(c.Metrics) || !finiteMap(c.Tolerance) {
			bad = append(bad, laneError(lane, "line-"+strconv.Itoa(n), "case "+c.ID+": a number is negative, NaN or infinite"))
			continue
		}
		seen[c.ID] = true
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, laneError(lane, "read", err.Error()))
	}
	return cases, bad
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func finiteMap(m map[string]float64) bool {
	for _, v := range m {
		if !finite(v) {
			return false
		}
	}
	return true
}

// workerEvent is one line of the worker protocol.
type workerEvent struct {
	Event   string  `json:"event"` // ready, step, result
	I       int     `json:"i"`
	Seconds float64 `json:"seconds"`
	SHA256  string  `json:"sha256"`
}

// runWorker runs one worker attempt and reads its protocol: {"event":
// "ready"} once started, then one {"event": "step"} per step, then
// {"event": "result"}. Exiting or timing out before ready is a start-up
// failure; after it, a failure or a timeout. A timed-out attempt keeps
// the steps it reported. When the attempt ends, whatever the worker
// started ends with it, as env.contain allows (see runCrossover).
func runWorker(ctx context.Context, l config.Lane, env laneEnv, argv []string, m evidence.Measurement) evidence.Measurement {
	ctx, cancel := context.WithTimeout(ctx, l.Timeout.Duration)
	defer cancel()
	cmd, err := env.command(ctx, argv)
	if err != nil {
		m.Outcome, m.Error = evidence.OutcomeStartupFailure, err.Error()
		return m
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		m.Outcome, m.Error = evidence.OutcomeStartupFailure, err.Error()
		return m
	}
	var stderr bytes.Buffer
	cmd.Stderr = &capped{w: &stderr}
	if err := cmd.Start(); err != nil {
		m.Outcome, m.Error = evidence.OutcomeStartupFailure, "could not start: "+err.Error()
		return m
	}
	ready := false
	var protoErr string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var ev workerEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			if protoErr == "" {
				protoErr = fmt.Sprintf("not a protocol line: %.80q", sc.Text())
			}
			continue
		}
		switch ev.Event {
		case "ready":
			ready = true
		case "step":
			switch {
			case !ready:
				protoErr = "a step before ready"
			case ev.I != len(m.Steps):
				protoErr = fmt.Sprintf("step %d reported where step %d was due", ev.I, len(m.Steps))
			case !finite(ev.Seconds) || ev.Seconds <= 0:
				protoErr = fmt.Sprintf("step %d: %v seconds", ev.I, ev.Seconds)
			default:
				m.Steps = append(m.Steps, ev.Seconds)
			}
		case "result":
			m.ResultSHA256 = ev.SHA256
		default:
			protoErr = fmt.Sprintf("unknown event %q", ev.Event)
		}
	}
	io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	tail := executor.Tail(stderr.Bytes(), 8)
	switch {
	case !ready && errors.Is(ctx.Err(), context.DeadlineExceeded):
		m.Outcome, m.Error = evidence.OutcomeStartupFailure, fmt.Sprintf("timed out after %s before reporting ready", l.Timeout.Duration)
	case !ready:
		m.Outcome, m.Error = evidence.OutcomeStartupFailure, fmt.Sprintf("exited before reporting ready (%v): %s", waitErr, tail)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		m.Outcome, m.Error = evidence.OutcomeTimeout, fmt.Sprintf("timed out after %s, at step %d of %d", l.Timeout.Duration, len(m.Steps), l.Steps)
	case waitErr != nil:
		m.Outcome, m.Error = evidence.OutcomeFailure, fmt.Sprintf("failed after start-up at step %d of %d (%v): %s", len(m.Steps), l.Steps, waitErr, tail)
	case protoErr != "":
		m.Outcome, m.Error = evidence.OutcomeFailure, "protocol: "+protoErr
	case len(m.Steps) != l.Steps:
		m.Outcome, m.Error = evidence.OutcomeFailure, fmt.Sprintf("reported %d steps, %d were asked for", len(m.Steps), l.Steps)
	case !isHex64(m.ResultSHA256):
		m.Outcome, m.Error = evidence.OutcomeFailure, "no result digest (a {\"event\": \"result\", \"sha256\": ...} line)"
	default:
		m.Outcome = evidence.OutcomeOK
	}
	return m
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// runCrossover runs a crossover lane: for each workload, fresh workers in
// the order candidate, reference, reference, candidate. Only a reference
// worker that fails during start-up is run again, once; every attempt is
// kept. A candidate whose result differs from the references' is marked
// wrong-result, as is a second reference that disagrees with the first.
//
// Each worker attempt runs in the lane's sandbox, whose PID namespaces
// end with it (see isolate.go), or else in a PID namespace of its own
// where the host allows it (procgroup.Containment): a process group alone
// lets a process the worker started leave it (setsid, setpgid) and run on
// after the worker was stopped, taking CPU from the workers measured
// after it and holding the worker's output open for procgroup.WaitDelay.
// A sweep of the processes that carry an attempt's environment marker was
// the other way without cgroups; it misses a process that clears its
// environment and everything left when mkrelease itself is killed, which
// the namespace's end covers. Either costs only at each worker's start,
// before the worker reports ready: the init (mkrelease started again)
// about 30 ms of CPU and 16 MB, then it sleeps in wait4 without waking;
// bubblewrap a few milliseconds to set up the sandbox, then it waits too.
// Nothing the steps time. A worker that is not root runs in a user
// namespace mapping only its own IDs (in the sandbox, to user 1000),
// where set-user-ID programs (sudo) do not raise privileges.
//
// The lane as a whole is bounded: when it runs longer than its
// lane_timeout, or env.watch finds the host too busy for its timings to
// mean anything (package hostload; the limit is the lane's max_host_load,
// and at 0 nothing is watched), the running worker is stopped and the
// lane returns a *LaneStoppedError (and no measurement) at once, rather
// than let worker after worker run into its own timeout. It logs its
// progress after each workload: the workloads done, the time elapsed and
// the most that is left ("lane throughput: 3/11 workloads, 2m10s elapsed,
// at most 27m50s left"), and its end once.
func runCrossover(ctx context.Context, l config.Lane, env laneEnv) ([]evidence.Measurement, error) {
	if env.box == nil {
		env.contain = procgroup.ProbeContainment(ctx)
		if env.contain.Caveat != "" {
			env.log("lane %s: workers are not fully confined here: %s", l.Name, env.contain.Caveat)
		}
	}
	// The lane stops early, as a whole, when it runs out of its
	// lane_timeout or the host is too busy to time it (see hostWatch):
	// not worker by worker, each after its own timeout.
	start := time.Now()
	lctx, stop := context.WithCancelCause(ctx)
	if d := l.LaneTimeout.Duration; d > 0 {
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeoutCause(lctx, d, errLaneTimeout)
		defer cancel()
	}
	hw := env.watch.forLane(l) // the lane's max_host_load
	watch := hw.start(lctx, stop)
	defer func() {
		stop(nil) // ends the watch
		watch.wait()
	}()
	if hw.read == nil && hw.off != "" {
		env.log("lane %s: the host's load is not watched: %s", l.Name, hw.off)
	}
	bound := l.LaneTimeout.Duration // 0: none (a lane configured in a test)
	if bound > 0 {
		env.log("lane %s: %d workloads, at most %s (lane_timeout)", l.Name, len(l.Workloads), bound)
	} else {
		env.log("lane %s: %d workloads", l.Name, len(l.Workloads))
	}

	var out []evidence.Measurement
	roles := []string{evidence.RoleCandidate, evidence.RoleReference, evidence.RoleReference, evidence.RoleCandidate}
	task := progress.FromContext(ctx).Start("lane "+l.Name+": workers", int64(len(roles)*len(l.Workloads)), progress.Items)
	defer task.DoneQuiet()
	for done, w := range l.Workloads {
		var chosen [4]int // index into out of each slot's last attempt
		for slot, role := range roles {
			argv, extra := l.Candidate, l.CandidateEnv
			if role == evidence.RoleReference {
				argv, extra = l.Reference, l.ReferenceEnv
			}
			we := env.with(l.Env).with(extra)
			we.vars["MKRELEASE_WORKLOAD"] = w.Name
			we.vars["MKRELEASE_STEPS"] = strconv.Itoa(l.Steps)
			we.vars["MKRELEASE_WARMUPS"] = strconv.Itoa(l.Warmups)
			we.vars["MKRELEASE_ROLE"] = role
			we.expand["WORKLOAD"] = w.Name
			we.expand["STEPS"] = strconv.Itoa(l.Steps)
			we.expand["WARMUPS"] = strconv.Itoa(l.Warmups)
			for attempt := 1; attempt <= 2; attempt++ {
				m := runWorker(lctx, l, we, argv, evidence.Measurement{Lane: l.Name, Workload: w.Name, Phase: w.Phase, Role: role, Slot: slot + 1, Attempt: attempt})
				if lctx.Err() != nil {
					// Stopped: this attempt's outcome is the stop's, not
					// the worker's.
					return nil, laneStopped(ctx, lctx, l, watch, done, w.Name, start)
				}
				out = append(out, m)
				chosen[slot] = len(out) - 1
				env.log("lane %s: workload %s slot %d (%s) attempt %d: %s", l.Name, w.Name, slot+1, role, attempt, m.Outcome)
				if !(role == evidence.RoleReference && m.Outcome == evidence.OutcomeStartupFailure) {
					break
				}
			}
			task.Add(1)
		}
		// Results: the references must agree, and the candidates with them.
		ref := ""
		for _, s := range []int{1, 2} {
			m := &out[chosen[s]]
			if m.Outcome != evidence.OutcomeOK {
				continue
			}
			if ref == "" {
				ref = m.ResultSHA256
			} else if m.ResultSHA256 != ref {
				m.Outcome, m.Error = evidence.OutcomeWrongResult, "the two reference workers disagree: "+short(ref)+" and "+short(m.ResultSHA256)
			}
		}
		for _, s := range []int{0, 3} {
			m := &out[chosen[s]]
			if m.Outcome == evidence.OutcomeOK && ref != "" && m.ResultSHA256 != ref {
				m.Outcome, m.Error = evidence.OutcomeWrongResult, "the candidate's result "+short(m.ResultSHA256)+" differs from the reference's "+short(ref)
			}
		}
		if done+1 < len(l.Workloads) {
			elapsed := time.Since(start)
			left := ""
			if bound > 0 {
				left = ", at most " + max(bound-elapsed, 0).Round(time.Second).String() + " left"
			}
			env.log("lane %s: %d/%d workloads, %s elapsed%s", l.Name, done+1, len(l.Workloads), elapsed.Round(time.Second), left)
		}
	}
	env.log("lane %s: %d workloads, %d workers (%d attempts) in %s", l.Name, len(l.Workloads), len(roles)*len(l.Workloads), len(out), round(time.Since(start)))
	return out, nil
}

// laneStopped is the error of a crossover lane whose context lctx ended
// in workload done+1 (named workload): a *LaneStoppedError when the host
// was too busy or the lane ran out of its lane_timeout, else why ctx (the
// run's) ended.
func laneStopped(ctx, lctx context.Context, l config.Lane, watch *watching, done int, workload string, start time.Time) error {
	e := &LaneStoppedError{Lane: l.Name, Done: done, Total: len(l.Workloads), Workload: workload,
		Elapsed: time.Since(start), LaneTimeout: l.LaneTimeout.Duration}
	var busy *hostBusy
	switch cause := context.Cause(lctx); {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.As(cause, &busy):
		e.Rule, e.Load = RuleHostTooBusy, busy.v
	case errors.Is(cause, errLaneTimeout):
		e.Rule, e.Load = RuleLaneTimeout, watch.verdict()
	default:
		return cause
	}
	return e
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// capped keeps at most 1 MiB of a command's output.
type capped struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := 1<<20 - c.w.Len(); room > 0 {
		c.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
