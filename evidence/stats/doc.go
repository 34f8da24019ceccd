// Package stats recomputes the aggregates of a verifier run from its raw
// records: per-worker step statistics, the per-workload
// crossover ratio, the geometric-mean boards with their 95 % intervals and
// the case counts. Nothing here reads a lane's own summary; every number is
// derived from [evidence.Measurement] and [evidence.Case] values, and the
// results carry JSON tags so they can go into the evidence and into the
// policy input unchanged.
//
// # Per worker
//
// A worker reports N step times x_0 … x_{N-1} in seconds, warm-ups
// included. With w warm-ups (default [DefaultWarmups]):
//
//   - drop x_0 … x_{w-1};
//   - of the rest, drop the single slowest step (the first one if several
//     are equally slow);
//   - the k = N − w − 1 kept steps y_1 … y_k must number at least 2,
//     otherwise the worker is refused.
//
// Then
//
//	T        = (1/k) Σ y_i
//	sd       = sqrt( Σ (y_i − T)² / (k − 1) )        (sample sd)
//	CV       = sd / T
//	median   = median(y)                               (mean of the two middle values when k is even)
//	MAD      = median(|y_i − median|)
//	robustCV = 1.4826 · MAD / median
//
// Every step time, warm-ups included, must be finite and > 0.
//
// # Per workload
//
// A workload runs four workers in ABBA order: slot 1 candidate (C1), slot 2
// reference (R1), slot 3 reference (R2), slot 4 candidate (C2). Its ratio is
//
//	r = sqrt(T_R1 · T_R2) / sqrt(T_C1 · T_C2)
//
// a ratio of times, so r > 1 means the candidate is faster (docs/evidence.md,
// "Crossover lanes: the throughput protocol", states the same meaning). If the
// machine drifts linearly, T_k = a + k·d for k = 0..3 in slot order, then
//
//	r² = (a+d)(a+2d) / (a(a+3d)) = 1 + 2ε²/(1+3ε),   ε = d/a,
//
// so the drift cancels to first order: 0 ≤ r − 1 ≤ ε²/(1+3ε) (≤ ε² for
// d ≥ 0). Step times that grow linearly inside and across workers give
// worker means that are again linear in the slot, with the same bound.
//
// # Retries
//
// Only a reference worker whose attempt 1 ended with outcome
// startup-failure may have an attempt 2; both attempts stay in the
// evidence and attempt 2 is the one used. Anything else is refused by
// [ChooseAttempts] with a [RetryError] naming the reason. A workload is
// usable only when the four chosen attempts are all ok; otherwise
// [WorkloadResult] lists each failure (wrong result, crash, timeout,
// start-up failure) so the policy sees it.
//
// # Boards
//
// Over the n usable workloads of a board (one board per phase and one
// overall), with l_i = ln r_i:
//
//	m  = (1/n) Σ l_i
//	s  = sqrt( Σ (l_i − m)² / (n − 1) )
//	geomean = exp(m)
//	[lo, hi] = [exp(m − t·s/√n), exp(m + t·s/√n)],   t = t_{0.975, n−1}
//
// where t_{p,ν} is the p quantile of Student's t distribution with ν
// degrees of freedom ([TQuantile]). With n = 1 the interval is unbounded:
// lo = 0 and hi = +Inf (encoded as JSON null), and Bounded is false. With
// n = 0 (every workload of the board failed) geomean is 0 as well.
//
// # Student's t quantile
//
// [TQuantile] inverts the distribution function
//
//	P(T > t) = ½ · I_{ν/(ν+t²)}(ν/2, ½)     (t ≥ 0)
//
// by bisection, with the regularized incomplete beta function I evaluated
// by its continued fraction (modified Lentz; ln B(ν/2, ½) from the
// asymptotic series of ln Γ(a+½) − ln Γ(a) when ν ≥ 40, so that large ν
// keeps its precision), for ν ≤ 100000; beyond that it uses the
// Cornish–Fisher expansion in 1/ν to fourth order. Against references
// computed at 45 digits for ν from 1 to 1e9 and p from 1e-12 to 1 − 1e-12
// the relative error is below 1e-12 (worst found 3e-13); the tests assert
// that bound, the classical 95 % table to 3 decimals, and the closed forms
// for ν = 1 and 2.
package stats
