package classify

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/stat/distuv"

	"concord/multirater/gp"
	"concord/multirater/mcmc"
	"concord/multirater/numeric"
)

// This file holds one chain of the classification sampler and its moves.
//
// State: W (K×r, the whitened latent functions, M_.k = G W_k, see
// gp.Factor), the latent vectors Y_v (K components each, one per label or,
// under appendix B, one per (item, class)) and the precisions alpha. The
// target is the joint posterior of Rogers et al. eq. 34 with p(M|C) written
// in W:
//
//	log pi = -sum_k |W_k|^2/2 + sum_l [(v-1) log alpha_l - lambda alpha_l]
//	         + sum_v [K/2 log a_v - a_v |Y_v - M_n(v).|^2 / 2]
//	         + log 1(y_v,t(v) > y_v,i for all i != t(v)) + const,
//
// where a_v is the precision of vector v: alpha_l of its rater, or eta_nk
// (the number of labels it stands for) under appendix B with alpha = 1
// (eq. 45). Parameters fixed at 1 are removed from the state.
//
// Each move is an exact draw from a conditional distribution in some
// parametrisation of the state, or a slice-sampling step on one, so each
// leaves pi invariant (the group moves follow Liu & Sabatti 2000, as in the
// ordinal sampler).

// classPlan fixes what the chains record: the monitored class-centred
// latent values (thinned so that at most maxMonitorNumbers are stored over
// all chains) and the joint draws kept for the predictive distributions.
type classPlan struct {
	samples int
	// nMon monitored series: M_nk - mean_j M_nj for every item and class
	// (K > 2) or for the second class only (K = 2); recorded every
	// monEvery-th kept draw, nMonDraws per chain.
	nMon, monEvery, nMonDraws int
	// keep lists the (chain, draw) pairs kept for prediction; slot[c][i]
	// is the position of draw i of chain c in keep, or -1.
	keep [][2]int
	slot [][]int32
}

// Bounds on what a classification fit stores.
const (
	// maxMonitorNumbers bounds the stored monitored latent values over all
	// chains (float32: 64 MB).
	maxMonitorNumbers = 1 << 24
	// maxKeptLatent bounds the latent values kept for prediction over all
	// kept draws (float32: 32 MB).
	maxKeptLatent = 1 << 23
	// predictWork bounds the work of the predictive distributions, in
	// normal distribution function evaluations; fewer draws are used when
	// the classes are many (never fewer than minPredictDraws).
	predictWork     = 4e8
	minPredictDraws = 20
	// maxRaterPairs: each rater's predictive distribution is reported for
	// every item when N·L·K is at most this, else for the items the rater
	// labelled (which keeps the document small for crowdsourced data with
	// many raters).
	maxRaterPairs = 100_000
)

func newClassPlan(md *classModel, opts Options) *classPlan {
	mc := opts.Settings
	p := &classPlan{samples: mc.Samples}
	p.nMon = md.n * md.nk
	if md.nk == 2 {
		p.nMon = md.n
	}
	total := int64(p.nMon) * int64(mc.Samples) * int64(mc.Chains)
	p.monEvery = int((total + maxMonitorNumbers - 1) / maxMonitorNumbers)
	p.monEvery = max(p.monEvery, 1)
	p.nMonDraws = (mc.Samples + p.monEvery - 1) / p.monEvery
	// Kept draws: at most KeepDraws, within the memory and work bounds,
	// at least minPredictDraws.
	nk := md.nk
	want := opts.KeepDraws
	want = min(want, max(minPredictDraws, maxKeptLatent/(md.n*nk)))
	work := float64(md.n) * float64(1+predictRaterPairs(md)/md.n)
	if nk > 2 {
		work *= float64(nk) * float64(nk-1) * float64(opts.Quadrature)
	}
	want = min(want, max(minPredictDraws, int(predictWork/work)))
	p.keep = mcmc.PickDraws(mc.Chains, mc.Samples, want)
	p.slot = make([][]int32, mc.Chains)
	for c := range p.slot {
		s := make([]int32, mc.Samples)
		for i := range s {
			s[i] = -1
		}
		p.slot[c] = s
	}
	for i, cd := range p.keep {
		p.slot[cd[0]][cd[1]] = int32(i)
	}
	return p
}

// predictRaterPairs returns the number of (item, rater) predictive
// distributions computed: every pair when N·L·K <= maxRaterPairs, else the
// labelled pairs.
func predictRaterPairs(md *classModel) int {
	if md.n*md.nl*md.nk <= maxRaterPairs {
		return md.n * md.nl
	}
	s := 0
	for _, c := range md.raterCount {
		s += c
	}
	return s
}

// classChain is one chain of Fit.
type classChain struct {
	md   *classModel
	plan *classPlan
	c    int
	rng  *rand.Rand
	src  *rand.PCG

	w     []float64 // K×r, class-major
	m     []float64 // N×K, item-major
	y     []float64 // vectors × K
	alpha []float64
	s     []float64 // K×N, class-major: sum over item n's vectors of a_v y_v,k
	d     []float64 // N: sum of a_v
	rhs   []float64 // K×r (complete, non-diagonal)
	mcol  []float64 // N (conjugate gradients)
	// With a diagonal correction of the prior (gp.Factor.Extra), M_.k =
	// G W_k + e_k: e holds e_k (K×N, class-major), sE and dE the
	// pseudo-observations of G W_k with e_k integrated out (see stepM),
	// and mtmp is scratch (N).
	e, sE, dE, mtmp []float64
	u, du           []float64 // shift move: r, N
	// md.pairM's state and scratch (see stepMPair): W_- and W_+ (2r),
	// M_- and M_+ (2N), e_- and e_+ (2N, with a diagonal correction); the
	// first halves are the chain's state, and w, m and e hold a full
	// draw only when plusDrawn (pairPlus).
	pw, pm, pe []float64
	plusDrawn  bool
	// gwd is G W_- (stepMPair, md.trackGW), kept along the
	// conjugate-gradient iterations and the scale move and recomputed
	// every pairResyncEvery sweeps (and at the first), so that the
	// sampler's draw needs 1 + 2k products with G for k iterations
	// instead of 4 + 2k (gp.Posterior.DrawTracked).
	gwd []float64
	gs  *gp.Posterior
	// preconditioner scratch (incomplete, non-diagonal, inferred
	// precisions)
	precDiag, precBlockBuf []float64
	blockOK                bool
	// gsqW and blockW replace md.raterGsq and md.raterBlock once
	// weightPreconditioner has weighted them for a diagonal correction.
	gsqW, blockW [][]float64
	// blockAge counts the sweeps since the block was built (-1: never).
	blockAge int
	gapBuf   []float64
	// Slice widths of the collapsed moves (K = 2), per item and per rater,
	// tuned during the burn-in to 2.5 times the mean size of the moves
	// (accumulated in the *Acc slices) and frozen after it.
	itemWidth, itemAcc   []float64
	raterWidth, raterAcc []float64
	warm                 bool
	warmSweeps           int

	// Kept draws: drawAlpha[l][i]; mon[p][j] (monitored, thinned);
	// keptM[slot] (N×K) and keptAlpha[slot] for the kept joint draws; top
	// counts, over every kept draw, the draws in which class k has the
	// largest latent value of item n (top[n*K+k]).
	drawAlpha [][]float64
	mon       [][]float32
	keptM     [][]float32
	keptAlpha [][]float64
	top       []int32

	// move statistics
	sweeps, cgIters, slices, sliceEvals int
	scaleSum, shiftSum, raterScaleSum   float64
}

