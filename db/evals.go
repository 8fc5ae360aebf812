package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"gorm.io/gorm"

	"concord/annotations"
)

// Evaluations whose folds are jobs (concord eval --db DSN --jobs): the
// command stores the evaluation and one job per fold (kind "eval_fold") in
// one transaction; any worker takes a fold, and the fold that completes
// last stores its output, completes its job and enqueues the combine job
// (kind "eval_combine") in one transaction, as a fit's chains do (see
// chains.go). The combine stores the result in the evaluation's row, where
// the command that waits for it reads it.

// Kinds of evaluation jobs.
const (
	evalFoldKind    = "eval_fold"
	evalCombineKind = "eval_combine"
)

type evalFoldArgs struct {
	EvalID    int64 `json:"eval_id"`
	ProjectID int64 `json:"project_id"`
	Fold      int   `json:"fold"`
}

func (evalFoldArgs) Kind() string { return evalFoldKind }

type evalCombineArgs struct {
	EvalID    int64 `json:"eval_id"`
	ProjectID int64 `json:"project_id"`
}

func (evalCombineArgs) Kind() string { return evalCombineKind }

type evalRow struct {
	ID         int64
	ProjectID  int64
	Spec       string
	Folds      int
	Status     string
	Progress   float64
	Message    string
	JobID      int64
	CreatedAt  time.Time
	FinishedAt *time.Time
}

const evalColumns = "id, project_id, spec, folds, status, progress, message, job_id, created_at, finished_at"

func getEval(tx *gorm.DB, id int64) (*evalRow, error) {
	var r evalRow
	err := tx.Raw("SELECT "+evalColumns+" FROM evals WHERE id = ?", id).Scan(&r).Error
	if err != nil {
		return nil, fmt.Errorf("read evaluation %d: %w", id, err)
	}
	if r.ID == 0 {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "evaluation %d not found", id)
	}
	return &r, nil
}

func (r *evalRow) eval() *annotations.Eval {
	return &annotations.Eval{ID: r.ID, ProjectID: r.ProjectID, Spec: []byte(r.Spec), Folds: r.Folds, Status: annotations.FitStatus(r.Status),
		Progress: r.Progress, Message: r.Message, CreatedAt: utc(r.CreatedAt), FinishedAt: utcPtr(r.FinishedAt)}
}

// CreateEval stores a running evaluation and one job per fold, in one
// transaction.
func (d *DB) CreateEval(ctx context.Context, e *annotations.Eval) error {
	if e.Folds < 2 {
		return annotations.Errorf(annotations.EINVALID, "an evaluation needs 2 folds or more, got %d", e.Folds)
	}
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := projectExists(tx, e.ProjectID); err != nil {
			return err
		}
		t := now()
		if d.dialect == postgresDialect {
			if err := tx.Raw("INSERT INTO evals (project_id, spec, folds, status, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
				e.ProjectID, string(e.Spec), e.Folds, string(annotations.FitRunning), t).Scan(&e.ID).Error; err != nil {
				return err
			}
		} else {
			res := tx.Exec("INSERT INTO evals (project_id, spec, folds, status, created_at) VALUES (?, ?, ?, ?, ?)",
				e.ProjectID, string(e.Spec), e.Folds, string(annotations.FitRunning), t)
			if res.Error != nil {
				return res.Error
			}
			if err := tx.Raw("SELECT last_insert_rowid()").Scan(&e.ID).Error; err != nil {
				return err
			}
		}
		stx, err := sqlTx(tx)
		if err != nil {
			return err
		}
		for f := 0; f < e.Folds; f++ {
			res, err := d.jobs.client.InsertTx(ctx, stx, evalFoldArgs{EvalID: e.ID, ProjectID: e.ProjectID, Fold: f},
				&river.InsertOpts{Queue: fitQueue, MaxAttempts: fitJobMaxAttempts})
			if err != nil {
				return fmt.Errorf("enqueue fold %d: %w", f, err)
			}
			if err := tx.Exec("INSERT INTO eval_folds (eval_id, fold, job_id, state) VALUES (?, ?, ?, ?)", e.ID, f, res.Job.ID, chainQueued).Error; err != nil {
				return err
			}
		}
		e.Status, e.CreatedAt = annotations.FitRunning, t
		return nil
	})
	return wrap(err, "create evaluation")
}

