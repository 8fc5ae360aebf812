package ordinal

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"concord/multirater/gp"
	"concord/multirater/mcmc"
	"concord/multirater/numeric"
)

// This file holds one chain of the ordinal sampler and its moves.
//
// State: w (whitened latent consensus, m = G w, see gp.Factor), y (one
// latent value per observed rating), alpha (L precisions) and b (thresholds,
// stored per rater as b_l0 = -inf, b_l1, ..., b_l,K-1, b_lK = +inf). The
// target is the joint posterior of Rogers et al. eq. 22 with p(m|C) written in
// w:
//
//	log pi = -|w|^2/2 + sum_l [(v-1) log alpha_l - lambda alpha_l]
//	         - sum_lk b_lk^2 / (2 sigma_b^2)
//	         + sum_(n,l) [log alpha_l / 2 - alpha_l (y_nl - m_n)^2 / 2]
//	         + log 1(b_l,t-1 < y_nl <= b_l,t) + const,
//
// with parameters fixed by strong identifiability removed from the state.
//
// Every move of the default sampler is either an exact draw from a
// conditional distribution or a slice-sampling step (Neal 2003) on one, in
// some parametrisation of the state; each therefore leaves pi invariant.
// The group moves follow Liu & Sabatti (2000): for a group Γ of
// transformations x -> γ(x) of the state, drawing γ from
// p(γ) ∝ pi(γ(x)) |J_γ(x)| H(dγ), H the left Haar measure, and moving to
// γ(x) leaves pi invariant; so does any Markov step on γ that leaves p(γ)
// invariant started at the identity (the density of γ seen from γ0(x) is the
// right translate of the one seen from x, which for these groups changes the
// left Haar measure by a constant factor only).

// ordChain is one chain of Fit.
type ordChain struct {
	md  *ordModel
	rng *rand.Rand
	src *rand.PCG

	w, m, y  []float64
	alpha, b []float64
	// gw = G w. Without a diagonal correction (gp.Factor.Extra nil) it is
	// m itself; with one, m = gw + e, e the per-item part of the prior
	// (gp.NewPriorExtra), and sumE, dE the pseudo-observations of G w with
	// e integrated out (see stepM).
	gw, e, sumE, dE []float64
	sum, d          []float64 // per item: sum_l alpha_l y_nl and sum_l alpha_l
	open            *openScratch
	precDiag        []float64
	precBlockBuf    []float64
	s               []float64 // interval coordinates of y (threshold move)
	catStat         []catStats
	gs              *gp.Posterior
	h, g            []float64 // location move direction (whitened, item space)
	hh              float64
	locReady        bool
	affineWidth     []float64 // slice widths of the per-rater affine move
	affineAcc       []float64 // burn-in: sum |log rho|, count
	affineN         []int
	grpS            []float64 // per group of items (collapsed moves)
	alphaDen        alphaDensity
	affDen          affineCollapsedDensity
	alphaWidth      []float64 // slice widths of the collapsed precision step
	alphaAcc        []float64
	alphaN          []int

	// Kept draws, parameter-major: drawAlpha[l][i], drawB[l*(K-1)+j-1][i],
	// drawM[n][i/e] for the kept draws i that are multiples of
	// e = md.mStride() (all of them but for very many items).
	drawAlpha [][]float64
	drawB     [][]float64
	drawM     [][]float32

	// warm is set during the burn-in; blockAge counts the sweeps since the
	// block preconditioner was built (-1: never) and blockOK says it was.
	warm     bool
	blockAge int
	blockOK  bool

	// move statistics
	sweeps     int
	cgIters    int
	scaleSum   float64
	locSum     float64
	sliceEvals int
	slices     int
}

// catStats are the sufficient statistics of one level of one rater in
// interval coordinates s (see stepThresholds).
type catStats struct {
	n              float64
	s1, s2, sm, tm float64
}

func newOrdChain(md *ordModel, seed uint64, c, samples int) *ordChain {
	rng, src := mcmc.NewChainRand(seed, c)
	ch := &ordChain{
		md: md, rng: rng, src: src,
		w:     make([]float64, md.f.R),
		m:     make([]float64, md.n),
		y:     make([]float64, len(md.obsItem)),
		alpha: make([]float64, md.nl),
		b:     make([]float64, md.nl*(md.nk+1)),
		sum:   make([]float64, md.n),
		d:     make([]float64, md.n),

		s:  make([]float64, len(md.obsItem)),
		gs: gp.NewPosterior(md.f),

		catStat:     make([]catStats, md.nk),
		affineWidth: make([]float64, md.nl),
		affineAcc:   make([]float64, md.nl),
		affineN:     make([]int, md.nl),
		alphaWidth:  make([]float64, md.nl),
		alphaAcc:    make([]float64, md.nl),
		alphaN:      make([]int, md.nl),
		blockAge:    -1,
	}
	ch.gs.TolH = gp.CGTolH
	ch.gw = ch.m
	if md.f.Extra != nil {
		ch.gw = make([]float64, md.n)
		ch.e = make([]float64, md.n)
		ch.sumE = make([]float64, md.n)
		ch.dE = make([]float64, md.n)
	}
	if md.openMove {
		ch.open = newOpenScratch(md)
	}

	if md.collapse {
		g := 0
		for _, gi := range md.grpItem {
			g = max(g, len(gi))
		}
		ch.grpS = make([]float64, g)
	}
	if md.raterGsq != nil {
		ch.precDiag = make([]float64, md.f.R)
		ch.precBlockBuf = make([]float64, md.precBlock*md.precBlock)
	}
	if md.locationMove {
		ch.h = make([]float64, md.f.R)
		ch.g = make([]float64, md.n)
	}
	for l := range ch.affineWidth {
		ch.affineWidth[l] = 0.5
		ch.alphaWidth[l] = 0.5
	}
	ch.drawAlpha = make([][]float64, md.nl)
	for l := range ch.drawAlpha {
		ch.drawAlpha[l] = make([]float64, samples)
	}
	ch.drawB = make([][]float64, md.nl*(md.nk-1))
	for i := range ch.drawB {
		ch.drawB[i] = make([]float64, samples)
	}
	ch.drawM = make([][]float32, md.n)
	for i := range ch.drawM {
		ch.drawM[i] = make([]float32, md.mStored(samples))
	}
	ch.init()
	return ch
}

