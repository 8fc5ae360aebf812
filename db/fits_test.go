package db

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"concord/annotations"
)

func TestFitLifecycle(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
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
		wantCode(t, d.Requeue(ctx, f.ID, "x"), annotations.EINVALID)
		_, err = d.FitResult(ctx, f.ID)
		wantCode(t, err, annotations.ENOTFOUND)

		c, err := d.ClaimFit(ctx, "worker-1")
		must(t, err)
		if c == nil || c.ID != f.ID || c.Status != annotations.FitRunning || c.Worker != "worker-1" || c.Attempts != 1 || c.StartedAt == nil || c.HeartbeatAt == nil {
			t.Fatalf("claimed %+v", c)
		}
		if none, err := d.ClaimFit(ctx, "worker-2"); err != nil || none != nil {
			t.Fatalf("claim with an empty queue = %v, %v", none, err)
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
		_, err = d.ClaimFit(ctx, "w")
		must(t, err)
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

func TestRequeue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
		p := newProject(t, d, "p", "ordinal:1..5")
		f := &annotations.Fit{ProjectID: p.ID, Model: "m"}
		must(t, d.CreateFit(ctx, f))
		_, err := d.ClaimFit(ctx, "w1")
		must(t, err)
		must(t, d.Requeue(ctx, f.ID, "server shutting down"))
		got, err := d.FindFitByID(ctx, f.ID)
		must(t, err)
		if got.Status != annotations.FitQueued || got.Worker != "" || got.StartedAt != nil || got.Attempts != 1 || got.Message != "server shutting down" {
			t.Errorf("requeued %+v", got)
		}
		c, err := d.ClaimFit(ctx, "w2")
		must(t, err)
		if c.ID != f.ID || c.Attempts != 2 || c.Worker != "w2" || c.Message != "" {
			t.Errorf("claimed again %+v", c)
		}
		// A running fit with a pending cancel is cancelled, not re-queued.
		_, err = d.RequestCancel(ctx, f.ID)
		must(t, err)
		must(t, d.Requeue(ctx, f.ID, "shutting down"))
		got, err = d.FindFitByID(ctx, f.ID)
		must(t, err)
		if got.Status != annotations.FitCancelled {
			t.Errorf("requeue with a pending cancel left %+v", got)
		}
	})
}

// TestClaimFitConcurrent lets many workers (and, on PostgreSQL, two separate
// connection pools standing for two processes) drain one queue: every fit
// must be claimed exactly once.
func TestClaimFitConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.dsn(t)
		d1 := openDSN(t, dsn)
		handles := []*DB{d1}
		if b.name == "postgres" {
			handles = append(handles, openDSN(t, dsn))
		} else {
			// A second SQLite handle on the same file: another process's
			// view, serialised by the file lock and busy timeout.
			handles = append(handles, openDSN(t, dsn))
		}
		p := newProject(t, d1, "p", "ordinal:1..5")
		const fits, workers = 60, 12
		for i := 0; i < fits; i++ {
			must(t, d1.CreateFit(ctx, &annotations.Fit{ProjectID: p.ID, Model: "m", Seed: uint64(i)}))
		}
		var mu sync.Mutex
		claimedBy := map[int64][]string{}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				d := handles[w%len(handles)]
				name := fmt.Sprintf("w%d", w)
				for {
					f, err := d.ClaimFit(ctx, name)
					if err != nil {
						errs <- err
						return
					}
					if f == nil {
						return
					}
					if f.Worker != name || f.Status != annotations.FitRunning {
						errs <- fmt.Errorf("worker %s got %+v", name, f)
						return
					}
					mu.Lock()
					claimedBy[f.ID] = append(claimedBy[f.ID], name)
					mu.Unlock()
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if len(claimedBy) != fits {
			t.Errorf("%d fits claimed, want %d", len(claimedBy), fits)
		}
		for id, ws := range claimedBy {
			if len(ws) != 1 {
				t.Errorf("fit %d claimed by %v", id, ws)
			}
		}
		list, err := d1.ListFits(ctx, p.ID)
		must(t, err)
		for _, f := range list {
			if f.Status != annotations.FitRunning || f.Attempts != 1 {
				t.Errorf("fit %d: %s after %d attempts", f.ID, f.Status, f.Attempts)
			}
		}
	})
}

