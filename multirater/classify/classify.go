package classify

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/design"
	"concord/multirater/gp"
	"concord/multirater/mcmc"
	"concord/multirater/numeric"
)

// Name is the family's model name in fit documents (ModelSettings.Model).
const Name = "classification"

// Data are the inputs of Fit: N items, L raters, K
// unordered classes and the observed labels. Raters label any subset of the
// items (Rogers et al. sec. 2.5); items nobody labelled are part of the
// Gaussian process and are predicted.
type Data struct {
	// ItemIDs names the N items, RaterIDs the L raters and Classes the K
	// class codes. They label the result.
	ItemIDs  []string
	RaterIDs []string
	Classes  []string
	// Labels are the observations, at most one per (item, rater) unless
	// Repeats; the Level of a Rating is the index of the class in Classes.
	Labels []multirater.Rating
	// Repeats allows several labels of an item by one rater (repeated
	// labels, the crowd case): each is one more latent vector and
	// likelihood term (eq. 18), independent given M and the rater's
	// precision.
	Repeats bool
	// Cov is the N×N prior covariance C shared by the K latent functions
	// M_.k (Rogers et al. sec. 2.3), e.g. from a kernel.Kernel's GramTo; nil means
	// the identity (no covariates). It must be positive semidefinite; it
	// may be singular.
	Cov mat.Symmetric
	// Kernel describes Cov for the result ("identity" when Cov is nil).
	Kernel string
}

// Precisions says how the raters' precisions alpha_l are treated by
// Fit.
type Precisions int

// ParsePrecisions reads "inferred", "fixed" or "fixed-full" ("" means
// inferred).
func ParsePrecisions(s string) (Precisions, error) { return precisionsNames().Parse(s) }

func (p Precisions) String() string { return precisionsNames().String(p) }

// precisionsNames is the table of the Precisions names.
func precisionsNames() multirater.Enum[Precisions] {
	return multirater.Enum[Precisions]{Type: "Precisions", Names: []string{"inferred", "fixed", "fixed-full"}, Lenient: true,
		Unknown: "unknown precisions %q (expected inferred, fixed or fixed-full)"}
}

const (
	// InferredPrecisions gives each rater a precision alpha_l with a
	// Gamma(v, lambda) prior, sampled from its full conditional (Rogers et
	// al. eq. 16, 42).
	InferredPrecisions Precisions = iota
	// FixedPrecisions fixes every alpha_l = 1 and uses the efficient
	// representation of Rogers et al. appendix B: the raters who gave item n
	// the same class k share one latent vector Y^k_n ~ N(M_n., I/eta_nk)
	// (eta_nk of them, eq. 45-50), so an item keeps at most min(K, L)
	// latent vectors instead of one per label. As a likelihood for M this is
	// P(argmax(M_n. + e/sqrt(eta)) = k) per (item, class) rather than the
	// product P(argmax(M_n. + e) = k)^eta of eq. 43; the two agree when no
	// two raters give an item the same class (see FixedFullPrecisions).
	FixedPrecisions
	// FixedFullPrecisions fixes every alpha_l = 1 and keeps one latent
	// vector per label (the general sampler of sec. 2.3 with alpha fixed):
	// the exact likelihood of eq. 43 at alpha = 1, slower than appendix B.
	FixedFullPrecisions
)

// fixed reports whether every alpha_l is fixed at 1.
func (p Precisions) fixed() bool { return p != InferredPrecisions }

