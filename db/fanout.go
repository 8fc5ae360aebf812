package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"gorm.io/gorm"

	"concord/annotations"
)

// Work in parts (the fan-out and fan-in that River Pro calls workflows,
// our code on open-source River): a parent row (a fit, an evaluation)
// whose work runs as part jobs (a fit's chains, an evaluation's folds) that
// any worker may take, and one combine job. One pattern, here once:
//
//   - the parts' rows and jobs are inserted in the transaction that
//     creates or fans out the parent (insertParts);
//   - a worker moves its part to running for its attempt (startPart),
//     records its progress there (partProgress; the parent's progress is
//     aggregated from its parts' by the caller, see tallyParts) and stops
//     when the parent ended, was cancelled or the part was taken over;
//   - the part that finishes stores its output and completes its job, and
//     the last one enqueues the combine job, in one transaction
//     (finishPart, enqueueCombine), the parent's row locked first
//     (lockParent) so that two parts finishing together cannot both miss
//     being last;
//   - a part of a worker that shut down, crashed or died goes back to the
//     queue (requeuePartTx) while attempts are left, else fails the parent;
//     a part that fails on the data fails the parent at once (workPart);
//   - a cancel or failure of the parent cancels the part jobs that have
//     not ended (cancelParts);
//   - the combine reads every part's output (partOutputs).

// fanGroup names the tables and columns of one kind of parent and its
// parts.
type fanGroup struct {
	parents   string // the parents' table: fits
	parts     string // the parts' table: fit_chains
	parentCol string // the parts' column naming the parent: fit_id
	indexCol  string // the parts' column numbering them: chain
	parent    string // a parent in messages: fit
	part      string // a part in messages: chain
	// requeueSet are more assignments of a part put back in the queue
	// (", eta_seconds = 0").
	requeueSet string
}

// The groups: a Gibbs fit's chains, an evaluation's folds.
var (
	chainGroup = fanGroup{parents: "fits", parts: "fit_chains", parentCol: "fit_id", indexCol: "chain",
		parent: "fit", part: "chain", requeueSet: ", eta_seconds = 0"}
	foldGroup = fanGroup{parents: "evals", parts: "eval_folds", parentCol: "eval_id", indexCol: "fold",
		parent: "evaluation", part: "fold"}
)

// Part states (the parts' state column).
const (
	partQueued  = "queued"
	partRunning = "running"
	partDone    = "done"
)

// where is the condition selecting part i of parent id (arguments id, i).
func (g *fanGroup) where() string {
	return " WHERE " + g.parentCol + " = ? AND " + g.indexCol + " = ?"
}

// lockParent locks parent id's row until the end of tx on PostgreSQL
// (SQLite's writer runs one transaction at a time).
func (d *DB) lockParent(tx *gorm.DB, g *fanGroup, id int64) error {
	if d.dialect != postgresDialect {
		return nil
	}
	return tx.Exec("SELECT id FROM "+g.parents+" WHERE id = ? FOR UPDATE", id).Error
}

// insertParts inserts, in tx, n queued parts of parent id and their jobs:
// args(i) are part i's job arguments.
func (d *DB) insertParts(ctx context.Context, tx *gorm.DB, g *fanGroup, id int64, n int, args func(i int) river.JobArgs, opts *river.InsertOpts) error {
	stx, err := sqlTx(tx)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		res, err := d.jobs.client.InsertTx(ctx, stx, args(i), opts)
		if err != nil {
			return fmt.Errorf("enqueue %s %d: %w", g.part, i, err)
		}
		if err := tx.Exec("INSERT INTO "+g.parts+" ("+g.parentCol+", "+g.indexCol+", job_id, state) VALUES (?, ?, ?, ?)",
			id, i, res.Job.ID, partQueued).Error; err != nil {
			return err
		}
	}
	return nil
}

// startPart moves part i of the running parent id to running by worker for
// attempt, with the assignments set (args setArgs) besides; a part that is
// done or gone is ECONFLICT.
func startPart(tx *gorm.DB, g *fanGroup, id int64, i int, worker string, attempt int, set string, setArgs ...any) error {
	args := append([]any{partRunning, cleanText(worker), attempt}, setArgs...)
	res := tx.Exec("UPDATE "+g.parts+" SET state = ?, worker = ?, attempts = ?, progress = 0"+set+g.where()+" AND state <> ?",
		append(args, id, i, partDone)...)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return annotations.Errorf(annotations.ECONFLICT, "%s %d of %s %d is done or gone", g.part, i, g.parent, id)
	}
	return nil
}

