package ordinal

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/design"
	"concord/multirater/gp"
	"concord/multirater/infer"
	"concord/multirater/mcmc"
)

// Name is the family's model name in fit documents (ModelSettings.Model).
const Name = "ordinal"

// Data are the inputs of Fit: N items, L raters, K ordered
// levels and the observed ratings. Raters rate any subset of the items
// (Rogers et al. sec. 2.5); items nobody rated are part of the Gaussian
// process and are predicted.
type Data struct {
	// ItemIDs names the N items, RaterIDs the L raters and Levels the K
	// level codes, lowest first. They label the result.
	ItemIDs  []string
	RaterIDs []string
	Levels   []string
	// Ratings are the observations, at most one per (item, rater) unless
	// Repeats.
	Ratings []multirater.Rating
	// Repeats allows several ratings of an item by one rater (repeated
	// labels, the crowd case): each is one more likelihood term, an
	// independent draw given the item's consensus and the rater's
	// parameters. The Gibbs sampler then does without the collapsed
	// moves, which assume one rating per item and rater.
	Repeats bool
	// Cov is the N×N prior covariance C of the latent consensus (Rogers et
	// al. sec. 2.2), e.g. from a kernel.Kernel's GramTo; nil means the identity
	// (no covariates). It must be positive semidefinite; it may be
	// singular.
	Cov mat.Symmetric
	// Kernel describes Cov for the result ("identity" when Cov is nil).
	Kernel string
	// Learn, when set, adds to the prior covariance kernel terms whose
	// hyperparameters FitDeterministic learns with the rater parameters by
	// maximising the EP evidence: C = Cov + sum of the terms' Gram matrices
	// on Learn.Inputs, Cov nil meaning no fixed part here; with
	// Learn.Rank positive and no fixed part, in inducing-point (FITC) form
	// (LearnKernel.NewKernel). Fit (Gibbs) panics on it.
	Learn *LearnKernel
	// Alt are further priors that FitDeterministic with Noise Auto
	// fits beside Cov/Kernel/Learn's and chooses among by the penalised
	// log evidence (the identity beside a text kernel, say); Fit (Gibbs)
	// ignores them.
	Alt []Prior
	// Final, when set, gives the prior of a final run (and a few words
	// saying what it is, for the notes): when the fit kept by
	// FitDeterministic is on Cov (no kernel term learnt, not one of Alt's
	// priors), its rater parameters, learnt by maximising the evidence on
	// Cov, are held fixed and one more EP run or Newton's method on Final's
	// prior gives the posterior, the log evidence and the document (a
	// low-rank Cov of a small rank for the many evaluations of the search,
	// a larger rank once). The choice among candidates, the rater
	// parameters' intervals and the Laplace fit's EP check stay on Cov.
	// Fit (Gibbs) ignores it.
	Final func(ctx context.Context) (mat.Symmetric, string, error)
}

// Prior is one prior of the latent consensus: Data's Cov, Kernel and
// Learn.
type Prior struct {
	Kernel string
	Cov    mat.Symmetric
	Learn  *LearnKernel
}

// CovOrIdentity returns Cov, or the identity when Cov is nil, as a
// *mat.DiagDense (O(N) memory; gp.NewFactor factorises it in O(N)).
func (d *Data) CovOrIdentity() mat.Symmetric {
	if d.Cov != nil {
		return d.Cov
	}
	one := make([]float64, len(d.ItemIDs))
	for i := range one {
		one[i] = 1
	}
	return mat.NewDiagDense(len(one), one)
}

// LearnKernel are the kernel terms of Data.Learn.
type LearnKernel = infer.LearnKernel

// Options control Fit. The zero value means the defaults
// given for each field.
type Options struct {
	// Common holds the options every MCMC family shares: the chains
	// (mcmc.Settings), the sampler, the identifiability, the Gamma(V,
	// Lambda) prior on each rater's precision alpha_l, the flag threshold,
	// the convergence limits and the kept draws (mcmc.Common gives their
	// defaults; Lambda defaults to 0.1 under Strong identifiability, a vague
	// prior).
	mcmc.Common
	// RefRater is the id of the reference rater of Strong and Both
	// identifiability; "" means the rater with the most ratings (the first
	// such).
	RefRater string
	// SigmaB is the standard deviation of the N(0, SigmaB^2) prior on each
	// threshold (Rogers et al. sec. 2.2); zero means the paper's 1, or 10
	// under Strong identifiability (vague).
	SigmaB float64
	// Progress, when set, is called with the fit's progress about twice a
	// second, from a goroutine of Fit.
	Progress func(multirater.Progress)
}

