package confusion

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// TestManyClassesNoNaN: synthetic crowds of 10 and 12 classes (a fifth of
// the raters spammers, four labels per item), whose small communities'
// rows once had their empirical-Bayes pseudo-counts driven to ~1e-18 and
// the fit to "variational update failed (NaN) at iteration 7" (issue 29,
// issue 36 item 7). Every hierarchy and number of communities fits,
// converges, keeps every pseudo-count at the floor or above, and is no less
// accurate than majority vote minus 0.02.
func TestManyClassesNoNaN(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds")
	}
	for _, c := range []struct {
		name string
		cr   crowd
		o    Options
	}{
		{"10 classes, communities chosen", crowd{N: 700, L: 44, K: 10, PerItem: 4, Acc: 0.7, Spam: 0.2, Seed: 1}, Options{}},
		{"12 classes, 8 communities", crowd{N: 700, L: 90, K: 12, PerItem: 4, Acc: 0.7, Spam: 0.2, Seed: 2}, Options{Communities: 8}},
		{"10 classes, pooled", crowd{N: 400, L: 30, K: 10, PerItem: 3, Acc: 0.6, Spam: 0.3, Seed: 3}, Options{Hierarchy: Pooled}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, truth := c.cr.make()
			res := fit(t, d, c.o)
			if !res.Diagnostics.Converged {
				t.Errorf("not converged: %s", res.Diagnostics.Verdict)
			}
			for _, it := range res.Items {
				for _, p := range it.ClassProbs {
					if math.IsNaN(p) {
						t.Fatalf("item %s: NaN class probability", it.ID)
					}
				}
			}
			for _, cm := range res.Model.Confusion.Communities {
				for _, row := range cm.Mean {
					for _, x := range row {
						if !(x > 0) {
							t.Errorf("community mean %v not positive", x)
						}
					}
				}
			}
			acc, mv := consensusAccuracy(res, d, truth), majorityAccuracy(d, truth)
			t.Logf("accuracy %.3f, majority vote %.3f, %s", acc, mv, res.Diagnostics.Verdict)
			if acc < mv-0.02 {
				t.Errorf("accuracy %.3f below majority vote %.3f", acc, mv)
			}
		})
	}
}

// fitMeanCases are mean expected logs t and totals s of empirical-Bayes
// row fits: a class no rater gave (-1e3), spread means, two classes nobody
// gave, and ten classes with one dominant.
var fitMeanCases = []struct {
	t []float64
	s float64
}{
	{[]float64{-0.2, -3, -1e3}, 4},
	{[]float64{-0.5, -1.2, -2.5, -2.5}, 10},
	{[]float64{-50, -50, -0.01}, 2},
	{[]float64{-0.05, -4, -4, -4, -4, -4, -4, -4, -4, -4}, 4},
}

// TestFitMeanFloor: the empirical-Bayes row fit with a class no rater
// gave (mean expected log -1e3) keeps that pseudo-count at the floor and
// the total at s, and otherwise meets Minka's condition psi(a_j) - t_j
// equal for every j.
func TestFitMeanFloor(t *testing.T) {
	for _, c := range fitMeanCases {
		a := make([]float64, len(c.t))
		for j := range a {
			a[j] = 1
		}
		fitMean(a, c.t, c.s, make([]float64, len(a)))
		sum := 0.0
		var nu []float64
		for j, x := range a {
			sum += x
			if x < minPseudoCount*(1-1e-9) {
				t.Errorf("t %v: a[%d] = %g below the floor", c.t, j, x)
			}
			if x > minPseudoCount*1.001 {
				nu = append(nu, c.t[j]-mathext.Digamma(x))
			}
		}
		if math.Abs(sum-c.s) > 1e-9*c.s {
			t.Errorf("t %v: total %g, want %g", c.t, sum, c.s)
		}
		for _, x := range nu[1:] {
			if math.Abs(x-nu[0]) > 1e-6 {
				t.Errorf("t %v: a %v: psi(a_j) - t_j not equal: %v", c.t, a, nu)
			}
		}
	}
}

// TestFitMeanWarmStart: fitMeanFrom started from a Lagrange multiplier
// near or far from the solution (above it, below it, where every a_j is at
// its floor) finds the cold start's a to 1e-9 and returns the same
// multiplier: the warm start of empirical Bayes
// changes the speed, not the answer.
func TestFitMeanWarmStart(t *testing.T) {
	for _, c := range fitMeanCases {
		cold := make([]float64, len(c.t))
		nu := fitMeanFrom(cold, c.t, c.s, math.NaN())
		for _, start := range []float64{nu, nu + 1e-3, nu - 0.5, nu + 2, nu - 20, nu + 1e3} {
			warm := make([]float64, len(c.t))
			got := fitMeanFrom(warm, c.t, c.s, start)
			for j := range warm {
				if math.Abs(warm[j]-cold[j]) > 1e-9*c.s {
					t.Errorf("t %v from nu %g: a %v, cold start %v", c.t, start, warm, cold)
					break
				}
			}
			if math.Abs(got-nu) > 1e-6*math.Max(1, math.Abs(nu)) {
				t.Errorf("t %v from nu %g: multiplier %g, cold start %g", c.t, start, got, nu)
			}
		}
	}
}

// TestIterationLimitAdvice: a fit stopped by its iteration limit says so
// and names the flag that raises it.
func TestIterationLimitAdvice(t *testing.T) {
	d, _ := crowd{N: 200, L: 20, K: 3, PerItem: 3, Acc: 0.7, Spam: 0.2, Seed: 5}.make()
	res, err := Fit(context.Background(), d, Options{Hierarchy: Pooled, MaxIter: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnostics.Converged || !strings.Contains(res.Diagnostics.Verdict, "--max-iter") {
		t.Errorf("verdict %q: want NOT converged naming --max-iter", res.Diagnostics.Verdict)
	}
}
