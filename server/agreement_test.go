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

	"concord/analysis"
	"concord/annotations"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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

// TestAgreementPopulation: the population query parameter of the project
// agreement routes and the population field of POST /api/v1/agreement
// apply irrCAC's finite-population correction (SE times sqrt(1 - n/N); for
// the table, irrCAC's own kappa2.table with N:
// raters/testdata/reference_irrcac_population.csv), are part of the
// analysis's cache key, and bad or too small values are a 400 naming them.
func TestAgreementPopulation(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	base := fmt.Sprintf("/api/v1/projects/%d/agreement", id)
	se := func(doc map[string]any) float64 {
		fk, _ := doc["fleiss_kappa"].(map[string]any)
		v, _ := fk["se"].(float64)
		return v
	}
	inf := e.call("GET", base+"?bootstrap=0&only=coefficients", key, nil, 200)
	n := inf["items"].(float64)
	for _, pop := range []float64{n, 2*n + 3, 1000} {
		q := strconv.FormatFloat(pop, 'f', 0, 64)
		doc := e.call("GET", base+"?bootstrap=0&only=coefficients&population="+q, key, nil, 200)
		if want := se(inf) * math.Sqrt(1-n/pop); !(se(inf) > 0) || math.Abs(se(doc)-want) > 1e-12 || doc["population"] != pop {
			t.Errorf("population=%s: SE %v, want %v (infinite: %v); population %v", q, se(doc), want, se(inf), doc["population"])
		}
	}
	if again := e.call("GET", base+"?bootstrap=0&only=coefficients", key, nil, 200); se(again) != se(inf) || again["population"] != nil {
		t.Errorf("without population after population=: SE %v, want %v", se(again), se(inf))
	}
	small := strconv.FormatFloat(n-1, 'f', 0, 64)
	e.wantBadQueries(base+"?bootstrap=0&", key, map[string]string{
		"population=x":        "query parameter population=\"x\": expected a whole number",
		"population=-2":       "query parameter population=\"-2\": expected a whole number",
		"population=" + small: "population " + small + " (concord agreement --population; API: population) is smaller than the",
	})

	var want [3]float64 // SE, interval of Cohen's kappa at N = 203
	for _, line := range strings.Split(readFile(t, "../raters/testdata/reference_irrcac_population.csv"), "\n") {
		if strings.HasPrefix(line, "irrcac_cont3x3abstractors.csv,cohen_kappa,unweighted,203,") {
			f := strings.Split(line, ",")
			for k := range want {
				want[k], _ = strconv.ParseFloat(f[5+k], 64)
			}
		}
	}
	if want[0] == 0 {
		t.Fatal("no reference row for the table")
	}
	tab := [][]float64{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, "../raters/testdata/irrcac_cont3x3abstractors.csv")), "\n")[1:] {
		var row []float64
		for _, c := range strings.Split(line, ",")[1:] {
			v, err := strconv.ParseFloat(strings.TrimSpace(c), 64)
			if err != nil {
				t.Fatal(err)
			}
			row = append(row, v)
		}
		tab = append(tab, row)
	}
	doc := e.call("POST", "/api/v1/agreement", key, map[string]any{"table": tab, "population": 203}, 200)
	ck := doc["cohen_kappa"].([]any)[0].(map[string]any)["unweighted"].(map[string]any)
	for k, f := range []string{"se", "ci_low", "ci_high"} {
		if got, _ := ck[f].(float64); math.Abs(got-want[k]) > 1e-12 {
			t.Errorf("table, population 203: %s %v, irrCAC %v", f, got, want[k])
		}
	}
	for _, c := range []struct {
		body any
		want string
	}{
		{map[string]any{"table": tab, "population": -1}, "population -1: expected a whole number"},
		{map[string]any{"table": tab, "population": 99}, "population 99 (concord agreement --population; API: population) is smaller than the 100 subjects"},
		{map[string]any{"table": tab, "population": 1.5}, "population"},
	} {
		e.wantError("POST", "/api/v1/agreement", key, c.body, http.StatusBadRequest, annotations.EINVALID, c.want)
	}
}

