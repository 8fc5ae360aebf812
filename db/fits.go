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
	"gorm.io/gorm/clause"

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
}

func (fitRow) TableName() string { return "fits" }

// fitColumns are the columns of fits (results live in fit_results).
const fitColumns = "id, project_id, model, spec, seed, status, progress, eta_seconds, max_rhat, message, cancel_requested, attempts, worker, created_at, started_at, finished_at, heartbeat_at"

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
	return d.CreateFitWithin(ctx, f, 0)
}

// fitQuotaLockKey is the first key of the PostgreSQL advisory locks that
// serialise the fit submissions of one project (the second is the project
// id), so that two concurrent submissions cannot both pass the quota.
const fitQuotaLockKey = 0x0c0f17

// CreateFitWithin is CreateFit with a quota: when maxActive > 0 and the
// project already has maxActive fits queued or running, it stores nothing
// and returns ETOOMANY naming the limit. The count and the insert are one
// transaction (on PostgreSQL under a per-project advisory lock), so
// concurrent submissions never exceed the quota.
func (d *DB) CreateFitWithin(ctx context.Context, f *annotations.Fit, maxActive int) error {
	if strings.TrimSpace(f.Model) == "" {
		return annotations.Errorf(annotations.EINVALID, "fit: no model given")
	}
	if cleanText(f.Model) != f.Model || strings.ContainsFunc(f.Model, unicode.IsControl) {
		return annotations.Errorf(annotations.EINVALID, "fit: model name %q is not printable text", f.Model)
	}
	spec := string(f.Spec)
	if len(f.Spec) == 0 {
		spec = "{}"
	} else if !json.Valid(f.Spec) || cleanText(spec) != spec {
		return annotations.Errorf(annotations.EINVALID, "fit: spec is not valid JSON")
	}
	row := fitRow{
		ProjectID: f.ProjectID, Model: f.Model, Spec: spec, Seed: int64(f.Seed),
		Status: string(annotations.FitQueued), Message: cleanText(f.Message), CreatedAt: now(),
	}
	err := d.write(ctx, func(tx *gorm.DB) error {
		if err := projectExists(tx, f.ProjectID); err != nil {
			return err
		}
		if maxActive > 0 {
			if d.dialect == postgresDialect {
				if err := tx.Exec("SELECT pg_advisory_xact_lock(?, CAST(? AS integer))", fitQuotaLockKey, f.ProjectID%(1<<31)).Error; err != nil {
					return err
				}
			}
			var active int64
			if err := tx.Raw("SELECT COUNT(*) FROM fits WHERE project_id = ? AND status IN (?, ?)",
				f.ProjectID, string(annotations.FitQueued), string(annotations.FitRunning)).Scan(&active).Error; err != nil {
				return err
			}
			if active >= int64(maxActive) {
				return annotations.Errorf(annotations.ETOOMANY,
					"project %d already has %d fits queued or running, the limit per project is %d: wait for one to finish or cancel one", f.ProjectID, active, maxActive)
			}
		}
		return tx.Create(&row).Error
	})
	if err != nil {
		return wrap(err, "create fit")
	}
	*f = *row.fit()
	return nil
}

// FindFitByID returns the fit (without its result), or ENOTFOUND.
func (d *DB) FindFitByID(ctx context.Context, id int64) (*annotations.Fit, error) {
	r, err := getFit(d.r.WithContext(ctx), id)
	if err != nil {
		return nil, wrap(err, "find fit %d", id)
	}
	return r.fit(), nil
}

// ListFits returns the project's fits, newest first, without results.
func (d *DB) ListFits(ctx context.Context, projectID int64) ([]annotations.Fit, error) {
	var rows []fitRow
	err := d.read(ctx, func(tx *gorm.DB) error {
		if err := projectExists(tx, projectID); err != nil {
			return err
		}
		return tx.Select(fitColumns).Where("project_id = ?", projectID).Order("id DESC").Find(&rows).Error
	})
	if err != nil {
		return nil, wrap(err, "list fits of project %d", projectID)
	}
	out := make([]annotations.Fit, len(rows))
	for i := range rows {
		out[i] = *rows[i].fit()
	}
	return out, nil
}

