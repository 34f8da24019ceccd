package stats

import (
	"math"
	"testing"
)

// tReference are quantiles of Student's t for the float64 value of p,
// computed with mpmath at 45 significant digits (inverting the regularized
// incomplete beta function, and for df ≥ 100000 the integral of the
// density) and rounded to 20 digits.
var tReference = []struct {
	df   int
	p    float64
	want float64
}{
	{1, 0.6, 0.32491969623290624903},
	{1, 0.9, 3.0776835371752541331},
	{1, 0.975, 12.706204736174693314},
	{1, 0.995, 63.656741162871524447},
	{1, 0.999999, 318309.88617359026169},
	{1, 0.025, -12.706204736174703938},
	{1, 1e-12, -318309886183.79067794},
	{1, 0.999999999999, 318316927901.77965169},
	{2, 0.6, 0.28867513459481281549},
	{2, 0.9, 1.8856180831641270225},
	{2, 0.975, 4.3026527297494617894},
	{2, 0.995, 9.9248432009182886403},
	{2, 0.999999, 707.10572051576712459},
	{2, 0.025, -4.3026527297494637234},
	{2, 1e-12, -707106.78118548687134},
	{2, 0.999999999999, 707114.60252440793133},
	{3, 0.6, 0.27667066233268984701},
	{3, 0.9, 1.6377443536962103222},
	{3, 0.975, 3.1824463052837084359},
	{3, 0.995, 5.8409093097333554113},
	{3, 0.999999, 103.29946777942897177},
	{3, 0.025, -3.1824463052837095204},
	{3, 1e-12, -10331.108244292486204},
	{3, 0.999999999999, 10331.184426046091263},
	{4, 0.6, 0.270722294707597363},
	{4, 0.9, 1.5332062740589440989},
	{4, 0.975, 2.7764451051977934898},
	{4, 0.995, 4.6040948713499920459},
	{4, 0.999999, 41.577854150151498845},
	{4, 0.025, -2.7764451051977943036},
	{4, 1e-12, -1316.0727465592565424},
	{4, 0.999999999999, 1316.080025122137866},
	{5, 0.6, 0.26718086570414506569},
	{5, 0.9, 1.4758840488244812516},
	{5, 0.975, 2.5705818356363147828},
	{5, 0.995, 4.0321429835552271793},
	{5, 0.999999, 24.771029720372488564},
	{5, 0.025, -2.570581835636315469},
	{5, 1e-12, -393.95695957760377025},
	{5, 0.999999999999, 393.95870264999018003},
	{7, 0.6, 0.26316686135202275215},
	{7, 0.9, 1.4149239276505086353},
	{7, 0.975, 2.3646242515927847379},
	{7, 0.995, 3.4994832973504932609},
	{7, 0.999999, 14.24146965192115339},
	{7, 0.025, -2.3646242515927853039},
	{7, 1e-12, -104.02182926264720445},
	{7, 0.999999999999, 104.02215819037055077},
	{10, 0.6, 0.26018482949208017615},
	{10, 0.9, 1.3721836411103357746},
	{10, 0.975, 2.2281388519862742245},
	{10, 0.995, 3.1692726726169507118},
	{10, 0.999999, 9.7519954909098546085},
	{10, 0.025, -2.2281388519862747157},
	{10, 1e-12, -40.532096178662596601},
	{10, 0.999999999999, 40.532186343811445466},
	{30, 0.6, 0.25560536495191271444},
	{30, 0.9, 1.3104150253913957112},
	{30, 0.975, 2.0422724563012378878},
	{30, 0.995, 2.7499956535672249664},
	{30, 0.999999, 5.8711171204086238133},
	{30, 0.025, -2.0422724563012382836},
	{30, 1e-12, -11.39721752331141119},
	{30, 0.999999999999, 11.397227795416011091},
	{100, 0.6, 0.25402218245822775892},
	{100, 0.9, 1.2900747613465160976},
	{100, 0.975, 1.9839715185235518946},
	{100, 0.995, 2.625890521438017607},
	{100, 0.999999, 5.0488308772214468406},
	{100, 0.025, -1.9839715185235522621},
	{100, 1e-12, -8.0258255944932530634},
	{100, 0.999999999999, 8.0258300602186460029},
	{1000, 0.6, 0.25341451583949870728},
	{1000, 0.9, 1.282398721460924564},
	{1000, 0.975, 1.9623390808264081039},
	{1000, 0.995, 2.5807546980659507706},
	{1000, 0.999999, 4.7816086204524386087},
	{1000, 0.025, -1.9623390808264084612},
	{1000, 1e-12, -7.1242289253144091385},
	{1000, 0.999999999999, 7.1242321273824425987},
	{10000, 0.6, 0.25335384344572679407},
	{10000, 0.9, 1.2816362297304776706},
	{10000, 0.975, 1.9602012398906258778},
	{10000, 0.995, 2.5763210466685285853},
	{10000, 0.999999, 4.7562296850509578241},
	{10000, 0.025, -1.9602012398906262341},
	{10000, 1e-12, -7.0433716020557755953},
	{10000, 0.999999999999, 7.043374698348471502},
	{100000, 0.6, 0.25334777715717988552},
	{100000, 0.975, 1.9599877075346092587},
	{100000, 0.999999, 4.7537047163854760717},
	{100000, 0.999999999999, 7.0353748282930375373},
	{100001, 0.6, 0.25334777715043972844},
	{100001, 0.975, 1.9599877072973788629},
	{100001, 0.999999, 4.7537047135812839755},
	{100001, 0.999999999999, 7.0353748194129883678},
	{1000000, 0.6, 0.253347170537841622},
	{1000000, 0.975, 1.9599663568141066553},
	{1000000, 0.999999, 4.753452348273869515},
	{1000000, 0.999999999999, 7.0345756932732172896},
	{1000000000, 0.6, 0.25334710320320177253},
	{1000000000, 0.975, 1.9599639869123250887},
	{1000000000, 0.999999, 4.7534243368564002466},
	{1000000000, 0.999999999999, 7.0344869988301061586},
}

