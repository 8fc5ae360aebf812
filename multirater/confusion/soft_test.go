package confusion

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"concord/multirater"
	"concord/multirater/mcmc"
)

// softData is a synthetic crowd (3 classes, 4 labels per item) with one
// more rater, a model, labelling every item right with probability .8 and
// giving the calibrated probability of its label: p = .8 spread as
// p_i = clamp(.8 + .15 u), u uniform in [-1, 1], and the label drawn right
// with probability p_i, so that P(right | p) = p.
func softData(seed uint64) (*Data, []int) {
	d, truth := crowd{N: 300, L: 12, K: 3, PerItem: 4, Acc: 0.7, Uniform: true, Seed: seed}.make()
	rng := rand.New(rand.NewPCG(seed, 11))
	m := len(d.RaterIDs)
	d.RaterIDs = append(d.RaterIDs, "model")
	d.Probs = make([]float64, len(d.Labels), len(d.Labels)+len(d.ItemIDs))
	for n, z := range truth {
		p := math.Min(0.99, math.Max(0.4, 0.8+0.15*(2*rng.Float64()-1)))
		y := z
		if rng.Float64() >= p {
			y = (z + 1 + rng.IntN(2)) % 3
		}
		d.Labels = append(d.Labels, multirater.Rating{Item: n, Rater: m, Level: y})
		d.Probs = append(d.Probs, p)
	}
	return d, truth
}

// Probabilities that are all 0 (none) or all 1 leave the fit exactly as
// without them.
func TestSoftHardIdentical(t *testing.T) {
	d, _ := softData(3)
	ctx := context.Background()
	hard := *d
	hard.Probs = nil
	want, err := Fit(ctx, &hard, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{0, 1} {
		c := *d
		c.Probs = make([]float64, len(d.Labels))
		for i := range c.Probs {
			c.Probs[i] = v
		}
		got, err := Fit(ctx, &c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got.Diagnostics.Seconds, want.Diagnostics.Seconds = 0, 0
		zeroSeconds(got)
		zeroSeconds(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("probabilities all %v: the fit differs from the labels-only fit", v)
		}
	}
}

func zeroSeconds(r *multirater.FitResult) {
	r.Diagnostics.Seconds = 0
	if r.Model.Confusion != nil {
		for i := range r.Model.Confusion.RaterModelCandidates {
			r.Model.Confusion.RaterModelCandidates[i].Seconds = 0
		}
	}
}

// The item update of a soft label is q(z = k) ∝ rho~_k sum_j e(j)
// pi~[k, j] (the doc comment's formula, written out here independently).
func TestSoftItemUpdate(t *testing.T) {
	d := &Data{ItemIDs: []string{"i"}, RaterIDs: []string{"h", "m"}, Classes: []string{"a", "b", "c"},
		Labels: []multirater.Rating{{Item: 0, Rater: 0, Level: 1}, {Item: 0, Rater: 1, Level: 2}}, Probs: []float64{0, 0.7}}
	md, err := newModel(d)
	if err != nil {
		t.Fatal(err)
	}
	k := 3
	logRho := []float64{math.Log(0.5), math.Log(0.3), math.Log(0.2)}
	pi := [2][3][3]float64{
		{{0.8, 0.1, 0.1}, {0.2, 0.7, 0.1}, {0.1, 0.2, 0.7}},
		{{0.6, 0.3, 0.1}, {0.1, 0.5, 0.4}, {0.25, 0.25, 0.5}},
	}
	logT := make([]float64, 2*k*k)
	for l := range 2 {
		for c := range k {
			for j := range k {
				logT[(l*k+j)*k+c] = math.Log(pi[l][c][j])
			}
		}
	}
	got := make([]float64, k)
	md.classPosteriorTo(got, 0, logRho, logT)
	e := []float64{0.15, 0.15, 0.7}
	want := make([]float64, k)
	sum := 0.0
	for c := range k {
		soft := 0.0
		for j := range k {
			soft += e[j] * pi[1][c][j]
		}
		want[c] = math.Exp(logRho[c]) * pi[0][c][1] * soft
		sum += want[c]
	}
	for c := range want {
		want[c] /= sum
		if math.Abs(got[c]-want[c]) > 1e-14 {
			t.Errorf("q(z = %d) = %.16g, want %.16g", c, got[c], want[c])
		}
	}
}

// With soft labels the variational iterations are coordinate ascent on
// the bound (Hierarchy None: no empirical Bayes between them), so the bound
// never decreases; and a soft label's expected counts sum to q(z_n).
func TestSoftBoundAscent(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		d, _ := softData(seed)
		md, err := newModel(d)
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Hierarchy: None, ClassPrior: 1}.WithDefaults()
		v := newVB(md, opts, 1)
		v.countsFromQ()
		prev := math.Inf(-1)
		for it := 0; it < 40; it++ {
			v.dirichlets()
			e := v.bound()
			if e < prev-1e-8*math.Abs(prev) {
				t.Fatalf("seed %d iteration %d: bound fell from %.10f to %.10f", seed, it, prev, e)
			}
			prev = e
			v.updateQ()
		}
		k := v.k
		for n := 0; n < md.n; n++ {
			for p := md.start[n]; p < md.start[n+1]; p++ {
				if md.prob[p] == 0 {
					continue
				}
				s := int(md.slot[p])
				for c := 0; c < k; c++ {
					sum := 0.0
					for j := 0; j < k; j++ {
						sum += v.softC[(s*k+c)*k+j]
					}
					if math.Abs(sum-v.q[n*k+c]) > 1e-12 {
						t.Fatalf("soft counts of item %d class %d sum to %v, q = %v", n, c, sum, v.q[n*k+c])
					}
				}
			}
		}
		v.stop()
	}
}

