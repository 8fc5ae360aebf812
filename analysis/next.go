package analysis

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"concord/annotations"
	"concord/multirater"
)

// Which items need another label (the coordinator's loop): every item of a
// fit of grades or classes is scored by what one more label would tell
// about its consensus, from the fit's own posteriors. Item n's consensus
// distribution is q (the fit's class or grade probabilities); a label from
// rater l of an item of class k is j with probability pi_l[k, j], the
// rater's confusion matrix (the confusion model's posterior mean; for
// other models the one-coin matrix of the rater's agreement with the
// consensus, a on the diagonal and (1 - a)/(K - 1) elsewhere). The label
// y has the predictive p(y) = sum_k q_k pi_l[k, y], and the class's
// posterior after it is q'_k ∝ q_k pi_l[k, y]. Two scores, averaged over
// who labels next (the pool, each rater weighted by their share of the
// labels, or the named raters equally):
//
//	information   I(z; y) = H(q) - sum_y p(y) H(q'(y))   (bits)
//	accuracy      sum_y max_k q_k pi_l[k, y] - max_k q_k
//
// the mutual information between the label and the class, and the
// expected gain in the probability that the consensus is right (zero
// where no single label can change the consensus, so that many items tie;
// the information ranks them all). Unlabelled items count too: their q is
// the fit's prediction.
//
// For a fit of classes whose items carry their labels, both scores are
// the average, with equal weights, over two rater models: the fit's (q and
// pi_l above) and the class-symmetric one-coin model, in which every class
// is equally likely a priori and rater l's label is right with a_l, their
// accuracy averaged over the classes (the mean of the confusion matrix's
// diagonal; other models: their agreement with the consensus), and wrong
// uniformly otherwise; under it the item's classes are
//
//	q^s_k ∝ prod_{labels y of the item} (a_l if y = k, else (1 - a_l)/(K - 1))
//
// and the next label's channel is that one-coin matrix. Why: the fit's
// class proportions and the asymmetric parts of its confusion matrices are
// learnt from the labels the ranking chose. An item whose one label is of
// a class the fit favours looks certain and gets no second label, so the
// labels that would show the fit wrong are never asked for (replaying RTE,
// docs/scripts/next: in one order of ten the proportions went to
// 0.70/0.30 against gold's 0.50/0.50 and the consensus ended 0.07 below
// spreading the labels evenly). The symmetric model has no such parts: an
// item counts as settled only as far as its raters' accuracies say, and
// every class's labels get checked; the fit's model keeps what it knows
// where it is right (imbalanced classes). This is the expected value of
// one more label under a two-point posterior over the rater model, equal
// weights.

// Next ranking scores.
const (
	NextByInformation = "information"
	NextByAccuracy    = "accuracy"
)

// DefaultNextN is the number of items NextItems returns by default.
const DefaultNextN = 20

// MaxNextPool bounds the raters averaged over for "any rater": the most
// active ones, which label most of what comes next.
const MaxNextPool = 64

// NextOptions control NextItems; the zero value means the defaults.
type NextOptions struct {
	// N is the number of items to return (0: DefaultNextN; negative:
	// every item).
	N int
	// Pool names the raters who may label next (nil: any rater, each
	// weighted by their share of the labels, the MaxNextPool most active).
	Pool []string
	// By is NextByInformation (default) or NextByAccuracy.
	By string
}

// NextItem is one item to label next.
type NextItem struct {
	ID string `json:"id"`
	// Score is the ranking score (bits of information, or the expected
	// gain in accuracy); Information and Accuracy are both.
	Score       float64 `json:"score"`
	Information float64 `json:"information"`
	Accuracy    float64 `json:"accuracy_gain"`
	// Consensus is the item's consensus grade or class, Prob its
	// probability, NLabels its labels so far.
	Consensus string  `json:"consensus"`
	Prob      float64 `json:"prob"`
	NLabels   int     `json:"n_labels"`
	// Why says it in words.
	Why string `json:"why"`
}

// NextResult is the ranking: best first.
type NextResult struct {
	Schema string `json:"schema"`
	// By is the score; Pool says who is expected to label next.
	By   string `json:"by"`
	Pool string `json:"pool"`
	// Items are the N best, of Total items scored.
	Items []NextItem `json:"items"`
	Total int        `json:"total"`
	Notes []string   `json:"notes,omitempty"`
}