// Options control Fit. The zero value means the defaults
// given for each field.
type Options struct {
	// Common holds the options every MCMC family shares: the chains
	// (mcmc.Settings), the sampler (the paper's Gibbs sweep plus moves that
	// leave the posterior invariant, or PaperSampler), the identifiability
	// (sec. 2.3.2; ignored when the precisions are fixed), the Gamma(V,
	// Lambda) prior on each alpha_l, the flag threshold (under the rater's
	// own precision), the convergence limits and the kept draws (fewer are
	// used when N·K is large). mcmc.Common gives their defaults; Lambda
	// defaults to 0.1 under Strong identifiability with inferred precisions,
	// and with a kernel (Data.Cov) Samples and Burnin to KernelSamples and
	// KernelBurnin (ForKernel, which Fit applies).
	mcmc.Common
	// Precisions: inferred (default), fixed (appendix B) or fixed-full.
	Precisions Precisions
	// RefRater is the id of the reference rater of Strong and Both; ""
	// means the rater with the most labels (the first such).
	RefRater string
	// Quadrature is the number of Gauss-Hermite nodes of the predictive
	// integral over u (eq. 18); 0 means DefaultQuadrature.
	Quadrature int
	// Progress, when set, is called with the fit's progress about twice a
	// second, from a goroutine of Fit.
	Progress func(multirater.Progress)
}

// DefaultQuadrature is the default number of Gauss-Hermite nodes of the
// class predictive integral.
const DefaultQuadrature = 16

// WithDefaults returns the options with zero fields replaced by their
// documented defaults (the family's own; callers never restate them).
func (o Options) WithDefaults() Options {
	o.Common = o.Common.WithDefaults(o.Identifiability == multirater.Strong && !o.Precisions.fixed())
	if o.Quadrature == 0 {
		o.Quadrature = DefaultQuadrature
	}
	return o
}

// Chain lengths of a fit with a kernel (Data.Cov set), the defaults of
// Samples and Burnin there (ForKernel). With two classes and free
// precisions the kernel's sampler (stepMPair, stepExtraShift) gives about
// twice the bulk ESS per kept draw of the labels-only defaults' (min bulk
// ESS 1276 at 1,000 ladder items, 1543 at 4,000 with 2,000 draws), so 1,500
// draws after 500 burn-in sweeps keep ample ESS at two thirds of the
// sweeps: min bulk ESS 1074 and 1078, max R-hat 1.0052 and 1.0072
// (docs/scaling.md, branch gib35e). A burn-in of 250-300 sweeps left the
// chains' starting scale in the kept draws at 1,000 items (min bulk ESS
// 869-895, max R-hat 1.008-1.009).
const (
	KernelSamples = 1500
	KernelBurnin  = 500
)

// ForKernel returns o with a zero Samples and Burnin set to the defaults of
// a fit with a kernel (KernelSamples, KernelBurnin) when kernel is set (a
// fit whose Data.Cov is not nil); without a kernel, and for every other
// field, WithDefaults gives the defaults (mcmc.Settings': 2000 draws after
// 1000 burn-in sweeps). Fit applies it; callers that state a fit's
// settings before it runs apply it with the same kernel.
func (o Options) ForKernel(kernel bool) Options {
	if kernel {
		o.Samples = cmp.Or(o.Samples, KernelSamples)
		o.Burnin = cmp.Or(o.Burnin, KernelBurnin)
	}
	return o
}

func (o Options) check() {
	o.Common.Check()
	if o.Quadrature < 2 || o.Quadrature > 200 {
		panic(fmt.Sprintf("multirater: Quadrature = %d must be in [2, 200]", o.Quadrature))
	}
	switch o.Precisions {
	case InferredPrecisions, FixedPrecisions, FixedFullPrecisions:
	default:
		panic(fmt.Sprintf("multirater: unknown precisions %d", int(o.Precisions)))
	}
}

