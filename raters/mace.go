package raters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mathext"
)

// MACEOptions control MACE. The zero value gives the documented defaults,
// which are crowd-kit's (crowdkit.aggregation.MACE: method "vb", n_iter 50,
// n_restarts 10, default_noise 0.5, alpha = beta = 0.5, strategy prior 10).
type MACEOptions struct {
	// MaxIter bounds the iterations of each run; 0 means 50.
	MaxIter int
	// Tol stops a run early when the log marginal likelihood changes by
	// less than Tol·(1 + |value|) in an iteration; 0 means 1e-9.
	Tol float64
	// Restarts is the number of runs from random starting points besides
	// the run from the uniform start; 0 means 9 (10 runs, crowd-kit's
	// n_restarts), a negative value none.
	Restarts int
	// Seed seeds the generator of the random starts,
	// rand.New(rand.NewPCG(Seed, 0x9e3779b97f4a7c15)).
	Seed uint64
	// EM selects plain EM with the M-step smoothed by 0.01/K (crowd-kit's
	// method "em") instead of variational Bayes (method "vb").
	EM bool
	// Noise is the spread of the random starts: every weight of a rater's
	// spamming distribution and strategy is drawn from U(1, 1 + Noise)
	// before normalising; 0 means 0.5.
	Noise float64
	// Values are the numeric values of the K classes, for the consensus
	// Score; nil means 1..K.
	Values []float64
}

func (o MACEOptions) maxIter() int { return positiveOr(o.MaxIter, 50) }

func (o MACEOptions) tol() float64 { return positiveOr(o.Tol, 1e-9) }

func (o MACEOptions) restarts() int { return orDefault(o.Restarts, 9) }

func (o MACEOptions) noise() float64 { return positiveOr(o.Noise, 0.5) }

// MACE's priors (Hovy et al. 2013; crowd-kit's defaults): θ_j ~
// Beta(0.5, 0.5) and ξ_j ~ Dirichlet(10, ..., 10).
const (
	maceThetaPrior    = 0.5
	maceStrategyPrior = 10.0
)

// MACE fits Multi-Annotator Competence Estimation (Hovy, Berg-Kirkpatrick,
// Vaswani & Hovy 2013, "Learning whom to trust with MACE", sec. 2). Item
// i's true class T_i is uniform over the K classes; for each label rater j
// spams with probability 1 - θ_j (S_ij ~ Bernoulli(1 - θ_j)), and then
// draws the label from the rater's strategy ξ_j, and otherwise gives T_i:
//
//	P(l_ij = a | T_i = t) = θ_j [a = t] + (1 - θ_j) ξ_ja
//
// EM (sec. 2, "Learning") alternates the E-step, the posteriors P(T_i = t | l) ∝
// Π_j P(l_ij | T_i = t) and the expected counts of knowing and spamming
// labels, P(S_ij = 0 | l) = P(T_i = l_ij | l) θ_j / (θ_j + (1 - θ_j)
// ξ_{j,l_ij}), with the M-step. With variational Bayes (the default, the
// paper's Bayesian variant, crowd-kit's "vb") the priors θ_j ~ Beta(0.5, 0.5) and ξ_j ~
// Dirichlet(10) enter through the mean-field update: a weight is
// exp(ψ(count + prior) - ψ(Σ (counts + priors))), ψ the digamma function,
// and these (sub-normalised) weights take the place of θ_j, 1 - θ_j and
// ξ_j in the next E-step. With EM the M-step normalises the expected
// counts plus 0.01/K.
//
// The first run starts from θ_j = 1/2 and uniform strategies (its first
// posteriors are the majority vote's), then Restarts runs start from random
// weights drawn by rand.New(rand.NewPCG(Seed, ...)); each runs MaxIter
// iterations or until the log marginal likelihood Σ_i ln Σ_t P(T_i = t, l_i)
// (computed with the variational weights under VB, as MACE and crowd-kit
// do) changes by less than Tol relatively. The run with the highest value
// is kept (a random start must beat the first clearly), and Fit records
// every run and the seed. The random starts are drawn rater by rater in
// index order, so renumbering the raters changes them (the first run does
// not depend on the numbering). crowd-kit starts each of its restarts from
// the same random point and stops only at n_iter.
//
// A rater who labels an item several times contributes each label as a
// separate observation. The consensus has the posteriors as Probs and the
// most probable class (ties by overall label frequency, then lowest
// index); each rater's Skill is the competence θ_j (SkillKind
// "competence"): under VB the mean of its variational Beta posterior,
// (E[knowing labels] + 0.5) / (n_j + 1), under EM the estimate. Accuracy,
// Confusion, MAE and Bias are against the consensus class. It returns an
// error without labels or with fewer than 2 classes, and panics on labels
// out of range.
func MACE(labels []Label, items, raters, k int, o MACEOptions) (*Consensus, error) {
	return mace(context.Background(), labels, items, raters, k, o)
}

