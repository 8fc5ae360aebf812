package db

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"concord/annotations"

	"github.com/riverqueue/river/riverdriver"
)

func TestFitLifecycle(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "ordinal:1..5")

		f := &annotations.Fit{ProjectID: p.ID, Model: "ordinal-gp", Spec: json.RawMessage(`{"chains":4}`), Seed: math.MaxUint64 - 7}
		must(t, d.CreateFit(ctx, f))
		if f.ID == 0 || f.Status != annotations.FitQueued || f.CreatedAt.IsZero() {
			t.Fatalf("created %+v", f)
		}
		got, err := d.FindFitByID(ctx, f.ID)
		must(t, err)
		if got.Seed != f.Seed || string(got.Spec) != `{"chains":4}` || !got.CreatedAt.Equal(f.CreatedAt) {
			t.Errorf("read back %+v, want %+v", got, f)
		}
		wantCode(t, d.CreateFit(ctx, &annotations.Fit{ProjectID: p.ID + 9, Model: "m"}), annotations.ENOTFOUND)
		wantCode(t, d.CreateFit(ctx, &annotations.Fit{ProjectID: p.ID}), annotations.EINVALID)
		wantCode(t, d.CreateFit(ctx, &annotations.Fit{ProjectID: p.ID, Model: "m", Spec: json.RawMessage(`{`)}), annotations.EINVALID)
		wantCode(t, d.CreateFit(ctx, &annotations.Fit{ProjectID: p.ID, Model: "m\x00"}), annotations.EINVALID)

		// Not yet running.
		_, err = d.UpdateFitProgress(ctx, f.ID, annotations.FitProgress{Progress: 0.1})
		wantCode(t, err, annotations.EINVALID)
		wantCode(t, d.FinishFit(ctx, f.ID, annotations.FitDone, "", []byte("{}")), annotations.EINVALID)
		wantCode(t, d.requeueFit(ctx, f.ID, "x"), annotations.EINVALID)
		_, err = d.FitResult(ctx, f.ID)
		wantCode(t, err, annotations.ENOTFOUND)

		c := claimAs(t, d, "worker-1")
		if c == nil || c.ID != f.ID || c.Status != annotations.FitRunning || c.Worker != "worker-1" || c.Attempts != 1 || c.StartedAt == nil {
			t.Fatalf("claimed %+v", c)
		}
		if none := claimAs(t, d, "worker-2"); none != nil {
			t.Fatalf("claim with an empty queue = %v", none)
		}
		cancel, err := d.UpdateFitProgress(ctx, f.ID, annotations.FitProgress{Progress: 0.5, ETASeconds: 12, MaxRhat: math.NaN(), Message: "sampling\x00\xff"})
		must(t, err)
		if cancel {
			t.Error("cancel reported before it was requested")
		}
		_, err = d.UpdateFitProgress(ctx, f.ID, annotations.FitProgress{Progress: 1.5})
		wantCode(t, err, annotations.EINVALID)
		_, err = d.UpdateFitProgress(ctx, f.ID+100, annotations.FitProgress{})
		wantCode(t, err, annotations.ENOTFOUND)
		got, err = d.FindFitByID(ctx, f.ID)
		must(t, err)
		if got.Progress != 0.5 || got.ETASeconds != 12 || got.MaxRhat != 0 || got.Message != "sampling\uFFFD\uFFFD" {
			t.Errorf("progress stored as %+v", got)
		}
		wantCode(t, d.DeleteFit(ctx, f.ID), annotations.EINVALID)

		// Cancel a running fit: requested, reported, then finished.
		rc, err := d.RequestCancel(ctx, f.ID)
		must(t, err)
		if rc.Status != annotations.FitRunning || !rc.CancelRequested {
			t.Errorf("cancel of a running fit: %+v", rc)
		}
		cancel, err = d.UpdateFitProgress(ctx, f.ID, annotations.FitProgress{Progress: 0.6})
		must(t, err)
		if !cancel {
			t.Error("cancel request not reported")
		}
		must(t, d.FinishFit(ctx, f.ID, annotations.FitCancelled, "cancelled by user", nil))
		wantCode(t, d.FinishFit(ctx, f.ID, annotations.FitDone, "", []byte("{}")), annotations.EINVALID)
		rc, err = d.RequestCancel(ctx, f.ID)
		must(t, err)
		if rc.Status != annotations.FitCancelled || rc.FinishedAt == nil || rc.Message != "cancelled by user" {
			t.Errorf("cancel of a finished fit changed it: %+v", rc)
		}

		// A done fit keeps its result; listings leave results out.
		g := &annotations.Fit{ProjectID: p.ID, Model: "classification-gp", Seed: 7}
		must(t, d.CreateFit(ctx, g))
		claimAs(t, d, "w")
		wantCode(t, d.FinishFit(ctx, g.ID, annotations.FitRunning, "", nil), annotations.EINVALID)
		wantCode(t, d.FinishFit(ctx, g.ID, annotations.FitDone, "", nil), annotations.EINVALID)
		result := bytes.Repeat([]byte(`{"x":1}`), 1000)
		must(t, d.FinishFit(ctx, g.ID, annotations.FitDone, "converged", result))
		res, err := d.FitResult(ctx, g.ID)
		must(t, err)
		if !bytes.Equal(res, result) {
			t.Errorf("result of %d bytes read back as %d bytes", len(result), len(res))
		}
		got, err = d.FindFitByID(ctx, g.ID)
		must(t, err)
		if got.Status != annotations.FitDone || got.Progress != 1 || got.FinishedAt == nil || got.Message != "converged" {
			t.Errorf("done fit %+v", got)
		}

		// A queued fit is cancelled at once.
		h := &annotations.Fit{ProjectID: p.ID, Model: "m"}
		must(t, d.CreateFit(ctx, h))
		rc, err = d.RequestCancel(ctx, h.ID)
		must(t, err)
		if rc.Status != annotations.FitCancelled || rc.FinishedAt == nil {
			t.Errorf("cancel of a queued fit: %+v", rc)
		}
		_, err = d.RequestCancel(ctx, h.ID+100)
		wantCode(t, err, annotations.ENOTFOUND)

		list, err := d.ListFits(ctx, p.ID)
		must(t, err)
		if len(list) != 3 || list[0].ID != h.ID || list[2].ID != f.ID {
			t.Errorf("ListFits = %+v", list)
		}
		_, err = d.ListFits(ctx, p.ID+100)
		wantCode(t, err, annotations.ENOTFOUND)

		must(t, d.DeleteFit(ctx, g.ID))
		_, err = d.FitResult(ctx, g.ID)
		wantCode(t, err, annotations.ENOTFOUND)
		wantCode(t, d.DeleteFit(ctx, g.ID), annotations.ENOTFOUND)
		_, err = d.FindFitByID(ctx, g.ID)
		wantCode(t, err, annotations.ENOTFOUND)
	})
}