// Fit fits the multi-rater classification model with
// Gaussian-process priors (multinomial probit) of Rogers, Girolami &
// Polajnar (2010, sec. 2.3, 2.5, app. A.2, B, C) by Gibbs sampling and
// summarises the posterior:
//
//	M_.k ~ N(0, C), k = 1..K                 latent function of class k
//	alpha_l ~ Gamma(v, lambda)               precision of rater l
//	Y^l_n. ~ N(M_n., I_K / alpha_l)          for each label t_nl (eq. 13)
//	t_nl = k  iff  y^l_nk > y^l_ni for all i != k.
//
// The paper's sampler (PaperSampler) cycles through the full conditionals:
// each label's latent vector from the normal truncated so that the labelled
// component is the largest (eq. 14, 36), by a Gibbs scan over its
// components with exact truncated normals (the labelled component above the
// others' maximum, then the others below it); each class's latent function
// M_.k from its Gaussian conditional (eq. 15, 39; with empty ratings,
// sec. 2.5, the precision of item n is the sum of the precisions of the
// raters who labelled it); each free alpha_l from Gamma(v + K n_l/2,
// lambda + sum over rater l's labels of |Y^l_n. - M_n.|^2 / 2) (eq. 16, 42).
//
// The default sampler (DefaultSampler) adds moves that leave the same
// posterior invariant (derivations in classify_sampler.go; their invariance
// is checked by a Geweke joint-distribution test):
//
//   - for each label, a block draw of the labelled component and its
//     strongest competitor (by M) in rotated coordinates (their sum and
//     difference), and of the vector's common mode: an exact draw of the
//     whole latent vector when K = 2, and no slow zig-zag of the
//     component-wise scan along the constraint when the label disagrees
//     with M;
//   - a common-shift move: the likelihood does not change when the same
//     vector is added to every M_.k and to every latent vector's
//     components, and the shift is drawn exactly from its conditional;
//   - with a diagonal C (identity kernel), per item: for K = 2 the contrast
//     m_n0 - m_n1 with the item's latent vectors integrated out (one slice
//     step, then an exact redraw of the vectors); for K > 2 a translation
//     of each M_nk together with the k-th components of the item's latent
//     vectors, drawn exactly;
//   - per rater: for K = 2 alpha_l with the rater's latent vectors
//     integrated out (one slice step on p(alpha_l | M), then an exact
//     redraw of the vectors); for K > 2 two scale moves of the rater's
//     latent vectors about the item means of M and about M itself, with
//     alpha_l -> alpha_l / a^2;
//   - a global scale move (M, Y) -> a (M, Y), alpha -> alpha / a^2
//     (parameter expansion, Liu & Wu 1999; Liu & Sabatti 2000) for the
//     coupling of the precisions and the latent scale.
//
// Cost per sweep: the latent functions of the K classes share one
// factorisation of C (see gp.Factor), since every class has the same item
// precisions: O(N K) for a diagonal C (identity kernel); O(K N r) for a
// complete design (every item has the same precision sum, e.g. every rater
// labelled every item), r the numerical rank of C, after one O(N^3)
// eigendecomposition per fit; for incomplete designs one preconditioned
// conjugate-gradient solve per class (the perturbation sampler of the
// ordinal model), O(N r) per iteration, with the preconditioner built once
// per sweep. The latent vectors cost O(K) each: O(K M) for M labels (O(K G)
// for the G <= min(K, L) N shared vectors of appendix B). From
// gp.ExtraFromItems items a truncated low-rank prior keeps its diagonal
// correction, M_.k = G W_k + e_k (FITC, gp.NewPriorExtra): W_k | e_k as
// above, then e_k | W_k item by item, O(N).
//
// The summary (see FitResult) gives every item's predictive class
// distribution (eq. 18, appendix C), computed by Gauss-Hermite quadrature
// over u for each posterior draw and averaged over up to KeepDraws draws,
// for the consensus (precision sum_l alpha_l) and for each rater (precision
// alpha_l); the posterior probability that each class has the largest
// latent value; rater precisions, agreement and confusion against the
// consensus; flags; and split R-hat and ESS of the free precisions and of
// the class-centred latent values M_nk - mean_j M_nj (the part the labels
// identify; with K = 2 only the second class, the first being its
// negative).
//
// Chains run in parallel goroutines; ctx cancels the fit. Caller mistakes
// (indices out of range, K < 2, malformed options) panic; problems with the
// data (no labels, duplicate labels, a rater without labels, a kernel matrix
// that is not positive semidefinite) return an error.
func Fit(ctx context.Context, data *Data, opts Options) (*multirater.FitResult, error) {
	start := time.Now()
	opts = opts.ForKernel(data.Cov != nil).WithDefaults()
	opts.check()
	md, err := newClassModel(data, opts)
	if err != nil {
		return nil, err
	}
	mc := opts.Settings
	plan := newClassPlan(md, opts)
	return mcmc.Fit(ctx, mc, opts.Progress, start, 0.9,
		func(c int) *classChain { return newClassChain(md, plan, mc.Seed, c) },
		func(chains []*classChain) *multirater.FitResult { return summariseClass(data, md, plan, opts, chains) })
}