// partProgress records part i's progress (worker's attempt) with the
// assignments set besides, and reports whether the part is still this
// attempt's.
func partProgress(tx *gorm.DB, g *fanGroup, id int64, i int, worker string, attempt int, progress float64, set string, setArgs ...any) (bool, error) {
	args := append([]any{min(max(finite(progress), 0), 1)}, setArgs...)
	res := tx.Exec("UPDATE "+g.parts+" SET progress = ?"+set+g.where()+" AND worker = ? AND attempts = ? AND state = ?",
		append(args, id, i, cleanText(worker), attempt, partRunning)...)
	return res.RowsAffected > 0, res.Error
}

// partTally is what the parts of a parent are doing.
type partTally struct {
	parts, done, running, queued int
	workers                      int     // distinct workers of the running parts
	sum                          float64 // the parts' progress: 1 a done part
}

// fraction is the parts' mean progress scaled to share (the combine's part
// is the rest).
func (t partTally) fraction(share float64) float64 {
	return share * t.sum / float64(max(t.parts, 1))
}

// tallyParts counts the parts of parent id by state.
func tallyParts(tx *gorm.DB, g *fanGroup, id int64) (partTally, error) {
	var rows []struct {
		State    string
		Worker   string
		Progress float64
	}
	if err := tx.Raw("SELECT state, worker, progress FROM "+g.parts+" WHERE "+g.parentCol+" = ?", id).Scan(&rows).Error; err != nil {
		return partTally{}, err
	}
	t := partTally{parts: len(rows)}
	workers := map[string]bool{}
	for _, r := range rows {
		switch r.State {
		case partDone:
			t.sum++
			t.done++
		case partRunning:
			t.sum += r.Progress
			t.running++
			workers[r.Worker] = true
		default:
			t.queued++
		}
	}
	t.workers = len(workers)
	return t, nil
}

// finishPart stores the output of the part of job (part i of parent id,
// worker's attempt) with the assignments set besides and completes its
// job, in tx, and returns how many parts of the parent are not done. The
// caller has locked the parent (lockParent) and checked that it runs. A
// part that is no longer this attempt's is errChainLost.
func finishPart[T river.JobArgs](ctx context.Context, tx *gorm.DB, g *fanGroup, job *river.Job[T], id int64, i int, worker string, output []byte,
	set string, setArgs ...any) (int64, error) {
	args := append([]any{partDone, output}, setArgs...)
	res := tx.Exec("UPDATE "+g.parts+" SET state = ?, progress = 1, output = ?"+set+g.where()+" AND worker = ? AND attempts = ? AND state = ?",
		append(args, id, i, cleanText(worker), job.Attempt, partRunning)...)
	if res.Error != nil {
		return 0, res.Error
	}
	if res.RowsAffected != 1 {
		return 0, errChainLost
	}
	if err := completeTx(ctx, tx, job); err != nil {
		return 0, err
	}
	var left int64
	err := tx.Raw("SELECT COUNT(*) FROM "+g.parts+" WHERE "+g.parentCol+" = ? AND state <> ?", id, partDone).Scan(&left).Error
	return left, err
}

// enqueueCombine inserts the combine job args in tx and returns its id.
func (d *DB) enqueueCombine(ctx context.Context, tx *gorm.DB, args river.JobArgs, opts *river.InsertOpts) (int64, error) {
	stx, err := sqlTx(tx)
	if err != nil {
		return 0, err
	}
	res, err := d.jobs.client.InsertTx(ctx, stx, args, opts)
	if err != nil {
		return 0, fmt.Errorf("enqueue the combine job: %w", err)
	}
	return res.Job.ID, nil
}

// requeuePartTx puts running part i of parent id back in the queue (its
// job is retried) with message in the running parent's.
func requeuePartTx(tx *gorm.DB, g *fanGroup, id int64, i int, message string) error {
	if err := tx.Exec("UPDATE "+g.parts+" SET state = ?, progress = 0"+g.requeueSet+g.where()+" AND state = ?",
		partQueued, id, i, partRunning).Error; err != nil {
		return err
	}
	return tx.Exec("UPDATE "+g.parents+" SET message = ? WHERE id = ? AND status = ?", cleanText(message), id, string(annotations.FitRunning)).Error
}