// A calibrated model rater's probabilities help: over 20 synthetic crowds
// the consensus with them is on average at least as accurate as with its
// labels alone, and both beat the crowd without the model rater (measured
// when written: soft .898, hard .895, none .817).
func TestSoftCalibratedHelps(t *testing.T) {
	const runs = 20
	var soft, hard, none float64
	for seed := uint64(1); seed <= runs; seed++ {
		d, truth := softData(seed)
		fit := func(d *Data) float64 {
			res, err := Fit(context.Background(), d, Options{RaterModel: RaterConfusion})
			if err != nil {
				t.Fatal(err)
			}
			return accuracy(res, d.Classes, truth) / runs
		}
		soft += fit(d)
		h := *d
		h.Probs = nil
		hard += fit(&h)
		h.Labels = h.Labels[:len(h.Labels)-len(truth)]
		none += fit(&h)
	}
	t.Logf("mean accuracy: soft %.4f, hard %.4f, without the model rater %.4f", soft, hard, none)
	if soft < hard || hard < none+0.03 {
		t.Errorf("mean accuracy soft %.4f, hard %.4f, none %.4f: want soft >= hard >= none + .03", soft, hard, none)
	}
}

// The one-coin model and the gibbs engine read labels only and say so.
func TestSoftNotes(t *testing.T) {
	d, _ := softData(1)
	for _, o := range []Options{{RaterModel: RaterOneCoin}, {Engine: multirater.EngineGibbs, Settings: mcmc.Settings{Chains: 2, Samples: 100, Burnin: 50, Seed: 1}}} {
		res, err := Fit(context.Background(), d, o)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, n := range res.Diagnostics.Notes {
			if strings.Contains(n, "label probabilities were not used") {
				found = true
			}
		}
		if !found {
			t.Errorf("%+v: no note on the unused probabilities: %q", o.RaterModel, res.Diagnostics.Notes)
		}
	}
}

// The variational iterations' progress runs from the iterations' share
// of the limit to the way down to the tolerance on a log scale.
func TestVBFraction(t *testing.T) {
	for _, c := range []struct {
		it, max                  int
		first, change, tol, want float64
	}{
		{16, 1000, 1e-1, 1e-1, 1e-6, 0.016},
		{16, 1000, 1e-1, math.Pow(10, -3.5), 1e-6, 0.5},
		{32, 1000, 1e-1, 1e-6, 1e-6, 0.99},
		{500, 1000, 1e-1, 1e-1, 1e-6, 0.5},
		{16, 1000, 0, 0, 1e-6, 0.016},
	} {
		if got := vbFraction(c.it, c.max, c.first, c.change, c.tol); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v: %v", c, got)
		}
	}
}

// The rater-model candidates' progress is the mean of their fractions,
// each named with its state.
func TestCandidateProgress(t *testing.T) {
	c := newCandidateProgress([]RaterModel{RaterOneCoin, RaterCommunities, RaterSpammer}, nil, time.Now())
	c.set(1, 0.5)
	c.set(0, 1)
	c.set(1, 0.25) // a restart never moves it back
	p := c.progress(time.Now())
	c.stop()
	if math.Abs(p.Fraction-0.5) > 1e-12 || p.Phase != "comparing rater models: one-coin done, communities 50%, spammer running" {
		t.Errorf("progress %+v", p)
	}
}
