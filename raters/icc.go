package raters

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat/distuv"
)

// ICCOptions control ICC.
type ICCOptions struct {
	// CompleteCasesOnly drops the items that some rater did not rate and
	// computes the classical two-way ANOVA mean squares (psych::ICC with
	// lmer = FALSE on na.omit data). By default every rating is used and
	// the mean squares come from the REML variance components of the
	// crossed random-effects model, as psych::ICC does by default
	// (lmer = TRUE); with complete data the two agree whenever no variance
	// component estimate is negative.
	CompleteCasesOnly bool
	// ConfLevel of the F-based intervals; 0 means 0.95.
	ConfLevel float64
}

// ICCResult holds the six intraclass correlations of Shrout & Fleiss (1979)
// and what they were computed from.
type ICCResult struct {
	// ICC1, ICC2, ICC3 are ICC(1,1), ICC(2,1), ICC(3,1) (single rater:
	// one-way random, two-way random, two-way mixed); ICC1k, ICC2k, ICC3k
	// the reliabilities of the mean of K raters. Each carries the F-based
	// confidence interval of Shrout & Fleiss (1979) and McGraw & Wong
	// (1996) as psych::ICC computes it (CIMethod "F").
	ICC1, ICC2, ICC3, ICC1k, ICC2k, ICC3k Estimate
	// N is the number of items (rows) and K the number of raters
	// (columns) in the formulas; Dropped counts the items left out
	// (no rating at all, or incomplete with CompleteCasesOnly).
	N, K, Dropped int
	// MSB (between items), MSJ (between raters), MSE (residual) and MSW
	// (within items) are the mean squares.
	MSB, MSJ, MSE, MSW float64
	// F statistics and degrees of freedom of the tests of ICC(1) and
	// ICC(2)/ICC(3) against zero.
	F1, DF1n, DF1d, F2, DF2n, DF2d float64
	// VarItems, VarRaters and VarResidual are the variance components
	// (REML when Method is "reml").
	VarItems, VarRaters, VarResidual float64
	// REMLCriterion is the minimised REML criterion, -2 times the REML
	// log-likelihood (lme4's REMLcrit), when Method is "reml" and the fit
	// needed the optimiser; NaN otherwise.
	REMLCriterion float64
	// Method is "reml" or "anova".
	Method string
}

// ICC returns the intraclass correlations of Shrout & Fleiss (1979) with
// psych::ICC's (Revelle, psych 2.2.9) definitions and intervals:
//
//	ICC1  = (MSB - MSW) / (MSB + (k-1) MSW)
//	ICC2  = (MSB - MSE) / (MSB + (k-1) MSE + k (MSJ - MSE)/n)
//	ICC3  = (MSB - MSE) / (MSB + (k-1) MSE)
//	ICC1k = (MSB - MSW) / MSB
//	ICC2k = (MSB - MSE) / (MSB + (MSJ - MSE)/n)
//	ICC3k = (MSB - MSE) / MSB
//
// With missing ratings (and by default always) the mean squares are built,
// as psych does with lmer = TRUE, from the REML estimates of the model
// y_ij = μ + a_i + b_j + e_ij with crossed random item and rater effects:
// MSB = k σ²_a + σ², MSJ = n σ²_b + σ², MSW = σ² + σ²_b, MSE = σ², with n the
// number of rated items and k the number of raters. The REML criterion is
// the profiled one of Bates et al. (2015, eq. 41), minimised over the
// relative standard deviations. Ratings must be numeric: categorical tables
// use their category values.
func ICC(r *Ratings, o ICCOptions) (*ICCResult, error) {
	if r.Raters > MaxICCRaters {
		return nil, fmt.Errorf("raters: ICC of %d raters: the REML fit works on a raters × raters matrix, at most %d", r.Raters, MaxICCRaters)
	}
	return iccTable(prepare(r, false), r, o)
}

// MaxICCRaters is the most raters ICC (and Analyze) computes the
// intraclass correlations of: the REML fit factorises a raters × raters
// matrix at every step of its optimisation, cubic in the raters (800
// raters: 23 s of CPU; 200: a fraction of a second).
const MaxICCRaters = MaxMatrixRaters

