package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
	"gorm.io/gorm"

	"concord/annotations"
)

// Agreement analyses as jobs (the server's analyses of projects too large
// to analyse within a request): StartAgreement stores a running analysis,
// keyed by project and options (which name the labels' version), and its
// plan job (kind "agreement", queue "agreement") in one transaction. The
// plan job reads the labels and plans the bootstrap (the runner's
// PlanAgreement), then, in one transaction, enqueues one part job per
// range of replicates (kind "agreement_part") and completes its own: the
// parts of fanout.go, agreementGroup, as a fit's chains and an
// evaluation's folds. The part that completes last enqueues the combine
// job (kind "agreement_combine"), which runs the analysis with every
// part's replicates and stores the result in the analysis' row, where any
// API node reads it. An analysis without a bootstrap has no parts: the
// plan job enqueues the combine at once.

// agreementArgs are the arguments of the plan and combine jobs; a part's
// add its index and replicates.
type agreementArgs struct {
	AgreementID int64 `json:"agreement_id"`
	ProjectID   int64 `json:"project_id"`
}

func (agreementArgs) Kind() string { return agreementKind }

type agreementPartArgs struct {
	AgreementID int64 `json:"agreement_id"`
	ProjectID   int64 `json:"project_id"`
	Part        int   `json:"part"`
	Lo          int   `json:"lo"`
	Hi          int   `json:"hi"`
}

func (agreementPartArgs) Kind() string { return agreementPartKind }

type agreementCombineArgs agreementArgs

func (agreementCombineArgs) Kind() string { return agreementCombineKind }

var agreementGroup = fanGroup{parents: "agreements", parts: "agreement_parts", parentCol: "agreement_id", indexCol: "part",
	parent: "agreement analysis", part: "part"}

// agreementOpts are the insert options of agreement jobs.
var agreementOpts = &river.InsertOpts{Queue: agreementQueue, MaxAttempts: fitJobMaxAttempts}

type agreementRow struct {
	ID            int64
	ProjectID     int64
	LabelsVersion int64
	OptionsKey    string
	Options       string
	Labels        int
	Status        string
	Progress      float64
	Message       string
	ErrorCode     string
	Replicates    int
	Parts         int
	JobID         int64
	CreatedAt     time.Time
	FinishedAt    *time.Time
}

const agreementColumns = "id, project_id, labels_version, options_key, options, labels, status, progress, message, error_code, replicates, parts, job_id, created_at, finished_at"

func getAgreement(tx *gorm.DB, id int64) (*agreementRow, error) {
	var r agreementRow
	if err := tx.Raw("SELECT "+agreementColumns+" FROM agreements WHERE id = ?", id).Scan(&r).Error; err != nil {
		return nil, fmt.Errorf("read agreement analysis %d: %w", id, err)
	}
	if r.ID == 0 {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "agreement analysis %d not found", id)
	}
	return &r, nil
}

// runningAgreement reads analysis id in tx: ENOTFOUND when it is gone,
// ECONFLICT when it is not running.
func runningAgreement(tx *gorm.DB, id int64) (*agreementRow, error) {
	return running(tx, id, getAgreement, "agreement analysis")
}

func (r *agreementRow) job() *annotations.AgreementJob {
	return &annotations.AgreementJob{ID: r.ID, ProjectID: r.ProjectID, LabelsVersion: r.LabelsVersion, Key: r.OptionsKey,
		Options: []byte(r.Options), Labels: r.Labels, Status: annotations.FitStatus(r.Status), Progress: r.Progress,
		Message: r.Message, ErrorCode: r.ErrorCode, Replicates: r.Replicates, CreatedAt: utc(r.CreatedAt), FinishedAt: utcPtr(r.FinishedAt)}
}

// partRange is the range of replicates of part i of n over B replicates.
func partRange(B, n, i int) (lo, hi int) {
	return i * B / n, (i + 1) * B / n
}

// agreementsKept is the most finished analyses kept per project (their
// results), the newest.
const agreementsKept = 16