// FindEval returns an evaluation with its folds and its result.
func (d *DB) FindEval(ctx context.Context, id int64) (*annotations.Eval, error) {
	var out *annotations.Eval
	err := d.read(ctx, func(tx *gorm.DB) error {
		r, err := getEval(tx, id)
		if err != nil {
			return err
		}
		out = r.eval()
		if err := tx.Raw("SELECT fold, state, worker, attempts, job_id, progress FROM eval_folds WHERE eval_id = ? ORDER BY fold", id).Scan(&out.FoldJobs).Error; err != nil {
			return err
		}
		var res []struct{ Result []byte }
		if err := tx.Raw("SELECT result FROM evals WHERE id = ?", id).Scan(&res).Error; err != nil {
			return err
		}
		if len(res) == 1 {
			out.Result = res[0].Result
		}
		return nil
	})
	return out, wrap(err, "find evaluation %d", id)
}

// CancelEval cancels a running evaluation and its jobs.
func (d *DB) CancelEval(ctx context.Context, id int64) error {
	return d.endEval(ctx, id, annotations.FitCancelled, "cancelled by request")
}

// endEval moves a running evaluation to a terminal state and cancels its
// jobs that have not ended.
func (d *DB) endEval(ctx context.Context, id int64, status annotations.FitStatus, message string) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		return d.endEvalTx(ctx, tx, id, status, message)
	})
	return wrap(err, "end evaluation %d", id)
}

func (d *DB) endEvalTx(ctx context.Context, tx *gorm.DB, id int64, status annotations.FitStatus, message string) error {
	if d.dialect == postgresDialect {
		if err := tx.Exec("SELECT id FROM evals WHERE id = ? FOR UPDATE", id).Error; err != nil {
			return err
		}
	}
	r, err := getEval(tx, id)
	if err != nil {
		return err
	}
	if r.Status != string(annotations.FitRunning) {
		return nil
	}
	var ids []int64
	if err := tx.Raw("SELECT job_id FROM eval_folds WHERE eval_id = ? AND state <> ?", id, chainDone).Scan(&ids).Error; err != nil {
		return err
	}
	if r.JobID != 0 {
		ids = append(ids, r.JobID)
	}
	stx, err := sqlTx(tx)
	if err != nil {
		return err
	}
	for _, j := range ids {
		if _, err := d.jobs.client.JobCancelTx(ctx, stx, j); err != nil && !errors.Is(err, river.ErrNotFound) {
			return err
		}
	}
	return tx.Exec("UPDATE evals SET status = ?, message = ?, finished_at = ? WHERE id = ?", string(status), cleanText(message), now(), id).Error
}

// startFold moves fold f of evaluation id to running.
func (d *DB) startFold(ctx context.Context, id int64, f int, worker string, attempt int) (*annotations.Eval, error) {
	var out *annotations.Eval
	err := d.write(ctx, func(tx *gorm.DB) error {
		r, err := getEval(tx, id)
		if err != nil {
			return err
		}
		if r.Status != string(annotations.FitRunning) {
			return annotations.Errorf(annotations.ECONFLICT, "evaluation %d is %s", id, r.Status)
		}
		res := tx.Exec("UPDATE eval_folds SET state = ?, worker = ?, attempts = ?, progress = 0 WHERE eval_id = ? AND fold = ? AND state <> ?",
			chainRunning, cleanText(worker), attempt, id, f, chainDone)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return annotations.Errorf(annotations.ECONFLICT, "fold %d of evaluation %d is done or gone", f, id)
		}
		out = r.eval()
		return nil
	})
	return out, wrap(err, "start fold %d of evaluation %d", f, id)
}

