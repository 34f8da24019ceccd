package stats

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/evidence"
)

// usable is a usable workload result with ratio r.
func usable(name, phase string, r float64) WorkloadResult {
	return WorkloadResult{Lane: "perf", Workload: name, Phase: phase, Usable: true, R: r, MaxRobustCV: 0.01, MaxCV: 0.02}
}

// failed is an unusable workload result whose slot 2 crashed.
func failed(name, phase string) WorkloadResult {
	return WorkloadResult{Lane: "perf", Workload: name, Phase: phase, Failures: []Failure{{
		Slot: 2, Role: evidence.RoleReference, Attempt: 1, Outcome: evidence.OutcomeFailure, Reason: FailureCrash}}}
}

// checkBoard compares a board with hand-computed values.
func checkBoard(t *testing.T, b Board, n int, geomean, lo, hi float64) {
	t.Helper()
	if b.N != n || !near(b.Geomean, geomean, 1e-12) || !near(b.Lo, lo, 1e-12) || !near(b.Hi, hi, 1e-12) {
		t.Errorf("board %q: n %d geomean %.15g [%.15g, %.15g]; want n %d geomean %.15g [%.15g, %.15g]",
			b.Phase, b.N, b.Geomean, b.Lo, b.Hi, n, geomean, lo, hi)
	}
	if b.Bounded != (n >= 2) {
		t.Errorf("board %q: bounded %v with n %d", b.Phase, b.Bounded, n)
	}
}

func TestBoardsHandComputed(t *testing.T) {
	cases := []struct {
		name                string
		rs                  []float64
		geomean, lo, hi, sd float64
	}{
		{
			// ln r = −ln 2, ln 2: m = 0, geomean 1.
			// s = sqrt((ln2² + ln2²)/1) = √2·ln 2 = 0.98025814346854719
			// t_{0.975,1} = 12.706204736174705; half = t·s/√2 = t·ln 2 = 8.8072699884969203
			// lo = e^−8.80727 = 1.4964122106549773e-4, hi = e^8.80727 = 6682.6506284809152
			name: "2 and 1/2", rs: []float64{2, 0.5}, geomean: 1,
			lo: 0.000149641221065497734, hi: 6682.6506284809152, sd: 0.98025814346854719,
		},
		{
			// ln r = 0, ln 2, 2 ln 2: m = ln 2, geomean 2; s = ln 2 (sd of 0,1,2 is 1)
			// t_{0.975,2} = 4.3026527297494639; half = t·ln 2/√3 = 1.7218730510223761
			// lo = 2e^−1.72187 = 0.35746212358947443, hi = 2e^1.72187 = 11.189996746602949
			name: "1 2 4", rs: []float64{1, 2, 4}, geomean: 2,
			lo: 0.35746212358947443, hi: 11.189996746602949, sd: math.Ln2,
		},
		{
			// ln r = ln 0.9, 0, ln 1.1, ln 1.2 = −0.10536052, 0, 0.09531018, 0.18232156
			// m = 0.17227122/4 = 0.043067805235113296, geomean e^m = 1.0440086817048491
			// s = 0.12383682181902173 (n−1 = 3); t_{0.975,3} = 3.1824463052837096
			// half = t·s/√4 = 0.19705201802801139
			// lo = e^(m−half) = 0.85728555504922787, hi = e^(m+half) = 1.2714014846692577
			name: "0.9 1.0 1.1 1.2", rs: []float64{0.9, 1.0, 1.1, 1.2}, geomean: 1.0440086817048491,
			lo: 0.85728555504922787, hi: 1.2714014846692577, sd: 0.12383682181902173,
		},
		{
			// All equal: s = 0, the interval collapses onto the geomean.
			name: "equal", rs: []float64{1.25, 1.25, 1.25}, geomean: 1.25, lo: 1.25, hi: 1.25,
		},
	}
	for _, c := range cases {
		var in []WorkloadResult
		for i, r := range c.rs {
			in = append(in, usable(string(rune('a'+i)), "p", r))
		}
		s, err := Boards(in)
		if err != nil {
			t.Fatal(err)
		}
		checkBoard(t, s.Overall, len(c.rs), c.geomean, c.lo, c.hi)
		if !near(s.Overall.SDLog, c.sd, 1e-12) || s.Overall.DF != len(c.rs)-1 || !near(s.Overall.T, TQuantile(0.975, len(c.rs)-1), 0) {
			t.Errorf("%s: sd_log %.17g df %d t %v", c.name, s.Overall.SDLog, s.Overall.DF, s.Overall.T)
		}
		if len(s.Phases) != 1 || s.Phases[0] != withPhase(s.Overall, "p") {
			t.Errorf("%s: phase boards %+v, want the overall board", c.name, s.Phases)
		}
	}
}