// StartAgreement finds or starts an agreement analysis (see
// annotations.AgreementStore). A failed analysis without an error code is
// answered once: StartAgreement returns it and deletes it, so that the
// next request starts it again.
func (d *DB) StartAgreement(ctx context.Context, a *annotations.AgreementJob, limit int) (bool, error) {
	created := false
	err := d.write(ctx, func(tx *gorm.DB) error {
		created = false
		// Concurrent requests for one project take turns (PostgreSQL).
		if _, err := d.lockProject(tx, a.ProjectID); err != nil {
			return err
		}
		var rows []agreementRow
		if err := tx.Raw("SELECT "+agreementColumns+" FROM agreements WHERE project_id = ? AND options_key = ?", a.ProjectID, a.Key).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 1 {
			r := &rows[0]
			if answered, err := joinStored(tx, "agreements", r.ID, r.Status, r.ErrorCode, func() { *a = *r.job() }, &a.Result); answered || err != nil {
				return err
			}
		}
		if limit > 0 {
			var n int64
			if err := tx.Raw("SELECT COUNT(*) FROM agreements WHERE project_id = ? AND status = ?", a.ProjectID, string(annotations.FitRunning)).Scan(&n).Error; err != nil {
				return err
			}
			if n >= int64(limit) {
				return annotations.Errorf(annotations.ETOOMANY, "the project has %d agreement analyses with other options queued or running in the background, the most it may have at once: ask again when one is done (their routes answer 200), or ask for the options of one of them", n)
			}
		}
		// The analyses of earlier labels, and finished ones beyond the
		// newest agreementsKept, go.
		if err := tx.Exec("DELETE FROM agreements WHERE project_id = ? AND labels_version < ? AND status <> ?", a.ProjectID, a.LabelsVersion, string(annotations.FitRunning)).Error; err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM agreements WHERE project_id = ? AND status <> ? AND id NOT IN (SELECT id FROM agreements WHERE project_id = ? AND status <> ? ORDER BY id DESC LIMIT ?)",
			a.ProjectID, string(annotations.FitRunning), a.ProjectID, string(annotations.FitRunning), agreementsKept-1).Error; err != nil {
			return err
		}
		t := now()
		const ins = "INSERT INTO agreements (project_id, labels_version, options_key, options, labels, status, message, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
		args := []any{a.ProjectID, a.LabelsVersion, a.Key, string(a.Options), a.Labels, string(annotations.FitRunning), "queued", t}
		if err := insertID(d, tx, ins, args, &a.ID); err != nil {
			return err
		}
		stx, err := sqlTx(tx)
		if err != nil {
			return err
		}
		res, err := d.jobs.client.InsertTx(ctx, stx, agreementArgs{AgreementID: a.ID, ProjectID: a.ProjectID}, agreementOpts)
		if err != nil {
			return fmt.Errorf("enqueue agreement analysis %d: %w", a.ID, err)
		}
		a.Status, a.Message, a.CreatedAt, a.Progress, a.ErrorCode, a.Replicates, a.Result = annotations.FitRunning, "queued", t, 0, "", 0, nil
		created = true
		return tx.Exec("UPDATE agreements SET job_id = ? WHERE id = ?", res.Job.ID, a.ID).Error
	})
	return created, wrap(err, "start agreement analysis")
}

// FindAgreement returns an agreement analysis with its parts and result.
func (d *DB) FindAgreement(ctx context.Context, id int64) (*annotations.AgreementJob, error) {
	var out *annotations.AgreementJob
	err := d.read(ctx, func(tx *gorm.DB) error {
		r, err := getAgreement(tx, id)
		if err != nil {
			return err
		}
		out = r.job()
		if err := tx.Raw("SELECT part, state, worker, attempts, job_id, progress FROM agreement_parts WHERE agreement_id = ? ORDER BY part", id).Scan(&out.Parts).Error; err != nil {
			return err
		}
		for i := range out.Parts {
			out.Parts[i].Lo, out.Parts[i].Hi = partRange(r.Replicates, max(r.Parts, 1), out.Parts[i].Part)
		}
		return tx.Raw("SELECT result FROM agreements WHERE id = ?", id).Row().Scan(&out.Result)
	})
	return out, wrap(err, "find agreement analysis %d", id)
}

// DoneAgreement returns the result of the project's done analysis of key,
// or nil (see annotations.AgreementStore).
func (d *DB) DoneAgreement(ctx context.Context, projectID int64, key string) ([]byte, error) {
	var rows []struct{ Result []byte }
	err := d.r.WithContext(ctx).Raw("SELECT result FROM agreements WHERE project_id = ? AND options_key = ? AND status = ?", projectID, key, string(annotations.FitDone)).Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return nil, wrap(err, "read agreement analysis")
	}
	return rows[0].Result, nil
}

// CancelAgreements cancels the project's running agreement analyses and
// their jobs.
func (d *DB) CancelAgreements(ctx context.Context, projectID int64) (int, error) {
	n, err := d.cancelRunning(ctx, "agreements", "project_id", projectID, d.endAgreementTx)
	return n, wrap(err, "cancel the agreement analyses of project %d", projectID)
}

