package raters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Label is one rating as the Dawid-Skene model sees it: rater Rater put
// item Item in class Class. A rater may label an item more than once (Dawid
// & Skene's anaesthetists did), each label counting as evidence.
type Label struct {
	Item, Rater, Class int
}

// LabelsOf returns every label of categorical ratings, repeated labels
// included, ordered by item, then rater, then the order they were added.
func LabelsOf(r *Ratings) []Label {
	r.check()
	if r.K == 0 {
		panic("raters: LabelsOf needs categorical ratings")
	}
	_, order := r.byItem()
	out := make([]Label, len(order))
	for y, x := range order {
		out[y] = Label{Item: int(r.item[x]), Rater: int(r.rater[x]), Class: int(r.val[x])}
	}
	return out
}

// DSOptions control DawidSkene and OneCoinDawidSkene. The zero value gives
// the documented defaults.
type DSOptions struct {
	// MaxIter bounds the EM iterations of each run; 0 means 500.
	MaxIter int
	// Tol stops a run when the log-likelihood changes by less than
	// Tol·(1 + |log-likelihood|) in an iteration; 0 means 1e-10.
	Tol float64
	// Restarts is the number of runs from random starting points (item
	// class probabilities drawn from a flat Dirichlet) besides the run
	// started from the majority-vote shares, as Dawid & Skene (1979) and
	// crowd-kit start; 0 or a negative value means none (the default).
	// On sparse designs random starts find spurious optima of higher
	// likelihood: on crowd-kit's 3 items × 30,000 raters (each rater
	// says no on one item, yes on two) one puts an item in class no with
	// certainty where the majority start keeps every item at 1/3, 2/3.
	Restarts int
	// MinGain is how much higher (in log-likelihood) a random start's
	// optimum must be to replace the majority-vote start's: 0 means
	// DefaultDSMinGain, a negative value any gain (plain maximum
	// likelihood over the starts). The majority start is Dawid & Skene's
	// (1979) own and crowd-kit's; a random start that beats it only
	// slightly is another local optimum of an almost flat likelihood, not
	// a better answer (on the paper's anaesthesia data one reaches
	// -189.41 against -190.73 with different class proportions).
	MinGain float64
	// Seed seeds the generator of the random starts,
	// rand.New(rand.NewPCG(Seed, 0x9e3779b97f4a7c15)).
	Seed uint64
	// Smoothing is a pseudo-count added to every class count and every
	// confusion-matrix count in the M-step (a Dirichlet prior, MAP
	// instead of maximum likelihood); 0 gives the maximum-likelihood
	// estimates of Dawid & Skene (1979).
	Smoothing float64
	// Values are the numeric values of the K classes, for the consensus
	// Score; nil means 1..K.
	Values []float64
	// TrueClasses holds the known class of some items (-1: unknown; nil:
	// none, len items otherwise): their posteriors are fixed to that
	// class at the start and after every E-step, as crowd-kit's
	// DawidSkene.fit(true_labels) corrects them.
	TrueClasses []int
	// InitialError holds prior error matrices of some raters (nil rows:
	// none; len raters otherwise), each K×K row-major,
	// InitialError[j][c*K+l] for true class c and label l: counts from
	// past work, or probabilities. The first M-step of every run uses
	// them, as crowd-kit's initial_error: InitialErrorAdd false
	// ("assign") replaces those raters' estimates by the matrices (rows
	// normalised), true ("addition") adds them as counts to the
	// estimated counts. One-coin Dawid-Skene ignores them.
	InitialError    [][]float64
	InitialErrorAdd bool
}

