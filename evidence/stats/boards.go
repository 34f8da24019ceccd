package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Confidence is the two-sided confidence level of a board's interval.
const Confidence = 0.95

// Board is the geometric mean of r over a set of workloads, with its
// 95 % interval (see the package documentation for the formulas).
type Board struct {
	// Phase is the phase the board covers; empty for the overall board.
	Phase string `json:"phase,omitempty"`
	// N is the number of usable workloads the board is computed over.
	N int `json:"n"`
	// Unusable is the number of the board's workloads left out because a
	// worker failed; the policy must see them.
	Unusable int `json:"unusable"`
	// Geomean is exp(MeanLog): the geometric mean of r. 0 when N = 0.
	Geomean float64 `json:"geomean"`
	// Lo and Hi bound the 95 % interval of the geometric mean. When N < 2
	// the interval is unbounded: Lo = 0 and Hi = +Inf, which JSON encodes
	// as null.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Bounded is false when N < 2 (and when exp overflows Hi).
	Bounded bool `json:"bounded"`
	// MeanLog is the mean of ln r (0 when N = 0).
	MeanLog float64 `json:"mean_log"`
	// SDLog is the sample standard deviation of ln r (0 when N < 2).
	SDLog float64 `json:"sd_log"`
	// DF is N − 1 and T the 0.975 quantile of Student's t with DF degrees
	// of freedom (both 0 when N < 2).
	DF int     `json:"df"`
	T  float64 `json:"t"`
}

// boardJSON is Board as encoded: Hi is null when infinite.
type boardJSON struct {
	Phase    string   `json:"phase,omitempty"`
	N        int      `json:"n"`
	Unusable int      `json:"unusable"`
	Geomean  float64  `json:"geomean"`
	Lo       float64  `json:"lo"`
	Hi       *float64 `json:"hi"`
	Bounded  bool     `json:"bounded"`
	MeanLog  float64  `json:"mean_log"`
	SDLog    float64  `json:"sd_log"`
	DF       int      `json:"df"`
	T        float64  `json:"t"`
}

