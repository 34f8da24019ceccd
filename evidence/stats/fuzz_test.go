package stats

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// floats decodes data as little-endian float64 words (any bit pattern:
// NaN, ±Inf, negatives, zeros and subnormals included).
func floats(data []byte) []float64 {
	var xs []float64
	for ; len(data) >= 8; data = data[8:] {
		xs = append(xs, math.Float64frombits(binary.LittleEndian.Uint64(data)))
	}
	return xs
}

// normalPositive reports whether every x is finite, > 0 and not
// subnormal.
func normalPositive(xs []float64) bool {
	for _, x := range xs {
		if !(x >= 0x1p-1022 && x <= math.MaxFloat64) {
			return false
		}
	}
	return true
}

// quarters splits xs into the four workers' step lists.
func quarters(xs []float64) [4][]float64 {
	var q [4][]float64
	n := len(xs) / 4
	for k := range 4 {
		q[k] = xs[k*n : (k+1)*n]
	}
	return q
}

// FuzzStats checks that Worker, Workload and Boards never panic on any
// input, that what they accept is consistent and encodes as JSON, and
// that r does not change when every step time is multiplied by the same
// constant. Run it with
//
//	go test ./evidence/stats -run '^$' -fuzz FuzzStats -fuzztime 30s -fuzzminimizetime 20x
func FuzzStats(f *testing.F) {
	word := func(xs ...float64) []byte {
		var b []byte
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	var steady []float64
	for k := range 4 {
		for j := range 8 {
			steady = append(steady, 1+0.01*float64(k)+0.001*float64(j%3))
		}
	}
	f.Add(word(steady...), uint8(3), 2.5)
	f.Add(word(5, 4, 3, 1.0, 1.2, 0.9, 1.5, 1.1), uint8(3), 1e-3)
	f.Add(word(1e300, 1e-300, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), uint8(0), 1e10)
	f.Add(word(math.NaN(), math.Inf(1), -1, 0, 1, 1, 1, 1), uint8(1), -1.0)
	f.Add([]byte("not a multiple of eight"), uint8(200), math.NaN())
	f.Add([]byte{}, uint8(0), 0.0)

	f.Fuzz(func(t *testing.T, data []byte, w uint8, scale float64) {
		xs := floats(data)
		warmups := int(w%8) - 1 // −1 exercises the refusal of negative warm-ups

		// Worker: an error, or consistent statistics.
		if st, err := Worker(xs, warmups); err == nil {
			kept := slices.Clone(xs[warmups:])
			kept = slices.Delete(kept, st.SlowestIndex-warmups, st.SlowestIndex-warmups+1)
			lo, hi := slices.Min(kept), slices.Max(kept)
			switch {
			case st.Kept != len(xs)-warmups-1 || st.Kept != len(kept) || st.Kept < 2:
				t.Fatalf("kept %d of %d with %d warm-ups", st.Kept, len(xs), warmups)
			case xs[st.SlowestIndex] != slices.Max(xs[warmups:]):
				t.Fatalf("dropped index %d (%v) is not the slowest", st.SlowestIndex, xs[st.SlowestIndex])
			case !(st.T >= lo && st.T <= hi) || !(st.Median >= lo && st.Median <= hi):
				t.Fatalf("T %v median %v outside [%v, %v]", st.T, st.Median, lo, hi)
			case !(st.CV >= 0) || math.IsInf(st.CV, 0) || !(st.RobustCV >= 0) || math.IsInf(st.RobustCV, 0):
				t.Fatalf("CV %v robust CV %v", st.CV, st.RobustCV)
			}
			if _, err := json.Marshal(st); err != nil {
				t.Fatal(err)
			}
		} else if err.Error() == "" {
			t.Fatal("empty error")
		}

		// Workload on the four quarters, and r under scaling.
		q := quarters(xs)
		res, err := Workload(abba(q[0], q[1], q[2], q[3]), warmups)
		if err == nil {
			if !res.Usable || !(res.R > 0) || math.IsInf(res.R, 0) {
				t.Fatalf("usable %v r %v", res.Usable, res.R)
			}
			if _, err := json.Marshal(res); err != nil {
				t.Fatal(err)
			}
		}
		c := math.Abs(scale)
		checkScaling := func(q [4][]float64, res WorkloadResult) {
			var s [4][]float64
			for k := range 4 {
				s[k] = scaled(q[k], c)
			}
			if !normalPositive(slices.Concat(s[0], s[1], s[2], s[3])) {
				return
			}
			res2, err := Workload(abba(s[0], s[1], s[2], s[3]), warmups)
			switch {
			case err != nil && strings.Contains(err.Error(), "not representable") && (res.R > 1e300 || res.R < 1e-300):
			case err != nil:
				t.Fatalf("scaled by %v: %v (unscaled r %v)", c, err, res.R)
			case math.Abs(res2.R/res.R-1) > 1e-11:
				t.Fatalf("scaled by %v: r %.17g, unscaled %.17g", c, res2.R, res.R)
			}
		}
		if err == nil && normalPositive(xs) && normalPositive([]float64{c}) {
			checkScaling(q, res)
		}
		// The same on step times that are always valid: byte b is
		// 0.25 + b/64 seconds.
		if normalPositive([]float64{c}) {
			bs := make([]float64, len(data))
			for i, b := range data {
				bs[i] = 0.25 + float64(b)/64
			}
			qb := quarters(bs)
			if res, err := Workload(abba(qb[0], qb[1], qb[2], qb[3]), warmups); err == nil {
				checkScaling(qb, res)
			} else if len(qb[0]) >= warmups+3 && warmups >= 0 {
				t.Fatalf("valid steps refused: %v", err)
			}
		}

		// Boards over ratios taken from the same words, with a phase and
		// a usability from each word's low bits.
		var rs []WorkloadResult
		for i, x := range xs {
			bits := math.Float64bits(x)
			name := string(rune('a'+i%26)) + strings.Repeat("z", i/26)
			phase := string(rune('p' + bits%3))
			if bits%7 == 0 {
				rs = append(rs, failed(name, phase))
			} else {
				rs = append(rs, usable(name, phase, x))
			}
		}
		sum, err := Boards(rs)
		if err != nil {
			return
		}
		if _, err := json.Marshal(sum); err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, b := range append([]Board{sum.Overall}, sum.Phases...) {
			if b.N > 0 && !(b.Lo <= b.Geomean && b.Geomean <= b.Hi && b.Geomean > 0) {
				t.Fatalf("board %+v out of order", b)
			}
			if b.Phase != "" {
				total += b.N + b.Unusable
			}
		}
		if total != len(rs) || sum.Overall.N+sum.Overall.Unusable != len(rs) {
			t.Fatalf("boards count %d and %d+%d of %d workloads", total, sum.Overall.N, sum.Overall.Unusable, len(rs))
		}
		if !slices.IsSortedFunc(sum.Phases, func(a, b Board) int { return strings.Compare(a.Phase, b.Phase) }) {
			t.Fatal("phases not sorted")
		}
	})
}

// TestFuzzSeedsUseful makes sure the main seed reaches the scaling check.
func TestFuzzSeedsUseful(t *testing.T) {
	var steady []float64
	for k := range 4 {
		for j := range 8 {
			steady = append(steady, 1+0.01*float64(k)+0.001*float64(j%3))
		}
	}
	q := quarters(steady)
	if res, err := Workload(abba(q[0], q[1], q[2], q[3]), 2); err != nil || !res.Usable {
		t.Fatalf("seed workload: %+v %v", res, err)
	}
}
