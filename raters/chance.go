package raters

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Estimate is one agreement coefficient with its uncertainty.
type Estimate struct {
	// Value is the coefficient; NaN when it is undefined for the data
	// (e.g. no item has two ratings, or chance agreement is 1).
	Value float64
	// SE is the analytic standard error where the literature gives one,
	// NaN otherwise.
	SE float64
	// CILow and CIHigh bound the confidence interval (95% unless
	// Options.ConfLevel says otherwise), NaN when there is none.
	CILow, CIHigh float64
	// CIMethod says how the interval was made: "bootstrap" (percentile
	// interval over items), "t" (Value ± t_{n-1} SE, upper end capped at 1,
	// as irrCAC), "F" (Shrout & Fleiss F-based interval, as psych::ICC) or
	// "" when there is none.
	CIMethod string
	// Pa and Pe are the observed and chance agreement of the coefficients
	// of the form (Pa - Pe) / (1 - Pe); NaN for the others.
	Pa, Pe float64
	// SENull is the standard error under the hypothesis of no agreement
	// where the literature gives one (Cohen's kappa: Fleiss, Cohen &
	// Everitt 1969, as statsmodels' std_kappa0 and SAS; Fleiss' kappa
	// with equal ratings per item: Fleiss, Nee & Landis 1979), NaN
	// otherwise.
	SENull float64
	// Z and P test the coefficient against 0, ZNull and PNull against
	// Options.Null (NaN when Null is 0 or there is no standard error);
	// see Estimate.test for the statistic and its distribution.
	Z, P, ZNull, PNull float64
	// df is the degrees of freedom of the t interval and test (n - 1,
	// n the items), 0 where there is none.
	df float64
	// fpcN is the sample size n of the finite-population correction
	// f = n/N (Estimate.finite) where it is not df + 1: irrCAC's
	// krippen.alpha.dist takes n before it drops the items with fewer
	// than two ratings, its variance and interval after.
	fpcN float64
}

func undefined() Estimate {
	nan := math.NaN()
	return Estimate{Value: nan, SE: nan, CILow: nan, CIHigh: nan, Pa: nan, Pe: nan, SENull: nan, Z: nan, P: nan, ZNull: nan, PNull: nan}
}

// CIKind chooses the analytic intervals and tests of the coefficients.
type CIKind int

const (
	// CIT (the default) gives irrCAC's t intervals, Value ± t_{n-1} SE
	// with the upper end capped at 1, and its t tests on SE.
	CIT CIKind = iota
	// CINormal gives the normal-approximation intervals of statsmodels
	// and SAS, Value ± z SE (not capped), and their z tests: against 0
	// on the standard error under the null (SENull) where there is one,
	// against any other value on SE.
	CINormal
)

var ciNames = [...]string{"t", "normal"}

func (c CIKind) String() string { return enumName(ciNames[:], c, "CIKind") }

// ParseCIKind reads "t" or "normal" ("" is t).
func ParseCIKind(s string) (CIKind, error) {
	switch s {
	case "", "t":
		return CIT, nil
	case "normal":
		return CINormal, nil
	}
	return 0, fmt.Errorf("raters: unknown interval kind %q (expected t or normal)", s)
}

// test sets the estimate's tests and, for CINormal, replaces its t
// interval by the normal one. Against h (0, then null when it is not 0):
//
//	CIT      z = (Value - h)/SE,  P = 2 (1 - F_t(|z|; n-1))   (irrCAC, two-sided)
//	CINormal z = (Value - h)/SE0, P = 2 (1 - Φ(|z|))          (statsmodels, SAS)
//
// where SE0 is SENull for h = 0 when it is defined and SE otherwise.
// irrCAC writes its p-value 2(1 - F_t(z)) without the absolute value,
// which is the same for positive coefficients.
func (e *Estimate) test(kind CIKind, level, null float64) {
	nan := math.NaN()
	e.Z, e.P, e.ZNull, e.PNull = nan, nan, nan, nan
	if kind == CINormal && e.CIMethod == "t" {
		z := distuv.UnitNormal.Quantile(1 - (1-level)/2)
		e.CILow, e.CIHigh, e.CIMethod = e.Value-z*e.SE, e.Value+z*e.SE, "normal"
	}
	one := func(h, se float64) (z, p float64) {
		if math.IsNaN(e.Value) || !(se > 0) {
			return nan, nan
		}
		z = (e.Value - h) / se
		if kind == CINormal {
			return z, 2 * distuv.UnitNormal.Survival(math.Abs(z))
		}
		if e.df < 1 {
			return z, nan
		}
		return z, 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: e.df}.Survival(math.Abs(z))
	}
	se0 := e.SE
	if kind == CINormal && e.SENull > 0 {
		se0 = e.SENull
	}
	e.Z, e.P = one(0, se0)
	if null != 0 {
		e.ZNull, e.PNull = one(null, e.SE)
	}
}