// WithDefaults returns the options with zero fields replaced by their
// documented defaults (the family's own; callers never restate them).
func (o Options) WithDefaults() Options {
	o.Common = o.Common.WithDefaults(o.Identifiability == multirater.Strong)
	if o.SigmaB == 0 {
		o.SigmaB = 1
		if o.Identifiability == multirater.Strong {
			o.SigmaB = 10
		}
	}
	return o
}

func (o Options) check() {
	o.Common.Check()
	mcmc.CheckPositive("SigmaB", o.SigmaB)
}

// Fit fits the multi-rater ordinal regression model with a
// Gaussian-process prior of Rogers, Girolami & Polajnar (2010, sec. 2.1-2.2,
// 2.5, app. A.1) by Gibbs sampling and summarises the posterior:
//
//	m ~ N(0, C)                                  latent consensus of the N items
//	alpha_l ~ Gamma(v, lambda)                   precision of rater l
//	b_lk ~ N(0, sigma_b^2), b_l1 < ... < b_l,K-1 rater l's thresholds
//	y_nl ~ N(m_n, 1/alpha_l)                     for each observed rating
//	t_nl = k  iff  b_l,k-1 < y_nl <= b_lk         (b_l0 = -inf, b_lK = +inf)
//
// The paper's sampler (PaperSampler) cycles through the full conditionals:
// truncated normal y_nl (eq. 8, 24), Gaussian m (eq. 19, 27), Gamma alpha_l
// over the items the rater rated (eq. 11, 30) and truncated normal b_lk
// between the neighbouring latent values and thresholds (eq. 9, 33).
//
// The default sampler adds moves that leave the same posterior invariant and
// remove the slow directions of that Gibbs sweep (the paper thinned by 200);
// each is an exact draw, or a slice-sampling step, from a conditional
// distribution in some parametrisation of the state, and their invariance is
// checked by a Geweke joint-distribution test (derivations in
// ordinal_sampler.go and ordinal_open.go):
//
//   - thresholds in interval coordinates: each b_lk is redrawn with the latent
//     values of the two levels it separates carried along (each y kept at its
//     relative position in its interval) instead of being trapped between them,
//     the problem Cowles (1996) addresses; the conditional is log-concave and
//     is slice sampled;
//   - a per-rater affine move (y_l, b_l) -> (a y_l + c, a b_l + c),
//     alpha_l -> alpha_l / a^2, a generalised Gibbs step (Liu & Sabatti 2000)
//     along the rater's scale and bias;
//   - an open-level move (interweaving, Yu & Meng 2011) translating m together
//     with the latent values of ratings in the unbounded bottom and top levels,
//     which otherwise pin m in place where most ratings are extreme;
//   - a global scale move (m, y, b) -> a (m, y, b), alpha -> alpha / a^2
//     (parameter expansion, Liu & Wu 1999) for the coupling of precisions and
//     latent scale;
//   - under Weak identifiability a global location move shifting m (along the
//     direction the prior allows), all latent values and all thresholds;
//   - for a diagonal C (identity kernel) with fewer than 4 ratings per item on
//     average, the precisions and the rater affine moves are updated with m
//     integrated out (a collapsed Gibbs step; with two raters per item the
//     precisions otherwise mix an order of magnitude more slowly).
//
// Cost per sweep. The latent consensus is drawn exactly without inverting C
// (see gp.Factor): O(N + M) for a diagonal C (identity kernel); O(N r) for a
// complete design (every rater rated every item), r the numerical rank of C
// (at most N), after one O(N^3) eigendecomposition; for an incomplete design
// by the perturbation sampler with conjugate gradients, O(N r) per iteration,
// preconditioned by the exact leading k×k eigenblock (k <= 256, O(L k^2 + k^3)
// per sweep) and the diagonal elsewhere. The other steps cost O(M) for M
// ratings, plus O(N r_o^2 + r_o^3) for the open-level move on the r_o leading
// eigendirections (used when r_o <= 128).
//
// A low-rank prior (gp.LowRank: a weight-space text kernel, or the pivoted
// columns of a covariate kernel) is never an N×N matrix: G is N×r and
// memory O(N r + M). From gp.ExtraFromItems items a truncated one keeps its
// diagonal correction, m = G w + e with e_n ~ N(0, C_nn - |G_n|^2)
// independent (FITC, as EP and Laplace take it; gp.NewPriorExtra): the
// Gaussian conditional is drawn in two exact blocks, w | e by the sampler
// above with the pseudo-observations of G w, then e | w item by item
// (O(N)); the scale move scales e with w.
//
// Chains run in parallel goroutines; ctx cancels the fit. Caller mistakes
// (indices out of range, K < 2, malformed options) panic; problems with the
// data (no ratings, duplicate ratings, a rater without ratings, a kernel
// matrix that is not positive semidefinite) return an error.
func Fit(ctx context.Context, data *Data, opts Options) (*multirater.FitResult, error) {
	start := time.Now()
	opts = opts.WithDefaults()
	opts.check()
	md, err := newOrdModel(data, opts)
	if err != nil {
		return nil, err
	}
	mc := opts.Settings
	md.mEvery = mEveryFor(md.n, mc.Samples, mc.Chains)
	return mcmc.Fit(ctx, mc, opts.Progress, start, 0.95,
		func(c int) *ordChain { return newOrdChain(md, mc.Seed, c, mc.Samples) },
		func(chains []*ordChain) *multirater.FitResult { return summariseOrdinal(data, md, opts, chains) })
}

