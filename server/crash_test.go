package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/db"
	"concord/multirater"
)

// TestHelperServer is not a test: it is the server process that the crash
// tests start (the test binary run again with CONCORD_HELPER_DSN set), so
// that they can kill it like a real `concord serve`.
func TestHelperServer(t *testing.T) {
	dsn := os.Getenv("CONCORD_HELPER_DSN")
	if dsn == "" {
		t.Skip("helper process of the crash tests")
	}
	level := slog.LevelInfo
	if os.Getenv("CONCORD_HELPER_QUIET") == "1" {
		level = slog.LevelWarn
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	st, err := db.Open(ctx, dsn, db.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	grace, _ := time.ParseDuration(os.Getenv("CONCORD_HELPER_GRACE"))
	stale := 3 * time.Second
	if v := os.Getenv("CONCORD_HELPER_STALE"); v != "" {
		stale, _ = time.ParseDuration(v)
	}
	workers := 1
	if w := os.Getenv("CONCORD_HELPER_WORKERS"); w != "" {
		fmt.Sscan(w, &workers)
	}
	// Fits run in child processes, as under concord serve (the test binary
	// is the fit worker: CONCORD_FIT_WORKER_HELPER is set by startHelper).
	fitCmd := fitWorkerCommand()
	if nice, err := exec.LookPath("nice"); err == nil && os.Getenv("CONCORD_HELPER_NICE") == "1" {
		fitCmd = append([]string{nice, "-n", "10"}, fitCmd...) // as concord serve
	}
	srv, err := New(Config{
		FitCommand: fitCmd,
		Addr:       "127.0.0.1:0", AdminToken: testAdmin, Workers: workers,
		ProgressInterval: 100 * time.Millisecond, PollInterval: 200 * time.Millisecond,
		StaleAfter: stale, ShutdownGrace: grace,
		FanOutChains: os.Getenv("CONCORD_HELPER_FANOUT") == "1",
	}, st, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	addrFile := os.Getenv("CONCORD_HELPER_ADDR_FILE")
	if err := os.WriteFile(addrFile+".tmp", []byte(srv.URL()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(addrFile+".tmp", addrFile); err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(ctx); err != nil {
		t.Fatal(err)
	}
}

// helperServer is a server in a child process.
type helperServer struct {
	cmd *exec.Cmd
	url string
	tag string // in the environment of the server and its fit workers
}

func startHelper(t *testing.T, dsn, grace string, env ...string) *helperServer {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServer$", "-test.v")
	cmd.Env = append(os.Environ(), "CONCORD_HELPER_DSN="+dsn, "CONCORD_HELPER_ADDR_FILE="+addrFile, "CONCORD_HELPER_GRACE="+grace,
		"CONCORD_FIT_WORKER_HELPER=1", "CONCORD_HELPER_TAG="+filepath.Base(filepath.Dir(addrFile)))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = testWriter{t}
	cmd.Stdout = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperServer{cmd: cmd, tag: "CONCORD_HELPER_TAG=" + filepath.Base(filepath.Dir(addrFile))}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			h.url = string(b)
			return h
		}
		if time.Now().After(deadline) {
			t.Fatal("helper server did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// client is a testEnv that talks to a helper's URL (no server of its own).
func helperClient(t *testing.T, url string) *testEnv {
	return &testEnv{t: t, url: url, hc: &http.Client{Timeout: hangTimeout}}
}

// killWorkerOf kills (SIGKILL) whichever of the helpers h1 and h2 is the
// worker named worker, waits for fit fid to end on the other and returns
// the fit's final state and how long it took after the kill.
func killWorkerOf(t *testing.T, worker string, h1, h2 *helperServer, fid int64, key string) (map[string]any, time.Duration) {
	t.Helper()
	victim, survivor := h1, h2
	if strings.HasSuffix(worker, fmt.Sprintf("-%d", h2.cmd.Process.Pid)) {
		victim, survivor = h2, h1
	}
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	victim.cmd.Wait()
	killed := time.Now()
	res := helperClient(t, survivor.url).waitFit(fid, key, 2*time.Minute)
	return res, time.Since(killed).Round(time.Millisecond)
}

func fitState(t *testing.T, st annotations.FitStore, id int64) *annotations.Fit {
	t.Helper()
	f, err := st.FindFitByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// helperFit is a fit started through a helper server on a new SQLite file.
type helperFit struct {
	dsn     string
	h       *helperServer
	c       *testEnv
	id, fid int64 // the project and the fit
	key     string
}

// startHelperFit starts a helper server with the shutdown grace grace on a
// new SQLite file, loads the k1 labels through it and starts the fit spec.
// It skips with -short: it starts server processes.
func startHelperFit(t *testing.T, grace string, spec map[string]any) helperFit {
	t.Helper()
	if testing.Short() {
		t.Skip("starts server processes")
	}
	r := helperFit{dsn: filepath.Join(t.TempDir(), "concord.db")}
	r.h = startHelper(t, r.dsn, grace)
	r.c = helperClient(t, r.h.url)
	r.id, r.key = r.c.loadedProject("k1")
	r.fid = r.c.startFit(r.id, r.key, spec)
	return r
}

// TestKillDuringFitLeavesNothingRunning kills the server (SIGKILL) during a
// fit and restarts it: the fit must not stay "running"; it is re-queued and
// runs to the end.
func TestKillDuringFitLeavesNothingRunning(t *testing.T) {
	r := startHelperFit(t, "10s", map[string]any{"engine": "gibbs", "chains": 2, "samples": 6000, "burnin": 500, "seed": 11})
	dsn, h1, c, id, key, fid := r.dsn, r.h, r.c, r.id, r.key, r.fid
	deadline := time.Now().Add(60 * time.Second)
	for {
		f := c.call("GET", fmt.Sprintf("/api/v1/fits/%d", fid), key, nil, 200)
		if f["state"] == "running" && f["progress"].(float64) > 0.02 {
			break
		}
		if f["state"] == "done" || time.Now().After(deadline) {
			t.Fatalf("fit did not get under way: %v", f)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := waitNoProcessWithEnv(t, h1.tag, 0); n < 2 {
		t.Errorf("found %d processes (server and fit worker) with the helper's tag", n)
	}
	if err := h1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	h1.cmd.Wait()
	killed := time.Now()
	// The orphaned fit worker notices that its server is gone (SIGPIPE at
	// its next progress line) and exits.
	if n := waitNoProcessWithEnv(t, h1.tag, hangTimeout); n > 0 {
		t.Errorf("%d fit worker process(es) of the killed server still run", n)
	}

	st, err := db.Open(context.Background(), dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if f := fitState(t, st, fid); f.Status != annotations.FitRunning {
		t.Fatalf("after kill -9 the fit is %s (expected it left running)", f.Status)
	}

	h2 := startHelper(t, dsn, "10s")
	c2 := helperClient(t, h2.url)
	f := c2.waitFit(fid, key, 120*time.Second)
	t.Logf("killed at progress > 2%%; after restart the fit ended %s in %s (attempts %v)", f["state"], time.Since(killed).Round(time.Millisecond), f["attempts"])
	if f["state"] != "done" || f["attempts"].(float64) != 2 {
		t.Errorf("after restart: %v", f)
	}
	fits, err := st.ListFits(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fits {
		if f.Status == annotations.FitRunning || f.Status == annotations.FitQueued {
			t.Errorf("fit %d left %s", f.ID, f.Status)
		}
	}
	// The result is complete.
	resp, b := c2.request("GET", fmt.Sprintf("/api/v1/fits/%d/result", fid), key, nil)
	var res map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(b, &res) != nil || len(res["items"].([]any)) != 135 {
		t.Errorf("result after recovery: %d", resp.StatusCode)
	}
	h2.cmd.Process.Signal(syscall.SIGTERM)
	h2.cmd.Wait()
}

// TestKillWorkerOnPostgres: two worker processes share one PostgreSQL
// database; the one running a fit is killed (SIGKILL) mid-fit. The other
// finishes the fit within two minutes of the kill (its worker is seen
// dead after StaleAfter, 3 s here, and the job retried), and the result is
// bit for bit the result of the same seeded fit run in this process.
func TestKillWorkerOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	killWorkerMidFit(t, postgresDSN(t))
}

// TestKillWorkerOnSQLite is TestKillWorkerOnPostgres with two worker
// processes on one SQLite file.
func TestKillWorkerOnSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	killWorkerMidFit(t, filepath.Join(t.TempDir(), "concord.db"))
}

func killWorkerMidFit(t *testing.T, dsn string) {
	h1 := startHelper(t, dsn, "10s")
	h2 := startHelper(t, dsn, "10s")
	c := helperClient(t, h1.url)
	id, key := c.loadedProject("k1")
	spec := map[string]any{"engine": "gibbs", "chains": 2, "samples": 6000, "burnin": 500, "seed": 11}
	fid := c.startFit(id, key, spec)
	st, err := db.Open(context.Background(), dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(60 * time.Second)
	var f *annotations.Fit
	for {
		f = fitState(t, st, fid)
		if f.Status == annotations.FitRunning && f.Progress > 0.02 {
			break
		}
		if f.Status.Terminal() || time.Now().After(deadline) {
			t.Fatalf("fit did not get under way: %+v", f)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res, took := killWorkerOf(t, f.Worker, h1, h2, fid, key)
	t.Logf("killed worker %s at progress %.2f; the fit ended %s on the other in %s (attempts %v, worker %v)",
		f.Worker, f.Progress, res["state"], took, res["attempts"], res["worker"])
	if res["state"] != "done" || res["attempts"].(float64) != 2 || res["worker"] == f.Worker {
		t.Fatalf("after the kill: %v", res)
	}
	// The job record (River records the job's end just after the fit's).
	for deadline := time.Now().Add(hangTimeout); ; time.Sleep(50 * time.Millisecond) {
		jobs, _, err := st.ListJobs(context.Background(), 10)
		if err != nil {
			t.Fatal(err)
		}
		var j *annotations.JobInfo
		for i := range jobs {
			if jobs[i].FitID == fid {
				j = &jobs[i]
			}
		}
		if j != nil && j.State == "completed" {
			t.Logf("job %d: %s, attempted by %v, errors %v", j.ID, j.State, j.AttemptedBy, j.Errors)
			if len(j.AttemptedBy) != 2 || j.AttemptedBy[0] != f.Worker || j.AttemptedBy[1] == f.Worker {
				t.Errorf("job record: %+v", j)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job record: %+v", j)
		}
	}

	// Bit for bit the fit of one process with the same seed.
	raw, err := st.FitResult(context.Background(), fid)
	if err != nil {
		t.Fatal(err)
	}
	var sp analysis.FitSpec
	if err := json.Unmarshal(f.Spec, &sp); err != nil {
		t.Fatal(err)
	}
	ds, err := st.Dataset(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	local, err := analysis.Fit(context.Background(), ds, sp, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got multirater.FitResult
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for _, part := range []struct {
		name      string
		got, want any
	}{{"items", got.Items, local.Items}, {"raters", got.Raters, local.Raters}, {"flags", got.Flags, local.Flags}, {"draws", got.Draws, local.Draws}} {
		g, _ := json.Marshal(part.got)
		w, _ := json.Marshal(part.want)
		if !bytes.Equal(g, w) {
			t.Errorf("%s of the recovered fit differ from the same fit in one process", part.name)
		}
	}
}

// TestSIGTERMRequeuesRunningFits: SIGTERM shuts the server down gracefully:
// a fit that cannot finish within the grace period goes back to the queue.
func TestSIGTERMRequeuesRunningFits(t *testing.T) {
	r := startHelperFit(t, "300ms", longFit)
	dsn, h, c, key, fid := r.dsn, r.h, r.c, r.key, r.fid
	deadline := time.Now().Add(60 * time.Second)
	for c.call("GET", fmt.Sprintf("/api/v1/fits/%d", fid), key, nil, 200)["state"] != "running" {
		if time.Now().After(deadline) {
			t.Fatal("fit did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	h.cmd.Process.Signal(syscall.SIGTERM)
	if err := h.cmd.Wait(); err != nil {
		t.Errorf("server exit: %v", err)
	}
	t.Logf("server stopped %s after SIGTERM", time.Since(start).Round(time.Millisecond))
	st, err := db.Open(context.Background(), dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := fitState(t, st, fid)
	if f.Status != annotations.FitQueued || !strings.Contains(f.Message, "shut down") {
		t.Errorf("after SIGTERM: %+v", f)
	}
}

// waitNoProcessWithEnv waits until no process has tag in its environment
// (Linux /proc) and returns how many still do after the timeout; 0 where
// /proc cannot tell.
func waitNoProcessWithEnv(t *testing.T, tag string, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		n := 0
		paths, _ := filepath.Glob("/proc/[0-9]*/environ")
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			for _, kv := range strings.Split(string(b), "\x00") {
				if kv == tag {
					n++
					break
				}
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}
