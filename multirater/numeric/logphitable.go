package numeric

import "math"

// LogPhiTable evaluates log Phi(x) by a Taylor polynomial about the nearest
// point of a grid, for the inner loops of the samplers' collapsed slice
// moves, whose densities are sums of many log Phi terms (LogNormCDF costs
// an erfc, often two exponentials, and a logarithm; a table lookup and a
// polynomial of degree logPhiDegree cost a tenth of that).
//
// The coefficients about x_j = logPhiLo + j/logPhiPerUnit are those of the
// Taylor series of f = log Phi, from its derivative lambda = phi/Phi (the
// inverse Mills ratio) and the Riccati equation lambda' = -lambda (x +
// lambda) solved as a power series (a_0 = lambda(x_j), (k+1) a_(k+1) =
// -sum_(i<=k) a_i b_(k-i), b the series of x + lambda). With |x - x_j| <=
// 1/16 the remainder of degree 10 is below 1e-18 |f^(11)|, far below the
// rounding of f itself: At agrees with LogNormCDF to within a few units in
// the last place over its whole range (TestLogPhiTable), so that a slice
// sampler's comparisons with it come out as with LogNormCDF save with
// probability of the order of 1e-14 per comparison. Outside
// [logPhiLo, PhiOne] At is LogNormCDF (0 above PhiOne).
//
// A table is immutable once made and may be shared by goroutines.
type LogPhiTable struct {
	c []float64 // logPhiDegree+1 coefficients per grid point, lowest first
}

// The grid of LogPhiTable: from logPhiLo (LogNormCDF's asymptotic series
// takes over below -37) to PhiOne, logPhiPerUnit points per unit.
const (
	logPhiLo      = -38
	logPhiPerUnit = 8
	logPhiDegree  = 10 // written out in At's Horner scheme
)

// NewLogPhiTable computes the table (about 400 grid points; microseconds).
func NewLogPhiTable() *LogPhiTable {
	npts := int(math.Ceil((PhiOne-logPhiLo)*logPhiPerUnit)) + 1
	const nc = logPhiDegree + 1
	t := &LogPhiTable{c: make([]float64, npts*nc)}
	var a, b [nc]float64
	for j := 0; j < npts; j++ {
		x := logPhiLo + float64(j)/logPhiPerUnit
		c := t.c[j*nc : (j+1)*nc]
		c[0] = LogNormCDF(x)
		// lambda(x + s) = sum_k a_k s^k; x + lambda = sum_k b_k s^k.
		a[0], b[0] = millsLowerPlusX(x)
		for k := 0; k < nc-2; k++ {
			switch k {
			case 0:
			case 1:
				b[1] = 1 + a[1]
			default:
				b[k] = a[k]
			}
			var s float64
			for i := 0; i <= k; i++ {
				s += a[i] * b[k-i]
			}
			a[k+1] = -s / float64(k+1)
		}
		for k := 1; k < nc; k++ {
			c[k] = a[k-1] / float64(k)
		}
	}
	return t
}

// At returns log Phi(x) (see LogPhiTable for its accuracy).
func (t *LogPhiTable) At(x float64) float64 {
	if x > PhiOne {
		return 0
	}
	if !(x >= logPhiLo) {
		return LogNormCDF(x) // below the grid, or NaN
	}
	j := int((x-logPhiLo)*logPhiPerUnit + 0.5)
	s := x - (logPhiLo + float64(j)/logPhiPerUnit)
	const nc = logPhiDegree + 1
	c := t.c[j*nc : j*nc+nc]
	r := c[10]
	r = r*s + c[9]
	r = r*s + c[8]
	r = r*s + c[7]
	r = r*s + c[6]
	r = r*s + c[5]
	r = r*s + c[4]
	r = r*s + c[3]
	r = r*s + c[2]
	r = r*s + c[1]
	return r*s + c[0]
}

// millsLowerPlusX returns lambda = phi(x)/Phi(x) and x + lambda, the
// latter without cancellation in the lower tail: for x <= -5 from the
// continued fraction Phi(x)/phi(x) = 1/(z + 1/(z + 2/(z + 3/(z + ...)))),
// z = -x (Abramowitz & Stegun 26.2.14), whose tail q = 1/(z + 2/(z + ...))
// is x + lambda itself.
func millsLowerPlusX(x float64) (lambda, xPlus float64) {
	if x > -5 {
		lambda = MillsLower(x)
		return lambda, x + lambda
	}
	z := -x
	v := z
	for k := 500; k >= 2; k-- {
		v = z + float64(k)/v
	}
	q := 1 / v
	return z + q, q
}
