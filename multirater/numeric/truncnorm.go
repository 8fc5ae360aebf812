package numeric

import (
	"math"
	"math/rand/v2"
)

// Switching constants of the mixed rejection sampler in TruncStdNormal.
const (
	// sqrt2Pi is the width above which N(0,1) rejection beats uniform
	// rejection for an interval that contains 0 (Robert 1995, sec. 2.2):
	// both then accept at least about half of the proposals.
	sqrt2Pi = 2.5066282746310002

	// uniformLogRatio bounds log(phi(a)/phi(b)) = (b^2-a^2)/2 for uniform
	// rejection on a one-sided interval 0 <= a < b: the acceptance rate is
	// then at least (1-e^-r)/r ≈ 0.69 (Geweke 1991 uses the same bound, 2.18
	// for the density ratio).
	uniformLogRatio = 0.78

	// halfNormalMaxA is the largest lower bound a >= 0 for which rejection
	// from the half-normal |N(0,1)| is used; above it Robert's (1995)
	// translated-exponential proposal with the optimal rate accepts more
	// (the two acceptance rates, 2*Q(a) and sqrt(2*pi)*Q(a)*lambda*
	// exp(lambda*a-lambda^2/2), cross near a = 0.26).
	halfNormalMaxA = 0.3
)

// TruncNormal returns a draw from the normal distribution N(mu, sigma^2)
// restricted to the open interval (lo, hi). lo may be math.Inf(-1) and hi
// math.Inf(1). It is exact (rejection sampling, see TruncStdNormal), costs
// O(1) expected time for every interval, including narrow intervals far in a
// tail, and does not allocate. This is the sampler for the auxiliary
// variables y_nl of Rogers et al. eq. 24 and the thresholds b_lk of eq. 33.
//
// The result lies in (lo, hi); rounding in mu + sigma*z is corrected by
// moving a result that lands on an end point to the nearest float inside
// (if lo and hi are adjacent floats, the result is lo).
//
// TruncNormal panics if mu or sigma is not finite, if sigma <= 0, if lo or hi
// is NaN or if lo >= hi.
func TruncNormal(rng *rand.Rand, mu, sigma, lo, hi float64) float64 {
	if math.IsNaN(mu) || math.IsInf(mu, 0) {
		panic("multirater: TruncNormal: mu is not finite")
	}
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		panic("multirater: TruncNormal: sigma must be positive and finite")
	}
	if !(lo < hi) {
		panic("multirater: TruncNormal: need lo < hi")
	}
	a := (lo - mu) / sigma
	b := (hi - mu) / sigma
	var r float64
	if a < b {
		r = mu + sigma*truncStdNormal(rng, a, b)
	} else {
		// The interval is narrower than the rounding of its standardised
		// end points: the density is constant on it to working precision.
		r = lo + (hi-lo)*rng.Float64()
	}
	return inside(r, lo, hi)
}

// TruncStdNormal returns a draw from the standard normal distribution
// restricted to the open interval (a, b); a may be math.Inf(-1) and b
// math.Inf(1). The result lies in (a, b) (if a and b are adjacent floats, it
// is a). It panics if a or b is NaN or a >= b.
//
// The sampler is exact: it is the mixed rejection scheme of Geweke (1991)
// and Robert (1995, Statistics and Computing 5:121-125), choosing per
// interval the proposal with the better acceptance rate:
//   - a < 0 < b: N(0,1) draws if b-a >= sqrt(2*pi), else uniform draws on
//     (a, b) accepted with probability exp(-z^2/2);
//   - 0 <= a < b (the case b <= 0 is reflected): uniform draws accepted with
//     probability exp(-(z^2-a^2)/2) when (b^2-a^2)/2 <= 0.78; else
//     half-normal draws when a < 0.3; else Robert's translated exponential
//     z = a + E/lambda, E ~ Exp(1), lambda = (a+sqrt(a^2+4))/2, rejected
//     when z >= b and otherwise accepted with probability
//     exp(-((z-lambda)^2-(c-lambda)^2)/2), c = min(lambda, b).
//
// Every branch accepts at least about 45% of its proposals, so the expected
// cost is a few generator calls whatever the interval; no erf, erfc or
// quantile function is evaluated. Acceptance tests compare an Exp(1) draw
// with the log acceptance ratio, so no exp is evaluated either.
func TruncStdNormal(rng *rand.Rand, a, b float64) float64 {
	if !(a < b) {
		panic("multirater: TruncStdNormal: need a < b")
	}
	return truncStdNormal(rng, a, b)
}

