package analysis

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"concord/annotations"
	"concord/internal/testutil"
	"concord/raters"
)

func TestCategoryValues(t *testing.T) {
	for _, c := range []struct {
		spec string
		want []float64
	}{
		{"ordinal:1..5", []float64{1, 2, 3, 4, 5}},
		{"ordinal:0..3", []float64{0, 1, 2, 3}},
		{"ordinal:poor,fair,good", []float64{1, 2, 3}},
		{"ordinal:5,3,1", []float64{1, 2, 3}}, // numbers, but not increasing
		{"nominal:yes,no,maybe", []float64{1, 2, 3}},
	} {
		got := CategoryValues(annotations.MustParseScheme(c.spec))
		if len(got) != len(c.want) {
			t.Fatalf("%s: %v", c.spec, got)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.spec, got, c.want)
				break
			}
		}
	}
}

// The 4 observers x 12 units of Krippendorff (2011) with missing values.
var kripp = [][]string{
	{"1", "1", "", "1"}, {"2", "2", "3", "2"}, {"3", "3", "3", "3"}, {"3", "3", "3", "3"},
	{"2", "2", "2", "2"}, {"1", "2", "3", "4"}, {"4", "4", "4", "4"}, {"1", "1", "2", "1"},
	{"2", "2", "2", "2"}, {"", "5", "5", "5"}, {"", "", "1", "1"}, {"", "", "3", ""},
}

func krippDataset(scheme string) *annotations.Dataset {
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme(scheme)}
	for i, row := range kripp {
		for j, v := range row {
			if v != "" {
				ds.Labels = append(ds.Labels, annotations.Label{Item: "u" + string(rune('a'+i)), Rater: "obs" + string(rune('A'+j)), Value: v})
			}
		}
	}
	return ds
}