func TestRecoverStale(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
		p := newProject(t, d, "p", "ordinal:1..5")
		// Fits claimed in id order; then heartbeats and attempts are set
		// by hand to stand for workers that died at different times.
		type setup struct {
			age      time.Duration
			attempts int
			cancel   bool
			want     annotations.FitStatus
		}
		setups := []setup{
			{age: time.Second, attempts: 1, want: annotations.FitRunning}, // alive
			{age: time.Hour, attempts: 1, want: annotations.FitQueued},    // dead, retry
			{age: time.Hour, attempts: 3, want: annotations.FitFailed},    // dead, budget spent
			{age: time.Hour, attempts: 1, cancel: true, want: annotations.FitCancelled},
		}
		ids := make([]int64, len(setups))
		for i := range setups {
			f := &annotations.Fit{ProjectID: p.ID, Model: "m"}
			must(t, d.CreateFit(ctx, f))
			ids[i] = f.ID
		}
		for i, s := range setups {
			c, err := d.ClaimFit(ctx, fmt.Sprintf("w%d", i))
			must(t, err)
			if c.ID != ids[i] {
				t.Fatalf("claimed %d, want %d (oldest first)", c.ID, ids[i])
			}
			must(t, d.w.Exec("UPDATE fits SET heartbeat_at = ?, attempts = ?, cancel_requested = ? WHERE id = ?",
				now().Add(-s.age), s.attempts, s.cancel, c.ID).Error)
		}
		queued := &annotations.Fit{ProjectID: p.ID, Model: "m"}
		must(t, d.CreateFit(ctx, queued))

		requeued, failed, err := d.RecoverStale(ctx, time.Minute, 3)
		must(t, err)
		if requeued != 1 || failed != 2 {
			t.Errorf("RecoverStale = %d requeued, %d failed; want 1, 2", requeued, failed)
		}
		for i, s := range setups {
			f, err := d.FindFitByID(ctx, ids[i])
			must(t, err)
			if f.Status != s.want {
				t.Errorf("fit %d: %s, want %s (%+v)", i, f.Status, s.want, f)
			}
			if s.want == annotations.FitFailed && f.Message == "" {
				t.Errorf("failed fit %d has no reason", i)
			}
		}
		q, err := d.FindFitByID(ctx, queued.ID)
		must(t, err)
		if q.Status != annotations.FitQueued {
			t.Errorf("queued fit became %s", q.Status)
		}

		// staleAfter <= 0 recovers every running fit (single-process
		// start-up); maxAttempts <= 0 never gives up.
		requeued, failed, err = d.RecoverStale(ctx, 0, 0)
		must(t, err)
		if requeued != 1 || failed != 0 {
			t.Errorf("RecoverStale(0, 0) = %d, %d; want 1, 0", requeued, failed)
		}
		f, err := d.FindFitByID(ctx, ids[0])
		must(t, err)
		if f.Status != annotations.FitQueued || f.Message == "" {
			t.Errorf("recovered fit %+v", f)
		}
	})
}

func TestAPIKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
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
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
		a := newProject(t, d, "a", "ordinal:1..5")
		other := newProject(t, d, "b", "ordinal:1..5")
		var ids []int64
		for range 3 {
			f := &annotations.Fit{ProjectID: a.ID, Model: "m"}
			must(t, d.CreateFitWithin(ctx, f, 3))
			ids = append(ids, f.ID)
		}
		c, err := d.ClaimFit(ctx, "w")
		must(t, err)
		err = d.CreateFitWithin(ctx, &annotations.Fit{ProjectID: a.ID, Model: "m"}, 3)
		wantCode(t, err, annotations.ETOOMANY)
		if err == nil || !strings.Contains(err.Error(), "limit per project is 3") {
			t.Errorf("quota error %v does not name the limit", err)
		}
		must(t, d.CreateFitWithin(ctx, &annotations.Fit{ProjectID: other.ID, Model: "m"}, 3))
		must(t, d.CreateFit(ctx, &annotations.Fit{ProjectID: a.ID, Model: "m"})) // no quota
		must(t, d.FinishFit(ctx, c.ID, annotations.FitFailed, "x", nil))
		_, err = d.RequestCancel(ctx, ids[1])
		must(t, err)
		must(t, d.CreateFitWithin(ctx, &annotations.Fit{ProjectID: a.ID, Model: "m"}, 3))
		wantCode(t, d.CreateFitWithin(ctx, &annotations.Fit{ProjectID: a.ID, Model: "m"}, 3), annotations.ETOOMANY)

		// Concurrent submissions never exceed the quota.
		p := newProject(t, d, "c", "ordinal:1..5")
		var wg sync.WaitGroup
		var mu sync.Mutex
		created := 0
		for range 12 {
			wg.Go(func() {
				err := d.CreateFitWithin(ctx, &annotations.Fit{ProjectID: p.ID, Model: "m"}, 5)
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

// TestClaimFitIsFairAcrossProjects: project A queues a backlog, then
// project B queues one fit; B's fit is claimed before A's backlog drains,
// whether the workers run fits side by side or one after another.
func TestClaimFitIsFairAcrossProjects(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
		a := newProject(t, d, "a", "ordinal:1..5")
		bp := newProject(t, d, "b", "ordinal:1..5")
		queue := func(p *annotations.Project, n int) {
			for range n {
				must(t, d.CreateFit(ctx, &annotations.Fit{ProjectID: p.ID, Model: "m"}))
			}
		}
		claim := func() *annotations.Fit {
			t.Helper()
			f, err := d.ClaimFit(ctx, "w")
			must(t, err)
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