// check panics on options that do not fit the data's dimensions.
func (o DSOptions) check(items, raters, k int) {
	if o.TrueClasses != nil {
		if len(o.TrueClasses) != items {
			panic(fmt.Sprintf("raters: %d true classes for %d items", len(o.TrueClasses), items))
		}
		for _, c := range o.TrueClasses {
			if c >= k {
				panic(fmt.Sprintf("raters: true class %d of %d classes", c, k))
			}
		}
	}
	if o.InitialError != nil {
		if len(o.InitialError) != raters {
			panic(fmt.Sprintf("raters: %d initial error matrices for %d raters", len(o.InitialError), raters))
		}
		for _, m := range o.InitialError {
			if m != nil && len(m) != k*k {
				panic(fmt.Sprintf("raters: initial error matrix of %d cells for %d classes", len(m), k))
			}
			for _, v := range m {
				if !(v >= 0) || math.IsInf(v, 0) {
					panic(fmt.Sprintf("raters: initial error %v is not a non-negative number", v))
				}
			}
		}
	}
}

// fixTrue sets the posteriors of the items with a known class to it.
func (d *dsData) fixTrue(s *dsState, truth []int) {
	for i, c := range truth {
		if c < 0 || s.t[i] == nil {
			continue
		}
		for x := range s.t[i] {
			s.t[i][x] = 0
		}
		s.t[i][c] = 1
	}
}

// applyInitialError puts the initial error matrices into the estimates of
// the first M-step (see DSOptions.InitialError); counts holds that M-step's
// unnormalised counts of each rater.
func (d *dsData) applyInitialError(s *dsState, counts [][]float64, o DSOptions) {
	k := d.k
	for j, m := range o.InitialError {
		if m == nil || s.pi == nil {
			continue
		}
		for c := 0; c < k; c++ {
			row := s.pi[j][c*k : (c+1)*k]
			src := m[c*k : (c+1)*k]
			if o.InitialErrorAdd {
				src = make([]float64, k)
				for l := range src {
					src[l] = counts[j][c*k+l] + m[c*k+l]
				}
			}
			tot := sum(src)
			for l := range row {
				if tot > 0 {
					row[l] = src[l] / tot
				} else {
					row[l] = 1 / float64(k)
				}
			}
		}
	}
}

// DefaultDSMinGain is DSOptions.MinGain's default: 2 log-likelihood
// units, a likelihood ratio of e² ≈ 7.4.
const DefaultDSMinGain = 2.0

func (o DSOptions) minGain() float64 { return orDefault(o.MinGain, DefaultDSMinGain) }

func (o DSOptions) maxIter() int { return positiveOr(o.MaxIter, 500) }

func (o DSOptions) tol() float64 { return positiveOr(o.Tol, 1e-10) }

func (o DSOptions) restarts() int {
	return max(o.Restarts, 0)
}

// EMDiagnostics records how an EM aggregator converged.
type EMDiagnostics struct {
	// Iterations, Converged and LogLik describe the chosen run; LogLik is
	// the log-likelihood after each iteration (the last one is the final
	// value; with Smoothing > 0 the log-posterior up to a constant; for
	// GLAD the log posterior, for MACE the log marginal likelihood, under
	// variational Bayes computed with the variational weights).
	Iterations int       `json:"iterations"`
	Converged  bool      `json:"converged"`
	LogLik     []float64 `json:"loglik"`
	// Start says how the chosen run started: "majority" or "random N"
	// (Dawid-Skene), "uniform" or "random N" (MACE), GLAD's fixed start.
	Start string `json:"start"`
	// Seed is the seed of the random starts (0 for GLAD, which has none).
	Seed uint64 `json:"seed"`
	// Runs summarises every run, the majority-vote start first.
	Runs []EMRun `json:"runs"`
}

// EMRun summarises one EM run.
type EMRun struct {
	Start      string  `json:"start"`
	Iterations int     `json:"iterations"`
	Converged  bool    `json:"converged"`
	LogLik     float64 `json:"loglik"`
}

// dsData indexes the labels by item.
type dsData struct {
	n, r, k int
	byItem  [][]Label
	nr      []int // labels per rater
}

func newDSData(labels []Label, items, raters, k int) (*dsData, error) {
	return newLabelData("Dawid-Skene", labels, items, raters, k)
}