// NextSchema names the document.
const NextSchema = "concord.next/v1"

// nextChannel is a rater of the pool: the weight of their labelling next
// and their confusion matrix (k×k, row c the label distribution of class c).
type nextChannel struct {
	w  float64
	pi []float64
}

// nextPool returns the raters of the pool (the named ones, else every
// rater with labels, the MaxNextPool most active), what the pool is in
// words, and notes.
func nextPool(res *multirater.FitResult, named []string) (chosen []int, pool string, notes []string, err error) {
	byID := make(map[string]int, len(res.Raters))
	for l, r := range res.Raters {
		byID[r.ID] = l
	}
	if len(named) > 0 {
		for _, id := range named {
			l, ok := byID[id]
			if !ok {
				return nil, "", nil, annotations.Errorf(annotations.EINVALID, "--pool: rater %q has no labels in the fit", id)
			}
			chosen = append(chosen, l)
		}
		return chosen, fmt.Sprintf("the %d named raters, equally likely", len(chosen)), nil, nil
	}
	for l := range res.Raters {
		if res.Raters[l].NLabels > 0 {
			chosen = append(chosen, l)
		}
	}
	sort.SliceStable(chosen, func(a, b int) bool { return res.Raters[chosen[a]].NLabels > res.Raters[chosen[b]].NLabels })
	if len(chosen) > MaxNextPool {
		notes = append(notes, fmt.Sprintf("any rater: the %d most active of %d raters, weighted by their labels", MaxNextPool, len(chosen)))
		chosen = chosen[:MaxNextPool]
	}
	if len(chosen) == 0 {
		return nil, "", nil, annotations.Errorf(annotations.EINVALID, "the fit has no rater with labels")
	}
	return chosen, "any rater, weighted by their share of the labels", notes, nil
}

// raterChannel is rater r's channel over k classes: their fitted confusion
// matrix (rows normalised), or without one (oneCoin) their agreement with
// the consensus on the diagonal, kept between chance and near certainty,
// and the rest spread uniformly. weighted weights the rater by their
// labels (else 1).
func raterChannel(r multirater.RaterResult, k int, weighted bool) (c nextChannel, oneCoin bool) {
	c.w = 1.0
	if weighted {
		c.w = float64(r.NLabels)
	}
	c.pi = make([]float64, k*k)
	if len(r.ConfusionProbs) == k {
		for cl := 0; cl < k; cl++ {
			s := 0.0
			for j := 0; j < k && j < len(r.ConfusionProbs[cl]); j++ {
				v := r.ConfusionProbs[cl][j].Mean
				if !(v > 0) || math.IsNaN(v) {
					v = 1e-6
				}
				c.pi[cl*k+j] = v
				s += v
			}
			for j := 0; j < k; j++ {
				c.pi[cl*k+j] /= s
			}
		}
		return c, false
	}
	oneCoinMatrix(c.pi, k, raterAccuracy(r, k))
	return c, true
}

// raterAccuracy is rater r's one-coin accuracy over k classes: the mean
// of their fitted confusion matrix's diagonal (their accuracy with every
// class equally likely), or without one their agreement with the
// consensus (0.7 when the fit has neither), kept between chance and near
// certainty.
func raterAccuracy(r multirater.RaterResult, k int) float64 {
	a := 0.7
	if len(r.ConfusionProbs) == k {
		a = 0
		for cl := 0; cl < k; cl++ {
			if len(r.ConfusionProbs[cl]) > cl {
				a += r.ConfusionProbs[cl][cl].Mean / float64(k)
			}
		}
	} else if r.ConsensusAgreement != nil {
		a = *r.ConsensusAgreement
	}
	if math.IsNaN(a) {
		a = 0.7
	}
	return math.Min(math.Max(a, 1/float64(k)+0.01), 0.99)
}

// oneCoinMatrix fills pi (k×k, row-major) with the one-coin confusion matrix of
// accuracy a: a on the diagonal, (1 - a)/(k - 1) elsewhere.
func oneCoinMatrix(pi []float64, k int, a float64) {
	for cl := 0; cl < k; cl++ {
		for j := 0; j < k; j++ {
			if cl == j {
				pi[cl*k+j] = a
			} else {
				pi[cl*k+j] = (1 - a) / float64(k-1)
			}
		}
	}
}