// maxStoredM bounds the latent scores m the chains of a fit store
// (float32: 128 MB): 4 chains x 2,000 draws of every item's score took
// 2 GB at 64,000 items. Past it every mEvery-th kept draw is recorded;
// the item summaries, ranks, predictive distributions and the document's
// draws use those, the rater parameters every draw.
const maxStoredM = 1 << 25

// mEveryFor returns the mEvery that keeps n items' scores over chains
// chains of samples kept draws within maxStoredM.
func mEveryFor(n, samples, chains int) int {
	total := int64(n) * int64(samples) * int64(chains)
	return max(1, int((total+maxStoredM-1)/maxStoredM))
}

// mStride returns md.mEvery, at least 1.
func (md *ordModel) mStride() int { return max(md.mEvery, 1) }

// mStored returns the recorded draws of m per chain of samples kept draws.
func (md *ordModel) mStored(samples int) int {
	e := md.mStride()
	return (samples + e - 1) / e
}

// ordModel is the immutable description of an ordinal fit, shared by the
// chains (Fit sets mEvery before it makes them).
type ordModel struct {
	n, nl, nk int
	// mEvery: the chains record the latent scores m of every mEvery-th
	// kept draw (0 or 1: every draw), so that at most maxStoredM are
	// stored over all chains (Fit sets it).
	mEvery int
	// Observations sorted by rater, then level, then item: rater l owns
	// obs [rStart[l], rStart[l+1]); level c of rater l is
	// [cStart[l*(nk+1)+c], cStart[l*(nk+1)+c+1]).
	obsItem []int32
	rStart  []int
	cStart  []int
	// obsRater is the rater of each observation and obsOpen marks the
	// observations in an unbounded level: +1 for the top level (y > b_K-1),
	// -1 for the bottom level (y <= b_1), 0 otherwise.
	obsRater []int32
	obsOpen  []int8
	// itemStart/itemObs list each item's observations:
	// itemObs[itemStart[n]:itemStart[n+1]].
	itemStart []int
	itemObs   []int32
	// itemCount is the number of ratings of each item.
	itemCount []int
	// For a diagonal prior, rater l's items are grouped by their set of
	// raters and prior variance (the collapsed moves compute one
	// determinant per group): obsGrp[o] is observation o's group within
	// its rater, grpItem[l][g] an item of group g and grpCount[l][g] its
	// size.
	obsGrp   []int32
	grpItem  [][]int32
	grpCount [][]float64
	// openMove selects the open-level move of the default sampler
	// (stepOpen); openObs lists the observations in unbounded levels and
	// closedGram[l] = sum over rater l's bounded-level ratings of G_n' G_n
	// (r×r, lower triangle), for a non-diagonal prior.
	openMove bool
	openObs  []int32
	// openItems lists the items with an unbounded-level rating and
	// openIndex maps an item to its position there (-1 for none).
	openItems []int32
	openIndex []int32
	// obsShift marks the observations the open-level move shifts with m
	// (those in openObs).
	obsShift   []bool
	closedGram [][]float64
	// gTOpen is G' restricted to the columns of openItems (r ×
	// len(openItems) row-major), for a non-diagonal prior.
	gTOpen []float64
	// openRank is the number of leading eigendirections the move uses.
	openRank int
	complete bool
	// raterGsq are the per-rater parts of the conjugate-gradient
	// preconditioner (incomplete designs with a non-diagonal prior).
	raterGsq [][]float64
	// precBlock leading eigendirections are preconditioned exactly, from
	// the per-rater blocks raterBlock[l] = sum over rater l's ratings of
	// G_n,1:k' G_n,1:k (lower triangle).
	precBlock  int
	raterBlock [][]float64
	f          *gp.Factor
	// extraDims counts the items with a positive diagonal correction
	// (gp.Factor.Extra): the dimensions of e that the scale move scales.
	extraDims int
	sampler   mcmc.Sampler
	ident     multirater.Identifiability
	// ref is the reference rater (-1 under Weak).
	ref            int
	v, lam, invS2  float64
	sigB           float64
	nFreeAlpha     int
	nFreeB, mFixed int
	locationMove   bool
	// collapse selects the moves with m integrated out
	// (stepRaterAffineCollapsed, stepAlphaCollapsed): default sampler,
	// diagonal prior, few ratings per item.
	collapse bool
}

