package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"concord/annotations"
)

// TestFitQuotaPerProject: a project may have Config.MaxProjectFits fits
// queued or running; one more is a 429 naming the limit, other projects
// are not affected, and a cancelled fit frees its place.
func TestFitQuotaPerProject(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Workers = -1; c.MaxProjectFits = 3 })
	a, keyA := e.loadedProject("a")
	b, keyB := e.loadedProject("b")
	var ids []int64
	for range 3 {
		ids = append(ids, e.startFit(a, keyA, quickFit))
	}
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", a), keyA, quickFit, http.StatusTooManyRequests, annotations.ETOOMANY, "the limit per project is 3")
	e.startFit(b, keyB, quickFit)
	e.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", ids[0]), keyA, nil, http.StatusAccepted)
	e.startFit(a, keyA, quickFit)
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", a), testAdmin, quickFit, http.StatusTooManyRequests, annotations.ETOOMANY, "limit")
}

// TestFairQueueAcrossProjects: project A queues as many fits as it may,
// then project B queues one; a single worker runs B's fit before A's
// backlog drains (the queue takes turns by project, not first come, first
// served).
func TestFairQueueAcrossProjects(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fits")
	}
	api := newEnv(t, func(c *Config) { c.Workers = -1 }) // queues, runs nothing
	a, keyA := api.loadedProject("a")
	b, keyB := api.loadedProject("b")
	var backlog []int64
	for range 8 {
		backlog = append(backlog, api.startFit(a, keyA, quickFit))
	}
	fb := api.startFit(b, keyB, quickFit)

	// A worker process sharing the database.
	worker := newEnvDSN(t, api.dsn, func(c *Config) { c.Workers = 1; c.WorkerName = "worker-2" })
	f := worker.waitFit(fb, keyB, 120*time.Second)
	if f["state"] != "done" {
		t.Fatalf("B's fit: %v", f)
	}
	// The order of the claims, not what has run by the time the test looks
	// (which depends on the machine's speed): B's fit is claimed before
	// all but the first of A's.
	bs := fitState(t, api.store, fb).StartedAt
	if bs == nil {
		t.Fatal("B's fit has no start time")
	}
	before := 0
	for _, id := range backlog {
		if as := fitState(t, api.store, id).StartedAt; as != nil && as.Before(*bs) {
			before++
		}
	}
	t.Logf("%d of A's %d fits started before B's", before, len(backlog))
	if before > 1 {
		t.Errorf("B's fit was claimed after %d of A's fits (want at most the first)", before)
	}
	// Stop the backlog.
	for _, id := range backlog {
		if _, err := api.store.RequestCancel(context.Background(), id); err != nil {
			t.Error(err)
		}
	}
}
