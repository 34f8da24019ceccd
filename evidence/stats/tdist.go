package stats

import "math"

// cfMaxDF is the largest number of degrees of freedom for which TQuantile
// inverts the exact distribution function; beyond it the Cornish–Fisher
// expansion is used, whose first omitted term is then O(ν⁻⁵) < 1e-20 for
// the central quantiles (the reference test measures the whole error).
const cfMaxDF = 100000

// TQuantile returns the p quantile of Student's t distribution with df
// degrees of freedom: the t with P(T ≤ t) = p. It returns NaN unless
// 0 < p < 1 and df ≥ 1, and ±Inf when the quantile is beyond the float64
// range (only for p within about 1e-308 of 0 or 1). For df ≤ 100000 it bisects the exact
// distribution function ([TCDF]); beyond, it uses the Cornish–Fisher
// expansion. See the package documentation for the accuracy.
func TQuantile(p float64, df int) float64 {
	if !(p > 0 && p < 1) || df < 1 {
		return math.NaN()
	}
	switch {
	case p == 0.5:
		return 0
	case p < 0.5:
		return -tUpperInverse(p, df)
	}
	return tUpperInverse(1-p, df)
}

// TCDF returns P(T ≤ t) for Student's t distribution with df degrees of
// freedom, or NaN when t is NaN or df < 1.
func TCDF(t float64, df int) float64 {
	if math.IsNaN(t) || df < 1 {
		return math.NaN()
	}
	if t >= 0 {
		return 1 - tUpper(t, df)
	}
	return tUpper(-t, df)
}

// tUpper returns P(T > t) for t ≥ 0: ½ · I_x(ν/2, ½) with x = ν/(ν+t²).
// 1 − x = t²/(ν+t²) and ln x = −ln(1 + t²/ν) are passed separately so that
// none loses precision.
func tUpper(t float64, df int) float64 {
	if math.IsInf(t, 1) {
		return 0
	}
	nu := float64(df)
	t2 := t * t
	if math.IsInf(t2, 1) {
		// x = ν/t² to within rounding (it may underflow; ln x does not);
		// 1 − x = 1.
		return 0.5 * betaInc(nu/2, 0.5, (nu/t)/t, 1, math.Log(nu)-2*math.Log(t))
	}
	return 0.5 * betaInc(nu/2, 0.5, nu/(nu+t2), t2/(nu+t2), -math.Log1p(t2/nu))
}

// tUpperInverse returns the t ≥ 0 with P(T > t) = q, for 0 < q ≤ ½.
func tUpperInverse(q float64, df int) float64 {
	if df > cfMaxDF {
		return cornishFisher(q, float64(df))
	}
	// Bracket: tUpper decreases from ½ at 0 to 0 at +Inf.
	lo, hi := 0.0, 1.0
	for tUpper(hi, df) > q {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			return math.Inf(1)
		}
	}
	// Bisect until the bracket cannot shrink in float64.
	for range 2100 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if tUpper(mid, df) > q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// cornishFisher returns the t ≥ 0 with P(T > t) = q by the Cornish–Fisher
// expansion of the t quantile in 1/ν around the normal quantile z
// (Abramowitz & Stegun 26.7.5), to terms in ν⁻⁴.
func cornishFisher(q, nu float64) float64 {
	z := -math.Sqrt2 * math.Erfinv(2*q-1) // upper-tail normal quantile
	z2 := z * z
	g1 := z * (z2 + 1) / 4
	g2 := z * ((5*z2+16)*z2 + 3) / 96
	g3 := z * (((3*z2+19)*z2+17)*z2 - 15) / 384
	g4 := z * ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) / 92160
	return z + (g1+(g2+(g3+g4/nu)/nu)/nu)/nu
}

// betaInc returns the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and 0 ≤ x ≤ 1, with y = 1 − x and lnx = ln x given accurately
// by the caller. It uses the continued fraction on whichever of I_x(a, b)
// and 1 − I_y(b, a) converges fast.
func betaInc(a, b, x, y, lnx float64) float64 {
	if math.IsInf(lnx, -1) {
		return 0
	}
	if y <= 0 {
		return 1
	}
	front := math.Exp(-logBeta(a, b) + a*lnx + b*math.Log(y))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, y)/b
}

// logBeta returns ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a+b). For b = ½
// and a ≥ 20 it uses the asymptotic series of ln Γ(a+½) − ln Γ(a), whose
// truncation error there is below 4e-15, instead of subtracting two large
// ln Γ values.
func logBeta(a, b float64) float64 {
	if b == 0.5 && a >= 20 {
		const lnSqrtPi = 0.57236494292470008707171367567652935582 // ln Γ(½)
		ia := 1 / a
		ia2 := ia * ia
		// ln Γ(a+½) − ln Γ(a) = ½ ln a − 1/(8a) + 1/(192a³) − 1/(640a⁵) + 17/(14336a⁷) − …
		d := 0.5*math.Log(a) - ia*(1.0/8-ia2*(1.0/192-ia2*(1.0/640-ia2*17.0/14336)))
		return lnSqrtPi - d
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// betaCF evaluates the continued fraction of the incomplete beta function
// by the modified Lentz method (Numerical Recipes §6.4).
func betaCF(a, b, x float64) float64 {
	const (
		eps   = 1e-16
		tiny  = 1e-300
		iters = 1000000
	)
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= iters; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