// TestTQuantileReference checks TQuantile against the high-precision
// references: the stated accuracy is 1e-12 relative (the worst case found
// is about 3e-13, at df = 100000).
func TestTQuantileReference(t *testing.T) {
	worst := 0.0
	for _, c := range tReference {
		got := TQuantile(c.p, c.df)
		rel := math.Abs(got-c.want) / math.Abs(c.want)
		worst = max(worst, rel)
		if rel > 1e-12 {
			t.Errorf("TQuantile(%v, %d) = %.17g, want %.17g (relative error %.2g)", c.p, c.df, got, c.want, rel)
		}
	}
	t.Logf("worst relative error %.3g", worst)
}

// TestTQuantileTable checks the classical two-sided 95 % table to 3
// decimals.
func TestTQuantileTable(t *testing.T) {
	for _, c := range []struct {
		df   int
		want float64
	}{
		{1, 12.706}, {2, 4.303}, {3, 3.182}, {5, 2.571}, {10, 2.228}, {30, 2.042}, {100, 1.984},
	} {
		got := TQuantile(0.975, c.df)
		if math.Round(got*1000)/1000 != c.want {
			t.Errorf("TQuantile(0.975, %d) = %.6f, rounds to %.3f, want %.3f", c.df, got, math.Round(got*1000)/1000, c.want)
		}
	}
}

