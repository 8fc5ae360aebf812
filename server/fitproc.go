package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// Fits in a child process.
//
// With Config.FitCommand set, each fit runs in a child process (`concord
// serve` uses `nice -n 10 concord fit-worker`, a lower scheduling
// priority), so that a
// busy sampler never slows down the API and the dashboard, a crash of the
// sampler cannot take the server with it, and a cancel ends the fit at
// once. The parent keeps all database access; the child only computes. The
// protocol is JSON on the child's standard input and output:
//
//	stdin:  {"spec": FitSpec, "dataset": Dataset}
//	stdout: {"progress": {"fraction", "eta_seconds", "max_rhat", "phase"}}   (about twice a second)
//	        ...
//	        {"result": FitResult} or {"error": {"code", "message"}}          (last line)
//
// A child whose parent died is killed by SIGPIPE at its next progress line.

// fitJob is the input of a fit worker process: a whole fit, or with Chains
// chains [lo, hi) of it (their outputs are the answer), or with Outputs the
// summary of every chain's outputs (a fanned-out fit's combine), or with
// Eval fold Fold of the evaluation of those settings (the fold's result,
// encoded, is the answer).
type fitJob struct {
	Spec    analysis.FitSpec     `json:"spec"`
	Dataset *annotations.Dataset `json:"dataset"`
	Chains  *[2]int              `json:"chain_range,omitempty"`
	Outputs [][]byte             `json:"outputs,omitempty"`
	// SamplingSeconds is how long the chains of Outputs sampled, and
	// SamplingCPUSeconds the CPU time they used (0: not known).
	SamplingSeconds    float64 `json:"sampling_seconds,omitempty"`
	SamplingCPUSeconds float64 `json:"sampling_cpu_seconds,omitempty"`
	// Eval are the stored settings of an evaluation (analysis.EvalSpec)
	// and Fold the 0-based fold of it to run.
	Eval json.RawMessage `json:"eval,omitempty"`
	Fold int             `json:"fold,omitempty"`
	// Restart, with Plan, runs the fit up to the first start of its
	// evidence maximisation (the plan is the answer, as the one output of
	// a chains line, unless the fit ran whole); else it runs part Part of
	// the plan Outputs[0] (its output is the answer).
	Restart *restartPart `json:"restart,omitempty"`
}

// restartPart is a job on the restarts of an evidence maximisation run
// apart (analysis.PlanRestarts, analysis.FitRestart).
type restartPart struct {
	Plan bool `json:"plan,omitempty"`
	Part int  `json:"part,omitempty"`
}

