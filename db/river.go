package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"gorm.io/gorm"

	"concord/annotations"
)

// Background jobs on River (github.com/riverqueue/river).
//
// A fit is a River job of kind "fit" in queue "fits", inserted in the
// transaction that stores the fit (CreateFitWithin), so that a fit is
// queued if and only if its job is. River claims jobs for the workers,
// retries failed attempts with backoff, keeps jobs unique and cancels them;
// the fits table stays the user-facing record (state, progress, ETA,
// result).
//
// On SQLite River works through riversqlite on its own handle on the
// database file with one connection (the driver's advice), next to the
// application's writer and readers; on PostgreSQL through
// riverdatabasesql on the application's pool (pgx's database/sql driver),
// so that both share the transaction type *sql.Tx and a job is inserted in
// the application's transaction. River polls for jobs (PollOnly): the
// database/sql driver has no LISTEN.
//
// Two policies are ours, on top of River:
//
//   - Fairness across projects: a fit's job priority is the number of fits
//     its project had queued or running when it was submitted, plus one
//     (River's priorities are 1 to 4, 1 first). A project's first fits go
//     before another project's backlog, so one key filling its quota
//     cannot starve the others.
//   - Liveness of workers: River's own rescue of stuck jobs is by age,
//     which would cut off a healthy long fit; it is turned off (a year).
//     Instead every worker process records that it is alive (table
//     workers) every StaleAfter/4, and every worker process looks every
//     StaleAfter/4 for running jobs whose worker has not been seen for
//     StaleAfter: those are rescued (River's JobRescueMany: retryable with
//     backoff, or discarded once the attempts are spent) and their fit is
//     put back in the queue (or failed). A fit is never cut off while its
//     worker lives, however long it runs.

// The kinds of River jobs, one per arguments type (fitArgs, chainArgs,
// combineArgs, evalFoldArgs, evalCombineArgs, agreementArgs,
// agreementPartArgs, agreementCombineArgs, exportArgs), and their queues:
// a fit's jobs and an evaluation's in fitQueue, an agreement analysis' in
// agreementQueue, exports in exportQueue.
const (
	fitKind              = "fit"
	chainKind            = "fit_chain"
	combineKind          = "fit_combine"
	evalFoldKind         = "eval_fold"
	evalCombineKind      = "eval_combine"
	agreementKind        = "agreement"
	agreementPartKind    = "agreement_part"
	agreementCombineKind = "agreement_combine"
	exportKind           = "export"

	fitQueue       = "fits"
	agreementQueue = "agreement"
	exportQueue    = "export"
)

// Queues are the queues of the job engine: fits (with their chains) and
// evaluations' folds; agreement analyses; exports of fits.
var Queues = []string{fitQueue, agreementQueue, exportQueue}

// fitArgs are the arguments of a fit job. A job is unique by project and
// key (the model, the spec and the project's labels version) among the
// jobs not yet finished.
type fitArgs struct {
	FitID     int64  `json:"fit_id"`
	ProjectID int64  `json:"project_id" river:"unique"`
	Key       string `json:"key" river:"unique"`
}

func (fitArgs) Kind() string { return fitKind }

// fitJobMaxAttempts is River's attempt limit of a fit job; the workers'
// own limit (WorkerOptions.MaxAttempts, lower) decides first.
const fitJobMaxAttempts = 100

// uniqueStates are the job states in which a second job of the same fit is
// a duplicate: every state before the end.
var uniqueStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

// riverJobs is a DB's handle on River.
type riverJobs struct {
	driver riverdriver.Driver[*sql.Tx]
	// client inserts, lists and cancels jobs (it works none).
	client *river.Client[*sql.Tx]
	// pool is River's own connection to a SQLite file (nil otherwise).
	pool *sql.DB
}