// newAggregatorData is newLabelData for an aggregator whose options give
// the classes' numeric values (checked by checkValues).
func newAggregatorData(method string, labels []Label, items, raters, k int, values []float64) (*dsData, error) {
	d, err := newLabelData(method, labels, items, raters, k)
	if err == nil {
		checkValues(values, k)
	}
	return d, err
}

// newLabelData indexes the labels of an aggregator called method (for its
// error messages).
func newLabelData(method string, labels []Label, items, raters, k int) (*dsData, error) {
	if items < 0 || raters < 0 {
		panic("raters: negative dimension")
	}
	if k < 2 {
		return nil, fmt.Errorf("raters: %s needs at least 2 classes, have %d", method, k)
	}
	d := &dsData{n: items, r: raters, k: k, byItem: make([][]Label, items), nr: make([]int, raters)}
	for _, l := range labels {
		if l.Item < 0 || l.Item >= items || l.Rater < 0 || l.Rater >= raters || l.Class < 0 || l.Class >= k {
			panic(fmt.Sprintf("raters: label %+v out of range", l))
		}
		d.byItem[l.Item] = append(d.byItem[l.Item], l)
		d.nr[l.Rater]++
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("raters: %s needs at least one label", method)
	}
	return d, nil
}

// dsState is the parameters and the item posteriors of one EM run.
type dsState struct {
	prior []float64   // p_k
	pi    [][]float64 // per rater, k×k row-major π_kl = P(says l | true k)
	acc   []float64   // one-coin accuracies
	t     [][]float64 // item posteriors
	logpi []float64   // scratch: log π, r×k×k
	// counts, when not nil, receives the M-step's unnormalised confusion
	// counts (for InitialErrorAdd).
	counts [][]float64
}

func (d *dsData) newState(oneCoin bool) *dsState {
	s := &dsState{prior: make([]float64, d.k), t: make([][]float64, d.n)}
	if oneCoin {
		s.acc = make([]float64, d.r)
	} else {
		s.pi = make([][]float64, d.r)
		for j := range s.pi {
			s.pi[j] = make([]float64, d.k*d.k)
		}
	}
	for i := range s.t {
		if len(d.byItem[i]) > 0 {
			s.t[i] = make([]float64, d.k)
		}
	}
	return s
}

// initMajority sets the posteriors to the label shares of each item.
func (d *dsData) initMajority(s *dsState) {
	for i, ls := range d.byItem {
		if len(ls) == 0 {
			continue
		}
		for k := range s.t[i] {
			s.t[i][k] = 0
		}
		for _, l := range ls {
			s.t[i][l.Class] += 1 / float64(len(ls))
		}
	}
}

// initRandom draws the posteriors from a flat Dirichlet.
func (d *dsData) initRandom(s *dsState, rnd *rand.Rand) {
	for i := range d.byItem {
		if s.t[i] == nil {
			continue
		}
		sum := 0.0
		for k := range s.t[i] {
			s.t[i][k] = rnd.ExpFloat64()
			sum += s.t[i][k]
		}
		for k := range s.t[i] {
			s.t[i][k] /= sum
		}
	}
}