// MarshalJSON encodes the board, with an infinite Hi as null.
func (b Board) MarshalJSON() ([]byte, error) {
	j := b.withHi(nil)
	if !math.IsInf(b.Hi, 1) {
		hi := b.Hi
		j.Hi = &hi
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes a board, with a null or missing hi as +Inf.
func (b *Board) UnmarshalJSON(data []byte) error {
	var j boardJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	hi := math.Inf(1)
	if j.Hi != nil {
		hi = *j.Hi
	}
	*b = Board{Phase: j.Phase, N: j.N, Unusable: j.Unusable, Geomean: j.Geomean, Lo: j.Lo, Hi: hi,
		Bounded: j.Bounded, MeanLog: j.MeanLog, SDLog: j.SDLog, DF: j.DF, T: j.T}
	return nil
}

// withHi converts b to its encoded shape with the given Hi.
func (b Board) withHi(hi *float64) boardJSON {
	return boardJSON{Phase: b.Phase, N: b.N, Unusable: b.Unusable, Geomean: b.Geomean, Lo: b.Lo, Hi: hi,
		Bounded: b.Bounded, MeanLog: b.MeanLog, SDLog: b.SDLog, DF: b.DF, T: b.T}
}

// WorkloadSummary is one workload as the boards and the policy see it.
type WorkloadSummary struct {
	Lane     string `json:"lane"`
	Workload string `json:"workload"`
	Phase    string `json:"phase"`
	Usable   bool   `json:"usable"`
	// R is the workload's ratio (> 1: the candidate is faster); 0 when
	// not usable.
	R float64 `json:"r"`
	// MaxRobustCV and MaxCV are the largest robust CV and CV of its four
	// workers; 0 when not usable.
	MaxRobustCV float64 `json:"max_robust_cv"`
	MaxCV       float64 `json:"max_cv"`
	// Failures says why it is not usable.
	Failures []Failure `json:"failures,omitempty"`
}

// Summary is the boards of a crossover run.
type Summary struct {
	// Overall is the board over every usable workload.
	Overall Board `json:"overall"`
	// Phases has one board per phase, by phase name.
	Phases []Board `json:"phases"`
	// Workloads has every workload, usable or not, by name (then lane).
	Workloads []WorkloadSummary `json:"workloads"`
	// Unusable is the number of workloads left out of the boards.
	Unusable int `json:"unusable"`
}

// Phase returns the board of the named phase, and whether there is one.
func (s Summary) Phase(name string) (Board, bool) {
	for _, b := range s.Phases {
		if b.Phase == name {
			return b, true
		}
	}
	return Board{}, false
}

// Boards computes the overall and per-phase boards over the results of
// [Workload]. Unusable workloads are counted on their boards and listed
// with their failures but do not enter the means. It errors on an empty
// input, a result without a workload name or phase, a workload that
// appears twice in a lane, a usable result whose r is not finite and > 0
// or whose CVs are not finite and ≥ 0, and an unusable result that lists
// no failure.
func Boards(results []WorkloadResult) (Summary, error) {
	if len(results) == 0 {
		return Summary{}, fmt.Errorf("no workloads")
	}
	rs := sortedWorkloads(results)
	sum := Summary{Workloads: make([]WorkloadSummary, 0, len(rs))}
	var phases []string
	for i, r := range rs {
		if err := checkResult(r); err != nil {
			return Summary{}, err
		}
		if i > 0 && compareWorkloads(rs[i-1], r) == 0 {
			return Summary{}, fmt.Errorf("workload %q appears twice in lane %q", r.Workload, r.Lane)
		}
		if !slices.Contains(phases, r.Phase) {
			phases = append(phases, r.Phase)
		}
		ws := WorkloadSummary{Lane: r.Lane, Workload: r.Workload, Phase: r.Phase, Usable: r.Usable,
			Failures: slices.Clone(r.Failures)}
		if r.Usable {
			ws.R, ws.MaxRobustCV, ws.MaxCV = r.R, r.MaxRobustCV, r.MaxCV
			ws.Failures = nil
		} else {
			sum.Unusable++
		}
		sum.Workloads = append(sum.Workloads, ws)
	}
	slices.Sort(phases)
	sum.Overall = board("", sum.Workloads)
	for _, p := range phases {
		var in []WorkloadSummary
		for _, w := range sum.Workloads {
			if w.Phase == p {
				in = append(in, w)
			}
		}
		sum.Phases = append(sum.Phases, board(p, in))
	}
	return sum, nil
}

// checkResult refuses a workload result Boards cannot use.
func checkResult(r WorkloadResult) error {
	name := fmt.Sprintf("workload %q (lane %q)", r.Workload, r.Lane)
	switch {
	case r.Workload == "":
		return fmt.Errorf("a workload of lane %q has no name", r.Lane)
	case r.Phase == "":
		return fmt.Errorf("%s has no phase", name)
	case !r.Usable && len(r.Failures) == 0:
		return fmt.Errorf("%s is not usable but lists no failure", name)
	case !r.Usable:
		return nil
	case !(r.R > 0) || math.IsInf(r.R, 1):
		return fmt.Errorf("%s: r = %v; must be finite and > 0", name, r.R)
	case !(r.MaxRobustCV >= 0) || math.IsInf(r.MaxRobustCV, 1):
		return fmt.Errorf("%s: max robust CV = %v; must be finite and ≥ 0", name, r.MaxRobustCV)
	case !(r.MaxCV >= 0) || math.IsInf(r.MaxCV, 1):
		return fmt.Errorf("%s: max CV = %v; must be finite and ≥ 0", name, r.MaxCV)
	}
	return nil
}

// board computes one board over ws (checked by checkResult).
func board(phase string, ws []WorkloadSummary) Board {
	b := Board{Phase: phase, Hi: math.Inf(1)}
	var logs []float64
	rmin, rmax := math.Inf(1), 0.0
	for _, w := range ws {
		if !w.Usable {
			b.Unusable++
			continue
		}
		logs = append(logs, math.Log(w.R))
		rmin, rmax = min(rmin, w.R), max(rmax, w.R)
	}
	b.N = len(logs)
	if b.N == 0 {
		return b
	}
	var s float64
	for _, l := range logs {
		s += l
	}
	m := s / float64(b.N)
	b.MeanLog = m
	// The geometric mean lies in [min r, max r]; clamp against rounding.
	b.Geomean = min(max(math.Exp(m), rmin), rmax)
	if b.N == 1 {
		return b
	}
	var ss float64
	for _, l := range logs {
		ss += (l - m) * (l - m)
	}
	b.SDLog = math.Sqrt(ss / float64(b.N-1))
	b.DF = b.N - 1
	b.T = TQuantile(1-(1-Confidence)/2, b.DF)
	half := b.T * b.SDLog / math.Sqrt(float64(b.N))
	b.Lo = min(math.Exp(m-half), b.Geomean)
	b.Hi = max(math.Exp(m+half), b.Geomean)
	b.Bounded = !math.IsInf(b.Hi, 1)
	return b
}
