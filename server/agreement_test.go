package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"concord/analysis"
	"concord/annotations"
)

func gaugeValue(g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		panic(err)
	}
	return m.GetGauge().GetValue()
}

// TestAgreementBootstrapIsBounded: the bootstrap of an agreement analysis
// resamples at most Config.MaxBootstrapWork labels and rater pairs. An
// explicit bootstrap beyond it is a 400 naming the limit and the most that
// fits; the default is reduced to fit (or to analytic intervals), with a
// note.
func TestAgreementBootstrapIsBounded(t *testing.T) {
	var work int64
	{
		e := newEnv(t)
		id, _ := e.loadedProject("k1")
		ds, err := e.store.Dataset(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		work = analysis.BootstrapWork(ds)
		e.stop()
	}
	limit := 150 * work // 150 replicates fit
	e := newEnv(t, func(c *Config) { c.MaxBootstrapWork = limit })
	id, key := e.loadedProject("k1")
	base := fmt.Sprintf("/api/v1/projects/%d/agreement", id)

	e.wantError("GET", base+"?bootstrap=1000", key, nil, http.StatusBadRequest, annotations.EINVALID,
		fmt.Sprintf("exceed the limit of %d per analysis; ask for bootstrap=150 or fewer, or bootstrap=0", limit))
	if doc := e.call("GET", base+"?bootstrap=150&seed=3", key, nil, 200); doc["bootstrap"].(float64) != 150 {
		t.Errorf("bootstrap=150 within the limit ran %v replicates", doc["bootstrap"])
	}
	doc := e.call("GET", base, key, nil, 200)
	if doc["bootstrap"].(float64) != 150 || !strings.Contains(fmt.Sprint(doc["notes"]), "bootstrap reduced from 1000 to 150 replicates") {
		t.Errorf("default bootstrap over the limit: %v replicates, notes %v", doc["bootstrap"], doc["notes"])
	}

	small := newEnv(t, func(c *Config) { c.MaxBootstrapWork = 50 * work })
	id2, key2 := small.loadedProject("k1")
	doc = small.call("GET", fmt.Sprintf("/api/v1/projects/%d/agreement", id2), key2, nil, 200)
	if doc["bootstrap"].(float64) != 0 || !strings.Contains(fmt.Sprint(doc["notes"]), "no bootstrap intervals") {
		t.Errorf("default bootstrap far over the limit: %v replicates, notes %v", doc["bootstrap"], doc["notes"])
	}
	small.call("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=50", id2), key2, nil, 200)
}

// bigOrdinalCSV is a label file of n items rated by r raters each on
// ordinal:1..5.
func bigOrdinalCSV(n, r int) string {
	rng := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	b.WriteString("item_id,rater_id,label\n")
	for i := range n {
		truth := rng.IntN(5)
		for j := range r {
			v := min(max(truth+rng.IntN(3)-1, 0), 4)
			fmt.Fprintf(&b, "i%d,r%d,%d\n", i, j, v+1)
		}
	}
	return b.String()
}

// TestAgreementStopsWhenClientLeaves: an agreement analysis far too large
// to finish soon (no bootstrap bound, 10000 replicates of 50000 labels)
// stops when its client disconnects, instead of keeping the cores busy.
func TestAgreementStopsWhenClientLeaves(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 50000 labels")
	}
	e := newEnv(t, func(c *Config) { c.MaxBootstrapWork = -1 })
	id, key := e.project("big", "ordinal:1..5")
	resp, b := e.upload(fmt.Sprintf("/api/v1/projects/%d/imports", id), key, map[string][2]string{"file": {"big.csv", bigOrdinalCSV(5000, 10)}}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("import: %d %s", resp.StatusCode, b)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", e.url+fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=10000", id), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("the agreement request answered %d", resp.StatusCode)
		}
		done <- err
	}()
	m := e.srv.metrics
	waitFor := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s", what, timeout)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("the analysis starts", 120*time.Second, func() bool { return gaugeValue(m.agreementRunning) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
	left := time.Now()
	waitFor("the analysis stops after its client left", 60*time.Second, func() bool { return gaugeValue(m.agreementRunning) == 0 })
	t.Logf("the analysis stopped %s after its client left", time.Since(left).Round(time.Millisecond))
	if n := counterValue(m.agreementCancelled); n != 1 {
		t.Errorf("%v analyses counted as cancelled, want 1", n)
	}
}

