package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"concord/annotations"
)

// TestJobsForTheAdminOnly: GET /api/v1/jobs and the dashboard's /jobs page
// show the job engine (jobs by state, recent jobs with the workers that
// attempted them, live workers) to the admin token, and to nobody else;
// /metrics has the jobs by state and the queue wait.
func TestJobsForTheAdminOnly(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Workers = 1; c.WorkerName = "the-worker" })
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, quickFit)
	waitState(t, e.store, fid, annotations.FitDone, 2*time.Minute)
	// River records the job's completion just after the fit's.
	for deadline := time.Now().Add(hangTimeout); ; time.Sleep(20 * time.Millisecond) {
		counts, err := e.store.JobCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(counts) == 1 && counts[0].State == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job not completed: %+v", counts)
		}
	}

	tests := []struct {
		name   string
		token  string
		status int
	}{
		{"admin", testAdmin, http.StatusOK},
		{"project key", key, http.StatusForbidden},
		{"nobody", "", http.StatusUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.status != http.StatusOK {
				code := annotations.EFORBIDDEN
				if tc.status == http.StatusUnauthorized {
					code = annotations.EUNAUTHORIZED
				}
				e.wantError("GET", "/api/v1/jobs", tc.token, nil, tc.status, code, "")
				return
			}
			v := e.call("GET", "/api/v1/jobs?limit=10", tc.token, nil, http.StatusOK)
			jobs := v["jobs"].([]any)
			if len(jobs) != 1 {
				t.Fatalf("jobs: %v", v)
			}
			j := jobs[0].(map[string]any)
			if j["fit_id"].(float64) != float64(fid) || j["state"] != "completed" || fmt.Sprint(j["attempted_by"]) != "[the-worker]" {
				t.Errorf("job: %v", j)
			}
			if w := v["workers"].([]any); len(w) != 1 || w[0].(map[string]any)["name"] != "the-worker" {
				t.Errorf("workers: %v", v["workers"])
			}
			if c := v["counts"].([]any); len(c) != 1 || c[0].(map[string]any)["state"] != "completed" {
				t.Errorf("counts: %v", v["counts"])
			}
			e.wantError("GET", "/api/v1/jobs?limit=0", tc.token, nil, http.StatusBadRequest, annotations.EINVALID, "limit")
		})
	}

	// The page: the admin sees the worker and the fit's job; a key is
	// refused.
	page := func(token string) (int, string) {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", e.url+"/jobs", nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: token})
		resp, err := e.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 1<<16)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, b.String()
	}
	if status, body := page(testAdmin); status != http.StatusOK || !strings.Contains(body, "the-worker") || !strings.Contains(body, fmt.Sprintf(`href="/fits/%d"`, fid)) {
		t.Errorf("admin's jobs page: %d %s", status, body)
	}
	if status, _ := page(key); status != http.StatusForbidden {
		t.Errorf("a key's jobs page: %d", status)
	}

	_, m := e.request("GET", "/metrics", "", nil)
	for _, want := range []string{`concord_jobs{queue="fits",state="completed"} 1`, "concord_fit_queue_wait_seconds_count 1"} {
		if !strings.Contains(string(m), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
