package ordinal

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/multirater"
	"concord/multirater/lik"
	"concord/multirater/mcmc/mcmctest"
)

// bed is a synthetic ordinal test bed: n items with a true latent score
// f ~ N(0, 1), each rated by k of the raters (chosen at random); rater l
// rates level k iff cut[k-1] < f + bias_l + N(0, sd_l^2) <= cut[k], or,
// when spam_l, a level drawn uniformly. With text, the items have d
// features x_i ~ N(0, I) and f = sqrt(text) x_i'w/|w| + sqrt(1 - text) e_i
// (the features explain a fraction text of f's variance); the data's prior
// is then the kernel (text/d) X X' + (1 - text) I, and the identity is
// the alternative.
type bed struct {
	name   string
	n, k   int
	sd     []float64
	spam   []bool
	bias   []float64
	text   float64 // fraction of f's variance the features explain (0: no features)
	random bool    // features present but unrelated to f (text 0 in f, kernel as if 0.7)
	seed   uint64
}

var bedCuts = []float64{-1.2, -0.4, 0.4, 1.2}

// make draws the bed's data and truth.
func (b bed) make() (*Data, []float64) {
	rng := rand.New(rand.NewPCG(b.seed, 0x626564))
	nl := len(b.sd)
	d := &Data{Levels: []string{"1", "2", "3", "4", "5"}}
	for l := 0; l < nl; l++ {
		d.RaterIDs = append(d.RaterIDs, fmt.Sprintf("r%d", l))
	}
	truth := make([]float64, b.n)
	const dim = 10
	var x *mat.Dense
	frac := b.text
	if b.text > 0 || b.random {
		x = mat.NewDense(b.n, dim, nil)
		for i := 0; i < b.n; i++ {
			for j := 0; j < dim; j++ {
				x.Set(i, j, rng.NormFloat64())
			}
		}
		if b.random {
			frac = 0.7
		}
	}
	w := make([]float64, dim)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	wn := math.Sqrt(mat.Dot(mat.NewVecDense(dim, w), mat.NewVecDense(dim, w)))
	for i := range truth {
		e := rng.NormFloat64()
		switch {
		case b.text > 0:
			s := mat.Dot(x.RowView(i), mat.NewVecDense(dim, w)) / wn
			truth[i] = math.Sqrt(b.text)*s + math.Sqrt(1-b.text)*e
		default:
			truth[i] = e
		}
		d.ItemIDs = append(d.ItemIDs, fmt.Sprintf("i%d", i))
		for _, l := range rng.Perm(nl)[:b.k] {
			lev := 0
			if b.spam != nil && b.spam[l] {
				lev = rng.IntN(len(d.Levels))
			} else {
				y := truth[i] + rng.NormFloat64()*b.sd[l]
				if b.bias != nil {
					y += b.bias[l]
				}
				for lev < len(bedCuts) && y > bedCuts[lev] {
					lev++
				}
			}
			d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: l, Level: lev})
		}
	}
	if x != nil {
		c := mat.NewSymDense(b.n, nil)
		c.SymOuterK(frac/dim, x)
		for i := 0; i < b.n; i++ {
			c.SetSym(i, i, c.At(i, i)+1-frac)
		}
		d.Cov, d.Kernel = c, "text"
		d.Alt = []Prior{{Kernel: "identity"}}
	}
	return d, truth
}

// raterMean is each item's mean level.
func raterMean(d *Data) []float64 { return mcmctest.MeanLevels(len(d.ItemIDs), d.Ratings) }

func alike(l int, sd float64) []float64 {
	out := make([]float64, l)
	for i := range out {
		out[i] = sd
	}
	return out
}