// mStep re-estimates the priors and the confusion matrices (Dawid & Skene
// 1979, eq. 2.3 and 2.4) or the one-coin accuracies from the posteriors.
func (d *dsData) mStep(s *dsState, smooth float64) {
	k := d.k
	for c := range s.prior {
		s.prior[c] = smooth
	}
	tot := smooth * float64(k)
	for i, ls := range d.byItem {
		if len(ls) == 0 {
			continue
		}
		for c, p := range s.t[i] {
			s.prior[c] += p
		}
		tot++
	}
	for c := range s.prior {
		s.prior[c] /= tot
	}
	if s.acc != nil {
		hit := make([]float64, d.r)
		for i, ls := range d.byItem {
			for _, l := range ls {
				hit[l.Rater] += s.t[i][l.Class]
			}
		}
		for j := range s.acc {
			s.acc[j] = (hit[j] + smooth) / (float64(d.nr[j]) + 2*smooth)
		}
		return
	}
	for j := range s.pi {
		for x := range s.pi[j] {
			s.pi[j][x] = smooth
		}
	}
	for i, ls := range d.byItem {
		for _, l := range ls {
			row := s.pi[l.Rater]
			for c, p := range s.t[i] {
				row[c*k+l.Class] += p
			}
		}
	}
	if s.counts != nil {
		for j := range s.pi {
			copy(s.counts[j], s.pi[j])
		}
	}
	for j := range s.pi {
		for c := 0; c < k; c++ {
			if row := s.pi[j][c*k : (c+1)*k]; !normalize(row) {
				// No evidence about this rater on class c: uninformative.
				for l := range row {
					row[l] = 1 / float64(k)
				}
			}
		}
	}
}

// logPi returns log P(rater j says l | true class c). Probabilities are
// floored at 1e-300 so that an estimate that underflowed to zero (or a
// class ruled out by a rater who never uses a label for it) cannot rule out
// every class of an item; the floor changes a log-likelihood by less than
// 1e-290.
func (s *dsState) logPi(j, c, l, k int) float64 {
	var p float64
	switch {
	case s.acc == nil:
		p = s.pi[j][c*k+l]
	case c == l:
		p = s.acc[j]
	default:
		p = (1 - s.acc[j]) / float64(k-1)
	}
	return math.Log(math.Max(p, probFloor))
}

const probFloor = 1e-300

// eStep computes the item posteriors (Dawid & Skene 1979, eq. 2.5) and
// returns the log-likelihood Σ_i log Σ_k p_k Π_labels π_{k,l}.
func (d *dsData) eStep(s *dsState) float64 {
	k := d.k
	ll := 0.0
	lp := make([]float64, k)
	// log π per rater, computed once per iteration.
	if len(s.logpi) != d.r*k*k {
		s.logpi = make([]float64, d.r*k*k)
	}
	for j := 0; j < d.r; j++ {
		for c := 0; c < k; c++ {
			for l := 0; l < k; l++ {
				s.logpi[(j*k+c)*k+l] = s.logPi(j, c, l, k)
			}
		}
	}
	logPrior := make([]float64, k)
	for c, p := range s.prior {
		logPrior[c] = math.Log(math.Max(p, probFloor))
	}
	for i, ls := range d.byItem {
		if len(ls) == 0 {
			continue
		}
		for c := 0; c < k; c++ {
			v := logPrior[c]
			for _, l := range ls {
				v += s.logpi[(l.Rater*k+c)*k+l.Class]
			}
			lp[c] = v
		}
		ll += expNormalizeTo(s.t[i], lp)
	}
	return ll
}

func (d *dsData) logPrior(s *dsState, smooth float64) float64 {
	if smooth == 0 {
		return 0
	}
	lp := 0.0
	for _, p := range s.prior {
		lp += smooth * math.Log(p)
	}
	if s.acc != nil {
		for _, a := range s.acc {
			lp += smooth * (math.Log(a) + math.Log(1-a))
		}
		return lp
	}
	for _, m := range s.pi {
		for _, p := range m {
			lp += smooth * math.Log(p)
		}
	}
	return lp
}

// run iterates EM from the posteriors in s.
func (d *dsData) run(ctx context.Context, s *dsState, o DSOptions) (trace []float64, converged bool, err error) {
	prev := math.Inf(-1)
	for it := 0; it < o.maxIter(); it++ {
		if err := ctxErr(ctx); err != nil {
			return trace, false, err
		}
		first := it == 0 && o.InitialError != nil && s.pi != nil
		if first {
			s.counts = make([][]float64, d.r)
			for j := range s.counts {
				s.counts[j] = make([]float64, d.k*d.k)
			}
		}
		d.mStep(s, o.Smoothing)
		if first {
			d.applyInitialError(s, s.counts, o)
			s.counts = nil
		}
		ll := d.eStep(s) + d.logPrior(s, o.Smoothing)
		d.fixTrue(s, o.TrueClasses)
		trace = append(trace, ll)
		if math.Abs(ll-prev) < o.tol()*(1+math.Abs(ll)) {
			return trace, true, nil
		}
		prev = ll
	}
	return trace, false, nil
}

