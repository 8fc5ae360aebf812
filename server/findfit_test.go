package server

import (
	"context"
	"testing"
	"time"

	"concord/analysis"
	"concord/annotations"
)

// TestFindOrStartFit checks that a fit with the same settings is reused,
// queued or done, and that other settings start a new one.
func TestFindOrStartFit(t *testing.T) {
	e, project, _ := loadedEnv(t, "find-or-start")
	ctx := context.Background()
	spec := analysis.FitSpec{Model: analysis.ModelOrdinal, Engine: "gibbs", Chains: 2, Samples: 200, Burnin: 100, Seed: 7}

	f, err := e.srv.FindOrStartFit(ctx, project, spec)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.srv.FindOrStartFit(ctx, project, spec)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != f.ID {
		t.Errorf("second call started fit %d beside fit %d with the same settings", again.ID, f.ID)
	}
	seen := 0
	done, err := e.srv.WaitFit(ctx, f, 20*time.Millisecond, func(*annotations.Fit) { seen++ })
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != annotations.FitDone || (seen == 0 && !f.Status.Terminal()) {
		t.Fatalf("WaitFit: status %s after %d progress calls", done.Status, seen)
	}
	res, err := e.srv.ReadFitResult(ctx, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) == 0 || res.Model.Seed != 7 {
		t.Errorf("result: %d items, seed %d", len(res.Items), res.Model.Seed)
	}
	reused, err := e.srv.FindOrStartFit(ctx, project, spec)
	if err != nil {
		t.Fatal(err)
	}
	if reused.ID != f.ID || reused.Status != annotations.FitDone {
		t.Errorf("done fit not reused: got fit %d (%s), want %d", reused.ID, reused.Status, f.ID)
	}
	spec.Seed = 8
	other, err := e.srv.FindOrStartFit(ctx, project, spec)
	if err != nil {
		t.Fatal(err)
	}
	if other.ID == f.ID {
		t.Errorf("a fit with another seed reused fit %d", f.ID)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.srv.WaitFit(cctx, other, time.Millisecond, nil); err == nil && other.Status != annotations.FitDone {
		t.Error("WaitFit with a cancelled context returned no error")
	}
}
