package laplace

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/lik"
)

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
