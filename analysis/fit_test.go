package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater"

	"gonum.org/v1/gonum/stat"
)

// smallOrdinal is a small ordinal dataset: 12 items (one unrated, listed in
// the items with covariates), 3 raters, levels "low" < "mid" < "high".
func smallOrdinal() *annotations.Dataset {
	levels := []string{"low", "mid", "high"}
	return smallDataset("ordinal:low,mid,high", 12, func(i int) map[string]float64 {
		return map[string]float64{"x": float64(i) / 4, "z": math.Sin(float64(i))}
	}, func(i, r int) string {
		if i == 11 || (r == 2 && i%3 == 0) {
			return "" // item11 unrated
		}
		return levels[min(max((i+[]int{0, 1, -1}[r])/4, 0), 2)]
	})
}

// smallDataset is a dataset of the scheme with n items item00, item01, ...
// (covariates cov(i); nil cov: none), each labelled by raters rater0,
// rater1 and rater2 in turn with label(i, r) ("": no label).
func smallDataset(scheme string, n int, cov func(i int) map[string]float64, label func(i, r int) string) *annotations.Dataset {
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme(scheme)}
	for i := 0; i < n; i++ {
		it := annotations.Item{ID: fmt.Sprintf("item%02d", i)}
		if cov != nil {
			it.Covariates = cov(i)
		}
		ds.Items = append(ds.Items, it)
		for r := 0; r < 3; r++ {
			if v := label(i, r); v != "" {
				ds.Labels = append(ds.Labels, annotations.Label{Item: it.ID, Rater: fmt.Sprint("rater", r), Value: v})
			}
		}
	}
	return ds
}

var quick = FitSpec{Engine: multirater.EngineGibbs, Chains: 2, Samples: 200, Burnin: 100, Seed: 3}

func TestFitSpecDefaultsAndValidate(t *testing.T) {
	d := FitSpec{}.WithDefaults()
	if d.Model != "ordinal" || d.Kernel != "identity" || d.Identifiability != "weak" || d.Sampler != "default" ||
		d.Chains != 4 || d.Samples != 2000 || d.Burnin != 1000 || d.Thin != 1 || d.V != 1 || d.Lambda != 1 || d.SigmaB != 1 ||
		d.FlagThreshold != 0.05 || d.MaxRhat != 1.01 || d.MinESS != 400 || d.KeepDraws != 500 {
		t.Errorf("defaults %+v", d)
	}
	if s := (FitSpec{Identifiability: "strong"}).WithDefaults(); s.Lambda != 0.1 || s.SigmaB != 10 {
		t.Errorf("strong defaults %+v", s)
	}
	if s := (FitSpec{Burnin: -1}).WithDefaults(); s.Burnin != -1 {
		t.Errorf("burnin -1 became %d", s.Burnin)
	}
	if err := (FitSpec{}).Validate(); err != nil {
		t.Errorf("zero spec: %v", err)
	}
	for _, tc := range []struct {
		spec FitSpec
		msg  string
	}{
		{FitSpec{Model: "classification", Precisions: "sometimes"}, "unknown precisions"},
		{FitSpec{Precisions: "fixed"}, "precisions is not a setting of the ordinal model"},
		{FitSpec{Model: "regression"}, "unknown model"},
		{FitSpec{Kernel: "poly"}, "unknown kernel"},
		{FitSpec{Identifiability: "medium"}, "identifiability"},
		{FitSpec{Sampler: "nuts"}, "sampler"},
		{FitSpec{Chains: -1}, "chains"},
		{FitSpec{Samples: MaxSamples + 1}, "samples"},
		{FitSpec{V: -1}, "v = -1"},
		{FitSpec{MaxRhat: 0.9}, "max_rhat"},
		{FitSpec{FlagThreshold: 1}, "flag_threshold"},
		{FitSpec{SigmaB: math.Inf(1)}, "sigma_b"},
	} {
		err := tc.spec.Validate()
		if err == nil || annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: error %v, want EINVALID mentioning %q", tc.spec, err, tc.msg)
		}
	}
}

func TestFitSpecJSON(t *testing.T) {
	var s FitSpec
	if err := json.Unmarshal([]byte(`{"model":"ordinal","kernel":"rbf:gamma=0.5","identifiability":"both","ref_rater":"r1","sampler":"paper","chains":2,"samples":100,"burnin":50,"thin":2,"seed":7,"v":2,"lambda":3,"sigma_b":1.5,"flag_threshold":0.1,"max_rhat":1.05,"min_ess":100,"keep_draws":50}`), &s); err != nil {
		t.Fatal(err)
	}
	want := FitSpec{Model: "ordinal", Kernel: "rbf:gamma=0.5", Identifiability: "both", RefRater: "r1", Sampler: "paper", Chains: 2, Samples: 100, Burnin: 50, Thin: 2, Seed: 7, V: 2, Lambda: 3, SigmaB: 1.5, FlagThreshold: 0.1, MaxRhat: 1.05, MinESS: 100, KeepDraws: 50}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v", s)
	}
	b, err := json.Marshal(FitSpec{})
	if err != nil || string(b) != `{"seed":0}` {
		t.Errorf("zero spec encodes as %s (%v)", b, err)
	}
}

