package db

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"gorm.io/gorm"

	"concord/annotations"
)

// A Gibbs fit's chains as jobs (the fan-out, our code on open-source
// River, which has no workflows): the parts of fanout.go, chainGroup.
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

// chainArgs are the arguments of a chain job. With Plan, the job runs a
// start of an EP or Laplace fit's evidence maximisation instead (part
// Chain of the restarts Plan planned: annotations.RestartRunner), the
// parts and rows the same.
type chainArgs struct {
	FitID     int64  `json:"fit_id"`
	ProjectID int64  `json:"project_id"`
	Chain     int    `json:"chain"`
	Plan      []byte `json:"plan,omitempty"`
}

func (chainArgs) Kind() string { return chainKind }

// combineArgs are the arguments of a combine job; Plan the restarts' plan
// (outputs[0] of the combine) of a fit whose restarts ran as jobs.
type combineArgs struct {
	FitID     int64  `json:"fit_id"`
	ProjectID int64  `json:"project_id"`
	Plan      []byte `json:"plan,omitempty"`
}

func (combineArgs) Kind() string { return combineKind }

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

// fanOut turns the running fit f, whose fit job is job, into n chain jobs
// (with plan, n jobs of the restarts it planned) and completes the fit
// job, in one transaction.
func (d *DB) fanOut(ctx context.Context, job *river.Job[fitArgs], f *annotations.Fit, n int, plan []byte) error {
	g := &chainGroup
	return d.write(ctx, func(tx *gorm.DB) error {
		if err := d.lockParent(tx, g, f.ID); err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM fit_chains WHERE fit_id = ?", f.ID).Error; err != nil {
			return err
		}
		if err := d.insertParts(ctx, tx, g, f.ID, n, func(c int) river.JobArgs {
			return chainArgs{FitID: f.ID, ProjectID: f.ProjectID, Chain: c, Plan: plan}
		}, &river.InsertOpts{Queue: fitQueue, Priority: job.Priority, MaxAttempts: fitJobMaxAttempts}); err != nil {
			return err
		}
		set, args := "message = ?", []any{fmt.Sprintf("sampling: %d chains queued as jobs", n)}
		if plan != nil {
			// Start 1 ran in the fit's job: its share is done.
			set, args = "message = ?, progress = ?", []any{fmt.Sprintf("maximising the evidence: start 1 done, the %d later starts queued as jobs", n), restartsFraction(0, n)}
		}
		if err := tx.Exec("UPDATE fits SET worker = '', "+set+" WHERE id = ?", append(args, f.ID)...).Error; err != nil {
			return err
		}
		return completeTx(ctx, tx, job)
	})
}

// runningFit reads fit id in tx: ENOTFOUND when it is gone, ECONFLICT when
// it is not running (cancelled, failed).
func runningFit(tx *gorm.DB, id int64) (*fitRow, error) { return running(tx, id, getFit, "fit") }

// jobRow is a row of a table of jobs (fits, evals, agreements, exports).
type jobRow interface{ status() string }

func (r *fitRow) status() string       { return r.Status }
func (r *evalRow) status() string      { return r.Status }
func (r *agreementRow) status() string { return r.Status }
func (r *exportRow) status() string    { return r.Status }

// running reads row id (what, in messages) with get: get's error when it
// is gone (ENOTFOUND), ECONFLICT when it is not running.
func running[R jobRow](tx *gorm.DB, id int64, get func(*gorm.DB, int64) (R, error), what string) (R, error) {
	r, err := get(tx, id)
	if err == nil && r.status() != string(annotations.FitRunning) {
		err = annotations.Errorf(annotations.ECONFLICT, "%s %d is %s", what, id, r.status())
	}
	if err != nil {
		var none R
		return none, err
	}
	return r, nil
}

// startChain moves chain c of fit id to running by worker for attempt and
// returns the fit. A fit that is gone is ENOTFOUND, one that is not running
// (cancelled, failed) ECONFLICT.
func (d *DB) startChain(ctx context.Context, id int64, c int, worker string, attempt int) (*annotations.Fit, error) {
	var out *fitRow
	err := d.write(ctx, func(tx *gorm.DB) error {
		r, err := runningFit(tx, id)
		if err != nil {
			return err
		}
		out = r
		return startPart(tx, &chainGroup, id, c, worker, attempt, ", eta_seconds = 0, max_rhat = 0, started_at = ?, finished_at = NULL", now())
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
func (d *DB) chainProgress(ctx context.Context, id int64, c int, worker string, attempt int, p annotations.FitProgress, restarts bool) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		mine, err := partProgress(tx, &chainGroup, id, c, worker, attempt, p.Progress, ", eta_seconds = ?, max_rhat = ?", finite(p.ETASeconds), finite(p.MaxRhat))
		if err != nil {
			return err
		}
		r, err := runningFit(tx, id)
		if err != nil {
			return err
		}
		if r.CancelRequested {
			return errCancelRequested
		}
		if !mine {
			return errChainLost
		}
		return aggregateProgress(tx, r, restarts)
	})
	return wrap(err, "progress of chain %d of fit %d", c, id)
}