// init draws the starting state from the prior (Rogers et al. app. A.1
// step 1): w ~ N(0, I), alpha_l ~ Gamma(v, lambda), thresholds from their
// ordered normal prior; fixed parameters take their fixed values.
func (ch *ordChain) init() {
	md := ch.md
	for i := range ch.w {
		ch.w[i] = ch.rng.NormFloat64()
	}
	md.f.MulG(ch.gw, ch.w)
	if ch.e != nil {
		md.f.DrawExtraPriorTo(ch.rng, ch.e, ch.m, ch.gw)
	}
	for l := range ch.alpha {
		if md.alphaFixed(l) {
			ch.alpha[l] = 1
			continue
		}
		ch.alpha[l] = mcmc.StartPrecision(ch.gamma(md.v, md.lam))
	}
	k := md.nk
	tmp := make([]float64, k-1)
	for l := 0; l < md.nl; l++ {
		for j := range tmp {
			tmp[j] = md.sigB * ch.rng.NormFloat64()
			if l == md.ref {
				tmp[j] = math.Abs(tmp[j])
			}
		}
		if l == md.ref {
			tmp[0] = 0
		}
		sortFloats(tmp)
		ch.b[md.bIdx(l, 0)] = math.Inf(-1)
		for j := 1; j < k; j++ {
			ch.b[md.bIdx(l, j)] = tmp[j-1]
		}
		ch.b[md.bIdx(l, k)] = math.Inf(1)
	}
}

func sortFloats(x []float64) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && x[j] < x[j-1]; j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}

// gamma draws from Gamma(shape, rate).
func (ch *ordChain) gamma(shape, rate float64) float64 {
	return distuv.Gamma{Alpha: shape, Beta: rate, Src: ch.src}.Rand()
}

func (ch *ordChain) Monitored() [][]float64 { return ch.drawAlpha }

func (ch *ordChain) Record(i int) {
	md := ch.md
	for l := range ch.alpha {
		ch.drawAlpha[l][i] = ch.alpha[l]
		for j := 1; j < md.nk; j++ {
			ch.drawB[l*(md.nk-1)+j-1][i] = ch.b[md.bIdx(l, j)]
		}
	}
	if e := md.mStride(); i%e == 0 {
		for n, v := range ch.m {
			ch.drawM[n][i/e] = float32(v)
		}
	}
}

func (ch *ordChain) Sweep(warmup bool) error {
	ch.sweeps++
	ch.warm = warmup
	ch.stepY()
	if ch.md.sampler == mcmc.PaperSampler {
		if err := ch.stepM(); err != nil {
			return err
		}
		ch.stepAlpha()
		ch.stepThresholdsGibbs()
		return nil
	}
	ch.stepThresholds()
	if ch.md.collapse {
		// m integrated out: rater frames and precisions given y only, then
		// m given both.
		ch.stepRaterAffineCollapsed(warmup)
		ch.stepAlphaCollapsed(warmup)
	} else {
		ch.stepRaterAffine(warmup)
	}
	if err := ch.stepM(); err != nil {
		return err
	}
	if ch.md.openMove {
		ch.stepOpen()
	}
	if !ch.md.collapse {
		ch.stepAlpha()
	}
	ch.stepScale()
	if ch.md.locationMove {
		if !ch.locReady || (warmup && ch.sweeps%25 == 0) {
			if err := ch.updateLocationDirection(); err != nil {
				return err
			}
		}
		ch.stepLocation()
	}
	return nil
}

func (ch *ordChain) EndWarmup() {
	md := ch.md
	// Freeze the affine slice widths at 2.5 times the mean size of the
	// moves seen during the burn-in.
	for l := range ch.affineWidth {
		if ch.affineN[l] >= 20 {
			ch.affineWidth[l] = math.Min(2, math.Max(1e-3, 2.5*ch.affineAcc[l]/float64(ch.affineN[l])))
		}
		if ch.alphaN[l] >= 20 {
			ch.alphaWidth[l] = math.Min(2, math.Max(1e-3, 2.5*ch.alphaAcc[l]/float64(ch.alphaN[l])))
		}
	}
	if md.locationMove {
		// The direction is frozen from here on; recompute it once from the
		// current precisions. Errors are reported by the next sweep.
		_ = ch.updateLocationDirection()
	}
}

