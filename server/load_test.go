package server

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var loadTest = flag.Bool("loadtest", false, "run the HTTP load test (TestLoad): 50 concurrent clients on loopback while fits run")

// TestLoad is the load test: 50 concurrent clients on loopback read fit
// reports, list labels and poll a fit's status while two fits run in the
// background, against a server in a process of its own; it reports
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
	// The server runs as concord serve does, in a process of its own: two
	// workers, fits in child processes under nice, the default caches.
	// This process is only the clients.
	h := startHelper(t, filepath.Join(t.TempDir(), "concord.db"), "1s",
		"CONCORD_HELPER_WORKERS=2", "CONCORD_HELPER_NICE=1", "CONCORD_HELPER_QUIET=1")
	e := helperClient(t, h.url)
	type proj struct {
		id      int64
		key     string
		fit     int64 // done
		running int64 // runs during the test
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
	for i := range ps {
		ps[i].running = e.startFit(ps[i].id, ps[i].key, longFit)
	}
	for _, p := range ps {
		waitStateAPI(t, e, p.running, p.key)
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
					kind, path = "fit status", fmt.Sprintf("/api/v1/fits/%d", p.running)
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
	t.Logf("%d requests by %d clients in %s (%.0f req/s) while %d fits ran; %d errors", n, clients, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), len(ps), errs)
	for _, kind := range []string{"report.json", "labels", "fit status"} {
		ds := byKind[kind]
		if len(ds) == 0 {
			t.Errorf("no successful %s requests", kind)
			continue
		}
		t.Logf("%-12s n=%4d  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms", kind, len(ds),
			ms(pct(ds, 0.50)), ms(pct(ds, 0.99)), ms(pct(ds, 1)))
	}
	// The server's own view (handler time, from its latency histogram): a
	// gap to the clients' view is time spent waiting for a CPU.
	_, metrics := e.request("GET", "/metrics", "", nil)
	for _, route := range []string{"/api/v1/fits/:id/report.json", "/api/v1/projects/:id/labels", "/api/v1/fits/:id"} {
		p50, p99 := serverQuantiles(string(metrics), route)
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
	for _, p := range ps {
		f := e.call("GET", fmt.Sprintf("/api/v1/fits/%d", p.running), p.key, nil, 200)
		if f["state"] != "running" {
			t.Errorf("background fit %d was %v by the end: the load did not overlap running fits", p.running, f["state"])
		}
	}
	h.cmd.Process.Signal(syscall.SIGTERM)
	h.cmd.Wait()
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
// handler latency (status 200) from the server's /metrics text.
func serverQuantiles(metrics, route string) (p50, p99 float64) {
	re := regexp.MustCompile(`concord_http_request_duration_seconds_bucket\{method="GET",route="` + regexp.QuoteMeta(route) + `",status="200",le="([^"]+)"\} (\d+)`)
	type bucket struct{ le, n float64 }
	var bs []bucket
	for _, m := range re.FindAllStringSubmatch(metrics, -1) {
		le, _ := strconv.ParseFloat(m[1], 64)
		n, _ := strconv.ParseFloat(m[2], 64)
		bs = append(bs, bucket{le, n})
	}
	if len(bs) == 0 {
		return math.NaN(), math.NaN()
	}
	total := bs[len(bs)-1].n
	p50, p99 = math.Inf(1), math.Inf(1)
	for _, b := range bs {
		if b.n >= 0.5*total && math.IsInf(p50, 1) {
			p50 = b.le
		}
		if b.n >= 0.99*total && math.IsInf(p99, 1) {
			p99 = b.le
		}
	}
	return p50, p99
}
