package ordinal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/infer"
)

// maxCurvatureParams is the largest number of learnt rater parameters
// whose curvature raterLaplace forms: it costs two engine runs per
// parameter (warm started, about as many as a few evidence-search
// iterations each), so 2 x 100 runs at most.
const maxCurvatureParams = 100

// raterLaplace is the Laplace approximation of the type-II posterior of
// the learnt rater parameters theta, p(theta | y) ∝ Z(theta) p(theta)
// (Z the engine's evidence, p(theta) the priors with DetOptions.Priors,
// else flat), in Chu's parametrisation (b_1, ln Delta_2, ..., ln sigma per
// owner of the noise model; Chu & Ghahramani sec. 4): N(theta-hat,
// H^-1), with H the curvature of minus the maximised objective at
// theta-hat (infer.Curvature: central differences of its exact gradient),
// the kernel held at its estimate.
type raterLaplace struct {
	// pos[o][k] is owner o's parameter k's row in H, -1 when fixed.
	pos  [][]int
	chol mat.Cholesky
}

// maxCurvatureCond is the largest condition number of the curvature whose
// inverse is used: above it a direction is flat to within the central
// differences' error (relative 1e-6 of the largest curvature at best, so
// 1e10 leaves a margin of four digits), as where the data identify only a
// combination of the parameters (one rater and the identity kernel: the
// evidence depends on b / sqrt(1 + sigma^2) alone).
const maxCurvatureCond = 1e10

// errCurvature says that the curvature is not positive definite at the
// estimate (a maximum on a boundary, or a flat direction).
var errCurvature = errors.New("the curvature of the objective in the rater parameters is not positive definite, or flat in some direction (the data identify only a combination of them)")

// newRaterLaplace forms and factorises H for the fitted problem prob (its
// owners' parameters at their estimates) with its final approximation a;
// nil without learnt parameters.
func newRaterLaplace(ctx context.Context, prob *infer.Problem, a *infer.Approx, nm *noiseModel) (*raterLaplace, error) {
	rl := &raterLaplace{pos: make([][]int, len(nm.owners))}
	np := 0
	for o, ow := range nm.owners {
		rl.pos[o] = make([]int, ow.NumParams())
		for k := range rl.pos[o] {
			rl.pos[o][k] = -1
			if prob.Fixed == nil || !prob.Fixed(o, k) {
				rl.pos[o][k] = np
				np++
			}
		}
	}
	if np == 0 {
		return nil, nil
	}
	if np > maxCurvatureParams {
		return nil, fmt.Errorf("%d learnt rater parameters, more than the %d whose curvature is formed (two engine runs each)", np, maxCurvatureParams)
	}
	h, err := infer.Curvature(ctx, prob, a)
	if err != nil {
		return nil, err
	}
	if !rl.chol.Factorize(h) || rl.chol.Cond() > maxCurvatureCond {
		return nil, errCurvature
	}
	return rl, nil
}

// variance returns the approximate posterior variance of the linear
// combination sum_k w[k] theta_{o,k} of owner o's parameters (w over the
// owner's parameters; fixed ones ignored), w' P^-1 w by a solve.
func (rl *raterLaplace) variance(o int, w []float64) float64 {
	rhs := mat.NewVecDense(rl.chol.SymmetricDim(), nil)
	any := false
	for q, r := range rl.pos[o] {
		if r >= 0 && w[q] != 0 {
			rhs.SetVec(r, w[q])
			any = true
		}
	}
	if !any {
		return 0
	}
	var x mat.VecDense
	if err := rl.chol.SolveVecTo(&x, rhs); err != nil {
		return math.NaN()
	}
	return math.Max(mat.Dot(rhs, &x), 0)
}

// setIntervals gives every rater's precision, variance and thresholds in
// res their Laplace intervals: the precision 1/sigma^2 = exp(-2 ln sigma)
// and variance sigma^2 log-normal (the transform of the Gaussian ln
// sigma), each threshold b_k = b_1 + sum_{k' <= k} exp(ln Delta_k')
// Gaussian with the delta method's variance J P^-1 J' (J = (1, Delta_2,
// ..., Delta_k)). The estimates stay the point values (the mode).
func (rl *raterLaplace) setIntervals(res *multirater.FitResult, nm *noiseModel) {
	const z = 1.959963984540054
	for l, o := range nm.liks {
		ow := nm.owner(l)
		k := nm.owners[ow].NumParams()
		nb := len(o.B)
		sIdx := nb
		if nm.mode == SharedThresholds {
			sIdx = nb + l
		}
		w := make([]float64, k)
		rr := &res.Raters[l]
		w[sIdx] = 1
		if sd := math.Sqrt(rl.variance(ow, w)); sd > 0 && !math.IsNaN(sd) {
			alpha := 1 / (o.Sigma * o.Sigma)
			// ln alpha = -2 ln sigma: sd 2 sd(ln sigma).
			rr.Precision = multirater.Estimate{Mean: alpha, SD: alpha * 2 * sd, Q025: alpha * math.Exp(-2*z*sd), Q50: alpha, Q975: alpha * math.Exp(2*z*sd)}
			rr.Variance = multirater.Estimate{Mean: 1 / alpha, SD: 2 * sd / alpha, Q025: math.Exp(-2*z*sd) / alpha, Q50: 1 / alpha, Q975: math.Exp(2*z*sd) / alpha}
		}
		w[sIdx] = 0
		for t := range o.B {
			clear(w)
			w[0] = 1
			for i := 1; i <= t; i++ {
				w[i] = o.B[i] - o.B[i-1]
			}
			if sd := math.Sqrt(rl.variance(ow, w)); sd > 0 && !math.IsNaN(sd) {
				rr.Thresholds[t].Estimate = *multirater.NormalEstimate(o.B[t], sd)
			}
		}
	}
}

// laplaceNote says how the rater parameters' intervals were made.
const laplaceNote = "rater precisions and thresholds: 95% intervals of the Laplace approximation of their type-II posterior (the curvature of the maximised objective in ln sigma and Chu's threshold parametrisation, kernel at its estimate; precisions log-normal, thresholds by the delta method)"

// raterIntervals gives the rater parameters of a fit (res, from prob and
// its final approximation a with noise model nm) the intervals of
// raterLaplace, or says in a note that they are point estimates and why
// (too many parameters, or a curvature that is not positive definite);
// only a cancelled context is an error.
func raterIntervals(ctx context.Context, res *multirater.FitResult, prob *infer.Problem, a *infer.Approx, nm *noiseModel) error {
	t0 := time.Now()
	rl, err := newRaterLaplace(ctx, prob, a, nm)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, "rater precisions and thresholds are point estimates (no interval): "+err.Error())
	case rl != nil:
		rl.setIntervals(res, nm)
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, laplaceNote)
	}
	res.Diagnostics.Seconds += time.Since(t0).Seconds()
	return nil
}
