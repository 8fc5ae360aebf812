package raters

import (
	"context"
	"math"
	"testing"
)

// TestProbMajorityVote checks the soft votes by hand: item 0 has two
// humans for class 0 and a model saying 1 with p = 0.9 (votes 2.1 against
// 0.9: class 0, where the model's hard vote would not change it either);
// item 1 has one human for 0 and the model saying 1 with p = 0.6 (votes 1.4
// and 0.6: class 0, where the hard votes tie); item 2 has a human for 2
// and a model for 1 with p = 1 (a tie, broken by the tie rule); item 3
// one model label of three classes with p = 0.5 (0.5 and 0.25 each).
func TestProbMajorityVote(t *testing.T) {
	r := NewRatings(4, 3, 3)
	var probs []float64
	add := func(i, j, c int, p float64) {
		r.Add(i, j, float64(c))
		probs = append(probs, p)
	}
	add(0, 0, 0, 0)
	add(0, 1, 0, 0)
	add(0, 2, 1, 0.9)
	add(1, 0, 0, 0)
	add(1, 2, 1, 0.6)
	add(2, 1, 2, 0)
	add(2, 2, 1, 1)
	add(3, 2, 0, 0.5)
	tests := []struct {
		item  int
		class int
		probs []float64
		tie   bool
	}{
		{0, 0, []float64{2.05 / 3, 0.9 / 3, 0.05 / 3}, false},
		{1, 0, []float64{1.2 / 2, 0.6 / 2, 0.2 / 2}, false},
		{2, 1, []float64{0, 0.5, 0.5}, true},
		{3, 0, []float64{0.5, 0.25, 0.25}, false},
	}
	c := ProbMajorityVote(r, probs, MVOptions{})
	if c.Method != "prob_majority" || c.Ties != 1 {
		t.Errorf("method %q, ties %d", c.Method, c.Ties)
	}
	for _, tt := range tests {
		it := c.Items[tt.item]
		if it.Class != tt.class || it.Tie != tt.tie {
			t.Errorf("item %d: class %d tie %v, want %d %v", tt.item, it.Class, it.Tie, tt.class, tt.tie)
		}
		for k, want := range tt.probs {
			if math.Abs(it.Probs[k]-want) > 1e-12 {
				t.Errorf("item %d: probs %v, want %v", tt.item, it.Probs, tt.probs)
				break
			}
		}
	}
	// Without probabilities it is the majority vote.
	mv := MajorityVote(r)
	plain := ProbMajorityVote(r, nil, MVOptions{})
	for i := range mv.Items {
		if mv.Items[i].Class != plain.Items[i].Class || mv.Items[i].Tie != plain.Items[i].Tie {
			t.Errorf("item %d: %+v, majority vote %+v", i, plain.Items[i], mv.Items[i])
		}
	}
	// In the report only when a label has a probability.
	for _, lp := range [][]float64{nil, probs} {
		rep, err := AnalyzeContext(context.Background(), r, Options{Level: Nominal, LabelProbs: lp})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range rep.Aggregators {
			found = found || a.Method == "prob_majority"
		}
		if found != (lp != nil) {
			t.Errorf("LabelProbs %v: prob_majority in the report %v", lp, found)
		}
	}
	for _, bad := range []func(){
		func() { ProbMajorityVote(r, probs[:2], MVOptions{}) },
		func() { ProbMajorityVote(r, []float64{0, 0, 1.5, 0, 0, 0, 0, 0}, MVOptions{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			bad()
		}()
	}
}