// finite applies irrCAC's finite-population correction for a population of
// pop subjects (0: infinite, no correction): the variances SE² and SENull²
// are multiplied by 1 - f, f = n/pop, n the estimate's sample of subjects
// (the items the t interval's n - 1 degrees of freedom count, or fpcN), and
// the t interval is recomputed on the corrected SE. Estimates without a t
// interval (ICC's F intervals, coefficients without an analytic SE) and
// bootstrap intervals are left as they are.
func (e *Estimate) finite(pop int, level float64) {
	if pop <= 0 || e.df < 1 {
		return
	}
	n := e.fpcN
	if n == 0 {
		n = e.df + 1
	}
	c := math.Sqrt(math.Max(0, 1-n/float64(pop)))
	e.SE *= c
	e.SENull *= c
	if e.CIMethod == "t" {
		e.tInterval(e.df, level)
	}
}

// tInterval sets the irrCAC interval: Value ± t_{df} SE with the upper end
// capped at 1.
func (e *Estimate) tInterval(df float64, level float64) {
	if math.IsNaN(e.SE) || df < 1 {
		return
	}
	e.df = df
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-level)/2)
	e.CILow = e.Value - t*e.SE
	e.CIHigh = math.Min(1, e.Value+t*e.SE)
	e.CIMethod = "t"
}

// chanceKind selects a member of Gwet's family of chance-corrected
// coefficients, which share the observed agreement and differ in chance
// agreement.
type chanceKind int

const (
	kindPA chanceKind = iota
	kindFleiss
	kindGwet
	kindBP
	kindConger
)

// itemAgreement returns, for item i, Σ_k r_ik (r*_ik - 1) with r*_ik =
// Σ_l w_kl r_il (Gwet 2014, eq. 2.9 and 3.4).
func (t *table) itemAgreement(w *weightMat, i int) float64 {
	cats := t.cat[t.start[i]:t.start[i+1]]
	cnts := t.cnt[t.start[i]:t.start[i+1]]
	s := 0.0
	for a, ca := range cats {
		rstar := 0.0
		for b, cb := range cats {
			if a == b {
				rstar += cnts[b] // w_kk = 1 for every weighting
			} else {
				rstar += w.at(int(ca), int(cb)) * cnts[b]
			}
		}
		s += cnts[a] * (rstar - 1)
	}
	return s
}

// observed returns Gwet's observed agreement p_a: the mean over the items
// with at least two ratings of Σ_k r_ik (r*_ik - 1) / (r_i (r_i - 1)), and
// the (weighted) count of those items.
func (t *table) observed(w *weightMat, mult []float64) (pa, n2 float64) {
	for i := 0; i < t.n; i++ {
		m := weightOf(mult, i)
		if m == 0 || t.ri[i] < 2 {
			continue
		}
		pa += m * t.itemAgreement(w, i) / (t.ri[i] * (t.ri[i] - 1))
		n2 += m
	}
	if n2 == 0 {
		return math.NaN(), 0
	}
	return pa / n2, n2
}

// classProps returns π_k = (1/n) Σ_i r_ik / r_i over all items (weighted
// by mult) and n.
func (t *table) classProps(mult []float64) (pi []float64, n float64) {
	pi = make([]float64, t.q)
	for i := 0; i < t.n; i++ {
		m := weightOf(mult, i)
		if m == 0 {
			continue
		}
		n += m
		for p := t.start[i]; p < t.start[i+1]; p++ {
			pi[t.cat[p]] += m * t.cnt[p] / t.ri[i]
		}
	}
	for k := range pi {
		pi[k] /= n
	}
	return pi, n
}

