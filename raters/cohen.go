package raters

import (
	"math"
	"sort"
)

// pairStats computes Cohen's (1960, 1968) kappa of raters a and b on the
// items both rated (weighted by mult): κ_w = (p_o - p_e)/(1 - p_e) with
// p_o = Σ_kl w_kl p_kl and p_e = Σ_kl w_kl p_k. p_.l. withSE adds the large-sample
// standard error of Fleiss, Cohen & Everitt (1969), which is also irrCAC's
// kappa2.table variance:
//
//	var = [Σ_kl p_kl (w_kl - (1-κ)(w̄_k. + w̄_.l))² - (κ - p_e(1-κ))²] / (n (1-p_e)²)
//
// with w̄_k. = Σ_l w_kl p_.l and w̄_.l = Σ_k w_kl p_k.
//
// items lists the items both raters rated (nil: look at every item).
func (t *table) pairStats(a, b int, items []int32, w *weightMat, mult []float64, withSE bool, level float64) Estimate {
	e := undefined()
	if t.q < 2 {
		return e
	}
	if items == nil {
		items = t.coRated(a, b)
	}
	pa := make([]float64, t.q)
	pb := make([]float64, t.q)
	n, po := 0.0, 0.0
	for _, i32 := range items {
		i := int(i32)
		m := weightOf(mult, i)
		if m == 0 {
			continue
		}
		x, y := t.cell[i*t.r+a], t.cell[i*t.r+b]
		if x < 0 || y < 0 {
			continue
		}
		n += m
		pa[x] += m
		pb[y] += m
		if x == y {
			po += m
		} else if w.kind != Unweighted {
			po += m * w.at(int(x), int(y))
		}
	}
	if n == 0 {
		return e
	}
	po /= n
	for k := range pa {
		pa[k] /= n
		pb[k] /= n
	}
	wpb := make([]float64, t.q) // w̄_k. = (W p_.l)_k
	wpa := make([]float64, t.q) // w̄_.l = (W p_k.)_l
	w.mulVec(wpb, pb)
	w.mulVec(wpa, pa)
	pe := 0.0
	for k := range pa {
		pe += pa[k] * wpb[k]
	}
	e.Pa, e.Pe = po, pe
	if !(pe < 1) {
		return e
	}
	kappa := (po - pe) / (1 - pe)
	e.Value = kappa
	if !withSE || n < 2 {
		return e
	}
	s := 0.0
	for _, i32 := range items {
		i := int(i32)
		x, y := t.cell[i*t.r+a], t.cell[i*t.r+b]
		wxy := 1.0
		if x != y {
			wxy = w.at(int(x), int(y))
		}
		d := wxy - (1-kappa)*(wpb[x]+wpa[y])
		s += d * d
	}
	s /= n
	c := kappa - pe*(1-kappa)
	v := (s - c*c) / (n * (1 - pe) * (1 - pe))
	e.SE = math.Sqrt(math.Max(v, 0))
	e.tInterval(n-1, level)
	return e
}

// CohenKappa returns Cohen's kappa between raters a and b, unweighted (Cohen
// 1960) or weighted (Cohen 1968) with o.Weights, on the items both rated
// (pairwise deletion, as R's irr::kappa2, psych::cohen.kappa, statsmodels and
// scikit-learn do). The weights are on the category values (linear:
// 1 - |x_k - x_l|/(max - min)); kappa does not depend on their scale. SE is
// the large-sample standard error of Fleiss, Cohen & Everitt (1969), the one
// statsmodels' cohens_kappa and irrCAC's kappa2.table report.
func CohenKappa(r *Ratings, a, b int, o CoefOptions) (Estimate, error) {
	if a < 0 || a >= r.Raters || b < 0 || b >= r.Raters {
		panic("raters: rater index out of range")
	}
	t := prepare(r, o.ObservedCategoriesOnly)
	w, err := t.weights(o.Weights)
	if err != nil {
		return undefined(), err
	}
	return t.pairStats(a, b, nil, w, nil, true, o.level()), nil
}

// ScottPi returns Scott's (1955) pi. For two raters it is Scott's pi on the
// items both rated (irrCAC's scott2.table: p_e = Σ_kl w_kl π_k π_l with π_k
// the mean of the two raters' marginals), with Gwet's (2014) standard error.
// For more raters it is its generalisation, Fleiss' kappa (Fleiss 1971
// generalises Scott's pi, not Cohen's kappa), computed as FleissKappa.
func ScottPi(r *Ratings, o CoefOptions) (Estimate, error) {
	t := prepare(r, o.ObservedCategoriesOnly)
	w, err := t.weights(o.Weights)
	if err != nil {
		return undefined(), err
	}
	if t.r == 2 {
		return t.scott2(w, nil, true, o.level()), nil
	}
	return t.chance(kindFleiss, w, nil, true, o.level()), nil
}

