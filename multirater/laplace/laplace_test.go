package laplace

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"concord/internal/testutil"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/gp/gptest"
	"concord/multirater/kernel"
	"concord/multirater/lik"

	"gonum.org/v1/gonum/mat"
)

// pyrimidines builds the Pyrimidines model of ep's exact-evidence test
// (../ep/testdata: first 10 rows, RBF gamma 0.5/9, thresholds -1.5..1.5,
// sigma 0.5).
func pyrimidines(t *testing.T) (*gp.Factor, []lik.Site) {
	rows := testutil.ReadCSV(t, "../ep/testdata/pyrimidines10.csv")
	rows = rows[1:]
	x := mat.NewDense(len(rows), 9, nil)
	o := &lik.OrdinalProbit{B: []float64{-1.5, -0.5, 0.5, 1.5}, Sigma: 0.5}
	var sites []lik.Site
	for i, r := range rows {
		for j := 0; j < 9; j++ {
			v, _ := strconv.ParseFloat(r[1+j], 64)
			x.Set(i, j, v)
		}
		y, _ := strconv.ParseFloat(r[10], 64)
		sites = append(sites, lik.Site{Item: i, Y: y - 1, Lik: o})
	}
	var c mat.SymDense
	kernel.RBF{Gamma: 0.5 / 9}.GramTo(&c, kernel.Inputs{N: len(rows), X: x})
	fac, err := gp.NewFactor(&c)
	if err != nil {
		t.Fatal(err)
	}
	return fac, sites
}