// claimAs claims the next available fit job as River's producer of
// worker would (River's driver: the job becomes running, attempted by
// worker) and starts its fit, as workFit does; nil when no job is
// available. A claim without workFit behind it is what a worker
// process that died leaves.
func claimAs(t *testing.T, d *DB, worker string) *annotations.Fit {
	t.Helper()
	ctx := context.Background()
	n := time.Now()
	res, err := d.jobs.driver.GetExecutor().JobGetAvailable(ctx, &riverdriver.JobGetAvailableParams{
		ClientID: worker, MaxAttemptedBy: 100, MaxToLock: 1, Now: &n, Queue: fitQueue,
	})
	must(t, err)
	if len(res.Jobs) == 0 {
		return nil
	}
	job := res.Jobs[0]
	var args fitArgs
	must(t, json.Unmarshal(job.EncodedArgs, &args))
	f, err := d.startFit(ctx, args.FitID, worker, job.Attempt)
	must(t, err)
	return f
}

func TestRequeue(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "ordinal:1..5")
		f := &annotations.Fit{ProjectID: p.ID, Model: "m"}
		must(t, d.CreateFit(ctx, f))
		claimAs(t, d, "w1")
		must(t, d.requeueFit(ctx, f.ID, "server shutting down"))
		got, err := d.FindFitByID(ctx, f.ID)
		must(t, err)
		if got.Status != annotations.FitQueued || got.Worker != "" || got.StartedAt != nil || got.Attempts != 1 || got.Message != "server shutting down" {
			t.Errorf("requeued %+v", got)
		}
		// A running fit with a pending cancel is cancelled, not re-queued.
		_, err = d.startFit(ctx, f.ID, "w2", 2)
		must(t, err)
		_, err = d.RequestCancel(ctx, f.ID)
		must(t, err)
		must(t, d.requeueFit(ctx, f.ID, "shutting down"))
		got, err = d.FindFitByID(ctx, f.ID)
		must(t, err)
		if got.Status != annotations.FitCancelled {
			t.Errorf("requeue with a pending cancel left %+v", got)
		}
	})
}

