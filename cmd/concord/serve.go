package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"concord/analysis"
	"concord/annotations"
	"concord/db"
	"concord/server"
)

const serveHelp = `
Run the REST API (under /api/v1, documented at /api/v1/openapi.json), the
dashboard (open the printed URL in a browser), /healthz, /readyz and
Prometheus /metrics, and a pool of workers that run queued fits in the
background.

Credentials: the admin token creates projects and API keys and sees every
project; each project's API keys see only that project. Send them as
"Authorization: Bearer TOKEN", or log in to the dashboard with one. The
admin token comes from --admin-token or the environment variable
CONCORD_ADMIN_TOKEN; when neither is set, a random token is generated and
printed once on start-up (with a link that logs the browser in).

Fits are jobs on River (riverqueue.com) in the same database. Several
concord serve and concord worker processes may share one PostgreSQL
database (--db postgres://...): each queued fit is worked by exactly one of
them; --workers 0 makes an API-only node. A fit left running by a process
that died (it stopped recording that it is alive for --stale-after) is
retried by another, and failed with a reason after --max-attempts
attempts. Each fit runs in a child process (concord fit-worker) at a lower
CPU priority, so that the API stays responsive while models run
(--fits-in-process turns this off); a Gibbs fit's chains, and the later
starts of an EP or Laplace fit's evidence maximisation, run as jobs of
their own that any worker may take, with the same result bit for bit
(--fan-out=false: each fit one job). A project may have --max-project-fits
fits queued or running at once (default 8; more are refused with 429), and
the workers take queued fits fairly across projects, so one project's
backlog never starves another. The same fit submitted again while it is
queued or running is not queued twice (200 with the first fit).
Agreement analyses are bounded by --max-bootstrap-work, cached by the
project's labels version and options, and stop when their client disconnects;
projects over --agreement-job-labels are analysed in the background (the
routes answer 202 with the job's state and Retry-After until it is done);
likewise the report document and workbook of fits over --export-job-labels
labels are built by a job (queue export) that any worker may take.
SIGINT or SIGTERM shuts down gracefully: running fits get --shutdown-grace
to finish and are then put back in the queue.

See docs/server.md for the API, the dashboard and the metrics.

Examples:
  concord serve
  CONCORD_ADMIN_TOKEN=s3cret concord serve --addr 127.0.0.1:9090 --workers 2
  concord serve --db postgres://concord@db/concord --workers 0
  concord worker --db postgres://concord@db/concord --concurrency 4
`

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[--addr :8080] [--db PATH] [--workers N] [--admin-token T]", serveHelp)
	addr := fs.String("addr", ":8080", "listen address (host:port; port 0 picks a free port)")
	dsn := dbFlag(fs)
	workers := fs.Int("workers", runtime.NumCPU(), "fits run at once by this process (0: none, API only)")
	adminToken := fs.String("admin-token", "", "admin token (default $CONCORD_ADMIN_TOKEN; generated and printed when neither is set)")
	maxJSON := fs.Int64("max-json-bytes", 8<<20, "largest JSON request body in bytes")
	maxUpload := fs.Int64("max-upload-bytes", 64<<20, "largest file upload in bytes")
	maxFitWork := fs.Duration("max-fit-work", analysis.DefaultMaxFitWork, "most projected Gibbs work of one fit, in one core's time: a fit projected to take longer is refused when submitted (negative: no limit)")
	maxAgrLabels := fs.Int("max-agreement-labels", server.DefaultMaxAgreementLabels, "most labels of a project whose agreement the server analyses (agreement routes, dashboard, reports); larger projects get a 413 naming concord agreement (negative: no limit)")
	jobLabels := fs.Int("agreement-job-labels", server.DefaultAgreementJobLabels, "projects with more labels have their agreement analysed in the background: the agreement routes answer 202 (Retry-After) until the job is done, then the cached result (negative: never, always within the request)")
	exportLabels := fs.Int("export-job-labels", server.DefaultExportJobLabels, "fits of more labels have their report (report.json) and workbook (report.xlsx) built by a background job: the routes answer 202 (Retry-After) until it is built, then the file (negative: never, always within the request)")
	maxBootWork := fs.Int64("max-bootstrap-work", analysis.DefaultMaxBootstrapWork, "most labels and rater pairs one agreement analysis may resample in its bootstrap (replicates x (labels + rater pairs sharing an item); negative: no limit)")
	maxProjectFits := fs.Int("max-project-fits", 8, "fits one project may have queued or running at once (negative: no limit)")
	queues := fs.String("queues", "", "job queues this process works, comma-separated (default: all: "+strings.Join(db.Queues, ", ")+")")
	jf := newJobFlags(fs)
	if err := parseNoArgs(e, fs, args, ""); err != nil {
		return err
	}
	if *jobLabels == 0 {
		return annotations.Errorf(annotations.EINVALID, "--agreement-job-labels 0: expected a number of labels (1 or more; projects with more are analysed in the background), or a negative number for never")
	}
	if *exportLabels == 0 {
		return annotations.Errorf(annotations.EINVALID, "--export-job-labels 0: expected a number of labels (1 or more; fits with more have their report files built in the background), or a negative number for never")
	}
	if *workers < 0 {
		return annotations.Errorf(annotations.EINVALID, "--workers must be 0 or more, got %d", *workers)
	}
	log, err := newLogger(e, *jf.logLevel, *jf.logFormat)
	if err != nil {
		return err
	}

	token := *adminToken
	if token == "" {
		token = e.getenv("CONCORD_ADMIN_TOKEN")
	}
	generated := token == ""
	if generated {
		token = server.RandomToken()
	} else if len(token) < 16 {
		log.Warn("the admin token is short; use at least 16 random characters")
	}

	st, err := openStore(ctx, e, *dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	w := *workers
	if w == 0 {
		w = -1 // server.Config: negative means no workers
	}
	srv, err := server.New(jf.config(server.Config{
		Addr:               *addr,
		AdminToken:         token,
		Workers:            w,
		Queues:             splitList(*queues),
		MaxJSONBytes:       *maxJSON,
		MaxUploadBytes:     *maxUpload,
		MaxProjectFits:     *maxProjectFits,
		MaxBootstrapWork:   *maxBootWork,
		MaxAgreementLabels: *maxAgrLabels,
		AgreementJobLabels: *jobLabels,
		ExportJobLabels:    *exportLabels,
		MaxFitWork:         *maxFitWork,
		Version:            version,
	}, log), st, log)
	if err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "concord serve: listening on %s (database %s, %d workers)\n", srv.URL(), *dsn, max(w, 0))
	if generated {
		fmt.Fprintf(e.stdout, "Admin token (generated; shown only now — pass --admin-token or set CONCORD_ADMIN_TOKEN to keep one): %s\n", token)
		fmt.Fprintf(e.stdout, "Open the dashboard logged in as admin (single-use link): %s\n", srv.LoginURL())
	} else {
		fmt.Fprintf(e.stdout, "Dashboard: %s (log in with the admin token or a project API key)\n", srv.URL())
	}
	fmt.Fprintln(e.stdout, "Press Ctrl-C to stop.")
	return srv.Serve(ctx)
}

// fitWorkerCommand is the command that runs one fit in a child process:
// this executable's fit-worker command, under nice(1) when it is there, so
// that fits yield the CPU to the API.
func fitWorkerCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := []string{exe, "fit-worker"}
	if nice, err := exec.LookPath("nice"); err == nil {
		cmd = append([]string{nice, "-n", "10"}, cmd...)
	}
	return cmd, nil
}

// newLogger is the structured logger of the long-running commands (serve,
// worker).
func newLogger(e *env, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "--log-level %q: expected debug, info, warn or error", level)
	}
	hopts := &slog.HandlerOptions{Level: l}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(e.stderr, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(e.stderr, hopts)), nil
	}
	return nil, annotations.Errorf(annotations.EINVALID, "--log-format %q: expected text or json", format)
}