// claimOrder is the queue's order, fair across projects (round robin by
// project rather than first come, first served): first the fits of
// projects with the fewest running fits, then those of the project served
// least recently (never served first, then by the start of its last
// started fit), and within a project the oldest. So one project's backlog
// cannot starve another's fit: with one worker, projects take turns; with
// more, each project with queued fits gets a worker before any gets two.
const claimOrder = `ORDER BY
	(SELECT COUNT(*) FROM fits r WHERE r.project_id = f.project_id AND r.status = ?),
	(SELECT MAX(s.started_at) FROM fits s WHERE s.project_id = f.project_id) IS NOT NULL,
	(SELECT MAX(s.started_at) FROM fits s WHERE s.project_id = f.project_id),
	f.id`

// ClaimFit moves the next queued fit to running for worker: it counts an
// attempt and sets Worker, StartedAt and HeartbeatAt. It returns nil, nil
// when no fit is queued. The next fit is chosen fairly across projects
// (claimOrder): the oldest queued fit of the project with the fewest
// running fits, least recently served. On SQLite the claim is one
// IMMEDIATE transaction (writers are serialised by the database lock,
// across processes too); on PostgreSQL the queued row is taken with SELECT
// ... FOR UPDATE SKIP LOCKED, so concurrent workers of any number of
// processes claim different fits.
func (d *DB) ClaimFit(ctx context.Context, worker string) (*annotations.Fit, error) {
	var claimed *fitRow
	err := d.write(ctx, func(tx *gorm.DB) error {
		q := "SELECT f.id FROM fits f WHERE f.status = ? " + claimOrder + " LIMIT 1"
		if d.dialect == postgresDialect {
			q += " FOR UPDATE OF f SKIP LOCKED"
		}
		var ids []int64
		if err := tx.Raw(q, string(annotations.FitQueued), string(annotations.FitRunning)).Scan(&ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		t := now()
		res := tx.Exec(`UPDATE fits SET status = ?, attempts = attempts + 1, worker = ?, started_at = ?, heartbeat_at = ?,
			finished_at = NULL, progress = 0, eta_seconds = 0, max_rhat = 0, message = '', cancel_requested = ?
			WHERE id = ? AND status = ?`,
			string(annotations.FitRunning), cleanText(worker), t, t, false, ids[0], string(annotations.FitQueued))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return fmt.Errorf("fit %d changed state while being claimed", ids[0])
		}
		var err error
		claimed, err = getFit(tx, ids[0])
		return err
	})
	if err != nil {
		return nil, wrap(err, "claim fit")
	}
	if claimed == nil {
		return nil, nil
	}
	return claimed.fit(), nil
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

// UpdateFitProgress records progress and a heartbeat for a running fit and
// reports whether a cancel was requested. Progress must be in [0, 1]; a
// non-finite ETA or R-hat is stored as 0 (unknown). A fit that is not
// running is EINVALID (its worker should stop), a missing one ENOTFOUND.
func (d *DB) UpdateFitProgress(ctx context.Context, id int64, p annotations.FitProgress) (bool, error) {
	if math.IsNaN(p.Progress) || p.Progress < 0 || p.Progress > 1 {
		return false, annotations.Errorf(annotations.EINVALID, "fit %d: progress %v outside [0, 1]", id, p.Progress)
	}
	var cancel bool
	err := d.write(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE fits SET progress = ?, eta_seconds = ?, max_rhat = ?, message = ?, heartbeat_at = ? WHERE id = ? AND status = ?",
			p.Progress, finite(p.ETASeconds), finite(p.MaxRhat), cleanText(p.Message), now(), id, string(annotations.FitRunning))
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
		res := tx.Exec("UPDATE fits SET status = ?, message = ?, progress = ?, eta_seconds = 0, finished_at = ?, heartbeat_at = ? WHERE id = ? AND status = ?",
			string(status), cleanText(message), progress, now(), now(), id, r.Status)
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

// RequestCancel cancels a queued fit at once and asks a running one to stop
// (its next UpdateFitProgress reports the request); finished fits are left
// as they are. It returns the fit as it now is.
func (d *DB) RequestCancel(ctx context.Context, id int64) (*annotations.Fit, error) {
	var out *fitRow
	err := d.write(ctx, func(tx *gorm.DB) error {
		r, err := getFit(tx, id)
		if err != nil {
			return err
		}
		switch annotations.FitStatus(r.Status) {
		case annotations.FitQueued:
			err = tx.Exec("UPDATE fits SET status = ?, message = ?, finished_at = ? WHERE id = ?",
				string(annotations.FitCancelled), "cancelled before it started", now(), id).Error
		case annotations.FitRunning:
			err = tx.Exec("UPDATE fits SET cancel_requested = ? WHERE id = ?", true, id).Error
		default:
			out = r
			return nil
		}
		if err != nil {
			return err
		}
		out, err = getFit(tx, id)
		return err
	})
	if err != nil {
		return nil, wrap(err, "cancel fit %d", id)
	}
	return out.fit(), nil
}

// Requeue puts a running fit back in the queue (graceful shutdown), keeping
// its attempt count; a fit whose cancel was requested becomes cancelled
// instead. A fit that is not running is EINVALID.
func (d *DB) Requeue(ctx context.Context, id int64, message string) error {
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
		started_at = NULL, heartbeat_at = NULL WHERE id = ?`,
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

// RecoverStale finds running fits whose worker stopped sending heartbeats
// for longer than staleAfter (staleAfter <= 0: every running fit, for a
// single process at start-up) and re-queues them, or fails them with a
// reason once they have been attempted maxAttempts times (maxAttempts <= 0:
// never). A stale fit whose cancel was requested becomes cancelled and is
// counted with the failed ones.
func (d *DB) RecoverStale(ctx context.Context, staleAfter time.Duration, maxAttempts int) (requeued, failed int, err error) {
	err = d.write(ctx, func(tx *gorm.DB) error {
		requeued, failed = 0, 0
		q := tx.Select(fitColumns).Where("status = ?", string(annotations.FitRunning)).Order("id")
		if d.dialect == postgresDialect {
			// Skip fits whose rows other processes hold right now (live
			// workers updating progress).
			q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
		}
		var rows []fitRow
		if err := q.Find(&rows).Error; err != nil {
			return err
		}
		t := now()
		for i := range rows {
			r := &rows[i]
			last := r.HeartbeatAt
			if last == nil {
				last = r.StartedAt
			}
			if staleAfter > 0 && last != nil && t.Sub(*last) <= staleAfter {
				continue
			}
			seen := "never"
			if last != nil {
				seen = last.UTC().Format(time.RFC3339)
			}
			switch {
			case r.CancelRequested:
				if err := requeue(tx, r, ""); err != nil {
					return err
				}
				failed++
			case maxAttempts > 0 && r.Attempts >= maxAttempts:
				msg := fmt.Sprintf("worker %q stopped responding (last heartbeat %s); gave up after %d attempts", r.Worker, seen, r.Attempts)
				if err := tx.Exec("UPDATE fits SET status = ?, message = ?, finished_at = ? WHERE id = ?",
					string(annotations.FitFailed), msg, t, r.ID).Error; err != nil {
					return err
				}
				failed++
			default:
				msg := fmt.Sprintf("re-queued: worker %q stopped responding (last heartbeat %s; attempt %d)", r.Worker, seen, r.Attempts)
				if err := requeue(tx, r, msg); err != nil {
					return err
				}
				requeued++
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, wrap(err, "recover stale fits")
	}
	if requeued+failed > 0 {
		d.log.InfoContext(ctx, "db: recovered stale fits", "requeued", requeued, "failed", failed)
	}
	return requeued, failed, nil
}
