package raters

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Metric is the difference function δ² of Krippendorff's alpha, chosen by the
// level of measurement.
type Metric int

// The metrics of Krippendorff (2011), "Computing Krippendorff's
// Alpha-Reliability", sec. C (values c, k; n_g the number of pairable values
// of category g):
//
//	Nominal   δ²_ck = 0 if c = k, else 1
//	Ordinal   δ²_ck = (Σ_{g=c..k} n_g - (n_c + n_k)/2)²
//	Interval  δ²_ck = (c - k)²
//	Ratio     δ²_ck = ((c - k)/(c + k))²
const (
	NominalMetric Metric = iota
	OrdinalMetric
	IntervalMetric
	RatioMetric
)

// String names the metric as its measurement level (levelNames).
func (m Metric) String() string { return enumName(levelNames[:], m, "Metric") }

// alphaParts holds the pairable values of a table.
type alphaParts struct {
	nc  []float64 // pairable values per category
	n   float64   // pairable values
	cum []float64 // cum[g] = Σ_{h<g} n_h (ordinal metric)
}

func (t *table) pairable(mult []float64) *alphaParts {
	a := &alphaParts{nc: make([]float64, t.q), cum: make([]float64, t.q+1)}
	for i := 0; i < t.n; i++ {
		m := weightOf(mult, i)
		if m == 0 || t.ri[i] < 2 {
			continue
		}
		for p := t.start[i]; p < t.start[i+1]; p++ {
			a.nc[t.cat[p]] += m * t.cnt[p]
		}
	}
	for g, v := range a.nc {
		a.n += v
		a.cum[g+1] = a.cum[g] + v
	}
	return a
}

// delta returns δ²_ck for categories c and k.
func (t *table) delta(m Metric, a *alphaParts, c, k int) float64 {
	if c == k {
		return 0
	}
	switch m {
	case NominalMetric:
		return 1
	case OrdinalMetric:
		if c > k {
			c, k = k, c
		}
		d := a.cum[k+1] - a.cum[c] - (a.nc[c]+a.nc[k])/2
		return d * d
	case IntervalMetric:
		d := t.vals[c] - t.vals[k]
		return d * d
	case RatioMetric:
		return ratioDist(t.vals[c], t.vals[k])
	}
	panic("raters: unknown metric")
}

// alpha computes Krippendorff's alpha by the coincidence method of
// Krippendorff (2011): α = 1 - D_o/D_e with
//
//	D_o = (1/n) Σ_u 1/(m_u - 1) Σ_{c≠k} n_uc n_uk δ²_ck   (= (1/n) Σ_ck o_ck δ²_ck)
//	D_e = 1/(n(n-1)) Σ_{c≠k} n_c n_k δ²_ck
//
// over the units u with m_u ≥ 2 pairable values. mult weights the items.
func (t *table) alpha(m Metric, mult []float64) (alpha, do, de float64) {
	nan := math.NaN()
	if t.n == 0 {
		return nan, nan, nan
	}
	a := t.pairable(mult)
	if a.n < 2 {
		return nan, nan, nan
	}
	for i := 0; i < t.n; i++ {
		w := weightOf(mult, i)
		if w == 0 || t.ri[i] < 2 {
			continue
		}
		cats := t.cat[t.start[i]:t.start[i+1]]
		cnts := t.cnt[t.start[i]:t.start[i+1]]
		s := 0.0
		for x := range cats {
			for y := x + 1; y < len(cats); y++ {
				s += 2 * cnts[x] * cnts[y] * t.delta(m, a, int(cats[x]), int(cats[y]))
			}
		}
		do += w * s / (t.ri[i] - 1)
	}
	do /= a.n
	switch m {
	case NominalMetric:
		s := 0.0
		for _, v := range a.nc {
			s += v * v
		}
		de = a.n*a.n - s
	case IntervalMetric:
		var s1, s2 float64
		for g, v := range a.nc {
			s1 += v * t.vals[g]
			s2 += v * t.vals[g] * t.vals[g]
		}
		de = 2 * (a.n*s2 - s1*s1)
	default:
		var used []int
		for g, v := range a.nc {
			if v > 0 {
				used = append(used, g)
			}
		}
		for x, c := range used {
			for _, k := range used[x+1:] {
				de += 2 * a.nc[c] * a.nc[k] * t.delta(m, a, c, k)
			}
		}
	}
	de /= a.n * (a.n - 1)
	if !(de > 0) {
		return nan, do, de
	}
	return 1 - do/de, do, de
}