func newClassChain(md *classModel, plan *classPlan, seed uint64, c int) *classChain {
	rng, src := mcmc.NewChainRand(seed, c)
	k, n, r := md.nk, md.n, md.f.R
	ch := &classChain{
		md: md, plan: plan, c: c, rng: rng, src: src,
		w:     make([]float64, k*r),
		m:     make([]float64, n*k),
		y:     make([]float64, len(md.vecItem)*k),
		alpha: make([]float64, md.nl),
		s:     make([]float64, k*n),
		d:     make([]float64, n),
		mcol:  make([]float64, n),
		u:     make([]float64, r),
		du:    make([]float64, n),
		gs:    gp.NewPosterior(md.f),
		top:   make([]int32, n*k),

		blockAge: -1,
	}
	if md.gt != nil {
		ch.rhs = make([]float64, k*r)
	}
	if n >= gp.ExtraFromItems {
		// Many items: conjugate gradients stop at the ordinal sampler's
		// error of 1e-4 posterior standard deviations (gp.Posterior.TolH,
		// which says why that leaves the draws' distribution as it is to
		// far below Monte Carlo error) instead of a relative residual of
		// 1e-8, which took 16 iterations a sweep for K = 2 at 1,000 items
		// with the text kernel; below, the draws stay those of earlier
		// versions.
		ch.gs.TolH = gp.CGTolH
	}
	if md.pairM {
		ch.pw = make([]float64, 2*r)
		ch.pm = make([]float64, 2*n)
		if md.trackGW {
			ch.gwd = make([]float64, n)
		}
		if md.f.Extra != nil {
			ch.pe = make([]float64, 2*n)
		}
	}
	if md.f.Extra != nil {
		ch.e = make([]float64, k*n)
		ch.sE = make([]float64, k*n)
		ch.dE = make([]float64, n)
		ch.mtmp = make([]float64, n)
	}
	if k == 2 {
		mx := 0
		for _, c := range md.raterCount {
			mx = max(mx, c)
		}
		for i := 0; i < n; i++ {
			mx = max(mx, md.itemStart[i+1]-md.itemStart[i])
		}
		ch.gapBuf = make([]float64, 0, mx)
		ch.itemWidth = make([]float64, n)
		ch.itemAcc = make([]float64, n)
		for i := range ch.itemWidth {
			ch.itemWidth[i] = 2.5
		}
		ch.raterWidth = make([]float64, md.nl)
		ch.raterAcc = make([]float64, md.nl)
		for l := range ch.raterWidth {
			ch.raterWidth[l] = 3 / math.Sqrt(1+float64(md.raterCount[l])/4)
		}
	}
	if md.raterGsq != nil {
		ch.precDiag = make([]float64, r)
		ch.precBlockBuf = make([]float64, md.precBlock*md.precBlock)
	}
	ch.drawAlpha = make([][]float64, md.nl)
	for l := range ch.drawAlpha {
		ch.drawAlpha[l] = make([]float64, plan.samples)
	}
	ch.mon = make([][]float32, plan.nMon)
	for p := range ch.mon {
		ch.mon[p] = make([]float32, plan.nMonDraws)
	}
	nKeep := 0
	for _, cd := range plan.keep {
		if cd[0] == c {
			nKeep++
		}
	}
	// keptM and keptAlpha are indexed by the global slot; only this
	// chain's slots are allocated.
	ch.keptM = make([][]float32, len(plan.keep))
	ch.keptAlpha = make([][]float64, len(plan.keep))
	for i, cd := range plan.keep {
		if cd[0] == c {
			ch.keptM[i] = make([]float32, n*k)
			ch.keptAlpha[i] = make([]float64, md.nl)
		}
	}
	ch.init()
	if md.pairM {
		ch.splitPair()
	}
	return ch
}

// init draws the starting state (Rogers et al. app. A.2 step 1): W from the
// prior N(0, I) (M from N(0, C)), each free alpha_l from Gamma(v, lambda),
// and every latent vector from N(M_n., I/a_v) moved into its constraint set
// (the labelled component raised above the others).
func (ch *classChain) init() {
	md := ch.md
	k := md.nk
	for i := range ch.w {
		ch.w[i] = ch.rng.NormFloat64()
	}
	ch.updateM()
	if ch.e != nil {
		n := md.n
		for c := 0; c < k; c++ {
			for i := 0; i < n; i++ {
				ch.mtmp[i] = ch.m[i*k+c]
			}
			ec := ch.e[c*n : (c+1)*n]
			md.f.DrawExtraPriorTo(ch.rng, ec, ch.mtmp, ch.mtmp)
			for i, v := range ch.mtmp {
				ch.m[i*k+c] = v
			}
		}
	}
	for l := range ch.alpha {
		if md.fixedAlpha[l] {
			ch.alpha[l] = 1
			continue
		}
		ch.alpha[l] = mcmc.StartPrecision(ch.gamma(md.v, md.lam))
	}
	for v := range md.vecItem {
		sd := 1 / math.Sqrt(ch.prec(v))
		mr, yv := ch.vector(v)
		t := int(md.vecClass[v])
		mx := math.Inf(-1)
		for i := range yv {
			yv[i] = mr[i] + sd*ch.rng.NormFloat64()
			if i != t {
				mx = math.Max(mx, yv[i])
			}
		}
		if yv[t] <= mx {
			yv[t] = mx + sd*math.Abs(ch.rng.NormFloat64()) + 1e-12*(1+math.Abs(mx))
		}
	}
}

// updateM sets M = G W for every class.
func (ch *classChain) updateM() {
	md := ch.md
	f := md.f
	k, n, r := md.nk, md.n, f.R
	if f.Diag {
		for i, sd := range f.SD {
			for c := 0; c < k; c++ {
				ch.m[i*k+c] = sd * ch.w[c*r+i]
			}
		}
		return
	}
	for i := 0; i < n; i++ {
		gi := blas64.Vector{N: r, Inc: 1, Data: f.G[i*r : (i+1)*r]}
		for c := 0; c < k; c++ {
			ch.m[i*k+c] = blas64.Dot(gi, blas64.Vector{N: r, Inc: 1, Data: ch.w[c*r : (c+1)*r]})
		}
	}
}

// prec returns the precision a_v of latent vector v.
func (ch *classChain) prec(v int) float64 {
	if ch.md.shared {
		return ch.md.vecEta[v]
	}
	return ch.alpha[ch.md.vecRater[v]]
}

func (ch *classChain) gamma(shape, rate float64) float64 {
	return distuv.Gamma{Alpha: shape, Beta: rate, Src: ch.src}.Rand()
}

// monitored returns the precision series for the live R-hat (nil when all
// precisions are fixed).
func (ch *classChain) Monitored() [][]float64 {
	if ch.md.nFreeAlpha == 0 {
		return nil
	}
	return ch.drawAlpha
}

func (ch *classChain) Record(i int) {
	md := ch.md
	for l, a := range ch.alpha {
		ch.drawAlpha[l][i] = a
	}
	if md.pairM {
		ch.recordPair(i)
	} else {
		ch.recordM(i)
	}
	if s := ch.plan.slot[ch.c][i]; s >= 0 {
		if md.pairM {
			ch.pairPlus()
		}
		dst := ch.keptM[s]
		for j, v := range ch.m {
			dst[j] = float32(v)
		}
		copy(ch.keptAlpha[s], ch.alpha)
	}
}

// recordPair is recordM for md.pairM, from M_- = (M_0 - M_1)/sqrt2 (the
// second class's centred value is -M_-/sqrt2; it is the top class when
// M_- < 0).
func (ch *classChain) recordPair(i int) {
	md := ch.md
	md0 := ch.pm[:md.n]
	if i%ch.plan.monEvery == 0 {
		j := i / ch.plan.monEvery
		for n, v := range md0 {
			ch.mon[n][j] = float32(-v / math.Sqrt2)
		}
	}
	for n, v := range md0 {
		if v < 0 {
			ch.top[2*n+1]++
		} else {
			ch.top[2*n]++
		}
	}
}

// recordM records the monitored latent values of draw i and counts each
// item's top class.
func (ch *classChain) recordM(i int) {
	md := ch.md
	k := md.nk
	if i%ch.plan.monEvery == 0 {
		j := i / ch.plan.monEvery
		for n := 0; n < md.n; n++ {
			row := ch.m[n*k : (n+1)*k]
			var mean float64
			for _, v := range row {
				mean += v
			}
			mean /= float64(k)
			if k == 2 {
				ch.mon[n][j] = float32(row[1] - mean)
				continue
			}
			for c, v := range row {
				ch.mon[n*k+c][j] = float32(v - mean)
			}
		}
	}
	for n := 0; n < md.n; n++ {
		row := ch.m[n*k : (n+1)*k]
		best := 0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
		}
		ch.top[n*k+best]++
	}
}

func (ch *classChain) EndWarmup() {
	if ch.warmSweeps < 20 {
		return
	}
	tune := func(w, acc []float64) {
		for i, a := range acc {
			if a > 0 {
				w[i] = math.Min(5, math.Max(0.02, 2.5*a/float64(ch.warmSweeps)))
			}
		}
	}
	tune(ch.itemWidth, ch.itemAcc)
	tune(ch.raterWidth, ch.raterAcc)
	ch.weightPreconditioner()
}

// weightAfter is the burn-in sweep at which weightPreconditioner first
// weights the preconditioner (again at the end of the burn-in), when the
// precisions have left their starting values.
const weightAfter = 100