// chance computes one of Gwet's family on the table, exactly as the raw-data
// functions of irrCAC 1.4 (agree.coeff3.raw.r) do: items with a single
// rating count in the classification probabilities π_k and in n but not in
// the observed agreement. withSE adds Gwet's (2014, ch. 5) linearised
// variance (1/(n(n-1))) Σ_i (κ*_i - κ)², n the number of rated items.
func (t *table) chance(kind chanceKind, w *weightMat, mult []float64, withSE bool, level float64) Estimate {
	if t.n == 0 || t.q < 2 {
		return undefined()
	}
	pa, n2 := t.observed(w, mult)
	if n2 == 0 {
		return undefined()
	}
	pi, n := t.classProps(mult)
	pe, cg, ok := t.chanceOf(kind, w, pi, mult)
	if !ok {
		return undefined()
	}
	e := undefined()
	e.Pa, e.Pe = pa, pe
	if kind == kindPA {
		e.Pe = 0
		e.Value = pa
	} else if pe < 1 {
		e.Value = (pa - pe) / (1 - pe)
	}
	if !withSE || math.IsNaN(e.Value) || n < 2 {
		return e
	}
	// Linearised per-item values (irrCAC: *.ivec.x).
	c := e.Value
	var wpi []float64
	var sumW float64
	switch kind {
	case kindFleiss:
		wpi = make([]float64, t.q)
		w.mulVec(wpi, pi)
	case kindGwet:
		sumW = w.sum()
	}
	q := float64(t.q)
	ss := 0.0
	for i := 0; i < t.n; i++ {
		ri := t.ri[i]
		pai, ind := 0.0, 0.0
		if ri >= 2 {
			pai = t.itemAgreement(w, i) / (ri * (ri - 1))
			ind = 1
		}
		var x float64
		switch kind {
		case kindPA:
			x = n / n2 * pai
		case kindBP:
			x = n / n2 * (pai - pe*ind) / (1 - pe)
		default:
			var pei float64
			switch kind {
			case kindFleiss:
				for p := t.start[i]; p < t.start[i+1]; p++ {
					pei += t.cnt[p] * wpi[t.cat[p]]
				}
				pei /= ri
			case kindGwet:
				for p := t.start[i]; p < t.start[i+1]; p++ {
					pei += t.cnt[p] * (1 - pi[t.cat[p]])
				}
				pei *= sumW / (q * (q - 1)) / ri
			case kindConger:
				pei = cg.itemChance(t, i)
			}
			x = n/n2*(pai-pe*ind)/(1-pe) - 2*(1-c)*(pei-pe)/(1-pe)
		}
		ss += (x - c) * (x - c)
	}
	e.SE = math.Sqrt(ss / (n * (n - 1)))
	e.tInterval(n-1, level)
	return e
}

// chanceOf is the chance agreement p_e of kind under weights w with class
// proportions pi (and Conger's parts, for Conger's kappa); ok is false when
// it is undefined.
func (t *table) chanceOf(kind chanceKind, w *weightMat, pi, mult []float64) (pe float64, cg *congerParts, ok bool) {
	q := float64(t.q)
	switch kind {
	case kindFleiss:
		pe = w.quad(pi)
	case kindGwet:
		s := 0.0
		for _, p := range pi {
			s += p * (1 - p)
		}
		pe = w.sum() * s / (q * (q - 1))
	case kindBP:
		pe = w.sum() / (q * q)
	case kindConger:
		cg = t.congerChance(w, mult)
		if cg == nil {
			return 0, nil, false
		}
		pe = cg.pe
	}
	return pe, cg, true
}

// chanceValues sets out[x] to the value of kinds[x] on the items weighted
// by mult (as chance(kinds[x], w, mult, false, ·).Value), computing the
// observed agreement and the class proportions once: the bootstrap's
// replicate of a weighting's whole family.
func (t *table) chanceValues(kinds []chanceKind, w *weightMat, mult, out []float64) {
	for x := range out {
		out[x] = math.NaN()
	}
	if t.n == 0 || t.q < 2 {
		return
	}
	pa, n2 := t.observed(w, mult)
	if n2 == 0 {
		return
	}
	pi, _ := t.classProps(mult)
	for x, kind := range kinds {
		if kind == kindPA {
			out[x] = pa
			continue
		}
		if pe, _, ok := t.chanceOf(kind, w, pi, mult); ok && pe < 1 {
			out[x] = (pa - pe) / (1 - pe)
		}
	}
}