// openRiver sets up River for d: for a SQLite file, its own handle with
// one connection (wdsn: the writer's DSN); for an in-memory SQLite
// database, the writer's connection; for PostgreSQL, the pool.
func (d *DB) openRiver(wdsn string, memory bool) error {
	switch {
	case d.dialect == postgresDialect:
		d.jobs.driver = riverdatabasesql.New(d.pools[0])
	case memory:
		d.jobs.driver = riversqlite.New(d.pools[0])
	default:
		p, err := sql.Open("sqlite3", wdsn)
		if err != nil {
			return fmt.Errorf("db: River's connection: %w", err)
		}
		p.SetMaxOpenConns(1)
		p.SetMaxIdleConns(1)
		p.SetConnMaxLifetime(0)
		p.SetConnMaxIdleTime(0)
		d.jobs.pool = p
		d.pools = append(d.pools, p)
		d.jobs.driver = riversqlite.New(p)
	}
	c, err := river.NewClient(d.jobs.driver, &river.Config{Logger: d.log, MaxAttempts: fitJobMaxAttempts})
	if err != nil {
		return fmt.Errorf("db: River client: %w", err)
	}
	d.jobs.client = c
	return nil
}

// migrateRiverTx brings River's schema up to date in tx (SQLite).
func (d *DB) migrateRiverTx(ctx context.Context, tx *gorm.DB) error {
	stx, err := sqlTx(tx)
	if err != nil {
		return err
	}
	m, err := rivermigrate.New(d.jobs.driver, &rivermigrate.Config{Logger: d.log})
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	// One transaction with concord's own migrations on SQLite, on purpose
	// (bad input changes nothing).
	//lint:ignore SA1019 SQLite's River migrations batch in one transaction
	res, err := m.MigrateTx(ctx, stx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	d.logRiverMigrations(ctx, res)
	return nil
}

// migrateRiverPostgres brings River's schema up to date, one transaction
// per version, under concord's migration lock (a session lock held on a
// connection of its own) so that processes starting together migrate one
// after the other.
func (d *DB) migrateRiverPostgres(ctx context.Context) error {
	conn, err := d.pools[0].Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLockKey)
	m, err := rivermigrate.New(d.jobs.driver, &rivermigrate.Config{Logger: d.log})
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	d.logRiverMigrations(ctx, res)
	return nil
}

func (d *DB) logRiverMigrations(ctx context.Context, res *rivermigrate.MigrateResult) {
	for _, v := range res.Versions {
		d.log.InfoContext(ctx, "db: applied River migration", "version", v.Version, "name", v.Name)
	}
}

// sqlTx is the database/sql transaction under a gorm transaction.
func sqlTx(tx *gorm.DB) (*sql.Tx, error) {
	if t, ok := tx.Statement.ConnPool.(*sql.Tx); ok {
		return t, nil
	}
	return nil, errors.New("db: not in a database/sql transaction")
}

// fitKey is what makes two fits the same: the model, the spec and the
// version of the project's labels.
func fitKey(model, spec string, labelsVersion int64) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", model, spec, labelsVersion)))
	return hex.EncodeToString(h[:16])
}

// fitPriority is the River priority of a project's next fit when it has
// active fits queued or running: 1 for its first, up to 4.
func fitPriority(active int64) int {
	return int(min(active+1, 4))
}

// enqueueFit inserts the job of fit row in tx. It returns the id of the
// fit of an unfinished job that is the same (duplicate) or 0.
func (d *DB) enqueueFit(ctx context.Context, tx *gorm.DB, row *fitRow, labelsVersion int64, priority int) (int64, error) {
	stx, err := sqlTx(tx)
	if err != nil {
		return 0, err
	}
	args := fitArgs{FitID: row.ID, ProjectID: row.ProjectID, Key: fitKey(row.Model, row.Spec, labelsVersion)}
	opts := &river.InsertOpts{
		Queue:       fitQueue,
		Priority:    priority,
		MaxAttempts: fitJobMaxAttempts,
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByState: uniqueStates},
	}
	res, err := d.jobs.client.InsertTx(ctx, stx, args, opts)
	if err != nil {
		return 0, fmt.Errorf("enqueue fit %d: %w", row.ID, err)
	}
	if res.UniqueSkippedAsDuplicate {
		var other fitArgs
		if err := json.Unmarshal(res.Job.EncodedArgs, &other); err != nil {
			return 0, fmt.Errorf("read duplicate job %d: %w", res.Job.ID, err)
		}
		r, err := getFit(tx, other.FitID)
		if err == nil && !annotations.FitStatus(r.Status).Terminal() {
			return other.FitID, nil
		}
		if err != nil && annotations.ErrorCode(err) != annotations.ENOTFOUND {
			return 0, err
		}
		// The other fit has ended (or was deleted) while River has yet to
		// record its job's end: this fit is new, with a key of its own.
		args.Key += fmt.Sprintf("/%d", row.ID)
		if res, err = d.jobs.client.InsertTx(ctx, stx, args, opts); err != nil {
			return 0, fmt.Errorf("enqueue fit %d: %w", row.ID, err)
		}
	}
	row.JobID = res.Job.ID
	return 0, tx.Exec("UPDATE fits SET job_id = ? WHERE id = ?", res.Job.ID, row.ID).Error
}