// cancelRunning cancels, in one transaction, the running rows of table
// (agreements, exports) whose owner column is ownerID, each through end
// (the table's end...Tx, which also cancels the row's jobs), and returns
// how many it cancelled.
func (d *DB) cancelRunning(ctx context.Context, table, owner string, ownerID int64, end func(ctx context.Context, tx *gorm.DB, id int64, status annotations.FitStatus, message, code string) error) (int, error) {
	n := 0
	err := d.write(ctx, func(tx *gorm.DB) error {
		n = 0
		var ids []int64
		if err := tx.Raw("SELECT id FROM "+table+" WHERE "+owner+" = ? AND status = ?", ownerID, string(annotations.FitRunning)).Scan(&ids).Error; err != nil {
			return err
		}
		for _, id := range ids {
			if err := end(ctx, tx, id, annotations.FitCancelled, "cancelled by request", ""); err != nil {
				return err
			}
		}
		n = len(ids)
		return nil
	})
	return n, err
}

// endAgreement moves a running analysis to a terminal state (code: the
// error code of a failure on the data, kept) and cancels its jobs that
// have not ended.
func (d *DB) endAgreement(ctx context.Context, id int64, status annotations.FitStatus, message, code string) error {
	return wrap(d.write(ctx, func(tx *gorm.DB) error {
		return d.endAgreementTx(ctx, tx, id, status, message, code)
	}), "end agreement analysis %d", id)
}

func (d *DB) endAgreementTx(ctx context.Context, tx *gorm.DB, id int64, status annotations.FitStatus, message, code string) error {
	return d.endParentTx(ctx, tx, &agreementGroup, id, status, message, ", error_code = ?", code)
}

// agreementMessage records the phase of a running analysis; ECONFLICT or
// ENOTFOUND when it is no longer running.
func (d *DB) agreementMessage(ctx context.Context, id int64, message string) error {
	return wrap(d.write(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("UPDATE agreements SET message = ? WHERE id = ? AND status = ?", cleanText(message), id, string(annotations.FitRunning))
		if res.Error != nil || res.RowsAffected == 1 {
			return res.Error
		}
		_, err := runningAgreement(tx, id)
		return err
	}), "progress of agreement analysis %d", id)
}

// agreementProgressTx writes an analysis' progress and phase from its
// parts'.
func agreementProgressTx(tx *gorm.DB, r *agreementRow) error {
	t, err := tallyParts(tx, &agreementGroup, r.ID)
	if err != nil {
		return err
	}
	return tx.Exec("UPDATE agreements SET progress = ?, message = ? WHERE id = ? AND status = ?",
		t.fraction(0.95), agreementPhase(t, r.Replicates, now().Sub(r.CreatedAt)), r.ID, string(annotations.FitRunning)).Error
}

