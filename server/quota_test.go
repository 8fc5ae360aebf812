package server

import (
	"context"
	"encoding/json"
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
	for i := range 3 {
		ids = append(ids, e.startFit(a, keyA, seeded(quickFit, i)))
	}
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", a), keyA, seeded(quickFit, 3), http.StatusTooManyRequests, annotations.ETOOMANY, "the limit per project is 3")
	e.startFit(b, keyB, quickFit)
	e.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", ids[0]), keyA, nil, http.StatusAccepted)
	e.startFit(a, keyA, seeded(quickFit, 4))
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", a), testAdmin, seeded(quickFit, 5), http.StatusTooManyRequests, annotations.ETOOMANY, "limit")
}

// seeded is the fit request spec with another seed (a different fit).
func seeded(spec map[string]any, seed int) map[string]any {
	out := map[string]any{}
	for k, v := range spec {
		out[k] = v
	}
	out["seed"] = seed
	return out
}

// TestDuplicateFitIsOneJob: the same fit (model, settings, seed) submitted
// again while the first is queued or running is not queued twice: the
// answer is 200 with the first fit, "duplicate": true and the header
// X-Concord-Duplicate-Of; a different seed, another project, or the same
// fit after the first ended (or after the labels changed) is a new fit.
func TestDuplicateFitIsOneJob(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Workers = -1 })
	a, keyA := e.loadedProject("a")
	b, keyB := e.loadedProject("b")
	first := e.startFit(a, keyA, quickFit)
	tests := []struct {
		name    string
		project int64
		key     string
		spec    map[string]any
		dup     bool
	}{
		{"the same fit", a, keyA, quickFit, true},
		{"the same fit again, by the admin", a, testAdmin, quickFit, true},
		{"another seed", a, keyA, seeded(quickFit, 99), false},
		{"another project", b, keyB, quickFit, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := e.request("POST", fmt.Sprintf("/api/v1/projects/%d/fits", tc.project), tc.key, tc.spec)
			var got map[string]any
			json.Unmarshal(body, &got)
			id := int64(got["id"].(float64))
			switch {
			case tc.dup && (resp.StatusCode != http.StatusOK || id != first || got["duplicate"] != true || resp.Header.Get("X-Concord-Duplicate-Of") != fmt.Sprint(first)):
				t.Errorf("status %d, header %q, body %s; want 200 with fit %d, duplicate", resp.StatusCode, resp.Header.Get("X-Concord-Duplicate-Of"), body, first)
			case !tc.dup && (resp.StatusCode != http.StatusAccepted || id == first || got["duplicate"] != nil):
				t.Errorf("status %d, body %s; want 202 with a new fit", resp.StatusCode, body)
			}
		})
	}
	// One job for the first fit.
	jobs, _, err := e.store.ListJobs(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range jobs {
		if j.FitID == first {
			n++
		}
	}
	if len(jobs) != 3 || n != 1 {
		t.Errorf("%d jobs, %d of fit %d: %+v", len(jobs), n, first, jobs)
	}
	// Once the first is cancelled, the same fit is new again.
	e.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", first), keyA, nil, http.StatusAccepted)
	if again := e.startFit(a, keyA, quickFit); again == first {
		t.Errorf("after the cancel the same fit was not queued again")
	}
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
	for i := range 8 {
		backlog = append(backlog, api.startFit(a, keyA, seeded(quickFit, i)))
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
