package raters

import (
	"errors"
	"fmt"
	"math"
)

// TableOptions control AnalyzeTable and AnalyzeCounts. The zero value gives
// the unweighted coefficients with 95% t intervals.
type TableOptions struct {
	// Values are the category values the weights are computed on; nil
	// means 1..q (irrCAC's default for its table functions, and
	// statsmodels' for its named weights).
	Values []float64
	// CategoryNames name the categories; nil means their indices.
	CategoryNames []string
	// Weights are the weightings of the weighted coefficients
	// (Report.Weighted); nil means none.
	Weights []Weights
	// WeightMatrix, if not nil, is a q × q matrix of agreement weights
	// (w_kk = 1; symmetric, since the Scott, Fleiss and Krippendorff forms
	// average the two margins' weighted sums) whose weighted coefficients
	// are added to Report.Weighted as "custom". statsmodels' cohens_kappa
	// takes disagreement weights d; w = 1 - d gives its kappa and
	// variances exactly.
	WeightMatrix [][]float64
	// ConfLevel of the intervals; 0 means 0.95.
	ConfLevel float64
	// CI and Null are Options' CI and Null.
	CI   CIKind
	Null float64
	// Population is Options' Population: the size N of the population
	// of subjects (the table's total count, or the items of the counts,
	// are the sample); 0 means infinite.
	Population int
}

func (o TableOptions) check(q int) {
	if o.Values != nil && len(o.Values) != q {
		panic(fmt.Sprintf("raters: %d category values for %d categories", len(o.Values), q))
	}
	Options{CI: o.CI, Null: o.Null, Weights: o.Weights, Population: o.Population}.check()
	if o.WeightMatrix != nil {
		checkWeightMatrix(o.WeightMatrix, q)
	}
}

// CustomWeightsName is the name of TableOptions.WeightMatrix's weighted
// coefficients in Report.Weighted.
const CustomWeightsName = "custom"

// weightMats returns the weightings of o on values vals with their names.
func (o TableOptions) weightMats(vals []float64) ([]*weightMat, []string, error) {
	var (
		ws    []*weightMat
		names []string
	)
	for _, w := range o.Weights {
		wm, err := newWeightMat(w, vals)
		if err != nil {
			return nil, nil, err
		}
		ws, names = append(ws, wm), append(names, w.String())
	}
	if o.WeightMatrix != nil {
		ws, names = append(ws, newCustomWeightMat(o.WeightMatrix)), append(names, CustomWeightsName)
	}
	return ws, names, nil
}

func (o TableOptions) values(q int) []float64 {
	if o.Values != nil {
		return o.Values
	}
	v := make([]float64, q)
	for k := range v {
		v[k] = float64(k + 1)
	}
	return v
}

// newTableReport starts the report of a table or counts input.
func newTableReport(input string, q int, o TableOptions) *Report {
	rep := &Report{Input: input, Level: Nominal.String(), ConfLevel: CoefOptions{ConfLevel: o.ConfLevel}.level(), CI: o.CI.String(),
		Bootstrap: 0, Population: o.Population, Aggregators: map[string]*Consensus{}}
	if len(o.Weights) > 0 || o.WeightMatrix != nil {
		rep.Level = Ordinal.String()
	}
	if o.Null != 0 {
		v := num(o.Null)
		rep.NullValue = &v
	}
	for k := 0; k < q; k++ {
		rep.Categories = append(rep.Categories, name(o.CategoryNames, k))
	}
	return rep
}