// maceState is one run's weights, posteriors and expected counts.
type maceState struct {
	spam, know []float64 // per rater: weights of spamming and knowing
	xi         []float64 // r×k strategy weights
	post       [][]float64
	nSpam      []float64 // expected counts
	nKnow      []float64
	nStrat     []float64 // r×k
}

// maceFit is the data and options of one MACE fit, with the E-step's
// scratch.
type maceFit struct {
	d             flatLabels
	o             MACEOptions
	items, raters int
	k             int
	logK          float64
	lg            []float64
}

func (f *maceFit) newState() *maceState {
	r, k := f.raters, f.k
	s := &maceState{spam: make([]float64, r), know: make([]float64, r), xi: make([]float64, r*k),
		post: make([][]float64, f.items), nSpam: make([]float64, r), nKnow: make([]float64, r), nStrat: make([]float64, r*k)}
	for i := range s.post {
		if f.d.start[i+1] > f.d.start[i] {
			s.post[i] = make([]float64, k)
		}
	}
	return s
}

// estep computes the posteriors and the expected counts, and returns the
// log marginal likelihood.
func (f *maceFit) estep(s *maceState) float64 {
	d, k, lg := f.d, f.k, f.lg
	clear(s.nSpam)
	clear(s.nKnow)
	clear(s.nStrat)
	ll := 0.0
	for i := 0; i < f.items; i++ {
		if s.post[i] == nil {
			continue
		}
		base := -f.logK
		clear(lg)
		for n := d.start[i]; n < d.start[i+1]; n++ {
			j, a := int(d.rater[n]), int(d.class[n])
			ps := s.spam[j] * s.xi[j*k+a]
			base += math.Log(ps)
			lg[a] += math.Log(ps+s.know[j]) - math.Log(ps)
		}
		for c := range lg {
			lg[c] += base
		}
		ll += expNormalizeTo(s.post[i], lg)
		for n := d.start[i]; n < d.start[i+1]; n++ {
			j, a := int(d.rater[n]), int(d.class[n])
			ps := s.spam[j] * s.xi[j*k+a]
			pk := s.post[i][a] * s.know[j] / (ps + s.know[j])
			s.nKnow[j] += pk
			s.nSpam[j] += 1 - pk
			s.nStrat[j*k+a] += 1 - pk
		}
	}
	return ll
}

// mstep re-estimates the spamming, knowing and strategy weights: EM with
// pseudo-counts, or variational Bayes under MACE's Beta and Dirichlet
// priors.
func (f *maceFit) mstep(s *maceState) {
	k := f.k
	eps := 0.01 / float64(k)
	for j := 0; j < f.raters; j++ {
		xi := s.xi[j*k : (j+1)*k]
		ns := s.nStrat[j*k : (j+1)*k]
		if f.o.EM {
			t := s.nSpam[j] + s.nKnow[j] + 2*eps
			s.spam[j], s.know[j] = (s.nSpam[j]+eps)/t, (s.nKnow[j]+eps)/t
			t = sum(ns) + float64(k)*eps
			for a := range xi {
				xi[a] = (ns[a] + eps) / t
			}
			continue
		}
		t := mathext.Digamma(s.nSpam[j] + s.nKnow[j] + 2*maceThetaPrior)
		s.spam[j] = math.Exp(mathext.Digamma(s.nSpam[j]+maceThetaPrior) - t)
		s.know[j] = math.Exp(mathext.Digamma(s.nKnow[j]+maceThetaPrior) - t)
		t = mathext.Digamma(sum(ns) + float64(k)*maceStrategyPrior)
		for a := range xi {
			xi[a] = math.Exp(mathext.Digamma(ns[a]+maceStrategyPrior) - t)
		}
	}
}

