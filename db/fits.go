package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"

	"concord/annotations"
)

// fitRow is a row of fits. Seed holds the uint64 seed bit for bit (SQL
// integers are signed).
type fitRow struct {
	ID              int64
	ProjectID       int64
	Model           string
	Spec            string
	Seed            int64
	Status          string
	Progress        float64
	EtaSeconds      float64
	MaxRhat         float64
	Message         string
	CancelRequested bool
	Attempts        int
	Worker          string
	CreatedAt       time.Time
	StartedAt       *time.Time
	FinishedAt      *time.Time
	HeartbeatAt     *time.Time
	JobID           int64
}

func (fitRow) TableName() string { return "fits" }

// fitColumns are the columns of fits (results live in fit_results).
const fitColumns = "id, project_id, model, spec, seed, status, progress, eta_seconds, max_rhat, message, cancel_requested, attempts, worker, created_at, started_at, finished_at, heartbeat_at, job_id"

func (r *fitRow) fit() *annotations.Fit {
	return &annotations.Fit{
		ID:              r.ID,
		ProjectID:       r.ProjectID,
		Model:           r.Model,
		Spec:            json.RawMessage(r.Spec),
		Seed:            uint64(r.Seed),
		Status:          annotations.FitStatus(r.Status),
		Progress:        r.Progress,
		ETASeconds:      r.EtaSeconds,
		MaxRhat:         r.MaxRhat,
		Message:         r.Message,
		CancelRequested: r.CancelRequested,
		Attempts:        r.Attempts,
		Worker:          r.Worker,
		CreatedAt:       utc(r.CreatedAt),
		StartedAt:       utcPtr(r.StartedAt),
		FinishedAt:      utcPtr(r.FinishedAt),
		HeartbeatAt:     utcPtr(r.HeartbeatAt),
	}
}

// getFit reads a fit in tx, ENOTFOUND if missing.
func getFit(tx *gorm.DB, id int64) (*fitRow, error) {
	var r fitRow
	err := tx.Select(fitColumns).Where("id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "fit %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read fit %d: %w", id, err)
	}
	return &r, nil
}

// CreateFit stores a new fit in state queued and sets its ID, Status,
// CreatedAt and the progress fields. The project must exist (ENOTFOUND);
// Model must be set and Spec, when set, must be JSON (EINVALID).
func (d *DB) CreateFit(ctx context.Context, f *annotations.Fit) error {
	_, err := d.CreateFitWithin(ctx, f, 0)
	return err
}

// fitQuotaLockKey is the first key of the PostgreSQL advisory locks that
// serialise the fit submissions of one project (the second is the project
// id), so that two concurrent submissions cannot both pass the quota.
const fitQuotaLockKey = 0x0c0f17

