package raters

import (
	"testing"
)

// rteData loads Snow et al.'s (2008) RTE labels (800 items x 10 workers)
// and the expert gold of testdata/rte_gold.csv.
func rteData(t testing.TB) (*Ratings, []int) {
	rows := readCSV(t, "testdata/rte_ratings.csv")
	r, items, _, cats := longTable(rows, "item_id", "rater_id", "label")
	if len(cats) != 2 || cats[0] != "0" || cats[1] != "1" {
		t.Fatalf("categories %v", cats)
	}
	gold := map[string]int{}
	for _, g := range readCSV(t, "testdata/rte_gold.csv") {
		gold[g["item_id"]] = int(parseF(t, g["gold"]))
	}
	out := make([]int, len(items))
	for i, id := range items {
		g, ok := gold[id]
		if !ok {
			t.Fatalf("no gold for %s", id)
		}
		out[i] = g
	}
	return r, out
}

func accuracy(c *Consensus, gold []int) float64 {
	hit := 0
	for i, it := range c.Items {
		if it.Class == gold[i] {
			hit++
		}
	}
	return float64(hit) / float64(len(gold))
}

// TestRTEAccuracy: on Snow et al.'s RTE data Dawid-Skene reaches the
// accuracy the literature reports (about 93%; e.g. Snow et al. 2008 fig. 6,
// Sheshadri & Lease 2013) and beats majority vote.
func TestRTEAccuracy(t *testing.T) {
	r, gold := rteData(t)
	mv := MajorityVote(r)
	ds, err := DawidSkene(LabelsOf(r), r.Items, r.Raters, 2, DSOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	oc, err := OneCoinDawidSkene(LabelsOf(r), r.Items, r.Raters, 2, DSOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	amv, ads, aoc := accuracy(mv, gold), accuracy(ds, gold), accuracy(oc, gold)
	// Majority vote with ties split at random, as often reported: a tied
	// item counts half.
	half := 0.0
	for i, it := range mv.Items {
		switch {
		case it.Tie:
			half += 0.5
		case it.Class == gold[i]:
			half++
		}
	}
	t.Logf("majority vote with random tie-breaking: expected accuracy %.4f", half/float64(len(gold)))
	t.Logf("RTE accuracy: majority %.4f (%d ties), Dawid-Skene %.4f (%d iterations, converged %v, start %s), one-coin %.4f", amv, mv.Ties, ads, ds.Fit.Iterations, ds.Fit.Converged, ds.Fit.Start, aoc)
	if ads < 0.925 {
		t.Errorf("Dawid-Skene accuracy %.4f < 0.925", ads)
	}
	if ads <= amv || ads <= half/float64(len(gold)) {
		t.Errorf("Dawid-Skene %.4f does not beat majority vote %.4f", ads, amv)
	}
	if !ds.Fit.Converged {
		t.Errorf("Dawid-Skene did not converge")
	}
}

// TestDawidSkeneAnaesthesia compares the maximum-likelihood fit from the
// majority-vote start on Dawid & Skene's (1979) anaesthesia data (rater 1
// labelled every patient three times) with an independent numpy
// implementation of the paper's EM (testdata/make_reference_ds.py ->
// reference_ds.csv): priors, every confusion matrix and every posterior to
// 1e-9, and the log-likelihood.
func TestDawidSkeneAnaesthesia(t *testing.T) {
	var labels []Label
	for _, r := range readCSV(t, "testdata/dawid_skene_1979_ratings.csv") {
		labels = append(labels, Label{Item: int(parseF(t, r["item_id"])) - 1, Rater: int(parseF(t, r["rater_id"])) - 1, Class: int(parseF(t, r["label"])) - 1})
	}
	if len(labels) != 315 {
		t.Fatalf("%d labels", len(labels))
	}
	c, err := DawidSkene(labels, 45, 5, 4, DSOptions{Tol: 1e-15, MaxIter: 10000, Restarts: -1})
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-9
	checked := 0
	for _, ref := range readCSV(t, "testdata/reference_ds.csv") {
		v := parseF(t, ref["value"])
		var got float64
		switch ref["what"] {
		case "loglik":
			got = c.Fit.LogLik[len(c.Fit.LogLik)-1]
		case "iterations":
			continue
		case "prior":
			got = c.Priors[int(parseF(t, ref["k"]))]
		case "pi":
			var k, l int
			if _, err := fmtSscanf(ref["k"], &k, &l); err != nil {
				t.Fatal(err)
			}
			got = c.Raters[int(parseF(t, ref["j"]))-1].Confusion[k][l]
		case "posterior":
			got = c.Items[int(parseF(t, ref["i"]))-1].Probs[int(parseF(t, ref["k"]))]
		}
		if !near(got, v, tol) {
			t.Errorf("%v: %.12g, numpy %.12g", ref, got, v)
		}
		checked++
	}
	if checked != 265 {
		t.Errorf("checked %d values", checked)
	}
	if !c.Fit.Converged {
		t.Error("not converged")
	}
}

// TestDawidSkeneOverlap is crowd-kit's test_dawid_skene_overlap (tests/
// aggregation/test_ds_aggregation.py, crowd-kit 1.4): 3 items, every rater
// labels all three, rater p says no on item t when (p - t) % 3 == 0 and
// yes otherwise. crowd-kit's DawidSkene(20) gives every item yes with
// probabilities (1/3, 2/3) and priors (1/3, 2/3), within 0.005. So does
// the default here (the majority-vote start; a random start would find a
// spurious optimum of higher likelihood), with 300 raters and, through
// the agreement report, with sparse labels at any size.
func TestDawidSkeneOverlap(t *testing.T) {
	for _, n := range []int{3, 300} {
		r := crossedDesign(n) // 0 = no, 1 = yes
		rep, err := Analyze(r, Options{Bootstrap: -1, Only: OnlyAggregators})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Aggregators["dawid_skene"]
		for i, it := range c.Items {
			if it.Class != 1 || !near(it.Probs[0], 1.0/3, 0.005) || !near(it.Probs[1], 2.0/3, 0.005) {
				t.Errorf("%d raters, item %d: class %d, probs %v; crowd-kit: yes, (1/3, 2/3)", n, i, it.Class, it.Probs)
			}
		}
		if !near(c.Priors[0], 1.0/3, 0.005) || !near(c.Priors[1], 2.0/3, 0.005) {
			t.Errorf("%d raters: priors %v; crowd-kit: (1/3, 2/3)", n, c.Priors)
		}
	}
}
