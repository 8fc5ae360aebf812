package analysis

import (
	"math"
	"strings"
	"testing"

	"concord/multirater"
)

// TestNextItems checks the two scores against numpy/scipy
// (testdata/next_reference.py): a rater with a confusion matrix (the
// confusion model) and a one-coin rater (another model, the rater's
// agreement with the consensus as accuracy), from the fit alone (items
// without their labels) and averaged with the class-symmetric model
// (items with their labels); and the ranking, the pool and the errors.
func TestNextItems(t *testing.T) {
	conf := func(rows ...[]float64) [][]multirater.Estimate {
		out := make([][]multirater.Estimate, len(rows))
		for k, r := range rows {
			for _, v := range r {
				out[k] = append(out[k], multirater.Estimate{Mean: v})
			}
		}
		return out
	}
	agree, agree2 := 0.75, 0.6
	tests := []struct {
		name       string
		res        *multirater.FitResult
		info, acc  float64
		wantOneCon bool
		wantSym    bool
	}{
		{"confusion", &multirater.FitResult{
			Model:  multirater.ModelSettings{Model: ModelConfusion, Output: multirater.OutputClasses},
			Levels: []string{"a", "b"},
			Items:  []multirater.ItemResult{{ID: "i", NLabels: 1, ClassProbs: map[string]float64{"a": 0.6, "b": 0.4}}},
			Raters: []multirater.RaterResult{{ID: "r", NLabels: 3, ConfusionProbs: conf([]float64{0.8, 0.2}, []float64{0.3, 0.7})}},
		}, 0.18527737782997433, 0.16000000000000003, false, false},
		{"one-coin", &multirater.FitResult{
			Model:  multirater.ModelSettings{Model: ModelClassification, Output: multirater.OutputClasses},
			Levels: []string{"a", "b", "c"},
			Items:  []multirater.ItemResult{{ID: "i", NLabels: 2, ClassProbs: map[string]float64{"a": 0.5, "b": 0.3, "c": 0.2}}},
			Raters: []multirater.RaterResult{{ID: "r", NLabels: 3, ConsensusAgreement: &agree}},
		}, 0.48490156748836477, 0.25, true, false},
		{"confusion, symmetric model too", &multirater.FitResult{
			Model:  multirater.ModelSettings{Model: ModelConfusion, Output: multirater.OutputClasses},
			Levels: []string{"a", "b"},
			Items:  []multirater.ItemResult{{ID: "i", NLabels: 1, Labels: map[string]string{"r": "a"}, ClassProbs: map[string]float64{"a": 0.6, "b": 0.4}}},
			Raters: []multirater.RaterResult{{ID: "r", NLabels: 3, ConfusionProbs: conf([]float64{0.8, 0.2}, []float64{0.3, 0.7})}},
		}, 0.16421662814790322, 0.08000000000000002, false, true},
		{"one-coin, symmetric model too", &multirater.FitResult{
			Model:  multirater.ModelSettings{Model: ModelClassification, Output: multirater.OutputClasses},
			Levels: []string{"a", "b", "c"},
			Items:  []multirater.ItemResult{{ID: "i", NLabels: 2, Labels: map[string]string{"r1": "a", "r2": "b"}, ClassProbs: map[string]float64{"a": 0.5, "b": 0.3, "c": 0.2}}},
			Raters: []multirater.RaterResult{{ID: "r1", NLabels: 3, ConsensusAgreement: &agree}, {ID: "r2", NLabels: 1, ConsensusAgreement: &agree2}},
		}, 0.3838701244513366, 0.17, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, by := range []string{"", NextByAccuracy} {
				next, err := NextItems(tt.res, NextOptions{By: by})
				if err != nil {
					t.Fatal(err)
				}
				it := next.Items[0]
				if math.Abs(it.Information-tt.info) > 1e-12 || math.Abs(it.Accuracy-tt.acc) > 1e-12 {
					t.Errorf("information %v, accuracy %v; want %v, %v", it.Information, it.Accuracy, tt.info, tt.acc)
				}
				want := tt.info
				if by == NextByAccuracy {
					want = tt.acc
				}
				if math.Abs(it.Score-want) > 1e-12 || it.Consensus != "a" || !strings.Contains(it.Why, "P(a)") {
					t.Errorf("by %q: %+v", by, it)
				}
				notes := strings.Join(next.Notes, "\n")
				if oneCoin := strings.Contains(notes, "no confusion matrices"); oneCoin != tt.wantOneCon {
					t.Errorf("notes %v", next.Notes)
				}
				if sym := strings.Contains(notes, "class-symmetric"); sym != tt.wantSym {
					t.Errorf("notes %v", next.Notes)
				}
			}
		})
	}
}

