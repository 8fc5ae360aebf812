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
}

// restart maximises the objective by L-BFGS (gonum/optimize) from x0: one
// start of the evidence maximisation (Chu & Ghahramani sec. 4), a unit with
// its own inputs. It sets the problem's likelihoods and kernel as it goes,
// and carries pr's factor in and out (a serial run hands it from one start
// to the next; a start run elsewhere would begin with a Prior of its own).
// Converged when the objective has gained less than 1e-4 nats in two
// iterations, or the gradient is below 1e-5.
func (ob *objective) restart(ctx context.Context, x0 []float64, pr Prior) (*Restart, error) {
	ev := &evaluation{prior: pr, search: true}
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
	r, err := optimize.Minimize(prob, x0, &optimize.Settings{GradientThreshold: 1e-5, MajorIterations: 500,
		Converger: &optimize.FunctionConverge{Absolute: 1e-4, Iterations: 2}}, &optimize.LBFGS{})
	if err != nil && r == nil {
		return nil, fmt.Errorf("multirater: evidence maximisation: %w", err)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	res.Status = "converged"
	if err != nil {
		res.Status = err.Error()
	} else if r.Status != optimize.GradientThreshold && r.Status != optimize.FunctionConvergence {
		res.Status = r.Status.String()
	}
	res.X, res.F, res.Iterations, res.Clamped = r.X, r.F, r.Stats.MajorIterations, ev.clamped
	return res, nil
}
