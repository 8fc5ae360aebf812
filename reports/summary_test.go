package reports

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

func TestSummariseFitScores(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "fit_sirt_k1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res multirater.FitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	scheme := annotations.MustParseScheme("ordinal:0..3")
	sum := SummariseFit(&res, scheme)
	if sum.Shape != multirater.OutputScores || sum.Classes != nil || sum.Uncertain != nil || sum.MeanEntropy != nil {
		t.Fatalf("scores fit summarised as classes: %+v", sum)
	}
	if sum.Items != len(res.Items) || sum.Raters != len(res.Raters) || sum.Flags != len(res.Flags) || sum.Verdict != res.Diagnostics.Verdict {
		t.Errorf("counts or verdict: %+v", sum)
	}
	items, labels := 0, 0
	for _, g := range sum.Grades {
		items += g.Items
		labels += g.Labels
	}
	if items != sum.Items || labels != sum.Labels || labels == 0 {
		t.Errorf("grades count %d items and %d labels, want %d and %d", items, labels, sum.Items, sum.Labels)
	}
	if len(sum.Ranking) != len(res.Items) || len(sum.Top) != SummaryTop {
		t.Fatalf("%d ranked items, %d top", len(sum.Ranking), len(sum.Top))
	}
	for i, it := range sum.Ranking[1:] {
		if prev := sum.Ranking[i]; it.Rank != nil && (prev.Rank == nil || prev.Rank.Mean > it.Rank.Mean) {
			t.Fatalf("ranking out of order at %d", i+1)
		}
	}
	for i, top := range sum.Top {
		if top.ID != sum.Ranking[i].ID || top.Rank != sum.Ranking[i].Rank.Mean {
			t.Errorf("top %d = %+v, ranking has %s", i, top, sum.Ranking[i].ID)
		}
	}
	for i := 1; i < len(sum.ByPrecision); i++ {
		if sum.ByPrecision[i-1].Precision.Mean < sum.ByPrecision[i].Precision.Mean {
			t.Fatalf("raters out of precision order at %d", i)
		}
	}
	// The API's JSON names no internal ordering.
	b, _ := json.Marshal(sum)
	var fields map[string]any
	_ = json.Unmarshal(b, &fields)
	for _, k := range []string{"Shape", "Ranking", "Uncertain", "ByPrecision", "classes", "mean_entropy"} {
		if _, ok := fields[k]; ok {
			t.Errorf("JSON has %q", k)
		}
	}
}

func TestSummariseFitClasses(t *testing.T) {
	h := 0.5
	res := &multirater.FitResult{
		Model:  multirater.ModelSettings{Model: "classification"},
		Levels: []string{"a", "b"},
		Items: []multirater.ItemResult{
			{ID: "x", NLabels: 2, Class: "a", ClassProbs: map[string]float64{"a": 0.9, "b": 0.1}, Entropy: &h},
			{ID: "y", NLabels: 0, Class: "b", ClassProbs: map[string]float64{"a": 0.3, "b": 0.7}},
			{ID: "z", NLabels: 1, Class: "b", ClassProbs: map[string]float64{"a": 0.2, "b": 0.8}, Entropy: &h},
		},
		Raters: []multirater.RaterResult{{ID: "r", NLabels: 3, LevelCounts: []int{1, 2}}},
	}
	sum := SummariseFit(res, annotations.Scheme{})
	if sum.Shape != multirater.OutputClasses || sum.Grades != nil || sum.Ranking != nil || sum.Top != nil {
		t.Fatalf("classes fit summarised as scores: %+v", sum)
	}
	if sum.Predicted != 1 || sum.Labels != 3 || sum.MeanEntropy == nil || *sum.MeanEntropy != 0.5 {
		t.Errorf("summary %+v", sum)
	}
	if c := sum.Classes; len(c) != 2 || c[0].Items != 1 || c[1].Items != 2 || c[0].Labels != 1 || c[1].Labels != 2 || math.Abs(c[1].ProbSum-1.6) > 1e-12 {
		t.Errorf("classes %+v", c)
	}
	if u := sum.Uncertain; len(u) != 3 || u[0].ID != "x" || u[1].ID != "z" || u[2].ID != "y" {
		t.Errorf("uncertain order %v", u)
	}
}
