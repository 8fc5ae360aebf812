package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"concord/multirater"
)

func scoreItem(id string, m float64) multirater.ItemResult {
	return multirater.ItemResult{ID: id, Score: &multirater.Estimate{Mean: m}}
}

// TestConsensusPairsByID: the second fit's items are matched to the
// first's by id, whatever their order, and a class output contributes the
// positive class's probability.
func TestConsensusPairsByID(t *testing.T) {
	gold := map[string]truth{"a": {"1", 0.5}, "b": {"0", -1}, "c": {"1", 2}}
	approx := &multirater.FitResult{Items: []multirater.ItemResult{scoreItem("a", 0.3), scoreItem("b", -0.7), scoreItem("c", 1.1)}}
	exact := &multirater.FitResult{Items: []multirater.ItemResult{
		{ID: "c", ClassProbs: map[string]float64{"0": 0.1, "1": 0.9}},
		{ID: "a", ClassProbs: map[string]float64{"0": 0.4, "1": 0.6}},
		{ID: "b", ClassProbs: map[string]float64{"0": 0.8, "1": 0.2}},
	}}
	got, err := consensus([2]*multirater.FitResult{approx, exact}, gold)
	if err != nil {
		t.Fatal(err)
	}
	want := [2][]float64{{0.3, -0.7, 1.1}, {0.6, 0.2, 0.9}}
	for k := range want {
		for i := range want[k] {
			if got[k][i] != want[k][i] {
				t.Errorf("fit %d item %d: score %v, want %v", k, i, got[k][i], want[k][i])
			}
		}
	}
}

// TestConsensusErrors: fits of different items, an item missing from the
// gold file and an item without a consensus are errors that name them.
func TestConsensusErrors(t *testing.T) {
	gold := map[string]truth{"a": {"1", 1}, "b": {"0", -1}}
	one := &multirater.FitResult{Items: []multirater.ItemResult{scoreItem("a", 1)}}
	cases := []struct {
		name   string
		fits   [2]*multirater.FitResult
		substr string
	}{
		{"sizes", [2]*multirater.FitResult{one, {Items: []multirater.ItemResult{scoreItem("a", 1), scoreItem("b", 0)}}}, "1 and 2 items"},
		{"other item", [2]*multirater.FitResult{one, {Items: []multirater.ItemResult{scoreItem("b", 0)}}}, "item a is in the first fit only"},
		{"not in gold", [2]*multirater.FitResult{{Items: []multirater.ItemResult{scoreItem("z", 1)}}, {Items: []multirater.ItemResult{scoreItem("z", 1)}}}, "item z is not in the gold file"},
		{"no consensus", [2]*multirater.FitResult{one, {Items: []multirater.ItemResult{{ID: "a"}}}}, "item a has neither"},
	}
	for _, c := range cases {
		_, err := consensus(c.fits, gold)
		if err == nil || !strings.Contains(err.Error(), c.substr) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.substr)
		}
	}
}

// TestAccuracy: a class output is called by its class, a score output
// positive above 0 (0 itself is negative).
func TestAccuracy(t *testing.T) {
	gold := map[string]truth{"a": {"1", 1}, "b": {"0", -1}, "c": {"1", 0.1}, "d": {"0", -0.2}}
	cases := []struct {
		name string
		fit  *multirater.FitResult
		s    []float64
		want float64
	}{
		{"scores", &multirater.FitResult{Items: []multirater.ItemResult{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}}, []float64{0.4, -0.3, 0, 0.2}, 0.5},
		{"classes", &multirater.FitResult{Items: []multirater.ItemResult{{ID: "a", Class: "1"}, {ID: "b", Class: "1"}, {ID: "c", Class: "1"}, {ID: "d", Class: "0"}}}, []float64{-1, -1, -1, 1}, 0.75},
	}
	for _, c := range cases {
		if got := accuracy(c.fit, c.s, gold); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: accuracy %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReadGold reads the ladder's header and names the file and row of a
// bad latent value or header.
func TestReadGold(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, text, substr string
		n                  int
	}{
		{"ok.csv", "item_id,gold,latent\ni1,1,0.25\ni2,0,-1.5\n", "", 2},
		{"header.csv", "item,gold,latent\ni1,1,0.25\n", "want the header item_id,gold,latent", 0},
		{"latent.csv", "item_id,gold,latent\ni1,1,0.25\ni2,0,x\n", "latent.csv row 3: latent \"x\"", 0},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := readGold(path)
		if c.substr != "" {
			if err == nil || !strings.Contains(err.Error(), c.substr) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.substr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(g) != c.n || g["i2"] != (truth{"0", -1.5}) {
			t.Errorf("%s: %v, want %d items with i2 = {0 -1.5}", c.name, g, c.n)
		}
	}
}