// weightPreconditioner rebuilds, with a diagonal correction of the prior
// (gp.Factor.Extra), the per-rater parts of the conjugate-gradient
// preconditioner with each label weighted by its item's q_n = 1/(1 + d_n
// Extra_n) at the current precisions (d_n = sum of the precisions of
// item n's raters). The matrix solved is then H = I + G' diag(d q) G (the
// pseudo-observations of G W with e integrated out, see stepM), which the
// unweighted parts (md.raterGsq, md.raterBlock: q = 1) overstate where
// the correction is large (a third of the prior variance at 16,000 ladder
// items with the text kernel); with q fixed at its value here the parts
// are exact at the precisions they were weighted at, with an error of
// first order in the precisions' later change. It is called at most
// twice, after weightAfter burn-in sweeps and at the end of a burn-in of
// 20 sweeps or more: O(M k^2) for M labels and the block size k. A preconditioner only steers conjugate
// gradients, which stop at the same tolerance whatever it is.
func (ch *classChain) weightPreconditioner() {
	md := ch.md
	f := md.f
	if md.raterGsq == nil || f.Extra == nil {
		return
	}
	r, kb := f.R, md.precBlock
	d := ch.mtmp
	clear(d)
	for v, it := range md.vecItem {
		d[it] += ch.alpha[md.vecRater[v]]
	}
	if ch.gsqW == nil {
		ch.gsqW = make([][]float64, md.nl)
		for l := range ch.gsqW {
			ch.gsqW[l] = make([]float64, r)
		}
		if md.raterBlock != nil {
			ch.blockW = make([][]float64, md.nl)
			for l := range ch.blockW {
				ch.blockW[l] = make([]float64, kb*kb)
			}
		}
	}
	mx := 0
	for _, c := range md.raterCount {
		mx = max(mx, c)
	}
	// x holds a rater's weighted rows sqrt(q_n) G_n, one per label; the
	// block is x'x (restricted to the leading kb columns) by one Syrk.
	x := make([]float64, mx*r)
	for l := range ch.gsqW {
		a, e := md.rStart[l], md.rStart[l+1]
		clear(ch.gsqW[l])
		for v := a; v < e; v++ {
			it := int(md.vecItem[v])
			sq := math.Sqrt(1 / (1 + d[it]*f.Extra[it]))
			row := x[(v-a)*r : (v-a+1)*r]
			for j, g := range f.G[it*r : (it+1)*r] {
				row[j] = sq * g
			}
			gp.AddRowSquares(ch.gsqW[l], row)
		}
		if ch.blockW != nil {
			blas64.Syrk(blas.Trans, 1, blas64.General{Rows: e - a, Cols: kb, Stride: r, Data: x},
				0, blas64.Symmetric{Uplo: blas.Lower, N: kb, Stride: kb, Data: ch.blockW[l]})
		}
	}
	ch.blockAge = -1
}

func (ch *classChain) Sweep(warmup bool) error {
	ch.sweeps++
	ch.warm = warmup
	if warmup {
		ch.warmSweeps++
		if ch.warmSweeps == weightAfter {
			ch.weightPreconditioner()
		}
	}
	md := ch.md
	if md.sampler == mcmc.PaperSampler {
		ch.stepYScan()
		if err := ch.stepM(); err != nil {
			return err
		}
		ch.stepAlpha()
		return nil
	}
	// With two classes the free raters' latent vectors are redrawn
	// exactly by stepAlphaCollapsed; the others here.
	collapsed := md.nk == 2 && md.nFreeAlpha > 0
	if !collapsed || md.nFixedVec > 0 {
		ch.stepYBlock(collapsed)
	}
	if md.f.Diag {
		if md.nk == 2 {
			ch.stepItemCollapsed()
		} else {
			ch.stepItemShift()
		}
	}
	switch {
	case md.pairM:
		if err := ch.stepMPair(); err != nil {
			return err
		}
	case md.pairDiag:
		ch.stepSumPrior()
	default:
		if err := ch.stepM(); err != nil {
			return err
		}
		ch.stepShift()
	}
	if collapsed {
		ch.stepAlphaCollapsed()
		if md.pairM && ch.e != nil {
			ch.stepExtraShift()
		}
	} else {
		ch.stepAlpha()
		ch.stepRaterScale()
		ch.stepRaterResidualScale()
	}
	ch.stepScale()
	return nil
}

// stepYScan updates every latent vector by one Gibbs scan of its
// truncated normal full conditional (Rogers et al. eq. 14, 36): the
// labelled component t from N(m_t, 1/a) truncated below by the largest of
// the others, then each other component from N(m_i, 1/a) truncated above by
// y_t. Both are exact truncated normal draws (numeric.TruncNormal), robust however
// far in the tail the constraint lies.
func (ch *classChain) stepYScan() {
	md := ch.md
	inf := math.Inf(1)
	for v := range md.vecItem {
		sd := 1 / math.Sqrt(ch.prec(v))
		mr, yv := ch.vector(v)
		t := int(md.vecClass[v])
		mx := math.Inf(-1)
		for i, x := range yv {
			if i != t && x > mx {
				mx = x
			}
		}
		yt := numeric.TruncNormal(ch.rng, mr[t], sd, mx, inf)
		yv[t] = yt
		for i := range yv {
			if i != t {
				yv[i] = ch.truncAbove(mr[i], sd, yt)
			}
		}
	}
}

// truncAbove draws from N(mu, sd^2) truncated to (-inf, hi): a plain normal
// draw when it lands below hi (the common case when hi is well above mu),
// else numeric.TruncNormal. The mixture of the two is exactly the truncated normal.
func (ch *classChain) truncAbove(mu, sd, hi float64) float64 {
	if x := mu + sd*ch.rng.NormFloat64(); x < hi {
		return x
	}
	return numeric.TruncNormal(ch.rng, mu, sd, math.Inf(-1), hi)
}

// stepExtraShift is, under md.pairM with a diagonal correction of the
// prior (M_- = G W_- + e_-), a translation move per item: e_-n and the
// difference coordinate u_v = (y_v0 - y_v1)/sqrt2 of every latent vector
// of item n move by the same Delta. The residuals u_v - M_-n do not
// change, so along this orbit (a translation group: Lebesgue Haar measure,
// Jacobian 1; Liu & Sabatti 2000) the target is the prior N(0, Extra_n) of
// e_-n restricted to the Delta that keep every constraint (u_v > 0 for a
// label of class 0, u_v < 0 for class 1), and Delta is drawn exactly from
// that truncated normal, as stepItemShift does for a diagonal C. Where an
// item's labels agree with M the constraints are far and e_-n is redrawn
// almost from its prior, which the data augmentation (W_-, e_-) | Y, whose
// latent vectors carry M's last value forward, does in small steps. O(m_n)
// for an item with m_n labels.
func (ch *classChain) stepExtraShift() {
	md := ch.md
	f := md.f
	for n, ex := range f.Extra {
		a, e := md.itemStart[n], md.itemStart[n+1]
		if a == e || !(ex > 0) {
			continue
		}
		lo, hi := math.Inf(-1), math.Inf(1)
		for _, v := range md.itemVecs[a:e] {
			u := (ch.y[2*v] - ch.y[2*v+1]) / math.Sqrt2
			if md.vecClass[v] == 0 {
				lo = math.Max(lo, -u)
			} else {
				hi = math.Min(hi, -u)
			}
		}
		if !(lo < hi) {
			continue
		}
		en := ch.pe[n]
		e2 := numeric.TruncNormal(ch.rng, 0, math.Sqrt(ex), en+lo, en+hi)
		delta := e2 - en
		// Keep the constraints strict after rounding.
		if !(delta > lo && delta < hi) {
			continue
		}
		ch.pe[n] = e2
		ch.pm[n] += delta
		h := delta / math.Sqrt2
		for _, v := range md.itemVecs[a:e] {
			ch.y[2*v] += h
			ch.y[2*v+1] -= h
		}
	}
	ch.plusDrawn = false
}

// truncBelow draws from N(mu, sd^2) truncated to (lo, inf): a plain
// normal draw when it lands above lo (the common case when mu is well
// above lo), else numeric.TruncNormal, as truncAbove.
func (ch *classChain) truncBelow(mu, sd, lo float64) float64 {
	if x := mu + sd*ch.rng.NormFloat64(); x > lo {
		return x
	}
	return numeric.TruncNormal(ch.rng, mu, sd, lo, math.Inf(1))
}

// stepYBlock is the default sampler's latent vector update. For a vector
// labelled t, let j be the class other than t with the largest m_j (it
// depends on M only, which this step holds fixed). With u = y_t and
// v = y_j, the rotated coordinates s = (u+v)/sqrt2, e = (u-v)/sqrt2 are
// independent N((m_t+m_j)/sqrt2, 1/a) and N((m_t-m_j)/sqrt2, 1/a) a priori
// (the conditional covariance is isotropic), and the constraint becomes
//
//	e > 0  and  s + e > sqrt2 c,  c = max over i not in {t, j} of y_i.
//
// The step draws (1) every y_i, i != t, from N(m_i, 1/a) truncated above
// by y_t, then (2) s given e and (3) e given s, each a truncated normal,
// and (4) the vector's common mode (the same b added to every component,
// which the constraint does not see) from its normal conditional.
// For K = 2 there is no c: s and e are independent and (2)-(3) is an exact
// draw of the whole vector, so (1) and (4) are skipped. Each part is an exact
// conditional draw (in the rotated coordinates for (2)-(3)), so the step
// leaves the conditional of the vector invariant; moving along s lets the
// pair travel along the constraint y_t = y_j, where the component-wise scan
// of stepYScan takes steps of size 1/(a gap) when the label disagrees with
// M by a gap.
//
// When onlyFixed is set, the vectors of raters with free precisions are
// left alone (stepAlphaCollapsed redraws them).
func (ch *classChain) stepYBlock(onlyFixed bool) {
	md := ch.md
	k := md.nk
	inf := math.Inf(1)
	for v := range md.vecItem {
		if onlyFixed && !md.shared && !md.fixedAlpha[md.vecRater[v]] {
			continue
		}
		sd := 1 / math.Sqrt(ch.prec(v))
		mr, yv := ch.vector(v)
		t := int(md.vecClass[v])
		j := -1
		for i, x := range mr {
			if i != t && (j < 0 || x > mr[j]) {
				j = i
			}
		}
		s0 := (mr[t] + mr[j]) / math.Sqrt2
		e0 := (mr[t] - mr[j]) / math.Sqrt2
		if k == 2 {
			ch.drawPair(yv, t, j, s0, e0, sd)
			continue
		}
		yt := yv[t]
		c := math.Inf(-1)
		for i := range yv {
			if i == t {
				continue
			}
			yv[i] = ch.truncAbove(mr[i], sd, yt)
			if i != j && yv[i] > c {
				c = yv[i]
			}
		}
		e := (yt - yv[j]) / math.Sqrt2
		if !(e > 0) {
			// y_j was rounded onto y_t: the smallest positive gap.
			e = math.SmallestNonzeroFloat64
		}
		lo := math.Inf(-1)
		if c > lo {
			lo = math.Sqrt2*c - e
		}
		s := numeric.TruncNormal(ch.rng, s0, sd, lo, inf)
		elo := 0.0
		if c > math.Inf(-1) {
			elo = math.Max(0, math.Sqrt2*c-s)
		}
		e = numeric.TruncNormal(ch.rng, e0, sd, elo, inf)
		yv[t] = (s + e) / math.Sqrt2
		yv[j] = (s - e) / math.Sqrt2
		// (4) The common mode: adding b to every component keeps the
		// constraint, and b | rest ~ N(-mean_i (y_i - m_i), 1/(K a)).
		var mr0 float64
		for i, x := range yv {
			mr0 += x - mr[i]
		}
		b := -mr0/float64(k) + sd/math.Sqrt(float64(k))*ch.rng.NormFloat64()
		for i := range yv {
			yv[i] += b
		}
	}
}