// TestFitJobsRunOnce lets many workers of two processes (two DBs on one
// database) drain one queue through River: every fit runs exactly once.
func TestFitJobsRunOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.dsn(t)
		d1, err := Open(ctx, dsn, Options{})
		must(t, err)
		defer d1.Close()
		d2, err := Open(ctx, dsn, Options{})
		must(t, err)
		defer d2.Close()
		p := newProject(t, d1, "p", "ordinal:1..5")
		const n = 24
		for i := range n {
			seededFit(ctx, t, d1, p.ID, i)
		}
		var mu sync.Mutex
		runs := map[int64][]string{}
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for i, d := range []*DB{d1, d2} {
			name := fmt.Sprintf("w%d", i+1)
			wg.Go(func() {
				err := d.RunWorkers(wctx, annotations.WorkerOptions{Name: name, Concurrency: 4, PollInterval: 20 * time.Millisecond},
					runnerFunc(func(ctx context.Context, f *annotations.Fit) error {
						mu.Lock()
						runs[f.ID] = append(runs[f.ID], name)
						mu.Unlock()
						return d.FinishFit(ctx, f.ID, annotations.FitDone, "", []byte("{}"))
					}))
				if err != nil {
					t.Error(err)
				}
			})
		}
		waitFits(t, d1, p.ID, n, annotations.FitDone)
		stop()
		wg.Wait()
		for id, by := range runs {
			if len(by) != 1 {
				t.Errorf("fit %d ran %d times: %v", id, len(by), by)
			}
		}
		if len(runs) != n {
			t.Errorf("%d fits ran, want %d", len(runs), n)
		}
	})
}

// runnerFunc is a FitRunner.
type runnerFunc func(ctx context.Context, f *annotations.Fit) error

func (r runnerFunc) RunFit(ctx context.Context, f *annotations.Fit) error { return r(ctx, f) }

