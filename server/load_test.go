package server

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var loadTest = flag.Bool("loadtest", false, "run the HTTP load test (TestLoad): 50 concurrent clients on loopback while fits run")

// TestLoad is the load test: 50 concurrent clients on loopback read fit
// reports and list labels while two fits run in the background; it reports
// p50/p99 latency per request kind and the error count, and fails on any
// error or a p99 of report reads of 100 ms or more. It is bounded in count
// (50 clients x 150 requests) and time (2 minutes). Run it with
//
//	go test ./server -run TestLoad -loadtest -v
//
// (or CONCORD_LOADTEST=1).
func TestLoad(t *testing.T) {
	if !*loadTest && os.Getenv("CONCORD_LOADTEST") != "1" {
		t.Skip("load test: run with -loadtest or CONCORD_LOADTEST=1")
	}
	const (
		clients   = 50
		perClient = 150
	)
	// As concord serve runs: fits in child processes at a lower priority
	// (the test binary is the fit worker), the default key cache.
	t.Setenv("CONCORD_FIT_WORKER_HELPER", "1")
	fitCmd := []string{os.Args[0], "-test.run=^TestHelperFitWorker$"}
	if nice, err := exec.LookPath("nice"); err == nil {
		fitCmd = append([]string{nice, "-n", "10"}, fitCmd...)
	}
	if os.Getenv("CONCORD_LOADTEST_INPROCESS") == "1" {
		fitCmd = nil
	}
	e := newEnv(t, func(c *Config) { c.KeyCacheTTL = 0; c.FitCommand = fitCmd })
	type proj struct {
		id  int64
		key string
		fit int64
		// running is the fit that runs during the test.
		running int64
	}
	var ps []proj
	for i := range 2 {
		id, key := e.loadedProject(fmt.Sprintf("load-%d", i))
		ps = append(ps, proj{id: id, key: key, fit: e.doneFit(id, key)})
	}
	// Warm the report cache (the first read builds the report, with 1000
	// bootstrap replicates of the agreement coefficients).
	for _, p := range ps {
		start := time.Now()
		e.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", p.fit), p.key, nil, 200)
		t.Logf("first report read of fit %d (builds the report): %s", p.fit, time.Since(start).Round(time.Millisecond))
	}
	// Fits running during the test, one per worker.
	var running []int64
	if os.Getenv("CONCORD_LOADTEST_IDLE") != "1" {
		for i := range ps {
			ps[i].running = e.startFit(ps[i].id, ps[i].key, longFit)
			running = append(running, ps[i].running)
		}
		for _, p := range ps {
			waitStateAPI(t, e, p.running, p.key)
		}
	}

	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxIdleConns: clients}}
	type sample struct {
		kind string
		d    time.Duration
		ok   bool
	}
	results := make(chan sample, clients*perClient)
	deadline := time.Now().Add(2 * time.Minute)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 1))
			for i := 0; i < perClient && time.Now().Before(deadline); i++ {
				p := ps[r.IntN(len(ps))]
				kind, path := "report.json", fmt.Sprintf("/api/v1/fits/%d/report.json", p.fit)
				switch i % 3 {
				case 1:
					kind, path = "labels", fmt.Sprintf("/api/v1/projects/%d/labels?limit=100&offset=%d", p.id, r.IntN(175))
				case 2:
					kind, path = "fit status", fmt.Sprintf("/api/v1/fits/%d", max(p.running, p.fit))
				}
				req, _ := http.NewRequest("GET", e.url+path, nil)
				req.Header.Set("Authorization", "Bearer "+p.key)
				// Like a browser or a load generator: gzip accepted, the
				// body read to its last byte (not decompressed).
				req.Header.Set("Accept-Encoding", "gzip")
				t0 := time.Now()
				resp, err := hc.Do(req)
				ok := err == nil
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					ok = err == nil && resp.StatusCode == 200
				}
				results <- sample{kind, time.Since(t0), ok}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(results)
	byKind := map[string][]time.Duration{}
	errs, n := 0, 0
	for s := range results {
		n++
		if !s.ok {
			errs++
			continue
		}
		byKind[s.kind] = append(byKind[s.kind], s.d)
	}
	pct := func(ds []time.Duration, p float64) time.Duration {
		slices.Sort(ds)
		return ds[min(len(ds)-1, int(p*float64(len(ds))))]
	}
	t.Logf("%d requests by %d clients in %s (%.0f req/s) while %d fits ran; %d errors", n, clients, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), len(running), errs)
	for _, kind := range []string{"report.json", "labels", "fit status"} {
		ds := byKind[kind]
		if len(ds) == 0 {
			t.Errorf("no successful %s requests", kind)
			continue
		}
		t.Logf("%-12s n=%4d  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms", kind, len(ds),
			ms(pct(ds, 0.50)), ms(pct(ds, 0.99)), ms(pct(ds, 1)))
	}
	// The server's own view (handler time, from its latency histogram):
	// a gap to the client's view is time spent waiting for a CPU.
	for _, route := range []string{"/api/v1/fits/:id/report.json", "/api/v1/projects/:id/labels", "/api/v1/fits/:id"} {
		p50, p99 := serverQuantiles(t, e.srv, route)
		t.Logf("server side %-30s p50 <= %g ms, p99 <= %g ms (histogram bucket bounds)", route, p50*1000, p99*1000)
	}
	if errs > 0 {
		t.Errorf("%d errors", errs)
	}
	if n < clients*perClient {
		t.Errorf("only %d of %d requests within the time bound", n, clients*perClient)
	}
	if ds := byKind["report.json"]; len(ds) > 0 && pct(ds, 0.99) >= 100*time.Millisecond {
		t.Errorf("p99 of report reads %.1f ms, want under 100 ms", ms(pct(ds, 0.99)))
	}
	for _, id := range running {
		if st, _ := e.store.FindFitByID(t.Context(), id); st != nil && st.Status != "running" {
			t.Errorf("background fit %d was %s by the end: the load did not overlap running fits", id, st.Status)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// waitStateAPI waits until a fit runs.
func waitStateAPI(t *testing.T, e *testEnv, id int64, keys ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, k := range keys {
			resp, b := e.request("GET", fmt.Sprintf("/api/v1/fits/%d", id), k, nil)
			if resp.StatusCode == 200 && strings.Contains(string(b), `"state":"running"`) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("fit %d did not start", id)
}

// serverQuantiles returns upper bounds of the p50 and p99 of a route's
// handler latency from the server's histogram (status 200).
func serverQuantiles(t *testing.T, s *Server, route string) (p50, p99 float64) {
	mfs, err := s.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "concord_http_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := 0
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && l.GetValue() == route || l.GetName() == "status" && l.GetValue() == "200" {
					match++
				}
			}
			if match != 2 {
				continue
			}
			h := m.GetHistogram()
			n := float64(h.GetSampleCount())
			p50, p99 = math.Inf(1), math.Inf(1)
			for _, b := range h.GetBucket() {
				c := float64(b.GetCumulativeCount())
				if c >= 0.5*n && math.IsInf(p50, 1) {
					p50 = b.GetUpperBound()
				}
				if c >= 0.99*n && math.IsInf(p99, 1) {
					p99 = b.GetUpperBound()
				}
			}
			return p50, p99
		}
	}
	return math.NaN(), math.NaN()
}
