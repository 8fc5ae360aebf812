package numeric

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"concord/internal/testutil"
)

// truncRef is one row of testdata/truncnorm/truncnorm_ref.csv, made by
// truncnorm_ref.py with scipy.stats.truncnorm (Debian python3-scipy 1.10.1).
type truncRef struct {
	mu, sigma, lo, hi float64
	mean, sd          float64
	x, p              [3]float64
}

func readTruncRef(t *testing.T) []truncRef {
	t.Helper()
	recs := testutil.ReadCommentedCSV(t, "testdata/truncnorm/truncnorm_ref.csv")
	if len(recs[0]) != 12 {
		t.Fatalf("truncnorm_ref.csv: %d fields, want 12", len(recs[0]))
	}
	var refs []truncRef
	for i, rec := range recs[1:] {
		v := testutil.Floats(t, fmt.Sprintf("truncnorm_ref.csv row %d", i+1), rec)
		refs = append(refs, truncRef{
			mu: v[0], sigma: v[1], lo: v[2], hi: v[3], mean: v[4], sd: v[5],
			x: [3]float64{v[6], v[8], v[10]}, p: [3]float64{v[7], v[9], v[11]},
		})
	}
	if len(refs) < 20 {
		t.Fatalf("read %d reference rows, want at least 20", len(refs))
	}
	return refs
}

// logStdSurvival returns log Q(x) = log P(Z > x) for x >= 0, accurately far
// into the tail: erfc (through gonum) where Q does not underflow, else the
// continued fraction for Mills' ratio, Q(x) = phi(x)/(x+1/(x+2/(x+3/(x+...)))).
// It uses Q(x) = CDF(-x), which is 0.5*erfc(x/sqrt2) in gonum; gonum's
// Normal.Survival is 0.5*(1-erf(x/sqrt2)) and loses all accuracy past x ≈ 8.
func logStdSurvival(x float64) float64 {
	if math.IsInf(x, 1) {
		return math.Inf(-1)
	}
	if x < 25 {
		return math.Log(distuv.UnitNormal.CDF(-x))
	}
	cf := x
	for k := 60; k >= 1; k-- {
		cf = x + float64(k)/cf
	}
	// cf now holds x + 1/(x + 2/(...)); Q = phi(x)/cf.
	return -0.5*x*x - 0.5*math.Log(2*math.Pi) - math.Log(cf)
}

// stdTruncCDF is the CDF at x of N(0,1) truncated to (a, b), computed
// stably in both tails: for 0 <= a it is
// (Q(a)-Q(x))/(Q(a)-Q(b)) = expm1(logQ(x)-logQ(a))/expm1(logQ(b)-logQ(a)),
// for b <= 0 it is reflected, and for a < 0 < b it is the plain
// (Phi(x)-Phi(a))/(Phi(b)-Phi(a)) whose denominator is not small.
func stdTruncCDF(a, b, x float64) float64 {
	switch {
	case x <= a:
		return 0
	case x >= b:
		return 1
	case a >= 0:
		la := logStdSurvival(a)
		return math.Expm1(logStdSurvival(x)-la) / math.Expm1(logStdSurvival(b)-la)
	case b <= 0:
		return 1 - stdTruncCDF(-b, -a, -x)
	}
	n := distuv.UnitNormal
	return (n.CDF(x) - n.CDF(a)) / (n.CDF(b) - n.CDF(a))
}