// stepY draws every y_nl from its truncated normal full conditional
// (Rogers et al. eq. 8, 24).
func (ch *ordChain) stepY() {
	md := ch.md
	for l := 0; l < md.nl; l++ {
		sd := 1 / math.Sqrt(ch.alpha[l])
		for c := 0; c < md.nk; c++ {
			lo, hi := ch.b[md.bIdx(l, c)], ch.b[md.bIdx(l, c+1)]
			a, e := md.catRange(l, c)
			for o := a; o < e; o++ {
				ch.y[o] = numeric.TruncNormal(ch.rng, ch.m[md.obsItem[o]], sd, lo, hi)
			}
		}
	}
}

// itemSums sets sum_n = sum_l alpha_l y_nl and d_n = sum_l alpha_l over the
// raters of item n (Rogers et al. eq. 19).
func (ch *ordChain) itemSums() {
	md := ch.md
	for i := range ch.sum {
		ch.sum[i] = 0
		ch.d[i] = 0
	}
	for l := 0; l < md.nl; l++ {
		a := ch.alpha[l]
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			n := md.obsItem[o]
			ch.sum[n] += a * ch.y[o]
			ch.d[n] += a
		}
	}
}

// stepM draws m from its Gaussian full conditional (Rogers et al. eq. 19,
// 27) through the prior factor, never inverting C.
//
// The chain keeps m = G w (every move that changes w changes m by G times
// the same amount), which saves the conjugate-gradient sampler two products
// with G (see drawTracked); every resyncEvery sweeps m is recomputed from w
// so that rounding cannot accumulate.
func (ch *ordChain) stepM() error {
	ch.itemSums()
	before := ch.gs.Stats.Iterations
	ch.setPrecDiag()
	if ch.sweeps%resyncEvery == 0 && !ch.md.f.Diag && !ch.md.complete {
		ch.gs.MulG(ch.gw, ch.w)
	}
	if ch.e == nil {
		err := ch.gs.DrawTracked(ch.rng, ch.w, ch.m, ch.sum, ch.d, ch.md.complete)
		ch.cgIters += ch.gs.Stats.Iterations - before
		return err
	}
	// m = G w + e: w is drawn with e integrated out, then e given w item
	// by item (gp.NewPriorExtra), an exact draw of the pair. With e_n ~
	// N(0, E_n), the pseudo-observation of m_n (precision d_n, weighted sum
	// s_n) is one of (G w)_n with precision d_n/(1 + d_n E_n) and weighted
	// sum s_n/(1 + d_n E_n).
	for i, s := range ch.sum {
		q := 1 / (1 + ch.d[i]*ch.md.f.Extra[i])
		ch.sumE[i] = s * q
		ch.dE[i] = ch.d[i] * q
	}
	err := ch.gs.DrawTracked(ch.rng, ch.w, ch.gw, ch.sumE, ch.dE, false)
	ch.cgIters += ch.gs.Stats.Iterations - before
	if err != nil {
		return err
	}
	ch.md.f.DrawExtraTo(ch.rng, ch.e, ch.m, ch.gw, ch.sum, ch.d)
	return nil
}

// resyncEvery is the interval in sweeps at which stepM recomputes m = G w.
const resyncEvery = 256

// setPrecDiag hands the preconditioner of the next conjugate gradient solve
// to the Gaussian sampler: the diagonal of H = I + G'DG, D the items'
// precision sums, from the per-rater sums of squares of G (O(L r), every
// sweep), and the exact leading block I + sum_l alpha_l raterBlock[l], whose
// assembly and factorisation cost O(L k^2 + k^3). The block is rebuilt only
// every precRefresh sweeps (every precRefreshWarmup during the burn-in, when
// the precisions travel far): a preconditioner only steers conjugate
// gradients, which converge to the same solution, to the same tolerance,
// whatever it is; a block a few sweeps old, from nearby precisions, costs
// them about half an iteration more. It is kept as its explicit inverse,
// applied by one matrix-vector product per iteration.
func (ch *ordChain) setPrecDiag() {
	md := ch.md
	if md.raterGsq == nil {
		return
	}
	p := ch.precDiag
	gp.SumSquares(p, md.raterGsq, ch.alpha)
	kb := md.precBlock
	if kb == 0 {
		ch.gs.SetPrecDiag(p)
		return
	}
	every := precRefresh
	if ch.warm {
		every = precRefreshWarmup
	}
	if md.n >= gp.ExtraFromItems {
		// Many items: the block costs as much as several solves
		// (O(k^3), k up to 256: a seventh of a sweep at 1,000 items with
		// the text kernel every 5 sweeps); the precisions, and with them
		// the best block, move little from sweep to sweep once there are
		// many ratings per rater.
		every *= precRefreshManyItems
	}
	if ch.blockAge < 0 || ch.blockAge >= every {
		ch.blockOK = ch.buildPrecBlock()
		ch.blockAge = 0
	}
	ch.blockAge++
	if !ch.blockOK {
		ch.gs.SetPrecDiag(p)
		return
	}
	ch.gs.SetPrecBlockInv(kb, ch.precBlockBuf, p)
}

// Block preconditioner refresh intervals, in sweeps.
const (
	precRefresh       = 25
	precRefreshWarmup = 5
	// precRefreshManyItems multiplies both from gp.ExtraFromItems items
	// (below, the draws stay those of earlier versions).
	precRefreshManyItems = 4
)

