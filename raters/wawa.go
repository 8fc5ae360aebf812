package raters

import (
	"math"
)

// WawaOptions control Wawa. The zero value gives the documented defaults.
type WawaOptions struct {
	// Values are the numeric values of the K classes, for the consensus
	// Score; nil means 1..K.
	Values []float64
	// Ties and TieOrder are the tie rule of both votes, as in MVOptions;
	// the zero value is the rule described at Wawa.
	Ties     TieRule
	TieOrder []int
}

// Wawa is crowd-kit's Worker Agreement With Aggregate: (1) the majority
// vote of every item; (2) each rater's weight w_j, the share of the rater's
// labels equal to the majority vote of their item; (3) the weighted
// majority vote, class c scoring s_ic = Σ_{labels (i, j, l)} w_j [l = c].
// The item's Probs are s_ic / Σ_c s_ic and its Class the highest score.
// Ties, in either vote, go to the class with the most labels in the whole
// set and then the lowest class index, as in MajorityVote (o.Ties =
// TieFrequent; TieFirst gives them to the first class in o.TieOrder, as
// crowd-kit does); an item whose
// raters all have weight 0 keeps its majority vote shares. Repeated labels
// (a rater labelling an item more than once) count as separate votes.
//
// Each rater's Skill is w_j (SkillKind "weight"); Accuracy, Confusion, MAE
// and Bias are measured against Wawa's consensus, as MajorityVote's are
// against its own. It returns an error without labels or with fewer than 2
// classes, and panics on labels out of range.
func Wawa(labels []Label, items, raters, k int, o WawaOptions) (*Consensus, error) {
	d, err := newAggregatorData("Wawa", labels, items, raters, k, o.Values)
	if err != nil {
		return nil, err
	}
	total := tiePriority(o.Ties, o.TieOrder, d.classTotals())
	mv := make([][]float64, d.n)
	hits := make([]float64, d.r)
	for i, ls := range d.byItem {
		if len(ls) == 0 {
			continue
		}
		mv[i] = make([]float64, k)
		for _, l := range ls {
			mv[i][l.Class]++
		}
		win, _ := argmaxTies(mv[i], total)
		for _, l := range ls {
			if l.Class == win {
				hits[l.Rater]++
			}
		}
	}
	w := make([]float64, d.r)
	for j := range w {
		if d.nr[j] > 0 {
			w[j] = hits[j] / float64(d.nr[j])
		}
	}
	probs := make([][]float64, d.n)
	for i, ls := range d.byItem {
		if len(ls) == 0 {
			continue
		}
		p := make([]float64, k)
		for _, l := range ls {
			p[l.Class] += w[l.Rater]
		}
		if sum(p) == 0 {
			copy(p, mv[i])
		}
		s := sum(p)
		for c := range p {
			p[c] /= s
		}
		probs[i] = p
	}
	c := d.labelConsensus("wawa", probs, total, o.Values)
	for j := range c.Raters {
		c.Raters[j].Skill, c.Raters[j].SkillKind = w[j], "weight"
		if d.nr[j] == 0 {
			c.Raters[j].Skill = math.NaN()
		}
	}
	return c, nil
}

func checkValues(v []float64, k int) {
	if v != nil && len(v) != k {
		panic("raters: len(Values) != k")
	}
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// normalize divides row by its sum when that is positive, and reports
// whether it was.
func normalize(row []float64) bool {
	s := sum(row)
	if !(s > 0) {
		return false
	}
	for l := range row {
		row[l] /= s
	}
	return true
}

// classTotals counts the labels of each class.
func (d *dsData) classTotals() []int {
	t := make([]int, d.k)
	for _, ls := range d.byItem {
		for _, l := range ls {
			t[l.Class]++
		}
	}
	return t
}

// argmaxTies returns the index of the largest score and whether other
// classes tie with it (scores within 1e-12 relative): among tied classes
// the one with the larger total wins, then the lowest index.
func argmaxTies(score []float64, total []int) (int, bool) {
	best := 0
	for c := 1; c < len(score); c++ {
		if score[c] > score[best] {
			best = c
		}
	}
	m := score[best]
	tie := false
	win := -1
	for c, s := range score {
		if m-s <= 1e-12*math.Abs(m) {
			if win >= 0 {
				tie = true
			}
			if win < 0 || total[c] > total[win] {
				win = c
			}
		}
	}
	return win, tie
}

// labelConsensus builds an aggregator's Consensus from the item class
// probabilities (nil for items without labels): each item's Class is the
// most probable class (ties as argmaxTies), Score the expected class
// value; each rater's N counts the rater's labels, and Accuracy,
// Confusion, MAE and Bias compare them (repeated labels each counting)
// with the consensus class and score; Priors are the shares of the
// consensus classes.
func (d *dsData) labelConsensus(method string, probs [][]float64, total []int, values []float64) *Consensus {
	k := d.k
	val := func(c int) float64 {
		if values == nil {
			return float64(c + 1)
		}
		return values[c]
	}
	c := &Consensus{Method: method, Items: make([]ItemConsensus, d.n), Raters: make([]RaterQuality, d.r), Priors: make([]float64, k)}
	labelled := 0
	for i, p := range probs {
		it := ItemConsensus{Class: -1, Score: math.NaN(), N: len(d.byItem[i])}
		if p != nil {
			it.Probs = p
			win, tie := argmaxTies(p, total)
			it.Class, it.Tie = win, tie
			if tie {
				c.Ties++
			}
			it.Score = 0
			for x, q := range p {
				it.Score += q * val(x)
			}
			c.Priors[win]++
			labelled++
		}
		c.Items[i] = it
	}
	if labelled > 0 {
		for x := range c.Priors {
			c.Priors[x] /= float64(labelled)
		}
	}
	hit := make([]float64, d.r)
	ad := make([]float64, d.r)
	sd := make([]float64, d.r)
	conf := make([][]float64, d.r)
	for j := range conf {
		conf[j] = make([]float64, k*k)
	}
	for i, ls := range d.byItem {
		it := c.Items[i]
		if it.Class < 0 {
			continue // no consensus (every vote weighs 0 or nothing)
		}
		for _, l := range ls {
			if l.Class == it.Class {
				hit[l.Rater]++
			}
			conf[l.Rater][it.Class*k+l.Class]++
			x := val(l.Class) - it.Score
			ad[l.Rater] += math.Abs(x)
			sd[l.Rater] += x
		}
	}
	for j := range c.Raters {
		q := RaterQuality{N: d.nr[j], Accuracy: math.NaN(), MAE: math.NaN(), Bias: math.NaN()}
		if q.N > 0 {
			n := float64(q.N)
			q.Accuracy, q.MAE, q.Bias = hit[j]/n, ad[j]/n, sd[j]/n
			q.Confusion = make([][]float64, k)
			for a := range q.Confusion {
				row := conf[j][a*k : (a+1)*k]
				s := sum(row)
				q.Confusion[a] = make([]float64, k)
				if s > 0 {
					for l, x := range row {
						q.Confusion[a][l] = x / s
					}
				}
			}
		}
		c.Raters[j] = q
	}
	return c
}
