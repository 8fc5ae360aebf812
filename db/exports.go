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

// Exports of fits as jobs (the report document and the workbook of fits
// too large to build within a request): StartExport stores a running
// export, keyed by fit and options (the format and the report's options),
// and its job (kind "export", queue "export") in one transaction; the job
// builds the file (the runner's RunExport) and stores it in the export's
// row, where any API node reads it. One job per fit and key: asking again
// while it runs joins it.

// exportArgs are the arguments of an export job.
type exportArgs struct {
	ExportID  int64 `json:"export_id"`
	FitID     int64 `json:"fit_id"`
	ProjectID int64 `json:"project_id"`
}

func (exportArgs) Kind() string { return exportKind }

// exportOpts are the insert options of export jobs.
var exportOpts = &river.InsertOpts{Queue: exportQueue, MaxAttempts: fitJobMaxAttempts}

// exportsKept is the most finished exports kept per fit (their files), the
// newest.
const exportsKept = 8

type exportRow struct {
	ID         int64
	FitID      int64
	ProjectID  int64
	OptionsKey string
	Options    string
	Status     string
	Progress   float64
	Message    string
	ErrorCode  string
	JobID      int64
	CreatedAt  time.Time
	FinishedAt *time.Time
}

const exportColumns = "id, fit_id, project_id, options_key, options, status, progress, message, error_code, job_id, created_at, finished_at"

func (r *exportRow) job() *annotations.ExportJob {
	return &annotations.ExportJob{ID: r.ID, FitID: r.FitID, ProjectID: r.ProjectID, Key: r.OptionsKey, Options: []byte(r.Options),
		Status: annotations.FitStatus(r.Status), Progress: r.Progress, Message: r.Message, ErrorCode: r.ErrorCode,
		CreatedAt: utc(r.CreatedAt), FinishedAt: utcPtr(r.FinishedAt)}
}

func getExport(tx *gorm.DB, id int64) (*exportRow, error) {
	var rows []exportRow
	if err := tx.Raw("SELECT "+exportColumns+" FROM exports WHERE id = ?", id).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("read export %d: %w", id, err)
	}
	if len(rows) == 0 {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "export %d not found", id)
	}
	return &rows[0], nil
}

// runningExport reads export id in tx: ENOTFOUND when it is gone,
// ECONFLICT when it is not running.
func runningExport(tx *gorm.DB, id int64) (*exportRow, error) {
	return running(tx, id, getExport, "export")
}

// StartExport finds or starts an export (see annotations.ExportStore). A
// failed export without an error code is answered once: StartExport
// returns it and deletes it, so that the next request starts it again.
func (d *DB) StartExport(ctx context.Context, e *annotations.ExportJob) (bool, error) {
	created := false
	err := d.write(ctx, func(tx *gorm.DB) error {
		created = false
		// Concurrent requests for one fit take turns (PostgreSQL).
		if err := d.lockParent(tx, &fitGroupLock, e.FitID); err != nil {
			return err
		}
		var rows []exportRow
		if err := tx.Raw("SELECT "+exportColumns+" FROM exports WHERE fit_id = ? AND options_key = ?", e.FitID, e.Key).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 1 {
			r := &rows[0]
			if answered, err := joinStored(tx, "exports", r.ID, r.Status, r.ErrorCode, func() { *e = *r.job() }, &e.Result); answered || err != nil {
				return err
			}
		}
		// Finished exports of the fit beyond the newest exportsKept go.
		if err := tx.Exec("DELETE FROM exports WHERE fit_id = ? AND status <> ? AND id NOT IN (SELECT id FROM exports WHERE fit_id = ? AND status <> ? ORDER BY id DESC LIMIT ?)",
			e.FitID, string(annotations.FitRunning), e.FitID, string(annotations.FitRunning), exportsKept-1).Error; err != nil {
			return err
		}
		t := now()
		const ins = "INSERT INTO exports (fit_id, project_id, options_key, options, status, message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
		args := []any{e.FitID, e.ProjectID, e.Key, string(e.Options), string(annotations.FitRunning), "queued", t}
		if err := insertID(d, tx, ins, args, &e.ID); err != nil {
			return err
		}
		stx, err := sqlTx(tx)
		if err != nil {
			return err
		}
		res, err := d.jobs.client.InsertTx(ctx, stx, exportArgs{ExportID: e.ID, FitID: e.FitID, ProjectID: e.ProjectID}, exportOpts)
		if err != nil {
			return fmt.Errorf("enqueue export %d: %w", e.ID, err)
		}
		e.Status, e.Message, e.CreatedAt, e.Progress, e.ErrorCode, e.Result, e.FinishedAt = annotations.FitRunning, "queued", t, 0, "", nil, nil
		created = true
		return tx.Exec("UPDATE exports SET job_id = ? WHERE id = ?", res.Job.ID, e.ID).Error
	})
	return created, wrap(err, "start export of fit %d", e.FitID)
}

// fitGroupLock locks a fit's row (StartExport: the fit's exports take
// turns).
var fitGroupLock = fanGroup{parents: "fits", parent: "fit"}

