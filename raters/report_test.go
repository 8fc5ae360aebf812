package raters

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"concord/internal/testutil"
)

// TestAnalyzeOrdinal checks that the report carries, under the JSON
// keys, the same numbers as the single estimators, with bootstrap intervals
// that are reproducible from the seed.
func TestAnalyzeOrdinal(t *testing.T) {
	tb := referenceTables(t)["sirt1_k1"]
	o := Options{Level: Ordinal, Bootstrap: 200, Seed: 7, RaterNames: tb.raters}
	rep, err := Analyze(tb.r, o)
	if err != nil {
		t.Fatal(err)
	}
	co := CoefOptions{}
	fk, _ := FleissKappa(tb.r, co)
	ac1, _ := GwetAC(tb.r, co)
	ac2, _ := GwetAC(tb.r, CoefOptions{Weights: QuadraticWeights})
	ord, _ := KrippendorffAlpha(tb.r, OrdinalMetric, co)
	icc, _ := ICC(tb.r, ICCOptions{})
	k01, _ := CohenKappa(tb.r, 0, 1, CoefOptions{Weights: LinearWeights})
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"fleiss", rep.FleissKappa.Value, fk.Value},
		{"fleiss se", rep.FleissKappa.SE, fk.SE},
		{"ac1", rep.GwetAC1.Value, ac1.Value},
		{"ac2", rep.GwetAC2.Value, ac2.Value},
		{"alpha ordinal", rep.KrippendorffAlpha["ordinal"].Value, ord.Value},
		{"ICC2", rep.ICC.ICC2.Value, icc.ICC2.Value},
		{"cohen 0-1 linear", rep.CohenKappa[0].Linear.Value, k01.Value},
	} {
		if !near(c.got, c.want, 1e-12) {
			t.Errorf("%s: report %v, estimator %v", c.name, c.got, c.want)
		}
	}
	for name, e := range map[string]*Estimate{"fleiss": rep.FleissKappa, "ac1": rep.GwetAC1, "pa": rep.PercentAgreement} {
		if e.CIMethod != "bootstrap" || !(e.CILow <= e.Value && e.Value <= e.CIHigh) {
			t.Errorf("%s: interval %v %v (%s) around %v", name, e.CILow, e.CIHigh, e.CIMethod, e.Value)
		}
	}
	if rep.ICC.ICC1.CIMethod != "F" {
		t.Errorf("ICC interval %q", rep.ICC.ICC1.CIMethod)
	}
	again, _ := Analyze(tb.r, o)
	if again.FleissKappa.CILow != rep.FleissKappa.CILow || again.CohenKappa[3].Quadratic.CIHigh != rep.CohenKappa[3].Quadratic.CIHigh {
		t.Error("bootstrap not reproducible from the seed")
	}
	o.Seed = 8
	other, _ := Analyze(tb.r, o)
	if other.FleissKappa.CILow == rep.FleissKappa.CILow {
		t.Error("bootstrap does not depend on the seed")
	}

	doc := testutil.JSONDocument(t, rep)
	for _, k := range []string{"krippendorff_alpha", "fleiss_kappa", "randolph_kappa", "cohen_kappa", "scott_pi", "gwet_ac1", "gwet_ac2", "brennan_prediger", "percent_agreement", "icc", "aggregators"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	alpha := doc["krippendorff_alpha"].(map[string]any)
	for _, k := range []string{"nominal", "ordinal", "interval", "ratio"} {
		e, ok := alpha[k].(map[string]any)
		if !ok {
			t.Errorf("krippendorff_alpha lacks %q", k)
			continue
		}
		for _, f := range []string{"value", "ci_low", "ci_high"} {
			if _, ok := e[f]; !ok {
				t.Errorf("alpha %s lacks %q", k, f)
			}
		}
	}
	pair := doc["cohen_kappa"].([]any)[0].(map[string]any)
	for _, k := range []string{"a", "b", "unweighted", "linear", "quadratic"} {
		if _, ok := pair[k]; !ok {
			t.Errorf("cohen_kappa entry lacks %q", k)
		}
	}
	iccDoc := doc["icc"].(map[string]any)
	for _, k := range []string{"ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"} {
		if _, ok := iccDoc[k]; !ok {
			t.Errorf("icc lacks %q", k)
		}
	}
	aggs := doc["aggregators"].(map[string]any)
	for _, k := range []string{"majority", "dawid_skene", "one_coin", "mean", "median"} {
		a, ok := aggs[k].(map[string]any)
		if !ok {
			t.Errorf("aggregators lacks %q", k)
			continue
		}
		if len(a["items"].([]any)) != tb.r.Items || len(a["raters"].([]any)) != tb.r.Raters {
			t.Errorf("aggregator %s: wrong number of items or raters", k)
		}
	}
	if b, _ := json.Marshal(rep); strings.Contains(string(b), "NaN") {
		t.Error("JSON holds NaN")
	}
	if len(rep.Profiles) != tb.r.Raters || len(rep.Profiles[0].Pairwise) != tb.r.Raters-1 {
		t.Errorf("profiles: %d", len(rep.Profiles))
	}
}

