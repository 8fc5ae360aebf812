package analysis

import (
	"context"
	"fmt"
	"strings"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/infer"
)

// The restarts of an EP or Laplace fit's evidence maximisation apart (the
// fan-out of a fit over worker processes, as a Gibbs fit's chains): the
// plan (PlanRestarts) runs the fit up to its first evidence maximisation
// with several starts and runs start 1 there; each part (FitRestart) runs
// one later start, from the plan; the combine (CombineRestarts) runs the
// fit again with every start's outcome, re-running only the winning start
// to recover its state. Every start is drawn from the fit's seed before
// any search and is a function of its inputs and start 1's optimum alone
// (infer.Apart), so the result is Fit's, bit for bit (apart from timings),
// whoever ran what. The later evidence maximisations of the same fit (the
// other candidates of a model choice, the later rounds of an EM loop) run
// in the combine, as in one process.

// RestartsApart reports whether the fit of spec (defaults filled in) may
// run its restarts apart: an EP or Laplace fit whose restarts are not set
// to 1 (their default depends on the data; a plan that finds no evidence
// maximisation with several starts is the whole fit).
func RestartsApart(spec FitSpec) bool {
	full := spec.WithDefaults()
	engine := strings.ToLower(full.Engine)
	return (engine == multirater.EngineEP || engine == multirater.EngineLaplace) && full.Restarts != 1
}

// PlanRestarts runs the fit of spec on ds until its first evidence
// maximisation with several starts and runs start 1 there: it returns the
// plan (encoded, the input of every part and of the combine), or, when the
// fit has no such maximisation, its result as Fit's. Errors are Fit's.
func PlanRestarts(ctx context.Context, ds *annotations.Dataset, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, []byte, error) {
	a := &infer.Apart{}
	res, err := fitApart(ctx, ds, spec, a, progress)
	if err != nil || a.Out == nil {
		return res, nil, err
	}
	plan, err := a.Out.Encode()
	return nil, plan, err
}

// RestartParts returns the number of parts of plan: its starts after the
// first.
func RestartParts(plan []byte) (int, error) {
	o, err := infer.DecodeOutcome(plan)
	if err != nil {
		return 0, err
	}
	return o.Starts - 1, nil
}

// FitRestart runs part i (0-based: start i+2) of the restarts of the fit of
// spec on ds planned by plan and returns its output (encoded). Errors are
// Fit's.
func FitRestart(ctx context.Context, ds *annotations.Dataset, spec FitSpec, plan []byte, i int, progress func(multirater.Progress)) ([]byte, error) {
	first, err := infer.DecodeOutcome(plan)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= first.Starts-1 {
		return nil, fmt.Errorf("restart part %d of a plan of %d starts", i, first.Starts)
	}
	// The part's progress is its start's (the fit's own steps before it
	// are not counted).
	report := func(multirater.Progress) {}
	if progress != nil {
		report = func(p multirater.Progress) {
			p.Phase = fmt.Sprintf("maximising the evidence: start %d of %d", i+2, first.Starts)
			progress(p)
		}
	}
	a := &infer.Apart{Start: i + 1, First: first, Progress: report}
	if _, err := fitApart(ctx, ds, spec, a, nil); err != nil {
		return nil, err
	}
	if a.Out == nil {
		return nil, fmt.Errorf("the %s fit ran whole where its plan had %d starts", spec.Model, first.Starts)
	}
	report(multirater.Progress{Fraction: 1})
	return a.Out.Encode()
}

// CombineRestarts returns the result Fit gives for spec on ds from the
// plan (outputs[0]) and every part's output (outputs[i+1] of part i).
func CombineRestarts(ctx context.Context, ds *annotations.Dataset, spec FitSpec, outputs [][]byte, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	outs := make([]infer.Outcome, len(outputs))
	for i, b := range outputs {
		o, err := infer.DecodeOutcome(b)
		if err != nil {
			return nil, err
		}
		outs[i] = *o
	}
	a := &infer.Apart{Outcomes: outs}
	res, err := fitApart(ctx, ds, spec, a, progress)
	if err == nil && !a.Used {
		return nil, fmt.Errorf("the %s fit has no evidence maximisation of %d starts to combine", spec.Model, len(outputs))
	}
	return res, err
}

// fitApart is Fit with a in its context. A plan or a part that ran (its
// outcome set) is no error: the fit stopped there on purpose.
func fitApart(ctx context.Context, ds *annotations.Dataset, spec FitSpec, a *infer.Apart, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	actx, cancel := infer.WithApart(ctx, a)
	defer cancel()
	res, err := Fit(actx, ds, spec, progress)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if a.Err != nil {
		return nil, a.Err
	}
	if a.Out != nil {
		return nil, nil
	}
	return res, err
}