// TestAgreementTablesAPI: the agreement document has the pairwise matrix
// and the per-item and per-rater tables; the table endpoints give them as
// JSON and CSV, the items lowest first, filtered (below) and paged on the
// server; bad parameters are 400s and unknown tables 404s.
func TestAgreementTablesAPI(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	base := fmt.Sprintf("/api/v1/projects/%d/agreement", id)

	doc := e.call("GET", base+"?bootstrap=0", key, nil, 200)
	m, ok := doc["pairwise_matrix"].(map[string]any)
	if !ok {
		t.Fatalf("no pairwise_matrix in the agreement document: keys %v", keysOf(doc))
	}
	rs := m["raters"].([]any)
	if len(rs) != 7 || m["weights"] != "quadratic" || m["coefficient"] != "cohen_kappa" {
		t.Errorf("matrix: %d raters, weights %v, coefficient %v", len(rs), m["weights"], m["coefficient"])
	}
	items := doc["item_agreement"].([]any)
	if len(items) != 135 || len(doc["rater_agreement"].([]any)) != 7 || doc["agreement_score"] == "" {
		t.Errorf("%d item rows, %d rater rows, score %v", len(items), len(doc["rater_agreement"].([]any)), doc["agreement_score"])
	}
	// The matrix agrees with cohen_kappa's pairs.
	ix := map[string]int{}
	for i, r := range rs {
		ix[r.(string)] = i
	}
	kappa, n := m["kappa"].([]any), m["n"].([]any)
	for _, p := range doc["cohen_kappa"].([]any) {
		pm := p.(map[string]any)
		a, b := ix[pm["a"].(string)], ix[pm["b"].(string)]
		want := pm["quadratic"].(map[string]any)["value"]
		if got := kappa[a].([]any)[b]; got != want || n[b].([]any)[a].(float64) != pm["n"].(float64) {
			t.Errorf("matrix %s-%s: %v (n %v), cohen_kappa %v (n %v)", pm["a"], pm["b"], got, n[b].([]any)[a], want, pm["n"])
		}
	}

	// The matrix endpoint.
	mt := e.call("GET", base+"/matrix?bootstrap=0", key, nil, 200)
	if len(mt["raters"].([]any)) != 7 || len(mt["kappa"].([]any)) != 7 || mt["weights"] != "quadratic" {
		t.Errorf("matrix table: %v", mt)
	}

	// Pairs: 7 raters, 21 pairs, paged.
	pg := e.call("GET", base+"/pairs?bootstrap=0&offset=5&limit=10", key, nil, 200)
	prs := pg["pairs"].([]any)
	if pg["total"].(float64) != 21 || pg["offset"].(float64) != 5 || len(prs) != 10 {
		t.Errorf("pairs page: total %v offset %v, %d rows", pg["total"], pg["offset"], len(prs))
	}
	allPairs := e.call("GET", base+"/pairs?bootstrap=0", key, nil, 200)["pairs"].([]any)
	if len(allPairs) != 21 || fmt.Sprint(allPairs[5]) != fmt.Sprint(prs[0]) || fmt.Sprint(allPairs[14]) != fmt.Sprint(prs[9]) {
		t.Errorf("pairs: %d rows; page rows %v and %v", len(allPairs), prs[0], prs[9])
	}
	resp, csvb := e.request("GET", base+"/pairs?bootstrap=0&format=csv&limit=3", key, nil)
	if resp.StatusCode != 200 || strings.Count(string(csvb), "\n") != 4 {
		t.Errorf("pairs CSV page: %d\n%s", resp.StatusCode, csvb)
	}

	// Items: lowest first, all 135 with 2+ labels or not.
	all := e.call("GET", base+"/items?bootstrap=0&limit=1000", key, nil, 200)
	rows := all["items"].([]any)
	if all["total"].(float64) != 135 || all["matching"].(float64) != 135 || len(rows) != 135 {
		t.Fatalf("items: total %v, matching %v, %d rows", all["total"], all["matching"], len(rows))
	}
	scored := int(all["scored"].(float64))
	prev := -1.0
	for i, r := range rows {
		rm := r.(map[string]any)
		v, ok := rm["agreement"].(float64)
		if i < scored {
			if !ok || v < prev {
				t.Fatalf("row %d: agreement %v after %v: not sorted ascending", i, rm["agreement"], prev)
			}
			prev = v
		} else if rm["agreement"] != nil {
			t.Errorf("row %d past the %d scored items has agreement %v", i, scored, rm["agreement"])
		}
		total := 0
		for _, c := range rm["counts"].(map[string]any) {
			total += int(c.(float64))
		}
		if total != int(rm["labels"].(float64)) {
			t.Errorf("item %v: counts %v for %v labels", rm["item"], rm["counts"], rm["labels"])
		}
	}
	// below=0.7: exactly the scored rows under 0.7, paged.
	want := 0
	for _, r := range rows[:scored] {
		if r.(map[string]any)["agreement"].(float64) < 0.7 {
			want++
		}
	}
	if want == 0 || want == scored {
		t.Fatalf("test data: %d of %d items below 0.7", want, scored)
	}
	low := e.call("GET", base+"/items?bootstrap=0&below=0.7&limit=5&offset=1", key, nil, 200)
	lr := low["items"].([]any)
	if int(low["matching"].(float64)) != want || len(lr) != min(5, want-1) || low["below"].(float64) != 0.7 {
		t.Errorf("below=0.7: matching %v (want %d), %d rows", low["matching"], want, len(lr))
	}
	if len(lr) > 0 && lr[0].(map[string]any)["item"] != rows[1].(map[string]any)["item"] {
		t.Errorf("offset 1: first row %v, want %v", lr[0], rows[1])
	}

	// CSV exports.
	get := func(path string) [][]string {
		t.Helper()
		resp, b := e.request("GET", path, key, nil)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") ||
			!strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("%s: status %d, type %q, disposition %q: %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"), clipText(string(b), 300))
		}
		recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return recs
	}
	if recs := get(base + "/items?bootstrap=0&format=csv&below=0.7"); len(recs) != want+1 || strings.Join(recs[0], ",") != "Item,Labels,Agreement" {
		t.Errorf("items CSV below 0.7: %d records (want %d), header %v", len(recs), want+1, recs[0])
	} else if v, err := strconv.ParseFloat(recs[1][2], 64); err != nil || v != rows[0].(map[string]any)["agreement"].(float64) {
		t.Errorf("items CSV first row %v, JSON %v", recs[1], rows[0])
	}
	if recs := get(base + "/items?bootstrap=0&format=csv"); len(recs) != 136 {
		t.Errorf("items CSV: %d records, want 136 (no paging by default)", len(recs))
	}
	if recs := get(base + "/matrix?bootstrap=0&format=csv"); len(recs) != 8 || len(recs[0]) != 8 || recs[1][1] != "" {
		t.Errorf("matrix CSV: %d records of %d fields, diagonal %q", len(recs), len(recs[0]), recs[1][1])
	}
	if recs := get(base + "/pairs?bootstrap=0&format=csv"); len(recs) != len(doc["cohen_kappa"].([]any))+1 || recs[0][2] != "Shared items" {
		t.Errorf("pairs CSV: %d records, header %v", len(recs), recs[0])
	}
	if recs := get(base + "/raters?bootstrap=0&format=csv"); len(recs) != 8 || strings.Join(recs[0], ",") != "Rater,Labels,Shared items,Partners,Pairs,Agreement,Mean pairwise kappa,Pooled kappa" {
		t.Errorf("raters CSV: %d records, header %v", len(recs), recs[0])
	}
	rt := e.call("GET", base+"/raters?bootstrap=0", key, nil, 200)
	if r0 := rt["raters"].([]any)[0].(map[string]any); r0["pooled_kappa"] == nil || r0["partners"].(float64) < 1 {
		t.Errorf("raters table row %v", r0)
	}
	pt := e.call("GET", base+"/pairs?bootstrap=0", key, nil, 200)
	if p0 := pt["pairs"].([]any)[0].(map[string]any); p0["kappa"].(map[string]any)["value"] == nil || pt["weights"] != "quadratic" {
		t.Errorf("pairs table row %v", p0)
	}

	// Errors.
	e.wantError("GET", base+"/nope", key, nil, http.StatusNotFound, annotations.ENOTFOUND, "expected one of matrix, pairs, items, raters")
	e.wantError("GET", base+"/items?below=x", key, nil, http.StatusBadRequest, annotations.EINVALID, "below=\"x\": expected a number")
	e.wantError("GET", base+"/items?format=xml", key, nil, http.StatusBadRequest, annotations.EINVALID, "expected json or csv")
	e.wantError("GET", base+"/raters?below=0.5", key, nil, http.StatusBadRequest, annotations.EINVALID, "unknown query parameter \"below\"")
	other, _ := e.project("other", "ordinal:0..3")
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d/agreement/items", other), key, nil, http.StatusNotFound, annotations.ENOTFOUND, "")
}

