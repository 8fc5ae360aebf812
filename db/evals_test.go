package db

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"concord/annotations"
)

// foldRunner is an EvalRunner whose folds output their letter; fold jobs
// fail as fail says.
type foldRunner struct {
	fail func(e *annotations.Eval, fold, attempt int) error
	mu   sync.Mutex
	runs map[[2]int64]int // (evaluation, fold) -> attempts
	comb map[int64]int    // evaluation -> combines
}

func (r *foldRunner) RunFit(ctx context.Context, f *annotations.Fit) error {
	return fmt.Errorf("fit %d: no fits here", f.ID)
}

func (r *foldRunner) RunEvalFold(ctx context.Context, e *annotations.Eval, fold int, report func(float64) error) ([]byte, error) {
	r.mu.Lock()
	r.runs[[2]int64{e.ID, int64(fold)}]++
	n := r.runs[[2]int64{e.ID, int64(fold)}]
	r.mu.Unlock()
	if err := report(0.5); err != nil {
		return nil, err
	}
	if err := r.fail(e, fold, n); err != nil {
		return nil, err
	}
	return []byte{byte('a' + fold)}, nil
}

func (r *foldRunner) CombineEval(ctx context.Context, e *annotations.Eval, outputs [][]byte) ([]byte, error) {
	r.mu.Lock()
	r.comb[e.ID]++
	r.mu.Unlock()
	return bytes.Join(outputs, nil), nil
}

// TestFoldJobs: an evaluation's folds are jobs (the parts of fanout.go, as
// a fit's chains): one job per fold (three at once here) and one combine
// with the outputs in fold order; a fold killed once is retried; one
// killed on every attempt fails the evaluation naming the fold and the
// attempts; a fold that fails on the data fails the evaluation at once,
// with no combine; a cancelled evaluation's fold jobs end unrun.
func TestFoldJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "ordinal:1..5")
		mk := func(folds int) int64 {
			e := &annotations.Eval{ProjectID: p.ID, Spec: []byte(`{}`), Folds: folds}
			must(t, d.CreateEval(ctx, e))
			return e.ID
		}
		good, spent, bad, cancelled := mk(5), mk(2), mk(3), mk(4)
		must(t, d.CancelEval(ctx, cancelled))
		killed := fmt.Errorf("fit worker killed by signal 9: %w", annotations.ErrRetry)
		r := &foldRunner{runs: map[[2]int64]int{}, comb: map[int64]int{}, fail: func(e *annotations.Eval, fold, attempt int) error {
			switch {
			case e.ID == good && fold == 2 && attempt == 1, e.ID == spent && fold == 0:
				return killed
			case e.ID == bad && fold == 1:
				return annotations.Errorf(annotations.EINVALID, "fold 2 has no labels")
			}
			return nil
		}}
		stop := startWorkers(ctx, t, d, retrying(), r)
		ended := waitEnded(ctx, t, "evaluations", d.FindEval, func(e *annotations.Eval) annotations.FitStatus { return e.Status }, good, spent, bad, cancelled)
		if e := ended[good]; e.Status != annotations.FitDone || string(e.Result) != "abcde" || len(e.FoldJobs) != 5 {
			t.Errorf("evaluation: %+v, result %q", e, e.Result)
		} else {
			for _, f := range e.FoldJobs {
				if want := 1 + btoi(f.Fold == 2); f.State != "done" || f.Worker != "w" || f.Attempts != want {
					t.Errorf("fold %d: %+v, want %d attempts", f.Fold, f, want)
				}
			}
		}
		if e := ended[spent]; e.Status != annotations.FitFailed ||
			e.Message != "fold 1: fit worker killed by signal 9 on attempt 2 of 2; gave up after 2 attempts" {
			t.Errorf("evaluation whose fold was killed twice: %+v", e)
		}
		if e := ended[bad]; e.Status != annotations.FitFailed || e.Message != "fold 2 has no labels" {
			t.Errorf("evaluation failing on its data: %+v", e)
		}
		if e := ended[cancelled]; e.Status != annotations.FitCancelled || !strings.Contains(e.Message, "cancelled") {
			t.Errorf("cancelled evaluation: %+v", e)
		}
		waitJobsEnded(t, d)
		stop()
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.comb[good] != 1 || r.comb[spent]+r.comb[bad]+r.comb[cancelled] != 0 {
			t.Errorf("combines: %v", r.comb)
		}
		for k := range r.runs {
			if k[0] == cancelled {
				t.Errorf("fold %d of the cancelled evaluation ran", k[1])
			}
		}
	})
}