// CreateFitWithin stores a new fit in state queued and enqueues its job
// (see annotations.FitStore): a fit the same as a queued or running one of
// the project (model, spec, labels version) is not stored again, *f is set
// to that one and duplicate is true; beyond the quota (maxActive > 0
// queued or running fits) nothing is stored and the error is ETOOMANY
// naming the limit. The count, the fit and its job are one transaction (on
// PostgreSQL under a per-project advisory lock), so concurrent submissions
// never exceed the quota. The job's priority is the project's active fits
// plus one (fitPriority): fair across projects.
func (d *DB) CreateFitWithin(ctx context.Context, f *annotations.Fit, maxActive int) (bool, error) {
	if strings.TrimSpace(f.Model) == "" {
		return false, annotations.Errorf(annotations.EINVALID, "fit: no model given")
	}
	if cleanText(f.Model) != f.Model || strings.ContainsFunc(f.Model, unicode.IsControl) {
		return false, annotations.Errorf(annotations.EINVALID, "fit: model name %q is not printable text", f.Model)
	}
	spec := string(f.Spec)
	if len(f.Spec) == 0 {
		spec = "{}"
	} else if !json.Valid(f.Spec) || cleanText(spec) != spec {
		return false, annotations.Errorf(annotations.EINVALID, "fit: spec is not valid JSON")
	}
	row := fitRow{
		ProjectID: f.ProjectID, Model: f.Model, Spec: spec, Seed: int64(f.Seed),
		Status: string(annotations.FitQueued), Message: cleanText(f.Message), CreatedAt: now(),
	}
	var dupID int64
	errDuplicate := errors.New("duplicate")
	err := d.write(ctx, withProject(f.ProjectID, func(tx *gorm.DB) error {
		if d.dialect == postgresDialect {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?, CAST(? AS integer))", fitQuotaLockKey, f.ProjectID%(1<<31)).Error; err != nil {
				return err
			}
		}
		var counts struct {
			Active        int64
			LabelsVersion int64
		}
		if err := tx.Raw(`SELECT (SELECT COUNT(*) FROM fits WHERE project_id = ? AND status IN (?, ?)) AS active,
			(SELECT labels_version FROM projects WHERE id = ?) AS labels_version`,
			f.ProjectID, string(annotations.FitQueued), string(annotations.FitRunning), f.ProjectID).Scan(&counts).Error; err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		var err error
		dupID, err = d.enqueueFit(ctx, tx, &row, counts.LabelsVersion, fitPriority(counts.Active))
		if err != nil {
			return err
		}
		if dupID != 0 {
			return errDuplicate // roll back the new fit
		}
		if maxActive > 0 && counts.Active >= int64(maxActive) {
			return annotations.Errorf(annotations.ETOOMANY,
				"project %d already has %d fits queued or running, the limit per project is %d: wait for one to finish or cancel one", f.ProjectID, counts.Active, maxActive)
		}
		return nil
	}))
	if errors.Is(err, errDuplicate) {
		dup, err := d.FindFitByID(ctx, dupID)
		if err != nil {
			return false, err
		}
		*f = *dup
		f.Duplicate = true
		return true, nil
	}
	if err != nil {
		return false, wrap(err, "create fit")
	}
	*f = *row.fit()
	return false, nil
}

// FindFitByID returns the fit (without its result), or ENOTFOUND.
func (d *DB) FindFitByID(ctx context.Context, id int64) (*annotations.Fit, error) {
	r, err := getFit(d.r.WithContext(ctx), id)
	if err != nil {
		return nil, wrap(err, "find fit %d", id)
	}
	f := r.fit()
	rows, err := fitChains(d.r.WithContext(ctx), id)
	if err != nil {
		return nil, wrap(err, "read the chains of fit %d", id)
	}
	for _, c := range rows {
		f.Chains = append(f.Chains, c.chain())
	}
	return f, nil
}

// ListFits returns the project's fits, newest first, without results.
func (d *DB) ListFits(ctx context.Context, projectID int64) ([]annotations.Fit, error) {
	var rows []fitRow
	err := d.read(ctx, withProject(projectID, func(tx *gorm.DB) error {
		return tx.Select(fitColumns).Where("project_id = ?", projectID).Order("id DESC").Find(&rows).Error
	}))
	if err != nil {
		return nil, wrap(err, "list fits of project %d", projectID)
	}
	out := make([]annotations.Fit, len(rows))
	for i := range rows {
		out[i] = *rows[i].fit()
	}
	return out, nil
}

// startFit moves fit id to running for attempt of its job by worker and
// returns it. A fit that is gone is ENOTFOUND, one that is no longer
// queued or running (cancelled before it started) ECONFLICT.
func (d *DB) startFit(ctx context.Context, id int64, worker string, attempt int) (*annotations.Fit, error) {
	return d.changeFit(ctx, id, "start", func(tx *gorm.DB, r *fitRow) (bool, error) {
		if annotations.FitStatus(r.Status).Terminal() {
			return false, annotations.Errorf(annotations.ECONFLICT, "fit %d is %s", id, r.Status)
		}
		return true, tx.Exec(`UPDATE fits SET status = ?, attempts = ?, worker = ?, started_at = ?, finished_at = NULL,
			progress = 0, eta_seconds = 0, max_rhat = 0, message = '' WHERE id = ?`,
			string(annotations.FitRunning), attempt, cleanText(worker), now(), id).Error
	})
}

