package raters

import (
	"math"
	"strconv"
	"testing"

	"concord/internal/testutil"
)

// TestAgreementTablesByHand checks the matrix, per-item and per-rater
// tables on a small nominal and a small ordinal table worked out by hand.
func TestAgreementTablesByHand(t *testing.T) {
	nan := math.NaN()
	// 4 items × 3 raters, nominal, 2 categories.
	//   item 0: a a a   -> 3 agreeing pairs of 3
	//   item 1: a b a   -> 1 of 3
	//   item 2: b b -   -> 1 of 1
	//   item 3: - - b   -> one label: no score
	r := NewRatings(4, 3, 2)
	for i, row := range [][]float64{{0, 0, 0}, {0, 1, 0}, {1, 1, nan}, {nan, nan, 1}} {
		for j, v := range row {
			r.Add(i, j, v)
		}
	}
	o := Options{Level: Nominal, RaterNames: []string{"r1", "r2", "r3"}, ItemNames: []string{"i0", "i1", "i2", "i3"}}
	m, items, rs, err := AgreementTables(r, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantItems := []struct {
		labels int
		agr    float64
	}{{3, 1}, {3, 1.0 / 3}, {2, 1}, {1, nan}}
	for i, w := range wantItems {
		if items[i].Item != o.ItemNames[i] || items[i].Labels != w.labels || !near(float64(items[i].Agreement), w.agr, 1e-12) {
			t.Errorf("item %d: %+v, want %+v", i, items[i], w)
		}
	}
	// r1: pairs (a,a)(a,a) on i0, (a,b)(a,a) on i1, (b,b) on i2 -> 5 pairs, 4 agree.
	// Pooled table of r1 vs others: mine a,a,a,a,b; theirs a,a,b,a,b:
	// po = 4/5, pe = (4/5)(3/5) + (1/5)(2/5) = 14/25, kappa = (20/25-14/25)/(11/25) = 6/11.
	// r3 (i0: a vs a,a; i1: a vs a,b; i3 alone): 4 pairs, 3 agree; mine a×4,
	// theirs a,a,a,b: pe = 3/4, po = 3/4 -> kappa 0.
	want := []RaterAgreement{
		{Rater: "r1", Labels: 3, Items: 3, Partners: 2, Pairs: 5, Agreement: 0.8, PooledKappa: num(6.0 / 11)},
		{Rater: "r2", Labels: 3, Items: 3, Partners: 2, Pairs: 5, Agreement: 0.6},
		{Rater: "r3", Labels: 3, Items: 2, Partners: 2, Pairs: 4, Agreement: 0.75, PooledKappa: 0},
	}
	// r2: mine a,a,b,b,b; theirs a,a,a,a,b: po = 3/5, pe = (2/5)(4/5)+(3/5)(1/5) = 11/25,
	// kappa = (15/25-11/25)/(14/25) = 4/14.
	want[1].PooledKappa = num(4.0 / 14)
	for j, w := range want {
		g := rs[j]
		if g.Rater != w.Rater || g.Labels != w.Labels || g.Items != w.Items || g.Partners != w.Partners || g.Pairs != w.Pairs ||
			!near(float64(g.Agreement), float64(w.Agreement), 1e-12) || !near(float64(g.PooledKappa), float64(w.PooledKappa), 1e-12) {
			t.Errorf("rater %s: %+v, want %+v", w.Rater, g, w)
		}
	}
	// The matrix: r1-r2 share i0, i1, i2 (a/a, a/b, b/b): kappa by CohenKappa.
	k12, _ := CohenKappa(r, 0, 1, CoefOptions{})
	if m == nil || m.Weights != "unweighted" || m.N[0][1] != 3 || m.N[1][0] != 3 || m.N[0][2] != 2 || m.N[0][0] != 3 ||
		!near(float64(m.Kappa[0][1]), k12.Value, 1e-12) || !math.IsNaN(float64(m.Kappa[1][1])) {
		t.Errorf("matrix %+v (kappa r1-r2 %v)", m, k12.Value)
	}
	// r1-r3 share i0 and i1, both "a" from both: chance agreement 1, kappa
	// undefined, so r1's mean kappa is the r1-r2 kappa alone.
	if !math.IsNaN(float64(m.Kappa[0][2])) || !near(float64(rs[0].MeanKappa), k12.Value, 1e-12) {
		t.Errorf("r1 mean kappa %v, row %v", rs[0].MeanKappa, m.Kappa[0])
	}

	// Ordinal, values 1, 2, 5 (range 4): item 0 rated 1, 2, 5: pairwise
	// |differences| 1, 4, 3 -> mean 8/3, score 1 - 8/3/4 = 1/3.
	r2 := NewRatings(1, 3, 3)
	r2.Values = []float64{1, 2, 5}
	r2.Add(0, 0, 0)
	r2.Add(0, 1, 1)
	r2.Add(0, 2, 2)
	_, items, rs, err = AgreementTables(r2, Options{Level: Ordinal}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !near(float64(items[0].Agreement), 1.0/3, 1e-12) {
		t.Errorf("ordinal item score %v, want 1/3", items[0].Agreement)
	}
	// Rater 0 (value 1) against 2 and 5: weights 1 - 1/4 and 1 - 4/4.
	if !near(float64(rs[0].Agreement), (0.75+0)/2, 1e-12) {
		t.Errorf("ordinal rater agreement %v", rs[0].Agreement)
	}
}

// TestAgreementTablesReference checks the per-item and per-rater tables
// against testdata/reference_tables.csv (make_reference_tables.py):
// scikit-learn's cohen_kappa_score for the pooled and mean kappas, the
// definitions computed independently for the rest, on nominal, ordinal and
// bounded data with missing ratings.
func TestAgreementTablesReference(t *testing.T) {
	type setup struct {
		r      *Ratings
		items  []string
		raters []string
		o      Options
	}
	sets := map[string]setup{}
	for _, d := range []struct {
		name, file string
		level      Level
	}{{"face4", "face4_ratings.csv", Nominal}, {"sirt1_k1", "sirt1_k1_ratings.csv", Ordinal}} {
		r, items, raters, _ := longTable(readCSV(t, "testdata/"+d.file), "item_id", "rater_id", "label")
		sets[d.name] = setup{r, items, raters, Options{Level: d.level, RaterNames: raters, ItemNames: items}}
	}
	rows := readCSV(t, "testdata/affect_anger_ratings.csv")
	anger, raters := continuousTable(t, rows)
	_, items, _, _ := longTable(rows, "item_id", "rater_id", "label")
	sets["anger"] = setup{anger, items, raters, Options{Level: Interval, RaterNames: raters, ItemNames: items, ScaleMin: 0, ScaleMax: 100}}

	type tables struct {
		items  map[string]ItemAgreement
		raters map[string]RaterAgreement
	}
	got := map[string]tables{}
	for name, s := range sets {
		_, its, rs, err := AgreementTables(s.r, s.o, nil)
		if err != nil {
			t.Fatal(err)
		}
		tb := tables{map[string]ItemAgreement{}, map[string]RaterAgreement{}}
		for _, it := range its {
			tb.items[it.Item] = it
		}
		for _, r := range rs {
			tb.raters[r.Rater] = r
		}
		got[name] = tb
	}
	n := map[string]int{}
	for _, ref := range readCSV(t, "testdata/reference_tables.csv") {
		tb := got[ref["dataset"]]
		want := parseF(t, ref["value"])
		// The reference's fields are the JSON names of the tables' columns
		// (a number, or null for NaN).
		var row map[string]any
		switch ref["table"] {
		case "item":
			row = testutil.JSONDocument(t, tb.items[ref["id"]])
		case "rater":
			row = testutil.JSONDocument(t, tb.raters[ref["id"]])
		}
		v, ok := row[ref["field"]]
		if !ok {
			t.Fatalf("unknown reference row %v", ref)
		}
		g := math.NaN()
		if f, isNum := v.(float64); isNum {
			g = f
		}
		n[ref["dataset"]+" "+ref["table"]+"."+ref["field"]]++
		if !near(g, want, 1e-9) {
			t.Errorf("%s %s %s %s = %v, want %v (%s)", ref["dataset"], ref["table"], ref["id"], ref["field"], g, want, ref["tool"])
		}
	}
	for _, k := range []string{"face4 rater.pooled_kappa", "sirt1_k1 rater.pooled_kappa", "anger rater.pooled_kappa", "anger item.agreement", "face4 rater.mean_kappa"} {
		if n[k] == 0 {
			t.Errorf("no reference rows for %s", k)
		}
	}
	t.Logf("reference rows checked: %v", n)
}

// TestAnalyzeAgreementTables checks that Analyze puts the tables in the
// report, the matrix's kappas equal cohen_kappa's, and the JSON names.
func TestAnalyzeAgreementTables(t *testing.T) {
	r, items, raters, _ := longTable(readCSV(t, "testdata/sirt1_k1_ratings.csv"), "item_id", "rater_id", "label")
	rep, err := Analyze(r, Options{Level: Ordinal, Bootstrap: -1, RaterNames: raters, ItemNames: items})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.PairwiseMatrix
	if m == nil || m.Weights != "quadratic" || len(m.Raters) != len(raters) {
		t.Fatalf("matrix %+v", m)
	}
	ix := map[string]int{}
	for i, id := range m.Raters {
		ix[id] = i
	}
	for _, p := range rep.CohenKappa {
		a, b := ix[p.A], ix[p.B]
		if m.N[a][b] != p.N || !near(float64(m.Kappa[a][b]), p.Quadratic.Value, 0) || !near(float64(m.Kappa[b][a]), p.Quadratic.Value, 0) {
			t.Errorf("matrix %s-%s: %v (n %d), cohen_kappa %v (n %d)", p.A, p.B, m.Kappa[a][b], m.N[a][b], p.Quadratic.Value, p.N)
		}
	}
	if len(rep.ItemAgreement) != rep.Items || len(rep.RaterAgreement) != rep.Raters {
		t.Errorf("%d item rows for %d items, %d rater rows for %d raters", len(rep.ItemAgreement), rep.Items, len(rep.RaterAgreement), rep.Raters)
	}
	if rep.AgreementScore != "1 - mean pairwise |difference| / 3 (the scale's range 0 to 3)" {
		t.Errorf("agreement score %q", rep.AgreementScore)
	}
	doc := testutil.JSONFields(t, rep)
	for _, k := range []string{"pairwise_matrix", "item_agreement", "rater_agreement", "agreement_score"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("no %q in the JSON", k)
		}
	}

	// Above MaxMatrixRaters raters the matrix is left out with a note.
	big := NewRatings(2, MaxMatrixRaters+1, 2)
	for j := 0; j < big.Raters; j++ {
		big.Add(j%2, j, float64(j%2))
	}
	rep, err = Analyze(big, Options{Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.PairwiseMatrix != nil || len(rep.RaterAgreement) != MaxMatrixRaters+1 {
		t.Errorf("%d raters: matrix %v, %d rater rows", big.Raters, rep.PairwiseMatrix != nil, len(rep.RaterAgreement))
	}
	found := false
	for _, n := range rep.Notes {
		found = found || n == "pairwise_matrix left out: "+strconv.Itoa(MaxMatrixRaters+1)+" raters (at most 200); cohen_kappa lists the pairs described by pair_selection, and each rater profile's pairwise list only those pairs"
	}
	if !found {
		t.Errorf("notes %q", rep.Notes)
	}
	// By default the pairs share at least DefaultMinShared items: none
	// here, yet each rater's row counts its 100 pairs of ratings.
	if ps := rep.PairSelection; ps == nil || ps.MinShared != DefaultMinShared || ps.Reported != 0 || len(rep.CohenKappa) != 0 || len(rep.Profiles[0].Pairwise) != 0 {
		t.Errorf("default pairs: %+v, %d kappas, %d profile rows", rep.PairSelection, len(rep.CohenKappa), len(rep.Profiles[0].Pairwise))
	}
	if ra := rep.RaterAgreement[0]; ra.Pairs != 100 || ra.Agreement != 1 {
		t.Errorf("rater 0's row: %+v, want 100 agreeing pairs", ra)
	}
	// Every pair on request: rater 0 shares item 0 with the other 100
	// even raters only.
	rep, err = Analyze(big, Options{Bootstrap: -1, Pairs: PairOptions{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if pw := rep.Profiles[0].Pairwise; len(pw) != 100 || len(rep.CohenKappa) != 2*(101*100/2+100*99/2)/2 {
		t.Errorf("rater 0's pairwise list: %d raters, want the 100 it shares an item with; %d kappas", len(pw), len(rep.CohenKappa))
	} else {
		for _, pa := range pw {
			if pa.N != 1 {
				t.Errorf("rater 0 with %s: %d shared items, want 1", pa.Rater, pa.N)
			}
		}
	}
}

func TestSortItemAgreement(t *testing.T) {
	nan := num(math.NaN())
	rows := []ItemAgreement{{Item: "a", Agreement: 0.5}, {Item: "b", Agreement: nan}, {Item: "c", Agreement: 0.25}, {Item: "d", Agreement: 1}, {Item: "e", Agreement: 0.5}}
	SortItemAgreement(rows)
	got := ""
	for _, r := range rows {
		got += r.Item
	}
	if got != "caedb" {
		t.Errorf("order %s, want caedb", got)
	}
	for _, c := range []struct {
		below float64
		n     int
	}{{0.25, 0}, {0.3, 1}, {0.5, 1}, {0.51, 3}, {2, 4}} {
		if n := len(ItemsBelow(rows, c.below)); n != c.n {
			t.Errorf("below %v: %d rows, want %d", c.below, n, c.n)
		}
	}
}
