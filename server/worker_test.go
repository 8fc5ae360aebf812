package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"concord/annotations"
)

// longFit runs for minutes unless stopped: a million burn-in sweeps, which
// keep no draws (a million kept draws allocated about 1 GB, slow to
// page in on a loaded machine).
var longFit = map[string]any{"chains": 2, "samples": 1000, "burnin": 1000000, "seed": 3}

// waitState polls the store until fit id is in state st.
func waitState(t *testing.T, st annotations.FitStore, id int64, want annotations.FitStatus, timeout time.Duration) *annotations.Fit {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		f, err := st.FindFitByID(context.Background(), id)
		if err == nil && f.Status == want {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("fit %d: %v (err %v), want %s after %s", id, f, err, want, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestProgressIsWritten(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ProgressInterval = 200 * time.Millisecond })
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, map[string]any{"chains": 2, "samples": 100000, "burnin": 10, "seed": 3})
	waitState(t, e.store, fid, annotations.FitRunning, hangTimeout)
	var last float64
	var beats []time.Time
	deadline := time.Now().Add(30 * time.Second)
	for len(beats) < 4 || last == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d progress updates seen", len(beats))
		}
		f, err := e.store.FindFitByID(context.Background(), fid)
		if err != nil {
			t.Fatal(err)
		}
		if f.HeartbeatAt != nil && (len(beats) == 0 || f.HeartbeatAt.After(beats[len(beats)-1])) {
			beats = append(beats, *f.HeartbeatAt)
			if f.Progress < last {
				t.Errorf("progress went back: %v -> %v", last, f.Progress)
			}
			last = f.Progress
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := 1; i < len(beats); i++ {
		// Written every 200 ms; the bound only catches heartbeats that
		// stop (generous, so that a loaded machine cannot fail it).
		if gap := beats[i].Sub(beats[i-1]); gap > hangTimeout {
			t.Errorf("gap of %s between progress writes", gap)
		}
	}
	// The API shows the fraction done, the ETA and the current R-hat.
	for {
		f := e.call("GET", fmt.Sprintf("/api/v1/fits/%d", fid), key, nil, 200)
		if f["progress"].(float64) > 0 && f["eta_seconds"] != nil && f["max_rhat"] != nil && f["message"] == "sampling" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("running fit: %v", f)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", fid), key, nil, 202)
	waitState(t, e.store, fid, annotations.FitCancelled, hangTimeout)
}

// heartbeatLog is a store that records the heartbeats (progress writes) of
// running fits and what the store answered.
type heartbeatLog struct {
	annotations.Store
	mu    sync.Mutex
	beats map[int64][]bool // per fit: cancel requested, per heartbeat
}

func (h *heartbeatLog) UpdateFitProgress(ctx context.Context, id int64, p annotations.FitProgress) (bool, error) {
	cancel, err := h.Store.UpdateFitProgress(ctx, id, p)
	if err == nil {
		h.mu.Lock()
		h.beats[id] = append(h.beats[id], cancel)
		h.mu.Unlock()
	}
	return cancel, err
}

func (h *heartbeatLog) of(id int64) []bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bool(nil), h.beats[id]...)
}

// TestCancelFromAnotherProcess: a cancel requested in the database (by
// another process) stops the fit at the first heartbeat that starts after
// the request: that heartbeat is told of it, and it is the fit's last. The
// test checks this order of events, not how long it takes (which depends
// on the machine's load); the wait only catches a cancel that is never
// seen.
func TestCancelFromAnotherProcess(t *testing.T) {
	hb := &heartbeatLog{beats: map[int64][]bool{}}
	e := newEnvWrapped(t, filepath.Join(t.TempDir(), "concord.db"), func(st annotations.Store) annotations.Store {
		hb.Store = st
		return hb
	}, func(c *Config) { c.ProgressInterval = 200 * time.Millisecond })
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, longFit)
	waitState(t, e.store, fid, annotations.FitRunning, hangTimeout)
	for deadline := time.Now().Add(hangTimeout); len(hb.of(fid)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no heartbeat of the running fit")
		}
	}
	before := len(hb.of(fid))
	start := time.Now()
	if _, err := e.store.RequestCancel(context.Background(), fid); err != nil {
		t.Fatal(err)
	}
	waitState(t, e.store, fid, annotations.FitCancelled, hangTimeout)
	beats := hb.of(fid)
	// At most one heartbeat (in flight when the request was made) may have
	// missed it; the next one is told, and the fit writes no more.
	told := slices.Index(beats, true)
	switch {
	case told < 0:
		t.Fatalf("no heartbeat was told of the cancel request: %v", beats)
	case told > before+1:
		t.Errorf("heartbeats %v: the request (after heartbeat %d) was first seen by heartbeat %d", beats, before, told+1)
	case told != len(beats)-1:
		t.Errorf("heartbeats %v: the fit went on writing progress after it was told of the cancel", beats)
	}
	t.Logf("cancelled through the database at heartbeat %d of %d (requested after heartbeat %d), %s (progress interval 200 ms)",
		told+1, len(beats), before, time.Since(start))
}

func TestShutdownRequeuesRunningFits(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ShutdownGrace = 300 * time.Millisecond })
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, longFit)
	waitState(t, e.store, fid, annotations.FitRunning, hangTimeout)
	dsn := e.dsn
	e.stop()
	// Reopen the database: the fit is back in the queue, not running.
	e2 := newEnvDSN(t, dsn, func(c *Config) { c.Workers = -1 })
	f, err := e2.store.FindFitByID(context.Background(), fid)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status != annotations.FitQueued || !strings.Contains(f.Message, "shut down") || f.Attempts != 1 {
		t.Errorf("after shutdown: %+v", f)
	}
	e2.stop()
	// A server with workers picks it up again.
	e3 := newEnvDSN(t, dsn)
	f = waitState(t, e3.store, fid, annotations.FitRunning, hangTimeout)
	if f.Attempts != 2 {
		t.Errorf("attempts %d, want 2", f.Attempts)
	}
	e3.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", fid), key, nil, 202)
	waitState(t, e3.store, fid, annotations.FitCancelled, hangTimeout)
}