// TestAnalyzeLevels checks which coefficients each level reports.
func TestAnalyzeLevels(t *testing.T) {
	tabs := referenceTables(t)
	nom, err := Analyze(tabs["face4"].r, Options{Level: Nominal, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if nom.ICC != nil || nom.GwetAC2 != nil || nom.Weighted != nil || len(nom.KrippendorffAlpha) != 1 {
		t.Errorf("nominal report has ordinal coefficients")
	}
	if nom.FleissKappa.CIMethod != "t" || len(nom.FleissCategories) != 4 {
		t.Errorf("nominal: fleiss interval %q, %d categories", nom.FleissKappa.CIMethod, len(nom.FleissCategories))
	}
	if _, ok := nom.Aggregators["mean"]; ok {
		t.Errorf("nominal report has a mean")
	}
	bnd, err := Analyze(tabs["anger"].r, Options{Level: Interval, Bootstrap: 50})
	if err != nil {
		t.Fatal(err)
	}
	if bnd.FleissKappa != nil || bnd.ICC == nil || bnd.GwetAC2 == nil || len(bnd.KrippendorffAlpha) != 2 {
		t.Errorf("bounded report: wrong coefficients")
	}
	if bnd.CohenKappa[0].Unweighted != nil || bnd.CohenKappa[0].Quadratic == nil {
		t.Errorf("bounded Cohen's kappa: %+v", bnd.CohenKappa[0])
	}
	if _, ok := bnd.Aggregators["majority"]; ok {
		t.Errorf("bounded report has a majority vote")
	}
	if e := bnd.KrippendorffAlpha["interval"]; e.CIMethod != "bootstrap" || math.IsNaN(e.SE) {
		t.Errorf("bounded alpha: %+v", e)
	}
}

// selfCancelling is a context that cancels itself after its Err method has
// been called n times: a client that leaves in the middle of an analysis.
type selfCancelling struct {
	context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	n      int
}

func (c *selfCancelling) Err() error {
	c.mu.Lock()
	c.n--
	if c.n == 0 {
		c.cancel()
	}
	c.mu.Unlock()
	return c.Context.Err()
}

// TestAnalyzeContextStops: a cancelled analysis stops during the bootstrap
// (or the EM) and returns the context's error, no report.
func TestAnalyzeContextStops(t *testing.T) {
	tb := referenceTables(t)["sirt1_k1"]
	for _, calls := range []int{1, 3, 50, 500} {
		ctx, cancel := context.WithCancel(context.Background())
		sc := &selfCancelling{Context: ctx, cancel: cancel, n: calls}
		rep, err := AnalyzeContext(sc, tb.r, Options{Level: Ordinal, Bootstrap: 1_000_000, Seed: 7})
		cancel()
		if rep != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %d checks: report %v, error %v", calls, rep != nil, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := AnalyzeContext(ctx, tb.r, Options{Level: Nominal, Bootstrap: -1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before the start: %v", err)
	}
}

// TestAnalyzeOneItemNoBootstrapInterval: with one item, resampling items
// gives every replicate the same value; the bootstrap intervals are not
// available (null in JSON) with a note, not a zero-width interval (issue 19
// item 10).
func TestAnalyzeOneItemNoBootstrapInterval(t *testing.T) {
	r := mkTable(3, [][]float64{{0, 0, 1}})
	rep, err := Analyze(r, Options{Level: Ordinal, Bootstrap: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]*Estimate{"fleiss": rep.FleissKappa, "ac1": rep.GwetAC1, "percent": rep.PercentAgreement} {
		if !math.IsNaN(e.CILow) || !math.IsNaN(e.CIHigh) || e.CIMethod != "" {
			t.Errorf("%s: interval [%v, %v] (%q), want none", name, e.CILow, e.CIHigh, e.CIMethod)
		}
	}
	if a := rep.KrippendorffAlpha["nominal"]; !math.IsNaN(a.CILow) || a.CIMethod == "bootstrap" {
		t.Errorf("alpha: %+v", a)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "bootstrap intervals not available: 1 item with ratings, and resampling items needs at least 2") {
		t.Errorf("notes %q", rep.Notes)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "NaN") || !strings.Contains(string(b), `"ci_low":null`) {
		t.Errorf("JSON %.300s", b)
	}
	// Two items bootstrap as before.
	r2 := mkTable(3, [][]float64{{0, 0, 1}, {2, 2, 1}})
	rep2, err := Analyze(r2, Options{Level: Ordinal, Bootstrap: 100, Seed: 1})
	if err != nil || rep2.PercentAgreement.CIMethod != "bootstrap" {
		t.Errorf("two items: %v, %+v", err, rep2.PercentAgreement)
	}
}