// stdTruncQuantile inverts stdTruncCDF by bisection.
func stdTruncQuantile(a, b, p float64) float64 {
	lo, hi := a, b
	if math.IsInf(lo, -1) {
		lo = math.Min(b, 0) - 50
	}
	if math.IsInf(hi, 1) {
		hi = math.Max(a, 0) + 50
	}
	for i := 0; i < 200; i++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if stdTruncCDF(a, b, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// kolmogorovSurvival returns P(K > t) for the Kolmogorov distribution, the
// limit of sqrt(n)*D_n.
func kolmogorovSurvival(t float64) float64 {
	if t < 0.2 {
		return 1
	}
	var s float64
	for k := 1; k <= 100; k++ {
		term := math.Exp(-2 * float64(k*k) * t * t)
		if k%2 == 1 {
			s += term
		} else {
			s -= term
		}
	}
	return math.Min(1, 2*s)
}

func TestStdTruncCDFMatchesScipy(t *testing.T) {
	// The test's own reference CDF must agree with scipy.stats.truncnorm
	// before it is used to judge the sampler.
	for _, r := range readTruncRef(t) {
		a, b := (r.lo-r.mu)/r.sigma, (r.hi-r.mu)/r.sigma
		for i := range r.x {
			got := stdTruncCDF(a, b, (r.x[i]-r.mu)/r.sigma)
			// The scipy points are rounded to about 1e-16 relative in x;
			// for narrow intervals (5, 5.001) and the shifted cases that
			// alone moves the CDF by ~1e-12.
			if math.Abs(got-r.p[i]) > 1e-9 {
				t.Errorf("(%g,%g) mu=%g sigma=%g: CDF(%g) = %.15g, scipy %.15g",
					r.lo, r.hi, r.mu, r.sigma, r.x[i], got, r.p[i])
			}
		}
	}
}

func TestTruncNormalGoodnessOfFit(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 20000
	}
	const (
		bins = 50
		// Fixed seeds make the test deterministic; these p-value floors
		// are far below what a correct sampler produces at any seed with
		// about 26 intervals (expected number of failures 26*2e-5).
		minP = 1e-5
	)
	for ci, r := range readTruncRef(t) {
		t.Run(fmt.Sprintf("mu=%g,sigma=%g,(%g,%g)", r.mu, r.sigma, r.lo, r.hi), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2011, uint64(ci)))
			a, b := (r.lo-r.mu)/r.sigma, (r.hi-r.mu)/r.sigma
			x := make([]float64, n)
			var sum float64
			for i := range x {
				v := TruncNormal(rng, r.mu, r.sigma, r.lo, r.hi)
				if !(r.lo < v && v < r.hi) {
					t.Fatalf("draw %v outside (%v, %v)", v, r.lo, r.hi)
				}
				x[i] = v
				sum += v
			}
			// Moments against scipy.stats.truncnorm.
			mean := sum / float64(n)
			var ss float64
			for _, v := range x {
				ss += (v - mean) * (v - mean)
			}
			sd := math.Sqrt(ss / float64(n-1))
			if z := (mean - r.mean) / (r.sd / math.Sqrt(float64(n))); math.Abs(z) > 5 {
				t.Errorf("mean %.10g, scipy %.10g (%.2f standard errors)", mean, r.mean, z)
			}
			// sd(s/sigma) <= sqrt((kurtosis-1)/(4n)) and the kurtosis of a
			// truncated normal is at most 9 (the exponential limit).
			if rel := sd/r.sd - 1; math.Abs(rel) > 8/math.Sqrt(float64(n)) {
				t.Errorf("sd %.10g, scipy %.10g (relative error %.3g)", sd, r.sd, rel)
			}

			// Kolmogorov-Smirnov against the exact CDF, on the
			// standardised draws.
			z := make([]float64, n)
			for i, v := range x {
				z[i] = (v - r.mu) / r.sigma
			}
			slices.Sort(z)
			var d float64
			for i, v := range z {
				f := stdTruncCDF(a, b, v)
				d = math.Max(d, math.Max(f-float64(i)/float64(n), float64(i+1)/float64(n)-f))
			}
			if p := kolmogorovSurvival(math.Sqrt(float64(n)) * d); p < minP {
				t.Errorf("KS D = %.5f, p = %.3g", d, p)
			}

			// Chi-square on equal-probability bins.
			var counts [bins]int
			edges := make([]float64, bins-1)
			for k := range edges {
				edges[k] = stdTruncQuantile(a, b, float64(k+1)/bins)
			}
			for _, v := range z {
				k, _ := slices.BinarySearch(edges, v)
				counts[k]++
			}
			var chi2 float64
			e := float64(n) / bins
			for _, c := range counts {
				chi2 += (float64(c) - e) * (float64(c) - e) / e
			}
			if p := (distuv.ChiSquared{K: bins - 1}).Survival(chi2); p < minP {
				t.Errorf("chi-square %.2f on %d df, p = %.3g", chi2, bins-1, p)
			}
		})
	}
}

func TestTruncStdNormalExtremes(t *testing.T) {
	// Intervals so far out or so narrow that the draws are only checked for
	// range and a cheap property, mostly to prove the samplers terminate.
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		a, b float64
	}{
		{1e3, math.Inf(1)},
		{1e10, math.Inf(1)},
		{1e200, math.Inf(1)},
		{math.Inf(-1), -1e200},
		{1e6, 1e6 + 1e-3},
		{-1e300, 1e300},
		{0, math.SmallestNonzeroFloat64},
		{1, math.Nextafter(1, 2)},
		{-1e-300, 1e-300},
		{37, 37.0000001},
		{50, 51},
	}
	for _, c := range cases {
		for i := 0; i < 1000; i++ {
			z := TruncStdNormal(rng, c.a, c.b)
			if !(c.a < z && z < c.b) && !(z == c.a && math.Nextafter(c.a, c.b) == c.b) {
				t.Fatalf("TruncStdNormal(%g, %g) = %g, outside the interval", c.a, c.b, z)
			}
		}
	}
	// For a = 50 the excess over a is very nearly Exp(a): mean 1/a.
	var s float64
	const n = 20000
	for i := 0; i < n; i++ {
		s += TruncStdNormal(rng, 50, math.Inf(1)) - 50
	}
	// Exact: E[Z-a | Z > a] = phi(a)/Q(a) - a, from the continued fraction.
	lq := logStdSurvival(50)
	want := math.Exp(-0.5*50*50-0.5*math.Log(2*math.Pi)-lq) - 50
	if got := s / n; math.Abs(got-want) > 5*want/math.Sqrt(n) {
		t.Errorf("mean excess over 50: %g, want %g", got, want)
	}
}

func TestTruncNormalRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct{ mu, sigma, lo, hi float64 }{
		// Standardised end points coincide after rounding.
		{1e20, 1, 0, 1},
		// mu + sigma*z rounds onto an end point.
		{1e16, 1, 1e16, 1e16 + 4},
		{0, 1e-300, -1e-310, 1e-310},
		{0, 1, 1, math.Nextafter(1, 2)},
	}
	for _, c := range cases {
		for i := 0; i < 1000; i++ {
			r := TruncNormal(rng, c.mu, c.sigma, c.lo, c.hi)
			ok := c.lo < r && r < c.hi
			if math.Nextafter(c.lo, c.hi) == c.hi {
				ok = r == c.lo
			}
			if !ok {
				t.Fatalf("TruncNormal(%g, %g, %g, %g) = %v", c.mu, c.sigma, c.lo, c.hi, r)
			}
		}
	}
}

func TestTruncNormalPanics(t *testing.T) {
	inf := math.Inf(1)
	nan := math.NaN()
	cases := []struct {
		name              string
		mu, sigma, lo, hi float64
	}{
		{"lo=hi", 0, 1, 1, 1},
		{"lo>hi", 0, 1, 2, 1},
		{"sigma=0", 0, 0, -1, 1},
		{"sigma<0", 0, -1, -1, 1},
		{"sigma NaN", 0, nan, -1, 1},
		{"sigma Inf", 0, inf, -1, 1},
		{"mu NaN", nan, 1, -1, 1},
		{"mu Inf", inf, 1, -1, 1},
		{"lo NaN", 0, 1, nan, 1},
		{"hi NaN", 0, 1, -1, nan},
		{"both +Inf", 0, 1, inf, inf},
		{"both -Inf", 0, 1, -inf, -inf},
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range cases {
		testutil.Panics(t, c.name, "multirater: ", func() { TruncNormal(rng, c.mu, c.sigma, c.lo, c.hi) })
	}
	for _, c := range [][2]float64{{1, 1}, {2, 1}, {nan, 1}, {0, nan}, {inf, inf}} {
		testutil.Panics(t, fmt.Sprintf("TruncStdNormal(%v, %v)", c[0], c[1]), "multirater: ", func() { TruncStdNormal(rng, c[0], c[1]) })
	}
}

func TestTruncNormalNoAlloc(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	intervals := [][2]float64{{-1, 1}, {0, math.Inf(1)}, {8, 9}, {2, 3}, {5, 5.001}, {math.Inf(-1), -10}}
	allocs := testing.AllocsPerRun(100, func() {
		for _, iv := range intervals {
			TruncNormal(rng, 0.5, 2, iv[0], iv[1])
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run, want 0", allocs)
	}
}

func TestTruncNormalReproducible(t *testing.T) {
	r1 := rand.New(rand.NewPCG(7, 8))
	r2 := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 1000; i++ {
		lo := float64(i%7) - 3
		if a, b := TruncNormal(r1, 0, 1, lo, lo+0.5), TruncNormal(r2, 0, 1, lo, lo+0.5); a != b {
			t.Fatalf("draw %d: %v != %v with the same seed", i, a, b)
		}
	}
}

func BenchmarkTruncStdNormal(b *testing.B) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name string
		a, b float64
	}{
		{"unbounded", math.Inf(-1), inf},
		{"central(-1,1)", -1, 1},
		{"spanning(-0.5,3)", -0.5, 3},
		{"half(0,inf)", 0, inf},
		{"halfnormal(0.2,2)", 0.2, 2},
		{"uniform(1,1.5)", 1, 1.5},
		{"exp(1,inf)", 1, inf},
		{"exp(2,3)", 2, 3},
		{"tail(8,9)", 8, 9},
		{"tail(-inf,-10)", math.Inf(-1), -10},
		{"narrow(5,5.001)", 5, 5.001},
	} {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			var s float64
			for i := 0; i < b.N; i++ {
				s += TruncStdNormal(rng, c.a, c.b)
			}
			if math.IsNaN(s) {
				b.Fatal("NaN")
			}
		})
	}
}

func ExampleTruncNormal() {
	rng := rand.New(rand.NewPCG(1, 2))
	// Draws of y ~ N(0.3, 0.5^2) restricted to a grade's interval
	// (b_k-1, b_k] = (-0.5, 0.2], as for the auxiliary variables of Rogers et
	// al. eq. 24, and far in the tail of N(0, 1).
	var sum, tail float64
	const n = 100000
	for i := 0; i < n; i++ {
		sum += TruncNormal(rng, 0.3, 0.5, -0.5, 0.2)
		tail += TruncNormal(rng, 0, 1, 8, 9)
	}
	fmt.Printf("mean on (-0.5, 0.2): %.2f\n", sum/n)
	// scipy.stats.truncnorm: means -0.0827 and 8.1212.
	fmt.Printf("mean on (8, 9): %.2f\n", tail/n)
	// Output:
	// mean on (-0.5, 0.2): -0.08
	// mean on (8, 9): 8.12
}
