package raters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SkillOptions control ZeroBasedSkill, GoldMajorityVote and KOS. The zero
// value gives crowd-kit 1.4.1's defaults.
type SkillOptions struct {
	// Values are the numeric values of the K classes, for the consensus
	// Score; nil means 1..K.
	Values []float64
	// Ties and TieOrder break ties of the weighted votes, as in
	// MVOptions (crowd-kit: TieFirst in sorted class order).
	Ties     TieRule
	TieOrder []int
	// Iterations bounds ZeroBasedSkill's and KOS's iterations (0: 100,
	// crowd-kit's default for both).
	Iterations int
	// Seed seeds KOS's random start, rand.New(rand.NewPCG(Seed, 0x6b6f73)).
	Seed uint64
	// RandomStart StartCrowdKit draws KOS's start instead as crowd-kit
	// does: numpy's N(1, 1) after np.random.seed(Seed), one per label in
	// the order given (crowd-kit's data order; see StartCrowdKit).
	RandomStart RandomStart
	// Reliabilities, when not nil, is KOS's start instead: one
	// reliability per label, in the order of the labels given.
	Reliabilities []float64
}

// weightedVote returns each labelled item's class probabilities under
// weighted votes: class c scores Σ_{labels (i, j, c)} skill_j, normalised;
// nil for items without labels or whose raters all weigh 0 (crowd-kit's
// MajorityVote with skills).
func (d *dsData) weightedVote(skill []float64) [][]float64 {
	return d.weightedVoteTo(make([][]float64, d.n), make([]float64, d.n*d.k), skill)
}

// weightedVoteTo is weightedVote into caller-owned probs (len n) and buf
// (len n·k).
func (d *dsData) weightedVoteTo(probs [][]float64, buf, skill []float64) [][]float64 {
	clear(buf)
	for i, ls := range d.byItem {
		probs[i] = nil
		if len(ls) == 0 {
			continue
		}
		p := buf[i*d.k : (i+1)*d.k : (i+1)*d.k]
		for _, l := range ls {
			if w := skill[l.Rater]; !math.IsNaN(w) {
				p[l.Class] += w
			}
		}
		s := sum(p)
		if s == 0 || math.IsNaN(s) {
			continue
		}
		for c := range p {
			p[c] /= s
		}
		probs[i] = p
	}
	return probs
}

// repeats marks the labels that repeat an earlier identical label (same
// item, rater and class), in d.byItem's layout.
func (d *dsData) repeats() [][]bool {
	out := make([][]bool, d.n)
	seen := map[[2]int]bool{}
	for i, ls := range d.byItem {
		if len(ls) < 2 {
			continue
		}
		clear(seen)
		for x, l := range ls {
			key := [2]int{l.Rater, l.Class}
			if seen[key] {
				if out[i] == nil {
					out[i] = make([]bool, len(ls))
				}
				out[i][x] = true
			}
			seen[key] = true
		}
	}
	return out
}

// accuracyAgainst is crowd-kit's get_accuracy by worker: the share of each
// rater's distinct (item, class) labels on items with a reference class
// (truth[i] >= 0) that equal it (a rater's repeated identical label of an
// item, marked in rep, counts once); NaN for raters without such labels.
func (d *dsData) accuracyAgainst(truth []int, rep [][]bool) []float64 {
	hit := make([]float64, d.r)
	n := make([]float64, d.r)
	for i, ls := range d.byItem {
		if truth[i] < 0 {
			continue
		}
		for x, l := range ls {
			if rep[i] != nil && rep[i][x] {
				continue
			}
			n[l.Rater]++
			if l.Class == truth[i] {
				hit[l.Rater]++
			}
		}
	}
	acc := make([]float64, d.r)
	for j := range acc {
		acc[j] = math.NaN()
		if n[j] > 0 {
			acc[j] = hit[j] / n[j]
		}
	}
	return acc
}

// classesOf sets out[i] to item i's most probable class (ties by total),
// -1 for items without probabilities, and returns out.
func classesOf(out []int, probs [][]float64, total []int) []int {
	for i, p := range probs {
		out[i] = -1
		if p != nil {
			out[i], _ = argmaxTies(p, total)
		}
	}
	return out
}

// skillConsensus is labelConsensus with each rater's Skill of kind.
func (d *dsData) skillConsensus(method, kind string, probs [][]float64, total []int, values []float64, skill []float64) *Consensus {
	c := d.labelConsensus(method, probs, total, values)
	for j := range c.Raters {
		c.Raters[j].Skill, c.Raters[j].SkillKind = skill[j], kind
		if d.nr[j] == 0 {
			c.Raters[j].Skill = math.NaN()
		}
	}
	return c
}