// symmetricModel is the class-symmetric one-coin rater model (see the
// top of the file): each rater's accuracy by id and the pool's channels
// under it (the weights of the fit's channels).
type symmetricModel struct {
	acc   map[string]float64
	chans []nextChannel
	// raters is scratch space for an item's raters, sorted (the product
	// is taken in a fixed order, so that the scores do not depend on the
	// map's order).
	raters []string
}

// newSymmetricModel returns the symmetric model of a fit of classes whose
// labelled items all carry their labels, else nil (grades, or a fit
// document without the items' labels).
func newSymmetricModel(res *multirater.FitResult, chosen []int, chans []nextChannel) *symmetricModel {
	k := len(res.Levels)
	for i := range res.Items {
		it := &res.Items[i]
		if it.ClassProbs == nil || (it.NLabels > 0 && len(it.Labels) == 0) {
			return nil
		}
	}
	m := &symmetricModel{acc: make(map[string]float64, len(res.Raters)), chans: make([]nextChannel, len(chans))}
	for _, r := range res.Raters {
		m.acc[r.ID] = raterAccuracy(r, k)
	}
	for j, l := range chosen {
		m.chans[j] = nextChannel{w: chans[j].w, pi: make([]float64, k*k)}
		oneCoinMatrix(m.chans[j].pi, k, m.acc[res.Raters[l].ID])
	}
	return m
}

// posterior writes to q the item's class probabilities under the
// symmetric model (levels in the fit's order) and returns the most
// probable class.
func (m *symmetricModel) posterior(levels []string, labels map[string]string, q []float64) int {
	k := len(q)
	m.raters = m.raters[:0]
	for r := range labels {
		m.raters = append(m.raters, r)
	}
	sort.Strings(m.raters)
	for c := range q {
		q[c] = 0
	}
	for _, r := range m.raters {
		a, ok := m.acc[r]
		if !ok {
			continue
		}
		for c, code := range levels {
			if code == labels[r] {
				q[c] += math.Log(a)
			} else {
				q[c] += math.Log((1 - a) / float64(k-1))
			}
		}
	}
	lse := floats.LogSumExp(q)
	for c := range q {
		q[c] = math.Exp(q[c] - lse)
	}
	return floats.MaxIdx(q)
}

// nextLabelValue is what one more label of the pool tells about an item
// whose class probabilities are q (best the consensus): the expected
// information about the class, in bits, and the expected gain in the
// probability that the consensus is right, averaged over the channels
// (weights summing to wsum). post is scratch space of len(q).
func nextLabelValue(q []float64, best int, chans []nextChannel, wsum float64, post []float64) (info, acc float64) {
	k := len(q)
	h0 := entropyBits(q)
	for _, ch := range chans {
		var hPost, maxJoint float64
		for y := 0; y < k; y++ {
			py, m := 0.0, 0.0
			for c := 0; c < k; c++ {
				post[c] = q[c] * ch.pi[c*k+y]
				py += post[c]
				m = math.Max(m, post[c])
			}
			maxJoint += m
			if py <= 0 {
				continue
			}
			for c := range post {
				post[c] /= py
			}
			hPost += py * entropyBits(post)
		}
		info += ch.w / wsum * math.Max(h0-hPost, 0)
		acc += ch.w / wsum * math.Max(maxJoint-q[best], 0)
	}
	return info, acc
}

