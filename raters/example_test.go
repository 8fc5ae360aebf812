package raters_test

import (
	"fmt"
	"math"

	"concord/raters"
)

// krippendorff2011 is the reliability data of Krippendorff (2011,
// "Computing Krippendorff's Alpha-Reliability"): 12 units rated 1..5 by 4
// observers, with missing values (0 marks a missing rating here).
func krippendorff2011() *raters.Ratings {
	data := [][]int{
		{1, 1, 0, 1}, {2, 2, 3, 2}, {3, 3, 3, 3}, {3, 3, 3, 3}, {2, 2, 2, 2}, {1, 2, 3, 4},
		{4, 4, 4, 4}, {1, 1, 2, 1}, {2, 2, 2, 2}, {0, 5, 5, 5}, {0, 0, 1, 1}, {0, 0, 3, 0},
	}
	r := raters.NewRatings(len(data), 4, 5) // categories 0..4 with values 1..5
	for i, row := range data {
		for j, v := range row {
			if v > 0 {
				r.Add(i, j, float64(v-1))
			}
		}
	}
	return r
}

func ExampleKrippendorffAlpha() {
	r := krippendorff2011()
	for _, m := range []raters.Metric{raters.NominalMetric, raters.OrdinalMetric, raters.IntervalMetric, raters.RatioMetric} {
		e, err := raters.KrippendorffAlpha(r, m, raters.CoefOptions{})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-8s alpha = %.3f\n", m, e.Value)
	}
	// Output:
	// nominal  alpha = 0.743
	// ordinal  alpha = 0.815
	// interval alpha = 0.849
	// ratio    alpha = 0.797
}

func ExampleKrippendorffAlphaWeights() {
	e, _ := raters.KrippendorffAlphaWeights(krippendorff2011(), raters.CoefOptions{Weights: raters.QuadraticWeights})
	fmt.Printf("alpha = %.4f (se %.4f)\n", e.Value, e.SE)
	// Output: alpha = 0.8491 (se 0.1291)
}

func ExampleCoincidences() {
	o := raters.Coincidences(krippendorff2011())
	fmt.Printf("o_11 = %.3f, o_12 = %.3f, n_1 = %.0f\n", o.At(0, 0), o.At(0, 1), o.At(0, 0)+o.At(0, 1)+o.At(0, 2)+o.At(0, 3)+o.At(0, 4))
	// Output: o_11 = 7.000, o_12 = 1.333, n_1 = 9
}

func ExampleFleissKappa() {
	e, _ := raters.FleissKappa(krippendorff2011(), raters.CoefOptions{})
	fmt.Printf("kappa = %.5f, pa = %.5f, pe = %.5f, se = %.5f\n", e.Value, e.Pa, e.Pe, e.SE)
	// Output: kappa = 0.76117, pa = 0.81818, pe = 0.23872, se = 0.15302
}

func ExampleFleissCategoryKappas() {
	for k, e := range raters.FleissCategoryKappas(krippendorff2011(), raters.CoefOptions{}) {
		fmt.Printf("category %d: %.4f\n", k+1, e.Value)
	}
	// Output:
	// category 1: 0.7576
	// category 2: 0.6547
	// category 3: 0.7800
	// category 4: 0.7564
	// category 5: 1.0000
}

func ExampleGwetAC() {
	r := krippendorff2011()
	ac1, _ := raters.GwetAC(r, raters.CoefOptions{})
	ac2, _ := raters.GwetAC(r, raters.CoefOptions{Weights: raters.QuadraticWeights})
	fmt.Printf("AC1 = %.5f, AC2 (quadratic) = %.5f\n", ac1.Value, ac2.Value)
	// Output: AC1 = 0.77544, AC2 (quadratic) = 0.91400
}

func ExampleBrennanPrediger() {
	e, _ := raters.BrennanPrediger(krippendorff2011(), raters.CoefOptions{})
	fmt.Printf("BP = %.5f (se %.5f)\n", e.Value, e.SE)
	// Output: BP = 0.77273 (se 0.14472)
}

func ExampleRandolphKappa() {
	e, _ := raters.RandolphKappa(krippendorff2011(), raters.CoefOptions{})
	fmt.Printf("free-marginal kappa = %.5f\n", e.Value)
	// Output: free-marginal kappa = 0.77273
}