// congerParts holds the rater-specific classification probabilities of
// Conger's kappa.
type congerParts struct {
	pe   float64
	r    float64   // raters with at least one rating
	n    float64   // rated items
	ng   []float64 // ratings per rater
	wu   []float64 // per rater g: W (r p̄ - p_g), r × q
	sg   []float64 // per rater g: p_gᵀ W (r p̄ - p_g)
	keep []bool    // rater has ratings
	// sumSG is Σ_g sg over the raters with ratings.
	sumSG float64
}

// congerChance returns Conger's (1980) chance agreement as irrCAC computes
// it: p_e = Σ_kl w_kl (p̄_k p̄_l - s²_kl / r), with p_gk the proportion of
// rater g's ratings in category k, p̄_k their mean over raters and s²_kl their
// covariance. Raters without any rating are left out.
func (t *table) congerChance(w *weightMat, mult []float64) *congerParts {
	counts, ng := t.raterCounts(mult)
	cp := &congerParts{ng: ng, keep: make([]bool, t.r)}
	q := t.q
	var pgs [][]float64
	pbar := make([]float64, q)
	for g := 0; g < t.r; g++ {
		if ng[g] == 0 {
			pgs = append(pgs, nil)
			continue
		}
		cp.keep[g] = true
		cp.r++
		p := make([]float64, q)
		for k := 0; k < q; k++ {
			p[k] = counts[g*q+k] / ng[g]
			pbar[k] += p[k]
		}
		pgs = append(pgs, p)
	}
	if cp.r < 2 {
		return nil
	}
	r := cp.r
	for k := range pbar {
		pbar[k] /= r
	}
	// Σ_kl w_kl (p̄_k p̄_l - s²_kl / r) with
	// s²_kl = (Σ_g p_gk p_gl - r p̄_k p̄_l)/(r - 1).
	sumG := 0.0
	for _, p := range pgs {
		if p != nil {
			sumG += w.quad(p)
		}
	}
	pbarW := w.quad(pbar)
	cp.pe = pbarW - (sumG-r*pbarW)/(r-1)/r
	// Parts of the variance (irrCAC conger.kappa.raw, λ_ig).
	cp.wu = make([]float64, t.r*q)
	cp.sg = make([]float64, t.r)
	u := make([]float64, q)
	for g, p := range pgs {
		if p == nil {
			continue
		}
		for k := range u {
			u[k] = r*pbar[k] - p[k]
		}
		wu := cp.wu[g*q : (g+1)*q]
		w.mulVec(wu, u)
		s := 0.0
		for k := range u {
			s += p[k] * wu[k]
		}
		cp.sg[g] = s
	}
	for i := 0; i < t.n; i++ {
		cp.n += weightOf(mult, i)
	}
	for g := range cp.sg {
		if cp.keep[g] {
			cp.sumSG += cp.sg[g]
		}
	}
	return cp
}

// itemChance is item i's linearised chance agreement p_e|i = Σ_g λ_ig /
// (r(r-1)) of irrCAC's conger.kappa.raw, summed in time linear in the
// item's ratings: a rater g who did not rate item i contributes
// (n/n_g) λ_ig = s_g, so Σ_g (n/n_g) λ_ig = Σ_g s_g + Σ_{g rated i}
// (n/n_g)(w_g·u_g[c] - s_g).
func (cp *congerParts) itemChance(t *table, i int) float64 {
	q := t.q
	s := cp.sumSG
	for p := t.ls[i]; p < t.ls[i+1]; p++ {
		g, c := int(t.lr[p]), int(t.lc[p])
		if !cp.keep[g] {
			continue
		}
		s += cp.n / cp.ng[g] * (cp.wu[g*q+c] - cp.sg[g])
	}
	return s / (cp.r * (cp.r - 1))
}

// CoefOptions are the options of the single coefficients.
type CoefOptions struct {
	// Weights of the weighted coefficients; the zero value is Unweighted.
	Weights Weights
	// ObservedCategoriesOnly uses only the categories that occur in the
	// data (irrCAC's behaviour when categ.labels is not given) instead of
	// all K categories of a categorical table. It matters for AC1/AC2,
	// Brennan-Prediger and Randolph's kappa (chance agreement depends on
	// the number of categories) and for ordinal weights.
	ObservedCategoriesOnly bool
	// ConfLevel of the analytic intervals; 0 means 0.95.
	ConfLevel float64
	// Pairs chooses the rater pairs of PairwiseCohen (and of the
	// agreement tables); the zero value is PairOptions' default.
	Pairs PairOptions
}