// scott2 is Scott's pi of a two-rater table on the items both rated, with
// irrCAC's scott2.table variance.
func (t *table) scott2(w *weightMat, mult []float64, withSE bool, level float64) Estimate {
	e := undefined()
	if t.q < 2 || t.r != 2 {
		return e
	}
	pi := make([]float64, t.q)
	n, po := 0.0, 0.0
	for i := 0; i < t.n; i++ {
		m := weightOf(mult, i)
		x, y := t.cell[i*2], t.cell[i*2+1]
		if m == 0 || x < 0 || y < 0 {
			continue
		}
		n += m
		pi[x] += m / 2
		pi[y] += m / 2
		if x == y {
			po += m
		} else {
			po += m * w.at(int(x), int(y))
		}
	}
	if n == 0 {
		return e
	}
	po /= n
	for k := range pi {
		pi[k] /= n
	}
	wpi := make([]float64, t.q)
	w.mulVec(wpi, pi)
	pe := 0.0
	for k := range pi {
		pe += pi[k] * wpi[k]
	}
	e.Pa, e.Pe = po, pe
	if !(pe < 1) {
		return e
	}
	pi2 := (po - pe) / (1 - pe)
	e.Value = pi2
	if !withSE || n < 2 {
		return e
	}
	s := 0.0
	for i := 0; i < t.n; i++ {
		x, y := t.cell[i*2], t.cell[i*2+1]
		if x < 0 || y < 0 {
			continue
		}
		wxy := 1.0
		if x != y {
			wxy = w.at(int(x), int(y))
		}
		d := wxy - (1-pi2)*(wpi[x]+wpi[y])
		s += d * d
	}
	s /= n
	c := po - 2*(1-pi2)*pe
	v := (s - c*c) / (n * (1 - pe) * (1 - pe))
	e.SE = math.Sqrt(math.Max(v, 0))
	e.tInterval(n-1, level)
	return e
}

// coRated lists the items raters a and b both rated.
func (t *table) coRated(a, b int) []int32 {
	items := []int32{}
	for i := 0; i < t.n; i++ {
		if t.cell[i*t.r+a] >= 0 && t.cell[i*t.r+b] >= 0 {
			items = append(items, int32(i))
		}
	}
	return items
}

// ratedPair is a pair of raters with the items both rated.
type ratedPair struct {
	a, b  int
	items []int32
}

// ratedPairs returns the pairs of raters (a < b, in order) that rated at
// least one item in common, in O(Σ_i m_i²).
func (t *table) ratedPairs() []ratedPair {
	idx := map[[2]int]int{}
	var pairs []ratedPair
	var who []int
	for i := 0; i < t.n; i++ {
		who = who[:0]
		for j := 0; j < t.r; j++ {
			if t.cell[i*t.r+j] >= 0 {
				who = append(who, j)
			}
		}
		for x, a := range who {
			for _, b := range who[x+1:] {
				k := [2]int{a, b}
				p, ok := idx[k]
				if !ok {
					p = len(pairs)
					idx[k] = p
					pairs = append(pairs, ratedPair{a: a, b: b})
				}
				pairs[p].items = append(pairs[p].items, int32(i))
			}
		}
	}
	sort.Slice(pairs, func(x, y int) bool {
		if pairs[x].a != pairs[y].a {
			return pairs[x].a < pairs[y].a
		}
		return pairs[x].b < pairs[y].b
	})
	return pairs
}

// PairKappa is Cohen's kappa between two raters under several weights.
type PairKappa struct {
	A, B int
	// N is the number of items both rated.
	N int
	// Kappa[w] is the kappa with weights w, for the weights asked for.
	Kappa map[Weights]Estimate
}

// PairwiseCohen returns Cohen's kappa for every pair of raters (a < b) that
// rated at least one item in common, under each of the given weights, in the
// order (0,1), (0,2), ..., (1,2), ....
func PairwiseCohen(r *Ratings, ws []Weights, o CoefOptions) ([]PairKappa, error) {
	t := prepare(r, o.ObservedCategoriesOnly)
	return t.pairwise(t.ratedPairs(), ws, true, o.level())
}

func (t *table) pairwise(pairs []ratedPair, ws []Weights, withSE bool, level float64) ([]PairKappa, error) {
	wms := make([]*weightMat, len(ws))
	for x, w := range ws {
		var err error
		if wms[x], err = t.weights(w); err != nil {
			return nil, err
		}
	}
	out := make([]PairKappa, 0, len(pairs))
	for _, p := range pairs {
		pk := PairKappa{A: p.a, B: p.b, N: len(p.items), Kappa: make(map[Weights]Estimate, len(ws))}
		for x, w := range ws {
			pk.Kappa[w] = t.pairStats(p.a, p.b, p.items, wms[x], nil, withSE, level)
		}
		out = append(out, pk)
	}
	return out, nil
}