// aggregateProgress writes fit r's progress from its chains': the mean of
// the chains' fractions (of 0.97: the combine is the rest), the longest ETA
// of the running chains, the worst R-hat, and a message saying how many
// chains (the later starts of the evidence maximisation, with restarts)
// are done, running and queued on how many workers.
func aggregateProgress(tx *gorm.DB, r *fitRow, restarts bool) error {
	t, err := tallyParts(tx, &chainGroup, r.ID)
	if err != nil || t.parts == 0 {
		return err
	}
	var most struct{ Eta, Rhat float64 }
	if err := tx.Raw("SELECT COALESCE(MAX(CASE WHEN state = ? THEN eta_seconds ELSE 0 END), 0) AS eta, COALESCE(MAX(max_rhat), 0) AS rhat FROM fit_chains WHERE fit_id = ?",
		partRunning, r.ID).Scan(&most).Error; err != nil {
		return err
	}
	what, frac := "sampling: %d chains done, %d running on %d workers, %d queued", t.fraction(0.97)
	if restarts {
		what = "maximising the evidence: %d later starts done, %d running on %d workers, %d queued"
		frac = restartsFraction(t.sum, t.parts)
	}
	msg := fmt.Sprintf(what, t.done, t.running, t.workers, t.queued)
	// Only a running fit: on PostgreSQL a chain failing the fit may commit
	// between this transaction's read of the fit and this write, and its
	// message must stay.
	return tx.Exec("UPDATE fits SET progress = ?, eta_seconds = ?, max_rhat = ?, message = ? WHERE id = ? AND status = ?",
		frac, most.Eta, most.Rhat, msg, r.ID, string(annotations.FitRunning)).Error
}

// restartsFraction is the progress of a fit whose n later starts have done
// sum between them (1 a start done): start 1, which ran before them, and
// theirs, of 0.97 (the combine is the rest).
func restartsFraction(sum float64, n int) float64 {
	return 0.97 * (1 + sum) / float64(n+1)
}

// finishChain stores chain c's output, completes its job and, when every
// chain of the fit is done, enqueues the combine job: one transaction. It
// returns errChainLost when the chain is no longer this attempt's, and an
// ECONFLICT error when the fit is no longer running.
func (d *DB) finishChain(ctx context.Context, job *river.Job[chainArgs], worker string, output []byte, sampling annotations.SamplingTime) error {
	a := job.Args
	g := &chainGroup
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := d.lockParent(tx, g, a.FitID); err != nil {
			return err
		}
		r, err := runningFit(tx, a.FitID)
		if err != nil {
			return err
		}
		left, err := finishPart(ctx, tx, g, job, a.FitID, a.Chain, worker, output, ", eta_seconds = 0, sampling_seconds = ?, sampling_cpu_seconds = ?, finished_at = ?",
			sampling.Wall.Seconds(), sampling.CPU.Seconds(), now())
		if err != nil {
			return err
		}
		if left > 0 {
			return aggregateProgress(tx, r, a.Plan != nil)
		}
		cj, err := d.enqueueCombine(ctx, tx, combineArgs{FitID: a.FitID, ProjectID: a.ProjectID, Plan: a.Plan},
			&river.InsertOpts{Queue: fitQueue, Priority: job.Priority, MaxAttempts: fitJobMaxAttempts})
		if err != nil {
			return err
		}
		msg := "combining the chains"
		if a.Plan != nil {
			msg = "combining the starts of the evidence maximisation"
		}
		return tx.Exec("UPDATE fits SET job_id = ?, progress = 0.97, eta_seconds = 0, message = ? WHERE id = ?",
			cj, msg, a.FitID).Error
	})
	return wrap(err, "finish chain %d of fit %d", a.Chain, a.FitID)
}