// foldProgress records fold f's progress and the evaluation's (the folds'
// mean); an error says the fold should stop (as chainProgress).
func (d *DB) foldProgress(ctx context.Context, id int64, f int, worker string, attempt int, p float64) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE eval_folds SET progress = ? WHERE eval_id = ? AND fold = ? AND worker = ? AND attempts = ? AND state = ?",
			min(max(finite(p), 0), 1), id, f, cleanText(worker), attempt, chainRunning)
		if res.Error != nil {
			return res.Error
		}
		r, err := getEval(tx, id)
		if err != nil {
			return err
		}
		if r.Status != string(annotations.FitRunning) {
			return annotations.Errorf(annotations.ECONFLICT, "evaluation %d is %s", id, r.Status)
		}
		if res.RowsAffected == 0 {
			return errChainLost
		}
		return evalProgressTx(tx, id)
	})
	return wrap(err, "progress of fold %d of evaluation %d", f, id)
}

// evalProgressTx writes an evaluation's progress and message from its
// folds'.
func evalProgressTx(tx *gorm.DB, id int64) error {
	var rows []annotations.EvalFold
	if err := tx.Raw("SELECT fold, state, worker, progress FROM eval_folds WHERE eval_id = ?", id).Scan(&rows).Error; err != nil {
		return err
	}
	var sum float64
	var done, running int
	workers := map[string]bool{}
	for _, r := range rows {
		switch r.State {
		case chainDone:
			sum++
			done++
		case chainRunning:
			sum += r.Progress
			running++
			workers[r.Worker] = true
		}
	}
	msg := fmt.Sprintf("%d folds done, %d running on %d workers, %d queued", done, running, len(workers), len(rows)-done-running)
	return tx.Exec("UPDATE evals SET progress = ?, message = ? WHERE id = ?", 0.99*sum/float64(max(len(rows), 1)), msg, id).Error
}

// finishFold stores fold f's output, completes its job and, when every
// fold is done, enqueues the combine job: one transaction.
func (d *DB) finishFold(ctx context.Context, job *river.Job[evalFoldArgs], worker string, output []byte) error {
	a := job.Args
	err := d.write(ctx, func(tx *gorm.DB) error {
		if d.dialect == postgresDialect {
			if err := tx.Exec("SELECT id FROM evals WHERE id = ? FOR UPDATE", a.EvalID).Error; err != nil {
				return err
			}
		}
		r, err := getEval(tx, a.EvalID)
		if err != nil {
			return err
		}
		if r.Status != string(annotations.FitRunning) {
			return annotations.Errorf(annotations.ECONFLICT, "evaluation %d is %s", a.EvalID, r.Status)
		}
		res := tx.Exec("UPDATE eval_folds SET state = ?, progress = 1, output = ? WHERE eval_id = ? AND fold = ? AND worker = ? AND attempts = ? AND state = ?",
			chainDone, output, a.EvalID, a.Fold, cleanText(worker), job.Attempt, chainRunning)
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
		if err := tx.Raw("SELECT COUNT(*) FROM eval_folds WHERE eval_id = ? AND state <> ?", a.EvalID, chainDone).Scan(&left).Error; err != nil {
			return err
		}
		if left > 0 {
			return evalProgressTx(tx, a.EvalID)
		}
		stx, err := sqlTx(tx)
		if err != nil {
			return err
		}
		cj, err := d.jobs.client.InsertTx(ctx, stx, evalCombineArgs{EvalID: a.EvalID, ProjectID: a.ProjectID},
			&river.InsertOpts{Queue: fitQueue, MaxAttempts: fitJobMaxAttempts})
		if err != nil {
			return fmt.Errorf("enqueue the combine job: %w", err)
		}
		return tx.Exec("UPDATE evals SET job_id = ?, progress = 0.99, message = ? WHERE id = ?", cj.Job.ID, "combining the folds", a.EvalID).Error
	})
	return wrap(err, "finish fold %d of evaluation %d", a.Fold, a.EvalID)
}