// classModel is the immutable description of a classification fit, shared
// by the chains.
//
// The sampler works on "latent vectors": one per label in the general
// representation (sorted by rater, then item), or one per (item, class)
// pair with eta_nk > 0 labels in the representation of appendix B (sorted by
// item, then class). Vector v belongs to item vecItem[v], wins class
// vecClass[v] and has precision alpha_{vecRater[v]} (general) or
// vecEta[v] (appendix B, alpha = 1).
type classModel struct {
	n, nl, nk int
	prec      Precisions
	sampler   mcmc.Sampler
	ident     multirater.Identifiability
	shared    bool // appendix B representation

	vecItem  []int32
	vecClass []int32
	vecRater []int32   // general representation only
	vecEta   []float64 // appendix B only
	// rStart[l]..rStart[l+1] are rater l's vectors (general only).
	rStart []int
	// itemVecs[itemStart[n]:itemStart[n+1]] are item n's vectors.
	itemStart []int
	itemVecs  []int32
	// labels per item and per rater; labels per rater and class.
	itemCount  []int
	raterCount []int
	raterClass [][]int

	// ref is the reference rater (-1 when none); fixed reports whether
	// alpha_l is fixed at 1.
	ref        int
	fixedAlpha []bool
	nFreeAlpha int
	// nFixedVec counts the latent vectors whose precision is fixed (those
	// of fixed raters, or all under fixed precisions).
	nFixedVec int
	v, lam    float64

	f *gp.Factor
	// logPhi evaluates the log Phi terms of the collapsed slice moves.
	logPhi *numeric.LogPhiTable
	// extraDims counts the items with a positive diagonal correction
	// (gp.Factor.Extra): the dimensions of each e_k that the scale move
	// scales.
	extraDims int
	// pairM: K = 2, every rater's precision free, C not diagonal and the
	// default sampler: stepMPair replaces stepM and stepShift.
	pairM bool
	// trackGW: stepMPair keeps G W_- between sweeps (pairM, an incomplete
	// design, from gp.ExtraFromItems items; below, the draws stay those of
	// earlier versions, since tracking changes their rounding).
	trackGW bool
	// pairDiag: the same with a diagonal C (identity kernel):
	// stepSumPrior replaces stepM and stepShift, and stepItemCollapsed
	// leaves the latent vectors to stepAlphaCollapsed.
	pairDiag bool
	// complete: every item has the same precision sum in every sweep, so
	// the Gaussian conditional is diagonal in the eigenbasis.
	complete bool
	// gt is G' (r×n row-major) for the complete, non-diagonal case.
	gt []float64
	// Conjugate-gradient preconditioner (incomplete, non-diagonal C):
	// general representation: per-rater parts as in the ordinal model;
	// appendix B: the fixed preconditioner (diagonal and block Cholesky).
	raterGsq   [][]float64
	precBlock  int
	raterBlock [][]float64
	fixedDiag  []float64
	fixedChol  []float64
	// fixedD is the item precision sums when they do not change (fixed
	// precisions).
	fixedD []float64
}

func newClassModel(data *Data, opts Options) (*classModel, error) {
	return newClassModelPrior(data, opts, len(data.ItemIDs) >= gp.ExtraFromItems)
}