func ExampleCongerKappa() {
	e, _ := raters.CongerKappa(krippendorff2011(), raters.CoefOptions{})
	fmt.Printf("Conger's kappa = %.5f (se %.5f)\n", e.Value, e.SE)
	// Output: Conger's kappa = 0.76282 (se 0.14917)
}

func ExamplePercentAgreement() {
	e, _ := raters.PercentAgreement(krippendorff2011(), raters.CoefOptions{})
	fmt.Printf("percent agreement = %.5f\n", e.Value)
	// Output: percent agreement = 0.81818
}

func ExampleScottPi() {
	// Two raters: Scott's pi on the items both rated.
	r := raters.NewRatings(6, 2, 2)
	for i, pair := range [][2]float64{{0, 0}, {0, 1}, {1, 1}, {1, 1}, {0, 0}, {1, math.NaN()}} {
		r.Add(i, 0, pair[0])
		r.Add(i, 1, pair[1])
	}
	e, _ := raters.ScottPi(r, raters.CoefOptions{})
	fmt.Printf("pi = %.4f\n", e.Value)
	// Output: pi = 0.6000
}

func ExampleCohenKappa() {
	r := krippendorff2011()
	for _, w := range []raters.Weights{raters.Unweighted, raters.LinearWeights, raters.QuadraticWeights} {
		e, _ := raters.CohenKappa(r, 0, 1, raters.CoefOptions{Weights: w})
		fmt.Printf("%-10s kappa(A, B) = %.4f\n", w, e.Value)
	}
	// Output:
	// unweighted kappa(A, B) = 0.8448
	// linear     kappa(A, B) = 0.8941
	// quadratic  kappa(A, B) = 0.9396
}

func ExamplePairwiseCohen() {
	pairs, _ := raters.PairwiseCohen(krippendorff2011(), []raters.Weights{raters.Unweighted}, raters.CoefOptions{})
	for _, p := range pairs[:3] {
		fmt.Printf("%d-%d: %d items, kappa %.4f\n", p.A, p.B, p.N, p.Kappa[raters.Unweighted].Value)
	}
	// Output:
	// 0-1: 9 items, kappa 0.8448
	// 0-2: 8 items, kappa 0.4783
	// 0-3: 9 items, kappa 0.8500
}