func (md *ordModel) bIdx(l, j int) int { return l*(md.nk+1) + j }

// catRange returns rater l's observations of level c.
func (md *ordModel) catRange(l, c int) (int, int) {
	i := l*(md.nk+1) + c
	return md.cStart[i], md.cStart[i+1]
}

func (md *ordModel) alphaFixed(l int) bool { return l == md.ref }

func (md *ordModel) bFixed(l, j int) bool { return l == md.ref && j == 1 }

// newOrdModel lays out the data for the sampler: the observation tables
// (index), the reference rater and the free parameters (identify), the
// prior factor, and what the moves the data allow need (the collapsed
// moves' groups, the conjugate-gradient preconditioner, the open-level
// move).
func newOrdModel(data *Data, opts Options) (*ordModel, error) {
	return newOrdModelPrior(data, opts, len(data.ItemIDs) >= gp.ExtraFromItems)
}

// newOrdModelPrior is newOrdModel; extra selects the prior factor with the
// diagonal correction of a truncated low-rank covariance (gp.NewPriorExtra;
// newOrdModel's choice from gp.ExtraFromItems items, the tests' for small
// ones).
func newOrdModelPrior(data *Data, opts Options, extra bool) (*ordModel, error) {
	if data.Learn != nil {
		panic("multirater: the Gibbs fit takes no kernel to learn (Data.Learn): fit it with FitDeterministic, or fix the hyperparameters")
	}
	n, nl, nk := len(data.ItemIDs), len(data.RaterIDs), len(data.Levels)
	dsg := design.Design{What: "OrdinalData", ItemIDs: data.ItemIDs, RaterIDs: data.RaterIDs, K: nk,
		Ratings: data.Ratings, Cov: data.Cov, Words: design.Words{Noun: "ratings", Verb: "rated"}, Repeats: data.Repeats}
	rs, repeated, err := dsg.Sorted(true)
	if err != nil {
		return nil, err
	}
	md := &ordModel{
		n: n, nl: nl, nk: nk,
		sampler: opts.Sampler,
		ident:   opts.Identifiability,
		ref:     -1,
		v:       opts.V,
		lam:     opts.Lambda,
		sigB:    opts.SigmaB,
		invS2:   1 / (opts.SigmaB * opts.SigmaB),
	}
	perRater := md.index(rs)
	md.complete = len(rs) == n*nl && !repeated
	if err := md.identify(data.RaterIDs, opts, perRater); err != nil {
		return nil, err
	}
	md.locationMove = opts.Sampler == mcmc.DefaultSampler && opts.Identifiability == multirater.Weak
	if md.f, err = gp.NewSamplerPrior(n, data.Cov, extra); err != nil {
		return nil, err
	}
	md.extraDims = md.f.ExtraDims()
	if md.f.Extra != nil {
		// The item precisions of the draw of G w (e integrated out)
		// differ even when every rater rated every item: the conjugate
		// gradient sampler.
		md.complete = false
	}
	rated := 0
	for _, c := range md.itemCount {
		if c > 0 {
			rated++
		}
	}
	// The collapsed moves take a rater's change of precision to change an
	// item's precision sum once: not with repeated ratings.
	md.collapse = md.f.Diag && opts.Sampler == mcmc.DefaultSampler && float64(len(rs)) < collapseRatingsPerItem*float64(rated) && !repeated
	if md.collapse {
		md.groupItems()
	}
	if !md.f.Diag && !md.complete {
		md.f.PrepareCG()
		md.preconditioner(opts)
	}
	if !md.f.Diag {
		// The open-level move translates w along the leading
		// eigendirections only: those with relative eigenvalue below
		// openRelTol move m by less than 1e-3 of the leading ones and do not
		// matter for mixing.
		for md.openRank < md.f.R && md.f.Lam[md.openRank] >= openRelTol*md.f.Lam[0] {
			md.openRank++
		}
	}
	if opts.Sampler == mcmc.DefaultSampler && (md.f.Diag || md.openRank <= maxOpenRank) {
		md.openMove = true
		md.prepareOpenMove()
	}
	return md, nil
}

