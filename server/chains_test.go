package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/db"
	"concord/multirater"
	"path/filepath"
	"strings"
)

// sameAsOneProcess checks that the stored result of fit fid is, bit for
// bit apart from timings, the same seeded fit run in this process, and
// that it has the timings the fit in one process has (ess_per_cpu_second:
// over the chains' CPU time).
func sameAsOneProcess(t *testing.T, st annotations.Store, fid int64) {
	t.Helper()
	ctx := context.Background()
	f, err := st.FindFitByID(ctx, fid)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.FitResult(ctx, fid)
	if err != nil {
		t.Fatal(err)
	}
	var sp analysis.FitSpec
	if err := json.Unmarshal(f.Spec, &sp); err != nil {
		t.Fatal(err)
	}
	ds, err := st.Dataset(ctx, f.ProjectID)
	if err != nil {
		t.Fatal(err)
	}
	local, err := analysis.Fit(ctx, ds, sp, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got multirater.FitResult
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if (local.Diagnostics.ESSPerCPUSecond > 0) != (got.Diagnostics.ESSPerCPUSecond > 0) {
		t.Errorf("ess_per_cpu_second %g, in one process %g", got.Diagnostics.ESSPerCPUSecond, local.Diagnostics.ESSPerCPUSecond)
	}
	for _, r := range []*multirater.FitResult{&got, local} {
		r.Diagnostics.Seconds, r.Diagnostics.SamplingSeconds, r.Diagnostics.SweepsPerSecond, r.Diagnostics.ESSPerCPUSecond = 0, 0, 0, 0
		for i := range r.Diagnostics.ModelCandidates {
			r.Diagnostics.ModelCandidates[i].Seconds = 0
		}
	}
	g, _ := json.Marshal(&got)
	w, _ := json.Marshal(local)
	if string(g) != string(w) {
		t.Errorf("the fit whose chains ran as jobs differs from the same fit in one process")
	}
}

// TestFanOutChains: with FanOutChains a Gibbs fit's chains run as jobs of
// their own (two workers in one process here), the last enqueues the
// combine, and the result is the fit in one process bit for bit; the fit
// document and the job records say which worker ran which chain. A fit
// that cannot fan out (EP) runs as one job.
func TestFanOutChains(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.FanOutChains = true; c.WorkerName = "fan" })
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, map[string]any{"engine": "gibbs", "chains": 3, "samples": 300, "burnin": 100, "seed": 5})
	f := e.waitFit(fid, key, 2*time.Minute)
	if f["state"] != "done" {
		t.Fatalf("fit ended %s: %v", f["state"], f["message"])
	}
	chains, _ := f["chains"].([]any)
	if len(chains) != 3 {
		t.Fatalf("chains in the fit document: %v", f["chains"])
	}
	for c, x := range chains {
		ch := x.(map[string]any)
		if ch["chain"].(float64) != float64(c) || ch["state"] != "done" || ch["worker"] != "fan" || ch["attempts"].(float64) != 1 {
			t.Errorf("chain %d: %v", c, ch)
		}
	}
	sameAsOneProcess(t, e.store, fid)
	// The chains' sweeps are counted when they are combined.
	if got := e.sweepsTotal(); got != 3*(100+300) {
		t.Errorf("concord_fit_sweeps_total %v after the fanned-out fit, want 1200", got)
	}
	user := newBrowser(t, e)
	user.login(key)
	resp, page := user.get(fmt.Sprintf("/fits/%d", fid))
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="fit-chains"`) || strings.Count(page, "<code>fan</code>") != 3 {
		t.Errorf("the fit page (status %d) lists no chains with their worker", resp.StatusCode)
	}
	jobs := e.call("GET", "/api/v1/jobs?limit=20", testAdmin, nil, http.StatusOK)["jobs"].([]any)
	kinds := map[string]int{}
	for _, x := range jobs {
		j := x.(map[string]any)
		if j["fit_id"] == float64(fid) {
			kinds[fmt.Sprint(j["kind"], " ", j["state"])]++
		}
	}
	want := map[string]int{"fit completed": 1, "fit_chain completed": 3, "fit_combine completed": 1}
	for deadline := time.Now().Add(hangTimeout); fmt.Sprint(kinds) != fmt.Sprint(want); {
		// River records a job's end just after the fit's.
		if time.Now().After(deadline) {
			t.Fatalf("jobs of the fit: %v, want %v", kinds, want)
		}
		time.Sleep(50 * time.Millisecond)
		kinds = map[string]int{}
		for _, x := range e.call("GET", "/api/v1/jobs?limit=20", testAdmin, nil, http.StatusOK)["jobs"].([]any) {
			j := x.(map[string]any)
			if j["fit_id"] == float64(fid) {
				kinds[fmt.Sprint(j["kind"], " ", j["state"])]++
			}
		}
	}

	ep := e.startFit(id, key, map[string]any{"engine": "ep"})
	if f := e.waitFit(ep, key, 2*time.Minute); f["state"] != "done" || f["chains"] != nil {
		t.Errorf("ep fit: %v, chains %v", f["state"], f["chains"])
	}
	if got := e.sweepsTotal(); got != 1200 {
		t.Errorf("concord_fit_sweeps_total %v after an EP fit, want 1200 (no sweep)", got)
	}
}

// TestFanOutCancel: a cancel of a fanned-out fit reaches its running
// chains: the fit is cancelled at once, and no chain job is left running
// or queued.
func TestFanOutCancel(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.FanOutChains = true })
	id, key := e.loadedProject("k1")
	fid := e.startFit(id, key, map[string]any{"engine": "gibbs", "chains": 4, "samples": 1000000, "burnin": 100, "seed": 5})
	deadline := time.Now().Add(hangTimeout)
	for {
		f := fitState(t, e.store, fid)
		running := 0
		for _, c := range f.Chains {
			if c.State == "running" && c.Progress > 0 {
				running++
			}
		}
		if running == 2 {
			break
		}
		if f.Status.Terminal() || time.Now().After(deadline) {
			t.Fatalf("chains did not get under way: %+v", f)
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := e.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", fid), key, nil, http.StatusAccepted)
	if out["state"] != "cancelled" {
		t.Errorf("after the cancel: %v", out["state"])
	}
	for deadline := time.Now().Add(hangTimeout); ; time.Sleep(50 * time.Millisecond) {
		counts, err := e.store.JobCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		busy := int64(0)
		for _, c := range counts {
			if c.State == "running" || c.State == "available" || c.State == "retryable" {
				busy += c.Count
			}
		}
		if busy == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still busy after the cancel: %v", counts)
		}
	}
	if f := fitState(t, e.store, fid); f.Status != annotations.FitCancelled {
		t.Errorf("fit %s: %s", f.Status, f.Message)
	}
}

// TestFanOutKillWorkerOnSQLite: two worker processes on one SQLite file
// run a 4-chain fit's chains (each takes some); one is killed (SIGKILL)
// while it runs a chain. The other runs that chain again (its worker is
// seen dead after StaleAfter, 3 s here) and the fit completes within two
// minutes of the kill, bit for bit the same seeded fit in one process.
func TestFanOutKillWorkerOnSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	killChainWorker(t, filepath.Join(t.TempDir(), "concord.db"))
}

// TestFanOutKillWorkerOnPostgres is TestFanOutKillWorkerOnSQLite on
// PostgreSQL.
func TestFanOutKillWorkerOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	killChainWorker(t, postgresDSN(t))
}

func killChainWorker(t *testing.T, dsn string) {
	h1 := startHelper(t, dsn, "10s", "CONCORD_HELPER_FANOUT=1")
	h2 := startHelper(t, dsn, "10s", "CONCORD_HELPER_FANOUT=1")
	c := helperClient(t, h1.url)
	id, key := c.loadedProject("k1")
	// Chains long enough to be seen running on both workers on a fast
	// machine too (3,000 draws took 0.45 s a chain on an idle CI machine,
	// too short for the progress writes to show both running).
	fid := c.startFit(id, key, map[string]any{"engine": "gibbs", "chains": 4, "samples": 30000, "burnin": 300, "seed": 11})
	st, err := db.Open(context.Background(), dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Wait until both workers run a chain, some way in.
	var f *annotations.Fit
	var victimChain annotations.FitChain
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		f = fitState(t, st, fid)
		workers := map[string]bool{}
		for _, ch := range f.Chains {
			if ch.State == "running" && ch.Progress > 0.05 {
				workers[ch.Worker] = true
				victimChain = ch
			}
		}
		if len(workers) == 2 {
			break
		}
		if f.Status.Terminal() || time.Now().After(deadline) {
			t.Fatalf("the chains did not run on both workers: %+v", f)
		}
	}
	res, took := killWorkerOf(t, victimChain.Worker, h1, h2, fid, key)
	t.Logf("killed worker %s running chain %d at %.2f; the fit ended %s in %s; chains %v",
		victimChain.Worker, victimChain.Chain, victimChain.Progress, res["state"], took, res["chains"])
	if res["state"] != "done" {
		t.Fatalf("after the kill: %v", res)
	}
	f = fitState(t, st, fid)
	ran := map[string]bool{}
	for _, ch := range f.Chains {
		ran[ch.Worker] = true
		if ch.Chain == victimChain.Chain && (ch.Attempts != 2 || ch.Worker == victimChain.Worker) {
			t.Errorf("the killed chain's record: %+v", ch)
		}
	}
	// The job records show which worker attempted which chain.
	jobs, _, err := st.ListJobs(context.Background(), 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.FitID == fid && j.Kind == "fit_chain" && *j.Chain == victimChain.Chain {
			if len(j.AttemptedBy) != 2 || j.AttemptedBy[0] != victimChain.Worker {
				t.Errorf("the killed chain's job: %+v", j)
			}
		}
	}
	sameAsOneProcess(t, st, fid)
}