func (o CoefOptions) level() float64 {
	if o.ConfLevel == 0 {
		return 0.95
	}
	if !(o.ConfLevel > 0 && o.ConfLevel < 1) {
		panic("raters: ConfLevel must be in (0, 1)")
	}
	return o.ConfLevel
}

func (t *table) weights(w Weights) (*weightMat, error) {
	return newWeightMat(w, t.vals)
}

func familyEstimate(r *Ratings, kind chanceKind, o CoefOptions) (Estimate, error) {
	t := prepare(r, o.ObservedCategoriesOnly)
	w, err := t.weights(o.Weights)
	if err != nil {
		return undefined(), err
	}
	return t.chance(kind, w, nil, true, o.level()), nil
}

// PercentAgreement returns the (weighted) percent agreement among many raters
// with missing ratings, Gwet (2014) eq. 2.9 / 3.4: the mean over the items
// with at least two ratings of Σ_k r_ik (r*_ik - 1) / (r_i (r_i - 1)), with
// irrCAC's standard error (pa.coeff.raw).
func PercentAgreement(r *Ratings, o CoefOptions) (Estimate, error) {
	return familyEstimate(r, kindPA, o)
}

// FleissKappa returns Fleiss' (1971) generalised kappa for many raters with
// missing ratings, as Gwet (2014, ch. 2 and 3) generalises it and irrCAC's
// fleiss.kappa.raw computes it: κ = (p_a - p_e)/(1 - p_e) with p_e =
// Σ_kl w_kl π_k π_l and π_k = (1/n) Σ_i r_ik / r_i over every rated item. With
// complete data and no weights it is Fleiss' kappa exactly. The standard
// error is Gwet's linearised one (not Fleiss' null-hypothesis one; see
// FleissCategoryKappas for that).
func FleissKappa(r *Ratings, o CoefOptions) (Estimate, error) {
	return familyEstimate(r, kindFleiss, o)
}

// GwetAC returns Gwet's (2008) AC1 (unweighted) or AC2 (weighted) for many
// raters with missing ratings, as irrCAC's gwet.ac1.raw: p_e = T_w /
// (q(q-1)) Σ_k π_k (1 - π_k), T_w the sum of the weights.
func GwetAC(r *Ratings, o CoefOptions) (Estimate, error) {
	return familyEstimate(r, kindGwet, o)
}

// BrennanPrediger returns Brennan & Prediger's (1981) coefficient for many
// raters with missing ratings, as irrCAC's bp.coeff.raw: p_e = T_w / q².
func BrennanPrediger(r *Ratings, o CoefOptions) (Estimate, error) {
	return familyEstimate(r, kindBP, o)
}

// RandolphKappa returns Randolph's (2005) free-marginal multirater kappa,
// (P_o - 1/q)/(1 - 1/q). It is the unweighted Brennan-Prediger coefficient
// (Warrens 2010), computed and given a standard error as such; o.Weights is
// ignored.
func RandolphKappa(r *Ratings, o CoefOptions) (Estimate, error) {
	o.Weights = Unweighted
	return familyEstimate(r, kindBP, o)
}

// CongerKappa returns Conger's (1980) generalisation of Cohen's kappa to many
// raters with missing ratings, as irrCAC's conger.kappa.raw: p_e =
// Σ_kl w_kl (p̄_k p̄_l - s²_kl / r) from each rater's own classification
// probabilities.
func CongerKappa(r *Ratings, o CoefOptions) (Estimate, error) {
	return familyEstimate(r, kindConger, o)
}

// FleissCategoryKappas returns Fleiss' (1971) kappa of each category against
// all the others: κ_j = 1 - Σ_i x_ij (m - x_ij) / (N m (m-1) p_j q_j) with
// complete data, which is Fleiss' kappa of the table dichotomised into
// category j and the rest; with missing ratings it is FleissKappa of that
// dichotomised table (Gwet's generalisation), with its standard error.
// o.Weights is ignored.
func FleissCategoryKappas(r *Ratings, o CoefOptions) []Estimate {
	t := prepare(r, o.ObservedCategoriesOnly)
	out := make([]Estimate, t.q)
	for c := range out {
		out[c] = t.dichotomize(c).chance(kindFleiss, unweighted2(), nil, true, o.level())
	}
	return out
}