// fitLine is one line of a fit worker's output.
type fitLine struct {
	Progress *progressLine   `json:"progress,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Chains   *chainsLine     `json:"chain_outputs,omitempty"`
	Fold     []byte          `json:"fold_output,omitempty"`
	Error    *errorDetail    `json:"error,omitempty"`
}

// chainsLine is the answer to a job of chains: their outputs.
type chainsLine struct {
	Outputs            [][]byte `json:"outputs"`
	SamplingSeconds    float64  `json:"sampling_seconds"`
	SamplingCPUSeconds float64  `json:"sampling_cpu_seconds,omitempty"`
}

// childResult is what a fit worker process answered.
type childResult struct {
	res      *multirater.FitResult
	outputs  [][]byte
	sampling annotations.SamplingTime
	fold     []byte
}

// runJob runs a fit job in this process: the fit, its chains or their
// summary.
func runJob(ctx context.Context, job *fitJob, progress func(multirater.Progress)) (childResult, error) {
	switch {
	case job.Eval != nil:
		out, err := runFold(ctx, job, progress)
		return childResult{fold: out}, err
	case job.Restart != nil:
		return runRestart(ctx, job, progress)
	case job.Chains != nil:
		out, sampling, err := analysis.FitChains(ctx, job.Dataset, job.Spec, job.Chains[0], job.Chains[1], progress)
		return childResult{outputs: out, sampling: sampling}, err
	case job.Outputs != nil && analysis.RestartsApart(job.Spec):
		res, err := analysis.CombineRestarts(ctx, job.Dataset, job.Spec, job.Outputs, progress)
		return childResult{res: res}, err
	case job.Outputs != nil:
		res, err := analysis.CombineChains(ctx, job.Dataset, job.Spec, job.Outputs,
			annotations.SamplingTime{Wall: seconds(job.SamplingSeconds), CPU: seconds(job.SamplingCPUSeconds)}, progress)
		return childResult{res: res}, err
	default:
		res, err := analysis.Fit(ctx, job.Dataset, job.Spec, progress)
		return childResult{res: res}, err
	}
}

// runRestart runs a job on the restarts (fitJob.Restart): the plan, or
// the fit whole, or a part.
func runRestart(ctx context.Context, job *fitJob, progress func(multirater.Progress)) (childResult, error) {
	if job.Restart.Plan {
		res, plan, err := analysis.PlanRestarts(ctx, job.Dataset, job.Spec, progress)
		if plan != nil {
			return childResult{outputs: [][]byte{plan}}, err
		}
		return childResult{res: res}, err
	}
	if len(job.Outputs) != 1 {
		return childResult{}, fmt.Errorf("a restart part with %d plans", len(job.Outputs))
	}
	out, err := analysis.FitRestart(ctx, job.Dataset, job.Spec, job.Outputs[0], job.Restart.Part, progress)
	return childResult{outputs: [][]byte{out}}, err
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

type progressLine struct {
	Fraction   float64 `json:"fraction"`
	ETASeconds float64 `json:"eta_seconds,omitempty"`
	MaxRhat    float64 `json:"max_rhat,omitempty"`
	Phase      string  `json:"phase,omitempty"`
}

// RunFitWorker is the child side: it reads one fit job from r, runs it and
// writes progress lines and the result (or the error) to w. `concord
// fit-worker` calls it.
func RunFitWorker(ctx context.Context, r io.Reader, w io.Writer) error {
	var job fitJob
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	if err := dec.Decode(&job); err != nil {
		return fmt.Errorf("fit-worker: reading the job: %w", err)
	}
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	var writeErr error
	emit := func(l fitLine) {
		mu.Lock()
		defer mu.Unlock()
		if writeErr == nil {
			writeErr = enc.Encode(l)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out, err := runJob(ctx, &job, func(p multirater.Progress) {
		emit(fitLine{Progress: &progressLine{Fraction: p.Fraction, ETASeconds: p.ETA.Seconds(), MaxRhat: p.MaxRhat, Phase: p.Phase}})
		mu.Lock()
		failed := writeErr != nil
		mu.Unlock()
		if failed {
			cancel() // the parent is gone
		}
	})
	if err != nil {
		d := errorDetailOf(err)
		if d.Code == annotations.EINTERNAL {
			d.Message = err.Error()
		}
		emit(fitLine{Error: &d})
		return writeErr
	}
	if job.Eval != nil {
		emit(fitLine{Fold: out.fold})
		return writeErr
	}
	if job.Chains != nil || out.outputs != nil {
		emit(fitLine{Chains: &chainsLine{Outputs: out.outputs, SamplingSeconds: out.sampling.Wall.Seconds(), SamplingCPUSeconds: out.sampling.CPU.Seconds()}})
		return writeErr
	}
	raw, err := json.Marshal(out.res)
	if err != nil {
		emit(fitLine{Error: &errorDetail{Code: annotations.EINTERNAL, Message: "encoding the result: " + err.Error()}})
		return writeErr
	}
	emit(fitLine{Result: raw})
	return writeErr
}

// fitInChild runs a fit job in a child process (Config.FitCommand) and
// returns its answer; log is the job's logger.
func (p *pool) fitInChild(ctx context.Context, log *slog.Logger, job *fitJob, progress func(multirater.Progress)) (childResult, error) {
	cfg := p.s.cfg
	input, err := json.Marshal(job)
	if err != nil {
		return childResult{}, fmt.Errorf("encoding the fit job: %w", err)
	}
	cmd := exec.CommandContext(ctx, cfg.FitCommand[0], cfg.FitCommand[1:]...)
	cmd.Stdin = bytes.NewReader(input)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return childResult{}, err
	}
	if err := cmd.Start(); err != nil {
		return childResult{}, fmt.Errorf("starting the fit worker %q: %w", cfg.FitCommand[0], err)
	}
	var res childResult
	answered := false
	var fitErr error
	br := bufio.NewReaderSize(out, 1<<16)
	for {
		line, rerr := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var l fitLine
			if err := json.Unmarshal(line, &l); err != nil {
				log.Debug("fit worker output", "line", clipText(string(line), 200))
			}
			switch {
			case l.Progress != nil:
				progress(multirater.Progress{Fraction: l.Progress.Fraction, ETA: time.Duration(l.Progress.ETASeconds * float64(time.Second)),
					MaxRhat: l.Progress.MaxRhat, Phase: l.Progress.Phase})
			case l.Result != nil:
				var r multirater.FitResult
				if err := json.Unmarshal(l.Result, &r); err != nil {
					fitErr = fmt.Errorf("decoding the fit worker's result: %w", err)
				} else {
					res.res, answered = &r, true
				}
			case l.Fold != nil:
				res.fold, answered = l.Fold, true
			case l.Chains != nil:
				res.outputs, answered = l.Chains.Outputs, true
				res.sampling = annotations.SamplingTime{Wall: seconds(l.Chains.SamplingSeconds), CPU: seconds(l.Chains.SamplingCPUSeconds)}
			case l.Error != nil:
				if l.Error.Code == annotations.EINTERNAL || l.Error.Code == "" {
					fitErr = fmt.Errorf("fit worker: %s", l.Error.Message)
				} else {
					fitErr = &annotations.Error{Code: l.Error.Code, Message: l.Error.Message}
				}
			}
		}
		if rerr != nil {
			break
		}
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return childResult{}, ctx.Err()
	}
	if answered || fitErr != nil {
		return res, fitErr
	}
	if sig, name, ok := killedBy(cmd.ProcessState); ok {
		return childResult{}, &workerKilledError{signal: sig, name: name, stderr: strings.TrimSpace(stderr.String())}
	}
	msg := "no result"
	if werr != nil {
		msg = werr.Error()
	}
	return childResult{}, fmt.Errorf("the fit worker process ended without a result (%s): %s", msg, strings.TrimSpace(stderr.String()))
}

// workerKilledError is the end of a fit whose worker process was killed by
// a signal before it answered: SIGKILL is what the kernel's OOM killer
// sends. Such a fit is retried (Config.MaxAttempts), as when the whole
// server dies.
type workerKilledError struct {
	signal int
	name   string // e.g. "killed"
	stderr string
}

func (e *workerKilledError) Error() string {
	msg := "fit worker killed by " + e.reason()
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

// reason is "signal 9 (killed; out of memory?)".
func (e *workerKilledError) reason() string {
	hint := ""
	if e.signal == 9 {
		hint = "; out of memory?"
	}
	return fmt.Sprintf("signal %d (%s%s)", e.signal, e.name, hint)
}

// requeueMessage is the fit's message when it goes back to the queue after
// the given attempt.
func (e *workerKilledError) requeueMessage(attempt, maxAttempts int) string {
	return fmt.Sprintf("fit worker killed by %s, re-queued, attempt %d of %d", e.reason(), attempt, maxAttempts)
}

// failMessage is the fit's message when its last attempt was killed.
func (e *workerKilledError) failMessage(attempts int) string {
	return fmt.Sprintf("fit worker killed by %s on attempt %d of %d; gave up after %d attempts", e.reason(), attempts, attempts, attempts)
}

// tailBuffer keeps the last 4 KiB written to it (a child's stderr).
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
