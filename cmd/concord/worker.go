package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"concord/annotations"
	"concord/db"
	"concord/server"
)

const workerHelp = `
Run background jobs (fits) from a shared database without the API: a worker
process for a deployment with several machines on one PostgreSQL database
(concord serve --workers 0 there serves the API; see docs/server.md).

Jobs are on River (riverqueue.com). Each fit is worked by exactly one
worker process; each runs in a child process (concord fit-worker) at a
lower CPU priority (--fits-in-process turns this off). Every worker records
that it is alive every --stale-after/4; the fits of a worker not seen for
--stale-after (killed, its machine lost) are retried by the others with
backoff, and failed with the reason after --max-attempts attempts. A fit
that fails on its data is not retried. SIGINT or SIGTERM stops gracefully:
running fits get --shutdown-grace to finish and go back to the queue.

A Gibbs fit this worker takes runs its chains as jobs of their own, which
any worker sharing the database takes (the chain that ends last queues the
job that combines them); each chain is seeded from the fit's seed as in one
process, so the result is the same whoever ran what. So do the later
starts of an EP or Laplace fit's evidence maximisation (restarts 2 or
more), after start 1 ran in the fit's job. --fan-out=false runs each fit
as one job instead, its chains and starts in one process.

Besides fits (queue fits, with evaluations' folds) the queues hold agreement
analyses of large projects (queue agreement) and the report documents and
workbooks of large fits (queue export: what serve's --export-job-labels sends
to the workers); --queues picks some.

--name names this process in the job records (default hostname-pid); it
must be unique among the processes sharing the database.

Examples:
  concord worker --db postgres://concord@db/concord --concurrency 4
  concord worker --db concord.db --concurrency 1
  concord worker --db postgres://concord@db/concord --concurrency 2 --fan-out=false
`

func runWorker(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "worker", "--db DSN [--queues fits,agreement] [--concurrency N] [--fan-out=false]", workerHelp)
	dsn := dbFlag(fs)
	queues := fs.String("queues", "", "job queues to work, comma-separated (default: all: "+strings.Join(db.Queues, ", ")+")")
	concurrency := fs.Int("concurrency", runtime.NumCPU(), "jobs run at once by this process")
	name := fs.String("name", "", "this worker's name in job records (default hostname-pid)")
	poll := fs.Duration("poll-interval", time.Second, "how often an idle worker looks for queued jobs")
	jf := newJobFlags(fs)
	if err := parseNoArgs(e, fs, args, ""); err != nil {
		return err
	}
	if *concurrency < 1 {
		return annotations.Errorf(annotations.EINVALID, "--concurrency must be 1 or more, got %d", *concurrency)
	}
	log, err := newLogger(e, *jf.logLevel, *jf.logFormat)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, e, *dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(e.stdout, "concord worker: working %s with %d at once (database %s)\n", orAll(*queues), *concurrency, db.Redact(*dsn))
	return server.RunWorkers(ctx, jf.config(server.Config{
		Workers:      *concurrency,
		Queues:       splitList(*queues),
		WorkerName:   *name,
		PollInterval: *poll,
		Version:      version,
	}, log), st, log)
}

// jobFlags are the flags of the processes that run jobs (serve and
// worker): retries, shutdown, progress, fan-out, child processes and the
// log.
type jobFlags struct {
	staleAfter, grace, progressEvery *time.Duration
	maxAttempts                      *int
	fanOut, inProcess                *bool
	logLevel, logFormat              *string
}

// newJobFlags declares the job flags on fs. --fan-out is on by default: a
// Gibbs fit's chains run as jobs of their own; --fan-out=false runs each
// fit as one job.
func newJobFlags(fs *flag.FlagSet) *jobFlags {
	return &jobFlags{
		staleAfter:    fs.Duration("stale-after", 30*time.Second, "the fits of a worker process not seen alive for this long are retried by others"),
		maxAttempts:   fs.Int("max-attempts", 3, "attempts of a fit whose worker died or was killed before it fails"),
		grace:         fs.Duration("shutdown-grace", 10*time.Second, "on shutdown, how long running fits may finish before they are re-queued"),
		progressEvery: fs.Duration("progress-interval", 500*time.Millisecond, "how often running fits write progress and check for cancels"),
		fanOut:        fs.Bool("fan-out", true, "run the chains of the Gibbs fits this process takes, and the later starts of the EP and Laplace fits' evidence maximisation, as jobs of their own, which any worker sharing the database may take (several worker processes or machines); the result is the same bit for bit; --fan-out=false runs each fit as one job, its chains and starts in one process"),
		inProcess:     fs.Bool("fits-in-process", false, "run fits and evaluation folds in this process instead of a lower-priority child process (concord fit-worker)"),
		logLevel:      fs.String("log-level", "info", "log level: debug, info, warn or error"),
		logFormat:     fs.String("log-format", "text", "log format: text or json"),
	}
}

// config returns cfg with the job flags' settings, and the command of the
// child process that runs a fit unless --fits-in-process (when there is
// none, fits run in this process, with a warning in log).
func (j *jobFlags) config(cfg server.Config, log *slog.Logger) server.Config {
	if !*j.inProcess {
		cmd, err := fitWorkerCommand()
		if err != nil {
			log.Warn("running fits in this process", "reason", err)
		}
		cfg.FitCommand = cmd
	}
	cfg.FanOutChains = *j.fanOut
	cfg.StaleAfter, cfg.MaxAttempts = *j.staleAfter, *j.maxAttempts
	cfg.ShutdownGrace, cfg.ProgressInterval = *j.grace, *j.progressEvery
	return cfg
}

func orAll(queues string) string {
	if queues == "" {
		return "all queues"
	}
	return "queues " + queues
}