// drawPair draws a two-class latent vector exactly: s ~ N(s0, sd^2),
// e ~ N(e0, sd^2) truncated to e > 0, y_t = (s+e)/sqrt2, y_j = (s-e)/sqrt2.
func (ch *classChain) drawPair(yv []float64, t, j int, s0, e0, sd float64) {
	s := s0 + sd*ch.rng.NormFloat64()
	e := numeric.TruncNormal(ch.rng, e0, sd, 0, math.Inf(1))
	yv[t] = (s + e) / math.Sqrt2
	yv[j] = (s - e) / math.Sqrt2
}

// stepAlphaCollapsed updates each free precision together with the rater's
// latent vectors when K = 2: (alpha_l, Y^l) | M is drawn as alpha_l from
// its conditional with Y^l integrated out,
//
//	p(alpha_l | M) ∝ Gamma(alpha_l; v, lambda) prod_n Phi(sqrt(alpha_l) (m_nt - m_nj) / sqrt2)
//
// over the rater's labels t (j the other class; eq. 18 with K = 2), by one
// slice-sampling step in log alpha_l, followed by an exact draw of every
// latent vector of the rater from its conditional given M and the new
// alpha_l (drawPair). The pair of steps leaves p(alpha_l, Y^l | M)
// invariant, and alpha_l no longer waits for the latent vectors to follow
// it (the plain Gibbs step of eq. 16 mixes slowly for raters with many
// labels). Under md.pairDiag nothing reads the vectors and they are not
// drawn (see stepSumPrior).
func (ch *classChain) stepAlphaCollapsed() {
	md := ch.md
	for l := 0; l < md.nl; l++ {
		if md.fixedAlpha[l] {
			continue
		}
		a, e := md.rStart[l], md.rStart[l+1]
		gaps := ch.gapBuf[:0]
		for v := a; v < e; v++ {
			it := int(md.vecItem[v])
			t := int(md.vecClass[v])
			if md.pairM {
				// M_- = (m_0 - m_1)/sqrt2.
				g := ch.pm[it]
				if t == 1 {
					g = -g
				}
				gaps = append(gaps, g)
				continue
			}
			gaps = append(gaps, (ch.m[2*it+t]-ch.m[2*it+1-t])/math.Sqrt2)
		}
		ch.gapBuf = gaps
		d := collapsedAlphaDensity{v: md.v, lam: md.lam, gaps: gaps, lp: md.logPhi}
		t0 := math.Log(ch.alpha[l])
		plo, phi := mcmc.LogPrecisionBounds()
		t, evals := mcmc.SliceSampleAbove(ch.rng, d, t0, ch.raterWidth[l], plo, phi)
		ch.sliceEvals += evals
		ch.slices++
		if ch.warm {
			ch.raterAcc[l] += math.Abs(t - t0)
		}
		alpha := math.Exp(t)
		ch.alpha[l] = alpha
		if md.pairDiag {
			// Nothing reads the latent vectors (see stepSumPrior).
			continue
		}
		sd := 1 / math.Sqrt(alpha)
		if md.pairM {
			ch.drawDiffs(a, sd)
			continue
		}
		for v := a; v < e; v++ {
			it := int(md.vecItem[v])
			t := int(md.vecClass[v])
			m0, m1 := ch.m[2*it+t], ch.m[2*it+1-t]
			ch.drawPair(ch.y[2*v:2*v+2], t, 1-t, (m0+m1)/math.Sqrt2, (m0-m1)/math.Sqrt2, sd)
		}
	}
}

// drawDiffs is drawPair for the latent vectors from a of one rater under
// md.pairM, whose sum coordinate s = (y_0 + y_1)/sqrt2 no step reads
// (stepMPair sees the vectors through their difference coordinate, and the
// scale move not at all when every precision is free): it is integrated
// out like (W_+, e_+) and set to 0, and the difference y_t - y_j = sqrt2 e
// is drawn exactly, e ~ N(e0, sd^2) truncated to e > 0 with e0 the gap
// (m_t - m_j)/sqrt2 of stepAlphaCollapsed's density (ch.gapBuf). It saves
// a normal draw per label.
func (ch *classChain) drawDiffs(a int, sd float64) {
	md := ch.md
	for i, g := range ch.gapBuf {
		v := a + i
		x := ch.truncBelow(g, sd, 0) / math.Sqrt2
		t := int(md.vecClass[v])
		ch.y[2*v+t] = x
		ch.y[2*v+1-t] = -x
	}
}

// stepItemCollapsed is, for K = 2 and a diagonal prior covariance (the
// identity kernel), a per-item update of the contrast of the two latent
// values with the item's latent vectors integrated out. In whitened
// coordinates (M_nk = c_n^(1/2) W_kn) let delta = (W_0n - W_1n)/sqrt2 and
// sigma = (W_0n + W_1n)/sqrt2 (independent N(0, 1) a priori). Given
// sigma and the precisions, with the item's vectors integrated out,
//
//	p(delta | ...) ∝ N(delta; 0, 1) prod_v Phi(s_v sqrt(a_v c_n) delta),
//
// s_v = +1 for a label of class 0 and -1 for class 1 (eq. 18 with K = 2,
// since m_n0 - m_n1 = sqrt(2 c_n) delta). One slice-sampling step on delta
// is followed by an exact draw of each of the item's vectors from its
// conditional (drawPair), which leaves p(delta, Y_n | rest) invariant. It
// removes the slow coupling of the data-augmentation sweep between an
// item's latent values and its latent vectors.
func (ch *classChain) stepItemCollapsed() {
	md := ch.md
	f := md.f
	r := f.R
	for n := 0; n < md.n; n++ {
		a, e := md.itemStart[n], md.itemStart[n+1]
		sdn := f.SD[n]
		if a == e || sdn == 0 {
			continue
		}
		g := ch.gapBuf[:0]
		for _, v := range md.itemVecs[a:e] {
			s := math.Sqrt(ch.prec(int(v)) * sdn * sdn)
			if md.vecClass[v] == 1 {
				s = -s
			}
			g = append(g, s)
		}
		ch.gapBuf = g
		w0, w1 := ch.w[n], ch.w[r+n]
		sig := (w0 + w1) / math.Sqrt2
		delta0 := (w0 - w1) / math.Sqrt2
		d := itemContrastDensity{slopes: g, lp: md.logPhi}
		delta, evals := mcmc.SliceSampleAbove(ch.rng, d, delta0, ch.itemWidth[n], math.Inf(-1), math.Inf(1))
		ch.sliceEvals += evals
		ch.slices++
		if ch.warm {
			ch.itemAcc[n] += math.Abs(delta - delta0)
		}
		w0, w1 = (sig+delta)/math.Sqrt2, (sig-delta)/math.Sqrt2
		ch.w[n], ch.w[r+n] = w0, w1
		m0, m1 := sdn*w0, sdn*w1
		ch.m[2*n], ch.m[2*n+1] = m0, m1
		if md.pairDiag {
			// Nothing reads the latent vectors (see stepSumPrior).
			continue
		}
		for _, v := range md.itemVecs[a:e] {
			t := int(md.vecClass[v])
			mt, mj := m0, m1
			if t == 1 {
				mt, mj = m1, m0
			}
			ch.drawPair(ch.y[2*int(v):2*int(v)+2], t, 1-t, (mt+mj)/math.Sqrt2, (mt-mj)/math.Sqrt2, 1/math.Sqrt(ch.prec(int(v))))
		}
	}
}

