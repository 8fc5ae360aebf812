package analysis

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/annotations"
	"concord/multirater"
	"concord/textfeat"
)

// rteColumns is the RTE sample with the premise as the item text and the
// hypothesis kept as the items-file column "hypothesis".
func rteColumns(t testing.TB) *annotations.Dataset {
	return loadSample(t, "rte", "binary:0,1,pos=1")
}

// TestTextColumnKernel checks text:COLUMN terms: each text has its own
// featuriser, C is the sum of the texts' linear kernels (a word in one column
// is not the same feature as the word in another), the feature matrix covers
// both vocabularies, and a fit predicts new items from their columns after
// a JSON round trip exactly as in process.
func TestTextColumnKernel(t *testing.T) {
	ds := rteColumns(t)
	ids := ds.ItemIDs()[:120]
	spec := FitSpec{Model: "classification", Kernel: "text+text:hypothesis", Text: textfeat.Options{MinDF: 2, MaxFeatures: 30}}.WithDefaults()
	cov, ks, f, err := buildCovariance(context.Background(), ds, ids, spec)
	if err != nil {
		t.Fatal(err)
	}
	if cov.Kernel != "text+text:hypothesis" || len(f.text) != 2 {
		t.Fatalf("kernel %s, %d texts", cov.Kernel, len(f.text))
	}
	// Reference: the two texts featurised separately by textfeat.
	byID := map[string]annotations.Item{}
	for _, it := range ds.Items {
		byID[it.ID] = it
	}
	prem := make([]string, len(ids))
	hyp := make([]string, len(ids))
	for i, id := range ids {
		prem[i], hyp[i] = byID[id].Text, byID[id].Attrs["hypothesis"]
		if prem[i] == "" || hyp[i] == "" {
			t.Fatalf("item %s: premise %q hypothesis %q", id, prem[i], hyp[i])
		}
	}
	_, pv, err := textfeat.Fit(prem, spec.Text)
	if err != nil {
		t.Fatal(err)
	}
	_, hv, err := textfeat.Fit(hyp, spec.Text)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ids {
		for j := range ids {
			want := pv[i].Dot(pv[j]) + hv[i].Dot(hv[j])
			if i == j && want == 0 {
				want = 1
			}
			if got := cov.Cov.At(i, j); math.Abs(got-want) > 1e-12 {
				t.Fatalf("C[%d][%d] = %v, want %v", i, j, got, want)
			}
		}
	}
	// Words apart: one text's terms in the other column change nothing.
	g := &itemFeatures{n: 1, text: []textField{
		{column: "", docs: f.field("").vec.TransformAll([]string{""})},
		{column: "hypothesis", docs: f.field("hypothesis").vec.TransformAll([]string{prem[0]})},
	}}
	cross, _ := f.cross(ks, g)
	if want := hv[0].Dot(f.field("hypothesis").vec.Transform(prem[0])); math.Abs(cross.At(0, 0)-want) > 1e-12 {
		t.Errorf("cross covariance %v, want %v (the hypothesis kernel only)", cross.At(0, 0), want)
	}
	// The feature matrix: both vocabularies side by side.
	x := f.textFeatures(ks)
	if x == nil {
		t.Fatalf("no feature matrix with %d+%d terms for %d items", f.text[0].vec.Len(), f.text[1].vec.Len(), len(ids))
	}
	if _, p := x.Dims(); p < 60 {
		t.Errorf("feature matrix with %d columns, want 60 terms and a column per empty pair", p)
	}
	{
		var xxt mat.Dense
		xxt.Mul(x, x.T())
		for i := range ids {
			for j := range ids {
				if d := math.Abs(xxt.At(i, j) - cov.Cov.At(i, j)); d > 1e-12 {
					t.Fatalf("(X X')[%d,%d] = %v, C = %v", i, j, xxt.At(i, j), cov.Cov.At(i, j))
				}
			}
		}
	}

	// A subset (an evaluation's rater baseline): the sub-matrix of C.
	sub, sf, err := subsetCovariance(cov, ks, f, ids, ids[10:60])
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		for j := 0; j < 50; j++ {
			if sub.Cov.At(i, j) != cov.Cov.At(10+i, 10+j) {
				t.Fatalf("subset C[%d][%d] = %v, want %v", i, j, sub.Cov.At(i, j), cov.Cov.At(10+i, 10+j))
			}
		}
	}
	if len(sf.text) != 2 || len(sf.field("hypothesis").docs) != 50 || len(sub.Features.TextColumns) != 1 {
		t.Fatalf("subset features: %d texts", len(sf.text))
	}

	// Fit on the first 100 items, predict the other 20 from their columns.
	var train annotations.Dataset
	train.Scheme = ds.Scheme
	trainSet := map[string]bool{}
	for _, id := range ids[:100] {
		trainSet[id] = true
		train.Items = append(train.Items, byID[id])
	}
	for _, l := range ds.Labels {
		if trainSet[l.Item] {
			train.Labels = append(train.Labels, l)
		}
	}
	var test []annotations.Item
	for _, id := range ids[100:] {
		test = append(test, byID[id])
	}
	spec.Chains, spec.Samples, spec.Burnin, spec.KeepDraws, spec.Seed = 2, 60, 40, 50, 3
	data, err := ClassData(&train)
	if err != nil {
		t.Fatal(err)
	}
	tcov, tks, tf, err := buildCovariance(context.Background(), &train, data.ItemIDs, spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := fitClassificationCov(context.Background(), &train, data, tcov, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Features == nil || len(res.Features.TextColumns) != 1 || res.Features.TextColumns[0].Column != "hypothesis" ||
		len(res.Features.TextColumns[0].Terms) != 100 || len(res.Features.Terms) != 100 {
		t.Fatalf("features do not record both texts: %+v", res.Features.TextColumns)
	}
	_, back := checkJSONRoundTrip(t, "text+text:hypothesis", res, tks, tf, tcov, test)
	// New items without the column: predicted, with a note.
	bare := make([]annotations.Item, len(test))
	for i, it := range test {
		bare[i] = annotations.Item{ID: it.ID, Text: it.Text}
	}
	p, err := Predict(back, bare)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), `20 of 20 item(s) have no term of the fit's vocabulary in their column "hypothesis"`) {
		t.Errorf("notes %q", p.Notes)
	}
	// A damaged record of the column's bags of words is reported.
	bad := *back
	ft := *back.Features
	ft.TextColumns = []multirater.ColumnText{ft.TextColumns[0]}
	ft.TextColumns[0].Terms = ft.TextColumns[0].Terms[:99]
	bad.Features = &ft
	if _, err := NewPredictor(&bad); err == nil || !strings.Contains(err.Error(), "features.text_columns[0]") {
		t.Errorf("damaged column features: %v", err)
	}
}

// TestTextColumnErrors checks the messages for a column no item has.
func TestTextColumnErrors(t *testing.T) {
	ds := rteColumns(t)
	_, err := ItemCovariance(context.Background(), ds, ds.ItemIDs(), FitSpec{Kernel: "text:premise"}.WithDefaults())
	if err == nil || !strings.Contains(err.Error(), `column "premise"`) || !strings.Contains(err.Error(), "hypothesis") {
		t.Errorf("unknown column: %v", err)
	}
}