// index fills the observation tables of the ratings rs (sorted by rater,
// level and item): each observation's item, rater and open end, the
// ranges by rater (rStart) and by rater and level (cStart), and the
// observations by item (itemStart, itemObs, itemCount); it returns the
// number of ratings of each rater.
func (md *ordModel) index(rs []multirater.Rating) []int {
	n, nl, nk := md.n, md.nl, md.nk
	md.obsItem = make([]int32, len(rs))
	md.obsRater = make([]int32, len(rs))
	md.obsOpen = make([]int8, len(rs))
	md.rStart = make([]int, nl+1)
	md.cStart = make([]int, nl*(nk+1)+1)
	md.itemCount = make([]int, n)
	perRater := make([]int, nl)
	perCat := make([]int, nl*(nk+1))
	for i, r := range rs {
		md.obsItem[i] = int32(r.Item)
		md.obsRater[i] = int32(r.Rater)
		switch r.Level {
		case nk - 1:
			md.obsOpen[i] = 1
		case 0:
			md.obsOpen[i] = -1
		}
		perRater[r.Rater]++
		perCat[r.Rater*(nk+1)+r.Level]++
		md.itemCount[r.Item]++
	}
	for l := 0; l < nl; l++ {
		md.rStart[l+1] = md.rStart[l] + perRater[l]
		base := l * (nk + 1)
		md.cStart[base] = md.rStart[l]
		for c := 0; c < nk; c++ {
			md.cStart[base+c+1] = md.cStart[base+c] + perCat[base+c]
		}
	}
	md.itemStart, md.itemObs = design.ByItem(n, md.itemCount, md.obsItem)
	return perRater
}

// identify sets the reference rater (strong identifiability) and counts the
// free precisions and thresholds and the ratings of a fixed precision.
func (md *ordModel) identify(raterIDs []string, opts Options, perRater []int) error {
	if opts.Identifiability != multirater.Weak {
		var err error
		if md.ref, err = design.RefRater(raterIDs, opts.RefRater, perRater); err != nil {
			return err
		}
	}
	for l := 0; l < md.nl; l++ {
		if !md.alphaFixed(l) {
			md.nFreeAlpha++
		} else {
			md.mFixed += perRater[l]
		}
		for j := 1; j < md.nk; j++ {
			if !md.bFixed(l, j) {
				md.nFreeB++
			}
		}
	}
	return nil
}

// preconditioner prepares the conjugate-gradient preconditioner
// (incomplete design, non-diagonal prior). raterGsq[l][k] = sum over rater
// l's ratings of G_nk^2, so that the Jacobi preconditioner
// diag(I + G'DG) = 1 + sum_l alpha_l raterGsq[l] costs O(L r) per sweep;
// the leading eigendirections, where lambda_k times the largest item
// precision exceeds 1/2 and H is far from its diagonal, are treated exactly
// (block-Jacobi: their block I + sum_l alpha_l raterBlock[l] is factorised
// each sweep, O(L k^2 + k^3)); the others by the diagonal.
func (md *ordModel) preconditioner(opts Options) {
	r := md.f.R
	dmax := 0.0
	for i := 0; i < md.n; i++ {
		dmax = math.Max(dmax, float64(md.itemCount[i]))
	}
	dmax *= opts.V / opts.Lambda // prior mean precision per rating
	kb := md.f.PrecBlock(dmax, md.nl)
	md.precBlock = kb
	md.raterGsq = make([][]float64, md.nl)
	if kb > 0 {
		md.raterBlock = make([][]float64, md.nl)
	}
	for l := range md.raterGsq {
		md.raterGsq[l] = make([]float64, r)
		if kb > 0 {
			md.raterBlock[l] = make([]float64, kb*kb)
		}
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			row := md.f.G[int(md.obsItem[o])*r : (int(md.obsItem[o])+1)*r]
			gp.AddRowSquares(md.raterGsq[l], row)
			if kb > 0 {
				gp.AddRowGram(md.raterBlock[l], row[:kb])
			}
		}
	}
}

