package analysis

import (
	"context"
	"strings"
	"testing"
)

// TestAUCGammaFolds: gamma_folds sets the folds of gamma's
// cross-validation (recorded in the result, and the held-out AUCs are
// those of other folds than the default 5), and is refused outside 2 to
// 20 and for another model, each with a message that names it.
func TestAUCGammaFolds(t *testing.T) {
	for _, tc := range []struct {
		spec FitSpec
		want string
	}{
		{FitSpec{Model: ModelAUC, GammaFolds: 3}, ""},
		{FitSpec{Model: ModelAUC, GammaFolds: 1}, "gamma_folds = 1"},
		{FitSpec{Model: ModelAUC, GammaFolds: 21}, "from 2 to 20"},
		{FitSpec{Model: ModelOrdinal, GammaFolds: 3}, "gamma_folds is not a setting of the ordinal model"},
	} {
		err := tc.spec.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: error %v, want %q", tc.spec, err, tc.want)
		}
	}
	ds := pimaDataset(t, "pima_tr.csv", "p")
	fit := func(folds int) []float64 {
		t.Helper()
		res, err := Fit(context.Background(), ds, FitSpec{Model: ModelAUC, Standardize: true, Seed: 1, GammaFolds: folds}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := folds
		if want == 0 {
			want = AUCGammaFolds
		}
		if !res.AUC.GammaByCV || res.AUC.Folds != want || len(res.AUC.CV) != len(AUCGammaGrid()) {
			t.Fatalf("gamma_folds %d: by cv %v, %d folds, %d candidates", folds, res.AUC.GammaByCV, res.AUC.Folds, len(res.AUC.CV))
		}
		auc := make([]float64, len(res.AUC.CV))
		for i, c := range res.AUC.CV {
			auc[i] = c.AUC
		}
		return auc
	}
	three, five := fit(3), fit(0)
	same := true
	for i := range three {
		same = same && three[i] == five[i]
	}
	if same {
		t.Errorf("3-fold and 5-fold held-out AUCs are the same: %v", three)
	}
}