// TestNextItemsRanking: a certain item ranks below an uncertain one, and
// the pool weights raters.
func TestNextItemsRanking(t *testing.T) {
	good := [][]multirater.Estimate{{{Mean: 0.9}, {Mean: 0.1}}, {{Mean: 0.1}, {Mean: 0.9}}}
	spam := [][]multirater.Estimate{{{Mean: 0.5}, {Mean: 0.5}}, {{Mean: 0.5}, {Mean: 0.5}}}
	res := &multirater.FitResult{
		Model:  multirater.ModelSettings{Model: ModelConfusion, Output: multirater.OutputClasses},
		Levels: []string{"a", "b"},
		Items: []multirater.ItemResult{
			{ID: "sure", NLabels: 5, ClassProbs: map[string]float64{"a": 0.99, "b": 0.01}},
			{ID: "open", NLabels: 1, ClassProbs: map[string]float64{"a": 0.55, "b": 0.45}},
			{ID: "new", ClassProbs: map[string]float64{"a": 0.7, "b": 0.3}},
		},
		Raters: []multirater.RaterResult{{ID: "good", NLabels: 10, ConfusionProbs: good}, {ID: "spammer", NLabels: 10, ConfusionProbs: spam}},
	}
	next, err := NextItems(res, NextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, it := range next.Items {
		order = append(order, it.ID)
	}
	if got := strings.Join(order, ","); got != "open,new,sure" || next.Total != 3 {
		t.Errorf("order %s", got)
	}
	// A spammer's label tells nothing.
	sp, err := NextItems(res, NextOptions{Pool: []string{"spammer"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range sp.Items {
		if it.Information > 1e-12 || it.Accuracy > 1e-12 {
			t.Errorf("spammer pool: %+v", it)
		}
	}
	// Half the pool is the spammer: half the information of the good rater.
	g, _ := NextItems(res, NextOptions{Pool: []string{"good"}})
	if math.Abs(next.Items[0].Information-g.Items[0].Information/2) > 1e-12 {
		t.Errorf("any rater %v, good rater alone %v", next.Items[0].Information, g.Items[0].Information)
	}
	for _, c := range []struct {
		o    NextOptions
		want string
	}{
		{NextOptions{Pool: []string{"nobody"}}, `rater "nobody" has no labels`},
		{NextOptions{By: "luck"}, "expected information or accuracy"},
	} {
		if _, err := NextItems(res, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	res.Model.Output = multirater.OutputValues
	if _, err := NextItems(res, NextOptions{}); err == nil || !strings.Contains(err.Error(), "grades or classes") {
		t.Errorf("values: %v", err)
	}
}

// TestNextItemsSymmetric: an item whose one label is of the class the fit
// favours, and which the fit therefore calls near certain, ranks above an
// item with three agreeing labels once the class-symmetric model takes
// part (one label of a rater of accuracy 0.75 settles it at 0.75, three at
// 0.964); without its labels (a fit document that lacks them) the fit
// alone ranks, the other way round. The symmetric posterior does not
// depend on the map's order: the scores repeat exactly.
func TestNextItemsSymmetric(t *testing.T) {
	conf := [][]multirater.Estimate{{{Mean: 0.8}, {Mean: 0.2}}, {{Mean: 0.3}, {Mean: 0.7}}}
	build := func(withLabels bool) *multirater.FitResult {
		res := &multirater.FitResult{
			Model:  multirater.ModelSettings{Model: ModelConfusion, Output: multirater.OutputClasses},
			Levels: []string{"a", "b"},
			Items: []multirater.ItemResult{
				{ID: "three", NLabels: 3, Labels: map[string]string{"r1": "a", "r2": "a", "r3": "a"}, ClassProbs: map[string]float64{"a": 0.98, "b": 0.02}},
				{ID: "one", NLabels: 1, Labels: map[string]string{"r1": "a"}, ClassProbs: map[string]float64{"a": 0.99, "b": 0.01}},
			},
		}
		for _, id := range []string{"r1", "r2", "r3"} {
			res.Raters = append(res.Raters, multirater.RaterResult{ID: id, NLabels: 10, ConfusionProbs: conf})
		}
		if !withLabels {
			for i := range res.Items {
				res.Items[i].Labels = nil
			}
		}
		return res
	}
	for _, tt := range []struct {
		labels bool
		want   string
	}{{true, "one,three"}, {false, "three,one"}} {
		var first []float64
		for rep := 0; rep < 20; rep++ {
			next, err := NextItems(build(tt.labels), NextOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var order []string
			var scores []float64
			for _, it := range next.Items {
				order = append(order, it.ID)
				scores = append(scores, it.Score)
			}
			if got := strings.Join(order, ","); got != tt.want {
				t.Fatalf("labels %v: order %s, want %s", tt.labels, got, tt.want)
			}
			if first == nil {
				first = scores
			} else if scores[0] != first[0] || scores[1] != first[1] {
				t.Fatalf("labels %v: scores %v then %v", tt.labels, first, scores)
			}
		}
	}
}