// TestTableAgreementWeightsMatrix checks weights_matrix of POST
// /api/v1/agreement against statsmodels' cohens_kappa with a toeplitz
// vector and a 2-D matrix on SAS's table10
// (raters/testdata/reference_statsmodels_weights.csv; agreement weights
// are 1 - statsmodels' disagreement weights), and its errors.
func TestTableAgreementWeightsMatrix(t *testing.T) {
	type key struct{ weights, stat string }
	ref := map[key]float64{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, "../raters/testdata/reference_statsmodels_weights.csv")), "\n") {
		if !strings.HasPrefix(line, "sas_table10,") {
			continue
		}
		// case,"input","weights",wt,stat,value: the weights are the
		// second quoted field.
		q := strings.Split(line, "\"")
		f := strings.Split(line, ",")
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		ref[key{q[3], f[len(f)-2]}] = v
	}
	e, _, apiKey := loadedEnv(t, "k1")
	tab := [][]float64{{0, 4, 1}, {0, 8, 0}, {0, 1, 5}}
	for _, c := range []struct {
		sm string      // statsmodels' weights as in the reference file
		w  [][]float64 // concord's agreement weights, 1 - d
	}{
		{"[0, 1, 2]", [][]float64{{1, 0, -1}}},
		{"[0, 1, 4]", [][]float64{{1, 0, -3}}},
		{"[[0, 0.5, 1], [0.5, 0, 0.3], [1, 0.3, 0]]", [][]float64{{1, 0.5, 0}, {0.5, 1, 0.7}, {0, 0.7, 1}}},
	} {
		doc := e.call("POST", "/api/v1/agreement", apiKey, map[string]any{"table": tab, "ci": "normal", "weights_matrix": c.w}, 200)
		est := doc["weighted"].(map[string]any)["custom"].(map[string]any)["cohen_kappa"].(map[string]any)
		n := 0
		for stat, field := range map[string]string{"kappa": "value", "std_kappa": "se", "std_kappa0": "se_null", "z_value": "z", "pvalue_two_sided": "p_value"} {
			want, ok := ref[key{c.sm, stat}]
			if !ok {
				t.Fatalf("no statsmodels %s for %s", stat, c.sm)
			}
			if got, _ := est[field].(float64); math.Abs(got-want) > 1e-9 {
				t.Errorf("%s %s: %v, statsmodels %v", c.sm, stat, got, want)
			}
			n++
		}
		if n != 5 {
			t.Errorf("%s: %d statistics", c.sm, n)
		}
	}
	for _, c := range []struct {
		w    [][]float64
		want string
	}{
		{[][]float64{{1, 0.5}}, "weights_matrix: row 1 has 2 weights; a toeplitz weights row has one per distance 0..2"},
		{[][]float64{{1, 0}, {0, 1}}, "weights_matrix: 2 rows of weights for 3 categories"},
		{[][]float64{{1, 0.5, 0}, {0.4, 1, 0}, {0, 0, 1}}, "weights_matrix: row 2, column 1: weight 0.4 differs from row 1, column 2: 0.5"},
		{[][]float64{{1, 0, 0}, {0, 2, 0}, {0, 0, 1}}, "weights_matrix: row 2, column 2: diagonal weight 2"},
	} {
		e.wantError("POST", "/api/v1/agreement", apiKey, map[string]any{"table": tab, "weights_matrix": c.w}, http.StatusBadRequest, annotations.EINVALID, c.want)
	}
}