// TestModeAndEvidence: at the mode the gradient of Psi vanishes (checked
// through the stationarity f = C grad, i.e. w = G' grad), the Laplace
// evidence is close to EP's and the exact value (mvtnorm, -26.7336 in
// ../ep/testdata/exact_evidence.csv; Laplace is the cruder approximation),
// and the identity kernel's diagonal path agrees with the dense path on an
// identity matrix.
func TestModeAndEvidence(t *testing.T) {
	fac, sites := pyrimidines(t)
	res, err := Run(fac, sites, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Stationarity: f* = C sum_j d1_j e_item(j).
	n := fac.N
	grad := make([]float64, n)
	for _, s := range sites {
		_, d1, _, _ := s.Lik.LogLik(s.Y, res.Mean[s.Item])
		grad[s.Item] += d1
	}
	g := mat.NewDense(n, fac.R, fac.G)
	var cg, gtg mat.VecDense
	gtg.MulVec(g.T(), mat.NewVecDense(n, grad))
	cg.MulVec(g, &gtg)
	for i := 0; i < n; i++ {
		if math.Abs(cg.AtVec(i)-res.Mean[i]) > 1e-8 {
			t.Errorf("item %d: mode %.10g, C grad %.10g", i, res.Mean[i], cg.AtVec(i))
		}
	}
	epRes, err := ep.Run(fac, sites, ep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const exact = -26.7335916503704
	t.Logf("log evidence: Laplace %.5f, EP %.5f, exact %.5f (%d Newton steps)", res.LogZ, epRes.LogZ, exact, res.Iterations)
	if math.Abs(res.LogZ-exact) > 0.05 {
		t.Errorf("Laplace log evidence %.5f, exact %.5f", res.LogZ, exact)
	}
	for i := 0; i < n; i++ {
		if math.Abs(res.Mean[i]-epRes.Mean[i]) > 0.25*math.Sqrt(epRes.Var[i]) || res.Var[i] > 1.5*epRes.Var[i] || res.Var[i] < epRes.Var[i]/1.5 {
			t.Errorf("item %d: Laplace N(%.4f, %.4f), EP N(%.4f, %.4f)", i, res.Mean[i], res.Var[i], epRes.Mean[i], epRes.Var[i])
		}
	}
	// Diagonal path = dense path with C = I.
	id := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		id.SetSym(i, i, 1)
	}
	dense, err := gp.NewFactor(id)
	if err != nil {
		t.Fatal(err)
	}
	dense.Diag = false
	dense.G = make([]float64, n*n)
	dense.R = n
	for i := 0; i < n; i++ {
		dense.G[i*n+i] = 1
	}
	a, err := Run(gp.IdentityFactor(n), sites, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(dense, sites, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.LogZ-b.LogZ) > 1e-9 {
		t.Errorf("identity kernel: diagonal path %.12g, dense %.12g", a.LogZ, b.LogZ)
	}
}

// TestGaussianExact: with a Gaussian likelihood Laplace's method is exact:
// the evidence is log N(y | 0, C + s^2 I).
func TestGaussianExact(t *testing.T) {
	fac, sites := pyrimidines(t)
	const s2 = 0.3
	ys := make([]float64, len(sites))
	for j := range sites {
		ys[j] = 0.3*float64(j) - 1
		sites[j].Y = ys[j]
		sites[j].Lik = gptest.Gauss{S2: s2}
	}
	res, err := Run(fac, sites, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := mat.NewDense(fac.N, fac.R, fac.G)
	var c mat.Dense
	c.Mul(g, g.T())
	want, _, _, err := gptest.Evidence(&c, s2, ys)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.LogZ-want) > 1e-8 {
		t.Errorf("log evidence %.12g, exact %.12g", res.LogZ, want)
	}
}

// TestEvidenceGradient: the gradient of the Laplace log evidence (Chu eq.
// 11) in Chu's likelihood parameters (explicit terms plus those through the
// mode, Implicit) and in the RBF gamma (KernelGrad) against central finite
// differences of LogZ, for a weak and a strong noise.
func TestEvidenceGradient(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(8, 1))
	x := mat.NewDense(n, 1, nil)
	ys := make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, 4*rng.Float64()-2)
		v := math.Sin(2*x.At(i, 0)) + 0.3*rng.NormFloat64()
		switch {
		case v < -0.5:
			ys[i] = 0
		case v < 0.3:
			ys[i] = 1
		default:
			ys[i] = 2
		}
	}
	in := kernel.Inputs{N: n, X: x}
	run := func(gamma float64, o *lik.OrdinalProbit) (*Result, *mat.SymDense) {
		var c mat.SymDense
		kernel.RBF{Gamma: gamma}.GramTo(&c, in)
		f, err := gp.NewFactor(&c)
		if err != nil {
			t.Fatal(err)
		}
		sites := make([]lik.Site, n)
		for i := range sites {
			sites[i] = lik.Site{Item: i, Y: ys[i], Lik: o}
		}
		r, err := Run(f, sites, Options{Tol: 1e-13})
		if err != nil {
			t.Fatal(err)
		}
		return r, &c
	}
	for _, sigma := range []float64{0.7, 0.1} {
		const gamma = 1.5
		o := &lik.OrdinalProbit{B: []float64{-0.4, 0.5}, Sigma: sigma}
		res, c := run(gamma, o)
		// Likelihood parameters.
		np := o.NumParams()
		grad := make([]float64, np)
		u := res.Implicit()
		d0, d1, d2 := make([]float64, np), make([]float64, np), make([]float64, np)
		for i := 0; i < n; i++ {
			o.LogLikGradTo(d0, d1, d2, ys[i], res.Mean[i])
			for k := range grad {
				grad[k] += d0[k] + 0.5*res.Var[i]*d2[k] + u[i]*d1[k]
			}
		}
		imp := 0.0
		for i := 0; i < n; i++ {
			o.LogLikGradTo(d0, d1, d2, ys[i], res.Mean[i])
			imp = math.Max(imp, math.Abs(u[i]*d1[np-1]))
		}
		t.Logf("sigma %.1f: gradient %v, largest implicit term %.3g", sigma, grad, imp)
		p0 := o.ParamsTo(make([]float64, np))
		for k := 0; k < np; k++ {
			const h = 1e-5
			at := func(d float64) float64 {
				q := &lik.OrdinalProbit{B: make([]float64, 2)}
				p := append([]float64(nil), p0...)
				p[k] += d
				q.SetParams(p)
				r, _ := run(gamma, q)
				return r.LogZ
			}
			fd := (at(h) - at(-h)) / (2 * h)
			if !(math.Abs(grad[k]-fd) <= 1e-5*(1+math.Abs(fd))) {
				t.Errorf("sigma %.1f: d log Z / d p[%d] = %.9g, finite difference %.9g", sigma, k, grad[k], fd)
			}
		}
		// The RBF gamma: dC/dgamma = -|x_i - x_j|^2 C_ij.
		dc := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				d := x.At(i, 0) - x.At(j, 0)
				dc.SetSym(i, j, -d*d*c.At(i, j))
			}
		}
		g := res.KernelGrad([]mat.Symmetric{dc})
		const h = 1e-5
		rp, _ := run(gamma+h, o)
		rm, _ := run(gamma-h, o)
		fd := (rp.LogZ - rm.LogZ) / (2 * h)
		if !(math.Abs(g[0]-fd) <= 1e-5*(1+math.Abs(fd))) {
			t.Errorf("sigma %.1f: d log Z / d gamma = %.9g, finite difference %.9g", sigma, g[0], fd)
		}
	}
}