// metricWeights turns a metric into agreement weights w_ck = 1 - δ²_ck /
// max δ² (for the ordinal metric the distances computed from the data are
// held fixed).
func (t *table) metricWeights(m Metric) (*weightMat, error) {
	switch m {
	case NominalMetric:
		return newWeightMat(Unweighted, t.vals)
	case IntervalMetric:
		return newWeightMat(QuadraticWeights, t.vals)
	}
	if t.q > maxDenseWeights {
		return nil, fmt.Errorf("raters: %s metric on %d categories (at most %d)", m, t.q, maxDenseWeights)
	}
	a := t.pairable(nil)
	q := t.q
	w := &weightMat{kind: -1, q: q, vals: t.vals, dense: make([]float64, q*q)}
	mx := 0.0
	for c := 0; c < q; c++ {
		for k := 0; k < q; k++ {
			d := t.delta(m, a, c, k)
			w.dense[c*q+k] = d
			mx = math.Max(mx, d)
		}
	}
	for i, d := range w.dense {
		w.dense[i] = 1 - d/mx
	}
	return w, nil
}

// alphaGwet computes Krippendorff's alpha in Gwet's (2014, sec. 5.5)
// formulation with agreement weights w, as irrCAC's krippen.alpha.raw does,
// with its linearised standard error: over the n items with r_i ≥ 2,
//
//	p_a = (1 - ε) p'_a + ε,  p'_a = (1/n) Σ_i Σ_k r_ik (r*_ik - 1) / (r̄ (r_i - 1)),  ε = 1/(n r̄)
//	p_e = Σ_kl w_kl π_k π_l,  π_k = (1/n) Σ_i r_ik / r̄
//
// For weights 1 - δ²/max δ² it equals the coincidence-matrix alpha.
// pairedItems returns the items with at least two ratings and their total
// number of ratings.
func (t *table) pairedItems() (items []int, sumR float64) {
	for i := 0; i < t.n; i++ {
		if t.ri[i] >= 2 {
			items = append(items, i)
			sumR += t.ri[i]
		}
	}
	return items, sumR
}

func (t *table) alphaGwet(w *weightMat) (alpha, se, pa, pe float64) {
	nan := math.NaN()
	items, sumR := t.pairedItems()
	n := float64(len(items))
	if n < 1 || t.q < 2 {
		return nan, nan, nan, nan
	}
	rbar := sumR / n
	eps := 1 / sumR
	sumq := make([]float64, len(items))
	paPrime := 0.0
	pi := make([]float64, t.q)
	for x, i := range items {
		sumq[x] = t.itemAgreement(w, i)
		paPrime += sumq[x] / (rbar * (t.ri[i] - 1))
		for p := t.start[i]; p < t.start[i+1]; p++ {
			pi[t.cat[p]] += t.cnt[p] / rbar
		}
	}
	paPrime /= n
	for k := range pi {
		pi[k] /= n
	}
	pa = (1-eps)*paPrime + eps
	pe = w.quad(pi)
	if !(pe < 1) {
		return nan, nan, pa, pe
	}
	alpha = (pa - pe) / (1 - pe)
	if n < 2 {
		return alpha, nan, pa, pe
	}
	alphaPrime := (paPrime - pe) / (1 - pe)
	wpi := make([]float64, t.q)
	w.mulVec(wpi, pi)
	ss := 0.0
	for x, i := range items {
		ri := t.ri[i]
		pai := sumq[x]/(rbar*(ri-1)) - paPrime*(ri-rbar)/rbar
		ki := (pai - pe) / (1 - pe)
		pei := 0.0
		for p := t.start[i]; p < t.start[i+1]; p++ {
			pei += t.cnt[p] * wpi[t.cat[p]]
		}
		pei = pei/rbar - pe*(ri-rbar)/rbar
		xi := ki - 2*(1-alphaPrime)*(pei-pe)/(1-pe)
		ss += (xi - alphaPrime) * (xi - alphaPrime)
	}
	return alpha, math.Sqrt(ss / (n * (n - 1))), pa, pe
}