func requeueFoldTx(tx *gorm.DB, id int64, f int, message string) error {
	if err := tx.Exec("UPDATE eval_folds SET state = ?, progress = 0 WHERE eval_id = ? AND fold = ? AND state = ?", chainQueued, id, f, chainRunning).Error; err != nil {
		return err
	}
	return tx.Exec("UPDATE evals SET message = ? WHERE id = ? AND status = ?", cleanText(message), id, string(annotations.FitRunning)).Error
}

// evalFoldWorker works fold jobs.
type evalFoldWorker struct {
	river.WorkerDefaults[evalFoldArgs]
	d    *DB
	run  annotations.EvalRunner
	opts annotations.WorkerOptions
}

func (w *evalFoldWorker) Work(ctx context.Context, job *river.Job[evalFoldArgs]) error {
	d, a := w.d, job.Args
	e, err := d.startFold(ctx, a.EvalID, a.Fold, w.opts.Name, job.Attempt)
	switch annotations.ErrorCode(err) {
	case "":
	case annotations.ENOTFOUND, annotations.ECONFLICT:
		return river.JobCancel(err)
	default:
		return err
	}
	var stop error
	out, err := w.run.RunEvalFold(ctx, e, a.Fold, func(p float64) error {
		perr := d.foldProgress(ctx, a.EvalID, a.Fold, w.opts.Name, job.Attempt, p)
		if perr != nil && (errors.Is(perr, errChainLost) || annotations.ErrorCode(perr) == annotations.ECONFLICT || annotations.ErrorCode(perr) == annotations.ENOTFOUND) {
			stop = perr
			return perr
		}
		return nil
	})
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	switch {
	case stop != nil:
		return river.JobCancel(stop)
	case err == nil:
		ferr := d.finishFold(bg, job, w.opts.Name, out)
		if ferr == nil {
			return nil
		}
		if errors.Is(ferr, errChainLost) || annotations.ErrorCode(ferr) == annotations.ECONFLICT || annotations.ErrorCode(ferr) == annotations.ENOTFOUND {
			return river.JobCancel(ferr)
		}
		return ferr
	case errors.Is(err, annotations.ErrRetry):
		reason := strings.TrimSuffix(err.Error(), ": "+annotations.ErrRetry.Error())
		if ctx.Err() != nil {
			_ = d.write(bg, func(tx *gorm.DB) error {
				return requeueFoldTx(tx, a.EvalID, a.Fold, fmt.Sprintf("fold %d re-queued: %s", a.Fold+1, reason))
			})
			return river.JobSnooze(time.Second)
		}
		if job.Attempt < w.opts.MaxAttempts {
			_ = d.write(bg, func(tx *gorm.DB) error {
				return requeueFoldTx(tx, a.EvalID, a.Fold, fmt.Sprintf("fold %d: %s, re-queued, attempt %d of %d", a.Fold+1, reason, job.Attempt, w.opts.MaxAttempts))
			})
			return err
		}
		if eerr := d.endEval(bg, a.EvalID, annotations.FitFailed, fmt.Sprintf("fold %d: %s; gave up after %d attempts", a.Fold+1, reason, job.Attempt)); eerr != nil {
			d.log.Error("failing an evaluation", "eval", a.EvalID, "err", eerr)
		}
		return river.JobCancel(err)
	default:
		if eerr := d.endEval(bg, a.EvalID, annotations.FitFailed, annotations.ErrorMessage(err)); eerr != nil {
			d.log.Error("failing an evaluation", "eval", a.EvalID, "err", eerr)
		}
		return river.JobCancel(err)
	}
}

// evalCombineWorker works combine jobs of evaluations.
type evalCombineWorker struct {
	river.WorkerDefaults[evalCombineArgs]
	d    *DB
	run  annotations.EvalRunner
	opts annotations.WorkerOptions
}