// TestTQuantileClosedForms checks the closed forms for one and two
// degrees of freedom: t = tan(π(p − ½)), evaluated as ∓1/tan(π·q) with
// q = min(p, 1 − p) to stay well conditioned near the tails, and
// t = (2p − 1)/sqrt(2p(1 − p)).
func TestTQuantileClosedForms(t *testing.T) {
	for _, p := range []float64{1e-9, 0.001, 0.025, 0.1, 0.3, 0.5, 0.51, 0.7, 0.9, 0.975, 0.999, 1 - 1e-9} {
		want1 := 0.0
		switch {
		case p < 0.5:
			want1 = -1 / math.Tan(math.Pi*p)
		case p > 0.5:
			want1 = 1 / math.Tan(math.Pi*(1-p))
		}
		want2 := (2*p - 1) / math.Sqrt(2*p*(1-p))
		for df, want := range map[int]float64{1: want1, 2: want2} {
			got := TQuantile(p, df)
			if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("TQuantile(%v, %d) = %.17g, closed form %.17g", p, df, got, want)
			}
		}
	}
}

// TestTQuantileInverse checks TCDF(TQuantile(p)) = p, the symmetry
// t_{1−p} = −t_p, and that the two methods meet at the switch from the
// continued fraction (df = 100000) to the expansion (df = 100001).
func TestTQuantileInverse(t *testing.T) {
	for _, df := range []int{1, 2, 3, 7, 29, 200, 5000, 100000} {
		for _, p := range []float64{0.001, 0.05, 0.25, 0.5, 0.6, 0.975, 0.9999} {
			q := TQuantile(p, df)
			if got := TCDF(q, df); math.Abs(got-p) > 1e-12 {
				t.Errorf("TCDF(TQuantile(%v, %d) = %v) = %.17g", p, df, q, got)
			}
			if a, b := TQuantile(p, df), -TQuantile(1-p, df); math.Abs(a-b) > 1e-12*math.Max(1, math.Abs(a)) {
				t.Errorf("df %d: t_%v = %.17g but −t_%v = %.17g", df, p, a, 1-p, b)
			}
		}
	}
	a, b := TQuantile(0.975, cfMaxDF), TQuantile(0.975, cfMaxDF+1)
	// The exact quantiles differ by 1.9599877075346096386 −
	// 1.9599877072973792428 = 2.372303958e-10 (see tReference).
	if d := a - b; math.Abs(d-2.372303958e-10) > 2e-12 {
		t.Errorf("t_0.975 at df %d and %d differ by %.10g, want 2.372303958e-10", cfMaxDF, cfMaxDF+1, d)
	}
}

// TestTQuantileInvalid checks the NaN returns and the CDF's limits.
func TestTQuantileInvalid(t *testing.T) {
	for _, c := range []struct {
		p  float64
		df int
	}{{0, 3}, {1, 3}, {-0.5, 3}, {1.5, 3}, {math.NaN(), 3}, {0.975, 0}, {0.975, -4}} {
		if got := TQuantile(c.p, c.df); !math.IsNaN(got) {
			t.Errorf("TQuantile(%v, %d) = %v, want NaN", c.p, c.df, got)
		}
	}
	if got := TCDF(math.NaN(), 3); !math.IsNaN(got) {
		t.Errorf("TCDF(NaN) = %v", got)
	}
	if got := TCDF(1, 0); !math.IsNaN(got) {
		t.Errorf("TCDF(1, 0) = %v", got)
	}
	if TCDF(math.Inf(1), 4) != 1 || TCDF(math.Inf(-1), 4) != 0 || TCDF(0, 4) != 0.5 {
		t.Errorf("TCDF limits: %v %v %v", TCDF(math.Inf(1), 4), TCDF(math.Inf(-1), 4), TCDF(0, 4))
	}
	// Extreme tails: t_{p,1} = −1/tan(πp) ≈ −1/(πp) for tiny p, which
	// for p = 5e-324 is beyond the float64 range.
	if got, want := TQuantile(1e-300, 1), -1/(math.Pi*1e-300); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("TQuantile(1e-300, 1) = %v, want %v", got, want)
	}
	if got := TQuantile(5e-324, 1); !math.IsInf(got, -1) {
		t.Errorf("TQuantile(5e-324, 1) = %v, want -Inf", got)
	}
	if got := TCDF(1e300, 1); got != 1 {
		t.Errorf("TCDF(1e300, 1) = %v, want 1", got)
	}
}
