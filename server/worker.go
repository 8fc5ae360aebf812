package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"

	"github.com/prometheus/client_golang/prometheus"
)

// Background fits.
//
// Fits are jobs of the store's job engine (River, see package db): the
// store enqueues a fit's job in the transaction that stores the fit, and
// Serve runs Config.Workers of them at once in this process through
// store.RunWorkers (none with Workers < 0: an API-only node; `concord
// worker` runs workers without the API). River claims each job for exactly
// one worker of any number of processes sharing the database, retries an
// attempt that ended for a reason outside the fit with backoff, and the
// store retries the jobs of worker processes that stopped recording that
// they are alive (kill -9, a lost machine).
//
// The pool is the FitRunner: it runs one attempt of a fit, in a child
// process (Config.FitCommand) so that a crash of the sampler cannot take
// the server down. While a fit runs, its progress (fraction, ETA, current
// max R-hat) is written every Config.ProgressInterval; the answer says
// whether a cancel was requested (from any process), and the fit's context
// is then cancelled. A cancel through this process stops the fit at once.
//
// A fit whose worker process is killed by a signal, typically the kernel's
// OOM killer (SIGKILL), is re-queued with the reason in its message ("fit
// worker killed by signal 9 (killed; out of memory?), re-queued, attempt 1
// of 3") and retried, and failed with that reason once MaxAttempts attempts
// have been killed. A fit that fails on its data is failed at once, not
// retried.
//
// Graceful shutdown stops taking jobs, waits up to ShutdownGrace for
// running fits to finish and puts the rest back in the queue.

// Why a running fit's context was cancelled.
var (
	errCancelled = errors.New("cancelled by request")
	errShutdown  = errors.New("the server shut down during the fit")
	errDeleted   = errors.New("the fit or its project was deleted")
	errLost      = errors.New("the fit was taken over by another worker")
)

type pool struct {
	s *Server

	mu   sync.Mutex
	jobs map[int64]*job
}

type job struct {
	fit    *annotations.Fit
	cancel context.CancelCauseFunc
}

func newPool(s *Server) *pool {
	return &pool{s: s, jobs: map[int64]*job{}}
}

// cancelLocal stops fit id if it runs in this process.
func (p *pool) cancelLocal(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if j, ok := p.jobs[id]; ok {
		j.cancel(errCancelled)
	}
}

// stopProject stops the fits of a project that is being deleted.
func (p *pool) stopProject(projectID int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, j := range p.jobs {
		if j.fit.ProjectID == projectID {
			j.cancel(errDeleted)
		}
	}
}

// running returns the ids of the fits running in this process.
func (p *pool) running() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]int64, 0, len(p.jobs))
	for id := range p.jobs {
		ids = append(ids, id)
	}
	return ids
}

// run works fit jobs until ctx is done, then shuts down gracefully (see
// annotations.JobEngine.RunWorkers).
func (p *pool) run(ctx context.Context) error {
	cfg := p.s.cfg
	if cfg.Workers <= 0 {
		<-ctx.Done()
		return nil
	}
	return p.s.store.RunWorkers(ctx, annotations.WorkerOptions{
		Name:          cfg.WorkerName,
		Queues:        cfg.Queues,
		Concurrency:   cfg.Workers,
		MaxAttempts:   cfg.MaxAttempts,
		StaleAfter:    cfg.StaleAfter,
		PollInterval:  cfg.PollInterval,
		ShutdownGrace: cfg.ShutdownGrace,
	}, p)
}

// RunFit runs one attempt of fit f (annotations.FitRunner).
func (p *pool) RunFit(ctx context.Context, f *annotations.Fit) error {
	_, err := p.execute(ctx, f, fitJob{})
	return err
}

