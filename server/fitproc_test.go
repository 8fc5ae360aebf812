package server

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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
	if dir := os.Getenv("CONCORD_FIT_WORKER_KILLS"); dir != "" {
		killSelfIfDue(dir)
	}
	if err := RunFitWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// fitWorkerCommand is Config.FitCommand for fits in child processes of
// the test binary (TestHelperFitWorker).
func fitWorkerCommand() []string { return []string{os.Args[0], "-test.run=^TestHelperFitWorker$"} }

// childFitWorkers skips a test that starts fit worker processes under
// -short, else makes the test binary a fit worker (TestHelperFitWorker)
// and returns its command (Config.FitCommand).
func childFitWorkers(t *testing.T) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Setenv("CONCORD_FIT_WORKER_HELPER", "1")
	return fitWorkerCommand()
}

// killedFitWorkers is childFitWorkers with workers that kill themselves
// (killSelfIfDue) while the count that kills(t, n) sets lasts; it skips
// where there are no signals.
func killedFitWorkers(t *testing.T) (cmd []string, kills func(t *testing.T, n int)) {
	t.Helper()
	cmd = childFitWorkers(t)
	if runtime.GOOS == "windows" {
		t.Skip("no signals")
	}
	dir := t.TempDir()
	t.Setenv("CONCORD_FIT_WORKER_KILLS", dir)
	return cmd, func(t *testing.T, n int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "kills"), []byte(strconv.Itoa(n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFitsInChildProcesses runs fits in child processes: one to the end,
// one that fails with the model's reason, one cancelled (the child is
// killed at once) and one whose worker program fails.
func TestFitsInChildProcesses(t *testing.T) {
	cmd := childFitWorkers(t)
	e := newEnv(t, func(c *Config) { c.FitCommand = cmd })
	id, key := e.loadedProject("k1")

	f := e.waitFit(e.startFit(id, key, quickFit), key, 60*time.Second)
	if f["state"] != "done" || f["summary"].(map[string]any)["items"].(float64) != 135 {
		t.Errorf("child fit: %v", f)
	}
	resp, _ := e.request("GET", fmt.Sprintf("/api/v1/fits/%v/report.json", f["id"]), key, nil)
	if resp.StatusCode != 200 {
		t.Errorf("report of a child fit: %d", resp.StatusCode)
	}

	bad := e.waitFit(e.startFit(id, key, map[string]any{"engine": "gibbs", "kernel": "text:nosuchcolumn", "chains": 1, "samples": 10}), key, 60*time.Second)
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
	waitState(t, e.store, long, annotations.FitCancelled, hangTimeout)
	t.Logf("child fit cancelled in %s", time.Since(start))

	e.srv.cfg.FitCommand = []string{"false"}
	broken := e.waitFit(e.startFit(id, key, quickFit), key, 60*time.Second)
	if broken["state"] != "failed" || !strings.Contains(broken["message"].(string), "internal error") {
		t.Errorf("broken worker: %v", broken)
	}
}

// killSelfIfDue is the fit worker's side of TestKilledFitWorkerIsRetried:
// while the counter in dir/kills is above zero, it counts down and the
// process kills itself with SIGKILL (as the OOM killer would) after reading
// its job.
func killSelfIfDue(dir string) {
	path := filepath.Join(dir, "kills")
	b, err := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(n-1)), 0o644); err != nil {
		return
	}
	io.Copy(io.Discard, os.Stdin)
	p, _ := os.FindProcess(os.Getpid())
	p.Kill()
	select {} // killed
}

// TestKilledFitWorkerIsRetried: a fit whose worker process is killed (the
// OOM killer's SIGKILL) is re-queued with the reason while its retry budget
// lasts, and runs to the end on the next attempt; one killed on every
// attempt fails with the reason, not "internal error".
func TestKilledFitWorkerIsRetried(t *testing.T) {
	cmd, kills := killedFitWorkers(t)
	e := newEnv(t, func(c *Config) {
		c.FitCommand = cmd
		c.Workers = 1
		c.MaxAttempts = 3
	})
	id, key := e.loadedProject("k1")

	kills(t, 1)
	f := e.waitFit(e.startFit(id, key, quickFit), key, 120*time.Second)
	if f["state"] != "done" || f["attempts"].(float64) != 2 {
		t.Errorf("fit whose worker was killed once: %v", f)
	}

	kills(t, 3)
	f = e.waitFit(e.startFit(id, key, quickFit), key, 120*time.Second)
	msg, _ := f["message"].(string)
	if f["state"] != "failed" || f["attempts"].(float64) != 3 || !strings.Contains(msg, "killed by signal 9") ||
		!strings.Contains(msg, "out of memory?") || !strings.Contains(msg, "3 attempts") {
		t.Errorf("fit whose worker was killed on every attempt: %v", f)
	}
}

func TestKilledWorkerMessages(t *testing.T) {
	k := &workerKilledError{signal: 9, name: "killed"}
	if got, want := k.requeueMessage(1, 3), "fit worker killed by signal 9 (killed; out of memory?), re-queued, attempt 1 of 3"; got != want {
		t.Errorf("re-queue message %q, want %q", got, want)
	}
	if got, want := k.failMessage(3), "fit worker killed by signal 9 (killed; out of memory?) on attempt 3 of 3; gave up after 3 attempts"; got != want {
		t.Errorf("failure message %q, want %q", got, want)
	}
	seg := &workerKilledError{signal: 11, name: "segmentation fault"}
	if got, want := seg.requeueMessage(2, 3), "fit worker killed by signal 11 (segmentation fault), re-queued, attempt 2 of 3"; got != want {
		t.Errorf("re-queue message %q, want %q", got, want)
	}
}
