package ep

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater/gp"
	"concord/multirater/gp/gptest"
	"concord/multirater/kernel"
	"concord/multirater/lik"
)

// exactPairs returns the exact posterior mean, variances and log marginal
// likelihood of f ~ N(0, C), y_k = f_I - f_J + N(0, s2n): with A the M×N
// contrast matrix, y ~ N(0, A C A' + s2n I), mean C A' K^-1 y and
// covariance C - C A' K^-1 A C (dense, for small tests).
func exactPairs(c *mat.SymDense, sites []PairSite, s2n float64) (mean, vr []float64, logZ float64) {
	n := c.SymmetricDim()
	m := len(sites)
	a := mat.NewDense(m, n, nil)
	y := make([]float64, m)
	for k, s := range sites {
		a.Set(k, s.I, 1)
		a.Set(k, s.J, -1)
		y[k] = s.Y
	}
	var ca mat.Dense
	ca.Mul(c, a.T()) // C A'
	var kk mat.Dense
	kk.Mul(a, &ca)
	logZ, ch, al, err := gptest.Evidence(&kk, s2n, y)
	if err != nil {
		panic(err)
	}
	var mu mat.VecDense
	mu.MulVec(&ca, al)
	var sol mat.Dense
	if err := ch.SolveTo(&sol, ca.T()); err != nil {
		panic(err)
	}
	var red mat.Dense
	red.Mul(&ca, &sol)
	mean, vr = make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		mean[i] = mu.AtVec(i)
		vr[i] = c.At(i, i) - red.At(i, i)
	}
	return mean, vr, logZ
}

func TestRunPairsGaussianExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	const n = 7
	x := testutil.NormalMatrix(rng, n, 2)
	var rbf mat.SymDense
	kernel.RBF{Gamma: 0.3}.GramTo(&rbf, kernel.Inputs{N: n, X: x})
	var lin mat.SymDense
	kernel.Linear{}.GramTo(&lin, kernel.Inputs{N: n, X: x})
	ident := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		ident.SetSym(i, i, 0.5+0.1*float64(i))
	}
	const s2n = 0.4
	var sites []PairSite
	for k := 0; k < 12; k++ {
		i, j := rng.IntN(n), rng.IntN(n-1)
		if j >= i {
			j++
		}
		sites = append(sites, PairSite{I: i, J: j, Y: rng.NormFloat64(), Lik: gptest.Gauss{S2: s2n}})
	}
	for _, tc := range []struct {
		name string
		c    *mat.SymDense
		path int
	}{
		{"rbf/by-pairs", &rbf, 1}, {"rbf/by-items", &rbf, 2}, {"rbf/auto", &rbf, 0},
		{"linear-rank2/by-pairs", &lin, 1}, {"linear-rank2/by-items", &lin, 2},
		{"diagonal/by-pairs", ident, 1}, {"diagonal/by-items", ident, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := gp.NewFactor(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			res, err := RunPairs(f, sites, PairOptions{path: tc.path, Tol: 1e-10})
			if err != nil {
				t.Fatal(err)
			}
			mean, vr, lz := exactPairs(tc.c, sites, s2n)
			// Gaussian sites make EP exact: agreement to rounding (the
			// damped iteration converges geometrically to Tol 1e-10).
			for i := range mean {
				if math.Abs(res.Mean[i]-mean[i]) > 1e-7 || math.Abs(res.Var[i]-vr[i]) > 1e-7 {
					t.Errorf("item %d: EP N(%.9g, %.9g), exact N(%.9g, %.9g)", i, res.Mean[i], res.Var[i], mean[i], vr[i])
				}
			}
			if math.Abs(res.LogZ-lz) > 1e-7 {
				t.Errorf("log Z_EP %.10g, exact %.10g", res.LogZ, lz)
			}
		})
	}
}

