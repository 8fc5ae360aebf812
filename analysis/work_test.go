package analysis

import (
	"strings"
	"testing"
	"time"

	"concord/annotations"
)

// The Gibbs work budget (issue 36 item 9): the confusion model at 64 chains
// x 1e6 samples x 1e6 burn-in on 850 labels is about 6 h of one core and
// is refused, naming the budget and the projected time; the defaults on
// the same data, and every deterministic engine, are within it.
func TestCheckWork(t *testing.T) {
	for _, tc := range []struct {
		name          string
		spec          FitSpec
		labels, items int
		budget        time.Duration
		refuse        string // "" when accepted
	}{
		{"issue 36: confusion gibbs 64 x 1e6 x 1e6", FitSpec{Model: ModelConfusion, Engine: "gibbs", Chains: 64, Samples: 1e6, Burnin: 1e6}, 850, 400, time.Hour,
			"projected to take about 6h13m0s of one core (64 chains x (1000000 burn-in + 1000000 samples x thin 1) = 128000000 sweeps over 850 labels per fit), over the budget of 1h0m0s (--max-work)"},
		{"confusion gibbs defaults", FitSpec{Model: ModelConfusion, Engine: "gibbs"}, 850, 400, time.Hour, ""},
		{"ordinal gibbs defaults, 20000 labels", FitSpec{Engine: "gibbs"}, 20000, 4000, time.Hour, ""},
		// issue 35: the shared ladder's labels-only Gibbs fits at 64,000
		// items (about 8 and 15 CPU minutes) are within the budget.
		{"classification gibbs defaults, 64000 items", FitSpec{Model: ModelClassification}, 256169, 64000, time.Hour, ""},
		{"ordinal gibbs defaults, 64000 items", FitSpec{Engine: "gibbs"}, 256169, 64000, time.Hour, ""},
		{"ordinal gibbs, rbf on 4000 items, 8 x 100000 draws", FitSpec{Kernel: "rbf:gamma=1", Engine: "gibbs", Chains: 8, Samples: 100000}, 20000, 4000, time.Hour, "over the budget of 1h0m0s"},
		// issue 35: a low-rank prior costs N r, not N^2, per sweep.
		{"ordinal gibbs defaults, text on 16000 items", FitSpec{Kernel: "text", Engine: "gibbs"}, 64011, 16000, time.Hour, ""},
		{"classification gibbs defaults, rbf on 16000 items", FitSpec{Model: ModelClassification, Kernel: "rbf:gamma=0.125"}, 64011, 16000, time.Hour, ""},
		{"ordinal gibbs, dense rbf on 16000 items", FitSpec{Kernel: "rbf:gamma=0.125", Engine: "gibbs", Rank: -1}, 64011, 16000, time.Hour, "over the budget of 1h0m0s"},
		{"no limit", FitSpec{Model: ModelConfusion, Engine: "gibbs", Chains: 64, Samples: 1e6, Burnin: 1e6}, 850, 400, 0, ""},
		{"ep has no Gibbs work", FitSpec{Engine: "ep"}, 1e6, 1e5, time.Second, ""},
		{"the ordinal default (ep) has none", FitSpec{}, 1e6, 1e5, time.Second, ""},
		{"vb has no Gibbs work", FitSpec{Model: ModelConfusion}, 1e6, 1e5, time.Second, ""},
	} {
		spec := tc.spec.WithDefaults()
		err := CheckWork(spec, tc.labels, tc.items, tc.budget, "--max-work")
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%s: %v; want accepted", tc.name, err)
		case tc.refuse != "" && (err == nil || annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(annotations.ErrorMessage(err), tc.refuse)):
			t.Errorf("%s: %v; want EINVALID containing %q", tc.name, err, tc.refuse)
		}
	}
}

// A cross-validation is folds fits on (folds-1)/folds of the labels: the
// Gibbs defaults' 12000 sweeps on 120000 labels are about 14 min per fit,
// 1.2 h for 5 folds, over one hour; one fit alone is within it. (Gibbs
// sampling: the ordinal default, EP, is not budgeted.)
func TestCheckEvalWork(t *testing.T) {
	spec := FitSpec{Engine: "gibbs"}.WithDefaults()
	if err := CheckWork(spec, 150000, 15000, time.Hour, "--max-work"); err != nil {
		t.Errorf("one fit: %v", err)
	}
	err := CheckEvalWork(spec, 5, 150000, 15000, time.Hour, "--max-work")
	if err == nil || !strings.Contains(annotations.ErrorMessage(err), "the Gibbs sampling of the 5 fits is projected to take about 1h12m0s of one core") {
		t.Errorf("5 folds: %v", err)
	}
}
