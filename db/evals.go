package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// (kind "eval_combine") in one transaction, as a fit's chains do: the
// parts of fanout.go, foldGroup. The combine stores the result in the
// evaluation's row, where the command that waits for it reads it.

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
		if err := insertID(d, tx, "INSERT INTO evals (project_id, spec, folds, status, created_at) VALUES (?, ?, ?, ?, ?)",
			[]any{e.ProjectID, string(e.Spec), e.Folds, string(annotations.FitRunning), t}, &e.ID); err != nil {
			return err
		}
		if err := d.insertParts(ctx, tx, &foldGroup, e.ID, e.Folds, func(f int) river.JobArgs {
			return evalFoldArgs{EvalID: e.ID, ProjectID: e.ProjectID, Fold: f}
		}, &river.InsertOpts{Queue: fitQueue, MaxAttempts: fitJobMaxAttempts}); err != nil {
			return err
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
	return d.endParentTx(ctx, tx, &foldGroup, id, status, message, "")
}

// runningEval reads evaluation id in tx: ENOTFOUND when it is gone,
// ECONFLICT when it is not running.
func runningEval(tx *gorm.DB, id int64) (*evalRow, error) {
	return running(tx, id, getEval, "evaluation")
}

// startFold moves fold f of evaluation id to running.
func (d *DB) startFold(ctx context.Context, id int64, f int, worker string, attempt int) (*annotations.Eval, error) {
	var out *annotations.Eval
	err := d.write(ctx, func(tx *gorm.DB) error {
		r, err := runningEval(tx, id)
		if err != nil {
			return err
		}
		out = r.eval()
		return startPart(tx, &foldGroup, id, f, worker, attempt, "")
	})
	return out, wrap(err, "start fold %d of evaluation %d", f, id)
}

// foldProgress records fold f's progress and the evaluation's (the folds'
// mean); an error says the fold should stop (as chainProgress).
func (d *DB) foldProgress(ctx context.Context, id int64, f int, worker string, attempt int, p float64) error {
	return d.recordPartProgress(ctx, &foldGroup, id, f, worker, attempt, p, func(tx *gorm.DB) (func() error, error) {
		if _, err := runningEval(tx, id); err != nil {
			return nil, err
		}
		return func() error { return evalProgressTx(tx, id) }, nil
	})
}

// evalProgressTx writes an evaluation's progress and message from its
// folds'.
func evalProgressTx(tx *gorm.DB, id int64) error {
	t, err := tallyParts(tx, &foldGroup, id)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("%d folds done, %d running on %d workers, %d queued", t.done, t.running, t.workers, t.queued)
	// Only a running evaluation, as aggregateProgress for fits: on
	// PostgreSQL a fold failing the evaluation may commit between
	// runningEval's read and this write, and its message must stay.
	return tx.Exec("UPDATE evals SET progress = ?, message = ? WHERE id = ? AND status = ?", t.fraction(0.99), msg, id, string(annotations.FitRunning)).Error
}

// finishFold stores fold f's output, completes its job and, when every
// fold is done, enqueues the combine job: one transaction.
func (d *DB) finishFold(ctx context.Context, job *river.Job[evalFoldArgs], worker string, output []byte) error {
	a := job.Args
	g := &foldGroup
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := d.lockParent(tx, g, a.EvalID); err != nil {
			return err
		}
		if _, err := runningEval(tx, a.EvalID); err != nil {
			return err
		}
		left, err := finishPart(ctx, tx, g, job, a.EvalID, a.Fold, worker, output, "")
		if err != nil {
			return err
		}
		if left > 0 {
			return evalProgressTx(tx, a.EvalID)
		}
		cj, err := d.enqueueCombine(ctx, tx, evalCombineArgs{EvalID: a.EvalID, ProjectID: a.ProjectID},
			&river.InsertOpts{Queue: fitQueue, MaxAttempts: fitJobMaxAttempts})
		if err != nil {
			return err
		}
		return tx.Exec("UPDATE evals SET job_id = ?, progress = 0.99, message = ? WHERE id = ?", cj, "combining the folds", a.EvalID).Error
	})
	return wrap(err, "finish fold %d of evaluation %d", a.Fold, a.EvalID)
}