// waitFits waits until n fits of the project are in state want (the
// deadline only catches a queue that stops).
func waitFits(t *testing.T, d *DB, project int64, n int, want annotations.FitStatus) []annotations.Fit {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		fits, err := d.ListFits(context.Background(), project)
		must(t, err)
		k := 0
		for _, f := range fits {
			if f.Status == want {
				k++
			}
		}
		if k >= n {
			return fits
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d fits %s: %+v", k, n, want, fits)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// seenAt is when worker last recorded that it is alive.
func seenAt(t *testing.T, d *DB, worker string) time.Time {
	t.Helper()
	_, workers, err := d.ListJobs(context.Background(), 1)
	must(t, err)
	for _, w := range workers {
		if w.Name == worker {
			return w.SeenAt
		}
	}
	t.Fatalf("worker %q not recorded: %+v", worker, workers)
	return time.Time{}
}

// TestRescueJobsOfDeadWorkers: the job of a worker that no longer records
// that it is alive is rescued once StaleAfter has passed since it was last
// seen: its fit goes back to the queue with the reason and a live worker
// runs it to the end (attempt 2), or, once its attempts are spent, it
// fails with the reason. A job of a worker that is alive is left alone,
// however long it runs. The rescuer is run at chosen instants (rescueAt),
// so that the test does not depend on the machine's speed.
func TestRescueJobsOfDeadWorkers(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "ordinal:1..5")
		mk := func(seed int) int64 { return seededFit(ctx, t, d, p.ID, seed) }
		const stale = 30 * time.Second
		live := annotations.WorkerOptions{Name: "live", Queues: Queues, Concurrency: 1}
		must(t, d.touchWorker(ctx, live, true))
		spent := mk(1)
		if f := claimAs(t, d, "ghost-1"); f == nil || f.ID != spent {
			t.Fatalf("ghost claim: %+v", f)
		}
		long := mk(2)
		if f := claimAs(t, d, "live"); f == nil || f.ID != long {
			t.Fatalf("live claim: %+v", f)
		}
		must(t, d.touchWorker(ctx, live, false))
		seen := seenAt(t, d, "live")

		// Before StaleAfter has passed since the claims, nothing.
		n, err := d.rescueAt(ctx, seen.Add(stale/2), stale, 1)
		must(t, err)
		if n != 0 {
			t.Errorf("rescued %d jobs before StaleAfter", n)
		}
		// StaleAfter after live's last record: ghost-1's job has had its
		// one attempt; live's job is left alone.
		n, err = d.rescueAt(ctx, seen.Add(stale), stale, 1)
		must(t, err)
		got, _ := d.FindFitByID(ctx, spent)
		if n != 1 || got.Status != annotations.FitFailed || !strings.Contains(got.Message, `worker "ghost-1" stopped responding on attempt 1 of 1; gave up after 1 attempts`) {
			t.Errorf("rescued %d; spent fit: %+v", n, got)
		}
		if got, _ := d.FindFitByID(ctx, long); got.Status != annotations.FitRunning || got.Worker != "live" {
			t.Errorf("the live worker's fit was disturbed: %+v", got)
		}

		retried := mk(3)
		if f := claimAs(t, d, "ghost-2"); f == nil || f.ID != retried {
			t.Fatalf("ghost claim: %+v", f)
		}
		must(t, d.touchWorker(ctx, live, false))
		seen = seenAt(t, d, "live")
		n, err = d.rescueAt(ctx, seen.Add(stale), stale, 2)
		must(t, err)
		got, _ = d.FindFitByID(ctx, retried)
		if n != 1 || got.Status != annotations.FitQueued || got.Message != `worker "ghost-2" stopped responding, re-queued, attempt 1 of 2` {
			t.Errorf("rescued %d; retried fit: %+v", n, got)
		}
		if got, _ := d.FindFitByID(ctx, long); got.Status != annotations.FitRunning || got.Worker != "live" {
			t.Errorf("the live worker's fit was disturbed: %+v", got)
		}

		// A live worker runs the rescued fit (after River's backoff).
		stop := startWorkers(ctx, t, d, annotations.WorkerOptions{Name: "w", PollInterval: 20 * time.Millisecond, StaleAfter: time.Hour},
			runnerFunc(func(ctx context.Context, f *annotations.Fit) error {
				return d.FinishFit(ctx, f.ID, annotations.FitDone, "", []byte("{}"))
			}))
		deadline := time.Now().Add(2 * time.Minute)
		for got, _ = d.FindFitByID(ctx, retried); got.Status != annotations.FitDone; got, _ = d.FindFitByID(ctx, retried) {
			if time.Now().After(deadline) {
				t.Fatalf("rescued fit not done: %+v", got)
			}
			time.Sleep(20 * time.Millisecond)
		}
		stop()
		if got.Attempts != 2 || got.Worker != "w" {
			t.Errorf("rescued fit done as %+v", got)
		}
		jobs, _, err := d.ListJobs(ctx, 10)
		must(t, err)
		for _, j := range jobs {
			if j.FitID == retried && (!slices.Equal(j.AttemptedBy, []string{"ghost-2", "w"}) || j.State != "completed" || len(j.Errors) != 1) {
				t.Errorf("job of the rescued fit: %+v", j)
			}
		}
	})
}