// cancelJob cancels fit row's job in tx (a running job stops at its fit's
// next progress write, which reports the cancel).
func (d *DB) cancelJob(ctx context.Context, tx *gorm.DB, row *fitRow) error {
	if row.JobID == 0 {
		return nil
	}
	stx, err := sqlTx(tx)
	if err != nil {
		return err
	}
	_, err = d.jobs.client.JobCancelTx(ctx, stx, row.JobID)
	if errors.Is(err, river.ErrNotFound) {
		return nil
	}
	return err
}

// workerDefaults fills in the documented defaults of WorkerOptions.
func workerDefaults(o annotations.WorkerOptions) annotations.WorkerOptions {
	if o.Name == "" {
		host, _ := os.Hostname()
		if host == "" {
			host = "concord"
		}
		o.Name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if len(o.Queues) == 0 {
		o.Queues = Queues
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	o.MaxAttempts = min(o.MaxAttempts, fitJobMaxAttempts)
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.StaleAfter, 30*time.Second)
	def(&o.PollInterval, time.Second)
	def(&o.ShutdownGrace, 10*time.Second)
	return o
}

// RunWorkers works fit jobs until ctx is done (see annotations.JobEngine).
func (d *DB) RunWorkers(ctx context.Context, opts annotations.WorkerOptions, run annotations.FitRunner) error {
	opts = workerDefaults(opts)
	queues := map[string]river.QueueConfig{}
	for _, q := range opts.Queues {
		if !slices.Contains(Queues, q) {
			return annotations.Errorf(annotations.EINVALID, "unknown queue %q (expected one of %s)", q, strings.Join(Queues, ", "))
		}
		queues[q] = river.QueueConfig{MaxWorkers: opts.Concurrency}
	}
	workers := river.NewWorkers()
	addWorker(workers, d, run, opts, workFit)
	if er, ok := run.(annotations.EvalRunner); ok {
		addWorker(workers, d, er, opts, workEvalFold)
		addWorker(workers, d, er, opts, workEvalCombine)
	}
	if cr, ok := run.(annotations.ChainRunner); ok {
		addWorker(workers, d, cr, opts, workChain)
		addWorker(workers, d, cr, opts, workCombine)
	}
	if ar, ok := run.(annotations.AgreementRunner); ok {
		addWorker(workers, d, ar, opts, workAgreement)
		addWorker(workers, d, ar, opts, workAgreementPart)
		addWorker(workers, d, ar, opts, workAgreementCombine)
	}
	if xr, ok := run.(annotations.ExportRunner); ok {
		addWorker(workers, d, xr, opts, workExport)
	}
	cfg := &river.Config{
		ID:                   opts.Name,
		Queues:               queues,
		Workers:              workers,
		Logger:               d.log,
		MaxAttempts:          fitJobMaxAttempts,
		PollOnly:             true,
		FetchPollInterval:    opts.PollInterval,
		FetchCooldown:        min(opts.PollInterval, 100*time.Millisecond),
		JobTimeout:           -1,
		RescueStuckJobsAfter: 365 * 24 * time.Hour,
	}
	if _, err := river.NewClient(d.jobs.driver, cfg); err != nil {
		return fmt.Errorf("db: River worker client: %w", err)
	}
	if err := d.touchWorker(ctx, opts, true); err != nil && ctx.Err() == nil {
		// The database may be back later: watchWorkers records the
		// worker at its next round.
		d.log.Warn("registering the worker", "worker", opts.Name, "err", err)
	}
	// Start River; while the database does not answer, try again (a fresh
	// client each time) until it does or ctx ends.
	var client *river.Client[*sql.Tx]
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		c, err := river.NewClient(d.jobs.driver, cfg)
		if err != nil {
			return fmt.Errorf("db: River worker client: %w", err)
		}
		if err = c.Start(context.WithoutCancel(ctx)); err == nil {
			client = c
			break
		}
		d.log.Warn("starting the workers; trying again", "err", err, "in", wait)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = c.StopAndCancel(sctx)
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	d.log.InfoContext(ctx, "workers started", "worker", opts.Name, "queues", opts.Queues, "concurrency", opts.Concurrency)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		d.watchWorkers(ctx, opts)
	}()
	<-ctx.Done()
	<-watchDone

	// Graceful stop: running jobs get the grace period, then their
	// contexts are cancelled (their fits go back to the queue).
	bg := context.WithoutCancel(ctx)
	sctx, cancel := context.WithTimeout(bg, opts.ShutdownGrace)
	err := client.Stop(sctx)
	cancel()
	if err != nil {
		hctx, cancel := context.WithTimeout(bg, 30*time.Second)
		err = client.StopAndCancel(hctx)
		cancel()
	}
	dctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	if derr := d.w.WithContext(dctx).Exec("DELETE FROM workers WHERE name = ?", opts.Name).Error; derr != nil {
		d.log.Warn("unregistering a worker", "worker", opts.Name, "err", derr)
	}
	if err != nil {
		return fmt.Errorf("db: stopping River: %w", err)
	}
	return nil
}