// iccTable is ICC on a prepared table (one label per rater and item, the
// first).
func iccTable(t *table, r *Ratings, o ICCOptions) (*ICCResult, error) {
	level := CoefOptions{ConfLevel: o.ConfLevel}.level()
	// Collect the rated items.
	var rows []int
	dropped := r.Items - t.n
	for i := 0; i < t.n; i++ {
		if o.CompleteCasesOnly && int(t.ri[i]) < r.Raters {
			dropped++
			continue
		}
		rows = append(rows, i)
	}
	k := r.Raters
	n := len(rows)
	if n < 2 || k < 2 {
		return nil, fmt.Errorf("raters: ICC needs at least 2 rated items and 2 raters, have %d and %d", n, k)
	}
	value := func(i, j int) float64 {
		c := t.cell(i, j)
		if c < 0 {
			return math.NaN()
		}
		return t.vals[c]
	}
	res := &ICCResult{N: n, K: k, Dropped: dropped, REMLCriterion: math.NaN()}
	complete := true
	for _, i := range rows {
		if int(t.ri[i]) < k {
			complete = false
		}
	}
	if o.CompleteCasesOnly {
		res.Method = "anova"
		anovaMS(res, rows, k, value)
	} else {
		res.Method = "reml"
		if err := remlMS(res, rows, k, value, complete); err != nil {
			return nil, err
		}
	}
	res.finish(level)
	return res, nil
}

// anovaMS sets the two-way ANOVA mean squares of complete data.
func anovaMS(res *ICCResult, rows []int, k int, value func(i, j int) float64) {
	n := len(rows)
	fn, fk := float64(n), float64(k)
	rowMean := make([]float64, n)
	colMean := make([]float64, k)
	grand := 0.0
	for x, i := range rows {
		for j := 0; j < k; j++ {
			v := value(i, j)
			rowMean[x] += v
			colMean[j] += v
			grand += v
		}
	}
	grand /= fn * fk
	var ssr, ssc, sst float64
	for x := range rowMean {
		rowMean[x] /= fk
		d := rowMean[x] - grand
		ssr += d * d
	}
	for j := range colMean {
		colMean[j] /= fn
		d := colMean[j] - grand
		ssc += d * d
	}
	ssr *= fk
	ssc *= fn
	for _, i := range rows {
		for j := 0; j < k; j++ {
			d := value(i, j) - grand
			sst += d * d
		}
	}
	sse := sst - ssr - ssc
	res.MSB = ssr / (fn - 1)
	res.MSJ = ssc / (fk - 1)
	res.MSE = sse / ((fn - 1) * (fk - 1))
	res.MSW = (ssc + sse) / (fn * (fk - 1))
	res.VarResidual = res.MSE
	res.VarItems = (res.MSB - res.MSE) / fk
	res.VarRaters = (res.MSJ - res.MSE) / fn
}

// balancedREML sets the REML estimates for complete data in closed form.
// With every item rated by every rater the REML likelihood factorises into
// three independent scaled chi-squares: SSB ~ λ_B χ²(n-1), SSJ ~ λ_J χ²(k-1)
// and SSE ~ σ² χ²((n-1)(k-1)), with λ_B = k σ²_a + σ² and λ_J = n σ²_b + σ².
// Maximising it under σ²_a, σ²_b ≥ 0 (λ_B, λ_J ≥ σ²) pools into the residual
// every source whose mean square falls below the pooled residual mean
// square: the ANOVA estimates when MSB, MSJ ≥ MSE, the boundary solutions
// that lme4 approaches otherwise.
func balancedREML(res *ICCResult, rows []int, k int, value func(i, j int) float64) {
	anovaMS(res, rows, k, value)
	n, fk := float64(len(rows)), float64(k)
	type source struct {
		ss, df float64
		pooled bool
	}
	b := source{ss: res.MSB * (n - 1), df: n - 1}
	j := source{ss: res.MSJ * (fk - 1), df: fk - 1}
	ss, df := res.MSE*(n-1)*(fk-1), (n-1)*(fk-1)
	for {
		s2 := ss / df
		// Pool the source with the smallest mean square below s2.
		var low *source
		for _, src := range []*source{&b, &j} {
			if !src.pooled && src.ss/src.df < s2 && (low == nil || src.ss/src.df < low.ss/low.df) {
				low = src
			}
		}
		if low == nil {
			break
		}
		low.pooled = true
		ss += low.ss
		df += low.df
	}
	s2 := ss / df
	lb, lj := b.ss/b.df, j.ss/j.df
	if b.pooled {
		lb = s2
	}
	if j.pooled {
		lj = s2
	}
	res.VarResidual = s2
	res.VarItems = (lb - s2) / fk
	res.VarRaters = (lj - s2) / n
	res.MSB, res.MSJ, res.MSE = lb, lj, s2
	res.MSW = s2 + res.VarRaters
}