// DawidSkene fits the model of Dawid & Skene (1979) by EM: each item has a
// true class c with prior p_c, each rater j a confusion matrix π^(j)_cl =
// P(j says l | true class c), and labels are independent given the true
// class. The run started from the majority-vote shares (the paper's start)
// and Restarts runs from random starts are made; the one with the highest
// log-likelihood is kept, its classes aligned with the majority vote
// (EM is blind to a relabelling of the classes). The consensus has the
// posterior class probabilities and the most probable class of each
// labelled item (Class -1 for items without labels); each rater's
// Confusion is π^(j) and Accuracy Σ_c p_c π^(j)_cc.
func DawidSkene(labels []Label, items, raters, k int, o DSOptions) (*Consensus, error) {
	return dawidSkene(context.Background(), labels, items, raters, k, o, false)
}

// OneCoinDawidSkene fits the one-coin (symmetric) Dawid-Skene model: rater
// j gives the true class with probability a_j and each other class with
// probability (1 - a_j)/(K - 1). Estimation, restarts and output are as in
// DawidSkene; each rater's Accuracy is a_j.
func OneCoinDawidSkene(labels []Label, items, raters, k int, o DSOptions) (*Consensus, error) {
	return dawidSkene(context.Background(), labels, items, raters, k, o, true)
}

// dawidSkene fits either model; it stops with ctx's error when ctx is done.
func dawidSkene(ctx context.Context, labels []Label, items, raters, k int, o DSOptions, oneCoin bool) (*Consensus, error) {
	d, err := newDSData(labels, items, raters, k)
	if err != nil {
		return nil, err
	}
	if o.Values != nil && len(o.Values) != k {
		panic("raters: len(Values) != k")
	}
	o.check(items, raters, k)
	rnd := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	mv := d.newState(oneCoin)
	d.initMajority(mv)
	d.fixTrue(mv, o.TrueClasses)
	majority := make([][]float64, d.n)
	for i, t := range mv.t {
		majority[i] = append([]float64(nil), t...)
	}
	diag := &EMDiagnostics{Seed: o.Seed}
	var best *dsState
	bestLL, mvLL := math.Inf(-1), math.NaN()
	for run := 0; run <= o.restarts(); run++ {
		s := mv
		start := "majority"
		if run > 0 {
			s = d.newState(oneCoin)
			d.initRandom(s, rnd)
			d.fixTrue(s, o.TrueClasses)
			start = fmt.Sprintf("random %d", run)
		}
		trace, conv, err := d.run(ctx, s, o)
		if err != nil {
			return nil, err
		}
		ll := trace[len(trace)-1]
		if run == 0 {
			mvLL = ll
		}
		diag.Runs = append(diag.Runs, EMRun{Start: start, Iterations: len(trace), Converged: conv, LogLik: ll})
		if math.IsNaN(ll) {
			continue
		}
		// A random start must beat the majority start by MinGain to
		// replace it, and the best so far clearly (equal optima differ
		// only by a relabelling).
		if best == nil || ((math.IsNaN(mvLL) || ll > mvLL+o.minGain()) && ll > bestLL+1e-9*(1+math.Abs(bestLL))) {
			best, bestLL = s, ll
			diag.Start, diag.Iterations, diag.Converged, diag.LogLik = start, len(trace), conv, trace
		}
	}
	if best == nil {
		return nil, errors.New("raters: Dawid-Skene EM failed (log-likelihood is NaN)")
	}
	if diag.Start != "majority" {
		d.align(best, majority)
	}
	return d.consensus(best, diag, o, oneCoin), nil
}