// run iterates EM (or VB) from s.
func (f *maceFit) run(ctx context.Context, s *maceState) (trace []float64, conv bool, err error) {
	prev := f.estep(s)
	for it := 0; it < f.o.maxIter(); it++ {
		if err := ctxErr(ctx); err != nil {
			return trace, false, err
		}
		f.mstep(s)
		ll := f.estep(s)
		trace = append(trace, ll)
		if math.Abs(ll-prev) < f.o.tol()*(1+math.Abs(ll)) {
			return trace, true, nil
		}
		prev = ll
	}
	return trace, false, nil
}

// start sets run r's starting point: uniform for run 0, random otherwise;
// it returns the start's name.
func (f *maceFit) start(s *maceState, r int, rnd *rand.Rand) string {
	k := f.k
	if r == 0 {
		for j := 0; j < f.raters; j++ {
			s.spam[j], s.know[j] = 0.5, 0.5
			for a := 0; a < k; a++ {
				s.xi[j*k+a] = 1 / float64(k)
			}
		}
		return "uniform"
	}
	u := func() float64 { return 1 + f.o.noise()*rnd.Float64() }
	for j := 0; j < f.raters; j++ {
		a, b := u(), u()
		s.spam[j], s.know[j] = a/(a+b), b/(a+b)
		xi := s.xi[j*k : (j+1)*k]
		for x := range xi {
			xi[x] = u()
		}
		t := sum(xi)
		for x := range xi {
			xi[x] /= t
		}
	}
	return fmt.Sprintf("random %d", r)
}

func mace(ctx context.Context, labels []Label, items, raters, k int, o MACEOptions) (*Consensus, error) {
	d0, err := newAggregatorData("MACE", labels, items, raters, k, o.Values)
	if err != nil {
		return nil, err
	}
	f := &maceFit{d: flatten(d0), o: o, items: items, raters: raters, k: k, logK: math.Log(float64(k)), lg: make([]float64, k)}
	rnd := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	diag := &EMDiagnostics{Seed: o.Seed}
	var best *maceState
	bestLL := math.Inf(-1)
	for r := 0; r <= o.restarts(); r++ {
		s := f.newState()
		start := f.start(s, r, rnd)
		trace, conv, err := f.run(ctx, s)
		if err != nil {
			return nil, err
		}
		ll := trace[len(trace)-1]
		diag.Runs = append(diag.Runs, EMRun{Start: start, Iterations: len(trace), Converged: conv, LogLik: ll})
		if math.IsNaN(ll) {
			continue
		}
		if best == nil || ll > bestLL+1e-9*(1+math.Abs(bestLL)) {
			best, bestLL = s, ll
			diag.Start, diag.Iterations, diag.Converged, diag.LogLik = start, len(trace), conv, trace
		}
	}
	if best == nil {
		return nil, errors.New("raters: MACE failed (log marginal likelihood is NaN)")
	}
	c := f.d.labelConsensus("mace", best.post, f.d.classTotals(), o.Values)
	c.Fit = diag
	for j := range c.Raters {
		th := best.know[j]
		if !o.EM {
			th = (best.nKnow[j] + maceThetaPrior) / (best.nKnow[j] + best.nSpam[j] + 2*maceThetaPrior)
		}
		c.Raters[j].Skill, c.Raters[j].SkillKind = th, "competence"
	}
	return c, nil
}