// stepSumPrior replaces stepM and stepShift when K = 2, every rater's
// precision is free, C is diagonal (the identity kernel) and the sampler
// is the default (md.pairDiag): stepMPair's partially collapsed step
// (van Dyk & Park 2008) in the identity's coordinates. The labels see item
// n only through the contrast delta_n = (W_0n - W_1n)/sqrt2, which
// stepItemCollapsed has just drawn with the item's latent vectors
// integrated out, so with Y integrated out the sum sigma_n = (W_0n +
// W_1n)/sqrt2 has its prior N(0, 1) as conditional and is drawn from it
// (both components for an item without labels, whose contrast the
// collapsed step leaves alone). stepAlphaCollapsed then draws alpha with
// Y integrated out, and the global scale move does not involve Y when
// every precision is free, so no step of this sampler reads the latent
// vectors: it runs the collapsed chain on (W, alpha) of the probit
// likelihood Phi(sqrt(alpha_l) (m_nt - m_nj) / sqrt2) (eq. 18 with K = 2),
// and Y is never drawn (it is not part of the result). It saves the
// Gaussian draw of M given Y (whose contrast the collapsed step had just
// drawn better) and a truncated normal draw per label and sweep. The
// shift statistic records the change of sigma.
func (ch *classChain) stepSumPrior() {
	md := ch.md
	f := md.f
	r := f.R
	var ss float64
	for n := 0; n < md.n; n++ {
		w0, w1 := ch.w[n], ch.w[r+n]
		if md.itemStart[n] == md.itemStart[n+1] {
			w0, w1 = ch.rng.NormFloat64(), ch.rng.NormFloat64()
		} else {
			sig0 := (w0 + w1) / math.Sqrt2
			delta := (w0 - w1) / math.Sqrt2
			sig := ch.rng.NormFloat64()
			u := (sig - sig0) / math.Sqrt2
			ss += u * u
			w0, w1 = (sig+delta)/math.Sqrt2, (sig-delta)/math.Sqrt2
		}
		ch.w[n], ch.w[r+n] = w0, w1
		sd := f.SD[n]
		ch.m[2*n], ch.m[2*n+1] = sd*w0, sd*w1
	}
	ch.shiftSum += math.Sqrt(ss / float64(md.n))
}

// stepItemShift is, for K > 2 and a diagonal prior covariance (the
// identity kernel), a translation move per item and class: M_nk and the
// k-th component of every latent vector of item n move by the same Delta.
// The residuals Y_v - M_n do not change, so along this orbit (a translation
// group: Lebesgue Haar measure, Jacobian 1) the target is the prior of
// W_kn = M_nk / c_n^(1/2) restricted to the Delta that keep every
// constraint: a vector labelled k needs y_k + Delta above its other
// components (a lower bound), a vector labelled t != k needs y_k + Delta
// below y_t (an upper bound). Delta is drawn exactly from that truncated
// normal. The class's latent value then moves together with the latent
// vectors that pin it, which the Gibbs sweep can only do in small steps (an
// item whose raters agree has its winning class free to rise, the others
// free to fall). Cost O(K m_n) for an item with m_n vectors.
func (ch *classChain) stepItemShift() {
	md := ch.md
	f := md.f
	k, r := md.nk, f.R
	inf := math.Inf(1)
	for n := 0; n < md.n; n++ {
		a, e := md.itemStart[n], md.itemStart[n+1]
		sdn := f.SD[n]
		if a == e || sdn == 0 {
			continue
		}
		vecs := md.itemVecs[a:e]
		for c := 0; c < k; c++ {
			lo, hi := math.Inf(-1), inf
			for _, v := range vecs {
				yv := ch.y[int(v)*k : int(v+1)*k]
				t := int(md.vecClass[v])
				if t != c {
					hi = math.Min(hi, yv[t]-yv[c])
					continue
				}
				mx := math.Inf(-1)
				for i, x := range yv {
					if i != c && x > mx {
						mx = x
					}
				}
				lo = math.Max(lo, mx-yv[c])
			}
			if !(lo < hi) {
				continue
			}
			w := ch.w[c*r+n]
			w2 := numeric.TruncNormal(ch.rng, 0, 1, w+lo/sdn, w+hi/sdn)
			d := sdn * (w2 - w)
			// Keep the constraints strict after rounding.
			if !(d > lo && d < hi) {
				continue
			}
			ch.w[c*r+n] = w2
			ch.m[n*k+c] += d
			for _, v := range vecs {
				ch.y[int(v)*k+c] += d
			}
		}
	}
}

// itemContrastDensity is the log density of delta in stepItemCollapsed.
type itemContrastDensity struct {
	slopes []float64
	lp     *numeric.LogPhiTable
}

func (d itemContrastDensity) LogF(x float64) float64 {
	r := -0.5 * x * x
	for _, s := range d.slopes {
		r += d.lp.At(s * x)
	}
	return r
}

// Above reports LogF(x) > logy, stopping once a partial sum is at or below
// logy (every log Phi term is <= 0; mcmc.AboveDensity).
func (d itemContrastDensity) Above(x, logy float64) bool {
	r := -0.5 * x * x
	for _, s := range d.slopes {
		if !(r > logy) {
			return false
		}
		r += d.lp.At(s * x)
	}
	return r > logy
}

// collapsedAlphaDensity is the log density of t = log alpha_l in
// stepAlphaCollapsed (the Jacobian e^t included).
type collapsedAlphaDensity struct {
	v, lam float64
	gaps   []float64
	lp     *numeric.LogPhiTable
}

func (d collapsedAlphaDensity) LogF(t float64) float64 {
	a := math.Exp(t)
	if a == 0 || math.IsInf(a, 1) {
		return math.Inf(-1)
	}
	sa := math.Sqrt(a)
	r := d.v*t - d.lam*a
	for _, g := range d.gaps {
		r += d.lp.At(sa * g)
	}
	return r
}

// Above reports LogF(t) > logy, stopping once a partial sum is at or below
// logy (every log Phi term is <= 0; mcmc.AboveDensity).
func (d collapsedAlphaDensity) Above(t, logy float64) bool {
	a := math.Exp(t)
	if a == 0 || math.IsInf(a, 1) {
		return false
	}
	sa := math.Sqrt(a)
	r := d.v*t - d.lam*a
	for _, g := range d.gaps {
		if !(r > logy) {
			return false
		}
		r += d.lp.At(sa * g)
	}
	return r > logy
}

// sums sets s_k,n = sum over item n's latent vectors of a_v y_v,k and
// d_n = sum of a_v (Rogers et al. eq. 15, 39 with sec. 2.5; eq. 48-50 for
// appendix B, where a_v = eta_nk).
func (ch *classChain) sums() {
	md := ch.md
	k, n := md.nk, md.n
	for i := range ch.s {
		ch.s[i] = 0
	}
	fixed := md.fixedD != nil
	if !fixed {
		for i := range ch.d {
			ch.d[i] = 0
		}
	}
	for v, it := range md.vecItem {
		a := ch.prec(v)
		yv := ch.y[v*k : (v+1)*k]
		for c, x := range yv {
			ch.s[c*n+int(it)] += a * x
		}
		if !fixed {
			ch.d[it] += a
		}
	}
	if fixed {
		copy(ch.d, md.fixedD)
	}
}

// stepM draws every class's latent function from its Gaussian full
// conditional M_.k ~ N(Sigma s_k, Sigma), Sigma = (C^-1 + D)^-1 (Rogers et
// al. eq. 15, 39; D = diag(d) the item precision sums, sec. 2.5), through
// the prior factor m = G w without inverting C. All classes share D, hence
// the factorisation.
func (ch *classChain) stepM() error {
	ch.sums()
	md := ch.md
	f := md.f
	k, n, r := md.nk, md.n, f.R
	// s and d are the pseudo-observations that W sees: with a diagonal
	// correction, those of G W_k with e_k ~ N(0, E) integrated out,
	// precision d_n/(1 + d_n E_n) and weighted sum s_n/(1 + d_n E_n); W_k
	// and then e_k given W_k (drawExtra) are an exact draw of the pair.
	s, d := ch.s, ch.d
	if ch.e != nil {
		s, d = ch.sE, ch.dE
		for i := 0; i < n; i++ {
			q := 1 / (1 + ch.d[i]*f.Extra[i])
			d[i] = ch.d[i] * q
			for c := 0; c < k; c++ {
				s[c*n+i] = ch.s[c*n+i] * q
			}
		}
	}
	switch {
	case f.Diag:
		for i, sd := range f.SD {
			h := 1 + sd*sd*ch.d[i]
			ih := 1 / h
			isd := math.Sqrt(ih)
			for c := 0; c < k; c++ {
				w := sd*ch.s[c*n+i]*ih + ch.rng.NormFloat64()*isd
				ch.w[c*r+i] = w
				ch.m[i*k+c] = sd * w
			}
		}
		return nil
	case md.complete:
		// H = I + d G'G = I + d Lambda is diagonal: w_k = (G's_k)/h +
		// z/sqrt(h), two products with G per class, done as dot products
		// over G' and G rows (cache-friendly for all K classes at once).
		a := ch.d[0]
		for j := 0; j < r; j++ {
			gj := blas64.Vector{N: n, Inc: 1, Data: md.gt[j*n : (j+1)*n]}
			for c := 0; c < k; c++ {
				ch.rhs[c*r+j] = blas64.Dot(gj, blas64.Vector{N: n, Inc: 1, Data: s[c*n : (c+1)*n]})
			}
		}
		for c := 0; c < k; c++ {
			for j, l := range f.Lam {
				h := 1 + a*l
				ch.w[c*r+j] = ch.rhs[c*r+j]/h + ch.rng.NormFloat64()/math.Sqrt(h)
			}
		}
		ch.updateM()
		return nil
	}
	// Incomplete design: the perturbation sampler with preconditioned
	// conjugate gradients, one solve per class, warm-started at the
	// previous draw; the preconditioner is built once for all classes.
	before := ch.gs.Stats.Iterations
	for c := 0; c < k; c++ {
		ch.setPreconditioner(c == 0)
		if err := ch.gs.Draw(ch.rng, ch.w[c*r:(c+1)*r], ch.mcol, s[c*n:(c+1)*n], d, false); err != nil {
			return err
		}
		if ch.e != nil {
			ch.drawExtra(c)
			continue
		}
		for i, v := range ch.mcol {
			ch.m[i*k+c] = v
		}
	}
	ch.cgIters += ch.gs.Stats.Iterations - before
	return nil
}

