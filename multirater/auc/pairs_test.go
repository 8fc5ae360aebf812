package auc

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"concord/multirater/kernel"
	"concord/multirater/mcmc/mcmctest"
)

// TestSamplePairs checks SamplePairs: every pair in row-major order up to
// the budget; beyond it a sorted sample without repeats of about the
// budget's size, every positive item with at least ceil(budget/(2 n+))
// negatives and every negative with at least ceil(budget/(2 n-))
// positives, the same for the same seed.
func TestSamplePairs(t *testing.T) {
	for _, tc := range []struct {
		np, nn, budget int
	}{
		{3, 4, 12}, {3, 4, -1}, {30, 70, 500}, {300, 700, 20000}, {5, 900, 200},
	} {
		t.Run(fmt.Sprintf("%dx%d/%d", tc.np, tc.nn, tc.budget), func(t *testing.T) {
			pos, neg := make([]int, tc.np), make([]int, tc.nn)
			// Interleaved item indices, as in a data set.
			for a := range pos {
				pos[a] = 2 * a
			}
			for b := range neg {
				neg[b] = 2*b + 1
				if b >= tc.np {
					neg[b] = tc.np + b
				}
			}
			pairs, all := SamplePairs(pos, neg, tc.budget, rand.New(rand.NewPCG(7, 1)))
			if full := tc.np * tc.nn; tc.budget < 0 || full <= tc.budget {
				if !all || len(pairs) != full {
					t.Fatalf("all %v, %d pairs, want every one of %d", all, len(pairs), full)
				}
				for k, p := range pairs {
					if p != [2]int{pos[k/tc.nn], neg[k%tc.nn]} {
						t.Fatalf("pair %d is %v, want row-major order", k, p)
					}
				}
				return
			}
			if all {
				t.Fatal("all pairs beyond the budget")
			}
			if len(pairs) > tc.budget+2*max(tc.np, tc.nn) || len(pairs) < tc.budget/2 {
				t.Errorf("%d pairs for a budget of %d", len(pairs), tc.budget)
			}
			kp := min(tc.nn, (tc.budget+2*tc.np-1)/(2*tc.np))
			kn := min(tc.np, (tc.budget+2*tc.nn-1)/(2*tc.nn))
			count := map[int]int{}
			isPos := map[int]bool{}
			for _, i := range pos {
				isPos[i] = true
			}
			for k, p := range pairs {
				if !isPos[p[0]] || isPos[p[1]] {
					t.Fatalf("pair %d %v is not (positive, negative)", k, p)
				}
				if k > 0 && !lessPair(pairs[k-1], p, pos, neg) {
					t.Fatalf("pairs %d and %d (%v, %v) out of order or repeated", k-1, k, pairs[k-1], p)
				}
				count[p[0]]++
				count[p[1]]++
			}
			for _, i := range pos {
				if count[i] < kp {
					t.Errorf("positive item %d in %d pairs, want at least %d", i, count[i], kp)
				}
			}
			for _, j := range neg {
				if count[j] < kn {
					t.Errorf("negative item %d in %d pairs, want at least %d", j, count[j], kn)
				}
			}
			again, _ := SamplePairs(pos, neg, tc.budget, rand.New(rand.NewPCG(7, 1)))
			if !slices.Equal(pairs, again) {
				t.Error("the same seed gave another sample")
			}
		})
	}
}

// lessPair orders pairs by the positive's, then the negative's place in
// pos and neg.
func lessPair(a, b [2]int, pos, neg []int) bool {
	ia, ib := slices.Index(pos, a[0]), slices.Index(pos, b[0])
	if ia != ib {
		return ia < ib
	}
	return slices.Index(neg, a[1]) < slices.Index(neg, b[1])
}

// TestSampledFitMatchesAllPairs fits 600 items (90,000 pairs) with every
// pair and with samples of 24,000 and 12,000 pairs (40 and 20 per item),
// linear and GP scores at a fixed gamma: the sampled fits' scores have
// Spearman correlation at least 0.99 (linear) and 0.98 (GP) with the
// complete fit's, and their training AUC is within 0.005 of it.
func TestSampledFitMatchesAllPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("six fits of 600 items")
	}
	x, y := synthetic(600, 7, 11)
	d := Data{X: x, Positive: y}
	for _, tc := range []struct {
		name string
		o    Options
		rho  float64
	}{
		{"linear", Options{Gamma: 30}, 0.99},
		{"gp", Options{Gamma: 30, Kernel: kernel.RBF{Gamma: 0.05}, Rank: 64}, 0.98},
	} {
		o := tc.o
		o.Pairs = -1
		full, err := Fit(context.Background(), d, o)
		if err != nil {
			t.Fatal(err)
		}
		if full.PairSites != full.Pairs {
			t.Fatalf("%s: %d sites of %d pairs with every pair asked for", tc.name, full.PairSites, full.Pairs)
		}
		for _, budget := range []int{24000, 12000} {
			o.Pairs = budget
			s, err := Fit(context.Background(), d, o)
			if err != nil {
				t.Fatal(err)
			}
			if s.PairSites >= s.Pairs || s.PairSites < budget/2 {
				t.Errorf("%s %d: %d sites of %d pairs", tc.name, budget, s.PairSites, s.Pairs)
			}
			rho := mcmctest.Spearman(means(full.Items), means(s.Items))
			t.Logf("%s, %d of %d pairs: Spearman %.4f, train AUC %.4f (all pairs %.4f)", tc.name, s.PairSites, s.Pairs, rho, s.TrainAUC, full.TrainAUC)
			if rho < tc.rho {
				t.Errorf("%s %d: Spearman %.4f with the complete fit, want >= %v", tc.name, budget, rho, tc.rho)
			}
			if math.Abs(s.TrainAUC-full.TrainAUC) > 0.005 {
				t.Errorf("%s %d: train AUC %.4f, complete fit %.4f", tc.name, budget, s.TrainAUC, full.TrainAUC)
			}
		}
	}
}