// aucSites returns the AUC pair sites (positive i, negative j) with step
// cost gamma/(n+ n-).
func aucSites(y []bool, gamma float64) []PairSite {
	var pos, neg []int
	for i, v := range y {
		if v {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	l := lik.AUCStep{C: gamma / float64(len(pos)*len(neg))}
	var s []PairSite
	for _, i := range pos {
		for _, j := range neg {
			s = append(s, PairSite{I: i, J: j, Lik: l})
		}
	}
	return s
}

// linearAUC is 30 items with 3 standard normal covariates (seed), labelled
// by a noisy linear rule, under the linear kernel: the factor and labels.
func linearAUC(t *testing.T, seed uint64) (*gp.Factor, []bool) {
	rng := rand.New(rand.NewPCG(seed, 2))
	const n, d = 30, 3
	x := mat.NewDense(n, d, nil)
	y := make([]bool, n)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			x.Set(i, k, rng.NormFloat64())
		}
		y[i] = x.At(i, 0)+0.5*x.At(i, 1)+0.7*rng.NormFloat64() > 0
	}
	var lin mat.SymDense
	kernel.Linear{}.GramTo(&lin, kernel.Inputs{N: n, X: x})
	f, err := gp.NewFactor(&lin)
	if err != nil {
		t.Fatal(err)
	}
	return f, y
}

// TestRunPairsAUCPathsAgree runs the AUC sites (not log-concave, with
// negative site precisions) by pairs, by items and by blocks (path 3): the
// three are the same algorithm, so they agree to rounding, and both put the positives above
// the negatives.
func TestRunPairsAUCPathsAgree(t *testing.T) {
	f, y := linearAUC(t, 17)
	for _, gamma := range []float64{10, 200} {
		sites := aucSites(y, gamma)
		a, err := RunPairs(f, sites, PairOptions{path: 1, Tol: 1e-9})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []int{2, 3} {
			b, err := RunPairs(f, sites, PairOptions{path: path, Tol: 1e-9})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(a.LogZ-b.LogZ) > 1e-6 {
				t.Errorf("gamma %v: log Z by pairs %.9g, path %d %.9g", gamma, a.LogZ, path, b.LogZ)
			}
			for i := range a.Mean {
				if math.Abs(a.Mean[i]-b.Mean[i]) > 1e-6 || math.Abs(a.Var[i]-b.Var[i]) > 1e-6 {
					t.Errorf("gamma %v item %d: by pairs N(%v, %v), path %d N(%v, %v)", gamma, i, a.Mean[i], a.Var[i], path, b.Mean[i], b.Var[i])
				}
			}
		}
		// Positive pair means: the posterior orders positives first.
		above := 0
		for k, s := range sites {
			if a.Mean[s.I] > a.Mean[s.J] {
				above++
			}
			_ = k
		}
		if frac := float64(above) / float64(len(sites)); frac < 0.7 {
			t.Errorf("gamma %v: posterior mean AUC %.3f, want > 0.7", gamma, frac)
		}
		if !(a.LogZ < 0 && a.LogZ > -gamma) {
			t.Errorf("gamma %v: log Z %v outside (-gamma, 0)", gamma, a.LogZ)
		}
	}
}

func TestRunPairsNotConverged(t *testing.T) {
	x := mat.NewDense(4, 1, []float64{1, 2, 3, 4})
	var lin mat.SymDense
	kernel.Linear{}.GramTo(&lin, kernel.Inputs{N: 4, X: x})
	f, err := gp.NewFactor(&lin)
	if err != nil {
		t.Fatal(err)
	}
	sites := aucSites([]bool{true, false, true, false}, 50)
	res, err := RunPairs(f, sites, PairOptions{MaxSweeps: 1})
	if !errors.Is(err, ErrNotConverged) || res == nil {
		t.Fatalf("got %v, %v; want ErrNotConverged with the result", res, err)
	}
}