// execute runs one attempt of a fit to its end: done, failed or cancelled
// (recorded, nil), or an error wrapping ErrRetry (its worker process was
// killed, this worker shuts down, it was taken over): the job engine
// retries it. The fit job is tmpl with the fit's settings and data: with
// Outputs, the attempt summarises the outputs of the fit's chains (or
// restarts) that ran as jobs of their own (sampling: the longest time one
// sampled, the CPU time of all) instead of fitting; with Restart.Plan it
// may stop after the first start of the evidence maximisation and return
// the plan of the others (nothing recorded then).
func (p *pool) execute(jobsCtx context.Context, f *annotations.Fit, tmpl fitJob) ([]byte, error) {
	s := p.s
	log := s.log.With("fit", f.ID, "project", f.ProjectID, "attempt", f.Attempts)
	ctx, cancel := context.WithCancelCause(jobsCtx)
	defer cancel(nil)
	p.mu.Lock()
	p.jobs[f.ID] = &job{fit: f, cancel: cancel}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.jobs, f.ID)
		p.mu.Unlock()
	}()
	s.metrics.busy.Inc()
	defer s.metrics.busy.Dec()
	start := time.Now()
	s.metrics.queueWait.Observe(max(start.Sub(f.CreatedAt).Seconds(), 0))
	log.Info("fit started")

	var spec analysis.FitSpec
	specErr := json.Unmarshal(f.Spec, &spec)
	sweeps := &sweepCount{counter: s.metrics.sweeps}
	if specErr == nil && tmpl.Outputs == nil {
		sweeps.total = gibbsSweeps(spec.WithDefaultsExceptKernel())
	}

	var latest atomic.Pointer[multirater.Progress]
	latest.Store(&multirater.Progress{Phase: "loading the data"})
	stopReports := every(ctx, p.s.cfg.ProgressInterval, cancel, p.progressReport(ctx, f, &latest, sweeps))

	var res *multirater.FitResult
	var plan []byte
	err := specErr
	if err == nil {
		var out childResult
		job := tmpl
		job.Spec = spec
		out, err = p.fit(ctx, f, &job, func(pr multirater.Progress) { latest.Store(&pr) })
		res = out.res
		if err == nil && res == nil && len(out.outputs) == 1 {
			plan = out.outputs[0]
		}
	} else {
		err = annotations.Errorf(annotations.EINVALID, "the stored fit settings cannot be read: %v", err)
	}
	stopReports()

	// The fit's own context may be cancelled: finish with a fresh one.
	bg, cancelBg := context.WithTimeout(context.WithoutCancel(jobsCtx), 30*time.Second)
	defer cancelBg()
	elapsed := time.Since(start)
	cause := context.Cause(ctx)
	if err == nil {
		cause = nil
	}
	state := ""
	var retry error
	var killed *workerKilledError
	switch {
	case plan != nil:
		state = "planned"
	case err == nil:
		raw, merr := json.Marshal(res)
		if merr != nil {
			err = merr
			state = string(annotations.FitFailed)
			p.finish(bg, log, f, annotations.FitFailed, "internal error: the result could not be encoded", nil)
			break
		}
		msg := res.Diagnostics.Verdict
		if msg == "" {
			msg = "done"
		}
		state = string(annotations.FitDone)
		// Counted before the fit is recorded done, so that whoever sees
		// it done sees its sweeps counted.
		sweeps.done(res)
		if res.Model.Engine == multirater.EngineGibbs && res.Diagnostics.SweepsPerSecond > 0 {
			s.metrics.sweepRate.Set(res.Diagnostics.SweepsPerSecond)
		}
		p.finish(bg, log, f, annotations.FitDone, msg, raw)
	case errors.Is(cause, errCancelled):
		state = string(annotations.FitCancelled)
		p.finish(bg, log, f, annotations.FitCancelled, "cancelled by request", nil)
	case jobsCtx.Err() != nil:
		// This worker shuts down: the job engine puts the fit back in
		// the queue.
		state = "requeued"
		s.metrics.retried.WithLabelValues("shutdown").Inc()
		retry = fmt.Errorf("%s: %w", errShutdown.Error(), annotations.ErrRetry)
	case errors.Is(cause, errDeleted), errors.Is(cause, errLost):
		state = "abandoned"
		log.Info("fit stopped", "reason", cause.Error())
	case errors.As(err, &killed):
		state = "killed"
		s.metrics.retried.WithLabelValues("killed").Inc()
		log.Warn("fit worker killed", "err", err, "max_attempts", s.cfg.MaxAttempts)
		retry = fmt.Errorf("fit worker killed by %s: %w", killed.reason(), annotations.ErrRetry)
	default:
		state = string(annotations.FitFailed)
		msg := annotations.ErrorMessage(err)
		if annotations.ErrorCode(err) == annotations.EINTERNAL {
			log.Error("fit failed", "err", err)
			msg = fmt.Sprintf("internal error during the fit (see the server log, fit %d)", f.ID)
		}
		p.finish(bg, log, f, annotations.FitFailed, msg, nil)
	}
	s.metrics.finished.WithLabelValues(state).Inc()
	if state == string(annotations.FitDone) {
		s.metrics.fitSeconds.Observe(elapsed.Seconds())
	}
	log.Info("fit ended", "state", state, "seconds", elapsed.Seconds())
	return plan, retry
}

func (p *pool) finish(ctx context.Context, log *slog.Logger, f *annotations.Fit, st annotations.FitStatus, msg string, result []byte) {
	if err := p.s.store.FinishFit(ctx, f.ID, st, msg, result); err != nil {
		log.Error("recording the end of a fit", "state", st, "err", err)
	}
}

// fit loads the project's data and runs the model, turning a panic into an
// internal error.
func (p *pool) fit(ctx context.Context, f *annotations.Fit, job *fitJob, progress func(multirater.Progress)) (out childResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.s.log.Error("panic during a fit", "fit", f.ID, "panic", r, "stack", stack())
			out, err = childResult{}, fmt.Errorf("panic: %v", r)
		}
	}()
	ds, err := p.s.store.Dataset(ctx, f.ProjectID)
	if err != nil {
		return childResult{}, err
	}
	job.Dataset = ds
	// The fit's expected cost, stated before it starts: in the log with
	// how it was derived, and after every phase of its progress message,
	// which the dashboard shows while the fit runs.
	cost := analysis.ExpectedCost(job.Spec.ForData(ds).WithDefaults(), len(ds.Labels), len(ds.ItemIDs()))
	p.s.log.Info("fit starting", "fit", f.ID, "expected_cpu_seconds", cost.CPU.Seconds(), "cost_model", cost.Model)
	note := "; expected cost " + cost.Short()
	inner := progress
	progress = func(pr multirater.Progress) {
		pr.Phase += note
		inner(pr)
	}
	progress(multirater.Progress{Phase: "starting"})
	if len(p.s.cfg.FitCommand) > 0 {
		return p.fitInChild(ctx, p.s.log.With("fit", f.ID), job, progress)
	}
	return runJob(ctx, job, progress)
}

