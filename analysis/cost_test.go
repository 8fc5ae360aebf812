package analysis

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater/infer"
)

// TestExpectedCostStructure checks the estimate's structure, not its
// accuracy (docs/scripts/cost measures that against the ladder): every
// engine's terms are named in the model, the estimate is positive, and it
// grows with the labels and with the items.
func TestExpectedCostStructure(t *testing.T) {
	cases := []struct {
		name  string
		spec  FitSpec
		terms []string // in Cost.Model
	}{
		{"ordinal gibbs identity", FitSpec{Model: "ordinal", Engine: "gibbs", Kernel: "identity"}, []string{"sweeps", "labels"}},
		{"ordinal gibbs text", FitSpec{Model: "ordinal", Engine: "gibbs", Kernel: "text"}, []string{"sweeps", "labels", "N r (", "low-rank"}},
		{"ordinal gibbs rbf", FitSpec{Model: "ordinal", Engine: "gibbs", Kernel: "rbf:gamma=0.125"}, []string{"sweeps", "labels", "N²"}},
		{"ordinal ep identity", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "identity"}, []string{"labels"}},
		{"ordinal ep text", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text"}, []string{"labels", "N r²", "low-rank"}},
		{"ordinal laplace text", FitSpec{Model: "ordinal", Engine: "laplace", Kernel: "text"}, []string{"labels", "N r²"}},
		{"ordinal ep dense", FitSpec{Model: "ordinal", Engine: "ep", Kernel: "text", Rank: -1}, []string{"labels", "N³/3"}},
		{"classification gibbs", FitSpec{Model: "classification", Engine: "gibbs", Kernel: "identity"}, []string{"sweeps", "labels"}},
		{"confusion vb", FitSpec{Model: "confusion", Engine: "vb", Kernel: "identity"}, []string{"labels"}},
		{"confusion vb text", FitSpec{Model: "confusion", Engine: "vb", Kernel: "text"}, []string{"labels", "N r²"}},
		{"bounded ep", FitSpec{Model: "bounded", Engine: "ep", Kernel: "identity"}, []string{"labels"}},
		{"bounded ep text", FitSpec{Model: "bounded", Engine: "ep", Kernel: "text"}, []string{"labels", "N r²"}},
		{"robust ep", FitSpec{Model: "robust", Engine: "ep", Kernel: "identity"}, []string{"labels"}},
		{"robust ep rbf learnt", FitSpec{Model: "robust", Engine: "ep", Kernel: "rbf"}, []string{"labels", "N³/3"}},
		{"auc linear", FitSpec{Model: "auc", Engine: "ep"}, []string{"pairs"}},
		{"auc gp", FitSpec{Model: "auc", Engine: "ep", Scores: "gp"}, []string{"pairs", "N³/3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec.WithDefaults()
			const items, labels = 300, 1200 // under PivotedFromItems: dense learnt kernels
			c := ExpectedCost(spec, labels, items)
			if c.CPU <= 0 {
				t.Fatalf("ExpectedCost = %v, want > 0", c.CPU)
			}
			for _, term := range tc.terms {
				if !strings.Contains(c.Model, term) {
					t.Errorf("model %q lacks the term %q", c.Model, term)
				}
			}
			if !strings.HasPrefix(c.Model, spec.Model+" "+spec.Engine+":") {
				t.Errorf("model %q does not start with %q", c.Model, spec.Model+" "+spec.Engine+":")
			}
			// The auc model's sites are pairs of items: its cost follows
			// the items, not the labels.
			if more := ExpectedCost(spec, 2*labels, items); more.CPU < c.CPU || more.CPU == c.CPU && !strings.Contains(c.Model, "pairs") {
				t.Errorf("cost with twice the labels %v, want more than %v", more.CPU, c.CPU)
			}
			// 4x the items and the labels (the ladder's 4 per item), on
			// either side of PivotedFromItems, where a learnt kernel's
			// dense prior gives way to inducing points (and the cost may
			// drop, as the fit's does).
			for _, n := range []int{60, 600} {
				small, big := ExpectedCost(spec, 4*n, n), ExpectedCost(spec, 16*n, 4*n)
				if big.CPU <= small.CPU {
					t.Errorf("cost on %d items %v, want more than on %d items, %v", 4*n, big.CPU, n, small.CPU)
				}
			}
		})
	}
}

// TestExpectedCostGibbsSweeps checks that a Gibbs estimate counts
// ProjectedWork's sweeps: twice the samples and burn-in, twice the cost.
func TestExpectedCostGibbsSweeps(t *testing.T) {
	spec := FitSpec{Model: "ordinal", Engine: "gibbs", Kernel: "identity"}.WithDefaults()
	c := ExpectedCost(spec, 4000, 1000)
	spec.Samples *= 2
	spec.Burnin *= 2
	c2 := ExpectedCost(spec, 4000, 1000)
	if r := c2.CPU.Seconds() / c.CPU.Seconds(); r < 2-1e-9 || r > 2+1e-9 {
		t.Errorf("cost ratio with twice the sweeps = %v, want 2 (±1e-9)", r)
	}
}

// TestExpectedCostDefaultEngine: a spec that names no engine is costed
// with its model's default engine (the ordinal model's is ep), not Gibbs.
func TestExpectedCostDefaultEngine(t *testing.T) {
	for _, model := range []string{ModelOrdinal, ModelClassification, ModelConfusion, ModelBounded} {
		m, err := LookupModel(model)
		if err != nil {
			t.Fatal(err)
		}
		c := ExpectedCost(FitSpec{Model: model}, 1200, 300)
		if want := model + " " + m.DefaultEngine() + ":"; !strings.HasPrefix(c.Model, want) {
			t.Errorf("ExpectedCost(model %s, no engine).Model = %q, want it to start %q", model, c.Model, want)
		}
	}
}