// TestRunPairsCoordsGaussianExact adds Gaussian sites on whitened
// coordinates to Gaussian pair sites: EP is exact, so the whitened mean,
// covariance and log Z must equal the closed form in w, y = A w + noise
// with A's rows g_I - g_J (pairs) and e_K (coordinates):
// w | y ~ N(H^-1 A'y/s2n, H^-1), H = I + A'A/s2n, y ~ N(0, A A' + s2n I).
func TestRunPairsCoordsGaussianExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	const n, d, s2n = 9, 3, 0.3
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			x.Set(i, k, rng.NormFloat64())
		}
	}
	f := &gp.Factor{N: n, R: d, G: x.RawMatrix().Data}
	var sites []PairSite
	var coords []CoordSite
	var rowsA [][]float64
	var ys []float64
	for k := 0; k < 10; k++ {
		i, j := rng.IntN(n), rng.IntN(n-1)
		if j >= i {
			j++
		}
		s := PairSite{I: i, J: j, Y: rng.NormFloat64(), Lik: gptest.Gauss{S2: s2n}}
		sites = append(sites, s)
		row := make([]float64, d)
		for c := 0; c < d; c++ {
			row[c] = x.At(i, c) - x.At(j, c)
		}
		rowsA = append(rowsA, row)
		ys = append(ys, s.Y)
	}
	for k := 0; k < d; k++ {
		c := CoordSite{K: k, Y: rng.NormFloat64(), Lik: gptest.Gauss{S2: s2n}}
		coords = append(coords, c)
		row := make([]float64, d)
		row[k] = 1
		rowsA = append(rowsA, row)
		ys = append(ys, c.Y)
	}
	m := len(ys)
	a := mat.NewDense(m, d, nil)
	for k, row := range rowsA {
		a.SetRow(k, row)
	}
	var aat mat.Dense
	aat.Mul(a, a.T())
	wantLZ, _, al, err := gptest.Evidence(&aat, s2n, ys)
	if err != nil {
		t.Fatal(err)
	}
	var wantW mat.VecDense
	wantW.MulVec(a.T(), al) // H^-1 A'y/s2n = A'(A A' + s2n I)^-1 y
	res, err := RunPairsCoords(f, sites, coords, PairOptions{Tol: 1e-11, MaxSweeps: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.LogZ-wantLZ) > 1e-7 {
		t.Errorf("log Z_EP %.10g, exact %.10g", res.LogZ, wantLZ)
	}
	for k := 0; k < d; k++ {
		if math.Abs(res.W[k]-wantW.AtVec(k)) > 1e-7 {
			t.Errorf("w_%d: EP %.9g, exact %.9g", k, res.W[k], wantW.AtVec(k))
		}
	}
}