// TestAgreementQueryWeightsMatrix: weights_matrix on a project's labels
// (the sirt k1 essays, ordinal 0..3): the quadratic weights written out
// as a matrix and as a toeplitz row give weighted.custom equal to
// weighted.quadratic (value and SE of every coefficient, the variances of
// irrCAC's raw-data functions); bad text is a 400 naming the parameter,
// the row and the column.
func TestAgreementQueryWeightsMatrix(t *testing.T) {
	e := newEnv(t)
	id, key := e.loadedProject("k1")
	base := "/api/v1/projects/" + strconv.FormatInt(id, 10) + "/agreement?bootstrap=0&only=coefficients&weights=quadratic&weights_matrix="
	// Quadratic weights on 0..3: 1 - (k-l)²/9.
	for _, text := range []string{
		"1,0.8888888888888888,0.5555555555555556,0\n0.8888888888888888,1,0.8888888888888888,0.5555555555555556\n0.5555555555555556,0.8888888888888888,1,0.8888888888888888\n0,0.5555555555555556,0.8888888888888888,1\n",
		"1,0.8888888888888888,0.5555555555555556,0",
	} {
		doc := e.call("GET", base+url.QueryEscape(text), key, nil, 200)
		w := doc["weighted"].(map[string]any)
		quad, custom := w["quadratic"].(map[string]any), w["custom"].(map[string]any)
		n := 0
		for _, coef := range []string{"percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac2", "brennan_prediger", "krippendorff_alpha"} {
			q, c := quad[coef].(map[string]any), custom[coef].(map[string]any)
			for _, f := range []string{"value", "se"} {
				a, _ := q[f].(float64)
				b, ok := c[f].(float64)
				if !ok || math.Abs(a-b) > 1e-9 {
					t.Errorf("%q %s %s: custom %v, quadratic %v", text[:10], coef, f, c[f], q[f])
				}
				n++
			}
		}
		if n != 12 {
			t.Errorf("%d statistics", n)
		}
	}
	e.wantBadQueries(base, key, map[string]string{
		url.QueryEscape("1,0.5"):            "query parameter weights_matrix: row 1 has 2 weights; a toeplitz weights row has one per distance 0..3 (4 categories)",
		url.QueryEscape("1,0\n0,1"):         "query parameter weights_matrix: 2 rows of weights for 4 categories",
		url.QueryEscape("1,x,0,0"):          "query parameter weights_matrix: row 1, column 2: \"x\" is not a finite number",
		url.QueryEscape("2,0.5,0.25,0.125"): "query parameter weights_matrix: row 1, column 1: the weight of distance 0 is 2",
	})
}