// TestLearntRank checks the default number of inducing items of a learnt
// kernel: LearntKernelRank for every model, and for the robust model the
// smaller robust.InducingRank beyond 4,000 items, which ExpectedCost
// states too.
func TestLearntRank(t *testing.T) {
	for _, tc := range []struct {
		model string
		n     int
		want  int
	}{
		{ModelOrdinal, 16000, 128},
		{ModelBounded, 16000, 128},
		{ModelRobust, 1000, 128},
		{ModelRobust, 4000, 128},
		{ModelRobust, 16000, 64},
		{ModelRobust, 64000, 32},
	} {
		spec := FitSpec{Model: tc.model, Engine: "ep", Kernel: "rbf"}
		if got := learntRank(spec, tc.n); got != tc.want {
			t.Errorf("learntRank(%s, %d) = %d, want %d", tc.model, tc.n, got, tc.want)
		}
		var learn infer.LearnKernel
		if setLearntRank(&learn, spec, tc.n); learn.Rank != tc.want {
			t.Errorf("setLearntRank(%s, %d items) set Rank %d, want %d", tc.model, tc.n, learn.Rank, tc.want)
		}
		if c := ExpectedCost(spec, 4*tc.n, tc.n); !strings.Contains(c.Model, fmt.Sprintf(" r %d)", tc.want)) {
			t.Errorf("ExpectedCost(%s, %d items).Model = %q, want r %d", tc.model, tc.n, c.Model, tc.want)
		}
	}
}

// TestExpectedCostLadder pins ExpectedCost against the CPU seconds of the
// shared ladder's default fits on one machine (testdata/cost_ladder.csv:
// one row per run, its source, binary, date and load in the last columns):
// it computes exactly the figure that `concord fit` states (the same
// function on the same inputs: the spec as the CLI fills it from the
// family's flags, ForData on a dataset with the run's items, raters,
// labels, scheme and item texts, then WithDefaults) and requires it within
// [0.67, 1.5] of the measured CPU s. Issue 35's line is a factor of two;
// the test is stricter because the rows were measured on a quiet machine
// (load about 2) and the same fit measures 1.3-1.6x more CPU s on a loaded
// one (load 15-25), so a figure that only just meets 2x here would miss it
// there.
func TestExpectedCostLadder(t *testing.T) {
	f, err := os.Open("testdata/cost_ladder.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := csv.NewReader(f)
	rd.Comment = '#'
	rows, err := rd.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 {
		t.Fatalf("testdata/cost_ladder.csv has %d rows, want a header and runs", len(rows))
	}
	const cols = 16
	if len(rows[0]) != cols || rows[0][0] != "family" || rows[0][12] != "cpu_s" {
		t.Fatalf("testdata/cost_ladder.csv header %v, want %d columns family, ..., cpu_s, ...", rows[0], cols)
	}
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	const lo, hi = 0.67, 1.5
	for _, row := range rows[1:] {
		// family, model, engine, kernel, scores, scheme, items_file,
		// items, raters, labels, rank, final_rank, cpu_s, main_stated,
		// load, source
		if len(row) != cols {
			t.Fatalf("row %v: %d columns, want %d", row, len(row), cols)
		}
		ds := ladderShape(t, row[5], row[6], atoi(row[7]), atoi(row[8]), atoi(row[9]))
		spec := FitSpec{Model: row[1], Engine: row[2], Kernel: row[3], Scores: row[4]}
		full := spec.ForData(ds).WithDefaults()
		c := ExpectedCost(full, len(ds.Labels), len(ds.ItemIDs()))
		cpu, err := strconv.ParseFloat(row[12], 64)
		if err != nil || cpu <= 0 {
			t.Fatalf("row %v: CPU s %q", row, row[12])
		}
		est := c.CPU.Seconds()
		ratio := est / cpu
		t.Logf("%-26s %6s items: stated %-28q measured %7.2f CPU s (main stated %q): %.2fx", row[0], row[7], c.Short(), cpu, row[13], ratio)
		if ratio > hi || ratio < lo {
			t.Errorf("%s at %s items (%s): ExpectedCost %.2f CPU s against %.2f measured, %.2fx: outside [%.2f, %.2f] (model: %s)", row[0], row[7], row[15], est, cpu, ratio, lo, hi, c.Model)
		}
	}
}

// ladderShape is a dataset with the shape of the shared ladder's data
// for ExpectedCost: items items (with a text each when file is "text"),
// labels labels on the scheme scheme spread over every item and raters
// raters.
func ladderShape(t *testing.T, scheme, file string, items, raters, labels int) *annotations.Dataset {
	t.Helper()
	sc, err := annotations.ParseScheme(scheme)
	if err != nil {
		t.Fatal(err)
	}
	ds := &annotations.Dataset{Scheme: sc}
	for i := range items {
		it := annotations.Item{ID: fmt.Sprintf("i%06d", i)}
		if file == "text" {
			it.Text = "a text"
		}
		ds.Items = append(ds.Items, it)
	}
	ds.Labels = make([]annotations.Label, labels)
	for l := range ds.Labels {
		ds.Labels[l] = annotations.Label{Item: fmt.Sprintf("i%06d", l%items), Rater: fmt.Sprintf("r%03d", l%raters)}
	}
	if got := len(ds.RaterIDs()); got != raters || len(ds.ItemIDs()) != items {
		t.Fatalf("ladder dataset: %d raters, %d items, want %d and %d", got, len(ds.ItemIDs()), raters, items)
	}
	return ds
}
