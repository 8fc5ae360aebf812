package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"concord/annotations"
)

// TestJobsCoexistWithAPIWrites runs fit jobs (progress written many times
// per fit, as a running fit does) while other goroutines write through the
// application's pool as API requests do (imports, projects, fits with their
// jobs, cancels) and read. On SQLite River has its own one-connection
// handle on the file next to the application's writer and WAL readers:
// every write must succeed (no SQLITE_BUSY past the busy timeout, no
// deadlock), every fit must end done, and the data must be intact.
func TestJobsCoexistWithAPIWrites(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "jobs", "ordinal:1..5")
		const fits = 20
		for i := range fits {
			must(t, d.CreateFit(ctx, &annotations.Fit{ProjectID: p.ID, Model: "m", Spec: json.RawMessage(fmt.Sprintf(`{"seed":%d}`, i))}))
		}
		stop := startWorkers(ctx, t, d, annotations.WorkerOptions{Name: "w", Concurrency: 4, PollInterval: 10 * time.Millisecond, StaleAfter: 100 * time.Millisecond},
			runnerFunc(func(ctx context.Context, f *annotations.Fit) error {
				for i := range 20 {
					if _, err := d.UpdateFitProgress(ctx, f.ID, annotations.FitProgress{Progress: float64(i) / 20, Message: "sampling"}); err != nil {
						return err
					}
				}
				return d.FinishFit(ctx, f.ID, annotations.FitDone, "", []byte("{}"))
			}))

		// API writers and readers meanwhile.
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for w := range 3 {
			wg.Go(func() {
				q := newProject(t, d, fmt.Sprintf("writer-%d", w), "ordinal:1..5")
				for i := range 5 {
					ds := makeDataset(40, 5, 3)
					if _, err := d.Import(ctx, q.ID, ds, annotations.ImportOptions{Replace: true}); err != nil {
						errs <- fmt.Errorf("writer %d import %d: %w", w, i, err)
						return
					}
					f := &annotations.Fit{ProjectID: q.ID, Model: "m", Spec: json.RawMessage(fmt.Sprintf(`{"seed":%d}`, i))}
					if err := d.CreateFit(ctx, f); err != nil {
						errs <- fmt.Errorf("writer %d fit %d: %w", w, i, err)
						return
					}
					if _, err := d.RequestCancel(ctx, f.ID); err != nil {
						errs <- fmt.Errorf("writer %d cancel %d: %w", w, i, err)
						return
					}
					if _, err := d.ListProjects(ctx); err != nil {
						errs <- fmt.Errorf("writer %d read %d: %w", w, i, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		waitFits(t, d, p.ID, fits, annotations.FitDone)
		stop()
		// The writers' fits were cancelled (before or while they ran) or
		// done; none is left queued or running.
		ps, err := d.ListProjects(ctx)
		must(t, err)
		for _, pr := range ps {
			list, err := d.ListFits(ctx, pr.ID)
			must(t, err)
			for _, f := range list {
				if !f.Status.Terminal() {
					t.Errorf("project %s: fit %d left %s", pr.Name, f.ID, f.Status)
				}
			}
			if pr.Name != "jobs" && pr.Labels != 120 {
				t.Errorf("project %s has %d labels, want 120", pr.Name, pr.Labels)
			}
		}
	})
}

// TestDuplicateOnlyOfUnfinishedFits: the same fit (model, spec, labels
// version) is a duplicate of a queued or running one; once that fit has
// ended it is new, even while River has yet to record its job's end, and
// after the labels changed it is new too.
func TestDuplicateOnlyOfUnfinishedFits(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "ordinal:1..5")
		spec := json.RawMessage(`{"seed":1}`)
		submit := func() (*annotations.Fit, bool) {
			f := &annotations.Fit{ProjectID: p.ID, Model: "m", Spec: spec}
			dup, err := d.CreateFitWithin(ctx, f, 0)
			must(t, err)
			return f, dup
		}
		first, dup := submit()
		if dup {
			t.Fatal("the first fit is a duplicate")
		}
		tests := []struct {
			name  string
			setup func()
			dup   bool
		}{
			{"queued", func() {}, true},
			{"running", func() { claimAs(t, d, "w") }, true},
			{"done, its job still running", func() { must(t, d.FinishFit(ctx, first.ID, annotations.FitDone, "", []byte("{}"))) }, false},
		}
		for _, tc := range tests {
			tc.setup()
			f, dup := submit()
			if dup != tc.dup || (dup && f.ID != first.ID) || (!dup && f.ID == first.ID) {
				t.Errorf("%s: duplicate %v, fit %d (first %d)", tc.name, dup, f.ID, first.ID)
			}
			if !dup {
				first = f
			}
		}
		// The labels change: the same spec is a new fit.
		_, err := d.Import(ctx, p.ID, makeDataset(10, 3, 2), annotations.ImportOptions{})
		must(t, err)
		if f, dup := submit(); dup || f.ID == first.ID {
			t.Errorf("after new labels: duplicate %v, fit %d", dup, f.ID)
		}
	})
}