// agreementPhase is the phase of an analysis whose bootstrap of B
// replicates runs as the parts t, elapsed since it was asked for: queued
// until a part runs, then analysing, with the replicates done (the parts'
// progress) and the time left at the rate so far.
func agreementPhase(t partTally, B int, elapsed time.Duration) string {
	f := t.sum / float64(max(t.parts, 1))
	phase := "queued"
	if t.running > 0 || t.done > 0 {
		phase = "analysing"
	}
	eta := ""
	if f > 0 && f < 1 && phase != "queued" {
		left := time.Duration(float64(elapsed) * (1 - f) / f)
		eta = fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	return fmt.Sprintf("%s: bootstrap %d of %d replicates%s (%d parts: %d done, %d running on %d workers, %d queued)",
		phase, int(math.Round(f*float64(B))), B, eta, t.parts, t.done, t.running, t.workers, t.queued)
}

// workAgreement works the plan jobs of agreement analyses.
func workAgreement(ctx context.Context, w *jobWorker[agreementArgs, annotations.AgreementRunner], job *river.Job[agreementArgs]) error {
	d, id := w.d, job.Args.AgreementID
	var a *annotations.AgreementJob
	err := d.read(ctx, func(tx *gorm.DB) error {
		r, err := runningAgreement(tx, id)
		if err == nil {
			a = r.job()
		}
		return err
	})
	if c := annotations.ErrorCode(err); c == annotations.ENOTFOUND || c == annotations.ECONFLICT {
		return river.JobCancel(err)
	} else if err != nil {
		return err
	}
	if err := d.agreementMessage(ctx, id, "loading labels"); err != nil {
		return agreementStopped(err)
	}
	B, n, err := w.run.PlanAgreement(ctx, a)
	if err != nil {
		return d.agreementJobFailed(ctx, job.Attempt, w.opts, id, "", err)
	}
	return agreementStopped(d.write(ctx, func(tx *gorm.DB) error {
		if err := d.lockParent(tx, &agreementGroup, id); err != nil {
			return err
		}
		r, err := runningAgreement(tx, id)
		if err != nil {
			return err
		}
		if err := tx.Exec("DELETE FROM agreement_parts WHERE agreement_id = ?", id).Error; err != nil {
			return err
		}
		r.Replicates, r.Parts = max(B, 0), n
		if err := tx.Exec("UPDATE agreements SET replicates = ?, parts = ? WHERE id = ?", r.Replicates, n, id).Error; err != nil {
			return err
		}
		if n > 0 {
			if err := d.insertParts(ctx, tx, &agreementGroup, id, n, func(i int) river.JobArgs {
				lo, hi := partRange(r.Replicates, n, i)
				return agreementPartArgs{AgreementID: id, ProjectID: r.ProjectID, Part: i, Lo: lo, Hi: hi}
			}, agreementOpts); err != nil {
				return err
			}
			if err := agreementProgressTx(tx, r); err != nil {
				return err
			}
		} else if err := d.enqueueAgreementCombine(ctx, tx, r); err != nil {
			return err
		}
		return completeTx(ctx, tx, job)
	}))
}

// agreementStopped is the end of a job whose analysis is no longer
// running (cancelled, failed elsewhere, deleted): cancelled, not retried;
// other errors (the database) are retried.
func agreementStopped(err error) error {
	if stopsPart(err) {
		return river.JobCancel(err)
	}
	return err
}

// agreementJobFailed ends the plan or combine job (its attempt) that
// failed with err: retried while attempts are left when err wraps
// ErrRetry, else the analysis fails (with err's code unless internal: a
// failure the next request retries).
func (d *DB) agreementJobFailed(ctx context.Context, attempt int, opts annotations.WorkerOptions, id int64, what string, err error) error {
	if stopsPart(err) {
		return river.JobCancel(err)
	}
	if errors.Is(err, annotations.ErrRetry) && attempt < opts.MaxAttempts {
		return err
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	code := annotations.ErrorCode(err)
	if code == annotations.EINTERNAL || errors.Is(err, annotations.ErrRetry) {
		code = ""
	}
	if eerr := d.endAgreement(bg, id, annotations.FitFailed, what+annotations.ErrorMessage(err), code); eerr != nil {
		d.log.Error("failing an agreement analysis", "agreement", id, "err", eerr)
	}
	return river.JobCancel(err)
}

// enqueueAgreementCombine enqueues the combine job of analysis r in tx.
func (d *DB) enqueueAgreementCombine(ctx context.Context, tx *gorm.DB, r *agreementRow) error {
	cj, err := d.enqueueCombine(ctx, tx, agreementCombineArgs{AgreementID: r.ID, ProjectID: r.ProjectID}, agreementOpts)
	if err != nil {
		return err
	}
	return tx.Exec("UPDATE agreements SET job_id = ?, progress = 0.95, message = ? WHERE id = ?", cj, "analysing", r.ID).Error
}

// workAgreementPart works the part jobs of agreement analyses.
func workAgreementPart(ctx context.Context, w *jobWorker[agreementPartArgs, annotations.AgreementRunner], job *river.Job[agreementPartArgs]) error {
	d, a := w.d, job.Args
	g := &agreementGroup
	var an *annotations.AgreementJob
	return workPart(ctx, d, job, w.opts, partSteps{
		name: fmt.Sprintf("bootstrap replicates %d..%d", a.Lo, a.Hi-1),
		start: func(ctx context.Context) error {
			return wrap(d.write(ctx, func(tx *gorm.DB) error {
				r, err := runningAgreement(tx, a.AgreementID)
				if err != nil {
					return err
				}
				an = r.job()
				if err := startPart(tx, g, a.AgreementID, a.Part, w.opts.Name, job.Attempt, ""); err != nil {
					return err
				}
				return agreementProgressTx(tx, r)
			}), "start part %d of agreement analysis %d", a.Part, a.AgreementID)
		},
		run: func(ctx context.Context, stop func(error) error) ([]byte, error) {
			return w.run.RunAgreementPart(ctx, an, a.Lo, a.Hi, func(p float64) error {
				return stop(d.agreementPartProgress(ctx, job, w.opts.Name, p))
			})
		},
		finish: func(ctx context.Context, output []byte) error {
			return wrap(d.write(ctx, func(tx *gorm.DB) error {
				if err := d.lockParent(tx, g, a.AgreementID); err != nil {
					return err
				}
				r, err := runningAgreement(tx, a.AgreementID)
				if err != nil {
					return err
				}
				left, err := finishPart(ctx, tx, g, job, a.AgreementID, a.Part, w.opts.Name, output, "")
				if err != nil {
					return err
				}
				if left > 0 {
					return agreementProgressTx(tx, r)
				}
				return d.enqueueAgreementCombine(ctx, tx, r)
			}), "finish part %d of agreement analysis %d", a.Part, a.AgreementID)
		},
		group: g, parent: a.AgreementID, part: a.Part,
		end: func(ctx context.Context, status annotations.FitStatus, message string) error {
			return d.endAgreement(ctx, a.AgreementID, status, message, "")
		},
	})
}

// agreementPartProgress records a part's progress and the analysis' (as
// foldProgress); an error says the part should stop.
func (d *DB) agreementPartProgress(ctx context.Context, job *river.Job[agreementPartArgs], worker string, p float64) error {
	a := job.Args
	return d.recordPartProgress(ctx, &agreementGroup, a.AgreementID, a.Part, worker, job.Attempt, p, func(tx *gorm.DB) (func() error, error) {
		r, err := runningAgreement(tx, a.AgreementID)
		if err != nil {
			return nil, err
		}
		return func() error { return agreementProgressTx(tx, r) }, nil
	})
}

// workAgreementCombine works the combine jobs of agreement analyses.
func workAgreementCombine(ctx context.Context, w *jobWorker[agreementCombineArgs, annotations.AgreementRunner], job *river.Job[agreementCombineArgs]) error {
	d, id := w.d, job.Args.AgreementID
	var a *annotations.AgreementJob
	var outputs [][]byte
	err := d.read(ctx, func(tx *gorm.DB) error {
		r, err := runningAgreement(tx, id)
		if err != nil {
			return err
		}
		a = r.job()
		if r.Parts > 0 {
			outputs, err = partOutputs(tx, &agreementGroup, id)
		}
		return err
	})
	if err != nil {
		return combineReadErr(err)
	}
	res, err := w.run.CombineAgreement(ctx, a, outputs, func(phase string) error {
		return d.agreementMessage(ctx, id, phase)
	})
	if err != nil {
		return d.agreementJobFailed(ctx, job.Attempt, w.opts, id, "", err)
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return wrap(d.write(bg, func(tx *gorm.DB) error {
		return finishParentTx(tx, &agreementGroup, id, res)
	}), "finish agreement analysis %d", id)
}

// rescueAgreementJob adds the agreement job of a dead worker to the
// rescue p (see rescueGroupJob).
func (d *DB) rescueAgreementJob(ctx context.Context, tx *gorm.DB, p *riverdriver.JobRescueManyParams, job *rivertype.JobRow, t time.Time, reason string, maxAttempts int) error {
	var args agreementPartArgs // agreement_id of every kind, the range of parts
	if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
		return fmt.Errorf("job %d: %w", job.ID, err)
	}
	part := -1
	switch job.Kind {
	case agreementPartKind:
		part = args.Part
		reason = fmt.Sprintf("bootstrap replicates %d..%d: %s", args.Lo, args.Hi-1, reason)
	case agreementCombineKind:
		reason = "combining the bootstrap's parts: " + reason
	default:
		reason = "planning the analysis: " + reason
	}
	return d.rescueGroupJob(tx, p, job, t, reason, maxAttempts, &agreementGroup, args.AgreementID, part, func(msg string) error {
		return d.endAgreementTx(ctx, tx, args.AgreementID, annotations.FitFailed, msg, "")
	})
}

// joinStored answers a start request (StartAgreement, StartExport) from the
// stored job row of its key: a cancelled one is deleted and the request
// starts anew (answered false); a failed one without an error code is
// answered once and deleted, so that the next request starts it again; any
// other is joined, with its result read when it is done. answer copies the
// row into the request's job.
func joinStored(tx *gorm.DB, table string, id int64, status, errorCode string, answer func(), result *[]byte) (bool, error) {
	switch {
	case status == string(annotations.FitCancelled):
		return false, tx.Exec("DELETE FROM "+table+" WHERE id = ?", id).Error
	case status == string(annotations.FitFailed) && errorCode == "":
		answer()
		return true, tx.Exec("DELETE FROM "+table+" WHERE id = ?", id).Error
	}
	answer()
	if status != string(annotations.FitDone) {
		return true, nil
	}
	return true, tx.Raw("SELECT result FROM "+table+" WHERE id = ?", id).Row().Scan(result)
}
