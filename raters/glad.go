package raters

import (
	"context"
	"errors"
	"math"
)

// GLADOptions control GLAD. The zero value gives the documented defaults:
// crowd-kit's model, priors, start and iteration limit
// (crowdkit.aggregation.GLAD), with a tighter stopping rule and a Newton
// M-step instead of conjugate gradients.
type GLADOptions struct {
	// MaxIter bounds the EM iterations; 0 means 100 (crowd-kit's n_iter).
	MaxIter int
	// Tol stops EM when the log-posterior changes by less than
	// Tol·(1 + |log-posterior|) in an iteration; 0 means 1e-9.
	Tol float64
	// MStepIter bounds the block-coordinate Newton sweeps of each M-step
	// (see GLAD); 0 means 3. (crowd-kit runs at most 25 conjugate-gradient
	// iterations instead; any M-step that raises Q converges to the same
	// fixed points, a generalised EM.)
	MStepIter int
	// MStepTol ends an M-step when no Newton step exceeds it in absolute
	// value; 0 means 1e-6.
	MStepTol float64
	// Priors are the class prior probabilities p_c, fixed (as in
	// crowd-kit); nil means uniform, 1/K.
	Priors []float64
	// Values are the numeric values of the K classes, for the consensus
	// Score; nil means 1..K.
	Values []float64
}

func (o GLADOptions) maxIter() int { return positiveOr(o.MaxIter, 100) }

func (o GLADOptions) tol() float64 { return positiveOr(o.Tol, 1e-9) }

func (o GLADOptions) mStepIter() int { return positiveOr(o.MStepIter, 3) }

func (o GLADOptions) mStepTol() float64 { return positiveOr(o.MStepTol, 1e-6) }

// The means of GLAD's unit-variance normal priors on α_j and log β_i, and
// their starting values (crowd-kit's defaults).
const (
	gladAlphaMean   = 1.0
	gladLogBetaMean = 1.0
)

// GLAD fits the Generative model of Labels, Abilities and Difficulties of
// Whitehill, Ruvolo, Wu, Bergsma & Movellan (2009), "Whose vote should
// count more", for K classes as crowd-kit does. Item i has a true class z_i
// with fixed prior p_c; rater j labels it correctly with probability
//
//	P(l_ij = z_i) = σ(α_j β_i),  σ(x) = 1/(1 + e^{-x})
//
// and otherwise gives one of the K - 1 other classes uniformly, (1 -
// σ(α_j β_i))/(K - 1): α_j ∈ ℝ is the rater's ability (negative for an
// adversarial rater) and β_i = exp(log β_i) > 0 the item's inverse
// difficulty (sec. 2, eq. 1). The priors are α_j ~ N(1, 1) and log β_i ~ N(1, 1)
// (crowd-kit's defaults), and EM (sec. 3) finds the MAP estimate: the
// E-step computes the posteriors P(z_i = c | l, α, β) ∝ p_c Π_j P(l_ij |
// z_i = c), the M-step raises the expected complete-data log posterior
//
//	Q(α, β) = Σ_ij E[ln P(l_ij | z_i)] + ln P(α) + ln P(β)
//
// by at most MStepIter sweeps of block-coordinate Newton steps: all α_j
// given β (exact steps: each is a concave one-dimensional problem), then
// every log β_i given α (Gauss-Newton steps), each step capped at 1 and
// halved until its terms of Q do not decrease, so that Q never decreases
// (a generalised EM). The gradients are the paper's (sec. 3, M-step) in the
// parametrisation (α, log β): ∂Q/∂α_j = Σ_i (w_ij - σ_ij) β_i - (α_j - 1)
// and ∂Q/∂log β_i = Σ_j (w_ij - σ_ij) α_j β_i - (log β_i - 1), w_ij the
// posterior probability that l_ij is the true class. EM starts from α_j = log β_i = 1 and
// stops when the log posterior, ln P(l | α, β) + ln P(α) + ln P(β),
// changes by less than Tol relatively, or after MaxIter iterations (not
// converged). crowd-kit stops earlier (1e-5 on the per-row Q); this
// implementation converges to the same fixed point further.
//
// A rater who labels an item several times contributes each label as a
// separate observation. The consensus has the posteriors as Probs, the most
// probable class (ties by overall label frequency, then lowest index), and
// β_i as Easiness; each rater's Skill is α_j (SkillKind "ability", α_j =
// 1 for a rater without labels: the prior), Accuracy, Confusion, MAE and
// Bias are against the consensus class. Fit has the log posterior after
// every iteration. It returns an error without labels or with fewer than 2
// classes, and panics on labels out of range or invalid Priors.
func GLAD(labels []Label, items, raters, k int, o GLADOptions) (*Consensus, error) {
	return glad(context.Background(), labels, items, raters, k, o)
}