// TestRetryPolicy: a fit that fails on its data ends its job as cancelled
// after one attempt (not retried); an attempt that ends for a reason outside
// the fit (ErrRetry: its process was killed) puts the fit back in the queue
// with the reason and River retries it (attempt 2, after its backoff); once
// MaxAttempts attempts have ended so, the fit fails with the reason.
func TestRetryPolicy(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "ordinal:1..5")
		mk := func(seed int) int64 {
			f := &annotations.Fit{ProjectID: p.ID, Model: "m", Spec: json.RawMessage(fmt.Sprintf(`{"seed":%d}`, seed))}
			must(t, d.CreateFit(ctx, f))
			return f.ID
		}
		bad, flaky, doomed := mk(1), mk(2), mk(3)
		var mu sync.Mutex
		attempts := map[int64][]int{}
		stop := startWorkers(ctx, t, d, retrying(),
			runnerFunc(func(ctx context.Context, f *annotations.Fit) error {
				mu.Lock()
				attempts[f.ID] = append(attempts[f.ID], f.Attempts)
				mu.Unlock()
				switch {
				case f.ID == bad:
					return d.FinishFit(ctx, f.ID, annotations.FitFailed, "the data has no labels", nil)
				case f.ID == flaky && f.Attempts == 2:
					return d.FinishFit(ctx, f.ID, annotations.FitDone, "", []byte("{}"))
				default:
					return fmt.Errorf("fit worker killed by signal 9: %w", annotations.ErrRetry)
				}
			}))
		deadline := time.Now().Add(2 * time.Minute)
		for {
			fb, _ := d.FindFitByID(ctx, bad)
			ff, _ := d.FindFitByID(ctx, flaky)
			fd, _ := d.FindFitByID(ctx, doomed)
			if fb.Status.Terminal() && ff.Status.Terminal() && fd.Status.Terminal() {
				if fb.Status != annotations.FitFailed || fb.Message != "the data has no labels" {
					t.Errorf("fit failing on its data: %+v", fb)
				}
				if ff.Status != annotations.FitDone || ff.Attempts != 2 {
					t.Errorf("fit killed once: %+v", ff)
				}
				if fd.Status != annotations.FitFailed || fd.Message != "fit worker killed by signal 9 on attempt 2 of 2; gave up after 2 attempts" {
					t.Errorf("fit killed twice: %+v", fd)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("fits not ended: %+v %+v %+v", fb, ff, fd)
			}
			time.Sleep(5 * time.Millisecond)
		}
		stop()
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(attempts[bad]) != "[1]" || fmt.Sprint(attempts[flaky]) != "[1 2]" || fmt.Sprint(attempts[doomed]) != "[1 2]" {
			t.Errorf("attempts: %v", attempts)
		}
		// River's records: the fit that failed on its data is a cancelled
		// job; the others ran twice, with the reason of the first attempt.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			jobs, _, err := d.ListJobs(ctx, 10)
			must(t, err)
			states := map[int64]string{}
			for _, j := range jobs {
				states[j.FitID] = j.State
				if j.FitID == flaky && j.State == "completed" && (len(j.Errors) != 1 || !strings.Contains(j.Errors[0], "attempt 1: fit worker killed by signal 9")) {
					t.Fatalf("job of the fit killed once: %+v", j)
				}
			}
			if states[bad] == "cancelled" && states[flaky] == "completed" && states[doomed] == "cancelled" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job states %v", states)
			}
		}
	})
}
