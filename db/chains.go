package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"gorm.io/gorm"

	"concord/annotations"
)

// A Gibbs fit's chains as jobs (the fan-out, our code on open-source
// River, which has no workflows).
//
// When the runner is an annotations.ChainRunner that answers ChainJobs(f)
// = n >= 2, the worker that takes the fit's job does not run the fit: in
// one transaction it stores n rows of fit_chains, inserts n jobs of kind
// "fit_chain" (one chain each, the fit job's priority) and completes the
// fit's job (River's JobCompleteTx). Any worker takes a chain job, runs its
// chain (RunChains) and, in one transaction, stores the chain's output,
// completes its job and, when it is the last chain to finish (the fit's
// row is locked first, so two chains finishing together cannot both miss
// it), inserts the job of kind "fit_combine", which summarises the outputs
// (CombineChains) and records the fit's end.
//
// The fit stays running from the fan-out to the combine; its progress is
// the chains' mean (each chain job writes its own and the mean in one
// transaction), its ETA the longest of the running chains', its R-hat the
// worst of the chains' own. A cancel cancels every chain job and the
// fit at once; running chains stop at their next progress write. A chain
// whose worker died is retried (liveness, as fit jobs) by another worker,
// from its start: seeded as chain c of the fit, it gives the same draws.
// A chain that fails on the data fails the fit.

// Kinds of the jobs of a fanned-out fit.
const (
	chainKind   = "fit_chain"
	combineKind = "fit_combine"
)

// chainArgs are the arguments of a chain job.
type chainArgs struct {
	FitID     int64 `json:"fit_id"`
	ProjectID int64 `json:"project_id"`
	Chain     int   `json:"chain"`
}

func (chainArgs) Kind() string { return chainKind }

// combineArgs are the arguments of a combine job.
type combineArgs struct {
	FitID     int64 `json:"fit_id"`
	ProjectID int64 `json:"project_id"`
}

func (combineArgs) Kind() string { return combineKind }

// Chain states in fit_chains.
const (
	chainQueued  = "queued"
	chainRunning = "running"
	chainDone    = "done"
)

// chainRow is a row of fit_chains (without its output).
type chainRow struct {
	FitID           int64
	Chain           int
	JobID           int64
	State           string
	Worker          string
	Attempts        int
	Progress        float64
	EtaSeconds      float64
	MaxRhat         float64
	SamplingSeconds float64
	StartedAt       *time.Time
	FinishedAt      *time.Time
}

const chainColumns = "fit_id, chain, job_id, state, worker, attempts, progress, eta_seconds, max_rhat, sampling_seconds, started_at, finished_at"

func (r chainRow) chain() annotations.FitChain {
	return annotations.FitChain{Chain: r.Chain, State: r.State, Worker: r.Worker, Attempts: r.Attempts, JobID: r.JobID,
		Progress: r.Progress, StartedAt: utcPtr(r.StartedAt), FinishedAt: utcPtr(r.FinishedAt)}
}

// fitChains reads the chain rows of fit id in tx, by chain.
func fitChains(tx *gorm.DB, id int64) ([]chainRow, error) {
	var rows []chainRow
	err := tx.Raw("SELECT "+chainColumns+" FROM fit_chains WHERE fit_id = ? ORDER BY chain", id).Scan(&rows).Error
	return rows, err
}

// lockFit locks fit id's row until the end of tx on PostgreSQL (SQLite's
// writer runs one transaction at a time).
func (d *DB) lockFit(tx *gorm.DB, id int64) error {
	if d.dialect != postgresDialect {
		return nil
	}
	return tx.Exec("SELECT id FROM fits WHERE id = ? FOR UPDATE", id).Error
}

// completeTx completes a running job in tx (River's JobCompleteTx).
func completeTx[T river.JobArgs](ctx context.Context, tx *gorm.DB, job *river.Job[T]) error {
	stx, err := sqlTx(tx)
	if err != nil {
		return err
	}
	_, err = river.JobCompleteTx[riverdriver.Driver[*sql.Tx]](ctx, stx, job)
	return err
}