// AnalyzeTable computes the two-rater coefficients of a q × q contingency
// table (tab[k][l]: the items the row rater put in category k and the
// column rater in l; non-negative counts) exactly as irrCAC's table
// functions do (kappa2.table, scott2.table, gwet.ac1.table, bp2.table,
// krippen2.table, pa2.table; agree.coeff2.r), with their variances and t
// intervals on n - 1 degrees of freedom, n the total count:
//
//	Cohen's kappa   p_e = Σ w_kl p_k. p_.l,  var = [Σ p_kl (w_kl - (1-κ)(w̄_k + w̄_l))² - (p_a - 2(1-κ)p_e)²] / (n(1-p_e)²)
//	Scott's pi      p_e = Σ w_kl π_k π_l, π = (p_k. + p_.k)/2, the same form with the mean of w̄_k and w̄_l
//	Gwet's AC1/AC2  p_e = T_w Σ π_k(1-π_k)/(q(q-1)), T_w = Σ w_kl
//	Brennan-Prediger  p_e = T_w/q², var = (Σ p_kl w_kl² - p_a²)/(n(1-p_e)²)
//	Krippendorff's alpha  p_a corrected by ε = 1/(2n)
//	percent agreement     var = (Σ p_kl w_kl² - p_a²)/n
//
// Cohen's kappa also gets the standard error under independence
// (Estimate.SENull; Fleiss, Cohen & Everitt 1969), which its normal test
// (CINormal) uses as statsmodels' cohens_kappa and SAS do. The unweighted
// coefficients fill the report's top level (Cohen's kappa as the one pair
// "rows" - "columns"), the weighted ones Report.Weighted.
func AnalyzeTable(tab [][]float64, o TableOptions) (*Report, error) {
	q := len(tab)
	for k, row := range tab {
		if len(row) != q {
			panic(fmt.Sprintf("raters: contingency table row %d has %d cells, want %d", k, len(row), q))
		}
		for _, v := range row {
			if !(v >= 0) || math.IsInf(v, 0) {
				panic(fmt.Sprintf("raters: contingency table cell %v is not a non-negative count", v))
			}
		}
	}
	if q < 2 {
		return nil, fmt.Errorf("raters: a contingency table needs at least 2 categories, have %d", q)
	}
	o.check(q)
	ct := newContingency(tab)
	if ct.n == 0 {
		return nil, errors.New("raters: the contingency table is empty (every count is 0)")
	}
	if err := checkPopulation(o.Population, ct.n, "subjects (the table's total count)"); err != nil {
		return nil, err
	}
	rep := newTableReport("table", q, o)
	rep.Raters, rep.Items, rep.Labels = 2, int(math.Round(ct.n)), int(math.Round(2*ct.n))
	level := rep.ConfLevel
	vals := o.values(q)
	uw, _ := newWeightMat(Unweighted, vals)
	u := ct.coefficients(uw, level)
	rep.CohenKappa = []CohenPair{{A: "rows", B: "columns", N: rep.Items, Unweighted: &u.cohen}}
	rep.ScottPi, rep.GwetAC1, rep.BrennanPrediger, rep.PercentAgreement = &u.scott, &u.gwet, &u.bp, &u.pa
	rep.KrippendorffAlpha = map[string]Estimate{NominalMetric.String(): u.alpha}
	wms, names, err := o.weightMats(vals)
	if err != nil {
		return nil, err
	}
	for i, wm := range wms {
		c := ct.coefficients(wm, level)
		if rep.Weighted == nil {
			rep.Weighted = map[string]WeightedSet{}
		}
		rep.Weighted[names[i]] = WeightedSet{PercentAgreement: c.pa, FleissKappa: undefined(), CongerKappa: undefined(),
			GwetAC2: c.gwet, BrennanPrediger: c.bp, KrippendorffAlpha: c.alpha, CohenKappa: &c.cohen, ScottPi: &c.scott}
	}
	rep.eachEstimate(func(e *Estimate) {
		e.finite(o.Population, level)
		e.test(o.CI, level, o.Null)
	})
	return rep, nil
}

// contingency is a q × q table as proportions with its margins.
type contingency struct {
	q      int
	n      float64
	p      [][]float64 // p_kl
	pr, pc []float64   // p_k., p_.l
}

func newContingency(tab [][]float64) *contingency {
	q := len(tab)
	c := &contingency{q: q, p: make([][]float64, q), pr: make([]float64, q), pc: make([]float64, q)}
	for _, row := range tab {
		for _, v := range row {
			c.n += v
		}
	}
	for k, row := range tab {
		c.p[k] = make([]float64, q)
		if c.n == 0 {
			continue
		}
		for l, v := range row {
			c.p[k][l] = v / c.n
			c.pr[k] += v / c.n
			c.pc[l] += v / c.n
		}
	}
	return c
}

// tableCoefs are the coefficients of a contingency table under one
// weighting.
type tableCoefs struct {
	cohen, scott, gwet, bp, alpha, pa Estimate
}

// wkl is the weight of cell (k, l), 1 on the diagonal.
func wkl(w *weightMat, k, l int) float64 {
	if k == l {
		return 1
	}
	return w.at(k, l)
}

