package analysis

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"concord/annotations"
)

// boundedConst returns a bounded:0..1 dataset of n items rated by 3 raters,
// every rating value(i, r).
func boundedConst(n int, value func(i, r int) string) *annotations.Dataset {
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("bounded:0..1")}
	for i := 0; i < n; i++ {
		for r := 0; r < 3; r++ {
			ds.Labels = append(ds.Labels, annotations.Label{Item: fmt.Sprintf("i%d", i), Rater: fmt.Sprintf("r%d", r), Value: value(i, r)})
		}
	}
	return ds
}

// Issue 36 item 5: every rating 1 on bounded:0..1 gave the warped
// likelihood a "converged" consensus with rater dispersions in the
// millions (or 0.5 [0.025, 0.975] with 2e13). With no spread the
// dispersions cannot be learnt: the fit says so, naming --dispersion; with
// the dispersion fixed every likelihood puts the consensus at the top of
// the scale.
func TestBoundedWithoutSpread(t *testing.T) {
	ds := boundedConst(12, func(int, int) string { return "1" })
	for _, lik := range []string{"beta", "truncnorm", "warped"} {
		for _, eng := range []string{"ep", "laplace"} {
			_, err := Fit(context.Background(), ds, FitSpec{Model: ModelBounded, Engine: eng, Likelihood: lik, Seed: 1}, nil)
			if err == nil || annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(annotations.ErrorMessage(err), "all 36 ratings are 1: with no spread in the ratings the raters' dispersions cannot be learnt") || !strings.Contains(annotations.ErrorMessage(err), "--dispersion") {
				t.Errorf("%s/%s, dispersion learnt: %v; want EINVALID naming --dispersion", lik, eng, err)
			}
			res, err := Fit(context.Background(), ds, FitSpec{Model: ModelBounded, Engine: eng, Likelihood: lik, Dispersion: 10, Seed: 1}, nil)
			if err != nil {
				t.Errorf("%s/%s, dispersion 10: %v", lik, eng, err)
				continue
			}
			for _, it := range res.Items {
				// The squeezed rating is 0.995; a consensus at 0.85 or more
				// is at the top (the reported failure was 0.5).
				if it.Value == nil || !(it.Value.Mean >= 0.85) {
					t.Errorf("%s/%s, dispersion 10: item %s consensus %+v; want at the top of the scale", lik, eng, it.ID, it.Value)
					break
				}
			}
		}
	}
}

// Issue 36 item 10: --bounds censor --bias with every rating at a bound
// ended "EP did not converge in 200 sweeps" with no advice; when EP does
// not settle, the message names the settings to change, by flags that
// exist.
func TestBoundedCensorAdvice(t *testing.T) {
	ds := boundedConst(10, func(i, r int) string { return []string{"0", "1"}[(i*7+r*3)%2] })
	_, err := Fit(context.Background(), ds, FitSpec{Model: ModelBounded, Bounds: "censor", Bias: true, Seed: 1}, nil)
	if err == nil {
		t.Log("EP settled: a fit is an answer too")
		return
	}
	msg := annotations.ErrorMessage(err)
	for _, want := range []string{"--bounds squeeze", "--bias", "--engine laplace"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %s", msg, want)
		}
	}
}
