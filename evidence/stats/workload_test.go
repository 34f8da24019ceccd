package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/evidence"
)

// worker builds an ok measurement of workload "w", phase "p".
func worker(slot int, steps []float64) evidence.Measurement {
	return evidence.Measurement{Lane: "perf", Workload: "w", Phase: "p", Role: slotRole(slot), Slot: slot,
		Attempt: 1, Outcome: evidence.OutcomeOK, Steps: steps}
}

// constSteps returns n steps of v seconds.
func constSteps(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// scaled returns steps multiplied by k.
func scaled(steps []float64, k float64) []float64 {
	s := slices.Clone(steps)
	for i := range s {
		s[i] *= k
	}
	return s
}

// abba builds the four ok workers from their step lists in slot order.
func abba(c1, r1, r2, c2 []float64) []evidence.Measurement {
	return []evidence.Measurement{worker(1, c1), worker(2, r1), worker(3, r2), worker(4, c2)}
}

func TestRatioTwiceAsFast(t *testing.T) {
	base := []float64{3, 2, 2, 1.0, 1.1, 0.9, 1.3, 1.0, 1.05, 0.95, 1.2, 1.0, 0.98, 1.02, 1.01, 0.99}
	// Candidate steps are half the reference's: every T_C = T_R/2, so
	// r = sqrt(T_R1·T_R2)/sqrt(T_C1·T_C2) = sqrt(T·T)/sqrt(T/2·T/2) = 2.
	res, err := Workload(abba(scaled(base, 0.5), base, base, scaled(base, 0.5)), DefaultWarmups)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Usable || !near(res.R, 2, 1e-15) {
		t.Fatalf("usable %v r = %.17g, want 2", res.Usable, res.R)
	}
	// Reference twice as fast: r = 1/2. Same steps: r = 1.
	res, _ = Workload(abba(base, scaled(base, 0.5), scaled(base, 0.5), base), DefaultWarmups)
	if !near(res.R, 0.5, 1e-15) {
		t.Errorf("r = %.17g, want 0.5", res.R)
	}
	res, _ = Workload(abba(base, base, base, base), DefaultWarmups)
	if res.R != 1 {
		t.Errorf("r = %.17g, want 1", res.R)
	}
	// Max robust CV is the largest of the four workers' (all equal here).
	st, _ := Worker(base, DefaultWarmups)
	if res.MaxRobustCV != st.RobustCV || res.MaxCV != st.CV {
		t.Errorf("max robust CV %v, max CV %v; want %v, %v", res.MaxRobustCV, res.MaxCV, st.RobustCV, st.CV)
	}
	// Different orders of the records change nothing.
	ms := abba(scaled(base, 0.5), base, base, scaled(base, 0.5))
	slices.Reverse(ms)
	if res, _ := Workload(ms, DefaultWarmups); !near(res.R, 2, 1e-15) || res.Workers[0].Slot != 1 {
		t.Errorf("reversed records: r %v, first worker slot %d", res.R, res.Workers[0].Slot)
	}
}

// driftBound is the bound on r − 1 for identical candidate and reference
// on a machine whose worker means drift linearly, T_k = A + k·D for
// k = 0..3 in slot order:
//
//	r² = (A+D)(A+2D) / (A(A+3D)) = (A² + 3AD + 2D²)/(A² + 3AD) = 1 + 2δ²/(1+3δ),  δ = D/A
//
// and since 1 ≤ sqrt(1+2x) ≤ 1+x for x ≥ 0 (x = δ²/(1+3δ) ≥ 0 when
// 1+3δ > 0), 0 ≤ r − 1 ≤ δ²/(1+3δ); for δ ≥ 0 that is ≤ δ². The residual is
// second order: no term in δ survives.
func driftBound(A, D float64) (exact, bound float64) {
	delta := D / A
	return math.Sqrt(1 + 2*delta*delta/(1+3*delta)), delta * delta / (1 + 3*delta)
}

func TestRatioLinearDriftAcrossWorkers(t *testing.T) {
	for _, c := range []struct{ a, d float64 }{
		{1, 0.001}, {1, 0.01}, {1, 0.05}, {1, 0.2}, {2.5, 0.01}, {1, -0.01}, {1, -0.1},
	} {
		// Every step of worker k takes a + k·d, so T_k = a + k·d.
		var ts [4][]float64
		for k := range 4 {
			ts[k] = constSteps(16, c.a+float64(k)*c.d)
		}
		res, err := Workload(abba(ts[0], ts[1], ts[2], ts[3]), DefaultWarmups)
		if err != nil {
			t.Fatal(err)
		}
		exact, bound := driftBound(c.a, c.d)
		if !near(res.R, exact, 1e-14) {
			t.Errorf("a %v d %v: r = %.17g, want sqrt(1+2ε²/(1+3ε)) = %.17g", c.a, c.d, res.R, exact)
		}
		eps := c.d / c.a
		if res.R-1 < -1e-15 || res.R-1 > bound+1e-15 || (c.d > 0 && res.R-1 > eps*eps) {
			t.Errorf("a %v d %v: r − 1 = %.3g, outside [0, ε²/(1+3ε) = %.3g]", c.a, c.d, res.R-1, bound)
		}
		// First order would be ~ε; the residual is far below it.
		if math.Abs(res.R-1) > math.Abs(eps)/4 {
			t.Errorf("a %v d %v: r − 1 = %.3g is not second order in ε = %v", c.a, c.d, res.R-1, eps)
		}
	}
}

func TestRatioLinearDriftWithinWorkers(t *testing.T) {
	// Step j of worker k (N = 16 steps each, w = 3 warm-ups) takes
	// a + (16k + j)·d: the machine slows down (d > 0) or speeds up (d < 0)
	// steadily through all 64 steps. For d > 0 the slowest step of each
	// worker is its last (j = 15), so the kept steps are j = 3..14 with mean
	// index 8.5 and T_k = a + d(16k + 8.5): linear in k with
	// A = a + 8.5d, D = 16d. For d < 0 the slowest is j = 3, the kept steps
	// are j = 4..15 with mean index 9.5: A = a + 9.5d, D = 16d.
	//
	// a = 1, d = 0.001: A = 1.0085, D = 0.016, δ = 0.0158651,
	//   r = sqrt(1 + 2δ²/(1+3δ)) = 1.00024023838375, bound δ²/(1+3δ) = 2.40267e-4.
	// a = 1, d = −0.001: A = 0.9905, D = −0.016,
	//   r = 1.00027418556827, bound 2.74223e-4.
	for _, c := range []struct{ a, d, A, r float64 }{
		{1, 0.001, 1.0085, 1.0002402383837523},
		{1, -0.001, 0.9905, 1.000274185568265},
		{1, 0.0001, 1.00085, 0},
		{2, 0.01, 2.085, 0},
	} {
		var ts [4][]float64
		for k := range 4 {
			for j := range 16 {
				ts[k] = append(ts[k], c.a+float64(16*k+j)*c.d)
			}
		}
		res, err := Workload(abba(ts[0], ts[1], ts[2], ts[3]), DefaultWarmups)
		if err != nil {
			t.Fatal(err)
		}
		for k, w := range res.Workers {
			if want := c.A + float64(k)*16*c.d; !near(w.Stats.T, want, 1e-14) {
				t.Errorf("a %v d %v: T_%d = %.17g, want A + 16kd = %.17g", c.a, c.d, k, w.Stats.T, want)
			}
		}
		exact, bound := driftBound(c.A, 16*c.d)
		if c.r != 0 && !near(exact, c.r, 1e-14) {
			t.Fatalf("hand value %v disagrees with the formula %v", c.r, exact)
		}
		if !near(res.R, exact, 1e-13) || res.R-1 < -1e-15 || res.R-1 > bound+1e-15 {
			t.Errorf("a %v d %v: r = %.17g, want %.17g with 0 ≤ r − 1 ≤ %.3g", c.a, c.d, res.R, exact, bound)
		}
	}
}

// rec builds a record of workload "w" for any slot, attempt and outcome,
// with 7 valid steps.
func rec(slot, attempt int, outcome string) evidence.Measurement {
	m := worker(slot, []float64{1, 1, 1, 1, 1.1, 0.9, 1})
	m.Attempt, m.Outcome = attempt, outcome
	if outcome != evidence.OutcomeOK {
		m.Error = "exit status 1"
	}
	return m
}

const (
	ok      = evidence.OutcomeOK
	sf      = evidence.OutcomeStartupFailure
	crash   = evidence.OutcomeFailure
	timeout = evidence.OutcomeTimeout
	wrong   = evidence.OutcomeWrongResult
)

func TestRetryRule(t *testing.T) {
	// all4 is one ok attempt per slot; the cases replace or add records.
	all4 := func(extra ...evidence.Measurement) []evidence.Measurement {
		ms := []evidence.Measurement{rec(1, 1, ok), rec(2, 1, ok), rec(3, 1, ok), rec(4, 1, ok)}
		for _, e := range extra {
			ms = slices.DeleteFunc(ms, func(m evidence.Measurement) bool { return m.Slot == e.Slot && m.Attempt == e.Attempt })
		}
		return append(ms, extra...)
	}
	cases := []struct {
		name     string
		ms       []evidence.Measurement
		attempts [4]int   // chosen attempt per slot, when no error
		reason   string   // RetryError reason, when one
		err      string   // other error text, when one
		failures []string // failure reasons of an unusable workload
	}{
		{name: "all ok", ms: all4(), attempts: [4]int{1, 1, 1, 1}},
		{name: "reference start-up retried, ok", ms: all4(rec(2, 1, sf), rec(2, 2, ok)), attempts: [4]int{1, 2, 1, 1}},
		{name: "both references retried", ms: all4(rec(2, 1, sf), rec(2, 2, ok), rec(3, 1, sf), rec(3, 2, ok)), attempts: [4]int{1, 2, 2, 1}},
		{name: "retry failed at start-up again", ms: all4(rec(3, 1, sf), rec(3, 2, sf)), attempts: [4]int{1, 1, 2, 1},
			failures: []string{FailureStartup}},
		{name: "retry crashed", ms: all4(rec(3, 1, sf), rec(3, 2, crash)), attempts: [4]int{1, 1, 2, 1},
			failures: []string{FailureCrash}},
		{name: "reference start-up not retried", ms: all4(rec(2, 1, sf)), attempts: [4]int{1, 1, 1, 1},
			failures: []string{FailureStartup}},
		{name: "candidate start-up failure", ms: all4(rec(1, 1, sf)), attempts: [4]int{1, 1, 1, 1},
			failures: []string{FailureStartup}},
		{name: "candidate wrong result", ms: all4(rec(4, 1, wrong)), attempts: [4]int{1, 1, 1, 1},
			failures: []string{FailureWrongResult}},
		{name: "reference crash and candidate timeout", ms: all4(rec(2, 1, crash), rec(1, 1, timeout)), attempts: [4]int{1, 1, 1, 1},
			failures: []string{FailureTimeout, FailureCrash}},
		{name: "candidate start-up retried", ms: all4(rec(1, 1, sf), rec(1, 2, ok)), reason: ReasonCandidateRetried},
		{name: "candidate crash retried", ms: all4(rec(4, 1, crash), rec(4, 2, ok)), reason: ReasonCandidateRetried},
		{name: "candidate only attempt 2", ms: []evidence.Measurement{rec(1, 2, ok), rec(2, 1, ok), rec(3, 1, ok), rec(4, 1, ok)}, reason: ReasonCandidateRetried},
		{name: "reference crash retried", ms: all4(rec(2, 1, crash), rec(2, 2, ok)), reason: ReasonReferenceFailedAfterStartup},
		{name: "reference timeout retried", ms: all4(rec(3, 1, timeout), rec(3, 2, ok)), reason: ReasonReferenceFailedAfterStartup},
		{name: "reference wrong result retried", ms: all4(rec(2, 1, wrong), rec(2, 2, ok)), reason: ReasonReferenceFailedAfterStartup},
		{name: "reference ok retried", ms: all4(rec(3, 2, ok)), reason: ReasonReferenceSucceeded},
		{name: "two retries", ms: all4(rec(2, 1, sf), rec(2, 2, sf), rec(2, 3, ok)), reason: ReasonMoreThanOneRetry},
		{name: "attempt 3 without 2", ms: all4(rec(2, 1, sf), rec(2, 3, ok)), reason: ReasonMoreThanOneRetry},
		{name: "reference only attempt 2", ms: []evidence.Measurement{rec(1, 1, ok), rec(2, 2, ok), rec(3, 1, ok), rec(4, 1, ok)}, reason: ReasonRetryWithoutFirst},
		{name: "duplicate", ms: append(all4(), rec(3, 1, ok)), err: `workload "w" slot 3 (reference) attempt 1: recorded twice`},
		{name: "missing slot", ms: []evidence.Measurement{rec(1, 1, ok), rec(2, 1, ok), rec(4, 1, ok)}, err: `workload "w" slot 3 (reference): no measurement`},
		{name: "empty", ms: nil, err: "no measurements"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			idx, err := ChooseAttempts(c.ms)
			var re *RetryError
			switch {
			case c.reason != "":
				if !errors.As(err, &re) || re.Reason != c.reason {
					t.Fatalf("error %v, want reason %q", err, c.reason)
				}
				if !strings.HasSuffix(err.Error(), ": "+c.reason) || !strings.HasPrefix(err.Error(), `workload "w" slot `) {
					t.Errorf("error text %q", err)
				}
				if _, werr := Workload(c.ms, DefaultWarmups); !errors.As(werr, &re) {
					t.Errorf("Workload error %v, want the RetryError", werr)
				}
				return
			case c.err != "":
				if err == nil || err.Error() != c.err || errors.As(err, &re) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			var got [4]int
			for s, i := range idx {
				if c.ms[i].Slot != s+1 {
					t.Fatalf("slot %d chose a record of slot %d", s+1, c.ms[i].Slot)
				}
				got[s] = c.ms[i].Attempt
			}
			if got != c.attempts {
				t.Errorf("chosen attempts %v, want %v", got, c.attempts)
			}
			res, err := Workload(c.ms, DefaultWarmups)
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, f := range res.Failures {
				reasons = append(reasons, f.Reason)
				if f.Error != "exit status 1" {
					t.Errorf("failure %+v lost the record's error", f)
				}
			}
			if !slices.Equal(reasons, c.failures) || res.Usable != (len(c.failures) == 0) {
				t.Errorf("usable %v failures %v, want %v", res.Usable, reasons, c.failures)
			}
			if !res.Usable && (res.R != 0 || res.MaxRobustCV != 0) {
				t.Errorf("unusable workload has r %v, max robust CV %v", res.R, res.MaxRobustCV)
			}
			for s, w := range res.Workers {
				if w.Attempt != c.attempts[s] || (w.Stats != nil) != (w.Outcome == ok) {
					t.Errorf("worker %+v", w)
				}
			}
		})
	}
}

func TestRetryAttemptsCounted(t *testing.T) {
	ms := []evidence.Measurement{rec(1, 1, ok), rec(2, 1, sf), rec(2, 2, ok), rec(3, 1, ok), rec(4, 1, ok)}
	res, err := Workload(ms, DefaultWarmups)
	if err != nil {
		t.Fatal(err)
	}
	if w := res.Workers[1]; w.Attempt != 2 || w.Attempts != 2 || w.Outcome != ok || !res.Usable {
		t.Errorf("retried worker %+v, usable %v", w, res.Usable)
	}
	if w := res.Workers[0]; w.Attempts != 1 {
		t.Errorf("worker %+v", w)
	}
}

func TestWorkloadRecordErrors(t *testing.T) {
	base := func(edit func(ms []evidence.Measurement)) []evidence.Measurement {
		ms := []evidence.Measurement{rec(1, 1, ok), rec(2, 1, ok), rec(3, 1, ok), rec(4, 1, ok)}
		edit(ms)
		return ms
	}
	cases := []struct {
		name string
		ms   []evidence.Measurement
		want string
	}{
		{"NaN step", base(func(ms []evidence.Measurement) { ms[2].Steps[4] = math.NaN() }),
			`workload "w" slot 3 (reference) attempt 1: step 4 is NaN`},
		{"Inf step", base(func(ms []evidence.Measurement) { ms[0].Steps[0] = math.Inf(1) }),
			`workload "w" slot 1 (candidate) attempt 1: step 0 is infinite (+Inf)`},
		{"negative step", base(func(ms []evidence.Measurement) { ms[3].Steps[6] = -1 }),
			`workload "w" slot 4 (candidate) attempt 1: step 6 is negative (-1 s)`},
		{"zero step", base(func(ms []evidence.Measurement) { ms[1].Steps[5] = 0 }),
			`workload "w" slot 2 (reference) attempt 1: step 5 is zero`},
		{"bad step in a failed attempt", base(func(ms []evidence.Measurement) { ms[1].Outcome = crash; ms[1].Steps[1] = -2 }),
			`workload "w" slot 2 (reference) attempt 1: step 1 is negative (-2 s)`},
		{"too few steps", base(func(ms []evidence.Measurement) { ms[3].Steps = ms[3].Steps[:5] }),
			`workload "w" slot 4 (candidate) attempt 1: 5 steps with 3 warm-ups and the slowest step dropped leave 1; need at least 2 (at least 6 steps)`},
		{"no steps", base(func(ms []evidence.Measurement) { ms[0].Steps = nil }),
			`workload "w" slot 1 (candidate) attempt 1: 0 steps with 3 warm-ups and the slowest step dropped leave 0; need at least 2 (at least 6 steps)`},
		{"role swapped", base(func(ms []evidence.Measurement) { ms[1].Role = evidence.RoleCandidate }),
			`workload "w" slot 2 (candidate) attempt 1: slot 2 is a reference slot in ABBA order, record says "candidate"`},
		{"slot 5", base(func(ms []evidence.Measurement) { ms[3].Slot = 5 }),
			`workload "w" slot 5 (candidate) attempt 1: slot must be 1..4`},
		{"attempt 0", base(func(ms []evidence.Measurement) { ms[3].Attempt = 0 }),
			`workload "w" slot 4 (candidate) attempt 0: attempt must be ≥ 1`},
		{"unknown outcome", base(func(ms []evidence.Measurement) { ms[2].Outcome = "great" }),
			`workload "w" slot 3 (reference) attempt 1: unknown outcome "great"`},
		{"two workloads", base(func(ms []evidence.Measurement) { ms[2].Workload = "v" }),
			`measurements mix lane/workload/phase "perf"/"w"/"p" and "perf"/"v"/"p"`},
		{"two phases", base(func(ms []evidence.Measurement) { ms[3].Phase = "q" }),
			`measurements mix lane/workload/phase "perf"/"w"/"p" and "perf"/"w"/"q"`},
		{"no workload name", base(func(ms []evidence.Measurement) { ms[0].Workload = "" }),
			`measurement of lane "perf" has no workload name`},
		{"no phase", base(func(ms []evidence.Measurement) { ms[0].Phase = "" }),
			`workload "w" has no phase`},
		{"empty", nil, "no measurements"},
	}
	for _, c := range cases {
		if _, err := Workload(c.ms, DefaultWarmups); err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v\n want %s", c.name, err, c.want)
		}
	}
	if _, err := Workload(base(func([]evidence.Measurement) {}), -1); err == nil || !strings.Contains(err.Error(), "warm-ups must be ≥ 0") {
		t.Errorf("negative warm-ups: %v", err)
	}
}