// flatLabels is the labels in item order, flattened for the inner loops.
type flatLabels struct {
	*dsData
	item, rater, class []int32
	start              []int // labels of item i: [start[i], start[i+1])
}

func flatten(d *dsData) flatLabels {
	f := flatLabels{dsData: d, start: make([]int, d.n+1)}
	for i, ls := range d.byItem {
		f.start[i+1] = f.start[i] + len(ls)
		for _, l := range ls {
			f.item = append(f.item, int32(l.Item))
			f.rater = append(f.rater, int32(l.Rater))
			f.class = append(f.class, int32(l.Class))
		}
	}
	return f
}

// gladData is the labels and GLAD's fixed quantities.
type gladData struct {
	flatLabels
	logp  []float64
	logK1 float64
}

// gladFit is one GLAD fit: the data, the options, the parameters x (α_j
// for the raters, then log β_i for the items), the item posteriors and the
// label weights, and the M-step's scratch.
type gladFit struct {
	d              *gladData
	o              GLADOptions
	items, raters  int
	x              []float64
	post           [][]float64
	w, lp          []float64
	ga, ha, da, qa []float64
}

// gladLogPriors sets logp to the log class priors: o.Priors (checked) or
// uniform.
func gladLogPriors(logp []float64, priors []float64) {
	k := len(logp)
	if priors == nil {
		for c := range logp {
			logp[c] = -math.Log(float64(k))
		}
		return
	}
	if len(priors) != k {
		panic("raters: len(Priors) != k")
	}
	s := 0.0
	for c, p := range priors {
		if !(p > 0) {
			panic("raters: GLAD priors must be positive")
		}
		s += p
		logp[c] = math.Log(p)
	}
	if math.Abs(s-1) > 1e-9 {
		panic("raters: GLAD priors must sum to 1")
	}
}

func glad(ctx context.Context, labels []Label, items, raters, k int, o GLADOptions) (*Consensus, error) {
	d0, err := newAggregatorData("GLAD", labels, items, raters, k, o.Values)
	if err != nil {
		return nil, err
	}
	d := &gladData{flatLabels: flatten(d0), logp: make([]float64, k), logK1: math.Log(float64(k - 1))}
	gladLogPriors(d.logp, o.Priors)
	f := newGLADFit(d, o, items, raters)
	diag, err := f.run(ctx)
	if err != nil {
		return nil, err
	}
	c := d.labelConsensus("glad", f.post, d.classTotals(), o.Values)
	c.Fit = diag
	for j := range c.Raters {
		c.Raters[j].Skill, c.Raters[j].SkillKind = f.x[j], "ability"
	}
	for i := range c.Items {
		if f.post[i] != nil {
			c.Items[i].Easiness = math.Exp(f.x[raters+i])
		}
	}
	return c, nil
}