// prepareOpenMove lists what the open-level move shifts with m: every
// unbounded-level rating for a diagonal C; for a non-diagonal C only those
// of items all of whose ratings are unbounded (the others are pinned by
// their bounded ratings anyway, and leaving them out keeps the move cheap
// and its constraints few), with G' on those items and each rater's Gram
// matrix of the other ratings (closedGram).
func (md *ordModel) prepareOpenMove() {
	n := md.n
	pure := make([]bool, n)
	for i := range pure {
		pure[i] = md.itemCount[i] > 0
	}
	for o, op := range md.obsOpen {
		if op == 0 {
			pure[md.obsItem[o]] = false
		}
	}
	md.obsShift = make([]bool, len(md.obsOpen))
	md.openIndex = make([]int32, n)
	for i := range md.openIndex {
		md.openIndex[i] = -1
	}
	for o, op := range md.obsOpen {
		it := md.obsItem[o]
		if op == 0 || (!md.f.Diag && !pure[it]) {
			continue
		}
		md.obsShift[o] = true
		md.openObs = append(md.openObs, int32(o))
		if md.openIndex[it] < 0 {
			md.openIndex[it] = int32(len(md.openItems))
			md.openItems = append(md.openItems, it)
		}
	}
	if md.f.Diag {
		return
	}
	r, fr := md.openRank, md.f.R
	no := len(md.openItems)
	md.gTOpen = make([]float64, r*no)
	for i, it := range md.openItems {
		for k := 0; k < r; k++ {
			md.gTOpen[k*no+i] = md.f.G[int(it)*fr+k]
		}
	}
	md.closedGram = make([][]float64, md.nl)
	for l := range md.closedGram {
		gm := make([]float64, r*r)
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			if !md.obsShift[o] {
				gp.AddRowGram(gm, md.f.G[int(md.obsItem[o])*fr:int(md.obsItem[o])*fr+r])
			}
		}
		md.closedGram[l] = gm
	}
}

// collapseRatingsPerItem: with a diagonal prior and fewer ratings per rated
// item than this on average, the default sampler updates the precisions and
// rater frames with m integrated out. With few ratings an item's consensus
// follows its raters' latent values closely, m and the precisions are
// strongly coupled, and the collapsed moves mix much faster (an order of
// magnitude for two raters per item); with many, m is pinned by the
// ratings, the coupling is weak, and the cheaper moves given m suffice
// (the collapsed density costs a logarithm per item and evaluation).
const collapseRatingsPerItem = 4

// groupItems fills obsGrp, grpItem and grpCount.
func (md *ordModel) groupItems() {
	md.obsGrp = make([]int32, len(md.obsItem))
	md.grpItem = make([][]int32, md.nl)
	md.grpCount = make([][]float64, md.nl)
	raters := make([][]int32, md.n)
	for o, it := range md.obsItem {
		raters[it] = append(raters[it], md.obsRater[o])
	}
	keys := make([]string, md.n)
	for it, rs := range raters {
		keys[it] = fmt.Sprint(math.Float64bits(md.f.Lam[it]), rs)
	}
	for l := 0; l < md.nl; l++ {
		ids := map[string]int32{}
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			it := md.obsItem[o]
			g, ok := ids[keys[it]]
			if !ok {
				g = int32(len(md.grpItem[l]))
				ids[keys[it]] = g
				md.grpItem[l] = append(md.grpItem[l], it)
				md.grpCount[l] = append(md.grpCount[l], 0)
			}
			md.obsGrp[o] = g
			md.grpCount[l][g]++
		}
	}
}