// buildPrecBlock sets precBlockBuf to the inverse of the leading block
// I + sum_l alpha_l raterBlock[l] (full, row-major) and reports whether the
// block was positive definite (it always is in exact arithmetic).
func (ch *ordChain) buildPrecBlock() bool {
	md := ch.md
	gp.SumBlocks(ch.precBlockBuf, md.precBlock, md.raterBlock, ch.alpha)
	return gp.InvertBlock(ch.precBlockBuf, md.precBlock)
}

// stepAlpha draws each free precision from its Gamma full conditional over
// the items the rater rated (Rogers et al. eq. 11, 30 with sec. 2.5).
func (ch *ordChain) stepAlpha() {
	md := ch.md
	for l := 0; l < md.nl; l++ {
		if md.alphaFixed(l) {
			continue
		}
		var ss float64
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			r := ch.y[o] - ch.m[md.obsItem[o]]
			ss += r * r
		}
		nl := float64(md.rStart[l+1] - md.rStart[l])
		ch.alpha[l] = mcmc.ClampPrecision(ch.gamma(md.v+nl/2, md.lam+ss/2))
	}
}

// stepAlphaCollapsed updates each free precision with the latent consensus
// integrated out, for a diagonal prior C = diag(c_n) (the identity kernel),
// where the items are independent a priori. Given y, item n's latent values
// are jointly normal, y_n ~ N(0, c_n 11' + diag(1/alpha_l)), so
//
//	log p(y_n | alpha) = sum_l [log alpha_l - alpha_l y_nl^2]/2
//	                     - log(1 + c_n A_n)/2 + c_n B_n^2 / (2 (1 + c_n A_n)),
//
// A_n = sum_l alpha_l and B_n = sum_l alpha_l y_nl over the item's raters
// (Sherman-Morrison). Each precision takes one slice-sampling step on
// log alpha_l under this collapsed conditional (with its Gamma(v, lambda)
// prior), and stepM then draws m given y and the new precisions exactly:
// together a collapsed Gibbs step for (alpha, m) given y. It frees the
// precisions from m, which with few ratings per item (two raters, say)
// couples to them so strongly that the Gamma draw given m barely moves them.
// Cost O(M) per density evaluation summed over raters, a few evaluations
// per rater.
func (ch *ordChain) stepAlphaCollapsed(warmup bool) {
	md := ch.md
	ch.itemSums() // sum = B_n, d = A_n
	for l := 0; l < md.nl; l++ {
		if md.alphaFixed(l) {
			continue
		}
		a0 := ch.alpha[l]
		d := &ch.alphaDen
		*d = alphaDensity{ch: ch, l: l, a0: a0}
		var syy float64
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			syy += ch.y[o] * ch.y[o]
		}
		d.shape = md.v + float64(md.rStart[l+1]-md.rStart[l])/2
		d.rate = md.lam + syy/2
		t0 := math.Log(a0)
		plo, phi := mcmc.LogPrecisionBounds()
		t, evals := mcmc.SliceSample(ch.rng, d, t0, ch.alphaWidth[l], plo, phi)
		ch.sliceEvals += evals
		ch.slices++
		if warmup {
			ch.alphaAcc[l] += math.Abs(t - t0)
			ch.alphaN[l]++
		}
		a := math.Exp(t)
		da := a - a0
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			n := md.obsItem[o]
			ch.d[n] += da
			ch.sum[n] += da * ch.y[o]
		}
		ch.alpha[l] = a
	}
}

// alphaDensity is the collapsed log density of t = log alpha_l in
// stepAlphaCollapsed, up to a constant.
type alphaDensity struct {
	ch          *ordChain
	l           int
	a0          float64
	shape, rate float64
}

func (d *alphaDensity) LogF(t float64) float64 {
	a := math.Exp(t)
	if a == 0 || math.IsInf(a, 1) {
		return math.Inf(-1)
	}
	ch := d.ch
	md := ch.md
	da := a - d.a0
	v := d.shape*t - d.rate*a
	// The determinant terms per group of items with the same raters.
	gs := ch.grpS
	for g, it := range md.grpItem[d.l] {
		c := md.f.Lam[it]
		den := 1 + c*(ch.d[it]+da)
		gs[g] = c / den
		v -= 0.5 * md.grpCount[d.l][g] * math.Log(den)
	}
	grp := md.obsGrp
	for o := md.rStart[d.l]; o < md.rStart[d.l+1]; o++ {
		bn := ch.sum[md.obsItem[o]] + da*ch.y[o]
		v += 0.5 * gs[grp[o]] * bn * bn
	}
	return v
}

// stepThresholdsGibbs draws each free threshold from its truncated normal
// full conditional between the largest latent value of the level below and
// the smallest of the level above (and the neighbouring thresholds)
// (Rogers et al. eq. 9, 33 and sec. 2.2).
func (ch *ordChain) stepThresholdsGibbs() {
	md := ch.md
	for l := 0; l < md.nl; l++ {
		for j := 1; j < md.nk; j++ {
			if md.bFixed(l, j) {
				continue
			}
			lo, hi := ch.b[md.bIdx(l, j-1)], ch.b[md.bIdx(l, j+1)]
			a, e := md.catRange(l, j-1)
			for o := a; o < e; o++ {
				lo = math.Max(lo, ch.y[o])
			}
			a, e = md.catRange(l, j)
			for o := a; o < e; o++ {
				hi = math.Min(hi, ch.y[o])
			}
			if lo < hi {
				ch.b[md.bIdx(l, j)] = numeric.TruncNormal(ch.rng, 0, md.sigB, lo, hi)
			}
		}
	}
}