// coefficients computes irrCAC's table coefficients under weights w.
func (c *contingency) coefficients(w *weightMat, level float64) tableCoefs {
	q, n := c.q, c.n
	var pa, tw, sumW2 float64
	pbk := make([]float64, q) // w̄_.k = Σ_l w_kl p_.l
	pbl := make([]float64, q) // w̄_l. = Σ_k w_kl p_k.
	pi := make([]float64, q)
	for k := 0; k < q; k++ {
		pi[k] = (c.pr[k] + c.pc[k]) / 2
		for l := 0; l < q; l++ {
			x := wkl(w, k, l)
			pa += x * c.p[k][l]
			tw += x
			sumW2 += x * x * c.p[k][l]
			pbk[k] += x * c.pc[l]
			pbl[l] += x * c.pr[k]
		}
	}
	pbar := make([]float64, q)
	for k := range pbar {
		pbar[k] = (pbk[k] + pbl[k]) / 2
	}
	var peCohen, peScott, peGwet float64
	for k := 0; k < q; k++ {
		peGwet += pi[k] * (1 - pi[k])
		for l := 0; l < q; l++ {
			x := wkl(w, k, l)
			peCohen += x * c.pr[k] * c.pc[l]
			peScott += x * pi[k] * pi[l]
		}
	}
	qq := float64(q)
	peGwet *= tw / (qq * (qq - 1))
	peBP := tw / (qq * qq)
	var out tableCoefs
	// Cohen's kappa, with the null standard error.
	out.cohen = c.chanceForm(pa, peCohen, level, func(k, l int, kappa float64) float64 {
		return wkl(w, k, l) - (1-kappa)*(pbk[k]+pbl[l])
	})
	if !math.IsNaN(out.cohen.Value) {
		s := 0.0
		for k := 0; k < q; k++ {
			for l := 0; l < q; l++ {
				d := wkl(w, k, l) - (pbk[k] + pbl[l])
				s += c.pr[k] * c.pc[l] * d * d
			}
		}
		out.cohen.SENull = math.Sqrt(math.Max(0, (s-peCohen*peCohen)/(n*(1-peCohen)*(1-peCohen))))
	}
	out.scott = c.chanceForm(pa, peScott, level, func(k, l int, s float64) float64 {
		return wkl(w, k, l) - (1-s)*(pbar[k]+pbar[l])
	})
	out.gwet = c.chanceForm(pa, peGwet, level, func(k, l int, g float64) float64 {
		return wkl(w, k, l) - 2*(1-g)*tw*(1-(pi[k]+pi[l])/2)/(qq*(qq-1))
	})
	// Brennan-Prediger and percent agreement.
	out.bp = undefined()
	out.bp.Pa, out.bp.Pe = pa, peBP
	if peBP < 1 {
		out.bp.Value = (pa - peBP) / (1 - peBP)
		out.bp.SE = math.Sqrt(math.Max(0, (sumW2-pa*pa)/(n*(1-peBP)*(1-peBP))))
		out.bp.tInterval(n-1, level)
	}
	out.pa = undefined()
	out.pa.Value, out.pa.Pa, out.pa.Pe = pa, pa, 0
	out.pa.SE = math.Sqrt(math.Max(0, (sumW2-pa*pa)/n))
	out.pa.tInterval(n-1, level)
	out.alpha = c.alpha(w, pa, peScott, pbar, level)
	return out
}

// chanceForm is a coefficient (p_a - p_e)/(1 - p_e) with irrCAC's
// two-rater variance [Σ p_kl d_kl² - (p_a - 2(1-κ)p_e)²]/(n(1-p_e)²), d the
// coefficient's linearised cell term.
func (c *contingency) chanceForm(pa, pe, level float64, d func(k, l int, kappa float64) float64) Estimate {
	e := undefined()
	e.Pa, e.Pe = pa, pe
	if !(pe < 1) {
		return e
	}
	kappa := (pa - pe) / (1 - pe)
	e.Value = kappa
	s := 0.0
	for k := 0; k < c.q; k++ {
		for l := 0; l < c.q; l++ {
			if c.p[k][l] > 0 {
				x := d(k, l, kappa)
				s += c.p[k][l] * x * x
			}
		}
	}
	t := pa - 2*(1-kappa)*pe
	e.SE = math.Sqrt(math.Max(0, (s-t*t)/(c.n*(1-pe)*(1-pe))))
	e.tInterval(c.n-1, level)
	return e
}