// NextItems ranks the items of a fit by what one more label would tell
// (see above). The fit must give grade or class probabilities; an unknown
// rater in o.Pool or an unknown score is EINVALID.
func NextItems(res *multirater.FitResult, o NextOptions) (*NextResult, error) {
	by := strings.ToLower(strings.TrimSpace(o.By))
	switch by {
	case "", "info", NextByInformation:
		by = NextByInformation
	case NextByAccuracy:
	default:
		return nil, annotations.Errorf(annotations.EINVALID, "--by %q: expected information or accuracy", o.By)
	}
	k := len(res.Levels)
	if k < 2 || res.Model.Shape() == multirater.OutputRanking || res.Model.Shape() == multirater.OutputValues {
		return nil, annotations.Errorf(annotations.EINVALID, "which items to label next needs a fit of grades or classes (model %s gives %s)", res.Model.Model, res.Model.Shape())
	}
	out := &NextResult{Schema: NextSchema, By: by}
	// The pool: each rater's confusion matrix and weight.
	chosen, pool, notes, err := nextPool(res, o.Pool)
	if err != nil {
		return nil, err
	}
	out.Pool, out.Notes = pool, append(out.Notes, notes...)
	oneCoin := false
	chans := make([]nextChannel, 0, len(chosen))
	for _, l := range chosen {
		c, one := raterChannel(res.Raters[l], k, len(o.Pool) == 0)
		oneCoin = oneCoin || one
		chans = append(chans, c)
	}
	if oneCoin {
		out.Notes = append(out.Notes, "the fit has no confusion matrices: each rater's labels are taken as right with their agreement with the consensus and wrong uniformly otherwise (one-coin)")
	}
	wsum := 0.0
	for _, c := range chans {
		wsum += c.w
	}
	sym := newSymmetricModel(res, chosen, chans)
	if sym != nil {
		out.Notes = append(out.Notes, "scores averaged over the fit's rater model and the class-symmetric one-coin model (every class equally likely, each rater right with their accuracy averaged over the classes)")
	}
	// Score every item.
	q := make([]float64, k)
	qs := make([]float64, k)
	post := make([]float64, k)
	items := make([]NextItem, 0, len(res.Items))
	for i := range res.Items {
		it := &res.Items[i]
		probs := it.ClassProbs
		if probs == nil {
			probs = it.GradeProbs
		}
		if probs == nil {
			continue
		}
		s := 0.0
		for c, code := range res.Levels {
			q[c] = math.Max(probs[code], 0)
			s += q[c]
		}
		if !(s > 0) {
			continue
		}
		best := 0
		for c := range q {
			q[c] /= s
			if q[c] > q[best] {
				best = c
			}
		}
		info, acc := nextLabelValue(q, best, chans, wsum, post)
		if sym != nil {
			bs := sym.posterior(res.Levels, it.Labels, qs)
			infoS, accS := nextLabelValue(qs, bs, sym.chans, wsum, post)
			info, acc = (info+infoS)/2, (acc+accS)/2
		}
		ni := NextItem{ID: it.ID, Information: info, Accuracy: acc, Consensus: res.Levels[best], Prob: q[best], NLabels: it.NLabels}
		ni.Score = info
		if by == NextByAccuracy {
			ni.Score = acc
		}
		labels := "no labels"
		switch {
		case it.NLabels == 1:
			labels = "1 label"
		case it.NLabels > 1:
			labels = fmt.Sprintf("%d labels", it.NLabels)
		}
		ni.Why = fmt.Sprintf("P(%s) = %.2f from %s; one more label: %.3f bits about the class, consensus right %+.3f", ni.Consensus, ni.Prob, labels, info, acc)
		items = append(items, ni)
	}
	// Best first; ties by the less certain consensus, then the fewer
	// labels, then the item's order.
	sort.SliceStable(items, func(a, b int) bool {
		x, y := items[a], items[b]
		if x.Score != y.Score {
			return x.Score > y.Score
		}
		if x.Prob != y.Prob {
			return x.Prob < y.Prob
		}
		return x.NLabels < y.NLabels
	})
	out.Total = len(items)
	n := o.N
	if n == 0 {
		n = DefaultNextN
	}
	if n > 0 && len(items) > n {
		items = items[:n]
	}
	out.Items = items
	return out, nil
}

// entropyBits is the entropy of a distribution in bits.
func entropyBits(p []float64) float64 { return stat.Entropy(p) / math.Ln2 }

// WriteCSV writes the ranking as a task list for the labelling tool:
// id,score,consensus,prob,n_labels,why, best first.
func (r *NextResult) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"id", "score", "consensus", "prob", "n_labels", "why"})
	for _, it := range r.Items {
		cw.Write([]string{it.ID, strconv.FormatFloat(it.Score, 'g', 6, 64), it.Consensus, strconv.FormatFloat(it.Prob, 'g', 6, 64), strconv.Itoa(it.NLabels), it.Why})
	}
	cw.Flush()
	return cw.Error()
}
