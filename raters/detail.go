package raters

import (
	"fmt"
	"math"
	"sort"
)

// The agreement tables that annotation platforms show beside the overall
// coefficients: the pairwise matrix of Cohen's kappas with the number of
// shared items, one agreement score per item (to find the items to
// adjudicate) and one row per rater (to find the rater who disagrees with
// everybody). They need no bootstrap and cost O(Σ_i r_i²) for items with r_i
// ratings.
//
// The per-item and per-rater scores are observed agreement, not chance
// corrected, with the weight of a pair of ratings x, y
//
//	nominal            w(x, y) = 1 if x = y, else 0
//	ordinal, interval  w(x, y) = 1 - |x - y| / (max - min)
//
// on the category values (ordinal) or the values (interval), with [min, max]
// the scale's range: the first and last category's values, or for continuous
// data Options.ScaleMin and ScaleMax (the observed range when they are
// equal). This is Gwet's linear weighting (see Weights). An item's score is
// the mean weight over its r(r-1)/2 pairs of ratings: the share of agreeing
// pairs for nominal data, 1 - mean pairwise |difference| / range otherwise.

// MaxMatrixRaters is the largest number of raters whose pairwise matrix
// Analyze puts in the report (the matrix has raters² cells; cohen_kappa
// lists every pair whatever the number).
const MaxMatrixRaters = 200

// PairMatrix is the symmetric matrix of pairwise Cohen's kappas of the
// report's raters, in the report's rater order, under one weighting
// (unweighted for nominal data, quadratic otherwise, as in CohenPair).
// Kappa[a][b] is null on the diagonal and for pairs without a common item or
// with an undefined kappa; N[a][b] is the number of items raters a and b
// both rated (N[a][a] the items a rated).
type PairMatrix struct {
	Coefficient string   `json:"coefficient"`
	Weights     string   `json:"weights"`
	Raters      []string `json:"raters"`
	Kappa       [][]num  `json:"kappa"`
	N           [][]int  `json:"n"`
}

// ItemAgreement is the observed agreement of one item's ratings.
type ItemAgreement struct {
	Item string `json:"item"`
	// Labels is the number of the item's ratings.
	Labels int `json:"labels"`
	// Agreement is the mean weight of the item's pairs of ratings (see
	// Report.AgreementScore); null with fewer than 2 ratings.
	Agreement num `json:"agreement"`
}

// RaterAgreement is one rater's agreement with the other raters.
type RaterAgreement struct {
	Rater string `json:"rater"`
	// Labels is the number of the rater's ratings (one per item), Items
	// the number of those items that another rater rated too, Partners
	// the number of raters of the pair selection (Report.PairSelection;
	// by default every rater the rater shares an item with, up to
	// MaxMatrixRaters raters) the rater is paired with, and Pairs the
	// number of (item, other rater) pairs of ratings (every one, counted
	// from per-item counts).
	Labels   int `json:"labels"`
	Items    int `json:"items"`
	Partners int `json:"partners"`
	Pairs    int `json:"pairs"`
	// Agreement is the mean weight of the rater's pairs of ratings (the
	// per-item score's weights).
	Agreement num `json:"agreement"`
	// MeanKappa is the mean of the rater's defined pairwise Cohen's
	// kappas over the pair selection (the rater's row of the matrix, each
	// partner counting once).
	MeanKappa num `json:"mean_kappa"`
	// PooledKappa is Cohen's kappa of the rater against the others pooled:
	// kappa of the table of the Pairs pairs (the rater's rating, the other
	// rater's rating), with the matrix's weights.
	PooledKappa num `json:"pooled_kappa"`
}

// matrixWeights are the weights of the pairwise matrix and the pooled
// kappa: unweighted for nominal data, quadratic otherwise.
func matrixWeights(l Level) Weights {
	if l == Nominal {
		return Unweighted
	}
	return QuadraticWeights
}