// newClassModelPrior is newClassModel; extra selects the prior factor with
// the diagonal correction of a truncated low-rank covariance
// (gp.NewPriorExtra; newClassModel's choice from gp.ExtraFromItems items,
// the tests' for small ones).
func newClassModelPrior(data *Data, opts Options, extra bool) (*classModel, error) {
	n, nl, nk := len(data.ItemIDs), len(data.RaterIDs), len(data.Classes)
	dsg := design.Design{What: "ClassData", ItemIDs: data.ItemIDs, RaterIDs: data.RaterIDs, K: nk,
		Ratings: data.Labels, Cov: data.Cov, Words: design.Words{Noun: "labels", Verb: "labelled"}, Repeats: data.Repeats}
	rs, repeated, err := dsg.Sorted(false)
	if err != nil {
		return nil, err
	}
	md := &classModel{
		n: n, nl: nl, nk: nk,
		prec:       opts.Precisions,
		sampler:    opts.Sampler,
		ident:      opts.Identifiability,
		shared:     opts.Precisions == FixedPrecisions,
		itemCount:  make([]int, n),
		raterCount: make([]int, nl),
		raterClass: make([][]int, nl),
		ref:        -1,
		fixedAlpha: make([]bool, nl),
		logPhi:     numeric.NewLogPhiTable(),
		v:          opts.V,
		lam:        opts.Lambda,
	}
	for l := range md.raterClass {
		md.raterClass[l] = make([]int, nk)
	}
	for _, r := range rs {
		md.itemCount[r.Item]++
		md.raterCount[r.Rater]++
		md.raterClass[r.Rater][r.Level]++
	}
	switch {
	case opts.Precisions.fixed():
		for l := range md.fixedAlpha {
			md.fixedAlpha[l] = true
		}
	case opts.Identifiability != multirater.Weak:
		var err error
		if md.ref, err = design.RefRater(data.RaterIDs, opts.RefRater, md.raterCount); err != nil {
			return nil, err
		}
		md.fixedAlpha[md.ref] = true
	}
	for _, f := range md.fixedAlpha {
		if !f {
			md.nFreeAlpha++
		}
	}
	md.vectors(rs)
	if md.f, err = gp.NewSamplerPrior(n, data.Cov, extra); err != nil {
		return nil, err
	}
	md.extraDims = md.f.ExtraDims()
	// With a diagonal correction the item precisions of the draw of G W
	// (e integrated out) differ even in a complete design.
	md.complete = md.isComplete(len(rs) == n*nl && !repeated) && md.f.Extra == nil
	md.pairM = nk == 2 && md.nFreeAlpha == nl && !md.f.Diag && md.sampler == mcmc.DefaultSampler
	md.trackGW = md.pairM && !md.complete && n >= gp.ExtraFromItems
	md.pairDiag = nk == 2 && md.nFreeAlpha == nl && md.f.Diag && md.sampler == mcmc.DefaultSampler
	if md.prec.fixed() {
		md.fixedD = make([]float64, n)
		for i, c := range md.itemCount {
			md.fixedD[i] = float64(c)
		}
	}
	if !md.f.Diag {
		if md.complete {
			r := md.f.R
			md.gt = make([]float64, r*n)
			for i := 0; i < n; i++ {
				for j := 0; j < r; j++ {
					md.gt[j*n+i] = md.f.G[i*r+j]
				}
			}
		} else {
			md.f.PrepareCG()
			md.buildPreconditioner(rs, opts)
		}
	}
	return md, nil
}

