package stats

import (
	"fmt"
	"math"
	"slices"
)

// DefaultWarmups is the number of leading steps of a worker that are
// warm-ups and are dropped before any statistic is taken.
const DefaultWarmups = 3

// madScale makes the median absolute deviation a consistent estimator of
// the standard deviation of a normal distribution (1/Φ⁻¹(3/4)).
const madScale = 1.4826

// WorkerStats are the statistics of one worker's step times.
type WorkerStats struct {
	// Steps is the number of step times the worker reported, warm-ups
	// included.
	Steps int `json:"steps"`
	// Warmups is the number of leading steps dropped as warm-ups.
	Warmups int `json:"warmups"`
	// SlowestIndex is the index, in the reported steps, of the slowest
	// step after the warm-ups: the one dropped besides the warm-ups.
	SlowestIndex int `json:"slowest_index"`
	// Kept is the number of steps the statistics are taken over:
	// Steps − Warmups − 1.
	Kept int `json:"kept"`
	// T is the mean of the kept steps, in seconds.
	T float64 `json:"t_s"`
	// SD is the sample standard deviation (n−1) of the kept steps, in
	// seconds.
	SD float64 `json:"sd_s"`
	// CV is SD / T.
	CV float64 `json:"cv"`
	// Median is the median of the kept steps, in seconds.
	Median float64 `json:"median_s"`
	// MAD is the median absolute deviation of the kept steps from Median,
	// in seconds.
	MAD float64 `json:"mad_s"`
	// RobustCV is 1.4826 · MAD / Median.
	RobustCV float64 `json:"robust_cv"`
}

// Dropped returns the indices, in the reported steps, of every step left
// out of the statistics: the warm-ups and then the slowest step.
func (w WorkerStats) Dropped() []int {
	d := make([]int, 0, w.Warmups+1)
	for i := range w.Warmups {
		d = append(d, i)
	}
	return append(d, w.SlowestIndex)
}

// Worker computes the statistics of one worker's step times (seconds, in
// order, warm-ups included): the first warmups steps are dropped, then the
// single slowest remaining step (the first of equals), and the rest are
// kept. It refuses a negative warmups, any step that is not finite and
// > 0, and fewer than 2 kept steps; its errors name the step, and
// [Workload] adds the worker.
func Worker(steps []float64, warmups int) (WorkerStats, error) {
	if warmups < 0 {
		return WorkerStats{}, fmt.Errorf("warm-ups must be ≥ 0, got %d", warmups)
	}
	if err := checkSteps(steps); err != nil {
		return WorkerStats{}, err
	}
	if len(steps)-warmups-1 < 2 {
		return WorkerStats{}, fmt.Errorf("%d steps with %d warm-ups and the slowest step dropped leave %d; need at least 2 (at least %d steps)",
			len(steps), warmups, max(len(steps)-warmups-1, 0), warmups+3)
	}
	slowest := warmups
	for i := warmups + 1; i < len(steps); i++ {
		if steps[i] > steps[slowest] {
			slowest = i
		}
	}
	kept := make([]float64, 0, len(steps)-warmups-1)
	for i := warmups; i < len(steps); i++ {
		if i != slowest {
			kept = append(kept, steps[i])
		}
	}
	mean, sd := meanSD(kept)
	med := Median(kept)
	dev := make([]float64, len(kept))
	for i, y := range kept {
		dev[i] = math.Abs(y - med)
	}
	mad := Median(dev)
	return WorkerStats{
		Steps:        len(steps),
		Warmups:      warmups,
		SlowestIndex: slowest,
		Kept:         len(kept),
		T:            mean,
		SD:           sd,
		CV:           sd / mean,
		Median:       med,
		MAD:          mad,
		RobustCV:     madScale * mad / med,
	}, nil
}

// checkSteps refuses a step time that is not finite and > 0.
func checkSteps(steps []float64) error {
	for i, x := range steps {
		switch {
		case math.IsNaN(x):
			return fmt.Errorf("step %d is NaN", i)
		case math.IsInf(x, 0):
			return fmt.Errorf("step %d is infinite (%v)", i, x)
		case x < 0:
			return fmt.Errorf("step %d is negative (%v s)", i, x)
		case x == 0:
			return fmt.Errorf("step %d is zero", i)
		}
	}
	return nil
}

// meanSD returns the mean and the sample standard deviation of xs
// (len(xs) ≥ 2, every x finite and > 0). It works on xs divided by their
// maximum so that neither the sum nor the sum of squares can overflow, and
// clamps the mean into [min, max] against rounding.
func meanSD(xs []float64) (mean, sd float64) {
	lo, hi := slices.Min(xs), slices.Max(xs)
	var sum float64
	for _, x := range xs {
		sum += x / hi
	}
	mu := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		d := x/hi - mu
		ss += d * d
	}
	mean = min(max(mu*hi, lo), hi)
	sd = math.Sqrt(ss/float64(len(xs)-1)) * hi
	return mean, sd
}

// Median returns the median of xs (len(xs) ≥ 1) without reordering xs: the
// middle value, or the mean of the two middle values.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	a, b := s[n/2-1], s[n/2]
	return a + (b-a)/2
}