func ExampleICC() {
	res, err := raters.ICC(krippendorff2011(), raters.ICCOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: ICC(2,1) = %.3f [%.3f, %.3f], ICC(3,k) = %.3f\n", res.Method, res.ICC2.Value, res.ICC2.CILow, res.ICC2.CIHigh, res.ICC3k.Value)
	// Output: reml: ICC(2,1) = 0.858 [0.705, 0.950], ICC(3,k) = 0.963
}

func ExampleMajorityVote() {
	c := raters.MajorityVote(krippendorff2011())
	fmt.Printf("item 6: class %d, tie %v among %v; %d ties in all\n", c.Items[5].Class+1, c.Items[5].Tie, c.Items[5].Tied, c.Ties)
	// Output: item 6: class 2, tie true among [0 1 2 3]; 1 ties in all
}

func ExampleMeanRating() {
	c := raters.MeanRating(krippendorff2011())
	fmt.Printf("item 2: mean %.2f -> class %d\n", c.Items[1].Score, c.Items[1].Class+1)
	// Output: item 2: mean 2.25 -> class 2
}

func ExampleMedianRating() {
	c := raters.MedianRating(krippendorff2011())
	fmt.Printf("item 6: median %.1f -> class %d\n", c.Items[5].Score, c.Items[5].Class+1)
	// Output: item 6: median 2.5 -> class 2
}

func ExampleDawidSkene() {
	// Two raters who agree, one who reverses the classes.
	r := raters.NewRatings(8, 3, 2)
	truth := []float64{0, 1, 0, 1, 1, 0, 0, 1}
	for i, c := range truth {
		r.Add(i, 0, c)
		r.Add(i, 1, c)
		r.Add(i, 2, 1-c)
	}
	r.Add(7, 1, 0) // one slip
	c, err := raters.DawidSkene(raters.LabelsOf(r), r.Items, r.Raters, 2, raters.DSOptions{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("converged %v; rater 3 says 1 when the class is 0 with probability %.2f\n", c.Fit.Converged, c.Raters[2].Confusion[0][1])
	// Output: converged true; rater 3 says 1 when the class is 0 with probability 1.00
}

func ExampleOneCoinDawidSkene() {
	r := krippendorff2011()
	c, _ := raters.OneCoinDawidSkene(raters.LabelsOf(r), r.Items, r.Raters, r.K, raters.DSOptions{Seed: 1})
	fmt.Printf("accuracies %.2f %.2f %.2f %.2f\n", c.Raters[0].Accuracy, c.Raters[1].Accuracy, c.Raters[2].Accuracy, c.Raters[3].Accuracy)
	// Output: accuracies 0.90 0.98 0.71 0.91
}

func ExampleAnalyze() {
	rep, err := raters.Analyze(krippendorff2011(), raters.Options{Level: raters.Ordinal, Bootstrap: 200, Seed: 1})
	if err != nil {
		panic(err)
	}
	a := rep.KrippendorffAlpha["ordinal"]
	fmt.Printf("ordinal alpha %.3f, 95%% %s interval [%.2f, %.2f]\n", a.Value, a.CIMethod, a.CILow, a.CIHigh)
	fmt.Printf("Fleiss' kappa %.3f, ICC(2,1) %.3f\n", rep.FleissKappa.Value, rep.ICC.ICC2.Value)
	// Output:
	// ordinal alpha 0.815, 95% bootstrap interval [0.49, 0.99]
	// Fleiss' kappa 0.761, ICC(2,1) 0.858
}

// crowd is a small label set: five raters label eight items; raters 1 and
// 2 always give the true class, rater 3 all but once, rater 4 reverses every
// other item and rater 5 always answers class 0.
func crowd() []raters.Label {
	truth := []int{0, 1, 1, 0, 1, 1, 0, 1}
	var out []raters.Label
	for i, c := range truth {
		r3 := c
		if i == 5 {
			r3 = 1 - c
		}
		out = append(out,
			raters.Label{Item: i, Rater: 0, Class: c},
			raters.Label{Item: i, Rater: 1, Class: c},
			raters.Label{Item: i, Rater: 2, Class: r3},
			raters.Label{Item: i, Rater: 3, Class: c ^ (i % 2)},
			raters.Label{Item: i, Rater: 4, Class: 0})
	}
	return out
}

func ExampleWawa() {
	c, err := raters.Wawa(crowd(), 8, 5, 2, raters.WawaOptions{})
	if err != nil {
		panic(err)
	}
	for j, q := range c.Raters {
		if j > 0 {
			fmt.Print("  ")
		}
		fmt.Printf("%s %.2f", q.SkillKind, q.Skill)
	}
	fmt.Println()
	fmt.Println("classes", c.Items[0].Class, c.Items[1].Class, c.Items[5].Class)
	// Rater 3 agrees with every majority vote, even item 6's wrong one.
	// Output:
	// weight 0.88  weight 0.88  weight 1.00  weight 0.62  weight 0.50
	// classes 0 1 0
}

func ExampleGLAD() {
	c, err := raters.GLAD(crowd(), 8, 5, 2, raters.GLADOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("converged %v; abilities %.2f %.2f %.2f %.2f %.2f\n", c.Fit.Converged, c.Raters[0].Skill, c.Raters[1].Skill, c.Raters[2].Skill, c.Raters[3].Skill, c.Raters[4].Skill)
	fmt.Printf("item 2: P(class 1) = %.3f, easiness %.2f\n", c.Items[1].Probs[1], c.Items[1].Easiness)
	// Output:
	// converged true; abilities 1.33 1.33 0.99 0.19 -0.09
	// item 2: P(class 1) = 1.000, easiness 2.93
}

func ExampleMACE() {
	c, err := raters.MACE(crowd(), 8, 5, 2, raters.MACEOptions{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("competences %.2f %.2f %.2f %.2f %.2f\n", c.Raters[0].Skill, c.Raters[1].Skill, c.Raters[2].Skill, c.Raters[3].Skill, c.Raters[4].Skill)
	fmt.Printf("best of %d runs (seed %d)\n", len(c.Fit.Runs), c.Fit.Seed)
	// The rater who always says 0 and the one who reverses every other
	// item are found out.
	// Output:
	// competences 0.93 0.93 0.73 0.13 0.07
	// best of 10 runs (seed 1)
}