// testBeds are the synthetic beds: alike raters, one or two noisy raters,
// a spammer, biased raters, two labels per item, with and without a text
// signal.
func testBeds() []bed {
	noisy := alike(8, 0.5)
	noisy[0], noisy[1] = 3, 3
	one := alike(8, 0.5)
	one[0] = 2.5
	spam := make([]bool, 8)
	spam[0] = true
	bias := []float64{-0.6, -0.3, 0, 0, 0, 0, 0.3, 0.6}
	return []bed{
		{name: "alike_k3", n: 200, k: 3, sd: alike(8, 0.5), seed: 1},
		{name: "alike_k2", n: 200, k: 2, sd: alike(8, 0.5), seed: 2},
		{name: "alike_k5_30raters", n: 200, k: 5, sd: alike(30, 0.7), seed: 3},
		{name: "one_noisy_k3", n: 200, k: 3, sd: one, seed: 4},
		{name: "two_noisy_k3", n: 200, k: 3, sd: noisy, seed: 5},
		{name: "spammer_k3", n: 200, k: 3, sd: alike(8, 0.5), spam: spam, seed: 6},
		{name: "spammer_k2", n: 200, k: 2, sd: alike(8, 0.5), spam: spam, seed: 7},
		{name: "biased_k3", n: 200, k: 3, sd: alike(8, 0.5), bias: bias, seed: 8},
		{name: "text_alike_k2", n: 200, k: 2, sd: alike(8, 0.5), text: 0.7, seed: 9},
		{name: "text_spammer_k2", n: 200, k: 2, sd: alike(8, 0.5), spam: spam, text: 0.7, seed: 10},
		{name: "random_text_alike_k2", n: 200, k: 2, sd: alike(8, 0.5), random: true, seed: 11},
	}
}