func (w *evalCombineWorker) Work(ctx context.Context, job *river.Job[evalCombineArgs]) error {
	d, id := w.d, job.Args.EvalID
	var outputs [][]byte
	var e *annotations.Eval
	err := d.read(ctx, func(tx *gorm.DB) error {
		r, err := getEval(tx, id)
		if err != nil {
			return err
		}
		if r.Status != string(annotations.FitRunning) {
			return annotations.Errorf(annotations.ECONFLICT, "evaluation %d is %s", id, r.Status)
		}
		e = r.eval()
		var rows []struct {
			Fold   int
			State  string
			Output []byte
		}
		if err := tx.Raw("SELECT fold, state, output FROM eval_folds WHERE eval_id = ? ORDER BY fold", id).Scan(&rows).Error; err != nil {
			return err
		}
		for i, row := range rows {
			if row.Fold != i || row.State != chainDone {
				return annotations.Errorf(annotations.EINVALID, "evaluation %d: fold %d is %s", id, row.Fold, row.State)
			}
			outputs = append(outputs, row.Output)
		}
		return nil
	})
	if err != nil {
		if c := annotations.ErrorCode(err); c == annotations.ENOTFOUND || c == annotations.ECONFLICT || c == annotations.EINVALID {
			return river.JobCancel(err)
		}
		return err
	}
	res, err := w.run.CombineEval(ctx, e, outputs)
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err != nil {
		if errors.Is(err, annotations.ErrRetry) && job.Attempt < w.opts.MaxAttempts {
			return err
		}
		if eerr := d.endEval(bg, id, annotations.FitFailed, "combining the folds: "+annotations.ErrorMessage(err)); eerr != nil {
			d.log.Error("failing an evaluation", "eval", id, "err", eerr)
		}
		return river.JobCancel(err)
	}
	return wrap(d.write(bg, func(tx *gorm.DB) error {
		if err := tx.Exec("UPDATE evals SET status = ?, progress = 1, message = ?, result = ?, finished_at = ? WHERE id = ? AND status = ?",
			string(annotations.FitDone), "done", res, now(), id, string(annotations.FitRunning)).Error; err != nil {
			return err
		}
		return tx.Exec("UPDATE eval_folds SET output = NULL WHERE eval_id = ?", id).Error
	}), "finish evaluation %d", id)
}

// rescueEvalJob adds the evaluation job of a dead worker to the rescue p:
// retryable (a fold back in the queue) while attempts are left, else
// discarded with the evaluation failed.
func (d *DB) rescueEvalJob(ctx context.Context, tx *gorm.DB, p *riverdriver.JobRescueManyParams, job *rivertype.JobRow, t time.Time, reason string, maxAttempts int) error {
	var args evalFoldArgs
	if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
		return fmt.Errorf("job %d: %w", job.ID, err)
	}
	if job.Kind == evalFoldKind {
		reason = fmt.Sprintf("fold %d: %s", args.Fold+1, reason)
	} else {
		reason = "combining the folds: " + reason
	}
	ae, _ := json.Marshal(rivertype.AttemptError{At: t, Attempt: job.Attempt, Error: reason})
	p.ID = append(p.ID, job.ID)
	p.Error = append(p.Error, ae)
	if job.Attempt < maxAttempts {
		var policy river.DefaultClientRetryPolicy
		p.State = append(p.State, string(rivertype.JobStateRetryable))
		p.ScheduledAt = append(p.ScheduledAt, policy.NextRetry(job))
		p.FinalizedAt = append(p.FinalizedAt, nil)
		msg := fmt.Sprintf("%s, re-queued, attempt %d of %d", reason, job.Attempt, maxAttempts)
		if job.Kind == evalFoldKind {
			return requeueFoldTx(tx, args.EvalID, args.Fold, msg)
		}
		return tx.Exec("UPDATE evals SET message = ? WHERE id = ? AND status = ?", msg, args.EvalID, string(annotations.FitRunning)).Error
	}
	p.State = append(p.State, string(rivertype.JobStateDiscarded))
	p.ScheduledAt = append(p.ScheduledAt, t)
	p.FinalizedAt = append(p.FinalizedAt, &t)
	err := d.endEvalTx(ctx, tx, args.EvalID, annotations.FitFailed, fmt.Sprintf("%s on attempt %d of %d; gave up after %d attempts", reason, job.Attempt, maxAttempts, job.Attempt))
	if annotations.ErrorCode(err) == annotations.ENOTFOUND {
		return nil
	}
	return err
}