// truncStdNormal is TruncStdNormal without the argument check; a < b.
func truncStdNormal(rng *rand.Rand, a, b float64) float64 {
	switch {
	case a >= 0:
		return truncStdNormalTail(rng, a, b)
	case b <= 0:
		return -truncStdNormalTail(rng, -b, -a)
	}
	// a < 0 < b.
	if b-a >= sqrt2Pi {
		for {
			z := rng.NormFloat64()
			if a < z && z < b {
				return z
			}
		}
	}
	w := b - a
	for {
		z := a + w*rng.Float64()
		if z <= b && rng.ExpFloat64() > 0.5*z*z {
			return inside(z, a, b)
		}
	}
}

// truncStdNormalTail samples N(0,1) restricted to (a, b) with 0 <= a < b.
// The uniform and exponential branches draw the excess e = z - a in [0, w]
// and test acceptance on e, so that they stay exact when a is large and
// z = a + e rounds; the result is then moved inside (a, b) if rounding (or
// a proposal on an end point, which has probability about 2^-53 except for
// intervals only a few floats wide) put it on an end point. For a > 1e8 or
// so the excess is below the spacing of floats near a.
func truncStdNormalTail(rng *rand.Rand, a, b float64) float64 {
	w := b - a
	if 0.5*w*(b+a) <= uniformLogRatio {
		// Uniform proposal; the density ratio to the maximum at a is
		// exp(-e(2a+e)/2).
		for {
			e := w * rng.Float64()
			if e <= w && rng.ExpFloat64() > 0.5*e*(2*a+e) {
				return inside(a+e, a, b)
			}
		}
	}
	if a < halfNormalMaxA {
		for {
			z := math.Abs(rng.NormFloat64())
			if a < z && z < b {
				return z
			}
		}
	}
	// Robert (1995) translated exponential with the optimal rate for the
	// one-sided interval (a + 1/a to working precision for huge a, where
	// a^2 would overflow). The
	// proposal density is proportional to exp(-lambda e) on (0, w); the
	// ratio target/proposal is proportional to exp(-(a+e-lambda)^2/2), whose
	// maximum over the interval is at z = c = min(lambda, b).
	lambda := a + 1/a
	if a < 1e8 {
		lambda = 0.5 * (a + math.Sqrt(a*a+4))
	}
	c := lambda
	if b < c {
		c = b
	}
	dc := (c - lambda) * (c - lambda)
	// A proposal past b is rejected: lambda*w > 0.78 here (see the
	// uniform branch), so at least 54% of proposals land inside and the
	// rejection is cheaper than drawing from the truncated exponential by
	// inversion (measured: one Log1p per proposal costs more than the
	// retries).
	for {
		e := rng.ExpFloat64() / lambda
		if e <= w {
			d := a + e - lambda
			if rng.ExpFloat64() > 0.5*(d*d-dc) {
				return inside(a+e, a, b)
			}
		}
	}
}

// inside moves z, which lies in [a, b] up to rounding, into the open
// interval (a, b) when a float lies strictly between a and b.
func inside(z, a, b float64) float64 {
	if z <= a {
		z = math.Nextafter(a, b)
	}
	if z >= b {
		z = math.Nextafter(b, a)
	}
	return z
}
