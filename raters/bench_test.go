package raters

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"concord/internal/testutil"
)

// simulated returns n items × r raters on a 5-level scale (simulated, for
// speed measurements only): each item has a true level, each rater gives
// it with probability 0.6, a neighbouring level with 0.3 and any level
// with 0.1. missing is the share of ratings left out.
func simulated(n, r int, missing float64, seed uint64) *Ratings {
	const k = 5
	rnd := rand.New(rand.NewPCG(seed, 1))
	t := NewRatings(n, r, k)
	for i := 0; i < n; i++ {
		truth := rnd.IntN(k)
		for j := 0; j < r; j++ {
			if rnd.Float64() < missing {
				continue
			}
			v := truth
			switch u := rnd.Float64(); {
			case u < 0.15:
				v = max(0, v-1)
			case u < 0.3:
				v = min(k-1, v+1)
			case u < 0.4:
				v = rnd.IntN(k)
			}
			t.Add(i, j, float64(v))
		}
	}
	return t
}

// BenchmarkAnalyze: every coefficient, the aggregators and the profiles of
// an ordinal table of 10 raters, without bootstrap and with a modest one.
func BenchmarkAnalyze(b *testing.B) {
	for _, c := range []struct {
		n, boot int
	}{{1000, -1}, {10000, -1}, {1000, 50}, {10000, 50}} {
		r := simulated(c.n, 10, 0, 1)
		name := fmt.Sprintf("items=%d/labels=%d/bootstrap=%d", c.n, c.n*10, max(c.boot, 0))
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Analyze(r, Options{Level: Ordinal, Bootstrap: c.boot, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCoefficients times each coefficient alone on 100,000 labels
// (10,000 items × 10 raters, 5 levels), and on the same with 20% missing.
func BenchmarkCoefficients(b *testing.B) {
	for _, missing := range []float64{0, 0.2} {
		r := simulated(10000, 10, missing, 2)
		o := CoefOptions{}
		q := CoefOptions{Weights: QuadraticWeights}
		for _, c := range []struct {
			name string
			f    func() error
		}{
			{"KrippendorffAlpha/nominal", func() error { _, err := KrippendorffAlpha(r, NominalMetric, o); return err }},
			{"KrippendorffAlpha/ordinal", func() error { _, err := KrippendorffAlpha(r, OrdinalMetric, o); return err }},
			{"KrippendorffAlpha/interval", func() error { _, err := KrippendorffAlpha(r, IntervalMetric, o); return err }},
			{"KrippendorffAlpha/ratio", func() error { _, err := KrippendorffAlpha(r, RatioMetric, o); return err }},
			{"FleissKappa", func() error { _, err := FleissKappa(r, o); return err }},
			{"FleissCategoryKappas", func() error { FleissCategoryKappas(r, o); return nil }},
			{"CongerKappa", func() error { _, err := CongerKappa(r, o); return err }},
			{"GwetAC1", func() error { _, err := GwetAC(r, o); return err }},
			{"GwetAC2/quadratic", func() error { _, err := GwetAC(r, q); return err }},
			{"BrennanPrediger", func() error { _, err := BrennanPrediger(r, o); return err }},
			{"PercentAgreement", func() error { _, err := PercentAgreement(r, o); return err }},
			{"PairwiseCohen/3weights", func() error {
				_, err := PairwiseCohen(r, []Weights{Unweighted, LinearWeights, QuadraticWeights}, o)
				return err
			}},
			{"ICC", func() error { _, err := ICC(r, ICCOptions{}); return err }},
			{"MajorityVote", func() error { MajorityVote(r); return nil }},
			{"DawidSkene", func() error {
				_, err := DawidSkene(LabelsOf(r), r.Items, r.Raters, r.K, DSOptions{Restarts: -1})
				return err
			}},
		} {
			b.Run(fmt.Sprintf("missing=%.0f%%/%s", missing*100, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := c.f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDawidSkeneAdultContent fits Dawid-Skene, one-coin Dawid-Skene
// (one run each), Wawa, GLAD and MACE (one run and crowd-kit's ten) to
// Ipeirotis et al.'s (2010) AdultContent2 labels (92,721 labels, 11,040 sites, 825 workers, 4
// classes, repeated labels kept) from the shared data folder; it is skipped
// when that folder is absent.
func BenchmarkDawidSkeneAdultContent(b *testing.B) {
	const path = "../../shared/data/ipeirotis2010_adultcontent2/ratings.csv"
	recs := testutil.SharedCSV(b, path)
	items, raters := map[string]int{}, map[string]int{}
	classes := map[string]int{"G": 0, "P": 1, "R": 2, "X": 3}
	var labels []Label
	for _, rec := range recs[1:] {
		i, ok := items[rec[0]]
		if !ok {
			i = len(items)
			items[rec[0]] = i
		}
		j, ok := raters[rec[1]]
		if !ok {
			j = len(raters)
			raters[rec[1]] = j
		}
		c, ok := classes[rec[2]]
		if !ok {
			b.Fatalf("label %q", rec[2])
		}
		labels = append(labels, Label{Item: i, Rater: j, Class: c})
	}
	n, r := len(items), len(raters)
	for _, c := range []struct {
		name string
		f    func() (*Consensus, error)
	}{
		{"full", func() (*Consensus, error) { return DawidSkene(labels, n, r, 4, DSOptions{Restarts: -1}) }},
		{"one-coin", func() (*Consensus, error) { return OneCoinDawidSkene(labels, n, r, 4, DSOptions{Restarts: -1}) }},
		{"wawa", func() (*Consensus, error) { return Wawa(labels, n, r, 4, WawaOptions{}) }},
		{"glad", func() (*Consensus, error) { return GLAD(labels, n, r, 4, GLADOptions{}) }},
		{"mace-1run", func() (*Consensus, error) { return MACE(labels, n, r, 4, MACEOptions{Restarts: -1}) }},
		{"mace-10runs", func() (*Consensus, error) { return MACE(labels, n, r, 4, MACEOptions{}) }},
	} {
		b.Run(fmt.Sprintf("labels=%d/%s", len(labels), c.name), func(b *testing.B) { benchAggregator(b, c.f) })
	}
}

// BenchmarkCrowdAggregators: Wawa, GLAD, MACE (10 runs, crowd-kit's
// default) and, for comparison in the same run, one-coin and full
// Dawid-Skene (5 runs, the default) on simulated tables (5 levels, 10
// raters, 30% missing) of a ladder of sizes up to 100,000 items (about
// 700,000 labels).
func BenchmarkCrowdAggregators(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000} {
		r := simulated(n, 10, 0.3, 5)
		labels := LabelsOf(r)
		for _, c := range []struct {
			name string
			f    func() (*Consensus, error)
		}{
			{"Wawa", func() (*Consensus, error) { return Wawa(labels, r.Items, r.Raters, r.K, WawaOptions{}) }},
			{"GLAD", func() (*Consensus, error) { return GLAD(labels, r.Items, r.Raters, r.K, GLADOptions{}) }},
			{"MACE", func() (*Consensus, error) { return MACE(labels, r.Items, r.Raters, r.K, MACEOptions{}) }},
			{"OneCoinDawidSkene", func() (*Consensus, error) {
				return OneCoinDawidSkene(labels, r.Items, r.Raters, r.K, DSOptions{})
			}},
			{"DawidSkene", func() (*Consensus, error) { return DawidSkene(labels, r.Items, r.Raters, r.K, DSOptions{}) }},
			{"ZeroBasedSkill", func() (*Consensus, error) { return ZeroBasedSkill(labels, r.Items, r.Raters, r.K, SkillOptions{}) }},
		} {
			b.Run(fmt.Sprintf("items=%d/labels=%d/%s", n, len(labels), c.name), func(b *testing.B) { benchAggregator(b, c.f) })
		}
	}
}

// sparseCrowd returns a crowd design (simulated, for speed measurements
// only): n items with per labels each from r raters chosen uniformly, 3
// classes, each rater right with a probability drawn from [0.5, 0.95].
func sparseCrowd(n, per, r int, seed uint64) *Ratings {
	rnd := rand.New(rand.NewPCG(seed, 3))
	acc := make([]float64, r)
	for j := range acc {
		acc[j] = 0.5 + 0.45*rnd.Float64()
	}
	t := NewRatings(n, r, 3)
	for i := 0; i < n; i++ {
		truth := rnd.IntN(3)
		for _, j := range rnd.Perm(r)[:per] {
			v := truth
			if rnd.Float64() > acc[j] {
				v = rnd.IntN(3)
			}
			t.Add(i, j, float64(v))
		}
	}
	return t
}

// crossedDesign returns crowd-kit's overlap design: 3 items, every one of r
// raters labels all three, rater p says 0 on item t when (p - t) % 3 == 0
// and 1 otherwise.
func crossedDesign(r int) *Ratings {
	t := NewRatings(3, r, 2)
	for p := 0; p < r; p++ {
		for i := 0; i < 3; i++ {
			v := 1.0
			if (p-i)%3 == 0 {
				v = 0
			}
			t.Add(i, p, v)
		}
	}
	return t
}

// ladderRung is a data set of a benchmark's ladder, made when run.
type ladderRung struct {
	name string
	r    func() *Ratings
}

// crowdLadder is the ladder of sizes (5 labels per item from 200 raters:
// 10k to 1M labels) and of rater counts (10,000 items x 5 labels from each
// of raters).
func crowdLadder(raters ...int) []ladderRung {
	var rungs []ladderRung
	for _, n := range []int{2_000, 20_000, 200_000} {
		rungs = append(rungs, ladderRung{fmt.Sprintf("size/items=%d/labels=%d/raters=200", n, 5*n), func() *Ratings { return sparseCrowd(n, 5, 200, 1) }})
	}
	for _, r := range raters {
		rungs = append(rungs, ladderRung{fmt.Sprintf("raters/items=10000/labels=50000/raters=%d", r), func() *Ratings { return sparseCrowd(10_000, 5, r, 2) }})
	}
	return rungs
}

// BenchmarkAgreementLadder: the whole agreement analysis (nominal, no
// bootstrap) on a ladder of sizes (5 labels per item from 200 raters:
// 10k to 1M labels) and of rater counts (10,000 items x 5 labels from 50 to
// 20,000 raters; the fully crossed 3 items x 300 to 30,000 raters). Time and
// memory should grow linearly in the labels, whatever the raters.
func BenchmarkAgreementLadder(b *testing.B) {
	rungs := crowdLadder(50, 500, 5_000, 20_000)
	for _, r := range []int{300, 3_000, 30_000} {
		rungs = append(rungs, ladderRung{fmt.Sprintf("crossed/items=3/labels=%d/raters=%d", 3*r, r), func() *Ratings { return crossedDesign(r) }})
	}
	for _, g := range rungs {
		b.Run(g.name, func(b *testing.B) {
			if testing.Short() && g.r().Len() > 100_000 {
				b.Skip("large rung: run without -short")
			}
			r := g.r()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Analyze(r, Options{Level: Nominal, Bootstrap: -1, Seed: 1, MaxItemRows: DefaultMaxItemRows}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAgreementBootstrap: the bootstrap's share on 50,000 labels
// (10,000 items x 5 labels, 200 raters), nominal and ordinal, 100
// replicates in parallel on GOMAXPROCS cores.
func BenchmarkAgreementBootstrap(b *testing.B) {
	r := sparseCrowd(10_000, 5, 200, 4)
	for _, l := range []Level{Nominal, Ordinal} {
		b.Run(l.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Analyze(r, Options{Level: l, Bootstrap: 100, Seed: 1, Only: OnlyCoefficients}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchAggregator times the aggregator f and reports its iterations (those
// of the last run).
func benchAggregator(b *testing.B, f func() (*Consensus, error)) {
	b.ReportAllocs()
	iters := 0
	for b.Loop() {
		res, err := f()
		if err != nil {
			b.Fatal(err)
		}
		if res.Fit != nil {
			iters = res.Fit.Iterations
		}
	}
	b.ReportMetric(float64(iters), "iterations")
}

// BenchmarkMMSR: M-MSR on a ladder of item counts (5 labels per item from
// 200 raters: 10k to 1M labels) and of rater counts (10,000 items x 5
// labels from 50 to 5,000 raters, where the co-labelling graph goes from
// complete to sparse). Time and memory should grow linearly in the labels
// and the co-labelling pairs, times the iterations. (At 20,000 raters most
// share items with fewer than 4 others, nothing is trimmed and the
// iterations run to their bound: see MMSROptions.MinPartners.)
func BenchmarkMMSR(b *testing.B) {
	for _, g := range crowdLadder(50, 500, 5_000) {
		b.Run(g.name, func(b *testing.B) {
			r := g.r()
			if testing.Short() && r.Len() > 100_000 {
				b.Skip("large rung: run without -short")
			}
			labels := LabelsOf(r)
			b.ReportAllocs()
			iters := 0
			for b.Loop() {
				c, err := MMSR(labels, r.Items, r.Raters, r.K, MMSROptions{Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				iters = c.Fit.Iterations
			}
			b.ReportMetric(float64(iters), "iterations")
		})
	}
}