// fanOut turns the running fit f, whose fit job is job, into n chain jobs
// and completes the fit job, in one transaction.
func (d *DB) fanOut(ctx context.Context, job *river.Job[fitArgs], f *annotations.Fit, n int) error {
	return d.write(ctx, func(tx *gorm.DB) error {
		if err := d.lockFit(tx, f.ID); err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM fit_chains WHERE fit_id = ?", f.ID).Error; err != nil {
			return err
		}
		stx, err := sqlTx(tx)
		if err != nil {
			return err
		}
		for c := 0; c < n; c++ {
			res, err := d.jobs.client.InsertTx(ctx, stx, chainArgs{FitID: f.ID, ProjectID: f.ProjectID, Chain: c},
				&river.InsertOpts{Queue: fitQueue, Priority: job.Priority, MaxAttempts: fitJobMaxAttempts})
			if err != nil {
				return fmt.Errorf("enqueue chain %d: %w", c, err)
			}
			if err := tx.Exec("INSERT INTO fit_chains (fit_id, chain, job_id, state) VALUES (?, ?, ?, ?)",
				f.ID, c, res.Job.ID, chainQueued).Error; err != nil {
				return err
			}
		}
		if err := tx.Exec("UPDATE fits SET worker = '', message = ? WHERE id = ?",
			fmt.Sprintf("sampling: %d chains queued as jobs", n), f.ID).Error; err != nil {
			return err
		}
		return completeTx(ctx, tx, job)
	})
}

// startChain moves chain c of fit id to running by worker for attempt and
// returns the fit. A fit that is gone is ENOTFOUND, one that is not running
// (cancelled, failed) ECONFLICT.
func (d *DB) startChain(ctx context.Context, id int64, c int, worker string, attempt int) (*annotations.Fit, error) {
	var out *fitRow
	err := d.write(ctx, func(tx *gorm.DB) error {
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		if r.Status != string(annotations.FitRunning) {
			return annotations.Errorf(annotations.ECONFLICT, "fit %d is %s", id, r.Status)
		}
		res := tx.Exec(`UPDATE fit_chains SET state = ?, worker = ?, attempts = ?, progress = 0, eta_seconds = 0, max_rhat = 0,
			started_at = ?, finished_at = NULL WHERE fit_id = ? AND chain = ? AND state <> ?`,
			chainRunning, cleanText(worker), attempt, now(), id, c, chainDone)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return annotations.Errorf(annotations.ECONFLICT, "chain %d of fit %d is done or gone", c, id)
		}
		out = r
		return nil
	})
	if err != nil {
		return nil, wrap(err, "start chain %d of fit %d", c, id)
	}
	return out.fit(), nil
}

// Why a chain stops early.
var (
	// errChainLost: the chain was retried elsewhere (this worker was
	// presumed dead).
	errChainLost = errors.New("the chain was taken over by another worker")
	// errCancelRequested: the fit's cancel was requested.
	errCancelRequested = errors.New("cancel requested")
)

// chainProgress records chain c's progress (this worker's attempt) and the
// fit's: the chains' mean progress, the longest ETA of the running chains
// and the worst R-hat. It returns an error when the chain should stop: the
// fit is not running (ECONFLICT), a cancel was requested
// (errCancelRequested), the fit is gone (ENOTFOUND), or the chain was taken
// over (errChainLost).
func (d *DB) chainProgress(ctx context.Context, id int64, c int, worker string, attempt int, p annotations.FitProgress) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE fit_chains SET progress = ?, eta_seconds = ?, max_rhat = ? WHERE fit_id = ? AND chain = ? AND worker = ? AND attempts = ? AND state = ?",
			min(max(finite(p.Progress), 0), 1), finite(p.ETASeconds), finite(p.MaxRhat), id, c, cleanText(worker), attempt, chainRunning)
		if res.Error != nil {
			return res.Error
		}
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		if r.Status != string(annotations.FitRunning) {
			return annotations.Errorf(annotations.ECONFLICT, "fit %d is %s", id, r.Status)
		}
		if r.CancelRequested {
			return errCancelRequested
		}
		if res.RowsAffected == 0 {
			return errChainLost
		}
		return d.aggregateProgress(tx, r, "sampling")
	})
	return wrap(err, "progress of chain %d of fit %d", c, id)
}

// aggregateProgress writes fit r's progress from its chains': the mean of
// the chains' fractions (of 0.97: the combine is the rest), the longest ETA
// of the running chains, the worst R-hat, and a message saying how many
// chains are done, running and queued on how many workers.
func (d *DB) aggregateProgress(tx *gorm.DB, r *fitRow, phase string) error {
	rows, err := fitChains(tx, r.ID)
	if err != nil || len(rows) == 0 {
		return err
	}
	var sum, eta, rhat float64
	var done, running, queued int
	workers := map[string]bool{}
	for _, c := range rows {
		switch c.State {
		case chainDone:
			sum++
			done++
		case chainRunning:
			sum += c.Progress
			eta = max(eta, c.EtaSeconds)
			running++
			workers[c.Worker] = true
		default:
			queued++
		}
		rhat = max(rhat, c.MaxRhat)
	}
	msg := fmt.Sprintf("%s: %d chains done, %d running on %d workers, %d queued", phase, done, running, len(workers), queued)
	frac := 0.97 * sum / float64(len(rows))
	// Only a running fit: on PostgreSQL a chain failing the fit may commit
	// between this transaction's read of the fit and this write, and its
	// message must stay.
	return tx.Exec("UPDATE fits SET progress = ?, eta_seconds = ?, max_rhat = ?, message = ? WHERE id = ? AND status = ?",
		frac, eta, rhat, msg, r.ID, string(annotations.FitRunning)).Error
}

