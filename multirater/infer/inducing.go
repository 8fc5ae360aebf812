package infer

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/kernel"
)

// inducing is a Kernel's state when its prior is held in inducing-point
// (FITC) form (LearnKernel.Rank): the inducing items (pivots of the
// partial Cholesky decomposition at the hyperparameters at which they
// were chosen) and the prior at the current hyperparameters with the
// derivatives of K_nP.
type inducing struct {
	rank  int
	terms []kernel.CrossHyper
	rows  [][]float64 // the items' covariates
	// pivots were chosen at hyperparameters pivAt.
	pivots []int
	pivAt  []float64
	// first are the inducing items first chosen in this Fit (by the first
	// start, at its starting point): every later start begins with them
	// (Kernel.clone).
	first []int
	// cur is the prior at the Kernel's current hyperparameters (nil when
	// they changed since), dk the derivatives of its K_nP.
	cur *gp.Inducing
	dk  [][]float64
}

// NewKernel returns the Kernel of lk's terms on n items with the fixed
// part fixed (nil: none): in inducing-point (FITC) form with at most
// lk.Rank inducing items when Rank is positive, there is no fixed part and
// every term is a kernel.CrossHyper on covariates (RBF, ARD), else the
// dense Kernel of NewKernel.
func (lk *LearnKernel) NewKernel(n int, fixed mat.Symmetric) (*Kernel, error) {
	if lk.Rank <= 0 || fixed != nil || lk.Inputs.X == nil || lk.Rank >= n {
		return NewKernel(n, fixed, lk.Terms, lk.Inputs)
	}
	var terms []kernel.CrossHyper
	for _, t := range lk.Terms {
		c, ok := t.(kernel.CrossHyper)
		if !ok || !t.Covariates() {
			return NewKernel(n, fixed, lk.Terms, lk.Inputs)
		}
		terms = append(terms, c)
	}
	k := &Kernel{n: n, learn: lk.Terms, inputs: lk.Inputs}
	ind := &inducing{rank: lk.Rank, terms: terms, rows: make([][]float64, n)}
	for i := range ind.rows {
		ind.rows[i] = mat.Row(nil, i, lk.Inputs.X)
	}
	k.ind = ind
	return k.start()
}

// setInducing is Kernel.set for the inducing form: the terms at p, the
// prior made when a factor is asked for.
func (k *Kernel) setInducing(p []float64) {
	k.cur = append(k.cur[:0], p...)
	k.terms_ = k.terms_[:0]
	ind := k.ind
	off := 0
	for t, term := range k.learn {
		h := term.WithHyper(p[off : off+k.dims[t]])
		off += k.dims[t]
		k.terms_ = append(k.terms_, h)
		ind.terms[t] = h.(kernel.CrossHyper)
	}
	ind.cur, ind.dk = nil, nil
}

// inducingFactor returns the FITC prior's factor at the current
// hyperparameters on the inducing items, choosing them (pivoted Cholesky
// to a trace of tol/4, at most rank items) when there are none yet (the
// first factor of each Fit: newPrior forgets them) or when K_PP is not
// positive definite at the current hyperparameters. Within a Fit they stay
// fixed, so that the evidence is a smooth function of the hyperparameters
// and its gradient (Inducing.KernelGradTo) exact along the search.
func (k *Kernel) inducingFactor(tol float64) (*gp.Factor, error) {
	ind := k.ind
	if ind.cur != nil {
		return ind.cur.Factor(), nil
	}
	for try := 0; try < 2; try++ {
		if ind.pivots == nil || try > 0 {
			if err := ind.choose(k.inputs, k.cur, tol); err != nil {
				return nil, err
			}
		}
		cur, dk, err := ind.build(k.inputs)
		if err == nil {
			ind.cur, ind.dk = cur, dk
			return cur.Factor(), nil
		}
		if try > 0 {
			return nil, err
		}
	}
	panic("unreachable")
}

// choose picks the inducing items at hyperparameters at.
func (ind *inducing) choose(in kernel.Inputs, at []float64, tol float64) error {
	n := len(ind.rows)
	diag := make([]float64, n)
	for _, t := range ind.terms {
		for i, v := range t.DiagTo(nil, in) {
			diag[i] += v
		}
	}
	var c mat.Dense
	col := func(p int, dst []float64) {
		clear(dst)
		one := kernel.Inputs{N: 1, X: mat.NewDense(1, len(ind.rows[p]), ind.rows[p])}
		for _, t := range ind.terms {
			c.Reset()
			t.CrossTo(&c, in, one)
			for i := range dst {
				dst[i] += c.At(i, 0)
			}
		}
	}
	piv, err := gp.Pivots(diag, col, ind.rank, tol/4)
	if err != nil {
		return err
	}
	if ind.pivots == nil && ind.first == nil {
		ind.first = piv
	}
	ind.pivots = piv
	ind.pivAt = append(ind.pivAt[:0], at...)
	return nil
}

