package server

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// Evaluations whose folds are jobs (concord eval --db DSN --jobs): the pool
// is an annotations.EvalRunner. A fold runs in a child process as fits do
// (Config.FitCommand: a crash or the OOM killer takes the child, not the
// worker, and the fold is retried), or in the worker process without one;
// its output is the fold's result (analysis.EvalFoldResult) and the
// combine's the evaluation's (analysis.EvalResult), both encoded with
// encoding/gob.

// RunEvalFold runs fold f of evaluation e (annotations.EvalRunner).
func (p *pool) RunEvalFold(jobsCtx context.Context, e *annotations.Eval, f int, report func(float64) error) ([]byte, error) {
	s := p.s
	log := s.log.With("eval", e.ID, "project", e.ProjectID, "fold", f+1)
	var spec analysis.EvalSpec
	if err := json.Unmarshal(e.Spec, &spec); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "the stored evaluation settings cannot be read: %v", err)
	}
	var frac atomic.Uint64
	var out childResult
	err := s.runPart(jobsCtx, log, "fold", fmt.Sprintf("internal error during fold %d of evaluation %d (see the worker's log)", f+1, e.ID),
		func() error { return report(float64(frac.Load()) / 1e9) },
		func(ctx context.Context) (err error) {
			defer func() {
				if r := recover(); r != nil {
					log.Error("panic during a fold", "panic", r, "stack", stack())
					out, err = childResult{}, fmt.Errorf("panic: %v", r)
				}
			}()
			ds, err := s.store.Dataset(ctx, e.ProjectID)
			if err != nil {
				return err
			}
			job := &fitJob{Dataset: ds, Eval: e.Spec, Fold: f}
			progress := func(pr multirater.Progress) { frac.Store(uint64(pr.Fraction * 1e9)) }
			if len(s.cfg.FitCommand) > 0 {
				out, err = p.fitInChild(ctx, log, job, progress)
			} else {
				out, err = runJob(ctx, job, progress)
			}
			return err
		})
	return out.fold, err
}

// runFold runs the fold of job (Eval, Fold) and returns its result encoded
// with encoding/gob.
func runFold(ctx context.Context, job *fitJob, progress func(multirater.Progress)) ([]byte, error) {
	var spec analysis.EvalSpec
	if err := json.Unmarshal(job.Eval, &spec); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "the stored evaluation settings cannot be read: %v", err)
	}
	fr, err := analysis.EvalFold(ctx, job.Dataset, spec, job.Fold, func(pr analysis.EvalProgress) {
		progress(multirater.Progress{Fraction: pr.Fraction})
	})
	if err != nil {
		return nil, err
	}
	return gobBytes(fr)
}

// CombineEval pools the outputs of every fold of evaluation e into its
// result (annotations.EvalRunner).
func (p *pool) CombineEval(ctx context.Context, e *annotations.Eval, outputs [][]byte) ([]byte, error) {
	var spec analysis.EvalSpec
	if err := json.Unmarshal(e.Spec, &spec); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "the stored evaluation settings cannot be read: %v", err)
	}
	ds, err := p.s.store.Dataset(ctx, e.ProjectID)
	if err != nil {
		return nil, err
	}
	folds := make([]*analysis.EvalFoldResult, len(outputs))
	for f, o := range outputs {
		if err := gob.NewDecoder(bytes.NewReader(o)).Decode(&folds[f]); err != nil {
			return nil, fmt.Errorf("decoding fold %d: %w", f+1, err)
		}
	}
	res, err := analysis.CombineEval(ds, spec, folds)
	if err != nil {
		return nil, err
	}
	return gobBytes(res)
}

// DecodeEvalResult decodes the result of an evaluation whose folds ran as
// jobs (annotations.Eval.Result).
func DecodeEvalResult(b []byte) (*analysis.EvalResult, error) {
	var res analysis.EvalResult
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&res); err != nil {
		return nil, fmt.Errorf("decoding the evaluation's result: %w", err)
	}
	return &res, nil
}

// gobBytes encodes v with encoding/gob (the outputs of folds and the
// results of evaluations).
func gobBytes(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