// CancelExports cancels the fit's running exports and their jobs.
func (d *DB) CancelExports(ctx context.Context, fitID int64) (int, error) {
	n, err := d.cancelRunning(ctx, "exports", "fit_id", fitID, d.endExportTx)
	return n, wrap(err, "cancel the exports of fit %d", fitID)
}

// endExportTx moves running export id to a terminal state (code: the error
// code of a failure on the data, kept) and cancels its job; an export that
// is not running is left as it is.
func (d *DB) endExportTx(ctx context.Context, tx *gorm.DB, id int64, status annotations.FitStatus, message, code string) error {
	r, err := runningExport(tx, id)
	if c := annotations.ErrorCode(err); c == annotations.ENOTFOUND || c == annotations.ECONFLICT {
		return nil
	} else if err != nil {
		return err
	}
	if r.JobID != 0 {
		stx, err := sqlTx(tx)
		if err != nil {
			return err
		}
		if _, err := d.jobs.client.JobCancelTx(ctx, stx, r.JobID); err != nil && !errors.Is(err, river.ErrNotFound) {
			return err
		}
	}
	return tx.Exec("UPDATE exports SET status = ?, message = ?, error_code = ?, finished_at = ? WHERE id = ? AND status = ?",
		string(status), cleanText(message), code, now(), id, string(annotations.FitRunning)).Error
}

// exportProgress records a running export's progress and phase; ECONFLICT
// or ENOTFOUND when it is no longer running (cancelled, deleted).
func (d *DB) exportProgress(ctx context.Context, id int64, progress float64, phase string) error {
	return wrap(d.write(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE exports SET progress = ?, message = ? WHERE id = ? AND status = ?", progress, cleanText(phase), id, string(annotations.FitRunning))
		if res.Error != nil || res.RowsAffected == 1 {
			return res.Error
		}
		_, err := runningExport(tx, id)
		return err
	}), "progress of export %d", id)
}

// workExport works export jobs.
func workExport(ctx context.Context, w *jobWorker[exportArgs, annotations.ExportRunner], job *river.Job[exportArgs]) error {
	d, id := w.d, job.Args.ExportID
	var e *annotations.ExportJob
	err := d.read(ctx, func(tx *gorm.DB) error {
		r, err := runningExport(tx, id)
		if err == nil {
			e = r.job()
		}
		return err
	})
	if err != nil {
		return combineReadErr(err)
	}
	if err := d.exportProgress(ctx, id, 0, "building"); err != nil {
		return agreementStopped(err)
	}
	out, err := w.run.RunExport(ctx, e, func(p float64, phase string) error {
		return d.exportProgress(ctx, id, p, phase)
	})
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	switch {
	case err == nil:
		return wrap(d.write(bg, func(tx *gorm.DB) error {
			return tx.Exec("UPDATE exports SET status = ?, progress = 1, message = ?, result = ?, finished_at = ? WHERE id = ? AND status = ?",
				string(annotations.FitDone), "done", out, now(), id, string(annotations.FitRunning)).Error
		}), "finish export %d", id)
	case stopsPart(err):
		return river.JobCancel(err)
	case errors.Is(err, annotations.ErrRetry) && ctx.Err() != nil:
		// This worker shut down: back in the queue at once.
		_ = d.exportProgress(bg, id, 0, "queued (its worker shut down)")
		return river.JobSnooze(time.Second)
	case errors.Is(err, annotations.ErrRetry) && job.Attempt < w.opts.MaxAttempts:
		_ = d.exportProgress(bg, id, 0, fmt.Sprintf("queued (attempt %d of %d failed: %s)", job.Attempt, w.opts.MaxAttempts, annotations.ErrorMessage(err)))
		return err
	}
	code := annotations.ErrorCode(err)
	if code == annotations.EINTERNAL || errors.Is(err, annotations.ErrRetry) {
		code = "" // the next request tries again
	}
	if eerr := d.write(bg, func(tx *gorm.DB) error {
		return d.endExportTx(bg, tx, id, annotations.FitFailed, annotations.ErrorMessage(err), code)
	}); eerr != nil {
		d.log.Error("failing an export", "export", id, "err", eerr)
	}
	return river.JobCancel(err)
}

// rescueExportJob adds the export job of a dead worker to the rescue p:
// retryable while attempts are left (its export waits in the queue), else
// discarded and the export failed (the next request starts it again).
func (d *DB) rescueExportJob(ctx context.Context, tx *gorm.DB, p *riverdriver.JobRescueManyParams, job *rivertype.JobRow, t time.Time, reason string, maxAttempts int) error {
	var args exportArgs
	if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
		return fmt.Errorf("job %d: %w", job.ID, err)
	}
	if rescueJob(p, job, t, reason, maxAttempts) {
		return tx.Exec("UPDATE exports SET progress = 0, message = ? WHERE id = ? AND status = ?",
			fmt.Sprintf("queued (%s, attempt %d of %d)", reason, job.Attempt, maxAttempts), args.ExportID, string(annotations.FitRunning)).Error
	}
	return tx.Exec("UPDATE exports SET status = ?, message = ?, finished_at = ? WHERE id = ? AND status = ?",
		string(annotations.FitFailed), cleanText(fmt.Sprintf("%s on attempt %d of %d; gave up", reason, job.Attempt, maxAttempts)), t, args.ExportID, string(annotations.FitRunning)).Error
}