// finishChain stores chain c's output, completes its job and, when every
// chain of the fit is done, enqueues the combine job: one transaction. It
// returns errChainLost when the chain is no longer this attempt's, and an
// ECONFLICT error when the fit is no longer running.
func (d *DB) finishChain(ctx context.Context, job *river.Job[chainArgs], worker string, output []byte, sampling time.Duration) error {
	a := job.Args
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := d.lockFit(tx, a.FitID); err != nil {
			return err
		}
		r, err := getFit(tx, a.FitID)
		if err != nil {
			return err
		}
		if r.Status != string(annotations.FitRunning) {
			return annotations.Errorf(annotations.ECONFLICT, "fit %d is %s", a.FitID, r.Status)
		}
		res := tx.Exec(`UPDATE fit_chains SET state = ?, progress = 1, eta_seconds = 0, output = ?, sampling_seconds = ?, finished_at = ?
			WHERE fit_id = ? AND chain = ? AND worker = ? AND attempts = ? AND state = ?`,
			chainDone, output, sampling.Seconds(), now(), a.FitID, a.Chain, cleanText(worker), job.Attempt, chainRunning)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errChainLost
		}
		if err := completeTx(ctx, tx, job); err != nil {
			return err
		}
		var left int64
		if err := tx.Raw("SELECT COUNT(*) FROM fit_chains WHERE fit_id = ? AND state <> ?", a.FitID, chainDone).Scan(&left).Error; err != nil {
			return err
		}
		if left > 0 {
			return d.aggregateProgress(tx, r, "sampling")
		}
		stx, err := sqlTx(tx)
		if err != nil {
			return err
		}
		cj, err := d.jobs.client.InsertTx(ctx, stx, combineArgs{FitID: a.FitID, ProjectID: a.ProjectID},
			&river.InsertOpts{Queue: fitQueue, Priority: job.Priority, MaxAttempts: fitJobMaxAttempts})
		if err != nil {
			return fmt.Errorf("enqueue the combine job: %w", err)
		}
		return tx.Exec("UPDATE fits SET job_id = ?, progress = 0.97, eta_seconds = 0, message = ? WHERE id = ?",
			cj.Job.ID, "combining the chains", a.FitID).Error
	})
	return wrap(err, "finish chain %d of fit %d", a.Chain, a.FitID)
}

// requeueChain puts chain c of fit id back in the queue (its job is
// retried) with the reason in the fit's message.
func (d *DB) requeueChain(ctx context.Context, id int64, c int, message string) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		return requeueChainTx(tx, id, c, message)
	})
	return wrap(err, "requeue chain %d of fit %d", c, id)
}

func requeueChainTx(tx *gorm.DB, id int64, c int, message string) error {
	if err := tx.Exec("UPDATE fit_chains SET state = ?, progress = 0, eta_seconds = 0 WHERE fit_id = ? AND chain = ? AND state = ?",
		chainQueued, id, c, chainRunning).Error; err != nil {
		return err
	}
	return tx.Exec("UPDATE fits SET message = ? WHERE id = ? AND status = ?", cleanText(message), id, string(annotations.FitRunning)).Error
}

// endFanOut moves the running fanned-out fit id to a terminal state
// (failed, cancelled) with message, and cancels its chain and combine jobs
// that have not ended; a fit that already ended is left as it is.
func (d *DB) endFanOut(ctx context.Context, id int64, status annotations.FitStatus, message string) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := d.lockFit(tx, id); err != nil {
			return err
		}
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		return d.endFanOutTx(ctx, tx, r, status, message)
	})
	return wrap(err, "end fit %d", id)
}