// workEvalFold works fold jobs.
func workEvalFold(ctx context.Context, w *jobWorker[evalFoldArgs, annotations.EvalRunner], job *river.Job[evalFoldArgs]) error {
	d, a := w.d, job.Args
	var e *annotations.Eval
	return workPart(ctx, d, job, w.opts, partSteps{
		name: fmt.Sprintf("fold %d", a.Fold+1),
		start: func(ctx context.Context) (err error) {
			e, err = d.startFold(ctx, a.EvalID, a.Fold, w.opts.Name, job.Attempt)
			return err
		},
		run: func(ctx context.Context, stop func(error) error) ([]byte, error) {
			return w.run.RunEvalFold(ctx, e, a.Fold, func(p float64) error {
				return stop(d.foldProgress(ctx, a.EvalID, a.Fold, w.opts.Name, job.Attempt, p))
			})
		},
		finish: func(ctx context.Context, output []byte) error {
			return d.finishFold(ctx, job, w.opts.Name, output)
		},
		group: &foldGroup, parent: a.EvalID, part: a.Fold,
		end: func(ctx context.Context, status annotations.FitStatus, message string) error {
			return d.endEval(ctx, a.EvalID, status, message)
		},
	})
}

// workEvalCombine works combine jobs of evaluations.
func workEvalCombine(ctx context.Context, w *jobWorker[evalCombineArgs, annotations.EvalRunner], job *river.Job[evalCombineArgs]) error {
	d, id := w.d, job.Args.EvalID
	var outputs [][]byte
	var e *annotations.Eval
	err := d.read(ctx, func(tx *gorm.DB) error {
		r, err := runningEval(tx, id)
		if err != nil {
			return err
		}
		e = r.eval()
		outputs, err = partOutputs(tx, &foldGroup, id)
		return err
	})
	if err != nil {
		return combineReadErr(err)
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
		return finishParentTx(tx, &foldGroup, id, res)
	}), "finish evaluation %d", id)
}

// rescueEvalJob adds the evaluation job of a dead worker to the rescue p
// (see rescueGroupJob).
func (d *DB) rescueEvalJob(ctx context.Context, tx *gorm.DB, p *riverdriver.JobRescueManyParams, job *rivertype.JobRow, t time.Time, reason string, maxAttempts int) error {
	var args evalFoldArgs
	if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
		return fmt.Errorf("job %d: %w", job.ID, err)
	}
	part := -1
	if job.Kind == evalFoldKind {
		part = args.Fold
		reason = fmt.Sprintf("fold %d: %s", args.Fold+1, reason)
	} else {
		reason = "combining the folds: " + reason
	}
	return d.rescueGroupJob(tx, p, job, t, reason, maxAttempts, &foldGroup, args.EvalID, part, func(msg string) error {
		return d.endEvalTx(ctx, tx, args.EvalID, annotations.FitFailed, msg)
	})
}

// rescueGroupJob adds the job of a dead worker of parent id of group g
// (an evaluation, an agreement analysis; part: the part it runs, -1: not
// a part) to the rescue p: retryable (a part back in the queue) while
// attempts are left, else discarded with the parent ended by fail(message).
func (d *DB) rescueGroupJob(tx *gorm.DB, p *riverdriver.JobRescueManyParams, job *rivertype.JobRow, t time.Time, reason string, maxAttempts int,
	g *fanGroup, id int64, part int, fail func(message string) error) error {
	if rescueJob(p, job, t, reason, maxAttempts) {
		msg := fmt.Sprintf("%s, re-queued, attempt %d of %d", reason, job.Attempt, maxAttempts)
		if part >= 0 {
			return requeuePartTx(tx, g, id, part, msg)
		}
		return tx.Exec("UPDATE "+g.parents+" SET message = ? WHERE id = ? AND status = ?", msg, id, string(annotations.FitRunning)).Error
	}
	err := fail(fmt.Sprintf("%s on attempt %d of %d; gave up after %d attempts", reason, job.Attempt, maxAttempts, job.Attempt))
	if annotations.ErrorCode(err) == annotations.ENOTFOUND {
		return nil
	}
	return err
}
