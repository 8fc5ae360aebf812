package infer

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"time"

	"concord/multirater"
)

// Starts run apart: the restarts of an evidence maximisation as units of
// work that other processes run (the fan-out over workers), with the same
// result, bit for bit, as one Fit in one process.
//
// A start is a function of the problem, its starting point, Problem.WarmEP
// and the first start's optimum alone (runStarts), and its starting point
// is drawn from the Fit's generator before any search: so a fit may run in
// three kinds of pieces, each a run of the whole fit with a context that
// carries an Apart (WithApart), which acts on the first Fit call with more
// than one start (the later calls, if any, run as usual):
//
//   - the plan runs start 1 and stops the fit (ErrApart): its Outcome, with
//     the number of starts, is what every other piece needs;
//   - a part runs start s alone, from the plan, and stops the fit
//     (ErrApart): its Outcome;
//   - the combine takes every start's Outcome, picks the winner as
//     runStarts' caller does (bestRestart: the largest objective, the first
//     of equals; the notes, hopeless starts and clamped EP runs counted
//     from the outcomes), runs the winning start again to recover its
//     state (kernel, prior factor, last sites), checks that it gives the
//     same objective, and finishes the Fit from there.
//
// A start after the first needs the state the first start left for it
// (runStarts, later): the first factor of a fixed covariance and the
// inducing items, both made at the first start's starting point. A part and
// the combine make them again there (firstPrior), without running start 1.

// ErrApart is what a Fit returns that ran the plan or a part of an Apart:
// the outcome is in the Apart; there is no result.
var ErrApart = errors.New("multirater: a start of the evidence maximisation ran apart (no result)")

// Outcome is what one start of an evidence maximisation gives, as much as
// the choice of the winner needs (Restart without its state).
type Outcome struct {
	// Start is the 0-based start and Starts the number of starts of the
	// Fit.
	Start, Starts int
	// X, F, Iterations, Status, Clamped and Hopeless are Restart's; Err
	// its error's message ("" for none).
	X          []float64
	F          float64
	Iterations int
	Status     string
	Clamped    int
	Err        string
	Hopeless   bool
	// Failed is the error the start failed with ("" for none): the
	// combine's Fit fails with the first in start order, as runStarts.
	Failed string
}

// Encode encodes o exactly (gob: infinite values and every bit of the
// floats kept).
func (o *Outcome) Encode() ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(o); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// DecodeOutcome decodes what Outcome.Encode encoded.
func DecodeOutcome(b []byte) (*Outcome, error) {
	o := &Outcome{}
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(o); err != nil {
		return nil, fmt.Errorf("multirater: decoding a start's outcome: %w", err)
	}
	return o, nil
}

// outcome returns r's Outcome as start s of n.
func outcome(r *Restart, s, n int) *Outcome {
	o := &Outcome{Start: s, Starts: n, X: r.X, F: r.F, Iterations: r.Iterations, Status: r.Status, Clamped: r.Clamped, Hopeless: r.Hopeless}
	if r.Err != nil {
		o.Err = r.Err.Error()
	}
	return o
}

// restart returns the Restart of o, without state.
func (o *Outcome) restart() *Restart {
	r := &Restart{X: o.X, F: o.F, Iterations: o.Iterations, Status: o.Status, Clamped: o.Clamped, Hopeless: o.Hopeless}
	if o.Err != "" {
		r.Err = errors.New(o.Err)
	}
	return r
}

// Apart says which piece of a fit whose starts run apart this run is (see
// ErrApart): with Outcomes the combine, with First the part running start
// Start, with neither the plan.
type Apart struct {
	// Start is the 0-based start a part runs (1 or more), First the
	// plan's outcome (start 0's).
	Start int
	First *Outcome
	// Outcomes are every start's, in start order (the combine).
	Outcomes []Outcome
	// Progress, when set, receives a part's progress (the fraction of its
	// start) instead of the problem's Progress.
	Progress func(multirater.Progress)

	// Out is the outcome of the plan's or the part's start, set by Fit.
	Out *Outcome
	// Used says a Fit call has acted on the Apart.
	Used bool
	// Err, when set by Fit, says the pieces do not fit together (a plan
	// or outcomes of another fit, a winner that gives another objective
	// run again): the fit must fail with it, whatever a family makes of
	// the Fit's error.
	Err error

	cancel context.CancelFunc
}

type apartKey struct{}

// WithApart returns a context that makes the first Fit with several
// starts run piece a, and its cancel: the plan and the parts cancel the
// context once their start ran, so that a family that goes on after an
// error stops at once.
func WithApart(ctx context.Context, a *Apart) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithValue(ctx, apartKey{}, a))
	a.cancel = cancel
	return ctx, cancel
}

// apartOf returns the Apart ctx carries that no Fit has acted on; nil for
// none.
func apartOf(ctx context.Context) *Apart {
	a, _ := ctx.Value(apartKey{}).(*Apart)
	if a == nil || a.Used {
		return nil
	}
	return a
}

