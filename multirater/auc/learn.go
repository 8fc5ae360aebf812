package auc

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"concord/multirater/ep"
	"concord/multirater/kernel"
)

// maxLogHyper bounds the unconstrained hyperparameters (log scales) during
// learning: an RBF's log gamma running off to -inf is the kernel's linear
// limit, which the evidence may favour without a maximum.
const maxLogHyper = 20

// learnKernel maximises log Z_EP at gamma over the hyperparameters of the
// model's kernel (a kernel.Hyper), from its current values, by L-BFGS
// (gonum/optimize) with the gradient of ep.PairResult.KernelGrad; each
// evaluation refactorises C and warm-starts EP from the previous sites.
// It returns the model and posterior at the best point evaluated: a local
// maximum (the evidence can have several: on a ring-shaped class, an RBF's
// log Z_EP has maxima near gamma 0.3 and 2.6, TestLearnKernel).
func learnKernel(ctx context.Context, m0 *model, y []bool, gamma float64, o *Options) (*model, *posterior, error) {
	hk := m0.kern.(kernel.Hyper)
	nh := hk.NumHyper(m0.d)
	p0 := hk.HyperTo(make([]float64, nh), m0.d)
	sites := m0.pairSites(y, gamma, o)
	dense := *o
	dense.Rank = 0
	type point struct {
		p    []float64
		f    float64
		grad []float64
		m    *model
		res  *ep.PairResult
	}
	var last, best *point
	var firstErr error
	eo := o.EP
	eo.Stop = ctx.Err
	dst := make([]*mat.SymDense, nh)
	eval := func(p []float64) *point {
		if last != nil && floats.Equal(last.p, p) {
			return last
		}
		pt := &point{p: append([]float64(nil), p...), f: math.Inf(1), grad: make([]float64, nh)}
		last = pt
		for _, v := range p {
			if math.Abs(v) > maxLogHyper || math.IsNaN(v) {
				return pt
			}
		}
		if ctx.Err() != nil {
			return pt
		}
		k := hk.WithHyper(p)
		m, err := newModel(m0.x, k, &dense)
		if err != nil {
			firstErr = err
			return pt
		}
		res, err := ep.RunPairs(m.factor(), sites, eo)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return pt
		}
		eo.InitTau, eo.InitNu = res.Tau, res.Nu
		k.GramGradTo(dst, kernel.Inputs{N: m.n, X: m.x})
		dc := make([]mat.Symmetric, nh)
		for h := range dst {
			dst[h].ScaleSym(o.PriorScale, dst[h])
			dc[h] = dst[h]
		}
		g := res.KernelGrad(sites, dc)
		for h := range g {
			pt.grad[h] = -g[h]
		}
		pt.f, pt.m, pt.res = -res.LogZ, m, res
		if best == nil || pt.f < best.f {
			best = pt
		}
		return pt
	}
	prob := optimize.Problem{
		Func: func(p []float64) float64 { return eval(p).f },
		Grad: func(g, p []float64) { copy(g, eval(p).grad) },
	}
	_, err := optimize.Minimize(prob, p0, &optimize.Settings{GradientThreshold: 1e-4, MajorIterations: 50,
		Converger: &optimize.FunctionConverge{Absolute: 1e-4, Iterations: 3}}, &optimize.LBFGS{})
	o.prog.step()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if best == nil {
		if firstErr == nil {
			firstErr = err
		}
		return nil, nil, fmt.Errorf("auc: learning the kernel %s at gamma %v: %w", m0.kern, gamma, firstErr)
	}
	cov := mat.NewSymDense(best.m.r, nil)
	best.res.WCovTo(cov)
	return best.m, &posterior{mean: best.res.W, cov: cov, logZ: best.res.LogZ, ep: best.res}, nil
}