// TestLowRankPrior checks GP scores' pivoted prior (Options.Rank): with a
// rank of N it stops at lowRankTol of the trace and is close to the dense
// prior (scores within 5 %, log evidence within 0.05 nats, Spearman
// 0.999); with rank 40 of 300 items it
// leaves out a small part of the trace, keeps the scores' order
// (Spearman >= 0.99) and predicts the fitted items' own scores back.
func TestLowRankPrior(t *testing.T) {
	x, y := synthetic(300, 4, 5)
	d := Data{X: x, Positive: y}
	k := kernel.RBF{Gamma: 0.1}
	dense, err := Fit(context.Background(), d, Options{Gamma: 20, Kernel: k})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rank       int
		tol, rho   float64
		maxResidue float64
	}{
		{300, 0.05, 0.999, 1e-3},
		{40, math.Inf(1), 0.99, 0.05},
	} {
		lr, err := Fit(context.Background(), d, Options{Gamma: 20, Kernel: k, Rank: tc.rank})
		if err != nil {
			t.Fatal(err)
		}
		if lr.Rank == 0 || lr.Rank > tc.rank || lr.Residual > tc.maxResidue {
			t.Errorf("rank %d: a prior of rank %d leaving out %.3g of the trace", tc.rank, lr.Rank, lr.Residual)
		}
		if dz := math.Abs(lr.LogEvidence - dense.LogEvidence); dz > tc.tol {
			t.Errorf("rank %d: log Z %.8f, dense %.8f", tc.rank, lr.LogEvidence, dense.LogEvidence)
		}
		for i, s := range lr.Items {
			if dm := math.Abs(s.Mean - dense.Items[i].Mean); dm > tc.tol*(1+math.Abs(s.Mean)) {
				t.Fatalf("rank %d item %d: score %v, dense %v", tc.rank, i, s.Mean, dense.Items[i].Mean)
			}
		}
		if rho := mcmctest.Spearman(means(lr.Items), means(dense.Items)); rho < tc.rho {
			t.Errorf("rank %d: Spearman %.4f with the dense fit", tc.rank, rho)
		}
		for i, p := range lr.Predict(x) {
			if s := lr.Items[i]; math.Abs(p.Mean-s.Mean) > 1e-6*(1+math.Abs(s.Mean)) || p.SD < s.SD-1e-9 {
				t.Fatalf("rank %d item %d: predicted N(%v, %v^2), fitted N(%v, %v^2)", tc.rank, i, p.Mean, p.SD, s.Mean, s.SD)
			}
		}
	}
}

func means(s []Score) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = v.Mean
	}
	return out
}

// TestKernelChosenOnce: with candidate kernels and gamma by
// cross-validation the kernel is chosen once, by the evidence at the
// grid's median gamma (30), and the fit is then the fit with that kernel
// given: the same gamma, CV table and scores to the last bit.
func TestKernelChosenOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("two cross-validations of 35 fits")
	}
	x, y := synthetic(60, 3, 9)
	d := Data{X: x, Positive: y}
	cands := []kernel.Kernel{kernel.RBF{Gamma: 0.01}, kernel.RBF{Gamma: 0.3}, kernel.RBF{Gamma: 3}}
	res, err := Fit(context.Background(), d, Options{Kernels: cands, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.KernelGamma != 30 || len(res.KernelEvidence) != len(cands) {
		t.Fatalf("kernel gamma %v, evidence %+v", res.KernelGamma, res.KernelEvidence)
	}
	best := 0
	for i, k := range res.KernelEvidence {
		if k.LogEvidence > res.KernelEvidence[best].LogEvidence {
			best = i
		}
	}
	if res.Kernel != cands[best].String() {
		t.Fatalf("kernel %s, the largest evidence at gamma 30 is %s's", res.Kernel, cands[best])
	}
	one, err := Fit(context.Background(), d, Options{Kernel: cands[best], Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if one.Gamma != res.Gamma || !slices.Equal(one.CV, res.CV) || one.LogEvidence != res.LogEvidence {
		t.Fatalf("chosen once: gamma %v CV %v log Z %v; given: gamma %v CV %v log Z %v", res.Gamma, res.CV, res.LogEvidence, one.Gamma, one.CV, one.LogEvidence)
	}
	for i, s := range res.Items {
		if s != one.Items[i] {
			t.Fatalf("item %d: %+v, with the kernel given %+v", i, s, one.Items[i])
		}
	}
}