// stepMPair replaces stepM and stepShift when K = 2, every rater's
// precision is free and C is not diagonal (md.pairM). In the rotated
// coordinates W_± = (W_0 ± W_1)/sqrt2 (and e_± likewise) the two classes'
// conditionals given the latent vectors are independent with the same
// covariance, so W_- and W_+ are independent given Y. The labels see only
// M_0 - M_1 = sqrt2 M_- (K = 2), so with Y integrated out the posterior
// of (W_+, e_+) given everything else is its prior N(0, I), N(0, Extra),
// and no other step reads (W_+, e_+): the chain runs on (W_-, e_-, alpha,
// Y) with (W_+, e_+) integrated out (drawn from the prior only for the
// draws that are kept, pairPlus). The step draws
//
//	(W_-, e_-) | Y, alpha  from its Gaussian conditional (stepM's draw,
//	                       for the difference s_0 - s_1),
//
// and stepAlphaCollapsed, which follows, draws alpha with Y integrated out
// and then the part of every latent vector that the labels and W_- see
// (every rater is free, so every vector), which completes a partially
// collapsed Gibbs sampler (van Dyk & Park 2008); the scale move acts on
// the same marginal state (stepScale). The older pair stepM + stepShift
// drew W_+ given Y and then replaced mean_k W_k by a draw from its prior:
// one conjugate-gradient solve per sweep instead of two, and no product
// with G for W_+ (a fifth of the passes over G at 16,000 items).
func (ch *classChain) stepMPair() error {
	ch.sumsPair()
	md := ch.md
	f := md.f
	n := md.n
	wd, md0 := ch.pw[:f.R], ch.pm[:n]
	s, d := ch.mcol, ch.d
	if ch.e != nil {
		s, d = ch.sE[:n], ch.dE
		for i := 0; i < n; i++ {
			q := 1 / (1 + ch.d[i]*f.Extra[i])
			d[i] = ch.d[i] * q
			s[i] = ch.mcol[i] * q
		}
	}
	before := ch.gs.Stats.Iterations
	if !md.complete {
		ch.setPreconditioner(true)
	}
	gw := md0
	if ch.e != nil {
		gw = ch.mtmp
	}
	if ch.gwd != nil {
		if (ch.sweeps-1)%pairResyncEvery == 0 {
			ch.gs.MulG(ch.gwd, wd)
		}
		if err := ch.gs.DrawTracked(ch.rng, wd, ch.gwd, s, d, false); err != nil {
			return err
		}
		copy(gw, ch.gwd)
	} else if err := ch.gs.Draw(ch.rng, wd, gw, s, d, md.complete); err != nil {
		return err
	}
	ch.cgIters += ch.gs.Stats.Iterations - before
	if ch.e != nil {
		f.DrawExtraTo(ch.rng, ch.pe[:n], md0, gw, ch.mcol, ch.d)
	}
	ch.plusDrawn = false
	return nil
}

// sumsPair is sums for stepMPair: the precision-weighted sums of the
// latent vectors' difference coordinate, sum_v a_v (y_v0 - y_v1)/sqrt2,
// in mcol, and d.
func (ch *classChain) sumsPair() {
	md := ch.md
	s := ch.mcol
	clear(s)
	clear(ch.d)
	for v, it := range md.vecItem {
		a := ch.alpha[md.vecRater[v]]
		s[it] += a * (ch.y[2*v] - ch.y[2*v+1]) / math.Sqrt2
		ch.d[it] += a
	}
}

// splitPair sets stepMPair's state W_-, M_- (and e_-) from the class
// arrays w, m (and e) of the starting state, which then hold a draw with
// (W_+, e_+) from the prior (plusDrawn).
func (ch *classChain) splitPair() {
	n, r := ch.md.n, ch.md.f.R
	for j := 0; j < r; j++ {
		ch.pw[j] = (ch.w[j] - ch.w[r+j]) / math.Sqrt2
	}
	for i := 0; i < n; i++ {
		ch.pm[i] = (ch.m[2*i] - ch.m[2*i+1]) / math.Sqrt2
	}
	if ch.e != nil {
		for i := 0; i < n; i++ {
			ch.pe[i] = (ch.e[i] - ch.e[n+i]) / math.Sqrt2
		}
	}
	ch.plusDrawn = true
}

// pairPlus completes md.pairM's state for a kept draw: (W_+, e_+) from
// their prior (their conditional given the rest with Y integrated out,
// see stepMPair) and the class arrays w, m (and e) from W_± (and e_±).
func (ch *classChain) pairPlus() {
	if ch.plusDrawn {
		return
	}
	md := ch.md
	f := md.f
	n, r := md.n, f.R
	wd, wp := ch.pw[:r], ch.pw[r:]
	md0, mp := ch.pm[:n], ch.pm[n:]
	for j := range wp {
		wp[j] = ch.rng.NormFloat64()
	}
	if ch.e != nil {
		ch.gs.MulG(ch.mtmp, wp)
		ed, ep := ch.pe[:n], ch.pe[n:]
		f.DrawExtraPriorTo(ch.rng, ep, mp, ch.mtmp)
		for i := 0; i < n; i++ {
			ch.e[i] = (ep[i] + ed[i]) / math.Sqrt2
			ch.e[n+i] = (ep[i] - ed[i]) / math.Sqrt2
		}
	} else {
		ch.gs.MulG(mp, wp)
	}
	for j := 0; j < r; j++ {
		ch.w[j] = (wp[j] + wd[j]) / math.Sqrt2
		ch.w[r+j] = (wp[j] - wd[j]) / math.Sqrt2
	}
	for i := 0; i < n; i++ {
		ch.m[2*i] = (mp[i] + md0[i]) / math.Sqrt2
		ch.m[2*i+1] = (mp[i] - md0[i]) / math.Sqrt2
	}
	ch.plusDrawn = true
}

// pairResyncEvery is the interval, in sweeps, at which stepMPair
// recomputes G W_- instead of keeping it (as the ordinal sampler, so that
// rounding cannot accumulate).
const pairResyncEvery = 256

// drawExtra draws e_k given W_k, with G W_k in mcol, item by item
// (gp.Factor.DrawExtraTo) and sets M_.k = G W_k + e_k.
func (ch *classChain) drawExtra(c int) {
	md := ch.md
	k, n := md.nk, md.n
	md.f.DrawExtraTo(ch.rng, ch.e[c*n:(c+1)*n], ch.mtmp, ch.mcol, ch.s[c*n:(c+1)*n], ch.d)
	for i, v := range ch.mtmp {
		ch.m[i*k+c] = v
	}
}