// changeFit runs change on fit id's row in a write transaction and returns
// the fit as it is then (read again when change says that it wrote); verb
// names the change in errors ("start fit 7: ...").
func (d *DB) changeFit(ctx context.Context, id int64, verb string, change func(tx *gorm.DB, r *fitRow) (wrote bool, err error)) (*annotations.Fit, error) {
	var out *fitRow
	err := d.write(ctx, func(tx *gorm.DB) error {
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		wrote, err := change(tx, r)
		if err != nil || !wrote {
			out = r
			return err
		}
		out, err = getFit(tx, id)
		return err
	})
	if err != nil {
		return nil, wrap(err, "%s fit %d", verb, id)
	}
	return out.fit(), nil
}

// cleanText makes s storable in any text column: valid UTF-8 without NUL
// bytes (PostgreSQL rejects both). Messages may quote user data.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// finite returns v, or 0 (unknown) when v is not a finite non-negative
// number; SQLite cannot store NaN.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}

// UpdateFitProgress records the progress of a running fit and reports whether a cancel was requested. Progress must be in [0, 1]; a
// non-finite ETA or R-hat is stored as 0 (unknown). A fit that is not
// running is EINVALID (its worker should stop), a missing one ENOTFOUND.
func (d *DB) UpdateFitProgress(ctx context.Context, id int64, p annotations.FitProgress) (bool, error) {
	if math.IsNaN(p.Progress) || p.Progress < 0 || p.Progress > 1 {
		return false, annotations.Errorf(annotations.EINVALID, "fit %d: progress %v outside [0, 1]", id, p.Progress)
	}
	var cancel bool
	err := d.write(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE fits SET progress = ?, eta_seconds = ?, max_rhat = ?, message = ? WHERE id = ? AND status = ?",
			p.Progress, finite(p.ETASeconds), finite(p.MaxRhat), cleanText(p.Message), id, string(annotations.FitRunning))
		if res.Error != nil {
			return res.Error
		}
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		if res.RowsAffected == 0 {
			return annotations.Errorf(annotations.EINVALID, "fit %d is %s, not running", id, r.Status)
		}
		cancel = r.CancelRequested
		return nil
	})
	return cancel, wrap(err, "update fit %d", id)
}

