package raters

import (
	"math"
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
// The items both rated are found by merging the two raters' rows, in time
// linear in their labels.
func (t *table) pairStats(a, b int, w *weightMat, mult []float64, withSE bool, level float64) Estimate {
	return t.pairStatsOver(func(f func(i int, x, y int32)) { t.coRated(a, b, f) }, w, mult, withSE, level)
}

// coCell is an item two raters both rated, with their categories.
type coCell struct {
	i    int32
	x, y int32
}

// coCells lists the items raters a and b both rated.
func (t *table) coCells(a, b int) []coCell {
	var out []coCell
	t.coRated(a, b, func(i int, x, y int32) { out = append(out, coCell{int32(i), x, y}) })
	return out
}

// pairStatsOver is pairStats over the shared items each lists (calling f
// once per item, in the same order every time).
func (t *table) pairStatsOver(each func(f func(i int, x, y int32)), w *weightMat, mult []float64, withSE bool, level float64) Estimate {
	return t.chanceCorrected(each, w, mult, withSE, level, false)
}

// chanceCorrected is the two-rater coefficient (po - pe) / (1 - pe) of the
// shared items each lists (pairStatsOver) with its t interval: Cohen's
// kappa, pe = Σ_k p_k. (W p_.l)_k from each rater's own marginals, or with
// pooled Scott's pi, pe = Σ_k π_k (W π)_k from the marginals π = (p_k. +
// p_.k)/2 of both raters together (scott2). Kappa's standard error is that
// of Fleiss, Cohen & Everitt (1969) with SENull under independence, pi's
// irrCAC's scott2.table variance.
func (t *table) chanceCorrected(each func(f func(i int, x, y int32)), w *weightMat, mult []float64, withSE bool, level float64, pooled bool) Estimate {
	e := undefined()
	if t.q < 2 {
		return e
	}
	pa := make([]float64, t.q)
	pb := pa // pooled: π
	if !pooled {
		pb = make([]float64, t.q)
	}
	n, po := 0.0, 0.0
	each(func(i int, x, y int32) {
		m := weightOf(mult, i)
		if m == 0 {
			return
		}
		n += m
		if pooled {
			pa[x] += m / 2
			pa[y] += m / 2
		} else {
			pa[x] += m
			pb[y] += m
		}
		if x == y {
			po += m
		} else if w.kind != Unweighted {
			po += m * w.at(int(x), int(y))
		}
	})
	if n == 0 {
		return e
	}
	po /= n
	for k := range pa {
		pa[k] /= n
		if !pooled {
			pb[k] /= n
		}
	}
	wpb := make([]float64, t.q) // w̄_k. = (W p_.l)_k
	w.mulVec(wpb, pb)
	wpa := wpb // pooled: W π
	if !pooled {
		wpa = make([]float64, t.q) // w̄_.l = (W p_k.)_l
		w.mulVec(wpa, pa)
	}
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
	each(func(_ int, x, y int32) {
		wxy := 1.0
		if x != y {
			wxy = w.at(int(x), int(y))
		}
		d := wxy - (1-kappa)*(wpb[x]+wpa[y])
		s += d * d
	})
	s /= n
	c := kappa - pe*(1-kappa)
	if pooled {
		c = po - 2*(1-kappa)*pe
	}
	v := (s - c*c) / (n * (1 - pe) * (1 - pe))
	e.SE = math.Sqrt(math.Max(v, 0))
	if !pooled {
		e.SENull = kappaNullSE(w, pa, pb, wpa, wpb, pe, n)
	}
	e.tInterval(n-1, level)
	return e
}

// maxNullSECells bounds the pairs of observed categories kappaNullSE sums
// over (continuous data can have thousands of distinct values).
const maxNullSECells = 1 << 22

// kappaNullSE is the standard error of Cohen's kappa under independence of
// the two raters, Fleiss, Cohen & Everitt (1969), as statsmodels'
// cohens_kappa (std_kappa0) and SAS compute it:
//
//	var0 = [Σ_kl p_k. p_.l (w_kl - (w̄_k. + w̄_.l))² - p_e²] / (n (1-p_e)²)
//
// evaluated as Σ_kl p_k. p_.l w_kl² - Σ_k p_k. w̄_k.² - Σ_l p_.l w̄_.l² + 2 p_e²
// (w̄ = W p), so that only the observed categories' weights are read. NaN
// when more than maxNullSECells pairs of categories occur.
func kappaNullSE(w *weightMat, pa, pb, wpa, wpb []float64, pe, n float64) float64 {
	var ia, ib []int
	for k := range pa {
		if pa[k] > 0 {
			ia = append(ia, k)
		}
		if pb[k] > 0 {
			ib = append(ib, k)
		}
	}
	if len(ia)*len(ib) > maxNullSECells {
		return math.NaN()
	}
	s := 2 * pe * pe
	for _, k := range ia {
		s -= pa[k] * wpb[k] * wpb[k]
		for _, l := range ib {
			wkl := 1.0
			if k != l {
				wkl = w.at(k, l)
			}
			s += pa[k] * pb[l] * wkl * wkl
		}
	}
	for _, l := range ib {
		s -= pb[l] * wpa[l] * wpa[l]
	}
	v := (s - pe*pe) / (n * (1 - pe) * (1 - pe))
	return math.Sqrt(math.Max(v, 0))
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
	return t.pairStats(a, b, w, nil, true, o.level()), nil
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
	if t.r != 2 {
		return undefined()
	}
	return t.chanceCorrected(func(f func(i int, x, y int32)) { t.coRated(0, 1, f) }, w, mult, withSE, level, true)
}