// setPreconditioner hands the conjugate-gradient preconditioner of the
// next solve to the Gaussian sampler. Under fixed precisions it was built
// with the model; otherwise it is combined from the per-rater parts once
// per sweep (when first is set, for the first class) and reused for the
// others.
func (ch *classChain) setPreconditioner(first bool) {
	md := ch.md
	if md.fixedDiag != nil {
		if md.fixedChol != nil {
			ch.gs.SetPrecBlock(md.precBlock, md.fixedChol, md.fixedDiag)
		} else {
			ch.gs.SetPrecDiag(md.fixedDiag)
		}
		return
	}
	if md.raterGsq == nil {
		return
	}
	p := ch.precDiag
	kb := md.precBlock
	if first {
		// Combine the per-rater parts.
		gsq, blk := md.raterGsq, md.raterBlock
		if ch.gsqW != nil {
			gsq, blk = ch.gsqW, ch.blockW
		}
		gp.SumSquares(p, gsq, ch.alpha)
		if kb > 0 && ch.blockStale() {
			gp.SumBlocks(ch.precBlockBuf, kb, blk, ch.alpha)
			if md.n >= gp.ExtraFromItems {
				ch.blockOK = gp.InvertBlock(ch.precBlockBuf, kb)
			} else {
				ch.blockOK = choleskyLower(ch.precBlockBuf, kb)
			}
		}
	}
	if kb > 0 && ch.blockOK {
		if md.n >= gp.ExtraFromItems {
			// Many items: the block's inverse (one matrix-vector
			// product per preconditioning, as the ordinal sampler;
			// rebuilt every precRefresh sweeps) instead of two
			// triangular solves, a seventh of a sweep at 1,000 items
			// with the text kernel; below, the draws stay those of
			// earlier versions.
			ch.gs.SetPrecBlockInv(kb, ch.precBlockBuf, p)
			return
		}
		ch.gs.SetPrecBlock(kb, ch.precBlockBuf, p)
		return
	}
	ch.gs.SetPrecDiag(p)
}

// blockStale reports whether the block of the preconditioner is to be
// rebuilt this sweep: every sweep below gp.ExtraFromItems items (the
// draws stay those of earlier versions), else every precRefresh sweeps.
// A preconditioner only steers conjugate gradients, which converge to the
// same solution and tolerance whatever it is; a block a few sweeps old,
// from nearby precisions, costs them a fraction of an iteration, and its
// Cholesky factorisation and inverse, O(k^3) with k up to 256, were a
// seventh of a sweep at 1,000 items with the text kernel. (Rebuilt every
// 5 sweeps during the burn-in, the blocks cost 2.2 of the fit's 29 CPU s
// at 1,000 items with the text kernel, for 0.1 iterations a sweep.)
func (ch *classChain) blockStale() bool {
	if ch.md.n < gp.ExtraFromItems {
		return true
	}
	if ch.blockAge < 0 || ch.blockAge >= precRefresh || !ch.blockOK {
		ch.blockAge = 1
		return true
	}
	ch.blockAge++
	return false
}

// precRefresh is the interval, in sweeps, at which the block of the
// preconditioner is rebuilt from gp.ExtraFromItems items (see
// blockStale). At 1,000 ladder items with the text kernel (block 256)
// 100 instead of 25 cost 0.07 iterations a sweep (5.01 against 4.94) and
// saved three quarters of its inversions (about 1.5 CPU s of a default
// fit).
const precRefresh = 100

// choleskyLower overwrites the lower triangle of the k×k row-major matrix a
// with its Cholesky factor; it reports false when a is not positive
// definite.
func choleskyLower(a []float64, k int) bool {
	_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: k, Stride: k, Data: a})
	return ok
}

// freeRaters yields the raters whose precision is free, in order (none
// when every precision is fixed).
func (md *classModel) freeRaters(yield func(int) bool) {
	if md.nFreeAlpha == 0 {
		return
	}
	for l := 0; l < md.nl; l++ {
		if !md.fixedAlpha[l] && !yield(l) {
			return
		}
	}
}

// vector returns the latent vector M_n(v) of the item of label vector v
// and the vector Y_v itself (slices of the chain's state, K each).
func (ch *classChain) vector(v int) (mr, yv []float64) {
	k := ch.md.nk
	it := int(ch.md.vecItem[v])
	return ch.m[it*k : (it+1)*k], ch.y[v*k : (v+1)*k]
}

// stepAlpha draws each free precision from its Gamma full conditional over
// the labels the rater gave (Rogers et al. eq. 16, 42 with sec. 2.5):
// alpha_l ~ Gamma(v + K n_l/2, lambda + sum |Y^l_n. - M_n.|^2 / 2).
func (ch *classChain) stepAlpha() {
	md := ch.md
	k := md.nk
	for l := range md.freeRaters {
		var ss float64
		for v := md.rStart[l]; v < md.rStart[l+1]; v++ {
			mr, yv := ch.vector(v)
			for c, x := range yv {
				r := x - mr[c]
				ss += r * r
			}
		}
		nl := float64(md.rStart[l+1] - md.rStart[l])
		ch.alpha[l] = mcmc.ClampPrecision(ch.gamma(md.v+float64(k)*nl/2, md.lam+ss/2))
	}
}

// stepRaterScale is a per-rater scale move for each free precision. For
// rater l the maps (a > 0)
//
//	Y_v -> c_v 1 + a (Y_v - c_v 1),  alpha_l -> alpha_l / a^2,
//
// applied to the rater's latent vectors, with c_v = mean_k M_n(v)k (fixed
// by the move), form a group that keeps every constraint (all components of
// a vector move by the same affine map with positive slope). The residual
// becomes Y'_v - M_n = a R_v + (a - 1) D_v with R_v = Y_v - M_n and
// D_v = M_n - c_v 1; the Jacobian is a^(K n_l - 2) and the Haar measure
// da/a. In t = log a the density of the move is
//
//	log p(t) = -2 v t - lambda alpha_l e^{-2t}
//	           - alpha_l [(1 - e^{-t}) RD + (1 - e^{-t})^2 DD / 2],
//
// RD = sum_v R_v . D_v, DD = sum_v |D_v|^2 (the |R|^2 term cancels), and
// one slice-sampling step from t = 0 leaves it invariant (Liu & Sabatti
// 2000). It moves a rater's precision together with the spread of the
// rater's latent vectors, the slow direction of the Gibbs sweep.
func (ch *classChain) stepRaterScale() {
	md := ch.md
	for l := range md.freeRaters {
		var rd, dd float64
		for v := md.rStart[l]; v < md.rStart[l+1]; v++ {
			mr, yv := ch.vector(v)
			c := itemMean(mr)
			for i, x := range yv {
				dv := mr[i] - c
				rd += (x - mr[i]) * dv
				dd += dv * dv
			}
		}
		alpha := ch.alpha[l]
		d := raterScaleDensity{v: md.v, la: md.lam * alpha, ard: alpha * rd, add: alpha * dd}
		curv := 4*d.la + d.add + math.Abs(d.ard) + 1
		slo, shi := mcmc.ScaleBounds(-2, alpha)
		if t := raterSlice(ch, d, math.Min(2, 3/math.Sqrt(curv)), slo, shi); t != 0 {
			ch.scaleRater(l, math.Exp(t), false)
		}
	}
}

// itemMean returns the mean of an item's latent vector M_n.
func itemMean(mr []float64) float64 {
	var c float64
	for _, x := range mr {
		c += x
	}
	return c / float64(len(mr))
}

// raterSlice takes the slice step of t = log a of a rater's scale move
// (stepRaterScale, stepRaterResidualScale) from 0 and counts it.
func raterSlice[D mcmc.LogDensity](ch *classChain, d D, w, lo, hi float64) float64 {
	t, evals := mcmc.SliceSample(ch.rng, d, 0, w, lo, hi)
	ch.sliceEvals += evals
	ch.slices++
	ch.raterScaleSum += math.Abs(t)
	return t
}

// scaleRater applies the scale move a to rater l's latent vectors,
// Y_v -> c + a (Y_v - c) around c = mean_k M_n(v)k (residual false) or
// around M_n(v) itself (residual true), and alpha_l -> alpha_l / a^2.
func (ch *classChain) scaleRater(l int, a float64, residual bool) {
	md := ch.md
	for v := md.rStart[l]; v < md.rStart[l+1]; v++ {
		mr, yv := ch.vector(v)
		if residual {
			for i, x := range yv {
				yv[i] = mr[i] + a*(x-mr[i])
			}
			continue
		}
		c := itemMean(mr)
		for i, x := range yv {
			yv[i] = c + a*(x-c)
		}
	}
	ch.alpha[l] = ch.alpha[l] / (a * a)
}

// stepRaterResidualScale is a second per-rater move for each free
// precision: the maps (a > 0)
//
//	Y_v -> M_n + a (Y_v - M_n),  alpha_l -> alpha_l / a^2
//
// on the rater's latent vectors (M fixed) form a group under which every
// residual scales by a and alpha_l |Y_v - M_n|^2 is unchanged, but which
// does not keep the constraints: a vector labelled t keeps its label when
// a (R_t - R_j) > m_j - m_t for every other class j (R = Y_v - M_n), which
// bounds a to an interval [a_lo, a_hi] around 1, computed over the rater's
// labels. The generalised Gibbs step (Liu & Sabatti 2000) draws a from
// pi(transformed state) |Jacobian| da/a restricted to it; the Jacobian
// a^(K n_l - 2) cancels the likelihood's normalising constants, leaving in
// t = log a
//
//	log p(t) = -2 v t - lambda alpha_l e^{-2t},  log a_lo < t < log a_hi:
//
// the new precision alpha_l e^{-2t} follows its Gamma(v, lambda) prior
// truncated to the interval the rater's current residual pattern allows.
// One slice-sampling step (log-concave) draws t. It moves a precise rater's
// alpha_l and the spread of their latent vectors together, the direction in
// which the Gibbs sweep is slow when K > 2.
func (ch *classChain) stepRaterResidualScale() {
	md := ch.md
	for l := range md.freeRaters {
		alo, ahi := 0.0, math.Inf(1)
		for v := md.rStart[l]; v < md.rStart[l+1]; v++ {
			mr, yv := ch.vector(v)
			t := int(md.vecClass[v])
			rt := yv[t] - mr[t]
			for j := range yv {
				if j == t {
					continue
				}
				d := rt - (yv[j] - mr[j])
				g := mr[j] - mr[t]
				switch {
				case d > 0 && g > 0:
					alo = math.Max(alo, g/d)
				case d < 0:
					ahi = math.Min(ahi, g/d)
				}
			}
		}
		lo, hi := math.Log(alo), math.Log(ahi)
		if !(lo < 0 && hi > 0) {
			continue
		}
		d := residualScaleDensity{v: md.v, la: md.lam * ch.alpha[l]}
		if t := raterSlice(ch, d, math.Min(2, hi-lo), lo, hi); t != 0 {
			ch.scaleRater(l, math.Exp(t), true)
		}
	}
}