func newGLADFit(d *gladData, o GLADOptions, items, raters int) *gladFit {
	k := len(d.logp)
	f := &gladFit{d: d, o: o, items: items, raters: raters, x: make([]float64, raters+items), post: make([][]float64, items),
		w: make([]float64, len(d.item)), lp: make([]float64, k),
		ga: make([]float64, raters), ha: make([]float64, raters), da: make([]float64, raters), qa: make([]float64, raters)}
	for j := 0; j < raters; j++ {
		f.x[j] = gladAlphaMean
	}
	for i := 0; i < items; i++ {
		f.x[raters+i] = gladLogBetaMean
	}
	for i := range f.post {
		if d.start[i+1] > d.start[i] {
			f.post[i] = make([]float64, k)
		}
	}
	return f
}

// run iterates EM from the start until the log posterior settles.
func (f *gladFit) run(ctx context.Context) (*EMDiagnostics, error) {
	d := f.d
	diag := &EMDiagnostics{Start: "alpha=1, log beta=1"}
	ll := f.estep() + f.logPrior()
	if math.IsNaN(ll) {
		return nil, errors.New("raters: GLAD log posterior is NaN")
	}
	prev := ll
	for it := 0; it < f.o.maxIter(); it++ {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		for n := range f.w {
			f.w[n] = f.post[d.item[n]][d.class[n]]
		}
		f.mstep()
		ll = f.estep() + f.logPrior()
		diag.LogLik = append(diag.LogLik, ll)
		diag.Iterations = it + 1
		if math.IsNaN(ll) {
			return nil, errors.New("raters: GLAD log posterior is NaN")
		}
		if math.Abs(ll-prev) < f.o.tol()*(1+math.Abs(ll)) {
			diag.Converged = true
			break
		}
		prev = ll
	}
	diag.Runs = []EMRun{{Start: diag.Start, Iterations: diag.Iterations, Converged: diag.Converged, LogLik: ll}}
	return diag, nil
}

// estep sets the item posteriors at x and returns the log-likelihood.
func (f *gladFit) estep() float64 {
	d, x, lp := f.d, f.x, f.lp
	ll := 0.0
	for i := 0; i < f.items; i++ {
		if f.post[i] == nil {
			continue
		}
		copy(lp, d.logp)
		b := math.Exp(x[f.raters+i])
		for n := d.start[i]; n < d.start[i+1]; n++ {
			z := x[d.rater[n]] * b
			l1 := math.Log1p(math.Exp(-math.Abs(z)))
			ls, lw := -l1+math.Min(z, 0), -l1-math.Max(z, 0)-d.logK1
			for c := range lp {
				lp[c] += lw
			}
			lp[d.class[n]] += ls - lw
		}
		ll += expNormalizeTo(f.post[i], lp)
	}
	return ll
}

// logPrior is the log density of x under GLAD's normal priors.
func (f *gladFit) logPrior() float64 {
	x := f.x
	lp := -0.5 * float64(len(x)) * math.Log(2*math.Pi)
	for j := 0; j < f.raters; j++ {
		lp -= 0.5 * (x[j] - gladAlphaMean) * (x[j] - gladAlphaMean)
	}
	for i := 0; i < f.items; i++ {
		v := x[f.raters+i] - gladLogBetaMean
		lp -= 0.5 * v * v
	}
	return lp
}

// mstep raises Q (eq. 4) at the label weights w by block-coordinate Newton
// sweeps: all α_j given β (each a concave one-dimensional problem, exact
// Newton steps), then every log β_i given α (Gauss-Newton steps: the
// curvature without its indefinite part, Σ σ(1-σ) z² + 1). Steps are
// capped at 1 in absolute value. It ends after MStepIter sweeps or when no
// step exceeds MStepTol.
func (f *gladFit) mstep() {
	for sweep := 0; sweep < f.o.mStepIter(); sweep++ {
		big := math.Max(f.alphaSweep(), f.betaSweep())
		if big < f.o.mStepTol() {
			return
		}
	}
}