// build returns the FITC prior on the chosen inducing items and the
// derivatives of K_nP in every hyperparameter.
func (ind *inducing) build(in kernel.Inputs) (*gp.Inducing, [][]float64, error) {
	n, m := len(ind.rows), len(ind.pivots)
	if n == 0 || m == 0 {
		panic(fmt.Sprintf("infer: inducing prior of %d items on %d inducing items", n, m))
	}
	xp := mat.NewDense(m, len(ind.rows[0]), nil)
	for i, p := range ind.pivots {
		xp.SetRow(i, ind.rows[p])
	}
	pin := kernel.Inputs{N: m, X: xp}
	knm := make([]float64, n*m)
	diag := make([]float64, n)
	var c mat.Dense
	var dk [][]float64
	for _, t := range ind.terms {
		c.Reset()
		t.CrossTo(&c, in, pin)
		for i, v := range c.RawMatrix().Data {
			knm[i] += v
		}
		for i, v := range t.DiagTo(nil, in) {
			diag[i] += v
		}
		_, dim := in.X.Dims()
		ds := make([]*mat.Dense, t.NumHyper(dim))
		t.CrossGradTo(ds, in, pin)
		for _, d := range ds {
			dk = append(dk, d.RawMatrix().Data)
		}
	}
	cur, err := gp.NewInducing(diag, knm, ind.pivots)
	if err != nil {
		return nil, nil, err
	}
	return cur, dk, nil
}

// inducingPrior is the Prior of a Kernel in inducing form.
type inducingPrior struct{ k *Kernel }

// newInducingPrior returns the Prior of k for a new Fit: the inducing
// items are chosen again at its first factor.
func newInducingPrior(k *Kernel) Prior {
	k.ind.pivots, k.ind.first, k.ind.cur, k.ind.dk = nil, nil, nil, nil
	return inducingPrior{k}
}

func (pr inducingPrior) Factor(tol float64) (*gp.Factor, error) { return pr.k.inducingFactor(tol) }

func (pr inducingPrior) on(k *Kernel) Prior { return inducingPrior{k} }

// gradTermer is an Engine that gives the terms of its kernel gradient
// (gp.GradTerms) for any prior factor, a diagonal correction included.
type gradTermer interface {
	GradTerms(a *Approx) *gp.GradTerms
}

// GradTerms returns ep.Result.GradTerms.
func (*EP) GradTerms(a *Approx) *gp.GradTerms { return a.EP.GradTerms() }

// GradTerms returns laplace.Result.GradTerms.
func (*Laplace) GradTerms(a *Approx) *gp.GradTerms { return a.Laplace.GradTerms() }

// inducingGrad returns the gradient of a's log evidence in the kernel's
// hyperparameters under the FITC prior a was made on.
func (k *Kernel) inducingGrad(engine Engine, a *Approx) ([]float64, error) {
	ind := k.ind
	gt, ok := engine.(gradTermer)
	if !ok {
		return nil, fmt.Errorf("infer: the %s engine gives no gradient terms for an inducing-point prior", engine.Name())
	}
	if ind.cur == nil || a.fac != ind.cur.Factor() {
		panic("infer: the approximation was not made on the current inducing-point prior")
	}
	out := make([]float64, len(k.cur))
	ind.cur.KernelGradTo(out, gt.GradTerms(a), ind.dk, nil)
	return out, nil
}

// describe says what the inducing prior is, for a fit's notes.
func (k *Kernel) describeInducing() string {
	ind := k.ind
	if ind == nil || ind.cur == nil {
		return ""
	}
	return fmt.Sprintf("inducing-point prior for the learnt kernel (FITC, Snelson & Ghahramani 2006): %d of %d items as inducing points, chosen by pivoted Cholesky (at most %d), the prior variance they leave out (%.3g in all) as independent per-item variance; the evidence gradient is exact for this prior", ind.cur.M, ind.cur.N, ind.rank, ind.cur.Factor().Residual)
}
