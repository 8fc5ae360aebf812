package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"concord/analysis"
	"concord/annotations"
)

// TestEvalFoldsInChildProcesses: an evaluation's folds run as jobs in fit
// worker child processes (Config.FitCommand), on SQLite and PostgreSQL: the
// child of one fold is killed (SIGKILL, as the OOM killer) and that fold
// alone is retried; the evaluation ends with the result of the evaluation
// in one process, bit for bit.
func TestEvalFoldsInChildProcesses(t *testing.T) {
	cmd, kills := killedFitWorkers(t)
	forEachBackend(t, func(t *testing.T, dsn string) {
		kills(t, 1)
		e := newEnvDSN(t, dsn, func(c *Config) {
			c.FitCommand = cmd
			c.Workers = 2
			c.MaxAttempts = 3
		})
		id, _ := e.loadedProject("k1")
		ctx := context.Background()
		spec := analysis.EvalSpec{Folds: 3, RaterBaselines: "1", Fit: analysis.FitSpec{Model: analysis.ModelOrdinal, Engine: "gibbs", Samples: 100, Burnin: 50, Seed: 4}}
		raw, _ := json.Marshal(spec)
		ev := &annotations.Eval{ProjectID: id, Spec: raw, Folds: spec.Folds}
		if err := e.store.CreateEval(ctx, ev); err != nil {
			t.Fatal(err)
		}
		var got *annotations.Eval
		for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			var err error
			if got, err = e.store.FindEval(ctx, ev.ID); err != nil {
				t.Fatal(err)
			}
			if got.Status.Terminal() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("evaluation still %s: %s", got.Status, got.Message)
			}
		}
		if got.Status != annotations.FitDone {
			t.Fatalf("evaluation ended %s: %s", got.Status, got.Message)
		}
		attempts := 0
		for _, f := range got.FoldJobs {
			attempts += f.Attempts
		}
		if attempts != spec.Folds+1 {
			t.Errorf("attempts of the folds %+v: want one fold retried once", got.FoldJobs)
		}
		res, err := DecodeEvalResult(got.Result)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := e.store.Dataset(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		local, err := analysis.Eval(ctx, ds, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(res)
		b, _ := json.Marshal(local)
		if string(a) != string(b) {
			t.Errorf("the folds in child processes give\n%s\nin one process:\n%s", a, b)
		}
	})
}