// endFanOutTx is endFanOut in tx for the fit r.
func (d *DB) endFanOutTx(ctx context.Context, tx *gorm.DB, r *fitRow, status annotations.FitStatus, message string) error {
	if annotations.FitStatus(r.Status).Terminal() {
		return nil
	}
	if err := d.cancelChainJobs(ctx, tx, r); err != nil {
		return err
	}
	return tx.Exec("UPDATE fits SET status = ?, message = ?, eta_seconds = 0, finished_at = ?, cancel_requested = ? WHERE id = ?",
		string(status), cleanText(message), now(), false, r.ID).Error
}

// cancelChainJobs cancels the chain jobs of fit r that are not done, and
// its combine job (r.JobID once the chains are done).
func (d *DB) cancelChainJobs(ctx context.Context, tx *gorm.DB, r *fitRow) error {
	var ids []int64
	if err := tx.Raw("SELECT job_id FROM fit_chains WHERE fit_id = ? AND state <> ?", r.ID, chainDone).Scan(&ids).Error; err != nil {
		return err
	}
	stx, err := sqlTx(tx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := d.jobs.client.JobCancelTx(ctx, stx, id); err != nil && !errors.Is(err, river.ErrNotFound) {
			return err
		}
	}
	return nil
}

// hasChains reports whether fit id has fanned out.
func hasChains(tx *gorm.DB, id int64) (bool, error) {
	var n int64
	err := tx.Raw("SELECT COUNT(*) FROM fit_chains WHERE fit_id = ?", id).Scan(&n).Error
	return n > 0, err
}

// chainOutputs reads the outputs of every chain of fit id, by chain, and
// the longest time a chain sampled; EINVALID unless every chain is done.
func (d *DB) chainOutputs(ctx context.Context, id int64) ([][]byte, time.Duration, error) {
	var outputs [][]byte
	var longest float64
	err := d.read(ctx, func(tx *gorm.DB) error {
		var rows []struct {
			Chain           int
			State           string
			SamplingSeconds float64
			Output          []byte
		}
		if err := tx.Raw("SELECT chain, state, sampling_seconds, output FROM fit_chains WHERE fit_id = ? ORDER BY chain", id).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return annotations.Errorf(annotations.EINVALID, "fit %d has no chains", id)
		}
		outputs = make([][]byte, len(rows))
		for i, r := range rows {
			if r.Chain != i || r.State != chainDone || r.Output == nil {
				return annotations.Errorf(annotations.EINVALID, "fit %d: chain %d is %s", id, r.Chain, r.State)
			}
			outputs[i] = r.Output
			longest = max(longest, r.SamplingSeconds)
		}
		return nil
	})
	if err != nil {
		return nil, 0, wrap(err, "read the chains of fit %d", id)
	}
	return outputs, time.Duration(math.Round(longest * float64(time.Second))), nil
}

// chainWorker works chain jobs.
type chainWorker struct {
	river.WorkerDefaults[chainArgs]
	d    *DB
	run  annotations.ChainRunner
	opts annotations.WorkerOptions
}