// cancelParts cancels, in tx, the jobs of the parts of parent id that are
// not done, and the jobs more.
func (d *DB) cancelParts(ctx context.Context, tx *gorm.DB, g *fanGroup, id int64, more ...int64) error {
	var ids []int64
	if err := tx.Raw("SELECT job_id FROM "+g.parts+" WHERE "+g.parentCol+" = ? AND state <> ?", id, partDone).Scan(&ids).Error; err != nil {
		return err
	}
	stx, err := sqlTx(tx)
	if err != nil {
		return err
	}
	for _, j := range append(ids, more...) {
		if _, err := d.jobs.client.JobCancelTx(ctx, stx, j); err != nil && !errors.Is(err, river.ErrNotFound) {
			return err
		}
	}
	return nil
}

// partOutputs reads the outputs of every part of parent id, by index;
// EINVALID unless every part is done.
func partOutputs(tx *gorm.DB, g *fanGroup, id int64) ([][]byte, error) {
	var rows []struct {
		Idx    int
		State  string
		Output []byte
	}
	if err := tx.Raw("SELECT "+g.indexCol+" AS idx, state, output FROM "+g.parts+" WHERE "+g.parentCol+" = ? ORDER BY "+g.indexCol, id).
		Scan(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "%s %d has no %ss", g.parent, id, g.part)
	}
	outputs := make([][]byte, len(rows))
	for i, r := range rows {
		if r.Idx != i || r.State != partDone || r.Output == nil {
			return nil, annotations.Errorf(annotations.EINVALID, "%s %d: %s %d is %s", g.parent, id, g.part, r.Idx, r.State)
		}
		outputs[i] = r.Output
	}
	return outputs, nil
}

// partSteps are what workPart does for one kind of part.
type partSteps struct {
	// name is the part in messages ("chain 2", "fold 3").
	name string
	// start moves the part to running (startPart); ENOTFOUND or ECONFLICT:
	// nothing to do.
	start func(ctx context.Context) error
	// run runs the part and returns its output; its progress writes go
	// through stop, which returns the error that should stop the run (nil:
	// go on).
	run func(ctx context.Context, stop func(error) error) ([]byte, error)
	// finish stores the output (finishPart) and, for the last part, queues
	// the combine.
	finish func(ctx context.Context, output []byte) error
	// group, parent and part name the part: requeuePartTx puts it back
	// in the queue with a message.
	group  *fanGroup
	parent int64
	part   int
	// end ends the running parent (cancelled or failed) with a message and
	// cancels its jobs.
	end func(ctx context.Context, status annotations.FitStatus, message string) error
}

// stopsPart reports whether err, from a part's progress or finish, says
// the part should stop without retry: it was taken over, the parent was
// cancelled, ended or is gone.
func stopsPart(err error) bool {
	c := annotations.ErrorCode(err)
	return errors.Is(err, errChainLost) || errors.Is(err, errCancelRequested) || c == annotations.ECONFLICT || c == annotations.ENOTFOUND
}

// workPart works the part job job with the steps s and turns the outcome
// into River's: done; cancelled (the part was taken over, its parent
// ended, or the parent failed on its data: no retry); snoozed (this worker
// shuts down: back in the queue without spending an attempt); an error
// (retried with backoff while opts.MaxAttempts allow, else the parent
// fails).
func workPart[T river.JobArgs](ctx context.Context, d *DB, job *river.Job[T], opts annotations.WorkerOptions, s partSteps) error {
	switch err := s.start(ctx); annotations.ErrorCode(err) {
	case "":
	case annotations.ENOTFOUND, annotations.ECONFLICT:
		return river.JobCancel(err)
	default:
		return err // the database: retried
	}
	var stopped error
	out, err := s.run(ctx, func(perr error) error {
		if perr != nil && stopsPart(perr) {
			stopped = perr
			return perr
		}
		if perr != nil && ctx.Err() == nil {
			d.log.Warn("writing progress", "part", s.name, "err", perr)
		}
		return nil
	})
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	logEnd := func(what string, err error) {
		if err != nil {
			d.log.Error(what, "part", s.name, "err", err)
		}
	}
	switch {
	case stopped != nil:
		if errors.Is(stopped, errCancelRequested) {
			logEnd("cancelling", s.end(bg, annotations.FitCancelled, "cancelled by request"))
		}
		return river.JobCancel(stopped)
	case err == nil:
		ferr := s.finish(bg, out)
		if ferr != nil && stopsPart(ferr) {
			return river.JobCancel(ferr)
		}
		return ferr // nil, or the database: retried
	case errors.Is(err, annotations.ErrRetry):
		reason := strings.TrimSuffix(err.Error(), ": "+annotations.ErrRetry.Error())
		if ctx.Err() != nil {
			// This worker shut down: back in the queue at once.
			logEnd("re-queueing at shutdown", d.requeuePart(bg, s, fmt.Sprintf("%s re-queued: %s", s.name, reason)))
			return river.JobSnooze(time.Second)
		}
		if job.Attempt < opts.MaxAttempts {
			logEnd("re-queueing", d.requeuePart(bg, s, fmt.Sprintf("%s: %s, re-queued, attempt %d of %d", s.name, reason, job.Attempt, opts.MaxAttempts)))
			return err
		}
		logEnd("failing", s.end(bg, annotations.FitFailed,
			fmt.Sprintf("%s: %s on attempt %d of %d; gave up after %d attempts", s.name, reason, job.Attempt, opts.MaxAttempts, job.Attempt)))
		return river.JobCancel(err)
	default:
		// It fails on the data (every attempt would): the parent fails.
		logEnd("failing", s.end(bg, annotations.FitFailed, annotations.ErrorMessage(err)))
		return river.JobCancel(err)
	}
}