// touchWorker records that worker opts.Name is alive (register: it starts
// now).
func (d *DB) touchWorker(ctx context.Context, opts annotations.WorkerOptions, register bool) error {
	return d.write(ctx, func(tx *gorm.DB) error {
		t := now()
		if !register {
			res := tx.Exec("UPDATE workers SET seen_at = ? WHERE name = ?", t, opts.Name)
			if res.Error != nil || res.RowsAffected == 1 {
				return res.Error
			}
		}
		if err := tx.Exec("DELETE FROM workers WHERE name = ?", opts.Name).Error; err != nil {
			return err
		}
		return tx.Exec("INSERT INTO workers (name, queues, concurrency, started_at, seen_at) VALUES (?, ?, ?, ?, ?)",
			cleanText(opts.Name), strings.Join(opts.Queues, ","), opts.Concurrency, t, t).Error
	})
}

// watchWorkers keeps this worker's liveness record and rescues the jobs of
// dead workers every StaleAfter/4 until ctx is done.
func (d *DB) watchWorkers(ctx context.Context, opts annotations.WorkerOptions) {
	t := time.NewTicker(max(opts.StaleAfter/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		if err := d.touchWorker(ctx, opts, false); err != nil && ctx.Err() == nil {
			d.log.Warn("recording that the worker is alive", "worker", opts.Name, "err", err)
		}
		if n, err := d.rescueJobsOfDeadWorkers(ctx, opts.StaleAfter, opts.MaxAttempts); err != nil && ctx.Err() == nil {
			d.log.Warn("rescuing jobs of dead workers", "err", err)
		} else if n > 0 {
			d.log.InfoContext(ctx, "rescued jobs of dead workers", "jobs", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// rescueLockKey is the PostgreSQL advisory lock that serialises the
// rescuers of the worker processes.
const rescueLockKey = 0x0c0f18

// rescueJobsOfDeadWorkers finds the running fit jobs whose worker has not
// been seen for staleAfter and makes them retryable with River's backoff
// (their fit goes back to the queue), or discards them once maxAttempts
// attempts are spent (their fit fails with the reason). One transaction,
// on PostgreSQL under an advisory lock, so that rescuers of several
// processes never rescue a job twice.
func (d *DB) rescueJobsOfDeadWorkers(ctx context.Context, staleAfter time.Duration, maxAttempts int) (int, error) {
	return d.rescueAt(ctx, now(), staleAfter, maxAttempts)
}

// rescueAt is rescueJobsOfDeadWorkers at the instant t.
func (d *DB) rescueAt(ctx context.Context, t time.Time, staleAfter time.Duration, maxAttempts int) (int, error) {
	rescued := 0
	err := d.write(ctx, func(tx *gorm.DB) error {
		rescued = 0
		if d.dialect == postgresDialect {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(?)", rescueLockKey).Error; err != nil {
				return err
			}
		}
		var live []string
		if err := tx.Raw("SELECT name FROM workers WHERE seen_at >= ?", t.Add(-staleAfter)).Scan(&live).Error; err != nil {
			return err
		}
		stx, err := sqlTx(tx)
		if err != nil {
			return err
		}
		res, err := d.jobs.client.JobListTx(ctx, stx, river.NewJobListParams().
			States(rivertype.JobStateRunning).Kinds(fitKind, chainKind, combineKind, evalFoldKind, evalCombineKind,
			agreementKind, agreementPartKind, agreementCombineKind, exportKind).First(10000))
		if err != nil {
			return fmt.Errorf("list running jobs: %w", err)
		}
		var p riverdriver.JobRescueManyParams
		for _, job := range res.Jobs {
			by := ""
			if n := len(job.AttemptedBy); n > 0 {
				by = job.AttemptedBy[n-1]
			}
			if slices.Contains(live, by) || job.AttemptedAt == nil || t.Sub(*job.AttemptedAt) < staleAfter {
				continue
			}
			reason := fmt.Sprintf("worker %q stopped responding", by)
			if rescue := d.rescuerOf(job.Kind); rescue != nil {
				if err := rescue(ctx, tx, &p, job, t, reason, maxAttempts); err != nil {
					return err
				}
				continue
			}
			var args chainArgs // fit_id of every kind, chain of chain jobs
			if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
				return fmt.Errorf("job %d: %w", job.ID, err)
			}
			switch job.Kind {
			case chainKind:
				reason = fmt.Sprintf("chain %d: %s", args.Chain, reason)
			case combineKind:
				reason = "combining the chains: " + reason
			}
			r, err := getFit(tx, args.FitID)
			if annotations.ErrorCode(err) == annotations.ENOTFOUND {
				r = nil
			} else if err != nil {
				return err
			}
			fanned := job.Kind != fitKind
			if rescueJob(&p, job, t, reason, maxAttempts) {
				msg := fmt.Sprintf("%s, re-queued, attempt %d of %d", reason, job.Attempt, maxAttempts)
				switch {
				case fanned && job.Kind == chainKind && r != nil:
					if err := requeuePartTx(tx, &chainGroup, r.ID, args.Chain, msg); err != nil {
						return err
					}
				case fanned && r != nil:
					if err := tx.Exec("UPDATE fits SET message = ? WHERE id = ? AND status = ?", msg, r.ID, string(annotations.FitRunning)).Error; err != nil {
						return err
					}
				case r != nil && r.Status == string(annotations.FitRunning):
					if err := requeue(tx, r, fmt.Sprintf("%s, re-queued, attempt %d of %d", reason, job.Attempt, maxAttempts)); err != nil {
						return err
					}
				}
			} else {
				msg := fmt.Sprintf("%s on attempt %d of %d; gave up after %d attempts", reason, job.Attempt, maxAttempts, job.Attempt)
				if fanned && r != nil {
					if err := d.endFanOutTx(ctx, tx, r, annotations.FitFailed, msg); err != nil {
						return err
					}
				} else if r != nil && r.Status == string(annotations.FitRunning) {
					if err := tx.Exec("UPDATE fits SET status = ?, message = ?, finished_at = ? WHERE id = ?",
						string(annotations.FitFailed), msg, t, r.ID).Error; err != nil {
						return err
					}
				}
			}
		}
		// Forget workers gone for long.
		if err := tx.Exec("DELETE FROM workers WHERE seen_at < ?", t.Add(-100*staleAfter)).Error; err != nil {
			return err
		}
		if len(p.ID) == 0 {
			return nil
		}
		p.StuckHorizon = t
		if _, err := d.jobs.driver.UnwrapExecutor(stx).JobRescueMany(ctx, &p); err != nil {
			return fmt.Errorf("rescue jobs: %w", err)
		}
		rescued = len(p.ID)
		return nil
	})
	return rescued, wrap(err, "rescue jobs of dead workers")
}

// rescueJob adds job, whose worker died (reason), to the rescue p:
// retryable with River's backoff while attempts are left (true), else
// discarded at t (false).
func rescueJob(p *riverdriver.JobRescueManyParams, job *rivertype.JobRow, t time.Time, reason string, maxAttempts int) bool {
	ae, _ := json.Marshal(rivertype.AttemptError{At: t, Attempt: job.Attempt, Error: reason})
	p.ID = append(p.ID, job.ID)
	p.Error = append(p.Error, ae)
	if job.Attempt < maxAttempts {
		var policy river.DefaultClientRetryPolicy
		p.State = append(p.State, string(rivertype.JobStateRetryable))
		p.ScheduledAt = append(p.ScheduledAt, policy.NextRetry(job))
		p.FinalizedAt = append(p.FinalizedAt, nil)
		return true
	}
	p.State = append(p.State, string(rivertype.JobStateDiscarded))
	p.ScheduledAt = append(p.ScheduledAt, t)
	p.FinalizedAt = append(p.FinalizedAt, &t)
	return false
}

// jobRescuer adds a running job of a dead worker to a rescue.
type jobRescuer func(ctx context.Context, tx *gorm.DB, p *riverdriver.JobRescueManyParams, job *rivertype.JobRow, t time.Time, reason string, maxAttempts int) error

// rescuerOf is the rescue of the jobs of kind that are not a fit's (nil
// for a fit's: rescueAt's own).
func (d *DB) rescuerOf(kind string) jobRescuer {
	switch kind {
	case evalFoldKind, evalCombineKind:
		return d.rescueEvalJob
	case agreementKind, agreementPartKind, agreementCombineKind:
		return d.rescueAgreementJob
	case exportKind:
		return d.rescueExportJob
	}
	return nil
}

// jobWorker works the jobs of one kind (arguments A) with runner R: the
// kind's work function, given the worker with its database, runner and
// options. One type for every kind (fit, chain, combine, fold, agreement
// plan, part and combine, export).
type jobWorker[A river.JobArgs, R any] struct {
	river.WorkerDefaults[A]
	d    *DB
	run  R
	opts annotations.WorkerOptions
	work func(ctx context.Context, w *jobWorker[A, R], job *river.Job[A]) error
}

func (w *jobWorker[A, R]) Work(ctx context.Context, job *river.Job[A]) error {
	return w.work(ctx, w, job)
}

// addWorker adds the worker of the jobs that work works to workers.
func addWorker[A river.JobArgs, R any](workers *river.Workers, d *DB, run R, opts annotations.WorkerOptions,
	work func(ctx context.Context, w *jobWorker[A, R], job *river.Job[A]) error) {
	river.AddWorker(workers, &jobWorker[A, R]{d: d, run: run, opts: opts, work: work})
}

// workFit works fit jobs: it moves the fit to running, has the runner
// run it, and turns the outcome into River's: done, cancelled (the fit
// ended on its data or by request: no retry), or an error (retried with
// backoff while attempts are left).
func workFit(ctx context.Context, w *jobWorker[fitArgs, annotations.FitRunner], job *river.Job[fitArgs]) error {
	d := w.d
	id := job.Args.FitID
	f, err := d.startFit(ctx, id, w.opts.Name, job.Attempt)
	switch annotations.ErrorCode(err) {
	case "":
	case annotations.ENOTFOUND, annotations.ECONFLICT:
		// Deleted, or cancelled before it started.
		return river.JobCancel(err)
	default:
		return err // the database: retried
	}
	if cr, ok := w.run.(annotations.ChainRunner); ok {
		if n := cr.ChainJobs(f); n >= 2 {
			if err := d.fanOut(ctx, job, f, n, nil); err != nil {
				return err // the database: retried
			}
			return nil
		}
	}
	if rr, ok := w.run.(annotations.RestartRunner); ok && rr.RestartsApart(f) {
		var plan []byte
		var n int
		plan, n, err = rr.PlanFit(ctx, f)
		if err == nil && n > 0 {
			return d.fanOut(ctx, job, f, n, plan) // an error (the database): retried
		}
	} else {
		err = w.run.RunFit(ctx, f)
	}
	if err == nil {
		// The runner recorded the end: a fit that failed on its data or
		// was cancelled ends its job as cancelled (no retry).
		end, ferr := d.FindFitByID(context.WithoutCancel(ctx), id)
		if ferr == nil && end.Status != annotations.FitDone {
			return river.JobCancel(fmt.Errorf("fit %d %s: %s", id, end.Status, end.Message))
		}
		return nil
	}
	if !errors.Is(err, annotations.ErrRetry) {
		return river.JobCancel(err)
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	reason := strings.TrimSuffix(err.Error(), ": "+annotations.ErrRetry.Error())
	if ctx.Err() != nil {
		// This worker shut down: back in the queue at once, without
		// spending an attempt's backoff.
		if rerr := d.requeueFit(bg, id, "re-queued: "+reason); rerr != nil {
			d.log.Error("re-queueing a fit at shutdown", "fit", id, "err", rerr)
		}
		return river.JobSnooze(time.Second)
	}
	if job.Attempt < w.opts.MaxAttempts {
		if rerr := d.requeueFit(bg, id, fmt.Sprintf("%s, re-queued, attempt %d of %d", reason, job.Attempt, w.opts.MaxAttempts)); rerr != nil {
			d.log.Error("re-queueing a fit", "fit", id, "err", rerr)
		}
		return err
	}
	msg := fmt.Sprintf("%s on attempt %d of %d; gave up after %d attempts", reason, job.Attempt, w.opts.MaxAttempts, job.Attempt)
	if ferr := d.FinishFit(bg, id, annotations.FitFailed, msg, nil); ferr != nil {
		d.log.Error("failing a fit", "fit", id, "err", ferr)
	}
	return river.JobCancel(err)
}

// JobCounts counts the jobs by queue and state.
func (d *DB) JobCounts(ctx context.Context) ([]annotations.JobCount, error) {
	var out []annotations.JobCount
	err := d.r.WithContext(ctx).Raw("SELECT queue, state, COUNT(*) AS count FROM river_job GROUP BY queue, state ORDER BY queue, state").Scan(&out).Error
	return out, wrap(err, "count jobs")
}

// ListJobs returns the newest jobs and the live workers.
func (d *DB) ListJobs(ctx context.Context, limit int) ([]annotations.JobInfo, []annotations.WorkerInfo, error) {
	res, err := d.jobs.client.JobList(ctx, river.NewJobListParams().OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(max(limit, 1)))
	if err != nil {
		return nil, nil, wrap(err, "list jobs")
	}
	jobs := make([]annotations.JobInfo, len(res.Jobs))
	for i, j := range res.Jobs {
		var args struct {
			FitID       int64 `json:"fit_id"`
			ProjectID   int64 `json:"project_id"`
			Chain       *int  `json:"chain"`
			AgreementID int64 `json:"agreement_id"`
			Lo          *int  `json:"lo"`
			Hi          *int  `json:"hi"`
		}
		_ = json.Unmarshal(j.EncodedArgs, &args)
		by := j.AttemptedBy
		if by == nil {
			by = []string{}
		}
		ji := annotations.JobInfo{
			ID: j.ID, Kind: j.Kind, Queue: j.Queue, State: string(j.State), Priority: j.Priority,
			Attempt: j.Attempt, MaxAttempts: j.MaxAttempts, AttemptedBy: by,
			FitID: args.FitID, Chain: args.Chain, ProjectID: args.ProjectID, CreatedAt: j.CreatedAt.UTC(),
			AttemptedAt: j.AttemptedAt, FinalizedAt: j.FinalizedAt, AgreementID: args.AgreementID,
		}
		if args.Lo != nil && args.Hi != nil {
			ji.Replicates = fmt.Sprintf("%d..%d", *args.Lo, *args.Hi-1)
		}
		for _, e := range j.Errors {
			ji.Errors = append(ji.Errors, fmt.Sprintf("attempt %d: %s", e.Attempt, e.Error))
		}
		jobs[i] = ji
	}
	var rows []struct {
		Name        string
		Queues      string
		Concurrency int
		StartedAt   time.Time
		SeenAt      time.Time
	}
	if err := d.r.WithContext(ctx).Raw("SELECT name, queues, concurrency, started_at, seen_at FROM workers ORDER BY name").Scan(&rows).Error; err != nil {
		return nil, nil, wrap(err, "list workers")
	}
	workers := make([]annotations.WorkerInfo, len(rows))
	for i, r := range rows {
		workers[i] = annotations.WorkerInfo{Name: r.Name, Queues: r.Queues, Concurrency: r.Concurrency, StartedAt: utc(r.StartedAt), SeenAt: utc(r.SeenAt)}
	}
	return jobs, workers, nil
}