// endFanOut moves the running fanned-out fit id to a terminal state
// (failed, cancelled) with message, and cancels its chain and combine jobs
// that have not ended; a fit that already ended is left as it is.
func (d *DB) endFanOut(ctx context.Context, id int64, status annotations.FitStatus, message string) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := d.lockParent(tx, &chainGroup, id); err != nil {
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
	if err := d.cancelParts(ctx, tx, &chainGroup, r.ID); err != nil {
		return err
	}
	return tx.Exec("UPDATE fits SET status = ?, message = ?, eta_seconds = 0, finished_at = ?, cancel_requested = ? WHERE id = ?",
		string(status), cleanText(message), now(), false, r.ID).Error
}

// hasChains reports whether fit id has fanned out.
func hasChains(tx *gorm.DB, id int64) (bool, error) {
	var n int64
	err := tx.Raw("SELECT COUNT(*) FROM fit_chains WHERE fit_id = ?", id).Scan(&n).Error
	return n > 0, err
}

// chainOutputs reads the outputs of every chain of fit id, by chain, and
// how long they sampled: the longest time a chain did and the CPU time of
// all (0 when a chain's is not known); EINVALID unless every chain is
// done.
func (d *DB) chainOutputs(ctx context.Context, id int64) ([][]byte, annotations.SamplingTime, error) {
	var outputs [][]byte
	var t struct {
		Longest, CPU float64
		Unknown      int64
	}
	err := d.read(ctx, func(tx *gorm.DB) error {
		var err error
		if outputs, err = partOutputs(tx, &chainGroup, id); err != nil {
			return err
		}
		return tx.Raw(`SELECT COALESCE(MAX(sampling_seconds), 0) AS longest, COALESCE(SUM(sampling_cpu_seconds), 0) AS cpu,
			COUNT(CASE WHEN sampling_cpu_seconds <= 0 THEN 1 END) AS unknown FROM fit_chains WHERE fit_id = ?`, id).Scan(&t).Error
	})
	if err != nil {
		return nil, annotations.SamplingTime{}, wrap(err, "read the chains of fit %d", id)
	}
	if t.Unknown > 0 {
		t.CPU = 0
	}
	return outputs, annotations.SamplingTime{Wall: durationOf(t.Longest), CPU: durationOf(t.CPU)}, nil
}

// durationOf is s seconds, to the nanosecond.
func durationOf(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// workChain works chain jobs.
func workChain(ctx context.Context, w *jobWorker[chainArgs, annotations.ChainRunner], job *river.Job[chainArgs]) error {
	d, a := w.d, job.Args
	var f *annotations.Fit
	var sampling annotations.SamplingTime
	return workPart(ctx, d, job, w.opts, partSteps{
		name: fmt.Sprintf("chain %d", a.Chain),
		start: func(ctx context.Context) (err error) {
			f, err = d.startChain(ctx, a.FitID, a.Chain, w.opts.Name, job.Attempt)
			return err
		},
		run: func(ctx context.Context, stop func(error) error) ([]byte, error) {
			report := func(p annotations.FitProgress) error {
				return stop(d.chainProgress(ctx, a.FitID, a.Chain, w.opts.Name, job.Attempt, p, a.Plan != nil))
			}
			if a.Plan != nil {
				rr, ok := w.run.(annotations.RestartRunner)
				if !ok {
					return nil, fmt.Errorf("start %d of fit %d: this worker cannot run starts of an evidence maximisation", a.Chain+2, a.FitID)
				}
				return rr.RunRestart(ctx, f, a.Plan, a.Chain, report)
			}
			outputs, s, err := w.run.RunChains(ctx, f, a.Chain, a.Chain+1, report)
			if err == nil && len(outputs) != 1 {
				err = fmt.Errorf("chain %d of fit %d: %d outputs", a.Chain, a.FitID, len(outputs))
			}
			if err != nil {
				return nil, err
			}
			sampling = s
			return outputs[0], nil
		},
		finish: func(ctx context.Context, output []byte) error {
			return d.finishChain(ctx, job, w.opts.Name, output, sampling)
		},
		group: &chainGroup, parent: a.FitID, part: a.Chain,
		end: func(ctx context.Context, status annotations.FitStatus, message string) error {
			return d.endFanOut(ctx, a.FitID, status, message)
		},
	})
}

// workCombine works combine jobs.
func workCombine(ctx context.Context, w *jobWorker[combineArgs, annotations.ChainRunner], job *river.Job[combineArgs]) error {
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
	if plan := job.Args.Plan; plan != nil {
		outputs = append([][]byte{plan}, outputs...)
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
