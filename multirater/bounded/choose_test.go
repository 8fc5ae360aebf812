package bounded

import (
	"fmt"
	"testing"

	"concord/multirater"
)

// TestFitOrder: each likelihood's shared-dispersion candidate is fitted
// before its per-rater one, prior by prior, likelihood by likelihood.
func TestFitOrder(t *testing.T) {
	for _, c := range []struct {
		n, nd int
		want  string
	}{
		{8, 2, "[1 0 3 2 5 4 7 6]"},
		{4, 2, "[1 0 3 2]"},
		{2, 1, "[0 1]"}, // one sharing (Options.Bias or a set one): listed order
		{0, 2, "[]"},
	} {
		if got := fmt.Sprint(fitOrder(c.n, c.nd)); got != c.want {
			t.Errorf("fitOrder(%d, %d) = %s, want %s", c.n, c.nd, got, c.want)
		}
	}
}

// TestWarmFrom: in choose's fit order (fitOrder) the per-rater candidate
// of a likelihood under the first prior starts from the shared one, a
// candidate under a later prior from the same likelihood and sharing
// under an earlier prior, and the first of a likelihood starts cold.
func TestWarmFrom(t *testing.T) {
	var cands []multirater.ModelCandidate
	for _, kern := range []string{"text", "identity"} {
		for _, ln := range []string{Beta, Normal} {
			for _, dn := range []string{PerRater, Shared} {
				cands = append(cands, multirater.ModelCandidate{Likelihood: ln, Dispersions: dn, Kernel: kern})
			}
		}
	}
	fits := make([]*candidate, len(cands))
	got := make([]int, len(cands)) // the index of each candidate's warm start, -1 for none
	for _, k := range fitOrder(len(cands), 2) {
		got[k] = -1
		if w := warmFrom(cands, fits, &cands[k]); w != nil {
			for i, f := range fits {
				if f == w {
					got[k] = i
				}
			}
		}
		fits[k] = &candidate{}
	}
	// beta/per-rater/text from beta/shared/text, beta/shared/text cold, ...,
	// beta/per-rater/identity from beta/per-rater/text.
	if want := "[1 -1 3 -1 0 1 2 3]"; fmt.Sprint(got) != want {
		t.Errorf("warm starts %v, want %s", got, want)
	}
}