// stepThresholds is the default sampler's threshold move. For rater l it
// re-expresses the latent values of each level c in interval coordinates
//
//	0 < c < K-1:  y = b_c + s (b_c+1 - b_c),  s in (0, 1), |dy/ds| = b_c+1 - b_c
//	c = 0:        y = b_1 - s,                s > 0
//	c = K-1:      y = b_K-1 + s,              s > 0
//
// and then, holding s fixed, draws each free threshold b_j from its full
// conditional in the (b, s) parametrisation: a Gibbs step in another
// parametrisation of the same posterior, so pi stays invariant. Moving b_j
// now stretches the latent values of levels j-1 and j with it instead of
// being confined between them. With SS_c(x) = sum (y - m)^2 over level c
// written as Q_c x^2 + 2 L_c x + const in x = b_j, the conditional is
//
//	log p(x) = -x^2/(2 sigma_b^2) - alpha_l (Q_j-1 + Q_j) x^2 / 2
//	           - alpha_l (L_j-1 + L_j) x
//	           + n_j-1 log(x - b_j-1) [level j-1 bounded]
//	           + n_j log(b_j+1 - x)   [level j bounded],   b_j-1 < x < b_j+1,
//
// where the logarithms are the Jacobians |dy/ds| of the bounded levels. It
// is log-concave and is sampled by one slice-sampling step with width
// 3/sqrt(quadratic curvature) (which does not depend on x). Finally y is
// recomputed from s and the new thresholds.
func (ch *ordChain) stepThresholds() {
	md := ch.md
	k := md.nk
	for l := 0; l < md.nl; l++ {
		alpha := ch.alpha[l]
		bl := ch.b[md.bIdx(l, 0) : md.bIdx(l, k)+1]
		// Interval coordinates and statistics.
		for c := 0; c < k; c++ {
			a, e := md.catRange(l, c)
			st := catStats{n: float64(e - a)}
			lo, hi := bl[c], bl[c+1]
			for o := a; o < e; o++ {
				yo, mo := ch.y[o], ch.m[md.obsItem[o]]
				var s float64
				switch {
				case c == 0:
					s = hi - yo
				case c == k-1:
					s = yo - lo
				default:
					s = (yo - lo) / (hi - lo)
				}
				ch.s[o] = s
				st.s1 += s
				st.s2 += s * s
				st.sm += s * mo
				st.tm += mo
			}
			ch.catStat[c] = st
		}
		for j := 1; j < k; j++ {
			if md.bFixed(l, j) {
				continue
			}
			den := thresholdDensity{lo: bl[j-1], hi: bl[j+1], a: md.invS2}
			// Level below, c = j-1.
			st := ch.catStat[j-1]
			var qlo, llo float64
			if j-1 == 0 {
				// y = x - s: SS = n x^2 - 2 x sum(s+m) + const.
				qlo, llo = st.n, -(st.s1 + st.tm)
			} else {
				// y = s x + (1-s) b_j-1.
				qlo = st.s2
				llo = bl[j-1]*(st.s1-st.s2) - st.sm
				den.nlo = st.n
			}
			// Level above, c = j.
			st = ch.catStat[j]
			var qhi, lhi float64
			if j == k-1 {
				// y = x + s: SS = n x^2 + 2 x sum(s-m) + const.
				qhi, lhi = st.n, st.s1-st.tm
			} else {
				// y = (1-s) x + s b_j+1.
				qhi = st.n - 2*st.s1 + st.s2
				lhi = bl[j+1]*(st.s1-st.s2) - (st.tm - st.sm)
				den.nhi = st.n
			}
			den.a += alpha * (qlo + qhi)
			den.beta = -alpha * (llo + lhi)
			w := 3 / math.Sqrt(den.a)
			if !math.IsInf(den.lo, 0) && !math.IsInf(den.hi, 0) {
				w = math.Min(w, den.hi-den.lo)
			}
			x, evals := mcmc.SliceSample(ch.rng, den, bl[j], w, den.lo, den.hi)
			ch.sliceEvals += evals
			ch.slices++
			bl[j] = x
		}
		// Back to y.
		for c := 0; c < k; c++ {
			a, e := md.catRange(l, c)
			lo, hi := bl[c], bl[c+1]
			for o := a; o < e; o++ {
				switch {
				case c == 0:
					ch.y[o] = hi - ch.s[o]
				case c == k-1:
					ch.y[o] = lo + ch.s[o]
				default:
					ch.y[o] = lo + ch.s[o]*(hi-lo)
				}
			}
		}
	}
}

// thresholdDensity is the log density of stepThresholds.
type thresholdDensity struct {
	lo, hi   float64
	a, beta  float64
	nlo, nhi float64
}

func (d thresholdDensity) LogF(x float64) float64 {
	if !(x > d.lo && x < d.hi) {
		return math.Inf(-1)
	}
	v := -0.5*d.a*x*x + d.beta*x
	if d.nlo > 0 {
		v += d.nlo * math.Log(x-d.lo)
	}
	if d.nhi > 0 {
		v += d.nhi * math.Log(d.hi-x)
	}
	return v
}

