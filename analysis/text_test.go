package analysis

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/annotations"
	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/textfeat"
)

// asapSample loads testdata/asap7_*.csv: 157 essays of ASAP set 7 with both
// raters' scores (0..12) and the resolved score (their sum) as a numeric
// column.
func asapSample(t testing.TB) *annotations.Dataset {
	return loadSample(t, "asap7", "ordinal:0..12")
}

// loadSample loads testdata/<name>_ratings.csv with the items file
// testdata/<name>_items.csv under the scheme, joining textColumns into the
// item text (none: the column "text").
func loadSample(t testing.TB, name, scheme string, textColumns ...string) *annotations.Dataset {
	t.Helper()
	s := annotations.MustParseScheme(scheme)
	ld, err := annotations.LoadFiles("testdata/"+name+"_ratings.csv", annotations.LoadOptions{
		ItemsPath:   "testdata/" + name + "_items.csv",
		Scheme:      &s,
		ReadOptions: annotations.ReadOptions{TextColumns: textColumns},
	})
	if err != nil {
		t.Fatal(err)
	}
	return ld.Dataset
}

// checkJSONRoundTrip predicts items from res in process (from the fit's
// own features and covariance) and from res after a JSON round trip, checks
// that the two are the same. It returns the latter and the round-tripped
// result.
func checkJSONRoundTrip(t *testing.T, name string, res *multirater.FitResult, ks kernel.Spec, feats *itemFeatures, cov *Covariance, items []annotations.Item) (*Predictions, *multirater.FitResult) {
	t.Helper()
	want := predictIn(t, newPredictor, res, ks, feats, cov, items)
	back := testutil.JSONRoundTrip(t, res)
	got, err := Predict(back, items)
	if err != nil {
		t.Fatal(err)
	}
	checkSamePredictions(t, name, got, want)
	return got, back
}