// TestMemoSharesAndCancels: concurrent requests for one key share one
// computation; it is cancelled (and forgotten) only when the last request
// waiting for it has gone.
func TestMemoSharesAndCancels(t *testing.T) {
	m := newMemo[[]byte](context.Background(), 4)
	started := make(chan context.Context, 4)
	fn := func(ctx context.Context) ([]byte, error) {
		started <- ctx
		<-ctx.Done()
		return nil, ctx.Err()
	}
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	res1, res2 := make(chan error, 1), make(chan error, 1)
	go func() { _, err := m.get(ctx1, "k", fn); res1 <- err }()
	cctx := <-started
	go func() { _, err := m.get(ctx2, "k", fn); res2 <- err }()
	// Wait until the second request waits too.
	for {
		m.mu.Lock()
		n := m.entries["k"].waiters
		m.mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel1()
	if err := <-res1; !errors.Is(err, context.Canceled) {
		t.Errorf("first request: %v", err)
	}
	if cctx.Err() != nil {
		t.Fatal("the computation was cancelled while a request still waited for it")
	}
	cancel2()
	if err := <-res2; !errors.Is(err, context.Canceled) {
		t.Errorf("second request: %v", err)
	}
	if cctx.Err() == nil {
		t.Fatal("the computation goes on after every request left")
	}
	// Forgotten: the next request computes again.
	val, err := m.get(context.Background(), "k", func(context.Context) ([]byte, error) { return []byte("x"), nil })
	if err != nil || string(val) != "x" {
		t.Errorf("after cancellation: %q, %v", val, err)
	}
	if v, _ := m.get(context.Background(), "k", fn); string(v) != "x" {
		t.Errorf("cached value %q", v)
	}
}

// TestAgreementQueryParts: only= computes one part, pairs= and min_shared=
// choose the rater pairs, ties= the tie rule; bad values are a 400 naming
// the parameter.
func TestAgreementQueryParts(t *testing.T) {
	e := newEnv(t)
	id, key := e.loadedProject("k1")
	base := fmt.Sprintf("/api/v1/projects/%d/agreement", id)
	doc := e.call("GET", base+"?bootstrap=0&only=items", key, nil, 200)
	if _, ok := doc["item_agreement"]; !ok || doc["fleiss_kappa"] != nil || doc["only"] != "items" {
		t.Errorf("only=items: keys %v", keysOf(doc))
	}
	doc = e.call("GET", base+"?bootstrap=0&only=coefficients&pairs=1", key, nil, 200)
	if pairs, _ := doc["cohen_kappa"].([]any); len(pairs) != 1 || doc["pair_selection"] == nil {
		t.Errorf("pairs=1: %d pairs, selection %v", len(pairs), doc["pair_selection"])
	}
	doc = e.call("GET", base+"?bootstrap=0&only=aggregators&ties=first", key, nil, 200)
	if aggs, _ := doc["aggregators"].(map[string]any); aggs["majority"] == nil {
		t.Errorf("ties=first: aggregators %v", keysOf(aggs))
	}
	e.call("GET", base+"/pairs?bootstrap=0&min_shared=2", key, nil, 200)
	for q, want := range map[string]string{
		"only=kappas":   "query parameter only=",
		"pairs=some":    "query parameter pairs=",
		"ties=random":   "query parameter ties=",
		"min_shared=-1": "query parameter min_shared=",
	} {
		e.wantError("GET", base+"?bootstrap=0&"+q, key, nil, http.StatusBadRequest, annotations.EINVALID, want)
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