// alphaSweep takes one Newton step in every α_j and returns the largest.
func (f *gladFit) alphaSweep() float64 {
	d, x, w := f.d, f.x, f.w
	ga, ha, da := f.ga, f.ha, f.da
	for j := 0; j < f.raters; j++ {
		ga[j], ha[j] = gladAlphaMean-x[j], -1
	}
	for i := 0; i < f.items; i++ {
		b := math.Exp(x[f.raters+i])
		for n := d.start[i]; n < d.start[i+1]; n++ {
			j := d.rater[n]
			s := sigmoid(x[j] * b)
			ga[j] += (w[n] - s) * b
			ha[j] -= s * (1 - s) * b * b
		}
	}
	big := 0.0
	for j := 0; j < f.raters; j++ {
		da[j] = math.Max(-1, math.Min(1, -ga[j]/ha[j]))
		big = math.Max(big, math.Abs(da[j]))
	}
	f.halveAlphaSteps()
	for j := range da {
		if f.qa[j] >= -1e-12 {
			x[j] += da[j]
		}
	}
	return big
}

// halveAlphaSteps halves each rater's step until its terms of Q do not
// decrease (f.qa: their change; a decrease within rounding, 1e-12 of the
// step's size, is no decrease).
func (f *gladFit) halveAlphaSteps() {
	d, x, w, da, qa := f.d, f.x, f.w, f.da, f.qa
	for try := 0; try < 30; try++ {
		for j := range qa {
			qa[j] = -0.5 * ((x[j]+da[j]-gladAlphaMean)*(x[j]+da[j]-gladAlphaMean) - (x[j]-gladAlphaMean)*(x[j]-gladAlphaMean))
		}
		for i := 0; i < f.items; i++ {
			b := math.Exp(x[f.raters+i])
			for n := d.start[i]; n < d.start[i+1]; n++ {
				j := d.rater[n]
				if da[j] != 0 {
					qa[j] += d.q((x[j]+da[j])*b, w[n]) - d.q(x[j]*b, w[n])
				}
			}
		}
		again := false
		for j := range da {
			if da[j] != 0 && qa[j] < -1e-12 {
				da[j] /= 2
				if math.Abs(da[j]) < 1e-12 {
					da[j] = 0
				}
				again = true
			}
		}
		if !again {
			return
		}
	}
}

// betaSweep takes one Gauss-Newton step (halved until item i's terms of Q
// do not decrease) in every log β_i and returns the largest proposed.
func (f *gladFit) betaSweep() float64 {
	d, x, w := f.d, f.x, f.w
	big := 0.0
	for i := 0; i < f.items; i++ {
		t := x[f.raters+i]
		b := math.Exp(t)
		g, h := gladLogBetaMean-t, -1.0
		for n := d.start[i]; n < d.start[i+1]; n++ {
			z := x[d.rater[n]] * b
			s := sigmoid(z)
			g += (w[n] - s) * z
			h -= s * (1 - s) * z * z
		}
		step := math.Max(-1, math.Min(1, -g/h))
		big = math.Max(big, math.Abs(step))
		f0 := d.itemQ(x, w, i, t)
		for try := 0; try < 30 && math.Abs(step) > 1e-12; try++ {
			if d.itemQ(x, w, i, t+step) >= f0-1e-12 {
				x[f.raters+i] = t + step
				break
			}
			step /= 2
		}
	}
	return big
}

// q is one label's term of Q (eq. 4) at z = α_j β_i with weight w, the
// posterior probability that the label is the true class:
// w ln σ(z) + (1 - w)(ln(1 - σ(z)) - ln(K - 1)).
func (d *gladData) q(z, w float64) float64 {
	l1 := math.Log1p(math.Exp(-math.Abs(z)))
	return w*(-l1+math.Min(z, 0)) + (1-w)*(-l1-math.Max(z, 0)-d.logK1)
}

// itemQ is item i's terms of Q with log β_i = t.
func (d *gladData) itemQ(x, w []float64, i int, t float64) float64 {
	v := -0.5 * (t - gladLogBetaMean) * (t - gladLogBetaMean)
	b := math.Exp(t)
	for n := d.start[i]; n < d.start[i+1]; n++ {
		v += d.q(x[d.rater[n]]*b, w[n])
	}
	return v
}

// sigmoid is σ(x) = 1/(1 + e^{-x}), without overflow.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
