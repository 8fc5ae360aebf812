package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// Background fits.
//
// A pool of Config.Workers slots claims queued fits from the store
// (ClaimFit: one transaction on SQLite, SELECT ... FOR UPDATE SKIP LOCKED on
// PostgreSQL, so each fit is claimed by exactly one worker of any number of
// processes). Idle slots poll every Config.PollInterval and wake at once
// when this process queues a fit.
//
// While a fit runs, a heartbeat writes its progress (fraction, ETA, current
// max R-hat) every Config.ProgressInterval; the answer says whether a cancel
// was requested (from any process), and the fit's context is then cancelled,
// which stops the chains within a sweep. A cancel through this process stops
// the fit at once. The heartbeat also checks that the fit is still this
// worker's: if another process re-queued and re-claimed it (this process
// was presumed dead), the fit stops here.
//
// A process that dies leaves its fits "running" with a stale heartbeat.
// Every process looks for such fits at start-up and every StaleAfter/2
// (RecoverStale): they are re-queued, or failed with a reason once their
// retry budget (MaxAttempts) is spent. At start-up, fits held by a dead
// process on the same host (worker names are hostname-pid) are re-queued at
// once without waiting for their heartbeat to age.
//
// A fit whose worker process (Config.FitCommand) is killed by a signal,
// typically the kernel's OOM killer (SIGKILL), is re-queued at once with the
// reason in its message ("fit worker killed by signal 9 (killed; out of
// memory?), re-queued, attempt 1 of 3"), and failed with that reason once
// MaxAttempts attempts have been killed.
//
// Graceful shutdown stops claiming, waits up to ShutdownGrace for running
// fits to finish and puts the rest back in the queue.

// Why a running fit's context was cancelled.
var (
	errCancelled = errors.New("cancelled by request")
	errShutdown  = errors.New("the server shut down during the fit")
	errDeleted   = errors.New("the fit or its project was deleted")
	errLost      = errors.New("the fit was taken over by another worker")
)

type pool struct {
	s      *Server
	wakeCh chan struct{}

	mu   sync.Mutex
	jobs map[int64]*job
}

type job struct {
	fit    *annotations.Fit
	cancel context.CancelCauseFunc
}

func newPool(s *Server) *pool {
	return &pool{s: s, wakeCh: make(chan struct{}, 1), jobs: map[int64]*job{}}
}

