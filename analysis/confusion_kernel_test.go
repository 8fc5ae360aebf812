package analysis

import (
	"context"
	"math"
	"testing"

	"concord/annotations"
	"concord/internal/testutil"
)

// TestFitConfusionKernel: the confusion model with a covariate kernel
// (linear and rbf on the items' covariates a, b, c, the largest marking the
// class) fits every labelled item right, predicts the unlabelled item
// (covariates of the cat items) as cat from its features, records the
// kernel and its prior, and predicts new items from the result read back
// from JSON; the default kernel stays identity, whose unlabelled item gets
// the class proportions.
func TestFitConfusionKernel(t *testing.T) {
	ds := smallNominal()
	for _, kern := range []string{"linear", "rbf:gamma=1", ""} {
		spec := FitSpec{Model: ModelConfusion, Kernel: kern}
		res, err := Fit(context.Background(), ds, spec, nil)
		if err != nil {
			t.Fatalf("%q: %v", kern, err)
		}
		want := kern
		if kern == "" {
			want = "identity"
		}
		if res.Model.Kernel != want || (res.Model.Confusion.Probit != nil) != (kern != "") {
			t.Fatalf("%q: kernel %q, probit %v", kern, res.Model.Kernel, res.Model.Confusion.Probit)
		}
		for i, it := range res.Items[:12] {
			if w := []string{"cat", "dog", "fox"}[i%3]; it.Class != w {
				t.Errorf("%q: item %s class %s, want %s (%v)", kern, it.ID, it.Class, w, it.ClassProbs)
			}
		}
		last := res.Items[12]
		if kern != "" && (last.Class != "cat" || last.ClassProbs["cat"] < 0.5) {
			t.Errorf("%q: unlabelled item %v, want cat from its covariates", kern, last.ClassProbs)
		}
		back := testutil.JSONRoundTrip(t, res)
		pred, err := Predict(back, []annotations.Item{
			{ID: "new-dog", Covariates: map[string]float64{"a": 0.1, "b": 1, "c": 0.1}},
			{ID: "new-fox", Covariates: map[string]float64{"a": 0.1, "b": 0.1, "c": 1}},
		})
		if err != nil {
			t.Fatalf("%q: predict: %v", kern, err)
		}
		if kern == "" {
			// Identity: the class proportions, the same for both items.
			p, q := pred.Items[0].ClassProbs, pred.Items[1].ClassProbs
			for i, c := range res.Levels {
				if p[c] != q[c] || math.Abs(p[c]-res.ClassProportions[i].Mean) > 1e-5 {
					t.Errorf("identity: predictions %v and %v, class proportions %v", p, q, res.ClassProportions)
				}
			}
			continue
		}
		if pred.Items[0].Class != "dog" || pred.Items[1].Class != "fox" {
			t.Errorf("%q: predicted %s (%v) and %s (%v), want dog and fox", kern, pred.Items[0].Class, pred.Items[0].ClassProbs, pred.Items[1].Class, pred.Items[1].ClassProbs)
		}
	}
}