// stepRaterAffine is the per-rater affine move. For rater l with free
// precision and thresholds, the group of maps
//
//	y_nl -> a y_nl + c,  b_lk -> a b_lk + c,  alpha_l -> alpha_l / a^2   (a > 0)
//
// keeps every indicator 1(b_l,t-1 < y_nl <= b_lt) and changes only the
// rater's frame against m. Its Jacobian is a^(n_l + B_l - 2) (n_l ratings,
// B_l = K-1 thresholds) and its left Haar measure da dc / a^2. In
// rho = 1/a, u = c/a (Haar measure drho du / rho) the density of the move is
//
//	p(rho, u) ∝ rho^(2v - B_l - 1) exp(-alpha_l/2 sum_n (y_nl + u - rho m_n)^2
//	            - sum_k (b_lk + u)^2 / (2 sigma_b^2 rho^2) - lambda alpha_l rho^2),
//
// Gaussian in u given rho. The move integrates u out, takes one slice step
// on t = log rho from t = 0 (the identity), draws u given rho and applies
// y <- (y + u)/rho, b <- (b + u)/rho, alpha <- alpha rho^2.
func (ch *ordChain) stepRaterAffine(warmup bool) {
	md := ch.md
	k := md.nk
	for l := 0; l < md.nl; l++ {
		if l == md.ref {
			continue
		}
		alpha := ch.alpha[l]
		var d affineDensity
		d.alpha = alpha
		d.lam = md.lam
		d.invS2 = md.invS2
		d.pow = 2*md.v - float64(k-1)
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			yo, mo := ch.y[o], ch.m[md.obsItem[o]]
			d.n++
			d.sy += yo
			d.sm += mo
			d.sym += yo * mo
			d.smm += mo * mo
		}
		d.g1, d.g2, d.ng = ch.thresholdSums(l)
		rho := math.Exp(affineSlice(ch, l, d, warmup))
		p, q := d.pq(rho)
		u := -q/p + ch.rng.NormFloat64()/math.Sqrt(p)
		inv := 1 / rho
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			ch.y[o] = (ch.y[o] + u) * inv
		}
		for j := 1; j < k; j++ {
			i := md.bIdx(l, j)
			ch.b[i] = (ch.b[i] + u) * inv
		}
		ch.alpha[l] = alpha * rho * rho
	}
}

// thresholdSums returns the sum and the sum of squares of rater l's free
// thresholds b_l1..b_l,K-1 and their number (the affine moves' densities).
func (ch *ordChain) thresholdSums(l int) (g1, g2, ng float64) {
	md := ch.md
	for j := 1; j < md.nk; j++ {
		bj := ch.b[md.bIdx(l, j)]
		g1 += bj
		g2 += bj * bj
		ng++
	}
	return g1, g2, ng
}

// affineSlice takes the affine move's slice step of t = log rho from 0 for
// rater l (width affineWidth[l], within the precision's bounds), counts it
// and, during warm-up, records |t| for the width's adaptation.
func affineSlice[D mcmc.LogDensity](ch *ordChain, l int, d D, warmup bool) float64 {
	slo, shi := mcmc.ScaleBounds(2, ch.alpha[l])
	t, evals := mcmc.SliceSample(ch.rng, d, 0, ch.affineWidth[l], slo, shi)
	ch.sliceEvals += evals
	ch.slices++
	if warmup {
		ch.affineAcc[l] += math.Abs(t)
		ch.affineN[l]++
	}
	return t
}

// stepRaterAffineCollapsed is stepRaterAffine with the latent consensus
// integrated out, for a diagonal prior C = diag(c_n). Item n's latent values
// are then jointly normal given the precisions (see stepAlphaCollapsed), and
// under the same affine group (y_l, b_l) -> (a y_l + c, a b_l + c),
// alpha_l -> alpha_l / a^2, with rho = 1/a, u = c/a,
//
//	log p(rho, u) = (2v - B_l - 1) log rho - lambda alpha_l rho^2
//	                - sum_k (b_lk + u)^2 / (2 sigma_b^2 rho^2)
//	                + sum_n [-alpha_l (y_nl + u)^2 / 2 + log s_n / 2
//	                         + c_n s_n (B_n' + alpha_l rho (y_nl + u))^2 / 2],
//
// s_n = 1/(1 + c_n (A_n' + alpha_l rho^2)), A_n' and B_n' the sums
// sum alpha y and sum alpha over item n's other raters. It is Gaussian in u
// given rho, so u is integrated out, t = log rho takes one slice step from 0
// and u is drawn given rho. m is stale afterwards and is redrawn by stepM.
// Cost O(n_l) per density evaluation.
func (ch *ordChain) stepRaterAffineCollapsed(warmup bool) {
	md := ch.md
	k := md.nk
	ch.itemSums() // sum = B_n, d = A_n
	for l := 0; l < md.nl; l++ {
		if l == md.ref {
			continue
		}
		alpha := ch.alpha[l]
		d := &ch.affDen
		*d = affineCollapsedDensity{ch: ch, l: l, alpha: alpha, lam: md.lam, invS2: md.invS2, pow: 2*md.v - float64(k-1)}
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			d.n++
			d.sy += ch.y[o]
			d.syy += ch.y[o] * ch.y[o]
		}
		d.g1, d.g2, d.ng = ch.thresholdSums(l)
		rho := math.Exp(affineSlice(ch, l, d, warmup))
		p, q, _ := d.pqr(rho)
		u := -q/p + ch.rng.NormFloat64()/math.Sqrt(p)
		inv := 1 / rho
		a2 := alpha * rho * rho
		for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
			n := md.obsItem[o]
			yn := (ch.y[o] + u) * inv
			ch.d[n] += a2 - alpha
			ch.sum[n] += a2*yn - alpha*ch.y[o]
			ch.y[o] = yn
		}
		for j := 1; j < k; j++ {
			i := md.bIdx(l, j)
			ch.b[i] = (ch.b[i] + u) * inv
		}
		ch.alpha[l] = a2
	}
}

