package infer

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// Restart is the outcome of one start of the evidence maximisation.
type Restart struct {
	// X is where L-BFGS stopped and F minus the objective there (+Inf
	// when no evaluation was finite).
	X []float64
	F float64
	// Iterations are L-BFGS's major iterations and Status "converged" or
	// why it stopped.
	Iterations int
	Status     string
	// Clamped counts the EP runs that clamped their site precisions.
	Clamped int
	// Err is the last evaluation's error, if any.
	Err error
	// last is the last approximation of the search (the final one's warm
	// start when this start wins).
	last *Approx
}

// restart maximises the objective by L-BFGS (gonum/optimize) from x0: one
// start of the evidence maximisation (Chu & Ghahramani sec. 4), a unit with
// its own inputs. It sets the problem's likelihoods and kernel as it goes,
// and carries pr's factor in and out (a serial run hands it from one start
// to the next; a start run elsewhere would begin with a Prior of its own).
// Converged when the objective has gained less than 1e-4 nats in two
// iterations, or the gradient is below 1e-5.
//
// warm, when not nil, starts the first EP run (Problem.WarmEP: an EM
// loop's previous sites, the same for every start, so that the starts stay
// independent). best is the best start's objective so far (+Inf for none):
// a start that stays far below it is stopped early (hopeless).
func (ob *objective) restart(ctx context.Context, x0 []float64, pr Prior, warm *Approx, best float64) (*Restart, error) {
	ev := &evaluation{prior: pr, search: true, warm: warm}
	res := &Restart{}
	// L-BFGS asks for the value and the gradient at the same points: one
	// engine run gives both.
	var cx, cg []float64
	var cv float64
	eval := func(x []float64) {
		if cx != nil && floats.Equal(cx, x) {
			return
		}
		cx = append(cx[:0], x...)
		cg = make([]float64, len(x))
		v, err := ob.eval(ctx, ev, x, cg)
		if err != nil {
			res.Err, v = err, math.Inf(1)
		}
		cv = v
	}
	prob := optimize.Problem{
		Func: func(x []float64) float64 { eval(x); return cv },
		Grad: func(g, x []float64) { eval(x); copy(g, cg) },
	}
	maxIter := ob.p.MaxIterations
	if maxIter == 0 {
		maxIter = 500
	}
	gain := ob.p.GainTol
	if gain == 0 {
		gain = 1e-4
	}
	conv := &hopeless{FunctionConverge: optimize.FunctionConverge{Absolute: gain, Iterations: 2}, best: best}
	r, err := optimize.Minimize(prob, x0, &optimize.Settings{GradientThreshold: 1e-5, MajorIterations: maxIter,
		Converger: conv}, &optimize.LBFGS{})
	ob.prog.done(ob.prog.evals)
	if err != nil && r == nil {
		return nil, fmt.Errorf("multirater: evidence maximisation: %w", err)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	res.Status = "converged"
	switch {
	case err != nil:
		res.Status = err.Error()
	case conv.stopped:
		res.Status = fmt.Sprintf("stopped early: %.1f nats below the best start after %d iterations", conv.gap, r.Stats.MajorIterations)
	case r.Status != optimize.GradientThreshold && r.Status != optimize.FunctionConvergence:
		res.Status = r.Status.String()
	}
	res.X, res.F, res.Iterations, res.Clamped, res.last = r.X, r.F, r.Stats.MajorIterations, ev.clamped, ev.warm
	return res, nil
}
