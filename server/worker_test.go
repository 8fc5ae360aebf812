package server

import (
	"context"
	"fmt"
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
var longFit = map[string]any{"engine": "gibbs", "chains": 2, "samples": 1000, "burnin": 1000000, "seed": 3}

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
	fid := e.startFit(id, key, map[string]any{"engine": "gibbs", "chains": 2, "samples": 100000, "burnin": 10, "seed": 3})
	waitState(t, e.store, fid, annotations.FitRunning, hangTimeout)
	// The progress grows, write after write (the deadline only catches
	// progress that stops).
	var seen []float64
	deadline := time.Now().Add(hangTimeout)
	for len(seen) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d progress updates seen: %v", len(seen), seen)
		}
		f, err := e.store.FindFitByID(context.Background(), fid)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case f.Progress < 0 || f.Progress > 1:
			t.Fatalf("progress %v", f.Progress)
		case len(seen) > 0 && f.Progress < seen[len(seen)-1]:
			t.Errorf("progress went back: %v -> %v", seen[len(seen)-1], f.Progress)
		case f.Progress > 0 && (len(seen) == 0 || f.Progress > seen[len(seen)-1]):
			seen = append(seen, f.Progress)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The API shows the fraction done, the ETA, the current R-hat and
	// the phase with the fit's expected cost (analysis.ExpectedCost).
	for {
		f := e.call("GET", fmt.Sprintf("/api/v1/fits/%d", fid), key, nil, 200)
		if f["progress"].(float64) > 0 && f["eta_seconds"] != nil && f["max_rhat"] != nil && strings.HasPrefix(fmt.Sprint(f["message"]), "sampling; expected cost about ") && strings.HasSuffix(fmt.Sprint(f["message"]), " CPU s") {
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
	// A server with workers picks it up again; the shutdown did not
	// spend an attempt (the job was snoozed, not failed).
	e3 := newEnvDSN(t, dsn)
	f = waitState(t, e3.store, fid, annotations.FitRunning, hangTimeout)
	if f.Attempts != 1 {
		t.Errorf("attempts %d, want 1", f.Attempts)
	}
	e3.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", fid), key, nil, 202)
	waitState(t, e3.store, fid, annotations.FitCancelled, hangTimeout)
}

func TestShutdownLetsShortFitsFinish(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ShutdownGrace = 60 * time.Second })
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, map[string]any{"engine": "gibbs", "chains": 2, "samples": 3000, "burnin": 500, "seed": 1})
	waitState(t, e.store, fid, annotations.FitRunning, hangTimeout)
	dsn := e.dsn
	e.stop()
	e2 := newEnvDSN(t, dsn, func(c *Config) { c.Workers = -1 })
	if f, _ := e2.store.FindFitByID(context.Background(), fid); f == nil || f.Status != annotations.FitDone {
		t.Errorf("after graceful shutdown: %+v", f)
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