// BenchmarkRunPairs runs AUC pair EP (gamma 50) for a ladder of item
// counts with a linear factor of rank 7 (by pairs or by items, whichever
// is cheaper) and a full-rank RBF factor (by items).
func BenchmarkRunPairs(b *testing.B) {
	for _, n := range []int{100, 200, 400} {
		rng := rand.New(rand.NewPCG(uint64(n), 4))
		x := mat.NewDense(n, 7, nil)
		y := make([]bool, n)
		for i := 0; i < n; i++ {
			for k := 0; k < 7; k++ {
				x.Set(i, k, rng.NormFloat64())
			}
			y[i] = x.At(i, 0)+0.5*x.At(i, 1)+rng.NormFloat64() > 0.5
		}
		sites := aucSites(y, 50)
		var lin, rbf mat.SymDense
		kernel.Linear{}.GramTo(&lin, kernel.Inputs{N: n, X: x})
		kernel.RBF{Gamma: 0.05}.GramTo(&rbf, kernel.Inputs{N: n, X: x})
		for _, c := range []struct {
			name string
			k    *mat.SymDense
		}{{"linear", &lin}, {"rbf", &rbf}} {
			f, err := gp.NewFactor(c.k)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/n=%d/pairs=%d", c.name, n, len(sites)), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := RunPairs(f, sites, PairOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestPairResultDrawTo checks that joint draws from the EP posterior have
// its marginal means and variances (20,000 draws: Monte Carlo error of a
// mean about 0.007 sd, of a variance about 1%; tolerances 0.04 sd and 6%).
func TestPairResultDrawTo(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{0, 1, 1, 0, -1, 0.5, 0.3, -1, 2, 1, -0.5, -0.5})
	var c mat.SymDense
	kernel.RBF{Gamma: 0.5}.GramTo(&c, kernel.Inputs{N: 6, X: x})
	f, err := gp.NewFactor(&c)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunPairs(f, aucSites([]bool{true, false, true, false, true, false}, 5), PairOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	const draws = 20000
	sum, sum2 := make([]float64, 6), make([]float64, 6)
	d := make([]float64, 6)
	for k := 0; k < draws; k++ {
		res.DrawTo(rng, d)
		for i, v := range d {
			sum[i] += v
			sum2[i] += v * v
		}
	}
	for i := range sum {
		m := sum[i] / draws
		v := sum2[i]/draws - m*m
		if math.Abs(m-res.Mean[i]) > 0.04*math.Sqrt(res.Var[i]) || math.Abs(v/res.Var[i]-1) > 0.06 {
			t.Errorf("item %d: draws N(%.4f, %.4f), posterior N(%.4f, %.4f)", i, m, v, res.Mean[i], res.Var[i])
		}
	}
}

// TestPairKernelGrad checks PairResult.KernelGrad against central
// differences of the converged log Z_EP in an RBF kernel's inverse
// length-scale g and amplitude a, C = a exp(-g |x - x'|^2) (AUC sites,
// gamma 20; the amplitude's derivative is 0: log Z_EP is invariant to it).
func TestPairKernelGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n = 16
	x := mat.NewDense(n, 2, nil)
	y := make([]bool, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.NormFloat64())
		x.Set(i, 1, rng.NormFloat64())
		y[i] = x.At(i, 0)+0.7*rng.NormFloat64() > 0
	}
	sites := aucSites(y, 20)
	gram := func(a, g float64) (*mat.SymDense, *mat.SymDense, *mat.SymDense) {
		c, dg, da := mat.NewSymDense(n, nil), mat.NewSymDense(n, nil), mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				d2 := math.Pow(x.At(i, 0)-x.At(j, 0), 2) + math.Pow(x.At(i, 1)-x.At(j, 1), 2)
				e := math.Exp(-g * d2)
				c.SetSym(i, j, a*e)
				dg.SetSym(i, j, -a*d2*e)
				da.SetSym(i, j, e)
			}
		}
		return c, dg, da
	}
	run := func(c *mat.SymDense) *PairResult {
		f, _, err := gp.NewCholeskyFactor(c)
		if err != nil {
			t.Fatal(err)
		}
		res, err := RunPairs(f, sites, PairOptions{Tol: 1e-12, MaxSweeps: 5000})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	logZ := func(a, g float64) float64 {
		c, _, _ := gram(a, g)
		return run(c).LogZ
	}
	const a, g, h = 1.5, 0.4, 1e-5
	c, dg, da := gram(a, g)
	res := run(c)
	grad := res.KernelGrad(sites, []mat.Symmetric{dg, da})
	fdG := (logZ(a, g+h) - logZ(a, g-h)) / (2 * h)
	fdA := (logZ(a+h, g) - logZ(a-h, g)) / (2 * h)
	if math.Abs(grad[0]-fdG) > 1e-5*math.Max(1, math.Abs(fdG)) {
		t.Errorf("d log Z/d g: %.8g, difference %.8g", grad[0], fdG)
	}
	if math.Abs(grad[1]-fdA) > 1e-5 || math.Abs(grad[1]) > 1e-5 {
		t.Errorf("d log Z/d a: %.8g, difference %.8g (want 0)", grad[1], fdA)
	}
}