// FinishFit moves a fit to a terminal state with its result (done) or the
// reason (failed, cancelled). A running fit may end in any terminal state, a
// queued one only as failed or cancelled; a finished fit cannot finish
// again (EINVALID).
func (d *DB) FinishFit(ctx context.Context, id int64, status annotations.FitStatus, message string, result []byte) error {
	if !status.Terminal() {
		return annotations.Errorf(annotations.EINVALID, "fit %d: %q is not a final state (expected done, failed or cancelled)", id, status)
	}
	if status == annotations.FitDone && result == nil {
		return annotations.Errorf(annotations.EINVALID, "fit %d: a done fit needs its result", id)
	}
	err := d.write(ctx, func(tx *gorm.DB) error {
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		from := annotations.FitStatus(r.Status)
		if from.Terminal() || (from == annotations.FitQueued && status == annotations.FitDone) {
			return annotations.Errorf(annotations.EINVALID, "fit %d is %s; it cannot become %s", id, from, status)
		}
		progress := r.Progress
		if status == annotations.FitDone {
			progress = 1
		}
		res := tx.Exec("UPDATE fits SET status = ?, message = ?, progress = ?, eta_seconds = 0, finished_at = ? WHERE id = ? AND status = ?",
			string(status), cleanText(message), progress, now(), id, r.Status)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("fit %d changed state while finishing", id)
		}
		if status == annotations.FitDone {
			if err := tx.Exec("DELETE FROM fit_results WHERE fit_id = ?", id).Error; err != nil {
				return err
			}
			if err := tx.Exec("INSERT INTO fit_results (fit_id, result) VALUES (?, ?)", id, result).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(err, "finish fit %d", id)
}

// RequestCancel cancels a queued fit and its job at once and asks a running
// one to stop (its next UpdateFitProgress reports the request; its job is
// cancelled too); finished fits are left as they are. It returns the fit as it now is.
func (d *DB) RequestCancel(ctx context.Context, id int64) (*annotations.Fit, error) {
	return d.changeFit(ctx, id, "cancel", func(tx *gorm.DB, r *fitRow) (bool, error) {
		if !annotations.FitStatus(r.Status).Terminal() {
			if err := d.cancelJob(ctx, tx, r); err != nil {
				return false, err
			}
		}
		var err error
		switch annotations.FitStatus(r.Status) {
		case annotations.FitQueued:
			err = tx.Exec("UPDATE fits SET status = ?, message = ?, finished_at = ? WHERE id = ?",
				string(annotations.FitCancelled), "cancelled before it started", now(), id).Error
		case annotations.FitRunning:
			var fanned bool
			if fanned, err = hasChains(tx, id); err == nil && fanned {
				// Its chain jobs are cancelled and the fit with them; the
				// running chains stop at their next progress write.
				err = d.endFanOutTx(ctx, tx, r, annotations.FitCancelled, "cancelled by request")
			} else if err == nil {
				err = tx.Exec("UPDATE fits SET cancel_requested = ? WHERE id = ?", true, id).Error
			}
		default:
			return false, nil
		}
		return true, err
	})
}

// requeueFit puts a running fit back in the queue (its job is retried),
// keeping its attempt count; a fit whose cancel was requested becomes
// cancelled instead. A fit that is not running is EINVALID.
func (d *DB) requeueFit(ctx context.Context, id int64, message string) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		if r.Status != string(annotations.FitRunning) {
			return annotations.Errorf(annotations.EINVALID, "fit %d is %s; only a running fit can be re-queued", id, r.Status)
		}
		return requeue(tx, r, cleanText(message))
	})
	return wrap(err, "requeue fit %d", id)
}

// requeue moves a running fit back to queued, or to cancelled when a cancel
// was requested.
func requeue(tx *gorm.DB, r *fitRow, message string) error {
	if r.CancelRequested {
		return tx.Exec("UPDATE fits SET status = ?, message = ?, finished_at = ?, cancel_requested = ? WHERE id = ?",
			string(annotations.FitCancelled), "cancelled", now(), false, r.ID).Error
	}
	return tx.Exec(`UPDATE fits SET status = ?, message = ?, worker = '', progress = 0, eta_seconds = 0, max_rhat = 0,
		started_at = NULL WHERE id = ?`,
		string(annotations.FitQueued), message, r.ID).Error
}

// DeleteFit removes a fit and its result. A running fit must be cancelled
// first (EINVALID).
func (d *DB) DeleteFit(ctx context.Context, id int64) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		if r.Status == string(annotations.FitRunning) {
			return annotations.Errorf(annotations.EINVALID, "fit %d is running; cancel it before deleting it", id)
		}
		if err := d.cancelJob(ctx, tx, r); err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM fit_results WHERE fit_id = ?", id).Error; err != nil {
			return err
		}
		return tx.Exec("DELETE FROM fits WHERE id = ?", id).Error
	})
	return wrap(err, "delete fit %d", id)
}

// FitResult returns the result document of a done fit; ENOTFOUND when the
// fit does not exist or has no result.
func (d *DB) FitResult(ctx context.Context, id int64) ([]byte, error) {
	var out []byte
	err := d.read(ctx, func(tx *gorm.DB) error {
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		var rows []struct{ Result []byte }
		if err := tx.Raw("SELECT result FROM fit_results WHERE fit_id = ?", id).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return annotations.Errorf(annotations.ENOTFOUND, "fit %d has no result (it is %s)", id, r.Status)
		}
		out = rows[0].Result
		return nil
	})
	if err != nil {
		return nil, wrap(err, "read result of fit %d", id)
	}
	return out, nil
}