// residualScaleDensity is the log density of t = log a in
// stepRaterResidualScale.
type residualScaleDensity struct {
	v, la float64
}

func (d residualScaleDensity) LogF(t float64) float64 {
	return -2*d.v*t - d.la*math.Exp(-2*t)
}

// raterScaleDensity is the log density of t = log a in stepRaterScale.
type raterScaleDensity struct {
	v, la, ard, add float64
}

func (d raterScaleDensity) LogF(t float64) float64 {
	s := math.Exp(-t)
	if math.IsInf(s, 1) {
		return math.Inf(-1)
	}
	b := 1 - s
	return -2*d.v*t - d.la*s*s - d.ard*b - 0.5*d.add*b*b
}

// stepShift is the common-shift move. Adding the same vector delta to
// every class's latent function (M_.k -> M_.k + delta) and delta_n to every
// component of item n's latent vectors leaves every residual Y - M and
// every constraint unchanged, so only the prior of M changes. With
// delta = G u (u in the whitened space) the conditional of u given the
// rest of the state, for the translation group whose Haar measure is
// Lebesgue measure and whose Jacobian is 1, is
//
//	p(u) ∝ exp(-sum_k |W_k + u|^2 / 2),  i.e.  u ~ N(-mean_k W_k, I/K),
//
// drawn exactly. It resamples the direction that the labels do not inform
// (the mean over classes of the latent values) from its prior in one step.
func (ch *classChain) stepShift() {
	md := ch.md
	f := md.f
	k, r := md.nk, f.R
	sk := 1 / math.Sqrt(float64(k))
	var ss float64
	for j := 0; j < r; j++ {
		var mean float64
		for c := 0; c < k; c++ {
			mean += ch.w[c*r+j]
		}
		mean /= float64(k)
		u := -mean + sk*ch.rng.NormFloat64()
		ch.u[j] = u
		ss += u * u
		for c := 0; c < k; c++ {
			ch.w[c*r+j] += u
		}
	}
	ch.shiftSum += math.Sqrt(ss / float64(r))
	f.MulG(ch.du, ch.u)
	for i, dv := range ch.du {
		row := ch.m[i*k : (i+1)*k]
		for c := range row {
			row[c] += dv
		}
	}
	for v, it := range md.vecItem {
		dv := ch.du[it]
		yv := ch.y[v*k : (v+1)*k]
		for c := range yv {
			yv[c] += dv
		}
	}
}

// stepScale is the global scale move (parameter expansion): W -> a W (so
// M -> a M), every latent vector Y_v -> a Y_v and every free alpha_l ->
// alpha_l / a^2. The constraints are invariant under a > 0, and the
// residual terms of free raters are unchanged. Drawing a from
// pi(transformed state) |Jacobian| with respect to the Haar measure da/a
// (Liu & Sabatti 2000) gives, in t = log a,
//
//	log p(t) = c t - A e^{2t} / 2 - B e^{-2t},
//	c = K r + K F - 2 v L_free,
//	A = sum_k |W_k|^2 + sum over the F vectors with fixed precision of
//	    a_v |Y_v - M_n.|^2,   B = lambda sum_free alpha_l,
//
// (r the dimension of W_k; F the vectors of the reference rater, or all
// vectors when the precisions are fixed). With no free precision (B = 0)
// a^2 ~ Gamma(c/2, A/2) exactly; otherwise t is slice sampled from 0, which
// leaves p(t) invariant.
func (ch *classChain) stepScale() {
	md := ch.md
	k := md.nk
	if md.pairM {
		ch.stepScalePair()
		return
	}
	var sw float64
	for _, x := range ch.w {
		sw += x * x
	}
	if ch.e != nil {
		for c := 0; c < k; c++ {
			sw += md.f.ExtraQuad(ch.e[c*md.n : (c+1)*md.n])
		}
	}
	afix := 0.0
	for v, it := range md.vecItem {
		if !md.shared && !md.fixedAlpha[md.vecRater[v]] {
			continue
		}
		mr := ch.m[int(it)*k : int(it+1)*k]
		var ss float64
		for c, x := range ch.y[v*k : (v+1)*k] {
			r := x - mr[c]
			ss += r * r
		}
		afix += ch.prec(v) * ss
	}
	var la float64
	for l, a := range ch.alpha {
		if !md.fixedAlpha[l] {
			la += a
		}
	}
	d := mcmc.ScaleDensity{
		P0: float64(k*(md.f.R+md.extraDims)+k*md.nFixedVec) - 2*md.v*float64(md.nFreeAlpha),
		S:  sw + afix,
		La: md.lam * la,
	}
	if !(d.S > 0) {
		return
	}
	var t float64
	if md.nFreeAlpha == 0 {
		if !(d.P0 > 0) {
			return
		}
		a2 := ch.gamma(d.P0/2, d.S/2)
		t = 0.5 * math.Log(a2)
	} else {
		var free []float64
		for l, a := range ch.alpha {
			if !md.fixedAlpha[l] {
				free = append(free, a)
			}
		}
		t = ch.scaleSlice(d, free)
	}
	ch.scaleSum += math.Abs(t)
	a := math.Exp(t)
	for i := range ch.w {
		ch.w[i] *= a
	}
	for i := range ch.m {
		ch.m[i] *= a
	}
	for i := range ch.e {
		ch.e[i] *= a
	}
	for i := range ch.gwd {
		ch.gwd[i] *= a
	}
	for i := range ch.y {
		ch.y[i] *= a
	}
	ia2 := 1 / (a * a)
	for l := range ch.alpha {
		if !md.fixedAlpha[l] {
			ch.alpha[l] *= ia2
		}
	}
}

// scaleSlice takes the slice step of the scale move's t = log a from 0,
// within the bounds that keep the free precisions free in range.
func (ch *classChain) scaleSlice(d mcmc.ScaleDensity, free []float64) float64 {
	z := (d.P0 + math.Sqrt(d.P0*d.P0+8*d.La*d.S)) / (2 * d.S)
	curv := 2*d.S*z + 4*d.La/z
	slo, shi := mcmc.ScaleBounds(-2, free...)
	t, evals := mcmc.SliceSample(ch.rng, d, 0, 3/math.Sqrt(curv), slo, shi)
	ch.sliceEvals += evals
	ch.slices++
	return t
}

// stepScalePair is stepScale for md.pairM, on the state stepMPair keeps:
// (W_+, e_+) are integrated out (see stepMPair), so the move
// W_- -> a W_-, e_- -> a e_-, Y -> a Y, alpha -> alpha / a^2 has
//
//	log p(t) = c t - A e^{2t} / 2 - B e^{-2t},  c = r + E - 2 v L,
//	A = |W_-|^2 + sum_n e_-n^2 / Extra_n,  B = lambda sum_l alpha_l,
//
// (E the items with a positive diagonal correction): stepScale's density
// with the dimensions and squares of W_- and e_- only. Without W_+ and
// e_+, which carry no information on a, the moves are larger.
func (ch *classChain) stepScalePair() {
	md := ch.md
	n, r := md.n, md.f.R
	wd, md0 := ch.pw[:r], ch.pm[:n]
	sw := numeric.Dot(wd, wd)
	if ch.e != nil {
		sw += md.f.ExtraQuad(ch.pe[:n])
	}
	var la float64
	for _, a := range ch.alpha {
		la += a
	}
	d := mcmc.ScaleDensity{P0: float64(r+md.extraDims) - 2*md.v*float64(md.nl), S: sw, La: md.lam * la}
	if !(d.S > 0) {
		return
	}
	t := ch.scaleSlice(d, ch.alpha)
	ch.scaleSum += math.Abs(t)
	a := math.Exp(t)
	for _, x := range [][]float64{wd, md0, ch.gwd, ch.y} {
		for i := range x {
			x[i] *= a
		}
	}
	if ch.e != nil {
		ed := ch.pe[:n]
		for i := range ed {
			ed[i] *= a
		}
	}
	ia2 := 1 / (a * a)
	for l := range ch.alpha {
		ch.alpha[l] *= ia2
	}
	ch.plusDrawn = false
}