func TestShutdownLetsShortFitsFinish(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ShutdownGrace = 60 * time.Second })
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, map[string]any{"chains": 2, "samples": 3000, "burnin": 500, "seed": 1})
	waitState(t, e.store, fid, annotations.FitRunning, hangTimeout)
	dsn := e.dsn
	e.stop()
	e2 := newEnvDSN(t, dsn, func(c *Config) { c.Workers = -1 })
	if f, _ := e2.store.FindFitByID(context.Background(), fid); f == nil || f.Status != annotations.FitDone {
		t.Errorf("after graceful shutdown: %+v", f)
	}
}

// claimAs queues a fit for the project and claims it under a worker name,
// as a process that then dies would.
func claimAs(t *testing.T, e *testEnv, project int64, worker string) int64 {
	t.Helper()
	fid := e.startFit(project, testAdmin, quickFit)
	f, err := e.store.ClaimFit(context.Background(), worker)
	if err != nil || f == nil || f.ID != fid {
		t.Fatalf("claim: %+v %v", f, err)
	}
	return fid
}

// TestStaleFitsAreRecovered: a fit whose worker stopped sending heartbeats
// is re-queued after StaleAfter and run to the end; once its retry budget
// is spent it fails with a reason.
func TestStaleFitsAreRecovered(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Workers = -1 })
	id, _ := e.loadedProject("k1")
	stale := claimAs(t, e, id, "ghost-host-1")
	spent := claimAs(t, e, id, "ghost-host-2")
	// spent has been tried twice already.
	ctx := context.Background()
	if err := e.store.Requeue(ctx, spent, "test"); err != nil {
		t.Fatal(err)
	}
	if f, _ := e.store.ClaimFit(ctx, "ghost-host-2"); f == nil || f.ID != spent || f.Attempts != 2 {
		t.Fatalf("second claim: %+v", f)
	}
	dsn := e.dsn
	e.stop()

	start := time.Now()
	e2 := newEnvDSN(t, dsn, func(c *Config) { c.StaleAfter = time.Second; c.MaxAttempts = 2 })
	f := waitState(t, e2.store, stale, annotations.FitDone, 30*time.Second)
	if f.Attempts != 2 {
		t.Errorf("recovered fit: attempts %d, want 2", f.Attempts)
	}
	t.Logf("stale fit re-queued and finished in %s", time.Since(start))
	g := waitState(t, e2.store, spent, annotations.FitFailed, hangTimeout)
	if !strings.Contains(g.Message, "gave up after 2 attempts") || !strings.Contains(g.Message, "ghost-host-2") {
		t.Errorf("failed fit's reason: %q", g.Message)
	}
}

// TestDeadLocalWorkerRecoveredAtOnce: at start-up, fits held by a process
// of this host that no longer exists are re-queued without waiting for the
// heartbeat to go stale.
func TestDeadLocalWorkerRecoveredAtOnce(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("running a short-lived process: %v", err)
	}
	deadPID := cmd.Process.Pid
	host, _ := os.Hostname()
	e := newEnv(t, func(c *Config) { c.Workers = -1 })
	id, _ := e.loadedProject("k1")
	fid := claimAs(t, e, id, fmt.Sprintf("%s-%d", host, deadPID))
	dsn := e.dsn
	e.stop()
	e2 := newEnvDSN(t, dsn, func(c *Config) { c.StaleAfter = time.Hour; c.WorkerName = "" })
	f := waitState(t, e2.store, fid, annotations.FitDone, 30*time.Second)
	if f.Attempts != 2 {
		t.Errorf("attempts %d", f.Attempts)
	}
}

// TestLostFitStops: when another process re-queues and claims a fit this
// process is running (it presumed this one dead), this process stops
// working on it and leaves it to the other.
func TestLostFitStops(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Workers = 1
		c.ProgressInterval = 100 * time.Millisecond
		c.PollInterval = time.Hour
	})
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, longFit)
	waitState(t, e.store, fid, annotations.FitRunning, hangTimeout)
	ctx := context.Background()
	if err := e.store.Requeue(ctx, fid, "presumed dead"); err != nil {
		t.Fatal(err)
	}
	f, err := e.store.ClaimFit(ctx, "other-process")
	if err != nil || f == nil || f.ID != fid {
		t.Fatalf("takeover: %+v %v", f, err)
	}
	deadline := time.Now().Add(hangTimeout)
	for len(e.srv.pool.running()) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("this process kept running a fit another worker holds")
		}
		time.Sleep(20 * time.Millisecond)
	}
	f, _ = e.store.FindFitByID(ctx, fid)
	if f.Status != annotations.FitRunning || f.Worker != "other-process" {
		t.Errorf("the other worker's fit was touched: %+v", f)
	}
}

// TestDeletedProjectStopsItsFits: deleting a project stops its running fit.
func TestDeletedProjectStopsItsFits(t *testing.T) {
	e := newEnv(t)
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, longFit)
	waitState(t, e.store, fid, annotations.FitRunning, hangTimeout)
	e.call("DELETE", fmt.Sprintf("/api/v1/projects/%d", id), testAdmin, nil, 204)
	deadline := time.Now().Add(hangTimeout)
	for len(e.srv.pool.running()) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the deleted project's fit still runs")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
