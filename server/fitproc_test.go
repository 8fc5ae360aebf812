package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"concord/annotations"
)

// TestHelperFitWorker is not a test: it is the fit worker process of the
// child-process tests (the test binary run again with
// CONCORD_FIT_WORKER_HELPER=1).
func TestHelperFitWorker(t *testing.T) {
	if os.Getenv("CONCORD_FIT_WORKER_HELPER") != "1" {
		t.Skip("helper process of the fit worker tests")
	}
	if err := RunFitWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestFitsInChildProcesses runs fits in child processes: one to the end,
// one that fails with the model's reason, one cancelled (the child is
// killed at once) and one whose worker program fails.
func TestFitsInChildProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Setenv("CONCORD_FIT_WORKER_HELPER", "1")
	e := newEnv(t, func(c *Config) { c.FitCommand = []string{os.Args[0], "-test.run=^TestHelperFitWorker$"} })
	id, key := e.loadedProject("k1")

	f := e.waitFit(e.startFit(id, key, quickFit), key, 60*time.Second)
	if f["state"] != "done" || f["summary"].(map[string]any)["items"].(float64) != 135 {
		t.Errorf("child fit: %v", f)
	}
	resp, _ := e.request("GET", fmt.Sprintf("/api/v1/fits/%v/report.json", f["id"]), key, nil)
	if resp.StatusCode != 200 {
		t.Errorf("report of a child fit: %d", resp.StatusCode)
	}

	bad := e.waitFit(e.startFit(id, key, map[string]any{"kernel": "text:nosuchcolumn", "chains": 1, "samples": 10}), key, 60*time.Second)
	if bad["state"] != "failed" || !strings.Contains(bad["message"].(string), "nosuchcolumn") {
		t.Errorf("failing child fit: %v", bad)
	}

	long := e.startFit(id, key, longFit)
	f2 := waitState(t, e.store, long, annotations.FitRunning, 30*time.Second)
	for f2.Progress == 0 {
		time.Sleep(50 * time.Millisecond)
		f2 = fitState(t, e.store, long)
	}
	start := time.Now()
	e.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", long), key, nil, 202)
	waitState(t, e.store, long, annotations.FitCancelled, 10*time.Second)
	t.Logf("child fit cancelled in %s", time.Since(start))

	e.srv.cfg.FitCommand = []string{"false"}
	broken := e.waitFit(e.startFit(id, key, quickFit), key, 60*time.Second)
	if broken["state"] != "failed" || !strings.Contains(broken["message"].(string), "internal error") {
		t.Errorf("broken worker: %v", broken)
	}
}
