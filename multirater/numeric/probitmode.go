package numeric

import "math"

// ProbitProductMode returns the mode mu of g(u) = -u^2/2 + sum_j log Phi(u
// + c_j) and sigma = 1/sqrt(-g2(mu)), g2 the second derivative of g: the
// centre and scale of an adaptive Gauss-Hermite rule for the
// multinomial-probit integral E_u[prod_j Phi(u + c_j)] (Girolami & Rogers
// 2006; Rogers et al. app. C). cmin is min_j c_j. It runs Newton's method
// on g' for at most iters steps: g is concave with -g2 in [1, 1 + len(c)],
// so the iteration (steps bounded by 4) converges from the start max(0,
// -cmin/2), which is close to the mode when one class dominates the
// product; it stops at a relative step of 1e-5. A quadrature rule needs
// the mode only roughly: a few steps centre it within a small fraction of
// sigma.
func ProbitProductMode(c []float64, cmin float64, iters int) (mu, sigma float64) {
	u := math.Max(0, -cmin/2)
	curv := 1.0
	for it := 0; it < iters; it++ {
		grad := -u
		curv = 1
		for _, cj := range c {
			x := u + cj
			if x > PhiOne {
				continue
			}
			r := MillsLower(x)
			grad += r
			curv += r * (x + r)
		}
		step := math.Max(-4, math.Min(4, grad/curv))
		u += step
		if math.Abs(step) < 1e-5*(1+math.Abs(u)) {
			break
		}
	}
	return u, 1 / math.Sqrt(curv)
}