// ZeroBasedSkill is crowd-kit's Zero-Based Skill aggregator: every rater
// starts with skill 1/K' + 1e-5 (K' the classes that occur); each of
// Iterations (100) rounds takes the skill-weighted majority vote and moves
// each skill towards the rater's accuracy against it, s_j += η (a_j - s_j),
// the learning rate η starting at 1 and halved every 20 rounds (a round
// that gives the previous round's classes and moves no skill by more than
// 1e-15 is a fixed point to rounding, where it stops: the rest would
// repeat it); the consensus is the weighted vote under the final
// skills (Skill, kind "skill"). Accuracies are crowd-kit's get_accuracy (a rater's repeated
// identical label of an item counts once). It returns an error without
// labels or with fewer than 2 classes.
func ZeroBasedSkill(labels []Label, items, raters, k int, o SkillOptions) (*Consensus, error) {
	d, err := newAggregatorData("Zero-Based Skill", labels, items, raters, k, o.Values)
	if err != nil {
		return nil, err
	}
	total := tiePriority(o.Ties, o.TieOrder, d.classTotals())
	used := 0
	for _, t := range d.classTotals() {
		if t > 0 {
			used++
		}
	}
	skill := make([]float64, d.r)
	for j := range skill {
		skill[j] = 1/float64(used) + 1e-5
	}
	iters := o.Iterations
	if iters <= 0 {
		iters = 100
	}
	lr := 1.0
	rep := d.repeats()
	probs, buf, cls := make([][]float64, d.n), make([]float64, d.n*d.k), make([]int, d.n)
	var prev []int
	for it := 1; it <= iters; it++ {
		if it%20 == 0 {
			lr *= 0.5
		}
		acc := d.accuracyAgainst(classesOf(cls, d.weightedVoteTo(probs, buf, skill), total), rep)
		moved := 0.0
		for j := range skill {
			if !math.IsNaN(acc[j]) {
				next := skill[j] + lr*(acc[j]-skill[j])
				moved = math.Max(moved, math.Abs(next-skill[j]))
				skill[j] = next
			}
		}
		if moved <= 1e-15 && slices.Equal(cls, prev) {
			break // a fixed point (to rounding): later rounds repeat this one
		}
		prev = append(prev[:0], cls...)
	}
	return d.skillConsensus("zero_based_skill", "skill", d.weightedVote(skill), total, o.Values, skill), nil
}

// GoldMajorityVote is crowd-kit's Gold Majority Vote: each rater's skill
// is the accuracy of the rater's labels on the items with a known class
// (gold[i] >= 0; get_accuracy, repeated identical labels counting once),
// and the consensus the skill-weighted majority vote of every item (Skill,
// kind "gold accuracy"). Raters without a labelled gold item have no skill
// and no vote (crowd-kit refuses them by default), and an item only they
// labelled has no consensus. It returns an error without labels or gold
// items.
func GoldMajorityVote(labels []Label, items, raters, k int, gold []int, o SkillOptions) (*Consensus, error) {
	d, err := newAggregatorData("gold majority vote", labels, items, raters, k, o.Values)
	if err != nil {
		return nil, err
	}
	if len(gold) != items {
		panic(fmt.Sprintf("raters: %d gold classes for %d items", len(gold), items))
	}
	known := 0
	for i, g := range gold {
		if g >= k {
			panic(fmt.Sprintf("raters: gold class %d of item %d out of range", g, i))
		}
		if g >= 0 && len(d.byItem[i]) > 0 {
			known++
		}
	}
	if known == 0 {
		return nil, errors.New("raters: gold majority vote needs labelled items with a known class")
	}
	total := tiePriority(o.Ties, o.TieOrder, d.classTotals())
	skill := d.accuracyAgainst(gold, d.repeats())
	return d.skillConsensus("gold_majority", "gold accuracy", d.weightedVote(skill), total, o.Values, skill), nil
}

// kosMax is crowd-kit's bound on KOS's messages: past it the iterations
// stop (before the overflow).
const kosMax = 1e300

