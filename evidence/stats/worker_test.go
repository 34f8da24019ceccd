package stats

import (
	"math"
	"slices"
	"testing"
)

// near reports whether got is within tol of want, relative to max(1, |want|).
func near(got, want, tol float64) bool {
	return got == want || math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestWorkerHandComputed(t *testing.T) {
	cases := []struct {
		name    string
		steps   []float64
		warmups int
		dropped []int
		want    WorkerStats
	}{
		{
			// Warm-ups 0,1,2 (5, 4, 3) dropped; of 1.0 1.2 0.9 1.5 1.1 the
			// slowest is 1.5 at index 6. Kept: 1.0 1.2 0.9 1.1 (indices 3,4,5,7).
			// T = 4.2/4 = 1.05
			// deviations −0.05 0.15 −0.15 0.05; squares sum 0.0025+0.0225+0.0225+0.0025 = 0.05
			// sd = sqrt(0.05/3) = 0.12909944487358056; CV = sd/1.05 = 0.12295185226055291
			// sorted 0.9 1.0 1.1 1.2: median = (1.0+1.1)/2 = 1.05
			// |1.0−1.05|=0.05 |1.2−1.05|=0.15 |0.9−1.05|=0.15 |1.1−1.05|=0.05
			// sorted 0.05 0.05 0.15 0.15: MAD = (0.05+0.15)/2 = 0.1
			// robust CV = 1.4826·0.1/1.05 = 0.1412
			name: "8 steps, 3 warm-ups", steps: []float64{5, 4, 3, 1.0, 1.2, 0.9, 1.5, 1.1}, warmups: 3,
			dropped: []int{0, 1, 2, 6},
			want: WorkerStats{Steps: 8, Warmups: 3, SlowestIndex: 6, Kept: 4, T: 1.05,
				SD: 0.12909944487358056, CV: 0.12295185226055291, Median: 1.05, MAD: 0.1, RobustCV: 0.1412},
		},
		{
			// No warm-ups; the slowest value 3 occurs at 3 and 4: the first
			// (index 3) is dropped. Kept 2 1 2 3: T = 8/4 = 2
			// deviations 0 −1 0 1: sd = sqrt(2/3) = 0.816496580927726; CV = 0.408248290463863
			// sorted 1 2 2 3: median 2; |dev| 0 1 0 1 → sorted 0 0 1 1: MAD 0.5
			// robust CV = 1.4826·0.5/2 = 0.37065
			name: "tie for slowest, no warm-ups", steps: []float64{2, 1, 2, 3, 3}, warmups: 0,
			dropped: []int{3},
			want: WorkerStats{Steps: 5, Warmups: 0, SlowestIndex: 3, Kept: 4, T: 2,
				SD: 0.816496580927726, CV: 0.408248290463863, Median: 2, MAD: 0.5, RobustCV: 0.37065},
		},
		{
			// Warm-up 9 dropped; of 1 2 4 8 the slowest 8 (index 4) dropped.
			// Kept 1 2 4: T = 7/3 = 2.3333333333333335
			// deviations −4/3 −1/3 5/3: squares 16/9+1/9+25/9 = 42/9; /2 = 7/3
			// sd = sqrt(7/3) = 1.5275252316519468; CV = sd/(7/3) = 0.6546536707079771
			// median 2; |dev| 1 0 2 → MAD 1; robust CV = 1.4826·1/2 = 0.7413
			name: "odd count", steps: []float64{9, 1, 2, 4, 8}, warmups: 1,
			dropped: []int{0, 4},
			want: WorkerStats{Steps: 5, Warmups: 1, SlowestIndex: 4, Kept: 3, T: 7.0 / 3,
				SD: 1.5275252316519468, CV: 0.6546536707079771, Median: 2, MAD: 1, RobustCV: 0.7413},
		},
		{
			// The slowest step may be the first after the warm-ups (index 3).
			// Kept 2 2 2 2 ... all equal: T 2, sd 0, CV 0, MAD 0, robust CV 0.
			name: "constant", steps: []float64{1, 1, 1, 7, 2, 2, 2, 2}, warmups: 3,
			dropped: []int{0, 1, 2, 3},
			want:    WorkerStats{Steps: 8, Warmups: 3, SlowestIndex: 3, Kept: 4, T: 2, Median: 2},
		},
		{
			// The minimum: warm-ups + slowest + 2 kept = 6 steps with 3 warm-ups.
			// Kept 1 3: T 2; sd = sqrt((1+1)/1) = 1.4142135623730951; CV 0.7071067811865476
			// median 2; |dev| 1 1 → MAD 1; robust CV = 1.4826/2 = 0.7413
			name: "two kept", steps: []float64{9, 9, 9, 1, 4, 3}, warmups: 3,
			dropped: []int{0, 1, 2, 4},
			want: WorkerStats{Steps: 6, Warmups: 3, SlowestIndex: 4, Kept: 2, T: 2,
				SD: 1.4142135623730951, CV: 0.7071067811865476, Median: 2, MAD: 1, RobustCV: 0.7413},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Worker(c.steps, c.warmups)
			if err != nil {
				t.Fatal(err)
			}
			if d := got.Dropped(); !slices.Equal(d, c.dropped) {
				t.Errorf("dropped %v, want %v", d, c.dropped)
			}
			if got.Steps != c.want.Steps || got.Warmups != c.want.Warmups || got.SlowestIndex != c.want.SlowestIndex || got.Kept != c.want.Kept {
				t.Errorf("counts %+v, want %+v", got, c.want)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"T", got.T, c.want.T}, {"SD", got.SD, c.want.SD}, {"CV", got.CV, c.want.CV},
				{"Median", got.Median, c.want.Median}, {"MAD", got.MAD, c.want.MAD}, {"RobustCV", got.RobustCV, c.want.RobustCV},
			} {
				if !near(f.got, f.want, 1e-14) {
					t.Errorf("%s = %.17g, want %.17g", f.name, f.got, f.want)
				}
			}
		})
	}
}