func TestAPIKeys(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "ordinal:1..5")
		q := newProject(t, d, "q", "ordinal:1..5")
		k := &annotations.APIKey{ProjectID: p.ID, Name: "dashboard", Prefix: "ck_abc", Hash: []byte{0, 1, 2, 255}, ReadOnly: true}
		must(t, d.CreateAPIKey(ctx, k))
		if k.ID == 0 || k.CreatedAt.IsZero() {
			t.Fatalf("created %+v", k)
		}
		must(t, d.CreateAPIKey(ctx, &annotations.APIKey{ProjectID: q.ID, Name: "dashboard", Prefix: "ck_abc", Hash: []byte{9}}))
		must(t, d.CreateAPIKey(ctx, &annotations.APIKey{ProjectID: p.ID, Name: "writer", Prefix: "ck_def", Hash: []byte{8}}))
		wantCode(t, d.CreateAPIKey(ctx, &annotations.APIKey{ProjectID: p.ID, Name: "dashboard", Prefix: "x", Hash: []byte{1}}), annotations.ECONFLICT)
		wantCode(t, d.CreateAPIKey(ctx, &annotations.APIKey{ProjectID: p.ID + q.ID, Name: "k", Prefix: "x", Hash: []byte{1}}), annotations.ENOTFOUND)
		wantCode(t, d.CreateAPIKey(ctx, &annotations.APIKey{ProjectID: p.ID, Name: "k", Prefix: "x"}), annotations.EINVALID)
		wantCode(t, d.CreateAPIKey(ctx, &annotations.APIKey{ProjectID: p.ID, Name: " ", Prefix: "x", Hash: []byte{1}}), annotations.EINVALID)

		found, err := d.FindAPIKeyByPrefix(ctx, "ck_abc")
		must(t, err)
		if len(found) != 2 || found[0].ID != k.ID || !bytes.Equal(found[0].Hash, k.Hash) || !found[0].ReadOnly || found[0].ProjectID != p.ID || !found[0].CreatedAt.Equal(k.CreatedAt) {
			t.Errorf("FindAPIKeyByPrefix = %+v", found)
		}
		found, err = d.FindAPIKeyByPrefix(ctx, "nope")
		must(t, err)
		if len(found) != 0 {
			t.Errorf("unknown prefix found %+v", found)
		}
		list, err := d.ListAPIKeys(ctx, p.ID)
		must(t, err)
		if len(list) != 2 || list[0].Name != "dashboard" || list[1].Name != "writer" || list[1].ReadOnly {
			t.Errorf("ListAPIKeys = %+v", list)
		}
		// A key is deleted only through its own project.
		wantCode(t, d.DeleteAPIKey(ctx, q.ID, k.ID), annotations.ENOTFOUND)
		must(t, d.DeleteAPIKey(ctx, p.ID, k.ID))
		wantCode(t, d.DeleteAPIKey(ctx, p.ID, k.ID), annotations.ENOTFOUND)
		list, err = d.ListAPIKeys(ctx, p.ID)
		must(t, err)
		if len(list) != 1 {
			t.Errorf("after delete: %+v", list)
		}
	})
}

