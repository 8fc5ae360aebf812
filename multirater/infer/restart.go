package infer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

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
	// Hopeless says the start was stopped early, far below the first
	// start's optimum.
	Hopeless bool
	// last is the last approximation of the search (the final one's warm
	// start when this start wins), prior and kernel the prior (with its
	// factor) and kernel the search ran on.
	last   *Approx
	prior  Prior
	kernel *Kernel
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
// independent). best is the first start's optimum (+Inf for the first
// start): a start that stays far below it is stopped early (hopeless).
func (ob *objective) restart(ctx context.Context, x0 []float64, pr Prior, warm *Approx, best float64) (*Restart, error) {
	ev := &evaluation{prior: pr, search: true, warm: warm}
	res := &Restart{}
	// L-BFGS asks for the value and the gradient at the same points: one
	// engine run gives both.
	// The search runs in y = theta / step (Problem.FirstStep).
	step := 1.0
	if ob.p.FirstStep > 0 {
		step = ob.p.FirstStep
	}
	var cx, cg, theta []float64
	var cv float64
	eval := func(x []float64) {
		if cx != nil && floats.Equal(cx, x) {
			return
		}
		if ctx.Err() != nil {
			// Cancelled: L-BFGS stops at its next record (stopRecorder).
			cv = math.Inf(1)
			return
		}
		cx = append(cx[:0], x...)
		cg = make([]float64, len(x))
		theta = append(theta[:0], x...)
		if step != 1 {
			floats.Scale(step, theta)
		}
		v, err := ob.eval(ctx, ev, theta, cg)
		if err != nil {
			res.Err, v = err, math.Inf(1)
		}
		if step != 1 {
			floats.Scale(step, cg)
		}
		cv = v
	}
	prob := optimize.Problem{
		Func: func(x []float64) float64 { eval(x); return cv },
		Grad: func(g, x []float64) { eval(x); copy(g, cg) },
	}
	maxIter, maxEvals := ob.p.MaxIterations, 0
	if maxIter == 0 {
		maxIter = 500
	} else {
		maxEvals = 3 * maxIter
	}
	if step != 1 {
		x0 = append([]float64(nil), x0...)
		floats.Scale(1/step, x0)
	}
	gain := ob.p.GainTol
	if gain == 0 {
		gain = 1e-4
	}
	conv := &hopeless{FunctionConverge: optimize.FunctionConverge{Absolute: gain, Iterations: 2}, best: best}
	r, err := optimize.Minimize(prob, x0, &optimize.Settings{GradientThreshold: 1e-5 * step, MajorIterations: maxIter,
		FuncEvaluations: maxEvals, Converger: conv, Recorder: stopRecorder{ctx}}, &optimize.LBFGS{})
	ob.prog.done(ob.unit)
	if err != nil && r == nil {
		return nil, fmt.Errorf("multirater: evidence maximisation: %w", err)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("multirater: evidence maximisation: %w", ctxErr)
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
	if step != 1 {
		floats.Scale(step, r.X)
	}
	res.X, res.F, res.Iterations, res.Clamped, res.Hopeless, res.last = r.X, r.F, r.Stats.MajorIterations, ev.clamped, conv.stopped, ev.warm
	return res, nil
}

// stopRecorder ends an L-BFGS search (optimize.Settings.Recorder) at the
// first evaluation or iteration after ctx is cancelled; it records
// nothing, so that it changes no arithmetic of the search.
type stopRecorder struct{ ctx context.Context }

func (stopRecorder) Init() error { return nil }

func (r stopRecorder) Record(*optimize.Location, optimize.Operation, *optimize.Stats) error {
	return r.ctx.Err()
}

// runStarts runs the restarts from starts: the first on the problem
// itself, then the others, each a function of the problem, its start, warm
// and the first start's optimum (the threshold under which a start is
// stopped as hopeless) alone, on its own copy of what a search changes:
// the kernel at its hyperparameters, with the inducing items the first
// start chose first; the prior, beginning with the first factor the first
// start made of a fixed covariance (shared read-only); with
// Problem.Replica the likelihoods and sites too, so that they run
// concurrently, at most Problem.Parallel at once. The restarts after the
// first therefore give the same results in any order, at once or one by
// one, here or in another process.
func runStarts(ctx context.Context, ob *objective, starts [][]float64, warm *Approx) ([]*Restart, error) {
	p := ob.p
	ob.prog = newEvidenceProgress(len(starts), p.Progress, ob.prog.begin)
	rs := make([]*Restart, len(starts))
	errs := make([]error, len(starts))
	pr := newPrior(p)
	first, err := ob.restart(ctx, starts[0], pr, warm, math.Inf(1))
	if err != nil {
		return nil, err
	}
	first.prior, first.kernel = pr, p.Kernel
	rs[0] = first
	workers := p.Parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if p.Replica == nil {
		workers = 1
	}
	workers = min(workers, len(starts)-1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	run := func(s int) {
		r, err := ob.later(ctx, starts[s], first.prior, warm, first.F, workers > 1, s)
		if err != nil {
			errs[s] = err
			cancel()
			return
		}
		rs[s] = r
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range next {
				run(s)
			}
		}()
	}
	for s := 1; s < len(starts); s++ {
		next <- s
	}
	close(next)
	wg.Wait()
	// The first error in start order (a cancelled start's is the
	// cancellation's).
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// later runs a start after the first from x0, as runStarts does: on its
// own copy of the kernel (a clone of the problem's, with the inducing items
// the first start chose first), the prior later makes of the first start's
// prior first, warm, and the first start's optimum best as the threshold
// under which it is hopeless; with replica on a Problem.Replica of its
// own. unit is the start in the progress.
func (ob *objective) later(ctx context.Context, x0 []float64, first Prior, warm *Approx, best float64, replica bool, unit int) (*Restart, error) {
	p := ob.p
	wp := *p
	wp.Kernel = p.Kernel.clone()
	if replica {
		q := p.Replica()
		if len(q.Liks) != len(p.Liks) || len(q.Sites) != len(p.Sites) {
			panic("infer: Problem.Replica returned another problem")
		}
		wp.Liks, wp.Sites, wp.FactorTol = q.Liks, q.Sites, q.FactorTol
		if q.LogPrior != nil {
			wp.LogPrior = q.LogPrior
		}
	}
	wob := &objective{p: &wp, engine: wp.NewEngine(), off: ob.off, nlik: ob.nlik, base: ob.base, prog: ob.prog, unit: unit}
	wpr := later(first, p, wp.Kernel)
	r, err := wob.restart(ctx, x0, wpr, warm, best)
	if err != nil {
		return nil, err
	}
	r.prior, r.kernel = wpr, wp.Kernel
	return r, nil
}
