package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// A Gibbs fit's chains as jobs of their own (Config.FanOutChains): the
// pool is an annotations.ChainRunner. The store's job engine turns a fit
// whose ChainJobs is 2 or more into one job per chain, which any worker
// process may take (RunChains runs one, in a fit worker child process as
// whole fits), and a combine job (CombineChains: the summary, recorded as
// RunFit records a fit). Chain c is seeded from the fit's seed as in one
// process, so the result is the same, bit for bit, whoever ran what.

// ChainJobs returns the number of chain jobs fit f fans out into: its
// chains for a Gibbs fit that can run them apart when Config.FanOutChains
// is set, else 0 (annotations.ChainRunner).
func (p *pool) ChainJobs(f *annotations.Fit) int {
	spec, ok := p.fanOutSpec(f)
	if !ok {
		return 0
	}
	return analysis.ChainJobs(spec)
}

// fanOutSpec returns fit f's settings when Config.FanOutChains is set and
// they can be read (RunFit reports them otherwise).
func (p *pool) fanOutSpec(f *annotations.Fit) (analysis.FitSpec, bool) {
	var spec analysis.FitSpec
	if !p.s.cfg.FanOutChains || json.Unmarshal(f.Spec, &spec) != nil {
		return analysis.FitSpec{}, false
	}
	return spec, true
}

// RunChains runs chains [lo, hi) of fit f (annotations.ChainRunner).
func (p *pool) RunChains(jobsCtx context.Context, f *annotations.Fit, lo, hi int, report func(annotations.FitProgress) error) ([][]byte, annotations.SamplingTime, error) {
	what := fmt.Sprintf("chains %d..%d", lo, hi-1)
	out, err := p.runFitPart(jobsCtx, f, "chain_range", fmt.Sprintf("%d..%d", lo, hi-1), "chains", what, &fitJob{Chains: &[2]int{lo, hi}}, report)
	if err != nil {
		return nil, annotations.SamplingTime{}, err
	}
	return out.outputs, out.sampling, nil
}

// runFitPart runs job, a part of fit f (chains, a start of the evidence
// maximisation), with the fit's settings, logging as key value and naming
// the part what in messages and name in the log (runPart).
func (p *pool) runFitPart(jobsCtx context.Context, f *annotations.Fit, key, value, name, what string, job *fitJob,
	report func(annotations.FitProgress) error) (childResult, error) {
	s := p.s
	log := s.log.With("fit", f.ID, "project", f.ProjectID, key, value)
	if err := json.Unmarshal(f.Spec, &job.Spec); err != nil {
		return childResult{}, annotations.Errorf(annotations.EINVALID, "the stored fit settings cannot be read: %v", err)
	}
	var latest atomic.Pointer[multirater.Progress]
	latest.Store(&multirater.Progress{Phase: "loading the data"})
	var out childResult
	err := s.runPart(jobsCtx, log, name, fmt.Sprintf("internal error during %s of the fit (see the server log, fit %d)", what, f.ID),
		func() error {
			pr := *latest.Load()
			return report(annotations.FitProgress{Progress: min(max(pr.Fraction, 0), 1), ETASeconds: pr.ETA.Seconds(), MaxRhat: pr.MaxRhat, Message: pr.Phase})
		},
		func(ctx context.Context) (err error) {
			out, err = p.fit(ctx, f, job, func(pr multirater.Progress) { latest.Store(&pr) })
			return err
		})
	return out, err
}

// runPart runs a part of a fanned-out job (chains of a fit, a fold of an
// evaluation) by run under a child context of jobsCtx, counted busy: it
// logs "<what> started", calls write every Config.ProgressInterval while
// run runs to store its progress (an error of write cancels the part), and
// returns what partEnd makes of run's error (internal is the message of an
// internal one), logging "<what> ended" with the state, seconds and error.
func (s *Server) runPart(jobsCtx context.Context, log *slog.Logger, what, internal string, write func() error, run func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(jobsCtx)
	defer cancel(nil)
	s.metrics.busy.Inc()
	defer s.metrics.busy.Dec()
	start := time.Now()
	log.Info(what + " started")
	stopReports := every(ctx, s.cfg.ProgressInterval, cancel, write)
	err := run(ctx)
	stopReports()
	state, err := s.partEnd(ctx, jobsCtx, log, err, internal)
	log.Info(what+" ended", "state", state, "seconds", time.Since(start).Seconds(), "err", err)
	return err
}

// CombineChains summarises the outputs of every chain of fit f (or of
// every start of its evidence maximisation) and records the fit's end
// (annotations.ChainRunner).
func (p *pool) CombineChains(ctx context.Context, f *annotations.Fit, outputs [][]byte, sampling annotations.SamplingTime) error {
	_, err := p.execute(ctx, f, fitJob{Outputs: outputs, SamplingSeconds: sampling.Wall.Seconds(), SamplingCPUSeconds: sampling.CPU.Seconds()})
	return err
}

// partEnd says how a part of a fanned-out job (chains of a fit, a fold of
// an evaluation) that ran under ctx, a child of jobsCtx, ended: "done";
// "stopped" (its parent was cancelled, failed elsewhere or was deleted, or
// the part was taken over: the store knows which); "requeued" (this worker
// shuts down) or "killed" (its child process died), which the job engine
// retries; or failed, an internal error told to the user as internal (a
// message naming the part). It returns the state, for the log, and the
// error for the job engine.
func (s *Server) partEnd(ctx, jobsCtx context.Context, log *slog.Logger, err error, internal string) (string, error) {
	cause := context.Cause(ctx)
	var killed *workerKilledError
	switch {
	case err == nil:
		return "done", nil
	case cause != nil && !errors.Is(cause, context.Canceled):
		return "stopped", cause
	case jobsCtx.Err() != nil:
		s.metrics.retried.WithLabelValues("shutdown").Inc()
		return "requeued", fmt.Errorf("%s: %w", errShutdown.Error(), annotations.ErrRetry)
	case errors.As(err, &killed):
		s.metrics.retried.WithLabelValues("killed").Inc()
		log.Warn("fit worker killed", "err", err)
		return "killed", fmt.Errorf("fit worker killed by %s: %w", killed.reason(), annotations.ErrRetry)
	case annotations.ErrorCode(err) == annotations.EINTERNAL:
		log.Error("internal error", "err", err)
		return string(annotations.FitFailed), &annotations.Error{Code: annotations.EINTERNAL, Message: internal}
	default:
		return string(annotations.FitFailed), err
	}
}

// every calls report every interval until ctx ends or the returned stop is
// called (stop returns once report is no longer running); an error from
// report cancels ctx with it (cancel) and ends the calls.
func every(ctx context.Context, interval time.Duration, cancel context.CancelCauseFunc, report func() error) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := report(); err != nil {
				cancel(err)
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

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
	spec, ok := p.fanOutSpec(f)
	return ok && analysis.RestartsApart(spec)
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