// KrippendorffAlpha returns Krippendorff's alpha with the given metric,
// computed by the coincidence-matrix method of Krippendorff (2011) (any number
// of raters, missing ratings, units with fewer than two values left out). SE
// is Gwet's linearised standard error as irrCAC's krippen.alpha.raw gives it,
// with the t interval on the number of rated items; Pa and Pe are irrCAC's
// p_a and p_e. The metric must suit the data: every metric applies to
// categorical tables (the interval and ratio metrics use the category
// values); the ratio metric needs non-negative values. o.Weights is ignored.
func KrippendorffAlpha(r *Ratings, m Metric, o CoefOptions) (Estimate, error) {
	t := prepare(r, o.ObservedCategoriesOnly)
	return t.alphaEstimate(m, o.level())
}

func (t *table) alphaEstimate(m Metric, level float64) (Estimate, error) {
	if m < NominalMetric || m > RatioMetric {
		panic("raters: unknown metric")
	}
	if m == RatioMetric && t.q > 0 && t.vals[0] < 0 {
		return undefined(), fmt.Errorf("raters: the ratio metric needs non-negative values, have %v", t.vals[0])
	}
	e := undefined()
	e.Value, _, _ = t.alpha(m, nil)
	if math.IsNaN(e.Value) {
		return e, nil
	}
	if w, err := t.metricWeights(m); err == nil {
		_, e.SE, e.Pa, e.Pe = t.alphaGwet(w)
	}
	// irrCAC's interval uses the t distribution on n0 - 1 degrees of
	// freedom, n0 the number of rated items.
	e.tInterval(float64(t.n-1), level)
	return e, nil
}

// Coincidences returns Krippendorff's coincidence matrix o_ck (Krippendorff
// 2011, sec. B) of a categorical table: o_ck = Σ_u (number of c-k pairs in
// unit u)/(m_u - 1) over the units with m_u ≥ 2 values. Its row sums are the
// pairable values n_c. It panics on continuous tables.
func Coincidences(r *Ratings) *mat.Dense {
	if r.K == 0 {
		panic("raters: Coincidences of a continuous table")
	}
	t := prepare(r, false)
	o := mat.NewDense(t.q, t.q, nil)
	for i := 0; i < t.n; i++ {
		if t.ri[i] < 2 {
			continue
		}
		for p := t.start[i]; p < t.start[i+1]; p++ {
			for s := t.start[i]; s < t.start[i+1]; s++ {
				c, k := int(t.cat[p]), int(t.cat[s])
				pairs := t.cnt[p] * t.cnt[s]
				if p == s {
					pairs = t.cnt[p] * (t.cnt[p] - 1)
				}
				o.Set(c, k, o.At(c, k)+pairs/(t.ri[i]-1))
			}
		}
	}
	return o
}

// KrippendorffAlphaWeights returns Krippendorff's alpha with the agreement
// weights o.Weights in place of a metric, as irrCAC's krippen.alpha.raw
// computes it (Gwet 2014, sec. 5.5), with its standard error. Linear and
// quadratic weights give the same alpha as the metrics |c - k| and (c - k)²
// (quadratic: the interval metric); irrCAC's ordinal weights are not
// Krippendorff's ordinal metric (they ignore the marginal frequencies), use
// KrippendorffAlpha with OrdinalMetric for that.
func KrippendorffAlphaWeights(r *Ratings, o CoefOptions) (Estimate, error) {
	t := prepare(r, o.ObservedCategoriesOnly)
	w, err := t.weights(o.Weights)
	if err != nil {
		return undefined(), err
	}
	return t.alphaWeightsEstimate(w, o.level()), nil
}

func (t *table) alphaWeightsEstimate(w *weightMat, level float64) Estimate {
	e := undefined()
	e.Value, e.SE, e.Pa, e.Pe = t.alphaGwet(w)
	if !math.IsNaN(e.Value) {
		e.tInterval(float64(t.n-1), level)
	}
	return e
}