// TestWorkloadRatioOverflow: means 1e-300 and 1e300 s make r = 1e600.
func TestWorkloadRatioOverflow(t *testing.T) {
	c, r := constSteps(6, 1e-300), constSteps(6, 1e300)
	_, err := Workload(abba(c, r, r, c), DefaultWarmups)
	if err == nil || !strings.Contains(err.Error(), "not representable") {
		t.Errorf("error %v", err)
	}
}

// TestRatioDriftGivesOne: identical candidate and reference on a machine
// that slows down steadily give r = 1. When the slowdown is geometric
// (each worker a constant factor slower than the one before) ABBA cancels
// it exactly: r² = (g·g²)/(1·g³) = 1. When it is linear, the residual is
// second order (above) and r reads 1.000 at the precision reports print.
func TestRatioDriftGivesOne(t *testing.T) {
	for _, g := range []float64{1.001, 1.01, 1.1, 1.5, 0.97} {
		var ts [4][]float64
		for k := range 4 {
			ts[k] = constSteps(16, 0.02*math.Pow(g, float64(k)))
		}
		res, err := Workload(abba(ts[0], ts[1], ts[2], ts[3]), DefaultWarmups)
		if err != nil {
			t.Fatal(err)
		}
		if !near(res.R, 1, 1e-14) {
			t.Errorf("geometric drift g = %v: r = %.17g, want 1", g, res.R)
		}
	}
	// A machine losing 0.1 % per step over the 64 steps of the four workers
	// (6.4 % slower at the end).
	var ts [4][]float64
	for k := range 4 {
		for j := range 16 {
			ts[k] = append(ts[k], 0.02*(1+0.001*float64(16*k+j)))
		}
	}
	res, err := Workload(abba(ts[0], ts[1], ts[2], ts[3]), DefaultWarmups)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%.3f", res.R); got != "1.000" {
		t.Errorf("linear drift: r = %.17g reads %s, want 1.000", res.R, got)
	}
}