// withPhase returns b named for a phase.
func withPhase(b Board, phase string) Board {
	b.Phase = phase
	return b
}

func TestBoardsPhasesAndOrder(t *testing.T) {
	// Given out of order. Phase "a": r 1.1 (x), 1.21 (y); phase "b": 0.9 (w)
	// and a failed workload (v).
	in := []WorkloadResult{usable("y", "a", 1.21), failed("v", "b"), usable("x", "a", 1.1), usable("w", "b", 0.9)}
	s, err := Boards(in)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range s.Workloads {
		names = append(names, w.Workload)
	}
	if strings.Join(names, " ") != "v w x y" {
		t.Errorf("workload order %v", names)
	}
	if len(s.Phases) != 2 || s.Phases[0].Phase != "a" || s.Phases[1].Phase != "b" {
		t.Fatalf("phases %+v", s.Phases)
	}
	// Phase a: ln r = ln 1.1, 2 ln 1.1: m = 1.5 ln 1.1, geomean 1.1^1.5 = 1.1536897329871667
	// s = ln 1.1/√2 = 0.067394474455747240; half = 12.706204736174705·s/√2 = 0.60551532901768761
	// lo = e^(m−half) = 0.62967588558152187, hi = e^(m+half) = 2.1137858864815623
	checkBoard(t, s.Phases[0], 2, 1.1536897329871667, 0.62967588558152187, 2.1137858864815623)
	// Phase b: one usable workload: geomean 0.9, interval [0, +Inf).
	checkBoard(t, s.Phases[1], 1, 0.9, 0, math.Inf(1))
	if s.Phases[1].Unusable != 1 || s.Phases[0].Unusable != 0 || s.Overall.Unusable != 1 || s.Unusable != 1 {
		t.Errorf("unusable counts: a %d b %d overall %d summary %d", s.Phases[0].Unusable, s.Phases[1].Unusable, s.Overall.Unusable, s.Unusable)
	}
	// Overall: ln 1.1, ln 1.21, ln 0.9: m = 0.060190007918382760, geomean 1.0620383230661927
	// s = 0.15108355134114004; half = 4.3026527297494639·s/√3 = 0.37531234751169328
	// lo = 0.72969959765611979, hi = 1.5457393745101117
	checkBoard(t, s.Overall, 3, 1.0620383230661927, 0.72969959765611979, 1.5457393745101117)
	// The failed workload is listed with its failure and no numbers.
	if v := s.Workloads[0]; v.Usable || v.R != 0 || len(v.Failures) != 1 || v.Failures[0].Reason != FailureCrash {
		t.Errorf("failed workload %+v", v)
	}
	if x := s.Workloads[2]; x.R != 1.1 || x.MaxRobustCV != 0.01 || x.MaxCV != 0.02 {
		t.Errorf("workload x %+v", x)
	}
	if b, ok := s.Phase("b"); !ok || b.N != 1 {
		t.Errorf("Phase(b) = %+v, %v", b, ok)
	}
	if _, ok := s.Phase("c"); ok {
		t.Error("Phase(c) found")
	}
	// The input is not reordered.
	if in[0].Workload != "y" {
		t.Error("Boards reordered its input")
	}
}