// predictIn predicts items in process from res and the fit's own kernel
// spec, features and covariance, by the predictor that newP makes
// (newPredictor, or evalPredictor for a fold).
func predictIn(t *testing.T, newP func(*multirater.FitResult, kernel.Spec, *itemFeatures, *gp.Gram) (*Predictor, error),
	res *multirater.FitResult, ks kernel.Spec, feats *itemFeatures, cov *Covariance, items []annotations.Item) *Predictions {
	t.Helper()
	pr, err := newP(res, ks, feats, cov.Cov)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pr.Predict(items)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestVectorsFromCountsMatchTransform checks that the bags of words a fit
// result keeps give back the featuriser's vectors bit for bit, for every
// weighting.
func TestVectorsFromCountsMatchTransform(t *testing.T) {
	ds := asapSample(t)
	texts := make([]string, len(ds.Items))
	for i, it := range ds.Items {
		texts[i] = it.Text
	}
	texts = append(texts, "", "the and of", "zyzzyva quux") // empty, stop words, unseen
	for _, o := range []textfeat.Options{{}, {Weighting: textfeat.Binary}, {Weighting: textfeat.TFIDF, Stem: true, Bigrams: true, MinDF: 2}} {
		vec, _, err := textfeat.Fit(texts[:100], o)
		if err != nil {
			t.Fatal(err)
		}
		want := vec.TransformAll(texts)
		got := vectorsFromCounts(vec, termCounts(vec, texts))
		for i := range want {
			if !reflect.DeepEqual(want[i].Idx, got[i].Idx) || !reflect.DeepEqual(want[i].Val, got[i].Val) {
				if len(want[i].Idx) == 0 && len(got[i].Idx) == 0 {
					continue
				}
				t.Fatalf("%+v: document %d: from counts %v, Transform %v", o, i, got[i], want[i])
			}
		}
	}
}

// TestCovariateSafety checks that a numeric items column (ASAP's
// resolved_score, the sum of the two raters' scores) is never read unless
// named.
func TestCovariateSafety(t *testing.T) {
	ds := asapSample(t)
	if _, ok := ds.Items[0].Covariates["resolved_score"]; !ok {
		t.Fatal("the sample's resolved_score is not a covariate; the test needs it to be one")
	}
	ids := ds.ItemIDs()
	if k := DefaultKernel(ds); k != "text" {
		t.Errorf("default kernel %q, want text", k)
	}
	cov, err := ItemCovariance(context.Background(), ds, ids, FitSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if cov.Kernel != "text" || cov.Features == nil || len(cov.Features.Covariates) != 0 || cov.Features.X != nil || len(cov.Features.Terms) != len(ids) {
		t.Errorf("default covariance: kernel %s, features %+v", cov.Kernel, cov.Features.Covariates)
	}
	// Text with covariates: the columns must be named.
	_, err = ItemCovariance(context.Background(), ds, ids, FitSpec{Kernel: "text+linear"})
	if err == nil || annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(err.Error(), "name the covariate columns") || !strings.Contains(err.Error(), "resolved_score") {
		t.Errorf("text+linear without covariates: %v", err)
	}
	for _, tc := range []struct {
		spec FitSpec
		msg  string
	}{
		{FitSpec{Kernel: "text", Covariates: "resolved_score"}, "reads no numeric covariates"},
		{FitSpec{Kernel: "text+linear", Covariates: "none"}, "reads numeric covariates"},
		{FitSpec{Kernel: "text+linear", Covariates: "length"}, "not a numeric item column"},
		{FitSpec{Kernel: "identity", Text: textfeat.Options{MinDF: 2}}, "no text term"},
		{FitSpec{Kernel: "text", Text: textfeat.Options{MinDF: -1}}, "text featuriser"},
		{FitSpec{Covariates: "a,,b"}, "empty column name"},
	} {
		_, err := ItemCovariance(context.Background(), ds, ids, tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: %v, want an error mentioning %q", tc.spec, err, tc.msg)
		}
	}
	// Named, it is used, and the note warns that it follows the labels.
	cov, err = ItemCovariance(context.Background(), ds, ids, FitSpec{Kernel: "text+linear", Covariates: "resolved_score"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cov.Features.Covariates, []string{"resolved_score"}) || len(cov.Features.X) != len(ids) {
		t.Errorf("named covariate: %v", cov.Features.Covariates)
	}
	if !strings.Contains(strings.Join(cov.Notes, "\n"), `covariate "resolved_score" has correlation`) {
		t.Errorf("no leak warning in %q", cov.Notes)
	}
}

// TestEmptyDocuments checks the zero-row rule: an item without any
// vocabulary term gets prior variance 1 and no covariance, in the fit and
// when predicted.
func TestEmptyDocuments(t *testing.T) {
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("ordinal:1..3")}
	texts := []string{"red apples and green pears", "green pears and ripe plums", "", "the of and", "ripe plums, red apples"}
	for i, s := range texts {
		id := string(rune('a' + i))
		ds.Items = append(ds.Items, annotations.Item{ID: id, Text: s})
		ds.Labels = append(ds.Labels, annotations.Label{Item: id, Rater: "r1", Value: "2"})
	}
	cov, ks, f, err := buildCovariance(context.Background(), ds, ds.ItemIDs(), FitSpec{})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 3} {
		for j := range texts {
			want := 0.0
			if i == j {
				want = 1
			}
			// The weight-space form reproduces C to rounding.
			if math.Abs(cov.Cov.At(i, j)-want) > 1e-12 {
				t.Errorf("C[%d][%d] = %v, want %v", i, j, cov.Cov.At(i, j), want)
			}
		}
	}
	if math.Abs(cov.Cov.At(0, 1)) == 0 || math.Abs(cov.Cov.At(0, 0)-1) > 1e-12 {
		t.Errorf("documents sharing words: C = %v", cov.Cov.RawSymmetric().Data[:5])
	}
	if !strings.Contains(strings.Join(cov.Notes, "\n"), "2 item(s) have zero prior variance") {
		t.Errorf("notes %q", cov.Notes)
	}
	g := &itemFeatures{n: 2, text: []textField{{docs: f.field("").vec.TransformAll([]string{"", "green apples"})}}}
	cross, prior := f.cross(ks, g)
	if prior[0] != 1 || math.Abs(prior[1]-1) > 1e-12 {
		t.Errorf("prior variances %v", prior)
	}
	for j := range texts {
		if cross.At(0, j) != 0 {
			t.Errorf("empty new document: covariance %v with item %d", cross.At(0, j), j)
		}
	}
}

var quickText = FitSpec{Engine: multirater.EngineGibbs, Chains: 2, Samples: 300, Burnin: 200, Seed: 5, KeepDraws: 200}

// splitSample returns the ASAP sample with every fourth essay's labels
// removed from the training data: the training dataset (those essays left
// out altogether) and the held-out items.
func splitSample(t testing.TB) (train *annotations.Dataset, test []annotations.Item) {
	all := asapSample(t)
	held := map[string]bool{}
	train = &annotations.Dataset{Scheme: all.Scheme}
	for i, it := range all.Items {
		if i%4 == 3 {
			held[it.ID] = true
			test = append(test, it)
			continue
		}
		train.Items = append(train.Items, it)
	}
	for _, l := range all.Labels {
		if !held[l.Item] {
			train.Labels = append(train.Labels, l)
		}
	}
	return train, test
}

// TestHeldOutPrediction predicts each of 157 real essays from a fit of the
// ordinal model with the text kernel to the other folds' essays (4 folds):
// the predicted consensus of the held-out essays, from their texts alone,
// must follow the raters' mean score. (Bag-of-words features of so few
// essays predict grades only roughly, r about 0.35; a predictor that
// ignored the texts, such as the identity kernel, which cannot tell new
// essays apart, gives r = 0 on average, and with 157 essays r > 0.2 has a
// chance below 1% under it.)
func TestHeldOutPrediction(t *testing.T) {
	all := asapSample(t)
	mean := map[string]float64{}
	for _, l := range all.Labels {
		k, _ := all.Scheme.Index(l.Value)
		mean[l.Item] += float64(k) / 2
	}
	var pred, obs []float64
	for f := 0; f < 4; f++ {
		train := &annotations.Dataset{Scheme: all.Scheme}
		var test []annotations.Item
		held := map[string]bool{}
		for i, it := range all.Items {
			if i%4 == f {
				held[it.ID] = true
				test = append(test, it)
			} else {
				train.Items = append(train.Items, it)
			}
		}
		for _, l := range all.Labels {
			if !held[l.Item] {
				train.Labels = append(train.Labels, l)
			}
		}
		res, err := Fit(context.Background(), train, quickText, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Model.Kernel != "text" || res.Features == nil || len(res.Features.Terms) != len(train.Items) {
			t.Fatalf("fit kernel %s, features %v", res.Model.Kernel, res.Features != nil)
		}
		p, err := Predict(res, test)
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range p.Items {
			if it.ID != test[i].ID || it.NLabels != 0 || it.Score == nil || it.Grade == "" || len(it.RaterGradeProbs) != 2 {
				t.Fatalf("prediction %d: %+v", i, it)
			}
			sum := 0.0
			for _, v := range it.GradeProbs {
				sum += v
			}
			if math.Abs(sum-1) > 1e-4 {
				t.Errorf("%s: grade probabilities sum to %v", it.ID, sum)
			}
			pred = append(pred, it.Score.Mean)
			obs = append(obs, mean[it.ID])
		}
	}
	r := stat.Correlation(pred, obs, nil)
	t.Logf("correlation of predicted scores with the raters' mean on %d held-out essays: %.3f", len(obs), r)
	if r < 0.2 {
		t.Errorf("held-out correlation %.3f, want > 0.2", r)
	}
}

// TestPredictRoundTrip checks that predictions from a fit result read back
// from its JSON equal those made in the fitting process, for the ordinal
// model with three kernels (one summing text and a named covariate) and for
// the classification model.
func TestPredictRoundTrip(t *testing.T) {
	train, test := splitSample(t)
	for _, kern := range []string{"text", "text-rbf:gamma=0.5+linear", "identity"} {
		spec := quickText
		spec.Samples, spec.Burnin, spec.KeepDraws = 60, 40, 50
		spec.Kernel = kern
		if strings.Contains(kern, "linear") {
			spec.Covariates = "resolved_score" // a leak, but fine for a round trip
		}
		data, err := OrdinalData(train)
		if err != nil {
			t.Fatal(err)
		}
		cov, ks, feats, err := buildCovariance(context.Background(), train, data.ItemIDs, spec.WithDefaults())
		if err != nil {
			t.Fatal(err)
		}
		res, err := fitOrdinalCov(context.Background(), train, data, cov, spec.WithDefaults(), nil)
		if err != nil {
			t.Fatal(err)
		}
		checkJSONRoundTrip(t, kern, res, ks, feats, cov, test)
	}
	// The classification model, on RTE text pairs.
	rte := rteSample(t)
	var rtrain annotations.Dataset
	var rtest []annotations.Item
	rtrain.Scheme = rte.Scheme
	for i, it := range rte.Items {
		if i%5 == 0 {
			rtest = append(rtest, it)
		} else {
			rtrain.Items = append(rtrain.Items, it)
		}
	}
	for _, l := range rte.Labels {
		for _, it := range rtrain.Items {
			if it.ID == l.Item {
				rtrain.Labels = append(rtrain.Labels, l)
				break
			}
		}
	}
	spec := FitSpec{Model: "classification", Chains: 2, Samples: 60, Burnin: 40, KeepDraws: 50, Seed: 4}.WithDefaults()
	data, err := ClassData(&rtrain)
	if err != nil {
		t.Fatal(err)
	}
	cov, ks, feats, err := buildCovariance(context.Background(), &rtrain, data.ItemIDs, spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := fitClassificationCov(context.Background(), &rtrain, data, cov, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := checkJSONRoundTrip(t, "classification", res, ks, feats, cov, rtest)
	if got.Model != "classification" || len(got.Items) != len(rtest) || got.Items[0].Class == "" || len(got.Items[0].ClassProbs) != 2 {
		t.Fatalf("classification predictions %+v", got.Items[0])
	}
}

func checkSamePredictions(t *testing.T, kern string, got, want *Predictions) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	for i := range want.Items {
		if !reflect.DeepEqual(got.Items[i], want.Items[i]) {
			t.Errorf("%s: item %d after JSON %+v, in process %+v", kern, i, got.Items[i], want.Items[i])
			break
		}
	}
	t.Errorf("%s: predictions differ after the JSON round trip (notes %q, %q)", kern, got.Notes, want.Notes)
}

func TestPredictErrors(t *testing.T) {
	train, test := splitSample(t)
	spec := quickText
	spec.Samples, spec.Burnin, spec.KeepDraws = 30, 20, 20
	spec.Kernel, spec.Covariates = "text+linear", "resolved_score"
	res, err := Fit(context.Background(), train, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPredictor(res)
	if err != nil {
		t.Fatal(err)
	}
	noCov := annotations.Item{ID: "new", Text: test[0].Text}
	for _, tc := range []struct {
		items []annotations.Item
		msg   string
	}{
		{nil, "no items"},
		{[]annotations.Item{noCov}, `no value for covariate "resolved_score"`},
		{[]annotations.Item{test[0], test[0]}, "given twice"},
		{[]annotations.Item{{ID: ""}}, "item 1"},
	} {
		if _, err := p.Predict(tc.items); err == nil || annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%d items: %v, want EINVALID mentioning %q", len(tc.items), err, tc.msg)
		}
	}
	extra := test[0]
	extra.Covariates = map[string]float64{"resolved_score": 10, "words": 120}
	out, err := p.Predict([]annotations.Item{extra})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(out.Notes, "\n"), "words are not used") {
		t.Errorf("notes %q", out.Notes)
	}
	// Older results without features cannot predict with a covariate kernel.
	old := *res
	old.Features = nil
	if _, err := NewPredictor(&old); err == nil || !strings.Contains(err.Error(), "does not record its items' features") {
		t.Errorf("result without features: %v", err)
	}
	bad := *res
	ft := *res.Features
	ft.Terms = append([]multirater.TermCounts(nil), ft.Terms...)
	ft.Terms[3] = multirater.TermCounts{I: []int32{5, 2}, N: []int32{1, 1}}
	bad.Features = &ft
	if _, err := NewPredictor(&bad); err == nil || !strings.Contains(err.Error(), "features.terms[3]") {
		t.Errorf("malformed bag of words: %v", err)
	}
}

// TestTextFeatureFactor checks that, for the text kernel with fewer terms
// than items, the covariance carries its feature matrix X (C = X X', a unit
// column for each empty document); multirater's TestGramFeatures checks the
// factor computed from it.
func TestTextFeatureFactor(t *testing.T) {
	ds := asapSample(t)
	ds.Items[3].Text = "" // an empty document: zero variance replaced by 1
	spec := FitSpec{Kernel: "text", Text: textfeat.Options{MaxFeatures: 60}}
	ks, err := kernel.ParseSpec("text")
	if err != nil {
		t.Fatal(err)
	}
	f, err := trainFeatures(ds, ds.ItemIDs(), ks, spec)
	if err != nil {
		t.Fatal(err)
	}
	c, zero := f.gram(ks)
	x := f.textFeatures(ks)
	if zero != 1 || x == nil {
		t.Fatalf("zero = %d, features %v", zero, x != nil)
	}
	if n, p := x.Dims(); n != len(ds.Items) || p != 61 {
		t.Fatalf("features %d×%d, want %d×61", n, p, len(ds.Items))
	}
	var xxt mat.Dense
	xxt.Mul(x, x.T())
	for i := 0; i < f.n; i++ {
		for j := 0; j < f.n; j++ {
			if d := math.Abs(xxt.At(i, j) - c.At(i, j)); d > 1e-12 {
				t.Fatalf("(X X')[%d,%d] = %v, C = %v", i, j, xxt.At(i, j), c.At(i, j))
			}
		}
	}
	// More terms than items: no feature matrix.
	spec.Text.MaxFeatures = 0
	f, err = trainFeatures(ds, ds.ItemIDs(), ks, spec)
	if err != nil {
		t.Fatal(err)
	}
	if f.field("").vec.Len() < f.n {
		t.Fatalf("vocabulary %d < %d items", f.field("").vec.Len(), f.n)
	}
	if f.textFeatures(ks) != nil {
		t.Error("feature matrix with more terms than items")
	}
	// Sums and other text kernels: none.
	ks2, _ := kernel.ParseSpec("text+rbf:gamma=1")
	if (&itemFeatures{n: 10, text: f.text}).textFeatures(ks2) != nil {
		t.Error("feature matrix for a kernel sum")
	}
}