// agreementScore describes the per-item score of the level in words.
func agreementScore(l Level, lo, hi float64) string {
	if l == Nominal {
		return "share of agreeing pairs of labels"
	}
	return fmt.Sprintf("1 - mean pairwise |difference| / %s (the scale's range %s to %s)", fmtNum(hi-lo), fmtNum(lo), fmtNum(hi))
}

func fmtNum(v float64) string { return fmt.Sprintf("%.6g", v) }

// scale returns the range of the per-item score's weights.
func scale(r *Ratings, o Options) (lo, hi float64) {
	if r.K > 0 {
		return r.Value(0), r.Value(r.K - 1)
	}
	if o.ScaleMin < o.ScaleMax {
		return o.ScaleMin, o.ScaleMax
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range r.val {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

// AgreementTables computes the pairwise matrix (from the pairs of
// PairwiseCohen with the matrix's weights, o.Pairs choosing them; nil when
// there are more than MaxMatrixRaters raters), the per-item scores (of the
// items with a rating, in row order) and the per-rater rows, with o's
// names, level and scale. pairs may be nil (they are then computed). They
// use one label per rater and item, the first.
func AgreementTables(r *Ratings, o Options, pairs []PairKappa) (*PairMatrix, []ItemAgreement, []RaterAgreement, error) {
	r.check()
	w := matrixWeights(o.Level)
	t := prepare(r, o.ObservedCategoriesOnly)
	if pairs == nil {
		rated, _ := t.ratedPairs(o.Pairs)
		var err error
		if pairs, err = t.pairwise(rated, []Weights{w}, true, CoefOptions{ConfLevel: o.ConfLevel}.level()); err != nil {
			return nil, nil, nil, err
		}
	}
	m, items, raters := agreementTables(r, t, o, pairs, true, true, true)
	return m, items, raters, nil
}

// raterAcc holds one rater's sums over its (item, other rater) pairs,
// filled while scanning the items.
type raterAcc struct {
	labels, items, pairs int
	sumW                 float64
	// Pooled kappa: nominal, the rater's and the others' category counts
	// over the pairs; otherwise the moments of both sides and the squared
	// differences.
	eq         int
	mine, them []float64
	sx, sxx    float64
	sy, syy    float64
	sd2        float64
}

// itemScan is one item's ratings as the tables read them: raters and
// categories, category counts and (ordinal and continuous data) sorted
// values with their prefix sums, sum and sum of squares.
type itemScan struct {
	lr, lc  []int32
	cats    []int32
	cnts    []float64
	n       int
	xs, cum []float64
	S, S2   float64
	ordered bool
	span    float64
}

// load reads item i of t.
func (it *itemScan) load(t *table, i int) {
	it.lr, it.lc = t.lr[t.ls[i]:t.ls[i+1]], t.lc[t.ls[i]:t.ls[i+1]]
	it.cats, it.cnts = t.cat[t.start[i]:t.start[i+1]], t.cnt[t.start[i]:t.start[i+1]]
	it.n = len(it.lr)
	it.S, it.S2 = 0, 0
	if !it.ordered {
		return
	}
	it.xs = it.xs[:0]
	for _, c := range it.lc {
		v := t.vals[c]
		it.xs = append(it.xs, v)
		it.S += v
		it.S2 += v * v
	}
	sort.Float64s(it.xs)
	it.cum = append(it.cum[:0], 0)
	for _, x := range it.xs {
		it.cum = append(it.cum, it.cum[len(it.cum)-1]+x)
	}
}

// countOf is the item's count of category c.
func (it *itemScan) countOf(c int32) float64 {
	for p, k := range it.cats {
		if k == c {
			return it.cnts[p]
		}
	}
	return 0
}

// absSum is Σ_y |x - y| over the item's ratings, by a binary search.
func (it *itemScan) absSum(x float64) float64 {
	k := sort.SearchFloat64s(it.xs, x) // xs[:k] < x
	return x*float64(k) - it.cum[k] + (it.cum[it.n] - it.cum[k]) - x*float64(it.n-k)
}

// agreement is the item's row: the share of agreeing pairs (nominal) or 1
// - mean |difference| / span.
func (it *itemScan) agreement(label string) ItemAgreement {
	ia := ItemAgreement{Item: label, Labels: it.n, Agreement: num(math.NaN())}
	if it.n < 2 {
		return ia
	}
	np := float64(it.n) * float64(it.n-1) / 2
	if !it.ordered {
		agree := 0.0
		for _, c := range it.cnts {
			agree += c * (c - 1) / 2
		}
		ia.Agreement = num(agree / np)
		return ia
	}
	// Σ_{a<b} |x_a - x_b| = Σ_k x_(k) (2k - n + 1) on sorted values.
	s := 0.0
	for k, x := range it.xs {
		s += x * float64(2*k-it.n+1)
	}
	ia.Agreement = 1
	if it.span > 0 {
		ia.Agreement = num(1 - s/np/it.span)
	}
	return ia
}

// addRaters adds the item's pairs to its raters' sums.
func (it *itemScan) addRaters(t *table, accs []raterAcc) {
	for y, j := range it.lr {
		a := &accs[j]
		a.labels++
		if it.n < 2 {
			continue
		}
		a.items++
		c := it.lc[y]
		same := it.countOf(c) - 1 // the others with the same rating
		others := float64(it.n - 1)
		a.pairs += it.n - 1
		if !it.ordered || !(it.span > 0) {
			a.sumW += same
		} else {
			a.sumW += same + (others - same) - it.absSum(t.vals[c])/it.span
		}
		switch {
		case a.mine != nil:
			a.mine[c] += others
			for p, k := range it.cats {
				a.them[k] += it.cnts[p]
			}
			a.them[c]--
			a.eq += int(same)
		case it.ordered:
			vx := t.vals[c]
			a.sx += others * vx
			a.sxx += others * vx * vx
			a.sy += it.S - vx
			a.syy += it.S2 - vx*vx
			a.sd2 += others*vx*vx - 2*vx*(it.S-vx) + (it.S2 - vx*vx)
		}
	}
}

// pooledKappa is the rater's kappa against everybody else: Cohen's
// kappa of the pairs' table (nominal), or with quadratic weights κ = 1 -
// D_o/D_e, D_o the mean squared difference of the pairs and D_e = var(x) +
// var(y) + (x̄ - ȳ)² that of independent draws from the two marginals.
func (a *raterAcc) pooledKappa(ordered bool) num {
	P := float64(a.pairs)
	if a.mine != nil {
		po, pe := float64(a.eq)/P, 0.0
		for k := range a.mine {
			pe += a.mine[k] / P * a.them[k] / P
		}
		if pe < 1 {
			return num((po - pe) / (1 - pe))
		}
		return num(math.NaN())
	}
	if ordered {
		mx, my := a.sx/P, a.sy/P
		de := (a.sxx/P - mx*mx) + (a.syy/P - my*my) + (mx-my)*(mx-my)
		if de > 1e-12*math.Max(1, a.sxx/P+a.syy/P) {
			return num(1 - a.sd2/P/de)
		}
	}
	return num(math.NaN())
}

// pairKappa is the pair's kappa under w, NaN when it has none.
func pairKappa(p *PairKappa, w Weights) float64 {
	if e, ok := p.Kappa[w]; ok {
		return e.Value
	}
	return math.NaN()
}

// raterRows finishes the per-rater rows: the sums, and the partners and
// mean kappa from the pairs (in the pairs' order: sums do not depend on
// map order).
func raterRows(accs []raterAcc, pairs []PairKappa, w Weights, o Options, ordered bool) []RaterAgreement {
	R := len(accs)
	rows := make([]RaterAgreement, R)
	partners := make([]int, R)
	ksum := make([]float64, R)
	kn := make([]int, R)
	for x := range pairs {
		p := &pairs[x]
		if p.N > 0 {
			partners[p.A]++
			partners[p.B]++
		}
		if v := pairKappa(p, w); !math.IsNaN(v) {
			ksum[p.A] += v
			ksum[p.B] += v
			kn[p.A]++
			kn[p.B]++
		}
	}
	for j := range rows {
		a := &accs[j]
		ra := RaterAgreement{Rater: name(o.RaterNames, j), Labels: a.labels, Items: a.items, Partners: partners[j], Pairs: a.pairs,
			Agreement: num(math.NaN()), MeanKappa: num(math.NaN()), PooledKappa: num(math.NaN())}
		if a.pairs > 0 {
			ra.Agreement = num(a.sumW / float64(a.pairs))
			ra.PooledKappa = a.pooledKappa(ordered)
		}
		if kn[j] > 0 {
			ra.MeanKappa = num(ksum[j] / float64(kn[j]))
		}
		rows[j] = ra
	}
	return rows
}

// pairMatrix is the matrix of the pairs' kappas under w with the shared
// items (the diagonal: each rater's labels).
func pairMatrix(t *table, pairs []PairKappa, w Weights, o Options, R int) *PairMatrix {
	m := &PairMatrix{Coefficient: "cohen_kappa", Weights: w.String(), Raters: make([]string, R), Kappa: make([][]num, R), N: make([][]int, R)}
	for a := 0; a < R; a++ {
		m.Raters[a] = name(o.RaterNames, a)
		m.Kappa[a] = make([]num, R)
		m.N[a] = make([]int, R)
		for b := range m.Kappa[a] {
			m.Kappa[a][b] = num(math.NaN())
		}
		m.N[a][a] = t.rs[a+1] - t.rs[a]
	}
	for x := range pairs {
		p := &pairs[x]
		m.N[p.A][p.B], m.N[p.B][p.A] = p.N, p.N
		v := num(pairKappa(p, w))
		m.Kappa[p.A][p.B], m.Kappa[p.B][p.A] = v, v
	}
	return m
}

// agreementTables computes the parts asked for in time linear in the
// labels (plus the pairs): every rater's sums over its (item, other rater)
// pairs come from the item's category counts and value sums, not from
// the pairs themselves.
func agreementTables(r *Ratings, t *table, o Options, pairs []PairKappa, wantMatrix, wantItems, wantRaters bool) (*PairMatrix, []ItemAgreement, []RaterAgreement) {
	w := matrixWeights(o.Level)
	lo, hi := scale(r, o)
	R := r.Raters
	accs := make([]raterAcc, R)
	if o.Level == Nominal && t.q > 0 && !t.continuous && wantRaters {
		for j := range accs {
			accs[j].mine, accs[j].them = make([]float64, t.q), make([]float64, t.q)
		}
	}
	var items []ItemAgreement
	it := &itemScan{ordered: o.Level != Nominal, span: hi - lo}
	for i := 0; i < t.n; i++ {
		it.load(t, i)
		if wantItems {
			items = append(items, it.agreement(name(o.ItemNames, t.orig[i])))
		}
		if wantRaters {
			it.addRaters(t, accs)
		}
	}
	if wantItems && items == nil {
		items = []ItemAgreement{}
	}
	var rows []RaterAgreement
	if wantRaters {
		rows = raterRows(accs, pairs, w, o, o.Level != Nominal)
	}
	var m *PairMatrix
	if wantMatrix && R <= MaxMatrixRaters {
		m = pairMatrix(t, pairs, w, o, R)
	}
	return m, items, rows
}

// SortItemAgreement sorts per-item rows by agreement, lowest first (the
// items to look at first), the items without a score (one rating) last;
// ties keep their order.
func SortItemAgreement(rows []ItemAgreement) {
	sort.SliceStable(rows, func(a, b int) bool {
		x, y := float64(rows[a].Agreement), float64(rows[b].Agreement)
		if math.IsNaN(y) {
			return !math.IsNaN(x)
		}
		return x < y
	})
}

// ItemsBelow returns the rows of sorted (by SortItemAgreement) with an
// agreement below threshold.
func ItemsBelow(sorted []ItemAgreement, threshold float64) []ItemAgreement {
	n := sort.Search(len(sorted), func(i int) bool {
		v := float64(sorted[i].Agreement)
		return math.IsNaN(v) || !(v < threshold)
	})
	return sorted[:n]
}