// align relabels the classes of s to agree best with the majority-vote
// shares: a greedy assignment on the soft agreement Σ_i T_ia M_ib.
func (d *dsData) align(s *dsState, majority [][]float64) {
	k := d.k
	agree := make([]float64, k*k)
	for i, t := range s.t {
		if t == nil {
			continue
		}
		for a, p := range t {
			for b, q := range majority[i] {
				agree[a*k+b] += p * q
			}
		}
	}
	type cell struct {
		a, b int
		v    float64
	}
	cells := make([]cell, 0, k*k)
	for a := 0; a < k; a++ {
		for b := 0; b < k; b++ {
			cells = append(cells, cell{a, b, agree[a*k+b]})
		}
	}
	sort.SliceStable(cells, func(x, y int) bool { return cells[x].v > cells[y].v })
	perm := make([]int, k) // run class a -> majority class perm[a]
	for x := range perm {
		perm[x] = -1
	}
	usedB := make([]bool, k)
	for _, c := range cells {
		if perm[c.a] < 0 && !usedB[c.b] {
			perm[c.a] = c.b
			usedB[c.b] = true
		}
	}
	relabel := func(v []float64) {
		old := append([]float64(nil), v...)
		for a := range old {
			v[perm[a]] = old[a]
		}
	}
	relabel(s.prior)
	for _, t := range s.t {
		if t != nil {
			relabel(t)
		}
	}
	for j, m := range s.pi {
		old := append([]float64(nil), m...)
		for a := 0; a < k; a++ {
			for l := 0; l < k; l++ {
				m[perm[a]*k+l] = old[a*k+l]
			}
		}
		s.pi[j] = m
	}
}

func (d *dsData) consensus(s *dsState, diag *EMDiagnostics, o DSOptions, oneCoin bool) *Consensus {
	k := d.k
	val := func(c int) float64 {
		if o.Values == nil {
			return float64(c + 1)
		}
		return o.Values[c]
	}
	c := &Consensus{Method: "dawid_skene", Items: make([]ItemConsensus, d.n), Raters: make([]RaterQuality, d.r), Fit: diag}
	if oneCoin {
		c.Method = "one_coin"
	}
	c.Priors = append([]float64(nil), s.prior...)
	for i, t := range s.t {
		it := ItemConsensus{Class: -1, Score: math.NaN(), N: len(d.byItem[i])}
		if t != nil {
			it.Probs = append([]float64(nil), t...)
			best := 0
			it.Score = 0
			for x, p := range t {
				if p > t[best] {
					best = x
				}
				it.Score += p * val(x)
			}
			it.Class = best
		}
		c.Items[i] = it
	}
	// Rater figures.
	ad := make([]float64, d.r)
	sd := make([]float64, d.r)
	for i, ls := range d.byItem {
		for _, l := range ls {
			x := val(l.Class) - c.Items[i].Score
			ad[l.Rater] += math.Abs(x)
			sd[l.Rater] += x
		}
	}
	for j := 0; j < d.r; j++ {
		q := RaterQuality{N: d.nr[j], Accuracy: math.NaN(), MAE: math.NaN(), Bias: math.NaN()}
		if q.N > 0 {
			q.MAE, q.Bias = ad[j]/float64(q.N), sd[j]/float64(q.N)
		}
		conf := make([][]float64, k)
		for a := range conf {
			conf[a] = make([]float64, k)
			for l := range conf[a] {
				conf[a][l] = math.Exp(s.logPi(j, a, l, k))
			}
		}
		q.Confusion = conf
		if oneCoin {
			q.Accuracy = s.acc[j]
		} else {
			q.Accuracy = 0
			for a := 0; a < k; a++ {
				q.Accuracy += s.prior[a] * conf[a][a]
			}
		}
		c.Raters[j] = q
	}
	return c
}