// requeuePart puts the part of s back in the queue with a message.
func (d *DB) requeuePart(ctx context.Context, s partSteps, message string) error {
	return wrap(d.write(ctx, func(tx *gorm.DB) error {
		return requeuePartTx(tx, s.group, s.parent, s.part, message)
	}), "requeue %s %d of %s %d", s.group.part, s.part, s.group.parent, s.parent)
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

// endParentTx moves running parent id of group g (an evaluation, an
// agreement analysis: a table with status, message, job_id and
// finished_at) to a terminal state with message and the assignments set
// besides, and cancels its part jobs that have not ended and its own job
// (job_id: the plan or the combine); a parent that is not running is left
// as it is.
func (d *DB) endParentTx(ctx context.Context, tx *gorm.DB, g *fanGroup, id int64, status annotations.FitStatus, message, set string, setArgs ...any) error {
	if err := d.lockParent(tx, g, id); err != nil {
		return err
	}
	var rows []struct {
		Status string
		JobID  int64
	}
	if err := tx.Raw("SELECT status, job_id FROM "+g.parents+" WHERE id = ?", id).Scan(&rows).Error; err != nil {
		return err
	}
	if len(rows) == 0 {
		return annotations.Errorf(annotations.ENOTFOUND, "%s %d not found", g.parent, id)
	}
	if rows[0].Status != string(annotations.FitRunning) {
		return nil
	}
	var own []int64
	if rows[0].JobID != 0 {
		own = append(own, rows[0].JobID)
	}
	if err := d.cancelParts(ctx, tx, g, id, own...); err != nil {
		return err
	}
	args := append([]any{string(status), cleanText(message), now()}, setArgs...)
	return tx.Exec("UPDATE "+g.parents+" SET status = ?, message = ?, finished_at = ?"+set+" WHERE id = ?", append(args, id)...).Error
}

// combineReadErr is the end of a combine job whose reading of its parent
// and parts' outputs failed with err: cancelled (no retry) when the parent
// is gone, not running or lacks a part's output; retried otherwise (the
// database).
func combineReadErr(err error) error {
	if c := annotations.ErrorCode(err); c == annotations.ENOTFOUND || c == annotations.ECONFLICT || c == annotations.EINVALID {
		return river.JobCancel(err)
	}
	return err
}

// finishParentTx stores the result of running parent id of group g (done)
// and drops its parts' outputs.
func finishParentTx(tx *gorm.DB, g *fanGroup, id int64, result []byte) error {
	if err := tx.Exec("UPDATE "+g.parents+" SET status = ?, progress = 1, message = ?, result = ?, finished_at = ? WHERE id = ? AND status = ?",
		string(annotations.FitDone), "done", result, now(), id, string(annotations.FitRunning)).Error; err != nil {
		return err
	}
	return tx.Exec("UPDATE "+g.parts+" SET output = NULL WHERE "+g.parentCol+" = ?", id).Error
}

// recordPartProgress records part i's progress (worker's attempt) and,
// through running, its parent's, in one transaction: running checks that
// the parent runs (ENOTFOUND, ECONFLICT otherwise) and returns the write
// of the parent's progress. An error says the part should stop: its parent
// ended or is gone, or the part is no longer this attempt's
// (errChainLost).
func (d *DB) recordPartProgress(ctx context.Context, g *fanGroup, id int64, i int, worker string, attempt int, p float64,
	running func(tx *gorm.DB) (progress func() error, err error)) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		mine, err := partProgress(tx, g, id, i, worker, attempt, p, "")
		if err != nil {
			return err
		}
		progress, err := running(tx)
		if err != nil {
			return err
		}
		if !mine {
			return errChainLost
		}
		return progress()
	})
	return wrap(err, "progress of %s %d of %s %d", g.part, i, g.parent, id)
}
