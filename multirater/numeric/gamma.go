package numeric

import "math"

// Trigamma returns psi_1(x) = d^2/dx^2 ln Gamma(x) for x > 0: the
// recurrence psi_1(x) = psi_1(x + 1) + 1/x^2 (DLMF 5.15.5) up to x >= 10,
// then the asymptotic series psi_1(x) ~ 1/x + 1/(2x^2) +
// sum_k B_2k / x^(2k+1) (DLMF 5.15.8) to B_14, whose first term left out
// is below 1e-15 of the value there. Within 1e-14 of mpmath's value
// relative (testdata/trigamma) and about ten times cheaper than the
// Hurwitz zeta function zeta(2, x) (gonum's mathext.Zeta), which the
// beta likelihood's EP quadrature calls at every Newton step. It returns
// NaN for x <= 0 or NaN (a data-dependent value, not a caller's bug).
func Trigamma(x float64) float64 {
	if !(x > 0) {
		return math.NaN()
	}
	if math.IsInf(x, 1) {
		return 0
	}
	var r float64
	for ; x < 10; x++ {
		r += 1 / (x * x)
	}
	z := 1 / x
	z2 := z * z
	// B_2/x^3 + B_4/x^5 + ... + B_14/x^15, Horner in 1/x^2.
	s := z2 * z * (1.0/6 + z2*(-1.0/30+z2*(1.0/42+z2*(-1.0/30+z2*(5.0/66+z2*(-691.0/2730+z2*(7.0/6)))))))
	return r + (z + 0.5*z2 + s)
}