// TestFitQuota: a project may have maxActive fits queued or running; one
// more is refused with ETOOMANY naming the limit, other projects are not
// affected, and a fit that ends frees its place.
func TestFitQuota(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		a := newProject(t, d, "a", "ordinal:1..5")
		other := newProject(t, d, "b", "ordinal:1..5")
		seed := 0
		fit := func(p *annotations.Project) *annotations.Fit {
			seed++
			return specFit(p.ID, `{"seed":%d}`, seed)
		}
		within := func(f *annotations.Fit, max int) error {
			_, err := d.CreateFitWithin(ctx, f, max)
			return err
		}
		var ids []int64
		for range 3 {
			f := fit(a)
			must(t, within(f, 3))
			ids = append(ids, f.ID)
		}
		c := claimAs(t, d, "w")
		err := within(fit(a), 3)
		wantCode(t, err, annotations.ETOOMANY)
		if err == nil || !strings.Contains(err.Error(), "limit per project is 3") {
			t.Errorf("quota error %v does not name the limit", err)
		}
		// The same fit again is a duplicate, not over the quota.
		same := &annotations.Fit{ProjectID: a.ID, Model: "m", Spec: json.RawMessage(`{"seed":2}`)}
		dup, err := d.CreateFitWithin(ctx, same, 3)
		if err != nil || !dup || same.ID != ids[1] || !same.Duplicate {
			t.Errorf("same fit again: %v, %v, %+v", dup, err, same)
		}
		must(t, within(fit(other), 3))
		must(t, d.CreateFit(ctx, fit(a))) // no quota
		must(t, d.FinishFit(ctx, c.ID, annotations.FitFailed, "x", nil))
		_, err = d.RequestCancel(ctx, ids[1])
		must(t, err)
		must(t, within(fit(a), 3))
		wantCode(t, within(fit(a), 3), annotations.ETOOMANY)

		// Concurrent submissions never exceed the quota.
		p := newProject(t, d, "c", "ordinal:1..5")
		var wg sync.WaitGroup
		var mu sync.Mutex
		created := 0
		for range 12 {
			wg.Go(func() {
				mu.Lock()
				f := fit(p)
				mu.Unlock()
				err := within(f, 5)
				mu.Lock()
				defer mu.Unlock()
				switch annotations.ErrorCode(err) {
				case "":
					created++
				case annotations.ETOOMANY:
				default:
					t.Errorf("concurrent submission: %v", err)
				}
			})
		}
		wg.Wait()
		if created != 5 {
			t.Errorf("%d concurrent submissions passed a quota of 5", created)
		}
	})
}

// TestFitJobsAreFairAcrossProjects: project A queues a backlog, then
// project B queues one fit; B's fit is claimed (by River, in the order of
// the jobs' priorities) before A's backlog drains, whether the workers run
// fits side by side or one after another.
func TestFitJobsAreFairAcrossProjects(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		a := newProject(t, d, "a", "ordinal:1..5")
		bp := newProject(t, d, "b", "ordinal:1..5")
		seed := 0
		queue := func(p *annotations.Project, n int) {
			for range n {
				seed++
				seededFit(ctx, t, d, p.ID, seed)
			}
		}
		claim := func() *annotations.Fit {
			t.Helper()
			f := claimAs(t, d, "w")
			if f == nil {
				t.Fatal("nothing to claim")
			}
			return f
		}

		// Two workers side by side: the second takes B's fit.
		queue(a, 6)
		queue(bp, 1)
		first, second := claim(), claim()
		if first.ProjectID != a.ID || second.ProjectID != bp.ID {
			t.Errorf("side by side: claimed fits of projects %d then %d, want %d (oldest) then %d", first.ProjectID, second.ProjectID, a.ID, bp.ID)
		}
		must(t, d.FinishFit(ctx, first.ID, annotations.FitFailed, "x", nil))
		must(t, d.FinishFit(ctx, second.ID, annotations.FitFailed, "x", nil))

		// One worker: projects take turns. A's backlog is 5 fits, B queues
		// one more: it runs next after A's current one.
		cur := claim() // A's
		queue(bp, 1)
		must(t, d.FinishFit(ctx, cur.ID, annotations.FitFailed, "x", nil))
		if next := claim(); next.ProjectID != bp.ID {
			t.Errorf("one worker: after a fit of project %d the next is of project %d, want %d", cur.ProjectID, next.ProjectID, bp.ID)
		} else {
			must(t, d.FinishFit(ctx, next.ID, annotations.FitFailed, "x", nil))
		}
		// Then A's backlog, oldest first.
		last := int64(0)
		for range 4 {
			f := claim()
			if f.ProjectID != a.ID || f.ID < last {
				t.Errorf("backlog: claimed fit %d of project %d after fit %d", f.ID, f.ProjectID, last)
			}
			last = f.ID
			must(t, d.FinishFit(ctx, f.ID, annotations.FitFailed, "x", nil))
		}
	})
}

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
			seededFit(ctx, t, d, p.ID, i)
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
					f := specFit(q.ID, `{"seed":%d}`, i)
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
		mk := func(seed int) int64 { return seededFit(ctx, t, d, p.ID, seed) }
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