// progressReport is the report (for every, each ProgressInterval) that
// writes the fit's latest progress; its error cancels the fit when a
// cancel was requested (errCancelled), the fit was deleted (errDeleted) or
// another worker took it over (errLost).
func (p *pool) progressReport(ctx context.Context, f *annotations.Fit, latest *atomic.Pointer[multirater.Progress], sweeps *sweepCount) func() error {
	s := p.s
	return func() error {
		pr := *latest.Load()
		frac := min(max(pr.Fraction, 0), 1)
		sweeps.progress(frac)
		msg := pr.Phase
		wctx, cancelW := context.WithTimeout(ctx, 5*time.Second)
		cancelReq, err := s.store.UpdateFitProgress(wctx, f.ID, annotations.FitProgress{
			Progress: frac, ETASeconds: pr.ETA.Seconds(), MaxRhat: pr.MaxRhat, Message: msg,
		})
		cancelW()
		switch code := annotations.ErrorCode(err); {
		case err == nil && cancelReq:
			return errCancelled
		case code == annotations.ENOTFOUND:
			return errDeleted
		case code == annotations.EINVALID:
			// No longer running: re-queued by a process that presumed this
			// one dead.
			return errLost
		case err != nil:
			if ctx.Err() == nil {
				s.log.Warn("writing fit progress", "fit", f.ID, "err", err)
			}
			return nil
		}
		// Still ours? Another process may have re-queued and re-claimed it.
		cur, err := s.store.FindFitByID(ctx, f.ID)
		if err == nil && (cur.Worker != f.Worker || cur.Attempts != f.Attempts) {
			return errLost
		}
		return nil
	}
}

// RunWorkers runs cfg.Workers fit workers without the API (`concord
// worker`) until ctx is done, then stops them gracefully (see
// Config.ShutdownGrace). The configuration's API settings are not used.
func RunWorkers(ctx context.Context, cfg Config, store annotations.Store, log *slog.Logger) error {
	if cfg.Workers <= 0 {
		return annotations.Errorf(annotations.EINVALID, "a worker needs a concurrency of 1 or more, got %d", cfg.Workers)
	}
	if cfg.AdminToken == "" {
		cfg.AdminToken = RandomToken() // no API: never used
	}
	s, err := New(cfg, store, log)
	if err != nil {
		return err
	}
	return s.pool.run(ctx)
}

// sweepCount counts one fit's Gibbs sweeps in concord_fit_sweeps_total: as
// the fit progresses when its stored settings fix their number (total),
// and what is left when it is done from the settings the fit ran with (the
// chain lengths that depend on the kernel the data chose, which the stored
// settings leave open). Fits by EP, Laplace or variational Bayes run no
// sweeps and count none. The chains of a fit that ran as jobs of their own
// (Config.FanOutChains) are counted, all of them, when the attempt that
// combines them is done (total 0).
type sweepCount struct {
	counter prometheus.Counter
	total   float64 // known before the fit; 0: not known (or not Gibbs)
	frac    float64 // the fraction of total counted
	counted float64
}

// progress counts the sweeps of the fit's progress up to frac.
func (c *sweepCount) progress(frac float64) {
	if c.total <= 0 || frac <= c.frac {
		return
	}
	n := (frac - c.frac) * c.total
	c.counter.Add(n)
	c.counted += n
	c.frac = frac
}

// done counts the sweeps of the finished fit res not counted yet.
func (c *sweepCount) done(res *multirater.FitResult) {
	if res == nil {
		return
	}
	m := res.Model
	if rest := chainSweeps(m.Engine, m.Chains, m.Burnin, m.Samples, m.Thin) - c.counted; rest > 0 {
		c.counter.Add(rest)
	}
}

// gibbsSweeps is the number of sweeps of all chains of a Gibbs fit whose
// settings full (WithDefaultsExceptKernel) fix it; 0 for other engines and
// when the chain lengths wait for the kernel the data choose.
func gibbsSweeps(full analysis.FitSpec) float64 {
	if full.Samples <= 0 || full.Burnin == 0 {
		return 0
	}
	return chainSweeps(full.Engine, full.Chains, full.Burnin, full.Samples, full.Thin)
}

// chainSweeps is the number of sweeps of all chains of a fit by engine
// (analysis.ProjectedWork's count; 0 unless Gibbs).
func chainSweeps(engine string, chains, burnin, samples, thin int) float64 {
	spec := analysis.FitSpec{Engine: engine, Chains: chains, Burnin: burnin, Samples: samples, Thin: thin}
	return float64(analysis.ProjectedWork(spec, 0, 0).Sweeps)
}