// affineCollapsedDensity is the log density of t = log rho in
// stepRaterAffineCollapsed, with u integrated out.
type affineCollapsedDensity struct {
	ch                *ordChain
	l                 int
	alpha, lam, invS2 float64
	pow               float64
	n, sy, syy        float64
	g1, g2, ng        float64
}

// pqr returns the precision P and linear coefficient Q of u given rho (the
// u-dependent part of log p is -P u^2/2 - Q u) and the rest R.
func (d *affineCollapsedDensity) pqr(rho float64) (p, q, r float64) {
	ch := d.ch
	md := ch.md
	a := d.alpha
	r2 := rho * rho
	var scs, sq, rr float64
	// c s per group of items with the same raters, and the determinant
	// terms.
	gs := ch.grpS
	for g, it := range md.grpItem[d.l] {
		c := md.f.Lam[it]
		s := 1 / (1 + c*(ch.d[it]-a+a*r2))
		gs[g] = c * s
		cnt := md.grpCount[d.l][g]
		scs += cnt * c * s
		rr += 0.5 * cnt * math.Log(s)
	}
	grp := md.obsGrp
	for o := md.rStart[d.l]; o < md.rStart[d.l+1]; o++ {
		y := ch.y[o]
		cs := gs[grp[o]]
		e := ch.sum[md.obsItem[o]] - a*y + a*rho*y // B_n' + alpha rho y
		sq += cs * e
		rr += 0.5 * cs * e * e
	}
	p = a*d.n - a*a*r2*scs + d.ng*d.invS2/r2
	q = a*d.sy - a*rho*sq + d.g1*d.invS2/r2
	r = rr - 0.5*a*d.syy - d.lam*a*r2 - 0.5*d.g2*d.invS2/r2
	return p, q, r
}

func (d *affineCollapsedDensity) LogF(t float64) float64 {
	rho := math.Exp(t)
	if rho == 0 || math.IsInf(rho, 1) {
		return math.Inf(-1)
	}
	p, q, r := d.pqr(rho)
	if !(p > 0) {
		return math.Inf(-1)
	}
	return d.pow*t - 0.5*math.Log(p) + 0.5*q*q/p + r
}

// affineDensity is the log density of t = log rho in stepRaterAffine, with
// u integrated out.
type affineDensity struct {
	alpha, lam, invS2, pow float64
	n, sy, sm, sym, smm    float64
	g1, g2, ng             float64
}

// pq returns the precision P and the linear coefficient Q of u given rho:
// the u-dependent part of log p is -P u^2/2 - Q u.
func (d affineDensity) pq(rho float64) (p, q float64) {
	r2 := rho * rho
	p = d.alpha*d.n + d.ng*d.invS2/r2
	q = d.alpha*(d.sy-rho*d.sm) + d.g1*d.invS2/r2
	return p, q
}

func (d affineDensity) LogF(t float64) float64 {
	rho := math.Exp(t)
	if rho == 0 || math.IsInf(rho, 1) {
		return math.Inf(-1)
	}
	r2 := rho * rho
	p, q := d.pq(rho)
	r := d.alpha*rho*d.sym - 0.5*d.alpha*r2*d.smm - 0.5*d.g2*d.invS2/r2 - d.lam*d.alpha*r2
	return d.pow*t - 0.5*math.Log(p) + 0.5*q*q/p + r
}

