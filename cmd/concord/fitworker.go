package main

import (
	"context"

	"concord/annotations"
	"concord/server"
)

// runFitWorker runs one fit for concord serve in a child process: the job
// comes on standard input, progress and the result go to standard output
// (see server.RunFitWorker). It is not meant to be run by hand.
func runFitWorker(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "fit-worker", "< job.json", "Internal: run one fit for concord serve (a JSON job on stdin, JSON lines on stdout).")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return annotations.Errorf(annotations.EINVALID, "unexpected argument %q", pos[0])
	}
	// The worker's life is its parent's: the parent kills it when the fit
	// is cancelled or the server shuts down (requeueing the fit). Ctrl-C
	// in a terminal, or a service manager's SIGTERM, reaches the whole
	// process group: the worker runs on, so that the parent's graceful
	// shutdown decides, instead of failing the fit with a cancellation.
	return server.RunFitWorker(context.WithoutCancel(ctx), e.stdin, e.stdout)
}