// TestChoiceTestBed fits every candidate on every bed and checks that the
// chosen consensus correlates with the truth at least as well as the
// raters' mean, less 0.01 (Spearman and Pearson), and that the choice is
// the expected one where the answer is clear.
func TestChoiceTestBed(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 11 beds, 3 or 6 candidates each, and each candidate again (12 CPU s)")
	}
	// Where the answer is clear: alike raters share one noise model; raters
	// who differ only in noise (noisy raters, a spammer) have their own sd
	// on one set of thresholds; raters with their own biases have their own
	// thresholds.
	want := map[string]string{
		"alike_k3":          Shared,
		"alike_k5_30raters": Shared,
		"one_noisy_k3":      SharedThresholds,
		"two_noisy_k3":      SharedThresholds,
		"spammer_k3":        SharedThresholds,
		"spammer_k2":        SharedThresholds,
		"biased_k3":         PerRater,
	}
	for _, b := range testBeds() {
		d, truth := b.make()
		res, err := FitDeterministic(context.Background(), d, DetOptions{Noise: Auto, Priors: true, Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		mean := raterMean(d)
		line := fmt.Sprintf("%-22s mean %.4f/%.4f", b.name, mcmctest.Spearman(mean, truth), stat.Correlation(mean, truth, nil))
		for _, c := range res.Diagnostics.ModelCandidates {
			dd := *d
			if c.Kernel == "identity" {
				dd.Cov, dd.Kernel = nil, ""
			}
			dd.Alt = nil
			cr, err := FitDeterministic(context.Background(), &dd, DetOptions{Noise: c.Noise, Priors: true, Seed: 1})
			if err != nil {
				t.Fatalf("%s %s: %v", b.name, c.Name, err)
			}
			line += fmt.Sprintf(" | %s %.4f/%.4f score %.1f", c.Name, mcmctest.Spearman(scores(cr), truth), stat.Correlation(scores(cr), truth, nil), *c.Score)
		}
		rs, rp := mcmctest.Spearman(scores(res), truth), stat.Correlation(scores(res), truth, nil)
		ms, mp := mcmctest.Spearman(mean, truth), stat.Correlation(mean, truth, nil)
		chosen := res.Model.Noise + "/" + res.Model.Kernel
		t.Logf("%s | chosen %s %.4f/%.4f", line, chosen, rs, rp)
		if rs < ms-0.01 || rp < mp-0.01 {
			t.Errorf("%s: chosen %s r %.4f/%.4f (Spearman/Pearson) below the raters' mean's %.4f/%.4f less 0.01", b.name, chosen, rs, rp, ms, mp)
		}
		if w, ok := want[b.name]; ok && res.Model.Noise != w {
			t.Errorf("%s: chose %s, want %s", b.name, chosen, w)
		}
	}
}

// TestChoiceClear: on two seeded beds where the answer is clear the choice
// is shared for alike raters and one sd per rater when one rater is pure
// noise, and the chosen consensus is at least as close to the truth as
// the raters' mean (Spearman, less 0.01).
func TestChoiceClear(t *testing.T) {
	spam := make([]bool, 6)
	spam[0] = true
	for _, tc := range []struct {
		b    bed
		want string
	}{
		{bed{name: "alike", n: 120, k: 3, sd: alike(6, 0.5), seed: 21}, Shared},
		{bed{name: "spammer", n: 120, k: 3, sd: alike(6, 0.5), spam: spam, seed: 22}, SharedThresholds},
	} {
		d, truth := tc.b.make()
		res, err := FitDeterministic(context.Background(), d, DetOptions{Noise: Auto, Priors: true, Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", tc.b.name, err)
		}
		if res.Model.Noise != tc.want {
			t.Errorf("%s: chose %s, want %s (%s)", tc.b.name, res.Model.Noise, tc.want, res.Diagnostics.Choice)
		}
		if n := len(res.Diagnostics.ModelCandidates); n != 3 {
			t.Errorf("%s: %d candidates, want 3", tc.b.name, n)
		}
		for _, c := range res.Diagnostics.ModelCandidates {
			if c.Score == nil || c.LogEvidence == nil || !(c.Penalty > 0) {
				t.Errorf("%s: candidate %s without its score, evidence or penalty: %+v", tc.b.name, c.Name, c)
			}
		}
		rs, ms := mcmctest.Spearman(scores(res), truth), mcmctest.Spearman(raterMean(d), truth)
		if rs < ms-0.01 {
			t.Errorf("%s: Spearman r with the truth %.4f < the raters' mean's %.4f - 0.01", tc.b.name, rs, ms)
		}
	}
}

// TestTiedSiteGradients checks the SharedThresholds sites' gradients in the
// owner's parameters against central differences of Tilted and LogLik.
func TestTiedSiteGradients(t *testing.T) {
	nm := newNoiseModel(SharedThresholds, 3, 4)
	own := nm.owners[0]
	p := []float64{-0.7, math.Log(0.6), math.Log(0.9), math.Log(0.5), math.Log(1.3), math.Log(0.8)}
	own.SetParams(p)
	const h, tol = 1e-6, 1e-6
	for l := 0; l < 3; l++ {
		s := nm.site[l].(lik.LaplaceLearnable)
		for _, y := range []float64{0, 1, 3} {
			g := s.TiltedGradTo(make([]float64, len(p)), y, 0.3, 0.4)
			dlp, dd1, dd2 := make([]float64, len(p)), make([]float64, len(p)), make([]float64, len(p))
			s.LogLikGradTo(dlp, dd1, dd2, y, 0.2)
			for k := range p {
				num := func(fn func() float64) float64 {
					q := append([]float64(nil), p...)
					q[k] += h
					own.SetParams(q)
					up := fn()
					q[k] -= 2 * h
					own.SetParams(q)
					dn := fn()
					own.SetParams(p)
					return (up - dn) / (2 * h)
				}
				tz := num(func() float64 { z, _, _ := s.Tilted(y, 0.3, 0.4); return z })
				lp := num(func() float64 { v, _, _, _ := s.LogLik(y, 0.2); return v })
				d1 := num(func() float64 { _, v, _, _ := s.LogLik(y, 0.2); return v })
				d2 := num(func() float64 { _, _, v, _ := s.LogLik(y, 0.2); return v })
				for _, c := range []struct {
					what      string
					got, want float64
				}{{"tilted", g[k], tz}, {"lp", dlp[k], lp}, {"d1", dd1[k], d1}, {"d2", dd2[k], d2}} {
					if math.Abs(c.got-c.want) > tol*math.Max(1, math.Abs(c.want)) {
						t.Errorf("rater %d, y %v, param %d: %s gradient %.8g, central difference %.8g", l, y, k, c.what, c.got, c.want)
					}
				}
			}
		}
	}
}