// KOS is crowd-kit's KOS aggregator (Karger, Oh & Shah 2011, iterative
// learning by message passing) for two classes: the first class in label
// order counts as +1, the other as -1; each label (edge) starts with a
// reliability drawn from N(1, 1) (seeded by o.Seed); each of Iterations
// (100) rounds sends each edge the item's sum of the other edges' label ×
// reliability, then the rater's sum of the other edges' label × item
// message, stopping early when a sum passes 1e300; an item's class is the
// sign of Σ label × reliability (a zero sum is a tie, broken by the tie
// rule). Probs are the decision (1 for the class, or 1/2 each on a tie);
// Skill is the rater's mean reliability (kind "reliability"). It returns
// an error unless exactly 2 classes occur.
func KOS(labels []Label, items, raters, k int, o SkillOptions) (*Consensus, error) {
	d, err := newAggregatorData("KOS", labels, items, raters, k, o.Values)
	if err != nil {
		return nil, err
	}
	cls := []int{}
	seen := make([]bool, k)
	for _, l := range labels {
		if !seen[l.Class] {
			seen[l.Class] = true
			cls = append(cls, l.Class)
		}
	}
	if len(cls) != 2 {
		return nil, fmt.Errorf("raters: KOS is for two classes, and %d occur", len(cls))
	}
	y := make([]float64, len(labels))
	for e, l := range labels {
		y[e] = 1
		if l.Class == cls[1] {
			y[e] = -1
		}
	}
	rel := make([]float64, len(labels))
	o.RandomStart.check(o.Seed)
	switch {
	case o.Reliabilities != nil:
		if len(o.Reliabilities) != len(labels) {
			panic(fmt.Sprintf("raters: %d KOS reliabilities for %d labels", len(o.Reliabilities), len(labels)))
		}
		copy(rel, o.Reliabilities)
	case o.RandomStart == StartCrowdKit:
		copy(rel, crowdKitNormals(len(labels), o.Seed))
	default:
		rnd := rand.New(rand.NewPCG(o.Seed, 0x6b6f73))
		for e := range rel {
			rel[e] = 1 + rnd.NormFloat64()
		}
	}
	iters := o.Iterations
	if iters <= 0 {
		iters = 100
	}
	kosIterate(labels, items, raters, y, rel, iters)
	score := make([]float64, items)
	for e, l := range labels {
		score[l.Item] += y[e] * rel[e]
	}
	probs := make([][]float64, items)
	for i := range probs {
		if len(d.byItem[i]) == 0 {
			continue
		}
		probs[i] = make([]float64, k)
		switch {
		case score[i] > 0:
			probs[i][cls[0]] = 1
		case score[i] < 0:
			probs[i][cls[1]] = 1
		default:
			probs[i][cls[0]], probs[i][cls[1]] = 0.5, 0.5
		}
	}
	mean := make([]float64, raters)
	for e, l := range labels {
		mean[l.Rater] += rel[e] / float64(d.nr[l.Rater])
	}
	total := tiePriority(o.Ties, o.TieOrder, d.classTotals())
	return d.skillConsensus("kos", "reliability", probs, total, o.Values, mean), nil
}

// kosIterate runs KOS's message passing on the edges (labels) with signs y,
// updating the reliabilities rel in place.
func kosIterate(labels []Label, items, raters int, y, rel []float64, iters int) {
	taskSum := make([]float64, items)
	workerSum := make([]float64, raters)
	inferred := make([]float64, len(labels))
	over := func(s []float64) bool {
		for _, v := range s {
			if math.Abs(v) > kosMax {
				return true
			}
		}
		return false
	}
	// pass is one half of an iteration: the messages in of the edges are
	// summed per node (a label's item or rater) into sums, and each edge
	// gets its node's sum without its own message in out; false when a
	// sum exceeds kosMax.
	pass := func(sums []float64, node func(Label) int, in, out []float64) bool {
		clear(sums)
		for e, l := range labels {
			sums[node(l)] += y[e] * in[e]
		}
		if over(sums) {
			return false
		}
		for e, l := range labels {
			out[e] = sums[node(l)] - y[e]*in[e]
		}
		return true
	}
	itemOf := func(l Label) int { return l.Item }
	raterOf := func(l Label) int { return l.Rater }
	for it := 0; it < iters; it++ {
		if !pass(taskSum, itemOf, rel, inferred) || !pass(workerSum, raterOf, inferred, rel) {
			return
		}
	}
}

// skillAggregators are the report's aggregators of this file.
func skillAggregators() []aggregatorRun {
	return []aggregatorRun{
		{"zero_based_skill", "Zero-Based Skill", func(_ context.Context, in *aggInput) (*Consensus, error) {
			return ZeroBasedSkill(in.labels, in.r.Items, in.r.Raters, in.r.K, in.skillOptions())
		}},
		{"kos", "KOS", func(_ context.Context, in *aggInput) (*Consensus, error) {
			if in.r.K != 2 {
				return nil, nil // two classes only: not applicable
			}
			return KOS(in.startLabels(), in.r.Items, in.r.Raters, in.r.K, in.skillOptions())
		}},
		{"gold_majority", "gold majority vote", func(_ context.Context, in *aggInput) (*Consensus, error) {
			if !hasGold(in.o.Gold) {
				return nil, nil // no gold items: not applicable
			}
			return GoldMajorityVote(in.labels, in.r.Items, in.r.Raters, in.r.K, in.o.Gold, in.skillOptions())
		}},
	}
}

// startLabels are the labels of the aggregators with a random start (M-MSR,
// KOS): with StartCrowdKit in the user's data order (Options.DataOrder),
// which crowd-kit's draws follow, otherwise in.labels.
func (in *aggInput) startLabels() []Label {
	if in.o.RandomStart == StartCrowdKit {
		return labelsInDataOrder(in.r, in.o.DataOrder)
	}
	return in.labels
}

func (in *aggInput) skillOptions() SkillOptions {
	return SkillOptions{Values: in.vals, Ties: in.o.Ties, TieOrder: in.o.TieOrder, Seed: in.o.Seed, RandomStart: in.o.RandomStart}
}

func hasGold(gold []int) bool {
	for _, g := range gold {
		if g >= 0 {
			return true
		}
	}
	return false
}
