package analysis

import (
	"context"
	"strings"
	"testing"

	"concord/annotations"
)

// Label probabilities reach the confusion model (ConfusionData.Probs, in
// the labels' order) and model raters are flagged in every model's rater
// table; a model that reads labels only says that it did not use the
// probabilities.
func TestModelRatersInFits(t *testing.T) {
	csv := "item_id,rater_id,label,prob,is_model\n" +
		"1,a,1,,false\n1,b,1,,false\n1,m,1,0.9,true\n" +
		"2,a,0,,false\n2,b,0,,false\n2,m,1,0.6,true\n" +
		"3,a,0,,false\n3,b,1,,false\n3,m,0,0.8,true\n" +
		"4,a,1,,false\n4,b,1,,false\n4,m,1,0.7,true\n"
	p, err := annotations.ReadLabels(strings.NewReader(csv), annotations.ReadOptions{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := annotations.BuildDataset(annotations.MustParseScheme("binary:0,1,pos=1"), p, nil, annotations.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := ConfusionData(ds, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range ds.Labels {
		if data.Probs[i] != l.Prob {
			t.Fatalf("label %d: probability %v, want %v", i, data.Probs[i], l.Prob)
		}
	}
	for _, tc := range []struct {
		model   string
		unused  bool
		kernels string
	}{
		{ModelConfusion, false, "identity"},
		{ModelRobust, true, "identity"},
	} {
		res, err := Fit(context.Background(), ds, FitSpec{Model: tc.model, Kernel: tc.kernels, Seed: 1}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		for _, r := range res.Raters {
			if r.Model != (r.ID == "m") {
				t.Errorf("%s: rater %s model = %v", tc.model, r.ID, r.Model)
			}
		}
		unused := false
		for _, n := range res.Diagnostics.Notes {
			unused = unused || strings.Contains(n, "probabilities were not used")
		}
		if unused != tc.unused {
			t.Errorf("%s: note on unused probabilities %v, want %v (%q)", tc.model, unused, tc.unused, res.Diagnostics.Notes)
		}
	}
}