func TestFitOrdinal(t *testing.T) {
	ds := smallOrdinal()
	for _, kernel := range []string{"identity", "linear", "rbf:gamma=0.5+linear"} {
		spec := quick
		spec.Kernel = kernel
		res, err := Fit(context.Background(), ds, spec, nil)
		if err != nil {
			t.Fatalf("%s: %v", kernel, err)
		}
		if res.Schema != multirater.FitSchema || res.Model.Scheme != "ordinal:low,mid,high" || res.Model.Kernel != kernel || res.Model.Seed != 3 {
			t.Errorf("%s: model %+v", kernel, res.Model)
		}
		if fmt.Sprint(res.Levels) != "[low mid high]" {
			t.Errorf("levels %v", res.Levels)
		}
		if len(res.Items) != 12 || res.Items[11].ID != "item11" || res.Items[11].NLabels != 0 {
			t.Errorf("%s: items %d, last %+v", kernel, len(res.Items), res.Items[len(res.Items)-1])
		}
		if len(res.Raters) != 3 || res.Raters[0].ID != "rater0" {
			t.Errorf("%s: raters %+v", kernel, res.Raters)
		}
		if res.Items[0].Labels["rater0"] != "low" || res.Items[10].Labels["rater1"] != "high" {
			t.Errorf("%s: labels %v %v", kernel, res.Items[0].Labels, res.Items[10].Labels)
		}
		// Higher labels, higher consensus.
		if !(res.Items[10].Score.Mean > res.Items[0].Score.Mean) {
			t.Errorf("%s: scores %v and %v", kernel, res.Items[0].Score, res.Items[10].Score)
		}
	}
}