// TestWorkerDefault16 is the protocol's default: 16 steps, 3 warm-ups, 12 kept.
func TestWorkerDefault16(t *testing.T) {
	// Steps 10 9 8 (warm-ups), then 1.00 1.01 … 1.12 with 1.07 replaced by
	// 2 (the outlier, index 10). Kept: 1.00 … 1.12 without 1.07 (12 values).
	// T = (Σ_{i=0..12} (1 + i/100) − 1.07)/12 = (13 + 0.78 − 1.07)/12 = 12.71/12
	steps := []float64{10, 9, 8}
	for i := range 13 {
		steps = append(steps, 1+float64(i)/100)
	}
	steps[10] = 2
	got, err := Worker(steps, DefaultWarmups)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kept != 12 || got.SlowestIndex != 10 {
		t.Fatalf("kept %d, slowest %d; want 12, 10", got.Kept, got.SlowestIndex)
	}
	if !near(got.T, 12.71/12, 1e-14) {
		t.Errorf("T = %.17g, want %.17g", got.T, 12.71/12)
	}
	// Median of 1.00 … 1.06, 1.08 … 1.12 (12 values): (1.05 + 1.06)/2 = 1.055.
	if !near(got.Median, 1.055, 1e-14) {
		t.Errorf("median = %.17g, want 1.055", got.Median)
	}
}

func TestWorkerErrors(t *testing.T) {
	cases := []struct {
		steps   []float64
		warmups int
		want    string
	}{
		{nil, 3, "0 steps with 3 warm-ups and the slowest step dropped leave 0; need at least 2 (at least 6 steps)"},
		{[]float64{1, 1, 1, 1, 1}, 3, "5 steps with 3 warm-ups and the slowest step dropped leave 1; need at least 2 (at least 6 steps)"},
		{[]float64{1, 1}, 0, "2 steps with 0 warm-ups and the slowest step dropped leave 1; need at least 2 (at least 3 steps)"},
		{[]float64{1, 1, 1, 1}, -1, "warm-ups must be ≥ 0, got -1"},
		{[]float64{1, math.NaN(), 1, 1, 1, 1}, 3, "step 1 is NaN"},
		{[]float64{1, 1, 1, 1, math.Inf(1), 1}, 3, "step 4 is infinite (+Inf)"},
		{[]float64{1, 1, 1, 1, 1, math.Inf(-1)}, 3, "step 5 is infinite (-Inf)"},
		{[]float64{1, 1, 1, -0.5, 1, 1}, 3, "step 3 is negative (-0.5 s)"},
		{[]float64{1, 1, 1, 1, 0, 1}, 3, "step 4 is zero"},
		{[]float64{1, 1, 1, 1, math.Copysign(0, -1), 1}, 3, "step 4 is zero"},
	}
	for _, c := range cases {
		_, err := Worker(c.steps, c.warmups)
		if err == nil || err.Error() != c.want {
			t.Errorf("Worker(%v, %d) error %v, want %q", c.steps, c.warmups, err, c.want)
		}
	}
}

// TestWorkerExtremeMagnitudes checks that the statistics of huge and tiny
// step times neither overflow nor underflow: they scale.
func TestWorkerExtremeMagnitudes(t *testing.T) {
	base := []float64{1, 1, 1, 1.0, 1.2, 0.9, 1.5, 1.1}
	ref, err := Worker(base, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []float64{1e300, 1e-300} {
		s := slices.Clone(base)
		for i := range s {
			s[i] *= k
		}
		got, err := Worker(s, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !near(got.T/k, ref.T, 1e-14) || !near(got.CV, ref.CV, 1e-13) || !near(got.RobustCV, ref.RobustCV, 1e-13) {
			t.Errorf("scale %g: T/k %v CV %v robust %v; want %v %v %v", k, got.T/k, got.CV, got.RobustCV, ref.T, ref.CV, ref.RobustCV)
		}
	}
	// Kept M/2, M, M (one M dropped): T = (2.5/3)·M, no overflow.
	const m = math.MaxFloat64
	st, err := Worker([]float64{m, m / 2, m, m}, 0)
	if err != nil || !near(st.T/m, 2.5/3, 1e-15) || math.IsNaN(st.CV) || math.IsInf(st.SD, 0) {
		t.Errorf("near MaxFloat64: %+v, %v", st, err)
	}
}
