package analysis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater/mcmc/mcmctest"
)

// ladderDataset is n items shaped as the shared scale ladder makes them
// (../shared/tools/ladder/ladder.py, gen_data, in small): 8 covariates, a
// standardised latent value f = 0.8 x1 - 0.5 x2 + 0.6 sin(2 x3) + 0.4 x4 x5
// + noise, a text per item (20-60 tokens: Zipf(1.05) background words over
// vocab types, a quarter of them from one of 10 topic bins of 30 words
// following the item's rank in f), and 3-5 ordinal ratings on 1..5 per item
// from 20 raters (sd 0.3-1.2, bias sd 0.2, thresholds -1.2, -0.4, 0.4, 1.2).
// It returns the latent values too.
func ladderDataset(n, vocab int, seed uint64) (*annotations.Dataset, []float64) {
	rng := rand.New(rand.NewPCG(seed, 35))
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("ordinal:1,2,3,4,5")}
	f := make([]float64, n)
	xs := make([][8]float64, n)
	for i := range f {
		for k := range xs[i] {
			xs[i][k] = rng.NormFloat64()
		}
		x := xs[i]
		f[i] = 0.8*x[0] - 0.5*x[1] + 0.6*math.Sin(2*x[2]) + 0.4*x[3]*x[4] + 0.3*rng.NormFloat64()
	}
	mu, sd := 0.0, 0.0
	for _, v := range f {
		mu += v / float64(n)
	}
	for _, v := range f {
		sd += (v - mu) * (v - mu) / float64(n)
	}
	for i := range f {
		f[i] = (f[i] - mu) / math.Sqrt(sd)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return f[order[a]] < f[order[b]] })
	bin := make([]int, n)
	for r, i := range order {
		bin[i] = min(9, r*10/n)
	}
	zipf := make([]float64, vocab)
	acc := 0.0
	for k := range zipf {
		acc += 1 / math.Pow(float64(k+1), 1.05)
		zipf[k] = acc
	}
	const nr = 20
	raterSD, bias := make([]float64, nr), make([]float64, nr)
	for r := range raterSD {
		raterSD[r], bias[r] = 0.3+0.9*rng.Float64(), 0.2*rng.NormFloat64()
	}
	cuts := []float64{-1.2, -0.4, 0.4, 1.2}
	for i := range n {
		id := fmt.Sprintf("i%05d", i)
		toks := make([]string, 20+rng.IntN(41))
		for j := range toks {
			if rng.Float64() < 0.25 {
				toks[j] = fmt.Sprintf("t%dw%d", bin[i], rng.IntN(30))
			} else {
				toks[j] = fmt.Sprintf("w%d", sort.SearchFloat64s(zipf, rng.Float64()*acc))
			}
		}
		it := annotations.Item{ID: id, Text: strings.Join(toks, " "), Covariates: map[string]float64{}}
		for k, v := range xs[i] {
			it.Covariates[fmt.Sprintf("x%d", k+1)] = v
		}
		ds.Items = append(ds.Items, it)
		for _, r := range rng.Perm(nr)[:3+rng.IntN(3)] {
			z := f[i] + bias[r] + raterSD[r]*rng.NormFloat64()
			k := 1
			for _, c := range cuts {
				if z > c {
					k++
				}
			}
			ds.Labels = append(ds.Labels, annotations.Label{Item: id, Rater: fmt.Sprintf("r%02d", r), Value: strconv.Itoa(k)})
		}
	}
	return ds, f
}

// TestApproxMatchesExact: the default approximations of the prior (a
// truncated text basis with its diagonal correction; FITC on pivoted
// inducing items for a fixed rbf kernel) against the exact dense prior
// (rank -1), in ordinal EP fits with the rater parameters fixed at the
// generating ones (so that both are one EP run and differ only in the
// prior), on 600 ladder-shaped items: the consensus means' Spearman
// correlation and the accuracy against the truth's sign. Issue 35 asks for
// Spearman >= 0.99 and accuracy within 0.01 at 4,000 items
// (docs/scripts/approx, figures in docs/scaling.md); at 600 items an
// accuracy moves in steps of 1/600 and the bound here is 0.025. Measured
// (seed 1), with the default rank rule (defaultRank; before it the text
// rank was 299, 8.4 % left out, Spearman 0.9975, accuracy 0.9267): text,
// rank 367 of 3,064 terms (5.4 % of the trace left out), Spearman 0.9971,
// accuracy 0.9133 vs 0.9100 exact; rbf, 299 inducing items (4.0 % left
// out: the base rank already meets the 5 % share), Spearman 0.9949,
// accuracy 0.9267 vs 0.9233. The default fit's notes state the rule's
// choice.
func TestApproxMatchesExact(t *testing.T) {
	if testing.Short() {
		t.Skip("dense fits of 600 items")
	}
	ds, f := ladderDataset(600, 5000, 1)
	for _, tc := range []struct {
		kernel, note string
	}{
		{"text", "truncated"},
		{"rbf:gamma=0.125", "inducing"},
	} {
		t.Run(tc.kernel, func(t *testing.T) {
			var means [2][]float64
			var acc [2]float64
			var notes []string
			for k, rank := range []int{0, -1} {
				spec := FitSpec{Model: ModelOrdinal, Engine: "ep", Kernel: tc.kernel, Rank: rank, Seed: 1, Sigma: 0.75, Thresholds: []float64{-1.2, -0.4, 0.4, 1.2}}
				res, err := Fit(context.Background(), ds, spec, nil)
				if err != nil {
					t.Fatal(err)
				}
				hit := 0
				for i, it := range res.Items {
					if it.ID != ds.Items[i].ID {
						t.Fatalf("item %d is %s, want %s", i, it.ID, ds.Items[i].ID)
					}
					means[k] = append(means[k], it.Score.Mean)
					if (it.Score.Mean > 0) == (f[i] > 0) {
						hit++
					}
				}
				acc[k] = float64(hit) / float64(len(f))
				if rank == 0 {
					notes = res.Diagnostics.Notes
				}
			}
			rho := mcmctest.Spearman(means[0], means[1])
			t.Logf("%s: Spearman %.5f, accuracy %.4f (approximate) vs %.4f (exact); notes %q", tc.kernel, rho, acc[0], acc[1], notes)
			for _, want := range []string{tc.note, "default rank"} {
				if !slices.ContainsFunc(notes, func(s string) bool { return strings.Contains(s, want) }) {
					t.Errorf("the default fit's notes do not say %q: %q", want, notes)
				}
			}
			if !(rho >= 0.99) {
				t.Errorf("consensus Spearman %.5f with the exact fit, want >= 0.99", rho)
			}
			if d := math.Abs(acc[0] - acc[1]); d > 0.025 {
				t.Errorf("accuracy %.4f vs exact %.4f: differ by %.4f, want <= 0.025", acc[0], acc[1], d)
			}
		})
	}
}