func TestFitErrors(t *testing.T) {
	ctx := context.Background()
	ds := smallOrdinal()
	nominal := *ds
	nominal.Scheme = annotations.MustParseScheme("nominal:low,mid,high")
	noCov := *ds
	noCov.Items = nil
	partial := *ds
	partial.Items = append([]annotations.Item(nil), ds.Items...)
	partial.Items[3] = annotations.Item{ID: partial.Items[3].ID, Covariates: map[string]float64{"x": 1}}
	text := *ds
	text.Items = append([]annotations.Item(nil), ds.Items...)
	text.Items[2] = annotations.Item{ID: text.Items[2].ID, Covariates: map[string]float64{"x": 1}, Attrs: map[string]string{"z": "n/a"}}
	for _, tc := range []struct {
		name string
		ds   *annotations.Dataset
		spec FitSpec
		msg  string
	}{
		{"nominal scheme", &nominal, quick, "needs an ordinal scheme"},
		{"classification of ordinal labels", ds, FitSpec{Model: "classification"}, "needs a nominal or binary scheme"},
		{"no covariates", &noCov, FitSpec{Kernel: "rbf"}, "needs numeric item covariates"},
		{"missing covariate", &partial, FitSpec{Kernel: "linear"}, `item "item03" has no value for covariate "z"`},
		{"covariate not a number", &text, FitSpec{Kernel: "linear"}, `item "item02" has "n/a" for covariate "z", which is not a number`},
		{"unknown reference", ds, FitSpec{Engine: multirater.EngineGibbs, Identifiability: "strong", RefRater: "nobody"}, "reference rater \"nobody\""},
		{"no labels", &annotations.Dataset{Scheme: ds.Scheme}, quick, "no labels"},
	} {
		_, err := Fit(ctx, tc.ds, tc.spec, nil)
		if err == nil || annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want EINVALID mentioning %q", tc.name, err, tc.msg)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Fit(cctx, ds, quick, nil); err != context.Canceled {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestFitProgress(t *testing.T) {
	var last multirater.Progress
	n := 0
	_, err := Fit(context.Background(), smallOrdinal(), quick, func(p multirater.Progress) {
		n++
		last = p
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 || last.Fraction != 1 || last.Phase != "done" {
		t.Errorf("%d reports, last %+v", n, last)
	}
}

// TestFitDeterministicEngines fits the small ordinal dataset by EP and
// Laplace with fixed and learnt kernels: the result records its engine,
// evidence and (for learnt kernels) the kernel with its learnt values, which
// the predictor reads back; the unrated item is predicted; settings of the
// other engine are refused.
func TestFitDeterministicEngines(t *testing.T) {
	ds := smallOrdinal()
	cases := []struct{ engine, kernel, want string }{
		{"ep", "identity", "identity"},
		{"laplace", "linear", "linear"},
		{"ep", "rbf", "rbf:gamma="},
		{"ep", "ard", "ard:gamma="},
		{"ep", "ard+linear", "ard:gamma="},
		{"laplace", "rbf", "rbf:gamma="},
	}
	for _, tc := range cases {
		res, err := Fit(context.Background(), ds, FitSpec{Engine: tc.engine, Kernel: tc.kernel, Seed: 2}, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.engine, tc.kernel, err)
		}
		if res.Model.Engine != tc.engine || res.Diagnostics.Engine == nil || res.Diagnostics.Engine.LogEvidence == nil || !res.Diagnostics.Converged {
			t.Errorf("%s %s: engine %q, diagnostics %+v", tc.engine, tc.kernel, res.Model.Engine, res.Diagnostics.Engine)
		}
		if !strings.HasPrefix(res.Model.Kernel, tc.want) {
			t.Errorf("%s %s: kernel recorded as %q", tc.engine, tc.kernel, res.Model.Kernel)
		}
		if strings.HasPrefix(tc.kernel, "ard") && len(res.Model.Learnt.Relevance) != 2 {
			t.Errorf("%s: relevance %v", tc.kernel, res.Model.Learnt.Relevance)
		}
		if !(res.Items[10].Score.Mean > res.Items[0].Score.Mean) || res.Items[11].NLabels != 0 {
			t.Errorf("%s %s: scores %v, %v", tc.engine, tc.kernel, res.Items[0].Score, res.Items[10].Score)
		}
		if tc.kernel != "identity" {
			// The predictor rebuilds the learnt kernel from the document; a
			// new item at the last item's covariates gets its score.
			p, err := NewPredictor(res)
			if err != nil {
				t.Fatalf("%s %s: predictor: %v", tc.engine, tc.kernel, err)
			}
			got, err := p.Predict([]annotations.Item{{ID: "new", Covariates: ds.Items[10].Covariates}})
			if err != nil {
				t.Fatal(err)
			}
			if s := got.Items[0].Score; math.Abs(s.Mean-res.Items[10].Score.Mean) > 3*res.Items[10].Score.SD/math.Sqrt(10) {
				t.Errorf("%s %s: prediction at item10's covariates %v, item10 %v", tc.engine, tc.kernel, s, res.Items[10].Score)
			}
			// An EP fit's grade distributions come from the EP evidence
			// ratio, and the notes say so; a Laplace fit's do not.
			ratio := false
			for _, n := range got.Notes {
				ratio = ratio || strings.Contains(n, "EP evidence ratio")
			}
			if ratio != (tc.engine == "ep") {
				t.Errorf("%s %s: notes %q", tc.engine, tc.kernel, got.Notes)
			}
		}
	}
	for _, bad := range []FitSpec{
		{Engine: "ep", Identifiability: "strong"},
		{Engine: "gibbs", Sigma: 1},
		{Model: "classification", Kernel: "ard"},
		{Engine: "ep", Model: "classification"},
		{Engine: "mcmc"},
	} {
		if _, err := Fit(context.Background(), ds, bad, nil); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestFitStandardize: with Standardize the recorded covariates are the
// z-scores (mean 0, sd 1 per column) with the means and sds saved, and a new
// item given in raw units is predicted like the fitted item with the same
// covariates.
func TestFitStandardize(t *testing.T) {
	ds := smallOrdinal()
	for i := range ds.Items {
		ds.Items[i].Covariates["x"] = 1000 + 100*ds.Items[i].Covariates["x"] // raw units far from 0
	}
	res, err := Fit(context.Background(), ds, FitSpec{Engine: "ep", Kernel: "rbf:gamma=0.5", Standardize: true, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Features.Standardize
	if st == nil || len(st.Means) != 2 || math.Abs(st.Means[0]-1137.5) > 1e-9 {
		t.Fatalf("standardisation %+v (covariates %v)", st, res.Features.Covariates)
	}
	for j := range st.Means {
		col := make([]float64, len(res.Features.X))
		for i, row := range res.Features.X {
			col[i] = row[j]
		}
		m, sd := stat.MeanStdDev(col, nil)
		if math.Abs(m) > 1e-12 || math.Abs(sd-1) > 1e-12 {
			t.Errorf("column %d: mean %v sd %v", j, m, sd)
		}
	}
	p, err := NewPredictor(res)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Predict([]annotations.Item{{ID: "new", Covariates: ds.Items[10].Covariates}})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Items[0].Score; math.Abs(s.Mean-res.Items[10].Score.Mean) > 0.2*res.Items[10].Score.SD {
		t.Errorf("prediction in raw units %v, fitted item %v", s, res.Items[10].Score)
	}
}

// TestFitGibbsLearntKernel: a Gibbs fit with kernel terms to learn (rbf
// without gamma, ard) learns them by EP first and samples with the learnt
// kernel, which the result records and the predictor reads back.
func TestFitGibbsLearntKernel(t *testing.T) {
	ds := smallOrdinal()
	for _, k := range []string{"rbf", "ard+linear"} {
		spec := quick
		spec.Kernel = k
		res, err := Fit(context.Background(), ds, spec, nil)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if res.Model.Engine != multirater.EngineGibbs || res.Model.Learnt == nil || !strings.Contains(res.Model.Learnt.Source, "before sampling") ||
			!strings.Contains(res.Model.Kernel, "gamma=") {
			t.Errorf("%s: model %+v, learnt %+v", k, res.Model, res.Model.Learnt)
		}
		if _, err := NewPredictor(res); err != nil {
			t.Errorf("%s: predictor: %v", k, err)
		}
	}
	spec := quick
	spec.Model, spec.Kernel = ModelClassification, "ard"
	if err := spec.Validate(); err == nil {
		t.Error("classification with a kernel to learn accepted")
	}
}

// TestVaguePriors: the common vague Gamma(0.001, 0.001) prior and the ends
// of the documented prior ranges fit both sampled models (a prior draw of a
// precision under v = 0.001 is often 0: every chain panicked, issue 19
// item 6), and values outside the ranges are rejected up front with the
// field named (lambda = 1e308 ran a whole fit, then failed writing NaN,
// item 7).
func TestVaguePriors(t *testing.T) {
	for _, ds := range []*annotations.Dataset{smallOrdinal(), smallNominal()} {
		model := DefaultModel(ds.Scheme)
		for _, pr := range []struct{ v, lambda, sigmaB float64 }{
			{0.001, 0.001, 0}, {MinPrior, MaxPrior, 0}, {MaxPrior, MinPrior, 0}, {0, 0, MinSigmaB}, {0, 0, MaxSigmaB},
		} {
			spec := quick
			spec.Model, spec.V, spec.Lambda = model, pr.v, pr.lambda
			if model == ModelOrdinal {
				spec.SigmaB = pr.sigmaB
			}
			res, err := Fit(context.Background(), ds, spec, nil)
			if err != nil {
				t.Fatalf("%s with v %g, lambda %g, sigma_b %g: %v", model, pr.v, pr.lambda, pr.sigmaB, err)
			}
			if _, err := json.Marshal(res); err != nil {
				t.Errorf("%s with v %g, lambda %g: the result does not encode: %v", model, pr.v, pr.lambda, err)
			}
		}
	}
	for _, bad := range []FitSpec{{V: 1e-7}, {Lambda: 1e308}, {Lambda: 1e-300}, {V: 2e6}, {SigmaB: 1e-4}, {SigmaB: 1e4}} {
		err := bad.Validate()
		if annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(annotations.ErrorMessage(err), "expected a number from") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestRobustIdentityOneLabelNote: a robust fit with the identity kernel
// and one label per item says that it cannot single out wrong labels, and
// names the covariates a kernel could use; a covariate kernel, or a second
// label on an item, silences it.
func TestRobustIdentityOneLabelNote(t *testing.T) {
	ds := pimaDataset(t, "pima_tr.csv", "p")
	has := func(res *multirater.FitResult) bool {
		for _, n := range res.Diagnostics.Notes {
			if strings.HasPrefix(n, "the kernel is identity and no item has more than one label") && strings.Contains(n, "bmi") {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		kernel string
		second bool
		want   bool
	}{{"identity", false, true}, {"rbf:gamma=0.1", false, false}, {"identity", true, false}} {
		d := *ds
		if tc.second {
			d.Labels = append(append([]annotations.Label(nil), ds.Labels...), annotations.Label{Item: ds.Labels[0].Item, Rater: "second", Value: ds.Labels[0].Value})
		}
		res, err := Fit(context.Background(), &d, FitSpec{Model: ModelRobust, Kernel: tc.kernel, Standardize: true, Epsilon: new(float64), Sigma: 1, Seed: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if has(res) != tc.want {
			t.Errorf("kernel %s, second label %v: note %v, want %v (notes %q)", tc.kernel, tc.second, has(res), tc.want, res.Diagnostics.Notes)
		}
	}
}