func TestAgreementOrdinal(t *testing.T) {
	ds := krippDataset("ordinal:1..5")
	// A repeated label is counted and reported; the coefficients keep the
	// first.
	ds.Labels = append(ds.Labels, annotations.Label{Item: "ua", Rater: "obsA", Value: "5"})
	rep, err := Agreement(context.Background(), ds, raters.Options{Bootstrap: 100, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Level != "ordinal" || rep.Items != 12 || rep.Raters != 4 || rep.Labels != 42 {
		t.Errorf("level %s, %d items, %d raters, %d labels", rep.Level, rep.Items, rep.Raters, rep.Labels)
	}
	// Krippendorff (2011) publishes .743, .815, .849, .797.
	for m, want := range map[string]float64{"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797} {
		if got := rep.KrippendorffAlpha[m].Value; math.Abs(got-want) > 5e-4 {
			t.Errorf("alpha %s = %.4f, published %.3f", m, got, want)
		}
	}
	if len(rep.Notes) == 0 {
		t.Error("repeated label not reported")
	}
	if rep.CohenKappa[0].A != "obsA" || rep.CohenKappa[0].B != "obsB" {
		t.Errorf("pair names %q %q", rep.CohenKappa[0].A, rep.CohenKappa[0].B)
	}
	mv := rep.Aggregators["majority"]
	if mv.Items[0].ID != "ua" || mv.Items[0].Label != "1" || mv.Raters[0].ID != "obsA" {
		t.Errorf("majority: %+v %+v", mv.Items[0], mv.Raters[0])
	}
	doc := testutil.JSONDocument(t, rep)
	if doc["scheme"] != "ordinal:1..5" || doc["fleiss_kappa"] == nil || doc["icc"] == nil {
		t.Errorf("document: scheme %v, fleiss %v", doc["scheme"], doc["fleiss_kappa"])
	}
}

func TestAgreementNamedLevels(t *testing.T) {
	// Names instead of numbers: values 1..K, so the interval alpha is the
	// same as with codes 1..5.
	ds := krippDataset("ordinal:1..5")
	named := &annotations.Dataset{Scheme: annotations.MustParseScheme("ordinal:a,b,c,d,e")}
	for _, l := range ds.Labels {
		l.Value = string(rune('a' + l.Value[0] - '1'))
		named.Labels = append(named.Labels, l)
	}
	r1, err := Agreement(context.Background(), ds, raters.Options{Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Agreement(context.Background(), named, raters.Options{Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := r1.KrippendorffAlpha["interval"].Value, r2.KrippendorffAlpha["interval"].Value; a != b {
		t.Errorf("interval alpha %v vs %v", a, b)
	}
}

func TestAgreementBoundedAndErrors(t *testing.T) {
	ds := krippDataset("bounded:0..10")
	rep, err := Agreement(context.Background(), ds, raters.Options{Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Level != "interval" || rep.FleissKappa != nil || rep.ICC == nil {
		t.Errorf("bounded: level %s", rep.Level)
	}
	if got := rep.KrippendorffAlpha["interval"].Value; math.Abs(got-0.849) > 5e-4 {
		t.Errorf("interval alpha %.4f", got)
	}
	// The per-item score divides by the scheme's range, 10 (not the
	// observed 4): item ub has 2, 2, 3, 2, mean pairwise |difference| 0.5.
	if it := rep.ItemAgreement[1]; it.Item != "ub" || it.Labels != 4 || math.Abs(float64(it.Agreement)-0.95) > 1e-12 {
		t.Errorf("item ub: %+v, want agreement 1 - 0.5/10", it)
	}
	if !strings.Contains(rep.AgreementScore, "range 0 to 10") {
		t.Errorf("agreement score %q", rep.AgreementScore)
	}
	bad := krippDataset("ordinal:1..4") // the data hold a 5
	if _, err := Agreement(context.Background(), bad, raters.Options{Bootstrap: -1}); annotations.ErrorCode(err) != annotations.EINVALID {
		t.Errorf("label outside the scheme: %v", err)
	}
	one := &annotations.Dataset{Scheme: annotations.MustParseScheme("nominal:x,y"), Labels: []annotations.Label{{Item: "i", Rater: "r", Value: "x"}}}
	if _, err := Agreement(context.Background(), one, raters.Options{Bootstrap: -1}); annotations.ErrorCode(err) != annotations.EINVALID {
		t.Errorf("one rater: %v", err)
	}
}

// TestPlanBootstrap: explicit requests over the bound are refused naming
// the limit; the default is reduced to fit, or to analytic intervals.
func TestPlanBootstrap(t *testing.T) {
	s, err := annotations.ParseScheme("ordinal:1..3")
	if err != nil {
		t.Fatal(err)
	}
	ds := &annotations.Dataset{Scheme: s}
	for i := range 10 {
		for _, r := range []string{"a", "b", "c"} {
			ds.Labels = append(ds.Labels, annotations.Label{Item: fmt.Sprint(i), Rater: r, Value: "1"})
		}
	}
	if w := BootstrapWork(ds); w != 60 { // 10 items × (3 labels + 3 pairs)
		t.Fatalf("BootstrapWork = %d, want 60", w)
	}
	for _, c := range []struct {
		req      int
		explicit bool
		max      int64
		want     int
		note     string
		err      string
	}{
		{1000, true, 0, 1000, "", ""},
		{-1, true, 10, -1, "", ""},
		{1000, true, 60000, 1000, "", ""},
		{1000, true, 59999, 0, "", "exceed the limit of 59999 per analysis; ask for bootstrap=999 or fewer"},
		{1000, true, 59, 0, "", "ask for bootstrap=0 for analytic intervals"},
		{1000, false, 30000, 500, "bootstrap reduced from 1000 to 500 replicates", ""},
		{1000, false, 5999, -1, "no bootstrap intervals", ""},
	} {
		got, note, err := PlanBootstrap(ds, c.req, c.explicit, c.max)
		if c.err != "" {
			if annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(err.Error(), c.err) {
				t.Errorf("PlanBootstrap(%d, %v, %d) error %v, want one with %q", c.req, c.explicit, c.max, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want || !strings.Contains(note, c.note) || (c.note == "") != (note == "") {
			t.Errorf("PlanBootstrap(%d, %v, %d) = %d, %q, %v; want %d, %q", c.req, c.explicit, c.max, got, note, err, c.want, c.note)
		}
	}
}
