package reports

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"concord/raters"

	"concord/annotations"
	"concord/multirater"
)

// TestWilsonInterval checks raters.WilsonInterval against scipy
// (testdata/wilson.py).
func TestWilsonInterval(t *testing.T) {
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		{7, 9, 0.4525889691069889, 0.9367748928821533},
		{0, 5, 0.0, 0.43448246478317476},
		{5, 5, 0.5655175352168251, 1.0},
		{1, 1, 0.20654931437723745, 1.0},
		{38, 50, 0.6258731624205707, 0.8570260860300827},
		{412, 500, 0.78818582871064, 0.854873598670274},
	}
	for _, tt := range tests {
		p, lo, hi := raters.WilsonInterval(float64(tt.k), float64(tt.n), 0.95)
		if p != float64(tt.k)/float64(tt.n) || math.Abs(lo-tt.lo) > 1e-9 || math.Abs(hi-tt.hi) > 1e-9 {
			t.Errorf("WilsonInterval(%d, %d) = %v [%v, %v], want [%v, %v]", tt.k, tt.n, p, lo, hi, tt.lo, tt.hi)
		}
	}
}

// TestGoldScores: each rater's record on the gold items equals a direct
// count of the dataset's labels (repeated labels each count), with its
// Wilson interval; a rater who saw no gold item has a record with no
// accuracy; a project without gold has none.
func TestGoldScores(t *testing.T) {
	fit := &Fit{
		Schema: multirater.FitSchema,
		Model:  multirater.ModelSettings{Model: "classification", Chains: 1, Samples: 1, Thin: 1},
		Levels: []string{"a", "b"},
	}
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("nominal:a,b")}
	est := multirater.Estimate{Mean: 1, Q025: 1, Q50: 1, Q975: 1}
	for _, r := range []string{"r1", "r2", "r3"} {
		fit.Raters = append(fit.Raters, multirater.RaterResult{ID: r, Precision: est, Variance: est})
	}
	gold := map[string]string{"g1": "a", "g2": "b", "g3": "a"}
	labels := []annotations.Label{
		{Item: "g1", Rater: "r1", Value: "a"}, {Item: "g2", Rater: "r1", Value: "a"}, {Item: "g3", Rater: "r1", Value: "a"},
		{Item: "g1", Rater: "r1", Value: "b"}, // a repeat: one more label
		{Item: "g1", Rater: "r2", Value: "a"}, {Item: "g2", Rater: "r2", Value: "b"},
		{Item: "x", Rater: "r1", Value: "b"}, {Item: "x", Rater: "r2", Value: "b"}, {Item: "x", Rater: "r3", Value: "a"},
	}
	ds.Labels = labels
	for _, id := range []string{"g1", "g2", "g3", "x"} {
		ds.Items = append(ds.Items, annotations.Item{ID: id, Gold: gold[id]})
		byRater := map[string]string{}
		for _, l := range labels {
			if _, dup := byRater[l.Rater]; l.Item == id && !dup {
				byRater[l.Rater] = l.Value
			}
		}
		fit.Items = append(fit.Items, FitItem{ItemResult: multirater.ItemResult{ID: id, NLabels: len(byRater), Labels: byRater}, ClassProbs: []float64{0.5, 0.5}, Class: "a"})
	}
	rep, err := BuildFit(annotations.Project{Name: "gold", Scheme: ds.Scheme}, fit, nil, ds)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]GoldScore{"r1": {Items: 3, Labels: 4, Correct: 2}, "r2": {Items: 2, Labels: 2, Correct: 2}, "r3": {}}
	for _, r := range rep.Raters {
		g, w := r.Gold, want[r.ID]
		if g == nil || g.Items != w.Items || g.Labels != w.Labels || g.Correct != w.Correct {
			t.Errorf("rater %s: gold %+v, want %+v", r.ID, g, w)
			continue
		}
		if w.Labels == 0 {
			if g.Accuracy.Valid() || g.Q025.Valid() {
				t.Errorf("rater %s saw no gold: accuracy %v [%v, %v]", r.ID, g.Accuracy, g.Q025, g.Q975)
			}
			continue
		}
		p, lo, hi := raters.WilsonInterval(float64(w.Correct), float64(w.Labels), 0.95)
		if float64(g.Accuracy) != p || float64(g.Q025) != lo || float64(g.Q975) != hi {
			t.Errorf("rater %s: %v [%v, %v], want %v [%v, %v]", r.ID, g.Accuracy, g.Q025, g.Q975, p, lo, hi)
		}
	}
	var b strings.Builder
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"gold": {`) && !strings.Contains(b.String(), `"gold":{`) {
		t.Errorf("report JSON has no gold records")
	}

	// The workbook's Raters sheet has the same counts and accuracy.
	f := openBook(t, rep, XLSXOptions{}).f
	rows, err := f.GetRows(SheetRaters, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	h := header(rows[0])
	for _, c := range []string{"Gold items", "Gold labels", "Gold correct", "Gold accuracy", "Gold accuracy 2.5%", "Gold accuracy 97.5%"} {
		if _, ok := h[c]; !ok {
			t.Fatalf("Raters sheet lacks %q: %v", c, rows[0])
		}
	}
	for _, row := range rows[1:] {
		if len(row) == 0 || want[row[0]] == (GoldScore{}) && row[0] != "r3" {
			continue
		}
		w := want[row[0]]
		cell := func(c string) string {
			if i := h[c]; i < len(row) {
				return row[i]
			}
			return ""
		}
		if cell("Gold labels") != strconv.Itoa(w.Labels) || cell("Gold correct") != strconv.Itoa(w.Correct) {
			t.Errorf("Raters sheet, %s: labels %q correct %q, want %d, %d", row[0], cell("Gold labels"), cell("Gold correct"), w.Labels, w.Correct)
		}
		if w.Labels > 0 {
			p, _, _ := raters.WilsonInterval(float64(w.Correct), float64(w.Labels), 0.95)
			if v, err := strconv.ParseFloat(cell("Gold accuracy"), 64); err != nil || math.Abs(v-p) > 1e-12 {
				t.Errorf("Raters sheet, %s: accuracy %q, want %v", row[0], cell("Gold accuracy"), p)
			}
		} else if cell("Gold accuracy") != "" {
			t.Errorf("Raters sheet, %s: accuracy %q without gold", row[0], cell("Gold accuracy"))
		}
	}

	// No gold items: no records.
	for i := range ds.Items {
		ds.Items[i].Gold = ""
	}
	rep, err = BuildFit(annotations.Project{Name: "nogold", Scheme: ds.Scheme}, fit, nil, ds)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Raters {
		if r.Gold != nil {
			t.Errorf("rater %s: gold %+v without gold items", r.ID, r.Gold)
		}
	}
}

// TestReviewNumberColumn: the notes under the Review sheet's table spill
// over the empty cells instead of widening its "#" column (it printed 60
// characters wide).
func TestReviewNumberColumn(t *testing.T) {
	rep := ordinalCase(t).rep
	f := openBook(t, rep, XLSXOptions{}).f
	rows, _ := f.GetRows(SheetReview)
	if len(rows) < 3 || rows[0][0] != "#" {
		t.Fatalf("Review sheet: %v", rows[:min(len(rows), 2)])
	}
	if w, err := f.GetColWidth(SheetReview, "A"); err != nil || w > 10 {
		t.Errorf("Review column A is %v wide (%v)", w, err)
	}
}