func TestBoardsAllFailed(t *testing.T) {
	s, err := Boards([]WorkloadResult{failed("a", "p"), failed("b", "p")})
	if err != nil {
		t.Fatal(err)
	}
	checkBoard(t, s.Overall, 0, 0, 0, math.Inf(1))
	if s.Overall.Unusable != 2 || s.Unusable != 2 {
		t.Errorf("unusable %d %d", s.Overall.Unusable, s.Unusable)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Error(err)
	}
}

func TestBoardsSameNameInTwoLanes(t *testing.T) {
	a, b := usable("w", "p", 1), usable("w", "p", 2)
	b.Lane = "other"
	s, err := Boards([]WorkloadResult{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if s.Workloads[0].Lane != "other" || s.Overall.N != 2 {
		t.Errorf("workloads %+v", s.Workloads)
	}
}

func TestBoardsErrors(t *testing.T) {
	nan := usable("a", "p", math.NaN())
	inf := usable("a", "p", math.Inf(1))
	zero := usable("a", "p", 0)
	neg := usable("a", "p", -1)
	cv := usable("a", "p", 1)
	cv.MaxRobustCV = math.NaN()
	cv2 := usable("a", "p", 1)
	cv2.MaxCV = -1
	noFail := failed("a", "p")
	noFail.Failures = nil
	cases := []struct {
		in   []WorkloadResult
		want string
	}{
		{nil, "no workloads"},
		{[]WorkloadResult{}, "no workloads"},
		{[]WorkloadResult{usable("a", "p", 1), usable("a", "q", 2)}, `workload "a" appears twice in lane "perf"`},
		{[]WorkloadResult{usable("", "p", 1)}, `a workload of lane "perf" has no name`},
		{[]WorkloadResult{usable("a", "", 1)}, `workload "a" (lane "perf") has no phase`},
		{[]WorkloadResult{nan}, `workload "a" (lane "perf"): r = NaN; must be finite and > 0`},
		{[]WorkloadResult{inf}, `workload "a" (lane "perf"): r = +Inf; must be finite and > 0`},
		{[]WorkloadResult{zero}, `workload "a" (lane "perf"): r = 0; must be finite and > 0`},
		{[]WorkloadResult{neg}, `workload "a" (lane "perf"): r = -1; must be finite and > 0`},
		{[]WorkloadResult{cv}, `workload "a" (lane "perf"): max robust CV = NaN; must be finite and ≥ 0`},
		{[]WorkloadResult{cv2}, `workload "a" (lane "perf"): max CV = -1; must be finite and ≥ 0`},
		{[]WorkloadResult{noFail}, `workload "a" (lane "perf") is not usable but lists no failure`},
	}
	for _, c := range cases {
		if _, err := Boards(c.in); err == nil || err.Error() != c.want {
			t.Errorf("error %v\n want %s", err, c.want)
		}
	}
}

func TestBoardJSON(t *testing.T) {
	s, err := Boards([]WorkloadResult{usable("a", "p", 1.5), usable("b", "q", 1.2), usable("c", "q", 1.3)})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	// Phase p has one workload: its hi is null and bounded false.
	if !strings.Contains(text, `{"phase":"p","n":1,"unusable":0,"geomean":1.5,"lo":0,"hi":null,"bounded":false,`) {
		t.Errorf("phase p encoded as %s", text)
	}
	var back Summary
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if p, _ := back.Phase("p"); !math.IsInf(p.Hi, 1) {
		t.Errorf("decoded hi %v, want +Inf", p.Hi)
	}
	if q, _ := back.Phase("q"); q != s.Phases[1] || back.Overall != s.Overall {
		t.Errorf("round trip changed the boards: %+v vs %+v", back, s)
	}
	again, _ := json.Marshal(back)
	if string(again) != text {
		t.Errorf("re-encoding differs:\n%s\n%s", again, text)
	}
	if err := json.Unmarshal([]byte(`{"n":"x"}`), new(Board)); err == nil {
		t.Error("bad board JSON accepted")
	}
}