func (w *chainWorker) Work(ctx context.Context, job *river.Job[chainArgs]) error {
	d, a := w.d, job.Args
	f, err := d.startChain(ctx, a.FitID, a.Chain, w.opts.Name, job.Attempt)
	switch annotations.ErrorCode(err) {
	case "":
	case annotations.ENOTFOUND, annotations.ECONFLICT:
		return river.JobCancel(err)
	default:
		return err // the database: retried
	}
	var stop error
	outputs, sampling, err := w.run.RunChains(ctx, f, a.Chain, a.Chain+1, func(p annotations.FitProgress) error {
		perr := d.chainProgress(ctx, a.FitID, a.Chain, w.opts.Name, job.Attempt, p)
		if perr != nil && (errors.Is(perr, errChainLost) || errors.Is(perr, errCancelRequested) ||
			annotations.ErrorCode(perr) == annotations.ECONFLICT || annotations.ErrorCode(perr) == annotations.ENOTFOUND) {
			stop = perr
			return perr
		}
		if perr != nil && ctx.Err() == nil {
			d.log.Warn("writing chain progress", "fit", a.FitID, "chain", a.Chain, "err", perr)
		}
		return nil
	})
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	switch {
	case stop != nil:
		if errors.Is(stop, errCancelRequested) {
			if eerr := d.endFanOut(bg, a.FitID, annotations.FitCancelled, "cancelled by request"); eerr != nil {
				d.log.Error("cancelling a fit", "fit", a.FitID, "err", eerr)
			}
		}
		return river.JobCancel(stop)
	case err == nil:
		if len(outputs) != 1 {
			err = fmt.Errorf("chain %d of fit %d: %d outputs", a.Chain, a.FitID, len(outputs))
			break
		}
		ferr := d.finishChain(bg, job, w.opts.Name, outputs[0], sampling)
		switch {
		case ferr == nil:
			return nil
		case errors.Is(ferr, errChainLost), annotations.ErrorCode(ferr) == annotations.ECONFLICT, annotations.ErrorCode(ferr) == annotations.ENOTFOUND:
			return river.JobCancel(ferr)
		default:
			return ferr // the database: retried
		}
	}
	if errors.Is(err, annotations.ErrRetry) {
		reason := strings.TrimSuffix(err.Error(), ": "+annotations.ErrRetry.Error())
		if ctx.Err() != nil {
			// This worker shut down: back in the queue at once.
			if rerr := d.requeueChain(bg, a.FitID, a.Chain, fmt.Sprintf("chain %d re-queued: %s", a.Chain, reason)); rerr != nil {
				d.log.Error("re-queueing a chain at shutdown", "fit", a.FitID, "chain", a.Chain, "err", rerr)
			}
			return river.JobSnooze(time.Second)
		}
		if job.Attempt < w.opts.MaxAttempts {
			msg := fmt.Sprintf("chain %d: %s, re-queued, attempt %d of %d", a.Chain, reason, job.Attempt, w.opts.MaxAttempts)
			if rerr := d.requeueChain(bg, a.FitID, a.Chain, msg); rerr != nil {
				d.log.Error("re-queueing a chain", "fit", a.FitID, "chain", a.Chain, "err", rerr)
			}
			return err
		}
		msg := fmt.Sprintf("chain %d: %s on attempt %d of %d; gave up after %d attempts", a.Chain, reason, job.Attempt, w.opts.MaxAttempts, job.Attempt)
		if eerr := d.endFanOut(bg, a.FitID, annotations.FitFailed, msg); eerr != nil {
			d.log.Error("failing a fit", "fit", a.FitID, "err", eerr)
		}
		return river.JobCancel(err)
	}
	// The fit fails on its data (every chain would): fail it at once.
	if eerr := d.endFanOut(bg, a.FitID, annotations.FitFailed, annotations.ErrorMessage(err)); eerr != nil {
		d.log.Error("failing a fit", "fit", a.FitID, "err", eerr)
	}
	return river.JobCancel(err)
}

// combineWorker works combine jobs.
type combineWorker struct {
	river.WorkerDefaults[combineArgs]
	d    *DB
	run  annotations.ChainRunner
	opts annotations.WorkerOptions
}

func (w *combineWorker) Work(ctx context.Context, job *river.Job[combineArgs]) error {
	d, id := w.d, job.Args.FitID
	f, err := d.FindFitByID(ctx, id)
	switch {
	case annotations.ErrorCode(err) == annotations.ENOTFOUND:
		return river.JobCancel(err)
	case err != nil:
		return err
	case f.Status != annotations.FitRunning:
		return river.JobCancel(fmt.Errorf("fit %d is %s", id, f.Status))
	}
	outputs, sampling, err := d.chainOutputs(ctx, id)
	if err != nil {
		if annotations.ErrorCode(err) == annotations.EINVALID {
			return river.JobCancel(err)
		}
		return err
	}
	err = w.run.CombineChains(ctx, f, outputs, sampling)
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err == nil {
		// The outputs have served: the fit's result holds what is kept.
		if cerr := d.write(bg, func(tx *gorm.DB) error {
			return tx.Exec("UPDATE fit_chains SET output = NULL WHERE fit_id = ?", id).Error
		}); cerr != nil {
			d.log.Warn("clearing the chains' outputs", "fit", id, "err", cerr)
		}
		end, ferr := d.FindFitByID(bg, id)
		if ferr == nil && end.Status != annotations.FitDone {
			return river.JobCancel(fmt.Errorf("fit %d %s: %s", id, end.Status, end.Message))
		}
		return nil
	}
	if !errors.Is(err, annotations.ErrRetry) {
		return river.JobCancel(err)
	}
	if ctx.Err() != nil {
		return river.JobSnooze(time.Second)
	}
	if job.Attempt < w.opts.MaxAttempts {
		return err
	}
	reason := strings.TrimSuffix(err.Error(), ": "+annotations.ErrRetry.Error())
	msg := fmt.Sprintf("combining the chains: %s on attempt %d of %d; gave up after %d attempts", reason, job.Attempt, w.opts.MaxAttempts, job.Attempt)
	if eerr := d.endFanOut(bg, id, annotations.FitFailed, msg); eerr != nil {
		d.log.Error("failing a fit", "fit", id, "err", eerr)
	}
	return river.JobCancel(err)
}
