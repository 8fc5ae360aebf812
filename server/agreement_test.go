package server

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
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
	e, id, key := loadedEnv(t, "k1")
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
	e.wantBadQueries(base+"?bootstrap=0&", key, map[string]string{
		"only=kappas":   "query parameter only=",
		"pairs=some":    "query parameter pairs=",
		"ties=random":   "query parameter ties=",
		"min_shared=-1": "query parameter min_shared=",
	})
}

// wantBadQueries fails the test unless each query (appended to path)
// is a 400 whose message has its want.
func (e *testEnv) wantBadQueries(path, key string, wants map[string]string) {
	e.t.Helper()
	for q, want := range wants {
		e.wantError("GET", path+q, key, nil, http.StatusBadRequest, annotations.EINVALID, want)
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestAgreementQueryTests: ci=, null= and weights= reach the analysis
// (normal intervals and z/p against 0 and the null value in the document,
// the weighted sets asked for); bad values are a 400 naming the parameter.
func TestAgreementQueryTests(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	base := fmt.Sprintf("/api/v1/projects/%d/agreement", id)
	doc := e.call("GET", base+"?bootstrap=0&only=coefficients&ci=normal&null=0.5&weights=radical,circular", key, nil, 200)
	fk, _ := doc["fleiss_kappa"].(map[string]any)
	if doc["ci"] != "normal" || doc["null_value"] != 0.5 || fk["ci_method"] != "normal" || fk["z"] == nil || fk["p_value"] == nil || fk["p_value_null"] == nil {
		t.Errorf("ci=normal&null=0.5: ci %v, null %v, fleiss_kappa %v", doc["ci"], doc["null_value"], fk)
	}
	if w, _ := doc["weighted"].(map[string]any); len(w) != 2 || w["radical"] == nil || w["circular"] == nil {
		t.Errorf("weights=radical,circular: weighted %v", keysOf(w))
	}
	doc = e.call("GET", base+"?bootstrap=0&only=coefficients", key, nil, 200)
	if fk, _ := doc["fleiss_kappa"].(map[string]any); doc["ci"] != "t" || fk["ci_method"] != "t" || doc["null_value"] != nil {
		t.Errorf("default: ci %v, fleiss_kappa %v", doc["ci"], fk)
	}
	// ci without bootstrap: the analytic intervals.
	doc = e.call("GET", base+"?only=coefficients&ci=normal", key, nil, 200)
	if fk, _ := doc["fleiss_kappa"].(map[string]any); doc["bootstrap"] != 0.0 || fk["ci_method"] != "normal" {
		t.Errorf("ci=normal alone: bootstrap %v, fleiss_kappa %v", doc["bootstrap"], fk)
	}
	e.wantBadQueries(base+"?bootstrap=0&", key, map[string]string{
		"ci=wald":         "query parameter ci=\"wald\": expected t or normal",
		"null=half":       "query parameter null=\"half\": expected a number",
		"weights=cubic":   "query parameter weights=\"cubic\": expected all or",
		"weights=linear,": "query parameter weights=\"\": expected all or",
	})
}

// TestTableAgreementAPI: POST /api/v1/agreement analyses a contingency
// table (as numbers or CSV) or per-item counts; the SAS example table of
// statsmodels' test suite gives statsmodels' numbers
// (raters/testdata/reference_statsmodels.csv, made by
// make_reference_statsmodels.py) with ci=normal; bad input is a 400 naming
// the row and column.
func TestTableAgreementAPI(t *testing.T) {
	ref := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, "../raters/testdata/reference_statsmodels.csv")), "\n") {
		f := strings.Split(line, ",")
		if strings.HasPrefix(line, "sas_table10,") {
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			ref[f[len(f)-3]+"/"+f[len(f)-2]] = v
		}
	}
	if len(ref) != 21 {
		t.Fatalf("%d statsmodels numbers for table10", len(ref))
	}
	e, _, key := loadedEnv(t, "k1")
	body := map[string]any{"table": [][]float64{{0, 4, 1}, {0, 8, 0}, {0, 1, 5}}, "ci": "normal", "weights": []string{"linear"}}
	doc := e.call("POST", "/api/v1/agreement", key, body, 200)
	un := doc["cohen_kappa"].([]any)[0].(map[string]any)["unweighted"].(map[string]any)
	lin := doc["weighted"].(map[string]any)["linear"].(map[string]any)["cohen_kappa"].(map[string]any)
	for _, c := range []struct {
		w   string
		est map[string]any
	}{{"unweighted", un}, {"linear", lin}} {
		for stat, field := range map[string]string{"kappa": "value", "std_kappa": "se", "kappa_low": "ci_low", "kappa_upp": "ci_high", "std_kappa0": "se_null", "z_value": "z", "pvalue_two_sided": "p_value"} {
			got, _ := c.est[field].(float64)
			if want := ref[c.w+"/"+stat]; math.Abs(got-want) > 1e-9 {
				t.Errorf("%s %s: %v, statsmodels %v", c.w, stat, got, want)
			}
		}
	}
	if doc["input"] != "table" || doc["ci"] != "normal" {
		t.Errorf("input %v, ci %v", doc["input"], doc["ci"])
	}
	// The same table as CSV, and counts.
	doc = e.call("POST", "/api/v1/agreement", key, map[string]any{"csv": ",a,b,c\na,0,4,1\nb,0,8,0\nc,0,1,5\n", "input": "table", "ci": "normal"}, 200)
	if v := doc["cohen_kappa"].([]any)[0].(map[string]any)["unweighted"].(map[string]any)["value"].(float64); math.Abs(v-ref["unweighted/kappa"]) > 1e-12 {
		t.Errorf("csv table: kappa %v", v)
	}
	doc = e.call("POST", "/api/v1/agreement", key, map[string]any{"counts": [][]float64{{7, 1}, {3, 5}}, "categories": []string{"yes", "no"}}, 200)
	if doc["input"] != "counts" || doc["fleiss_kappa"] == nil || doc["categories"].([]any)[0] != "yes" {
		t.Errorf("counts: %v", doc)
	}
	for _, c := range []struct {
		body any
		want string
	}{
		{map[string]any{"table": [][]float64{{1, 2}, {3, -4}}}, "table: row 2, column 2: -4 is not a count"},
		{map[string]any{"table": [][]float64{{1, 2, 3}, {3, 4, 5}}}, "table: 2 rows for 3 categories"},
		{map[string]any{"counts": [][]float64{{1, 2}, {3}}}, "counts: row 2 has 1 counts; expected 2"},
		{map[string]any{"csv": ",a,b\na,1,2\nb,x,4\n", "input": "table"}, "csv: row 3, column 2: \"x\" is not a count"},
		{map[string]any{"csv": "1,2\n3,4\n"}, "input \"\": expected table or counts"},
		{map[string]any{"table": [][]float64{{1, 2}, {3, 4}}, "counts": [][]float64{{1, 2}}}, "give one of table"},
		{map[string]any{"table": [][]float64{{1, 2}, {3, 4}}, "ci": "wald"}, "ci \"wald\": expected t or normal"},
		{map[string]any{"table": [][]float64{{1, 2}, {3, 4}}, "weights": []string{"cubic"}}, "weights \"cubic\""},
		{map[string]any{"table": [][]float64{{1, 2}, {3, 4}}, "conf_level": 2}, "conf_level 2: expected a number between 0 and 1"},
		{map[string]any{"table": [][]float64{{0, 0}, {0, 0}}}, "the contingency table is empty"},
		{map[string]any{"table": [][]float64{{1, 2}, {3, 4}}, "categories": []string{"a"}}, "categories: 1 names for 2 columns"},
	} {
		e.wantError("POST", "/api/v1/agreement", key, c.body, http.StatusBadRequest, annotations.EINVALID, c.want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAgreementQueryDawidSkene: ds_iter bounds Dawid-Skene's iterations,
// the new aggregators are in the document, ds_gold without gold labels is
// a 400, and bad values are a 400 naming the parameter.
func TestAgreementQueryDawidSkene(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	base := fmt.Sprintf("/api/v1/projects/%d/agreement", id)
	doc := e.call("GET", base+"?bootstrap=0&only=aggregators&ds_iter=2&ds_tol=0.5", key, nil, 200)
	aggs := doc["aggregators"].(map[string]any)
	fit := aggs["dawid_skene"].(map[string]any)["fit"].(map[string]any)
	if it := fit["iterations"].(float64); it > 2 {
		t.Errorf("ds_iter=2: %v iterations", it)
	}
	if aggs["zero_based_skill"] == nil || aggs["gold_majority"] != nil {
		t.Errorf("aggregators %v", keysOf(aggs))
	}
	e.wantError("GET", base+"?bootstrap=0&ds_gold=true", key, nil, http.StatusBadRequest, annotations.EINVALID, "needs items with a gold label")
	e.wantBadQueries(base+"?bootstrap=0&", key, map[string]string{
		"ds_iter=-1":   "query parameter ds_iter",
		"ds_tol=x":     "query parameter ds_tol=\"x\"",
		"ds_gold=mayb": "query parameter ds_gold=\"mayb\"",
	})
}

// TestAgreementQueryDSInit: ds_init and ds_init_strategy give Dawid-Skene
// initial error matrices over the API as --ds-init does, checked on
// crowd-kit's toy fixture against crowd-kit 1.4.1's own classes
// (raters/testdata/reference_crowdkit_options.csv: ds_assign_w2,
// ds_addition_w2, ds_addition_t2, ten iterations each); bad matrices and
// strategies are a 400 naming the parameter, row and column.
func TestAgreementQueryDSInit(t *testing.T) {
	td := "../raters/testdata/"
	ref := map[string]string{} // case/item -> class
	f, err := os.Open(td + "reference_crowdkit_options.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		if r[1] == "item" && r[3] == "label" {
			ref[r[0]+"/"+r[2]] = r[4]
		}
	}
	e, id, key := crowdkitToyProject(t)
	base := fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=0&only=aggregators&ties=first&ds_iter=10&ds_tol=0", id)
	for _, c := range []struct{ refCase, file, strategy string }{
		{"ds_assign_w2", "crowdkit_init_assign_w2.csv", "assign"},
		{"ds_addition_w2", "crowdkit_init_addition_w2.csv", "addition"},
		{"ds_addition_t2", "crowdkit_init_addition_t2.csv", "addition"},
	} {
		init, err := os.ReadFile(td + c.file)
		if err != nil {
			t.Fatal(err)
		}
		doc := e.call("GET", base+"&ds_init_strategy="+c.strategy+"&ds_init="+url.QueryEscape(string(init)), key, nil, 200)
		items := doc["aggregators"].(map[string]any)["dawid_skene"].(map[string]any)["items"].([]any)
		if len(items) != 5 {
			t.Fatalf("%s: %d items", c.refCase, len(items))
		}
		for _, it := range items {
			m := it.(map[string]any)
			if want := ref[c.refCase+"/"+m["id"].(string)]; want == "" || m["label"] != want {
				t.Errorf("%s item %v: %v, crowd-kit %q", c.refCase, m["id"], m["label"], want)
			}
		}
	}
	for q, want := range map[string]string{
		"ds_init=" + url.QueryEscape("rater,true,label,value\nw1,no,maybe,3\n"): "query parameter ds_init: row 2, column 3: \"maybe\" is not a category",
		"ds_init=" + url.QueryEscape("rater,true,label,value\nw9,no,no,3\n"):    "query parameter ds_init: row 2, column 1: rater \"w9\"",
		"ds_init_strategy=merge": "query parameter ds_init_strategy=\"merge\": expected assign or addition",
	} {
		e.wantError("GET", base+"&"+q, key, nil, http.StatusBadRequest, annotations.EINVALID, want)
	}
}