// alpha is krippen2.table: Krippendorff's alpha with p_a corrected by
// ε = 1/(2n) and the variance of Scott's form at κ0 = (p_a0 - p_e)/(1 - p_e).
func (c *contingency) alpha(w *weightMat, pa0, pe float64, pbar []float64, level float64) Estimate {
	e := undefined()
	if !(pe < 1) {
		return e
	}
	eps := 1 / (2 * c.n)
	pa := (1-eps)*pa0 + eps
	e.Pa, e.Pe = pa, pe
	e.Value = (pa - pe) / (1 - pe)
	k0 := (pa0 - pe) / (1 - pe)
	s := 0.0
	for k := 0; k < c.q; k++ {
		for l := 0; l < c.q; l++ {
			if c.p[k][l] > 0 {
				x := wkl(w, k, l) - (1-k0)*(pbar[k]+pbar[l])
				s += c.p[k][l] * x * x
			}
		}
	}
	t := pa0 - 2*(1-k0)*pe
	e.SE = math.Sqrt(math.Max(0, (s-t*t)/(c.n*(1-pe)*(1-pe))))
	e.tInterval(c.n-1, level)
	return e
}

// AnalyzeCounts computes the many-rater coefficients of per-item category
// counts (counts[i][k]: how many raters put item i in category k; Fleiss's
// 1971 layout, statsmodels' fleiss_kappa table) exactly as irrCAC's
// distribution functions do (fleiss.kappa.dist, gwet.ac1.dist,
// bp.coeff.dist, krippen.alpha.dist, pa.coeff.dist; agree.coeff3.dist.r):
// they are the raw-data coefficients (see FleissKappa, GwetAC1, ...) on the
// counts, with the same variances and t intervals, except Krippendorff's
// alpha, whose variance is krippen.alpha.dist's own (alphaDist). Items without counts
// are left out (with a note); Randolph's kappa is Brennan-Prediger, Fleiss'
// kappa carries the null standard error of Fleiss, Nee & Landis (1979)
// when every item has the same number of ratings, and the per-category
// kappas are Fleiss' kappa of each category against the others. Conger's
// and Cohen's kappas need the raters, which counts do not have.
func AnalyzeCounts(counts [][]float64, o TableOptions) (*Report, error) {
	if len(counts) == 0 {
		return nil, errors.New("raters: no items")
	}
	q := len(counts[0])
	t := &table{q: q, start: []int{0}}
	dropped := 0
	for i, row := range counts {
		if len(row) != q {
			panic(fmt.Sprintf("raters: counts row %d has %d cells, want %d", i, len(row), q))
		}
		ri := 0.0
		for k, v := range row {
			if !(v >= 0) || math.IsInf(v, 0) {
				panic(fmt.Sprintf("raters: count %v is not a non-negative number", v))
			}
			if v > 0 {
				t.cat = append(t.cat, int32(k))
				t.cnt = append(t.cnt, v)
				ri += v
			}
		}
		if ri == 0 {
			dropped++
			continue
		}
		t.ri = append(t.ri, ri)
		t.start = append(t.start, len(t.cat))
		t.n++
	}
	if q < 2 {
		return nil, fmt.Errorf("raters: counts need at least 2 categories, have %d", q)
	}
	o.check(q)
	if t.n == 0 {
		return nil, errors.New("raters: every item's counts are 0")
	}
	if err := checkPopulation(o.Population, float64(t.n), "items with counts"); err != nil {
		return nil, err
	}
	t.vals = o.values(q)
	rep := newTableReport("counts", q, o)
	rep.Items = t.n
	labels := 0.0
	for _, ri := range t.ri {
		labels += ri
		rep.Raters = max(rep.Raters, int(math.Round(ri)))
	}
	rep.Labels = int(math.Round(labels))
	level := rep.ConfLevel
	uw, _ := newWeightMat(Unweighted, t.vals)
	est := func(kind chanceKind, w *weightMat) *Estimate {
		e := t.chance(kind, w, nil, true, level)
		return &e
	}
	rep.FleissKappa, rep.GwetAC1 = est(kindFleiss, uw), est(kindGwet, uw)
	rep.BrennanPrediger, rep.RandolphKappa, rep.PercentAgreement = est(kindBP, uw), est(kindBP, uw), est(kindPA, uw)
	rep.KrippendorffAlpha = map[string]Estimate{NominalMetric.String(): t.alphaDist(uw, level)}
	if se0, ok := t.fleissNullSE(); ok {
		v := num(se0)
		rep.FleissKappaSENull = &v
		rep.FleissKappa.SENull = se0
	}
	for c := 0; c < q; c++ {
		d := t.dichotomize(c)
		ck := CategoryKappa{Category: name(o.CategoryNames, c), Estimate: d.chance(kindFleiss, unweighted2(), nil, true, level)}
		if se0, ok := d.fleissNullSE(); ok {
			ck.SENull = se0
		}
		rep.FleissCategories = append(rep.FleissCategories, ck)
	}
	wms, names, err := o.weightMats(t.vals)
	if err != nil {
		return nil, err
	}
	for i, wm := range wms {
		if rep.Weighted == nil {
			rep.Weighted = map[string]WeightedSet{}
		}
		rep.Weighted[names[i]] = WeightedSet{PercentAgreement: *est(kindPA, wm), FleissKappa: *est(kindFleiss, wm), CongerKappa: undefined(),
			GwetAC2: *est(kindGwet, wm), BrennanPrediger: *est(kindBP, wm), KrippendorffAlpha: t.alphaDist(wm, level)}
	}
	if dropped > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d items without counts left out", dropped))
	}
	rep.eachEstimate(func(e *Estimate) {
		e.finite(o.Population, level)
		e.test(o.CI, level, o.Null)
	})
	return rep, nil
}