// run runs piece a of the evidence maximisation from starts (see
// ErrApart): the restarts for the combine, ErrApart for the plan and a
// part. A start that fails fails the plan's Fit as in one process (the
// plan has no outcome then), a part's is in its outcome (Failed).
func (a *Apart) run(ctx context.Context, ob *objective, starts [][]float64, warm *Approx) ([]*Restart, error) {
	a.Used = true
	p, n := ob.p, len(starts)
	switch {
	case a.Outcomes != nil:
		return a.combine(ctx, ob, starts, warm)
	case a.First == nil:
		ob.prog = newEvidenceProgress(n, p.Progress, ob.prog.begin)
		r, err := ob.restart(ctx, starts[0], newPrior(p), warm, math.Inf(1))
		if err != nil {
			return nil, err
		}
		a.Out = outcome(r, 0, n)
	default:
		if a.First.Starts != n || a.Start < 1 || a.Start >= n {
			return nil, a.fail(fmt.Errorf("multirater: start %d of a plan of %d starts: this fit has %d", a.Start+1, a.First.Starts, n))
		}
		report := p.Progress
		if a.Progress != nil {
			report = a.Progress
		}
		ob.prog = newEvidenceProgress(1, report, time.Now())
		first, err := ob.firstPrior(ctx, starts[0], warm)
		if err != nil {
			return nil, a.fail(err)
		}
		r, err := ob.later(ctx, starts[a.Start], first, warm, a.First.F, false, 0)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			r = &Restart{}
			a.Out = outcome(r, a.Start, n)
			a.Out.Failed = err.Error()
		} else {
			a.Out = outcome(r, a.Start, n)
		}
	}
	a.cancel()
	return nil, ErrApart
}

// fail records err as a's Err, stops the fit (the context) and returns
// err.
func (a *Apart) fail(err error) error {
	a.Err = err
	a.cancel()
	return err
}

// combine returns the restarts of a.Outcomes with the winner's run again
// here (its state recovered); an error when the outcomes are not this
// fit's or the winner's run gives another objective.
func (a *Apart) combine(ctx context.Context, ob *objective, starts [][]float64, warm *Approx) ([]*Restart, error) {
	p, n := ob.p, len(starts)
	if len(a.Outcomes) != n {
		return nil, a.fail(fmt.Errorf("multirater: %d outcomes for a fit of %d starts", len(a.Outcomes), n))
	}
	rs := make([]*Restart, n)
	for s := range a.Outcomes {
		if o := &a.Outcomes[s]; o.Start != s || o.Starts != n {
			return nil, a.fail(fmt.Errorf("multirater: outcome %d is start %d of %d, for a fit of %d starts", s+1, o.Start+1, o.Starts, n))
		}
		rs[s] = a.Outcomes[s].restart()
	}
	for _, o := range a.Outcomes {
		if o.Failed != "" {
			return nil, errors.New(o.Failed)
		}
	}
	win, _, err := bestRestart(p, rs)
	if err != nil {
		return rs, nil // Fit fails with bestRestart's error
	}
	ob.prog = newEvidenceProgress(1, p.Progress, ob.prog.begin)
	var r *Restart
	if win == 0 {
		pr := newPrior(p)
		if r, err = ob.restart(ctx, starts[0], pr, warm, math.Inf(1)); err != nil {
			return nil, a.fail(err)
		}
		r.prior, r.kernel = pr, p.Kernel
	} else {
		first, err := ob.firstPrior(ctx, starts[0], warm)
		if err != nil {
			return nil, a.fail(err)
		}
		if r, err = ob.later(ctx, starts[win], first, warm, a.Outcomes[0].F, false, 0); err != nil {
			return nil, a.fail(err)
		}
	}
	if math.Float64bits(r.F) != math.Float64bits(rs[win].F) || r.Iterations != rs[win].Iterations {
		return nil, a.fail(fmt.Errorf("multirater: start %d gave %v after %d iterations run again, %v after %d run apart", win+1, -r.F, r.Iterations, -rs[win].F, rs[win].Iterations))
	}
	rs[win] = r
	return rs, nil
}

// firstPrior returns the prior that the first start from x0 leaves for
// the later ones, and sets the problem's kernel to the state they begin
// with (runStarts, later): a fixed covariance's first factor and the
// inducing items, both made at x0 by the first start's first evaluation
// (objective.approximate in a search), made again here. When that factor
// fails (the first start then goes on without it) the first start runs
// here in full.
func (ob *objective) firstPrior(ctx context.Context, x0 []float64, warm *Approx) (Prior, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := ob.p
	pr := newPrior(p)
	if err := ob.set(x0); err == nil {
		if dp, ok := pr.(*densePrior); ok && dp.kernel != nil {
			return pr, nil // later makes a prior of its own
		}
		if _, err := pr.Factor(10 * p.FactorTol()); err == nil {
			return pr, nil
		}
	}
	pr = newPrior(p)
	prog := ob.prog
	ob.prog = newEvidenceProgress(1, nil, prog.begin)
	defer func() { ob.prog = prog }()
	if _, err := ob.restart(ctx, x0, pr, warm, math.Inf(1)); err != nil {
		return nil, err
	}
	return pr, nil
}