// vectors lists the label vectors of the labels rs (sorted by rater and
// item) and groups them by item: under fixed precisions one vector per
// (item, class) with eta labels (appendix B), otherwise one per label with
// its rater, ranges by rater in rStart.
func (md *classModel) vectors(rs []multirater.Rating) {
	if md.shared {
		// Appendix B: one vector per (item, class) with eta labels.
		type key struct{ item, class int }
		eta := map[key]int{}
		for _, r := range rs {
			eta[key{r.Item, r.Level}]++
		}
		keys := make([]key, 0, len(eta))
		for k := range eta {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].item != keys[j].item {
				return keys[i].item < keys[j].item
			}
			return keys[i].class < keys[j].class
		})
		for _, k := range keys {
			md.vecItem = append(md.vecItem, int32(k.item))
			md.vecClass = append(md.vecClass, int32(k.class))
			md.vecEta = append(md.vecEta, float64(eta[k]))
		}
		md.nFixedVec = len(keys)
	} else {
		md.rStart = make([]int, md.nl+1)
		for l := 0; l < md.nl; l++ {
			md.rStart[l+1] = md.rStart[l] + md.raterCount[l]
		}
		for _, r := range rs {
			md.vecItem = append(md.vecItem, int32(r.Item))
			md.vecClass = append(md.vecClass, int32(r.Level))
			md.vecRater = append(md.vecRater, int32(r.Rater))
			if md.fixedAlpha[r.Rater] {
				md.nFixedVec++
			}
		}
	}
	perItem := make([]int, md.n)
	for _, it := range md.vecItem {
		perItem[it]++
	}
	md.itemStart, md.itemVecs = design.ByItem(md.n, perItem, md.vecItem)
}

// isComplete reports whether the item precision sums are equal in every
// sweep: every item labelled, and under fixed precisions with the same
// number of labels, otherwise by every rater once (full).
func (md *classModel) isComplete(full bool) bool {
	for i := 0; i < md.n; i++ {
		if md.itemCount[i] == 0 {
			return false
		}
	}
	if !md.prec.fixed() {
		return full
	}
	for i := 1; i < md.n; i++ {
		if md.itemCount[i] != md.itemCount[0] {
			return false
		}
	}
	return true
}

// buildPreconditioner prepares the conjugate-gradient preconditioner of the
// incomplete-design M step (the ordinal model's block-Jacobi scheme): the
// diagonal of H = I + G' D G and its leading block, exact, over the
// eigendirections where H is far from diagonal. With inferred precisions D
// changes every sweep and the per-rater parts are kept (O(L r) and
// O(L k^2 + k^3) per sweep to combine); with fixed precisions D is fixed
// and the preconditioner is built once here.
func (md *classModel) buildPreconditioner(rs []multirater.Rating, opts Options) {
	f := md.f
	r := f.R
	dmax := 0.0
	for _, c := range md.itemCount {
		dmax = math.Max(dmax, float64(c))
	}
	if !md.prec.fixed() {
		dmax *= opts.V / opts.Lambda // prior mean precision per label
	}
	groups := md.nl
	if md.prec.fixed() {
		groups = 1
	}
	kb := f.PrecBlock(dmax, groups)
	md.precBlock = kb
	// Per-group sums over the labelled items of G_nj^2 and of the leading
	// block G_n,1:kb' G_n,1:kb; the group is the rater, or everything
	// (weighted by the item's label count) under fixed precisions.
	gsq := make([][]float64, groups)
	blk := make([][]float64, groups)
	for g := range gsq {
		gsq[g] = make([]float64, r)
		blk[g] = make([]float64, kb*kb)
	}
	for _, lab := range rs {
		g := lab.Rater
		if md.prec.fixed() {
			g = 0
		}
		row := f.G[lab.Item*r : (lab.Item+1)*r]
		gp.AddRowSquares(gsq[g], row)
		gp.AddRowGram(blk[g], row[:kb])
	}
	if !md.prec.fixed() {
		md.raterGsq = gsq
		if kb > 0 {
			md.raterBlock = blk
		}
		return
	}
	md.fixedDiag = gsq[0]
	for j := range md.fixedDiag {
		md.fixedDiag[j]++
	}
	if kb > 0 {
		ch := blk[0]
		for i := 0; i < kb; i++ {
			ch[i*kb+i]++
		}
		if choleskyLower(ch, kb) {
			md.fixedChol = ch
		} else {
			md.precBlock = 0
		}
	}
}