// alphaDist is Krippendorff's alpha of per-item counts as irrCAC's
// krippen.alpha.dist computes it: the value of alphaGwet, with the
// distribution function's own linearisation over the n items with at
// least two ratings (r̄ their mean count, ε = 1/Σ r_i):
//
//	pa_i = (1-ε)(Σ_k r_ik (r*_ik - 1)/(r̄ (r_i - 1)) - p'_a (r_i - r̄)/r̄) + ε
//	pe_i = Σ_k r_ik (Wπ)_k / r̄ - Σ_k π_k (r_i - r̄)/r̄
//	x_i = (pa_i - p_e)/(1 - p_e) - (1 - α)(pe_i - p_e)/(1 - p_e)
//	var = Σ (x_i - α)² / (n (n-1)), t interval on n - 1 degrees of freedom
func (t *table) alphaDist(w *weightMat, level float64) Estimate {
	e := undefined()
	e.Value, _, e.Pa, e.Pe = t.alphaGwet(w)
	items, sumR := t.pairedItems()
	n := float64(len(items))
	if math.IsNaN(e.Value) || n < 2 {
		return e
	}
	rbar, eps, pe, alpha := sumR/n, 1/sumR, e.Pe, e.Value
	pi := make([]float64, t.q)
	paPrime := 0.0
	for _, i := range items {
		paPrime += t.itemAgreement(w, i) / (rbar * (t.ri[i] - 1))
		for p := t.start[i]; p < t.start[i+1]; p++ {
			pi[t.cat[p]] += t.cnt[p] / rbar / n
		}
	}
	paPrime /= n
	sumPi := sum(pi)
	wpi := make([]float64, t.q)
	w.mulVec(wpi, pi)
	ss := 0.0
	for _, i := range items {
		ri := t.ri[i]
		pai := (1-eps)*(t.itemAgreement(w, i)/(rbar*(ri-1))-paPrime*(ri-rbar)/rbar) + eps
		pei := 0.0
		for p := t.start[i]; p < t.start[i+1]; p++ {
			pei += t.cnt[p] * wpi[t.cat[p]]
		}
		pei = pei/rbar - sumPi*(ri-rbar)/rbar
		x := (pai-pe)/(1-pe) - (1-alpha)*(pei-pe)/(1-pe)
		ss += (x - alpha) * (x - alpha)
	}
	e.SE = math.Sqrt(ss / (n * (n - 1)))
	e.tInterval(n-1, level)
	e.fpcN = float64(t.n) // krippen.alpha.dist's f: every subject
	return e
}