// crossed holds the data of the crossed random-effects model.
type crossed struct {
	n, k  int
	obs   float64   // number of observations
	c     []float64 // observations per item
	d     []float64 // observations per rater
	s     []float64 // sum per item
	t     []float64 // sum per rater
	sum   float64
	yy    float64
	rater [][]int // raters of each item's observations
	// scratch is the (k+1)² Schur complement, upper triangle used.
	scratch []float64
}

// deviance returns the profiled REML deviance (Bates et al. 2015, eq. 41)
// at relative standard deviations θ_a (items) and θ_b (raters), and the
// penalised residual sum of squares r².
func (m *crossed) deviance(ta, tb float64) (dev, r2 float64, err error) {
	k := m.k
	a2 := ta * ta
	// Eliminate the item block (diagonal A11_i = θ_a² c_i + 1) and form the
	// (k+1)×(k+1) Schur complement over (rater effects, intercept).
	dim := k + 1
	if len(m.scratch) != dim*dim {
		m.scratch = make([]float64, dim*dim)
	}
	M := m.scratch
	for x := range M {
		M[x] = 0
	}
	g := make([]float64, dim)
	logA11 := 0.0
	h1 := 0.0
	for j := 0; j < k; j++ {
		M[j*dim+j] = tb*tb*m.d[j] + 1
		M[j*dim+k] = tb * m.d[j]
		g[j] = tb * m.t[j]
	}
	mbb := m.obs
	gb := m.sum
	ab := ta * tb
	for i := 0; i < m.n; i++ {
		a11 := a2*m.c[i] + 1
		logA11 += math.Log(a11)
		inv := 1 / a11
		h1 += a2 * m.s[i] * m.s[i] * inv
		js := m.rater[i]
		abInv := ab * ab * inv
		for x, j := range js {
			row := M[j*dim:]
			for _, l := range js[x:] {
				if l >= j {
					row[l] -= abInv
				} else {
					M[l*dim+j] -= abInv
				}
			}
			row[k] -= ab * ta * m.c[i] * inv
			g[j] -= ab * ta * m.s[i] * inv
		}
		mbb -= a2 * m.c[i] * m.c[i] * inv
		gb -= a2 * m.c[i] * m.s[i] * inv
	}
	M[k*dim+k] = mbb
	g[k] = gb
	sym := mat.NewSymDense(dim, nil)
	for x := 0; x < dim; x++ {
		for y := x; y < dim; y++ {
			sym.SetSym(x, y, M[x*dim+y])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return math.NaN(), math.NaN(), errors.New("raters: REML system is not positive definite")
	}
	z := mat.NewVecDense(k+1, nil)
	if err := ch.SolveVecTo(z, mat.NewVecDense(k+1, g)); err != nil {
		return math.NaN(), math.NaN(), err
	}
	r2 = m.yy - h1 - mat.Dot(z, mat.NewVecDense(k+1, g))
	if !(r2 > 0) {
		return math.NaN(), r2, errors.New("raters: REML residual sum of squares is not positive")
	}
	df := m.obs - 1
	dev = logA11 + ch.LogDet() + df*(1+math.Log(2*math.Pi*r2/df))
	return dev, r2, nil
}

// remlMS fits the crossed random-effects model by REML and sets psych's
// mean squares from the variance components.
func remlMS(res *ICCResult, rows []int, k int, value func(i, j int) float64, complete bool) error {
	n := len(rows)
	if complete {
		balancedREML(res, rows, k, value)
		return nil
	}
	m := &crossed{n: n, k: k, c: make([]float64, n), d: make([]float64, k),
		s: make([]float64, n), t: make([]float64, k), rater: make([][]int, n)}
	for x, i := range rows {
		for j := 0; j < k; j++ {
			v := value(i, j)
			if math.IsNaN(v) {
				continue
			}
			m.obs++
			m.c[x]++
			m.d[j]++
			m.s[x] += v
			m.t[j] += v
			m.sum += v
			m.yy += v * v
			m.rater[x] = append(m.rater[x], j)
		}
	}
	for j := 0; j < k; j++ {
		if m.d[j] == 0 {
			return fmt.Errorf("raters: ICC: rater %d rated none of the items", j)
		}
	}
	// Centre the values for numerical stability (the intercept absorbs it).
	mean := m.sum / m.obs
	m.yy = 0
	for x, i := range rows {
		for j := 0; j < k; j++ {
			v := value(i, j)
			if !math.IsNaN(v) {
				m.yy += (v - mean) * (v - mean)
			}
		}
		m.s[x] -= m.c[x] * mean
	}
	for j := range m.t {
		m.t[j] -= m.d[j] * mean
	}
	m.sum = 0
	if m.yy == 0 {
		return errors.New("raters: ICC: every rating is the same")
	}
	f := func(x []float64) float64 {
		d, _, err := m.deviance(x[0], x[1])
		if err != nil {
			return math.Inf(1)
		}
		return d
	}
	grad := func(g, x []float64) {
		fd.Gradient(g, f, x, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	}
	best := []float64{1, 1}
	bestF := f(best)
	// A few starting points guard against a local minimum on the boundary.
	for _, x0 := range [][]float64{{1, 1}, {0.3, 0.05}} {
		p := optimize.Problem{Func: f, Grad: grad}
		r1, err := optimize.Minimize(p, x0, &optimize.Settings{GradientThreshold: 1e-9, Converger: &optimize.FunctionConverge{Absolute: 1e-12, Iterations: 5}}, &optimize.BFGS{})
		if r1 == nil || (err != nil && r1.F >= bestF) {
			continue
		}
		if r1.F < bestF {
			bestF = r1.F
			best = append(best[:0], r1.X...)
		}
	}
	// Polish with Nelder-Mead (the deviance is flat near the boundary).
	if r2, err := optimize.Minimize(optimize.Problem{Func: f}, best, &optimize.Settings{Converger: &optimize.FunctionConverge{Absolute: 1e-12, Iterations: 20}}, &optimize.NelderMead{}); err == nil || (r2 != nil && r2.F < bestF) {
		if r2 != nil && r2.F < bestF {
			bestF = r2.F
			best = append(best[:0], r2.X...)
		}
	}
	if math.IsInf(bestF, 1) {
		return errors.New("raters: ICC: REML fit failed")
	}
	ta, tb := math.Abs(best[0]), math.Abs(best[1])
	dev, r2, err := m.deviance(ta, tb)
	if err != nil {
		return err
	}
	s2 := r2 / (m.obs - 1)
	res.REMLCriterion = dev
	res.VarResidual = s2
	res.VarItems = ta * ta * s2
	res.VarRaters = tb * tb * s2
	fn, fk := float64(n), float64(k)
	res.MSB = fk*res.VarItems + s2
	res.MSJ = fn*res.VarRaters + s2
	res.MSW = s2 + res.VarRaters
	res.MSE = s2
	return nil
}

// FTests returns the F tests of no agreement of the six ICCs (Shrout &
// Fleiss 1979; McGraw & Wong 1996, Tables 4 and 8), as psych::ICC reports
// them: ICC1 and ICC1k test F = MSB/MSW on n-1 and n(k-1) degrees of
// freedom, ICC2, ICC3, ICC2k and ICC3k F = MSB/MSE on n-1 and (n-1)(k-1);
// the p-value is P(F(df1, df2) > F). With REML (Method "reml") the mean
// squares are those of the variance components, as psych::ICC's with
// lmer = TRUE.
func (res *ICCResult) FTests() map[string]ICCFTest {
	test := func(f, d1, d2 float64) ICCFTest {
		p := math.NaN()
		if f >= 0 && d1 > 0 && d2 > 0 {
			// P(F > f) = I_x(d2/2, d1/2), x = d2/(d2 + d1 f): the upper
			// tail without 1 - CDF's cancellation (p down to 1e-300).
			p = mathext.RegIncBeta(d2/2, d1/2, d2/(d2+d1*f))
		}
		return ICCFTest{F: num(f), DF1: num(d1), DF2: num(d2), P: num(p)}
	}
	one, two := test(res.F1, res.DF1n, res.DF1d), test(res.F2, res.DF2n, res.DF2d)
	return map[string]ICCFTest{"ICC1": one, "ICC1k": one, "ICC2": two, "ICC3": two, "ICC2k": two, "ICC3k": two}
}

// finish computes the ICCs and psych's F-based intervals from the mean
// squares.
func (res *ICCResult) finish(level float64) {
	n, k := float64(res.N), float64(res.K)
	msb, msj, mse, msw := res.MSB, res.MSJ, res.MSE, res.MSW
	icc1 := (msb - msw) / (msb + (k-1)*msw)
	icc2 := (msb - mse) / (msb + (k-1)*mse + k*(msj-mse)/n)
	icc3 := (msb - mse) / (msb + (k-1)*mse)
	icc1k := (msb - msw) / msb
	icc2k := (msb - mse) / (msb + (msj-mse)/n)
	icc3k := (msb - mse) / msb
	alpha := 1 - level
	qf := func(p, d1, d2 float64) float64 {
		return distuv.F{D1: d1, D2: d2}.Quantile(p)
	}
	F11 := msb / msw
	df11n, df11d := n-1, n*(k-1)
	F21 := msb / mse
	df21n, df21d := n-1, (n-1)*(k-1)
	res.F1, res.DF1n, res.DF1d = F11, df11n, df11d
	res.F2, res.DF2n, res.DF2d = F21, df21n, df21d
	F1L := F11 / qf(1-alpha/2, df11n, df11d)
	F1U := F11 * qf(1-alpha/2, df11d, df11n)
	F3L := F21 / qf(1-alpha/2, df21n, df21d)
	F3U := F21 * qf(1-alpha/2, df21d, df21n)
	est := func(v, lo, hi float64, pa, pe float64) Estimate {
		e := undefined()
		e.Value, e.CILow, e.CIHigh, e.CIMethod = v, lo, hi, "F"
		return e
	}
	res.ICC1 = est(icc1, (F1L-1)/(F1L+(k-1)), (F1U-1)/(F1U+k-1), 0, 0)
	res.ICC3 = est(icc3, (F3L-1)/(F3L+k-1), (F3U-1)/(F3U+k-1), 0, 0)
	res.ICC1k = est(icc1k, 1-1/F1L, 1-1/F1U, 0, 0)
	res.ICC3k = est(icc3k, 1-1/F3L, 1-1/F3U, 0, 0)
	// ICC(2,1): Satterthwaite-type degrees of freedom (McGraw & Wong 1996).
	fj := msj / mse
	vn := (k - 1) * (n - 1) * math.Pow(k*icc2*fj+n*(1+(k-1)*icc2)-k*icc2, 2)
	vd := (n-1)*k*k*icc2*icc2*fj*fj + math.Pow(n*(1+(k-1)*icc2)-k*icc2, 2)
	v := vn / vd
	FU := qf(1-alpha/2, n-1, v)
	FL := qf(1-alpha/2, v, n-1)
	L2 := n * (msb - FU*mse) / (FU*(k*msj+(k*n-k-n)*mse) + n*msb)
	U2 := n * (FL*msb - mse) / (k*msj + (k*n-k-n)*mse + n*FL*msb)
	res.ICC2 = est(icc2, L2, U2, 0, 0)
	res.ICC2k = est(icc2k, L2*k/(1+L2*(k-1)), U2*k/(1+U2*(k-1)), 0, 0)
}