// stepScale is the global scale move (parameter expansion, Liu & Wu 1999):
// the group of maps
//
//	w -> a w (so m -> a m), y -> a y, b -> a b, alpha -> alpha / a^2   (a > 0)
//
// over the free parameters keeps every indicator (a fixed threshold is 0 and
// stays 0). Its Jacobian is a^(r + M + B - 2 L_f) (r = dim w, M ratings, B
// free thresholds, L_f free precisions) and the Haar measure da/a. The
// ratings of free-precision raters contribute a^-1 each through their
// normalising constants; those of a fixed-precision rater contribute
// exp(-a^2 alpha SS / 2) instead. In t = log a the density is
//
//	log p(t) = P0 t - S e^(2t)/2 - lambda A e^(-2t),
//	P0 = r + M_fixed + B - 2 v L_f,
//	S  = |w|^2 + sum_free b^2 / sigma_b^2 + sum_fixed-alpha alpha_l SS_l,
//	A  = sum_free alpha_l,
//
// (a generalised inverse Gaussian in a^2), log-concave with mode
// e^(2t*) = (P0 + sqrt(P0^2 + 8 lambda A S)) / (2S). One slice step from t = 0
// with width 3/sqrt(curvature at the mode), which is the same for every point
// of the orbit, moves the whole state along it.
func (ch *ordChain) stepScale() {
	md := ch.md
	var d mcmc.ScaleDensity
	for _, v := range ch.w {
		d.S += v * v
	}
	if ch.e != nil {
		d.S += md.f.ExtraQuad(ch.e)
	}
	var sb float64
	for l := 0; l < md.nl; l++ {
		for j := 1; j < md.nk; j++ {
			if !md.bFixed(l, j) {
				v := ch.b[md.bIdx(l, j)]
				sb += v * v
			}
		}
		if md.alphaFixed(l) {
			var ss float64
			for o := md.rStart[l]; o < md.rStart[l+1]; o++ {
				r := ch.y[o] - ch.m[md.obsItem[o]]
				ss += r * r
			}
			d.S += ch.alpha[l] * ss
		} else {
			d.La += ch.alpha[l]
		}
	}
	d.S += sb * md.invS2
	d.La *= md.lam
	d.P0 = float64(md.f.R+md.extraDims+md.mFixed+md.nFreeB) - 2*md.v*float64(md.nFreeAlpha)
	if !(d.S > 0) {
		return
	}
	z := (d.P0 + math.Sqrt(d.P0*d.P0+8*d.La*d.S)) / (2 * d.S)
	curv := 2*d.S*z + 4*d.La/z
	var free []float64
	for l, a := range ch.alpha {
		if !md.alphaFixed(l) {
			free = append(free, a)
		}
	}
	slo, shi := mcmc.ScaleBounds(-2, free...)
	t, evals := mcmc.SliceSample(ch.rng, d, 0, 3/math.Sqrt(curv), slo, shi)
	ch.sliceEvals += evals
	ch.slices++
	ch.scaleSum += math.Abs(t)
	a := math.Exp(t)
	ia2 := 1 / (a * a)
	for i := range ch.w {
		ch.w[i] *= a
	}
	for i := range ch.m {
		ch.m[i] *= a
	}
	if ch.e != nil {
		for i := range ch.e {
			ch.e[i] *= a
			ch.gw[i] *= a
		}
	}
	for i := range ch.y {
		ch.y[i] *= a
	}
	for l := 0; l < md.nl; l++ {
		for j := 1; j < md.nk; j++ {
			if !md.bFixed(l, j) {
				ch.b[md.bIdx(l, j)] *= a
			}
		}
		if !md.alphaFixed(l) {
			ch.alpha[l] *= ia2
		}
	}
}

// updateLocationDirection sets the direction of the location move: h, the
// whitened shift, is chosen so that m moves by g = G h, as close to a
// uniform shift 1 as the prior allows: h = (I + G' D G)^{-1} G' D 1 with D
// the items' current precision sums (the ridge regression of 1 on G). It
// depends only on the precisions, which the location move does not change,
// and is frozen after the burn-in.
func (ch *ordChain) updateLocationDirection() error {
	md := ch.md
	f := md.f
	ch.itemSums()
	switch {
	case f.Diag:
		for i, sd := range f.SD {
			ch.h[i] = sd * ch.d[i] / (1 + sd*sd*ch.d[i])
		}
	case md.complete:
		a := ch.d[0]
		for k, l := range f.Lam {
			ch.h[k] = a * f.OneProj[k] / (1 + a*l)
		}
	default:
		f.MulGT(ch.gs.RHS, ch.d)
		for k := range ch.h {
			ch.h[k] = 0
		}
		ch.setPrecDiag()
		if err := ch.gs.Solve(ch.h, ch.d); err != nil {
			return err
		}
	}
	f.MulG(ch.g, ch.h)
	ch.hh = numeric.Dot(ch.h, ch.h)
	ch.locReady = true
	return nil
}

// stepLocation is the location move (Weak identifiability only): the group
// of translations
//
//	w -> w + c h (so m -> m + c g), y -> y + c, b -> b + c,   c real,
//
// keeps every indicator and has unit Jacobian and Lebesgue Haar measure.
// With e = y - m and delta_n = 1 - g_n the density of c is Gaussian:
//
//	log p(c) = -|w + c h|^2/2 - sum_(n,l) alpha_l (e_nl + c delta_n)^2 / 2
//	           - sum_lk (b_lk + c)^2 / (2 sigma_b^2),
//
// so c is drawn exactly.
func (ch *ordChain) stepLocation() {
	md := ch.md
	ch.itemSums()
	prec := ch.hh + float64(md.nFreeB)*md.invS2
	lin := numeric.Dot(ch.w, ch.h)
	for n := range ch.m {
		dl := 1 - ch.g[n]
		prec += ch.d[n] * dl * dl
		lin += dl * (ch.sum[n] - ch.d[n]*ch.m[n])
	}
	var sb float64
	for l := 0; l < md.nl; l++ {
		for j := 1; j < md.nk; j++ {
			sb += ch.b[md.bIdx(l, j)]
		}
	}
	lin += sb * md.invS2
	c := -lin/prec + ch.rng.NormFloat64()/math.Sqrt(prec)
	ch.locSum += math.Abs(c)
	for i := range ch.w {
		ch.w[i] += c * ch.h[i]
	}
	for i := range ch.m {
		ch.m[i] += c * ch.g[i]
	}
	if ch.e != nil {
		for i := range ch.gw {
			ch.gw[i] += c * ch.g[i]
		}
	}
	for i := range ch.y {
		ch.y[i] += c
	}
	for l := 0; l < md.nl; l++ {
		for j := 1; j < md.nk; j++ {
			ch.b[md.bIdx(l, j)] += c
		}
	}
}