// wake makes idle workers look for queued fits now.
func (p *pool) wake() {
	select {
	case p.wakeCh <- struct{}{}:
	default:
	}
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

// run claims and runs fits until ctx is done, then shuts down gracefully.
func (p *pool) run(ctx context.Context) {
	cfg := p.s.cfg
	jobsCtx, stopJobs := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopJobs(nil)
	var jobs, sweeper sync.WaitGroup
	sweeper.Go(func() { p.sweepStale(ctx) })

	if cfg.Workers > 0 {
		slots := make(chan struct{}, cfg.Workers)
		ticker := time.NewTicker(cfg.PollInterval)
		defer ticker.Stop()
	loop:
		for {
		claim:
			for ctx.Err() == nil {
				select {
				case slots <- struct{}{}:
				default:
					break claim // every slot is busy
				}
				f, err := p.s.store.ClaimFit(ctx, cfg.WorkerName)
				if err != nil || f == nil {
					<-slots
					if err != nil && ctx.Err() == nil {
						p.s.log.Warn("claiming a fit", "err", err)
					}
					break
				}
				jobs.Go(func() {
					defer func() {
						<-slots
						p.wake()
					}()
					p.execute(jobsCtx, f)
				})
			}
			select {
			case <-ctx.Done():
				break loop
			case <-p.wakeCh:
			case <-ticker.C:
			}
		}
	} else {
		<-ctx.Done()
	}

	// Shutdown: let running fits finish within the grace period, then stop
	// them; execute re-queues a fit stopped by errShutdown.
	done := make(chan struct{})
	go func() {
		jobs.Wait()
		close(done)
	}()
	if ids := p.running(); len(ids) > 0 {
		p.s.log.Info("waiting for running fits", "fits", ids, "grace", cfg.ShutdownGrace)
	}
	timer := time.NewTimer(cfg.ShutdownGrace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		stopJobs(errShutdown)
		<-done
	}
	sweeper.Wait()
}

// sweepStale re-queues (or fails) fits whose worker died: at start-up,
// then every StaleAfter/2.
func (p *pool) sweepStale(ctx context.Context) {
	cfg := p.s.cfg
	p.recoverDeadLocal(ctx)
	t := time.NewTicker(max(cfg.StaleAfter/2, 100*time.Millisecond))
	defer t.Stop()
	for {
		requeued, failed, err := p.s.store.RecoverStale(ctx, cfg.StaleAfter, cfg.MaxAttempts)
		switch {
		case err != nil && ctx.Err() == nil:
			p.s.log.Warn("recovering stale fits", "err", err)
		case requeued+failed > 0:
			p.s.log.Info("recovered fits of a dead worker", "requeued", requeued, "failed", failed)
			if requeued > 0 {
				p.wake()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// recoverDeadLocal re-queues, at start-up, the running fits held by
// processes of this host that no longer exist (a crash or kill -9 of a
// previous `concord serve`), without waiting for their heartbeat to go
// stale. It applies only with the default worker names (hostname-pid).
func (p *pool) recoverDeadLocal(ctx context.Context) {
	host, ok := strings.CutSuffix(p.s.cfg.WorkerName, "-"+strconv.Itoa(selfPID()))
	if !ok || !p.s.defaultWorkerName {
		return
	}
	projects, err := p.s.store.ListProjects(ctx)
	if err != nil {
		p.s.log.Warn("looking for fits of dead workers", "err", err)
		return
	}
	for _, pr := range projects {
		fits, err := p.s.store.ListFits(ctx, pr.ID)
		if err != nil {
			continue
		}
		for _, f := range fits {
			if f.Status != annotations.FitRunning {
				continue
			}
			pidText, ok := strings.CutPrefix(f.Worker, host+"-")
			pid, err := strconv.Atoi(pidText)
			if !ok || err != nil || pid == selfPID() || processAlive(pid) {
				continue
			}
			if f.Attempts >= p.s.cfg.MaxAttempts {
				// RecoverStale fails it with the reason once stale.
				continue
			}
			msg := fmt.Sprintf("re-queued: worker %q exited during the fit (attempt %d)", f.Worker, f.Attempts)
			if err := p.s.store.Requeue(ctx, f.ID, msg); err != nil {
				p.s.log.Warn("re-queueing a fit of a dead worker", "fit", f.ID, "err", err)
				continue
			}
			p.s.log.Info("re-queued a fit of a dead worker", "fit", f.ID, "project", f.ProjectID, "worker", f.Worker)
			p.wake()
		}
	}
}

func selfPID() int { return os.Getpid() }

// execute runs one claimed fit to its end: done, failed, cancelled, or back
// in the queue (shutdown).
func (p *pool) execute(jobsCtx context.Context, f *annotations.Fit) {
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
	log.Info("fit started")

	var spec analysis.FitSpec
	specErr := json.Unmarshal(f.Spec, &spec)
	sweeps := float64(0)
	if specErr == nil {
		full := spec.WithDefaults()
		sweeps = float64(full.Chains) * float64(max(full.Burnin, 0)+full.Samples*full.Thin)
	}

	var latest atomic.Pointer[multirater.Progress]
	latest.Store(&multirater.Progress{Phase: "loading the data"})
	hbStop := make(chan struct{})
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		p.heartbeat(ctx, f, &latest, cancel, sweeps, hbStop)
	}()

	var res *multirater.FitResult
	err := specErr
	if err == nil {
		res, err = p.fit(ctx, f, spec, func(pr multirater.Progress) { latest.Store(&pr) })
	} else {
		err = annotations.Errorf(annotations.EINVALID, "the stored fit settings cannot be read: %v", err)
	}
	close(hbStop)
	<-hbDone

	// The fit's own context may be cancelled: finish with a fresh one.
	bg, cancelBg := context.WithTimeout(context.WithoutCancel(jobsCtx), 30*time.Second)
	defer cancelBg()
	elapsed := time.Since(start)
	cause := context.Cause(ctx)
	if err == nil {
		cause = nil
	}
	state := ""
	var killed *workerKilledError
	switch {
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
		p.finish(bg, log, f, annotations.FitDone, msg, raw)
		s.metrics.sweepRate.Set(res.Diagnostics.SweepsPerSecond)
	case errors.Is(cause, errCancelled):
		state = string(annotations.FitCancelled)
		p.finish(bg, log, f, annotations.FitCancelled, "cancelled by request", nil)
	case errors.Is(cause, errShutdown):
		state = "requeued"
		if rerr := s.store.Requeue(bg, f.ID, "re-queued: "+errShutdown.Error()); rerr != nil {
			log.Error("re-queueing a fit at shutdown", "err", rerr)
		} else {
			log.Info("fit re-queued at shutdown")
		}
	case errors.Is(cause, errDeleted), errors.Is(cause, errLost):
		state = "abandoned"
		log.Info("fit stopped", "reason", cause.Error())
	case errors.As(err, &killed) && f.Attempts < s.cfg.MaxAttempts:
		state = "requeued"
		msg := killed.requeueMessage(f.Attempts, s.cfg.MaxAttempts)
		log.Warn("fit worker killed; fit re-queued", "err", err, "max_attempts", s.cfg.MaxAttempts)
		if rerr := s.store.Requeue(bg, f.ID, msg); rerr != nil {
			log.Error("re-queueing a fit whose worker was killed", "err", rerr)
		}
	case errors.As(err, &killed):
		state = string(annotations.FitFailed)
		log.Error("fit worker killed on the last attempt", "err", err)
		p.finish(bg, log, f, annotations.FitFailed, killed.failMessage(f.Attempts), nil)
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
}

func (p *pool) finish(ctx context.Context, log *slog.Logger, f *annotations.Fit, st annotations.FitStatus, msg string, result []byte) {
	if err := p.s.store.FinishFit(ctx, f.ID, st, msg, result); err != nil {
		log.Error("recording the end of a fit", "state", st, "err", err)
	}
}

// fit loads the project's data and runs the model, turning a panic into an
// internal error.
func (p *pool) fit(ctx context.Context, f *annotations.Fit, spec analysis.FitSpec, progress func(multirater.Progress)) (res *multirater.FitResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.s.log.Error("panic during a fit", "fit", f.ID, "panic", r, "stack", stack())
			res, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	ds, err := p.s.store.Dataset(ctx, f.ProjectID)
	if err != nil {
		return nil, err
	}
	progress(multirater.Progress{Phase: "starting"})
	if len(p.s.cfg.FitCommand) > 0 {
		return p.fitInChild(ctx, f, spec, ds, progress)
	}
	return analysis.Fit(ctx, ds, spec, progress)
}

// heartbeat writes the fit's latest progress every ProgressInterval until
// stop is closed, and cancels the fit when a cancel was requested, the fit
// was deleted or another worker took it over.
func (p *pool) heartbeat(ctx context.Context, f *annotations.Fit, latest *atomic.Pointer[multirater.Progress], cancel context.CancelCauseFunc, sweeps float64, stop <-chan struct{}) {
	s := p.s
	t := time.NewTicker(s.cfg.ProgressInterval)
	defer t.Stop()
	lastFrac := 0.0
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pr := *latest.Load()
		frac := min(max(pr.Fraction, 0), 1)
		if frac > lastFrac {
			s.metrics.sweeps.Add((frac - lastFrac) * sweeps)
			lastFrac = frac
		}
		msg := pr.Phase
		wctx, cancelW := context.WithTimeout(ctx, 5*time.Second)
		cancelReq, err := s.store.UpdateFitProgress(wctx, f.ID, annotations.FitProgress{
			Progress: frac, ETASeconds: pr.ETA.Seconds(), MaxRhat: pr.MaxRhat, Message: msg,
		})
		cancelW()
		switch code := annotations.ErrorCode(err); {
		case err == nil && cancelReq:
			cancel(errCancelled)
			return
		case code == annotations.ENOTFOUND:
			cancel(errDeleted)
			return
		case code == annotations.EINVALID:
			// No longer running: re-queued by a process that presumed this
			// one dead.
			cancel(errLost)
			return
		case err != nil:
			if ctx.Err() == nil {
				s.log.Warn("writing fit progress", "fit", f.ID, "err", err)
			}
			continue
		}
		// Still ours? Another process may have re-queued and re-claimed it.
		cur, err := s.store.FindFitByID(ctx, f.ID)
		if err == nil && (cur.Worker != f.Worker || cur.Attempts != f.Attempts) {
			cancel(errLost)
			return
		}
	}
}
