package server

import (
	"context"
	"encoding/json"
	"fmt"

	"concord/analysis"
	"concord/annotations"
)

// The restarts of an EP or Laplace fit's evidence maximisation as jobs of
// their own (Config.FanOutChains, the chains' switch): the pool is an
// annotations.RestartRunner. The fit's job runs the fit up to its first
// evidence maximisation with several starts and start 1 there (PlanFit);
// the store turns each later start into a job any worker process may take
// (RunRestart, in a fit worker child process as whole fits), and the
// combine (CombineChains) runs the fit again with every start's outcome,
// re-running only the winning start. Every start is drawn from the fit's
// seed, so the result is the same, bit for bit, whoever ran what.

// RestartsApart reports whether fit f may run its restarts as jobs of
// their own: an EP or Laplace fit (analysis.RestartsApart) when
// Config.FanOutChains is set (annotations.RestartRunner).
func (p *pool) RestartsApart(f *annotations.Fit) bool {
	if !p.s.cfg.FanOutChains {
		return false
	}
	var spec analysis.FitSpec
	if err := json.Unmarshal(f.Spec, &spec); err != nil {
		return false // RunFit reports it
	}
	return analysis.RestartsApart(spec)
}

// PlanFit runs one attempt of fit f up to the first start of its evidence
// maximisation and returns the plan of the others and their number, or
// runs it whole (annotations.RestartRunner).
func (p *pool) PlanFit(ctx context.Context, f *annotations.Fit) ([]byte, int, error) {
	plan, err := p.execute(ctx, f, fitJob{Restart: &restartPart{Plan: true}})
	if err != nil || plan == nil {
		return nil, 0, err
	}
	n, err := analysis.RestartParts(plan)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", err, annotations.ErrRetry)
	}
	return plan, n, nil
}

// RunRestart runs part i (start i+2) of the restarts plan planned for fit
// f (annotations.RestartRunner).
func (p *pool) RunRestart(jobsCtx context.Context, f *annotations.Fit, plan []byte, i int, report func(annotations.FitProgress) error) ([]byte, error) {
	what := fmt.Sprintf("start %d of the evidence maximisation", i+2)
	out, err := p.runFitPart(jobsCtx, f, "start", fmt.Sprint(i+2), "restart", what, &fitJob{Restart: &restartPart{Part: i}, Outputs: [][]byte{plan}}, report)
	if err != nil {
		return nil, err
	}
	if len(out.outputs) != 1 {
		return nil, fmt.Errorf("%s of fit %d: %d outputs", what, f.ID, len(out.outputs))
	}
	return out.outputs[0], nil
}
