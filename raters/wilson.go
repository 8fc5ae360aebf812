package raters

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// WilsonInterval returns the share k/n and its Wilson score interval
// (Wilson 1927) at the given level: the p with |k/n - p| <= z
// sqrt(p(1-p)/n), z the normal quantile of (1+level)/2,
//
//	(k + z^2/2)/(n + z^2) -+ z sqrt(n) / (n + z^2) sqrt(p^(1-p^) + z^2/(4n)),
//
// p^ = k/n; it stays in [0, 1] at k = 0 and k = n (scipy's
// binomtest(k, n).proportion_ci(method="wilson") for whole k). k may be
// fractional (credited ties); n must be positive, 0 <= k <= n and 0 <
// level < 1.
func WilsonInterval(k, n, level float64) (p, lo, hi float64) {
	if !(n > 0) || !(k >= 0) || k > n || !(level > 0 && level < 1) {
		panic(fmt.Sprintf("raters: WilsonInterval(%v, %v, %v): need 0 <= k <= n, n > 0, 0 < level < 1", k, n, level))
	}
	z := distuv.UnitNormal.Quantile((1 + level) / 2)
	p = k / n
	z2 := z * z
	centre := (p + z2/(2*n)) / (1 + z2/n)
	half := z / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return p, math.Max(centre-half, 0), math.Min(centre+half, 1)
}
