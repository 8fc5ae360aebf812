// Package auc is the model family of AUC scoring (bipartite ranking):
// Ridgway, Alquier, Chopin & Liang's PAC-Bayesian pseudo-posterior on the
// empirical AUC risk. For items with covariates x_i and binary labels (n+
// positives, n- negatives) and a score s_i = s(x_i),
//
//	pi_gamma(s | D) ∝ pi(s) exp(-gamma R_n(s)),
//	R_n(s) = 1/(n+ n-) sum_{i positive, j negative} 1{s_i < s_j}
//
// (Ridgway et al. sec. 2.1 and 3.3: a misordered pair costs gamma/(n+ n-);
// the printed sign in sec. 3.4 and 4, 1{s_i - s_j > 0}, is a typo), with
//
//   - linear scores s_i = <theta, x_i>, theta ~ N(0, V I) (sec. 2.3), a
//     Gaussian process with the prior factor G = sqrt(V) X of rank d; or
//   - GP scores s ~ N(0, V K) for any concord kernel K (sec. 4), or the
//     best by evidence of several candidate kernels (Options.Kernels;
//     sec. 5 sets prior hyperparameters by evidence maximisation), or with
//     hyperparameters learnt by maximising log Z_EP (Options.LearnKernel,
//     L-BFGS with ep.PairResult.KernelGrad);
//   - linear scores with a spike-and-slab prior, theta_j ~ p N(0, V) +
//     (1 - p) N(0, v0) (sec. 2.4 and 3.4; Options.Prior): EP adds one prior
//     site per coefficient (ep.RunPairsCoords) and gives each covariate's
//     posterior inclusion probability; Path fits a decreasing sequence of
//     v0 (the regularisation path of sec. 5, Figure 3a), v0 = 0 being a
//     point mass.
//
// The exact pseudo-posterior of theta/|theta| (linear) or of s/sqrt(V)
// (GP) does not depend on the prior scale V: the risk depends only on the
// order of the scores. Its normaliser Z_gamma does not depend on V either
// (substitute s = sqrt(V) u), so "evidence maximisation over the prior
// scale" is vacuous; the EP approximation has the same invariance exactly
// (its fixed-point equations are equivariant under f -> c f: cavities,
// tilted moments and sites scale, the site normalisers and H do not;
// TestPriorScaleInvariance). Only the overall scale is vacuous: the
// shape of the kernel (an RBF's length-scale, the balance of the terms of
// a kernel sum such as rbf + white) changes the pseudo-posterior and its
// evidence (Options.Kernels chooses it by the evidence). The posterior of
// theta itself scales with sqrt(V); the direction theta/|theta|, the
// ranking and every AUC do not.
//
// Engines (Options.Engine):
//
//   - EP (the default): parallel EP with damping over the n+ n- pair
//     sites (sec. 3.3, ep.RunPairs with lik.AUCStep), in the whitened
//     coordinates of the prior factor, never inverting C. Costs per sweep
//     O(n+ n- d + N d^2 + d^3) for linear scores (the pairs' block path of
//     ep.RunPairs, in the weight space of dimension d; with d > N
//     covariates the dual form, C = V X X' of rank r <= N: O(n+ n- r +
//     N r^2 + r^3) after an O(N^2 d) start) and O(n+ n- r + N r^2 + r^3)
//     for GP scores (r <= N the numerical rank of K; the spike-and-slab
//     prior adds d coordinate sites and runs by pairs, O(n+ n- d^2)). The
//     n+ n- site updates (one erfc and one exp each,
//     lik.AUCStep.TiltedDerivs) are most of a linear fit's cost. It gives log Z_EP. On Pima.tr (200 items,
//     8,976 pairs) a linear fit takes about 0.05-0.3 s and a GP fit 0.2-0.5 s
//     on this project's 2-core machine (BenchmarkFitLinearEP,
//     docs/scripts/auc). EP is close to SMC while the pseudo-posterior is
//     close to Gaussian; its sds fall below SMC's as gamma grows (on
//     Pima.tr by up to 5% at gamma 50, 18% at 200, 26% at 1000), and so
//     does log Z_EP (by 0.04, 0.16, 0.29, 0.31 nats at gamma 10, 50, 200,
//     1000).
//
//     For linear scores with the Gaussian prior and at most as many
//     covariates as items (and at most radialMaxDim) the reported moments
//     add an exact correction (radialCorrect, unless Options.RawEP): the
//     pseudo-likelihood depends on theta only through its direction (the
//     signs of <theta, x_i - x_j>), so under the exact pseudo-posterior the
//     length of the whitened coefficients keeps its prior law, a chi with
//     d degrees of freedom, independently of the direction. EP's Gaussian
//     is used for the direction alone, theta = |w| u with u the direction
//     of a draw of EP's Gaussian, and |w| its exact chi law: the means and
//     sds are those of that product. On Pima.tr the sds' largest error
//     against the exact pseudo-posterior (testdata/pima_is_reference.csv)
//     falls from 4%, 17% and 27% at gamma 50, 200 and 1000 to 1-2%, and
//     the means' from 0.04-0.07 sd to below 0.02 sd. log Z_EP is
//     unchanged.
//
//   - SMC: tempering SMC (sec. 3.2, algorithm 1): adaptive tempering by
//     bisection on the ESS, multinomial resampling, Gaussian random-walk
//     Metropolis moves scaled by the particles' covariance; posterior
//     moments and log Z with Monte Carlo standard errors from independent
//     repeats. Costs O(P T K (N r + N log N)) for P particles, T
//     temperatures and K moves per temperature: the reference for EP, for
//     linear scores with few covariates (it runs for GP scores and the
//     spike-and-slab prior with v0 > 0 too, more slowly).
//
// At scale (Options.Pairs, Options.Rank): beyond DefaultPairs(N) pairs
// EP's sites are a seeded stratified sample of the (positive, negative)
// pairs (SamplePairs: every item in about as many pairs, each site with
// gamma/M for M sites, the incomplete U-statistic of the AUC risk), and
// its marginals come from RunPairs' by-items path, O(M r + N r^2) per
// sweep; GP scores' prior can be the low-rank pivoted (Nyström) factor of
// the kernel, O(N r^2) without an N×N matrix. On the shared ladder's
// 1,000 items the default sample (61,205 of 226,070 pairs) gives scores
// with Spearman 0.9998 to every pair's, linear and GP (docs/scaling.md).
// With several candidate kernels (Options.Kernels) the kernel is chosen
// once, by the evidence at the fixed gamma or at the median of the grid
// (chooseKernel), not again at every gamma in every fold.
//
// gamma is fixed (Options.Gamma) or chosen by stratified k-fold
// cross-validation of the held-out AUC of the posterior mean scores over a
// grid (Ridgway et al. sec. 2.2 and 5 recommend cross-validation for
// gamma); every candidate's CV AUC is reported with the choice.
//
// Fit returns per-item scores (posterior mean and sd), the coefficients of
// linear scores (mean, sd), the log evidence log Z_gamma, the training ROC
// curve and AUC of the posterior mean scores; Result.Predict scores new
// items (linear: x'theta; GP: the usual predictive
// s* | D ~ N(k*'C^+ E[s], k** - k*'C^+k* + k*'C^+ Cov[s] C^+k*)).
//
// Wiring (concord fit --model auc): --engine ep|smc is Options.Engine
// (ParseEngine); --scores linear is Options.Kernel nil, --scores gp
// --kernel SPEC sets Options.Kernel (kernel.ParseKernel) or
// Options.Kernels; --gamma G sets Options.Gamma, --gamma cv leaves it 0;
// --prior gaussian|spike-slab is Options.Prior (ParsePrior);
// --prior-scale V is Options.PriorScale; --standardize is
// Options.Standardize. Result marshals to JSON; Result.Predict scores new
// items.
package auc

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/kernel"
)

// Name is the model's name in the fit document.
const Name = "auc"

// Engine names the inference engine.
type Engine int

// ParseEngine reads an engine's name ("ep" or "smc").
func ParseEngine(s string) (Engine, error) { return engines().Parse(s) }

func (e Engine) String() string { return engines().String(e) }

// engines is the table of the Engine names.
func engines() multirater.Enum[Engine] {
	return multirater.Enum[Engine]{Type: "Engine", Names: []string{"ep", "smc"},
		Unknown: "auc: unknown engine %q (want ep or smc)"}
}

const (
	// EP is parallel EP with pair sites (Ridgway et al. sec. 3.3).
	EP Engine = iota
	// SMC is tempering SMC (sec. 3.2, algorithm 1).
	SMC
)

// MarshalText writes the engine's name.
func (e Engine) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText reads an engine's name.
func (e *Engine) UnmarshalText(b []byte) error { return engines().Unmarshal(b, e) }

// DefaultGammaGrid is the grid of gamma searched by cross-validation when
// Options.GammaGrid is empty.
var DefaultGammaGrid = []float64{1, 3, 10, 30, 100, 300, 1000}

// Data is what Fit fits: N items with covariates (row i of X) and labels.
type Data struct {
	// X holds the covariates, N×d (d >= 1).
	X *mat.Dense
	// Positive[i] is item i's label.
	Positive []bool
	// Names are the covariates' names (nil: x1, x2, ...).
	Names []string
}

// Options control Fit. The zero value means: linear scores, Gaussian prior
// with scale 1, covariates as given, EP, gamma by 5-fold cross-validation
// over DefaultGammaGrid with seed 0.
type Options struct {
	// Kernel, when not nil, gives GP scores s ~ N(0, PriorScale K(X, X))
	// (Ridgway et al. sec. 4); nil means linear scores s = X theta,
	// theta ~ N(0, PriorScale I).
	Kernel kernel.Kernel
	// Kernels, when not empty, are candidate kernels for GP scores (it
	// overrides Kernel): the candidate with the largest log evidence of
	// all the items at the fixed gamma, or at the median of GammaGrid when
	// gamma is cross-validated, is chosen once and used in every fold and
	// in the final fit (Ridgway et al. sec. 5 set the prior
	// hyperparameters by evidence maximisation and gamma by
	// cross-validation); the candidates' log evidence is reported in
	// Result.KernelEvidence, at Result.KernelGamma.
	Kernels []kernel.Kernel
	// Prior is the coefficients' prior for linear scores: Gaussian (the
	// default) or SpikeSlab (with SpikeSlab's parameters; not for GP
	// scores).
	Prior     Prior
	SpikeSlab SpikeSlabOptions
	// LearnKernel learns the hyperparameters of a Kernel (or of each of
	// Kernels) that is a kernel.Hyper (rbf, ard) by maximising log Z_EP at
	// each gamma, in every fold and in the final fit (L-BFGS from the given
	// values, with ep.PairResult.KernelGrad; Ridgway et al. sec. 5), EP
	// engine only; Result.Kernel is the learnt kernel. Each evaluation is
	// an EP run: expect tens per fit.
	LearnKernel bool
	// PriorScale is V; 0 means 1. The exact pseudo-posterior's shape and
	// log Z do not depend on it (see the package documentation).
	PriorScale float64
	// Standardize z-scores every covariate with the fitted items' mean and
	// sd (sample sd; a constant covariate is centred only); new items get
	// the same transformation.
	Standardize bool
	// Engine is EP (the default) or SMC; cross-validation of gamma runs the
	// same engine (with SMC, folds x grid full SMC runs).
	Engine Engine
	// Gamma > 0 fixes gamma; 0 chooses it by cross-validation.
	Gamma float64
	// GammaGrid are the candidates of cross-validation; nil means
	// DefaultGammaGrid.
	GammaGrid []float64
	// Folds is the number of cross-validation folds (stratified by label);
	// 0 means 5.
	Folds int
	// Seed seeds the folds and SMC (Result.Seed records it).
	Seed uint64
	// Pairs bounds EP's pair sites (SamplePairs): 0 means DefaultPairs of
	// the fitted items (every pair up to 2^16 of them, then a seeded
	// sample of about 40 per item), a positive value at most that many, a
	// negative value every pair. Each cross-validation fold samples its
	// own training items' pairs. SMC always uses every pair.
	Pairs int
	// Rank > 0 holds GP scores' prior covariance V K as a low-rank factor
	// G G' of at most Rank columns, the partial Cholesky decomposition
	// with pivoting of the kernel matrix (gp.NewPivotedFactorRank, O(N
	// Rank^2), no N×N matrix): the Nyström (subset of regressors) prior
	// on the pivot items, whose left-out trace Result.Residual reports;
	// new items' scores add their conditional variance given the pivots.
	// 0 keeps the dense matrix's eigendecomposition (O(N^3)). LearnKernel
	// always holds the kernel densely.
	Rank int
	// EP controls the EP engine (zero: ep.PairOptions' defaults, except
	// that with Tol 0 the cross-validation folds' fits converge to 1e-3,
	// cvTol, and the final fit to ep's 1e-6).
	EP ep.PairOptions
	// RawEP reports EP's Gaussian moments as they are, without the radial
	// correction of linear scores (see the package documentation).
	RawEP bool
	// SMC controls the SMC engine.
	SMC SMCOptions
	// Progress, when set, is called after each posterior fitted (every
	// fold, gamma and kernel of cross-validation, then the final fit) and
	// when the result is ready, one call at a time (cross-validation folds
	// run on several goroutines).
	Progress func(multirater.Progress)

	prog *progress
}

// progress counts the posterior fits of one Fit call (cross-validation
// folds report from several goroutines: one at a time).
type progress struct {
	mu          sync.Mutex
	f           func(multirater.Progress)
	start       time.Time
	done, total int
	phase       string
}

// step records one fit done and reports.
func (p *progress) step() {
	if p == nil || p.f == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.report()
}

func (p *progress) report() {
	fr := math.Min(float64(p.done)/float64(p.total), 1)
	el := time.Since(p.start)
	var eta time.Duration
	if fr > 0 && fr < 1 {
		eta = time.Duration(float64(el) * (1 - fr) / fr)
	}
	p.f(multirater.Progress{Fraction: fr, Elapsed: el, ETA: eta, Phase: p.phase})
}

// Score is a posterior summary of one item's score.
type Score struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
}

// Coefficient is the posterior of one covariate's coefficient (linear
// scores): Inclusion is the posterior inclusion probability (1 under the
// Gaussian prior, where every covariate is in the model).
type Coefficient struct {
	Name      string  `json:"name"`
	Mean      float64 `json:"mean"`
	SD        float64 `json:"sd"`
	Inclusion float64 `json:"inclusion"`
	// MeanSE and SDSE are the Monte Carlo standard errors of Mean and SD
	// (SMC; 0 for EP).
	MeanSE float64 `json:"mean_se,omitempty"`
	SDSE   float64 `json:"sd_se,omitempty"`
}

// CVRow is one gamma candidate's cross-validation result: the mean over
// the folds of the held-out AUC of the posterior mean scores, and its
// standard error over the folds.
type CVRow struct {
	Gamma float64 `json:"gamma"`
	AUC   float64 `json:"auc"`
	SE    float64 `json:"se"`
}

// KernelRow is one candidate kernel's log evidence at the fit's gamma.
type KernelRow struct {
	Kernel      string  `json:"kernel"`
	LogEvidence float64 `json:"log_evidence"`
}

// Result is a fitted AUC scoring model. Its exported fields marshal to
// JSON (Engine and Prior as their names).
type Result struct {
	Engine Engine `json:"engine"`
	// Scores is "linear" or "gp"; Kernel the kernel's specification (the
	// chosen one among Options.Kernels, whose log evidences are in
	// KernelEvidence; with its learnt hyperparameters under LearnKernel).
	Scores         string      `json:"scores"`
	Kernel         string      `json:"kernel,omitempty"`
	KernelEvidence []KernelRow `json:"kernel_evidence,omitempty"`
	PriorScale     float64     `json:"prior_scale"`
	// Prior is the coefficients' prior (linear scores).
	Prior Prior `json:"prior"`
	// Gamma is the gamma used; GammaByCV tells whether cross-validation
	// chose it, and CV holds the result of every candidate that could be
	// fitted in every fold; Notes say which were dropped and why.
	Gamma     float64  `json:"gamma"`
	GammaByCV bool     `json:"gamma_by_cv"`
	CV        []CVRow  `json:"cv,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	// Items are the fitted items' score posteriors; Coefficients the
	// covariates' (linear scores only).
	Items        []Score       `json:"items"`
	Coefficients []Coefficient `json:"coefficients,omitempty"`
	// LogEvidence is log Z_gamma (EP: log Z_EP; SMC: the mean over the
	// repeats, with LogEvidenceSE its Monte Carlo standard error).
	LogEvidence   float64 `json:"log_evidence"`
	LogEvidenceSE float64 `json:"log_evidence_se,omitempty"`
	// TrainAUC and ROC are those of the posterior mean scores on the
	// fitted items.
	TrainAUC float64    `json:"train_auc"`
	ROC      []ROCPoint `json:"roc"`
	// Pairs is n+ n-; PairSites the number of EP's pair sites, fewer than
	// Pairs when they are a sample (Options.Pairs, SamplePairs). Sweeps,
	// Negative and Clamped are EP's (see ep.PairResult).
	Pairs     int `json:"pairs"`
	PairSites int `json:"pair_sites"`
	// KernelGamma is the gamma at which the kernel was chosen among
	// Options.Kernels (once, before the cross-validation: the middle of
	// the grid, or the fixed gamma); KernelEvidence holds the candidates'
	// log evidence there.
	KernelGamma float64 `json:"kernel_gamma,omitempty"`
	// Rank and Residual are GP scores' low-rank prior (Options.Rank): its
	// rank and the trace of V K that it leaves out, relative to the
	// trace (0 for a dense prior).
	Rank     int     `json:"rank,omitempty"`
	Residual float64 `json:"residual,omitempty"`
	Sweeps   int     `json:"sweeps,omitempty"`
	Negative int     `json:"negative_sites,omitempty"`
	Clamped  int     `json:"clamped_sites,omitempty"`
	// SMC holds the SMC engine's diagnostics (nil for EP).
	SMC *SMCStats `json:"smc,omitempty"`
	// Center and Scale are the standardisation (nil when not standardised).
	Center  []float64     `json:"center,omitempty"`
	Scale   []float64     `json:"scale,omitempty"`
	Seed    uint64        `json:"seed"`
	Elapsed time.Duration `json:"elapsed_ns"`

	model *model
	wMean []float64
	wCov  *mat.SymDense
}

// model is the prior of the fitted items in whitened coordinates: the
// scores are s = G w, w ~ N(0, I_r).
type model struct {
	n, r, d int       // items, whitened dimension, covariates
	g       []float64 // n×r
	// linear: sqrt(V) (theta = sqrt(V) w, G = sqrt(V) X) when d <= n; for
	// d > n (the dual form) theta = B w + e with B (d×r, see newModel).
	linear bool
	sv     float64
	b      []float64
	// GP: the kept eigenvectors q (n×r) and eigenvalues lam of C = V K,
	// G = Q Lam^1/2; the kernel and the fitted items' covariates.
	q, lam []float64
	kern   kernel.Kernel
	x      *mat.Dense
	v      float64
	// fac is GP scores' low-rank factor (Options.Rank; nil: q and lam),
	// resid its left-out trace relative to the trace of C, kp scratch of
	// the pivots' covariances for fac.WhitenTo.
	fac   *gp.Factor
	resid float64
	kp    []float64
	// pairs are EP's pair sites' items (pairSites: drawn once), allPairs
	// whether they are every pair; stream the pair sample generator's
	// stream (0 for the final fit, fold+1 in cross-validation).
	pairs    [][2]int
	allPairs bool
	stream   uint64
}

// newModels builds the prior factor of the items x for every candidate
// kernel (Options.Kernels, else Options.Kernel); a cancelled ctx stops it
// between two (each a dense eigendecomposition without Options.Rank).
func newModels(ctx context.Context, x *mat.Dense, o *Options) ([]*model, error) {
	ks := o.Kernels
	if len(ks) == 0 {
		ks = []kernel.Kernel{o.Kernel}
	}
	ms := make([]*model, len(ks))
	for i, k := range ks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := newModel(x, k, o)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	return ms, nil
}

// newModel builds the prior factor of the items x for kernel k (nil:
// linear scores).
//
// Linear scores with d <= n covariates use G = sqrt(V) X (r = d,
// theta = sqrt(V) w). With more covariates than items (the dual form) the
// scores f = X theta have the covariance C = V X X' of rank r <= n, the
// factor is G = Q Lam^1/2 of its kept eigendirections (gp.KeptEigen), and
// theta = B w + e with B = V X' Q Lam^-1/2 (d×r) and e ~ N(0, V(I - V X'C^+X))
// independent of the scores (the part of the prior the items do not
// see): E[theta] = B E[w], Var[theta_k] = (B Cov[w] B')_kk + V - (B B')_kk,
// and a new item x scores u'w + x'e with u = B'x, Var[x'e] = V|x|^2 - |u|^2.
// Costs O(n^2 d + n^3) instead of O(d^3) per fit.
func newModel(x *mat.Dense, k kernel.Kernel, o *Options) (*model, error) {
	n, d := x.Dims()
	if k == nil && d > n {
		return newDualModel(x, o)
	}
	if k == nil {
		m := &model{n: n, r: d, d: d, linear: true, sv: math.Sqrt(o.PriorScale), g: make([]float64, n*d)}
		for i := 0; i < n; i++ {
			for k := 0; k < d; k++ {
				m.g[i*d+k] = m.sv * x.At(i, k)
			}
		}
		return m, nil
	}
	if o.Rank > 0 {
		return newLowRankModel(x, k, o)
	}
	var c mat.SymDense
	k.GramTo(&c, kernel.Inputs{N: n, X: x})
	c.ScaleSym(o.PriorScale, &c)
	q, lam, err := gp.KeptEigen(&c)
	if err != nil {
		return nil, err
	}
	r := len(lam)
	if r == 0 {
		return nil, multirater.DataErrorf("auc: the kernel matrix is zero")
	}
	m := &model{n: n, r: r, d: d, q: q, lam: lam, kern: k, x: x, v: o.PriorScale, g: make([]float64, n*r)}
	for i := 0; i < n; i++ {
		for k := 0; k < r; k++ {
			m.g[i*r+k] = q[i*r+k] * math.Sqrt(lam[k])
		}
	}
	return m, nil
}

// newDualModel is newModel's dual form of linear scores (d > n).
func newDualModel(x *mat.Dense, o *Options) (*model, error) {
	n, d := x.Dims()
	v := o.PriorScale
	c := mat.NewSymDense(n, nil)
	c.SymOuterK(v, x)
	q, lam, err := gp.KeptEigen(c)
	if err != nil {
		return nil, err
	}
	r := len(lam)
	if r == 0 {
		return nil, multirater.DataErrorf("auc: every covariate is 0")
	}
	m := &model{n: n, r: r, d: d, linear: true, sv: math.Sqrt(v), v: v, g: make([]float64, n*r), b: make([]float64, d*r)}
	for i := 0; i < n; i++ {
		for k := 0; k < r; k++ {
			m.g[i*r+k] = q[i*r+k] * math.Sqrt(lam[k])
		}
	}
	// B = V X'Q Lam^-1/2.
	bm := mat.NewDense(d, r, m.b)
	bm.Mul(x.T(), mat.NewDense(n, r, q))
	for j := 0; j < d; j++ {
		row := m.b[j*r : (j+1)*r]
		for k := range row {
			row[k] *= v / math.Sqrt(lam[k])
		}
	}
	return m, nil
}

// coefficientTo returns covariate k's posterior mean and sd under the
// whitened posterior (mean, cov), and the factor mapping the whitened
// Monte Carlo errors (primal form; 0 in the dual form, whose errors are
// not reported).
func (m *model) coefficient(k int, mean []float64, cov *mat.SymDense) (mu, sd, seScale float64) {
	if m.b == nil {
		return m.sv * mean[k], m.sv * math.Sqrt(cov.At(k, k)), m.sv
	}
	bk := mat.NewVecDense(m.r, m.b[k*m.r:(k+1)*m.r])
	var t mat.VecDense
	t.MulVec(cov, bk)
	vr := mat.Dot(bk, &t) + m.v - mat.Dot(bk, bk)
	return mat.Dot(bk, mat.NewVecDense(m.r, mean)), math.Sqrt(math.Max(vr, 0)), 0
}

// factor returns the model's prior factor for the EP engine.
func (m *model) factor() *gp.Factor {
	return &gp.Factor{N: m.n, R: m.r, G: m.g}
}

// loadingsTo sets u (length r) to the whitened loadings of new items'
// scores, s_new = u'w + e, e ~ N(0, cv) independent of w, and returns cv:
// linear u = sqrt(V) x; GP u = Lam^-1/2 Q'k and cv = k** - |u|^2 with k
// the new item's covariances V k(x, X) and k** = V k(x, x) (the GP
// conditional on the kept eigendirections, gp.KeptEigen).
func (m *model) loadingsTo(u []float64, xnew *mat.Dense, cross *mat.Dense, kss []float64, i int) float64 {
	if m.linear && m.b == nil {
		for k := range u {
			u[k] = m.sv * xnew.At(i, k)
		}
		return 0
	}
	if m.linear {
		// u = B'x, cv = V|x|^2 - |u|^2.
		for k := range u {
			u[k] = 0
		}
		x2 := 0.0
		for j := 0; j < m.d; j++ {
			xj := xnew.At(i, j)
			x2 += xj * xj
			if xj != 0 {
				floats.AddScaled(u, xj, m.b[j*m.r:(j+1)*m.r])
			}
		}
		return math.Max(m.v*x2-floats.Dot(u, u), 0)
	}
	if m.fac != nil {
		for t, p := range m.fac.Pivots[:m.r] {
			m.kp[p] = m.v * cross.At(i, t)
		}
		return m.fac.WhitenTo(u, m.kp, m.v*kss[i])
	}
	for k := range u {
		u[k] = 0
	}
	for row := 0; row < m.n; row++ {
		c := m.v * cross.At(i, row)
		if c == 0 {
			continue
		}
		floats.AddScaled(u, c, m.q[row*m.r:(row+1)*m.r])
	}
	cv := m.v * kss[i]
	for k := range u {
		u[k] /= math.Sqrt(m.lam[k])
		cv -= u[k] * u[k]
	}
	return math.Max(cv, 0)
}

// posterior is a fitted posterior in whitened coordinates.
type posterior struct {
	mean  []float64
	cov   *mat.SymDense
	logZ  float64
	logSE float64
	ep    *ep.PairResult
	// incl are the coefficients' posterior inclusion probabilities
	// (spike-and-slab prior; nil: 1).
	incl []float64
	smc  *SMCStats
}

// splitClasses returns the indices of the positive and negative items.
func splitClasses(y []bool) (pos, neg []int) {
	for i, v := range y {
		if v {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	return pos, neg
}

// fitSelected fits the posterior at gamma for every candidate model and
// returns the one with the largest log evidence (Ridgway et al. sec. 5:
// prior hyperparameters by evidence maximisation), its index and every
// candidate's log evidence. Each candidate's fit (SMC) draws from a fresh
// generator of newRand, so that a candidate's posterior does not depend on
// the others fitted before it.
func fitSelected(ctx context.Context, ms []*model, y []bool, gamma float64, o *Options, newRand func() *rand.Rand) (*model, *posterior, int, []float64, error) {
	var best *posterior
	var bm *model
	bi := 0
	lz := make([]float64, len(ms))
	for i, m := range ms {
		if err := ctx.Err(); err != nil {
			return nil, nil, 0, nil, err
		}
		var p *posterior
		var err error
		if _, ok := m.kern.(kernel.Hyper); ok && o.LearnKernel {
			m, p, err = learnKernel(ctx, m, y, gamma, o)
		} else {
			p, err = fitPosterior(ctx, m, y, gamma, o, newRand())
		}
		if err != nil {
			return nil, nil, 0, nil, err
		}
		lz[i] = p.logZ
		if best == nil || p.logZ > best.logZ {
			best, bm, bi = p, m, i
		}
	}
	return bm, best, bi, lz, nil
}

// fitPosterior fits one posterior of the model's items at gamma.
func fitPosterior(ctx context.Context, m *model, y []bool, gamma float64, o *Options, rng *rand.Rand) (*posterior, error) {
	pos, neg := splitClasses(y)
	if o.Engine == SMC {
		pr := smcPrior{}
		if o.Prior == SpikeSlab {
			if m.b != nil {
				return nil, multirater.DataErrorf("auc: the spike-and-slab prior needs at most as many covariates (%d) as items (%d)", m.d, m.n)
			}
			pr = smcPrior{mix: true, p: o.SpikeSlab.Inclusion, u0: o.SpikeSlab.SpikeVar / o.PriorScale}
		}
		p, err := runSMC(ctx, m, pos, neg, gamma, o.SMC, pr, rng)
		o.prog.step()
		return p, err
	}
	sites := m.pairSites(y, gamma, o)
	var coords []ep.CoordSite
	if o.Prior == SpikeSlab {
		if m.b != nil {
			return nil, multirater.DataErrorf("auc: the spike-and-slab prior needs at most as many covariates (%d) as items (%d)", m.d, m.n)
		}
		coords = coordSites(m.r, o)
	}
	eo := o.EP
	eo.Stop = ctx.Err
	res, err := ep.RunPairsCoords(m.factor(), sites, coords, eo)
	o.prog.step()
	if err != nil {
		return nil, fmt.Errorf("auc: EP at gamma %v: %w", gamma, err)
	}
	cov := mat.NewSymDense(m.r, nil)
	res.WCovTo(cov)
	p := &posterior{mean: res.W, cov: cov, logZ: res.LogZ, ep: res}
	if !o.RawEP && o.Prior == Gaussian && m.linear && m.b == nil && m.r <= radialMaxDim {
		// Its own generator, seeded by Seed alone: the same fit gives the
		// same moments wherever it is made (cross-validation folds, the
		// final fit, predict's refit).
		radialCorrect(p, rand.New(rand.NewPCG(o.Seed, 0x72616469616c)))
	}
	if len(coords) > 0 {
		p.incl = make([]float64, m.r)
		l := coords[0].Lik.(spikeSlabSite)
		for k := range coords {
			cm, cv, ok := res.Cavity(len(sites) + k)
			if !ok {
				return nil, fmt.Errorf("auc: EP at gamma %v: coefficient %d has an improper cavity", gamma, k)
			}
			_, rho, _ := l.parts(cm, cv)
			p.incl[k] = 1 - rho
		}
	}
	return p, nil
}

// scoresTo sets the fitted items' posterior mean scores G E[w] and, when
// sd is not nil, their sds sqrt(g_i' Cov[w] g_i).
func (m *model) scoresTo(mean, sd []float64, p *posterior) {
	r := m.r
	tmp := mat.NewVecDense(r, nil)
	for i := 0; i < m.n; i++ {
		g := m.g[i*r : (i+1)*r]
		mean[i] = floats.Dot(g, p.mean)
		if sd != nil {
			gv := mat.NewVecDense(r, g)
			tmp.MulVec(p.cov, gv)
			sd[i] = math.Sqrt(math.Max(mat.Dot(gv, tmp), 0))
		}
	}
}

// Fit fits the AUC scoring model to the data. A cancelled ctx stops it
// with ctx's error within an EP sweep (ep.PairOptions.Stop), an evaluation
// of a learnt kernel's evidence or moveCheck particles of an SMC move. Caller bugs (lengths, negative
// options) panic with "auc: ..."; data failures (a class without items,
// non-finite covariates, EP not converging) return errors.
func Fit(ctx context.Context, d Data, opts Options) (*Result, error) {
	start := time.Now()
	n, dim := d.dims()
	o := opts.withDefaults()
	nk := max(len(o.Kernels), 1)
	o.prog = &progress{f: o.Progress, start: start, total: nk, phase: "fitting"}
	if o.Gamma == 0 {
		// The kernel is chosen once (chooseKernel), then each fold fits
		// one kernel at each gamma, and the final fit one.
		o.prog.total += o.Folds * len(o.GammaGrid)
		if len(o.Kernels) > 0 {
			o.prog.total++
		}
		o.prog.phase = "cross-validation"
	}
	pos, neg, err := d.check()
	if err != nil {
		return nil, err
	}
	x := mat.DenseCopyOf(d.X)
	res := &Result{Engine: o.Engine, Prior: o.Prior, Scores: "linear", PriorScale: o.PriorScale, Seed: o.Seed, Pairs: len(pos) * len(neg)}
	if o.Kernel != nil || len(o.Kernels) > 0 {
		res.Scores = "gp"
	}
	if o.Kernel != nil {
		res.Kernel = o.Kernel.String()
	}
	if o.Standardize {
		res.Center, res.Scale = standardize(x)
	}
	// The final fit's generator is seeded from Seed alone, whatever
	// cross-validation drew: a fit whose gamma (or kernel) was chosen
	// gives the posterior of a fit with that choice fixed, which is what
	// predict repeats.
	newRand := func() *rand.Rand { return rand.New(rand.NewPCG(o.Seed, 0x617563)) }
	rng := newRand()
	res.Gamma = o.Gamma
	var chosen *chosenKernel
	if len(o.Kernels) > 0 {
		if chosen, err = chooseKernel(ctx, x, d.Positive, &o, newRand); err != nil {
			return nil, err
		}
		res.KernelGamma, res.KernelEvidence = chosen.gamma, chosen.rows
		o.Kernel, o.Kernels = chosen.kernel, nil
	}
	if o.Gamma == 0 {
		cv, best, err := crossValidate(ctx, x, d.Positive, &o, rng, &res.Notes)
		if err != nil {
			return nil, err
		}
		res.CV, res.Gamma, res.GammaByCV = cv, best, true
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.prog.phase = "fitting"
	var m *model
	var p *posterior
	if chosen != nil && chosen.gamma == res.Gamma {
		// The choice's fit at the fixed gamma is the final fit.
		m, p = chosen.m, chosen.p
	} else {
		ms, err := newModels(ctx, x, &o)
		if err != nil {
			return nil, err
		}
		if m, p, _, _, err = fitSelected(ctx, ms, d.Positive, res.Gamma, &o, newRand); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		// Cancelled as the last fit ended: no summary.
		return nil, err
	}
	if m.kern != nil {
		res.Kernel = m.kern.String()
	}
	res.PairSites = res.Pairs
	if m.pairs != nil {
		res.PairSites = len(m.pairs)
	}
	if m.fac != nil {
		res.Rank, res.Residual = m.r, m.resid
	}
	res.model, res.wMean, res.wCov = m, p.mean, p.cov
	res.LogEvidence, res.LogEvidenceSE = p.logZ, p.logSE
	if p.ep != nil {
		res.Sweeps, res.Negative, res.Clamped = p.ep.Sweeps, p.ep.Negative, p.ep.Clamped
	}
	res.SMC = p.smc
	mean, sd := make([]float64, n), make([]float64, n)
	m.scoresTo(mean, sd, p)
	res.Items = make([]Score, n)
	for i := range mean {
		res.Items[i] = Score{Mean: mean[i], SD: sd[i]}
	}
	res.TrainAUC = AUC(mean, d.Positive)
	res.ROC = ROC(mean, d.Positive)
	if m.linear {
		res.Coefficients = coefficients(m, p, d.Names, dim)
	}
	res.Elapsed = time.Since(start)
	if o.Progress != nil {
		o.prog.done, o.prog.phase = o.prog.total, "done"
		o.prog.report()
	}
	return res, nil
}

// chosenKernel is the kernel chosen once among Options.Kernels
// (chooseKernel): at gamma, the candidates' log evidence rows, and the
// chosen one's model and posterior.
type chosenKernel struct {
	kernel kernel.Kernel
	gamma  float64
	rows   []KernelRow
	m      *model
	p      *posterior
}

// chooseKernel chooses GP scores' kernel among Options.Kernels once, by
// the largest log evidence of the fits of all the items (Ridgway et al.
// sec. 5: prior hyperparameters by evidence maximisation) at the fixed
// gamma, or, when gamma is chosen by cross-validation, at the middle of
// the grid (its median: 30 for DefaultGammaGrid); the folds and the final
// fit then use that kernel, instead of choosing again at every gamma in
// every fold (which costs as many fits again as there are candidates).
func chooseKernel(ctx context.Context, x *mat.Dense, y []bool, o *Options, newRand func() *rand.Rand) (*chosenKernel, error) {
	gamma := o.Gamma
	if gamma == 0 {
		g := slices.Clone(o.GammaGrid)
		slices.Sort(g)
		gamma = g[(len(g)-1)/2]
	}
	ms, err := newModels(ctx, x, o)
	if err != nil {
		return nil, err
	}
	m, p, bi, lzs, err := fitSelected(ctx, ms, y, gamma, o, newRand)
	if err != nil {
		return nil, err
	}
	c := &chosenKernel{kernel: o.Kernels[bi], gamma: gamma, m: m, p: p}
	if m.kern != nil {
		// A learnt kernel (LearnKernel) is the chosen one's learnt form.
		c.kernel = m.kern
	}
	for i, k := range o.Kernels {
		c.rows = append(c.rows, KernelRow{Kernel: k.String(), LogEvidence: lzs[i]})
	}
	return c, nil
}

// dims returns the items and covariates of d; it panics when the labels
// or names do not match X.
func (d Data) dims() (n, dim int) {
	if d.X == nil {
		panic("auc: Fit: nil X")
	}
	n, dim = d.X.Dims()
	if len(d.Positive) != n {
		panic(fmt.Sprintf("auc: Fit: %d labels for %d items", len(d.Positive), n))
	}
	if d.Names != nil && len(d.Names) != dim {
		panic(fmt.Sprintf("auc: Fit: %d names for %d covariates", len(d.Names), dim))
	}
	return n, dim
}

// check returns the positive and negative items, or a data error when a
// class has none or a covariate is not finite.
func (d Data) check() (pos, neg []int, err error) {
	pos, neg = splitClasses(d.Positive)
	if len(pos) == 0 || len(neg) == 0 {
		return nil, nil, multirater.DataErrorf("auc: %d positive and %d negative items: both classes are needed", len(pos), len(neg))
	}
	n, dim := d.X.Dims()
	for i := 0; i < n; i++ {
		for k := 0; k < dim; k++ {
			if v := d.X.At(i, k); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, multirater.DataErrorf("auc: covariate %d of item %d is %v", k, i, v)
			}
		}
	}
	return pos, neg, nil
}

// coefficients returns the linear score's coefficients on the covariates
// as given (names, or x1, x2, ...): posterior mean and sd, inclusion
// probability (spike and slab), and SMC's Monte Carlo errors.
func coefficients(m *model, p *posterior, names []string, dim int) []Coefficient {
	out := make([]Coefficient, dim)
	for k := range out {
		name := fmt.Sprintf("x%d", k+1)
		if names != nil {
			name = names[k]
		}
		mu, sd, se := m.coefficient(k, p.mean, p.cov)
		out[k] = Coefficient{Name: name, Mean: mu, SD: sd, Inclusion: 1}
		if p.incl != nil {
			out[k].Inclusion = p.incl[k]
		}
		if p.smc != nil && se > 0 {
			out[k].MeanSE = se * p.smc.MeanSE[k]
			out[k].SDSE = se * p.smc.SDSE[k]
		}
	}
	return out
}

func (o Options) withDefaults() Options {
	if o.PriorScale == 0 {
		o.PriorScale = 1
	}
	if !(o.PriorScale > 0) || math.IsInf(o.PriorScale, 0) {
		panic(fmt.Sprintf("auc: PriorScale %v must be positive", o.PriorScale))
	}
	if o.Gamma < 0 || math.IsNaN(o.Gamma) || math.IsInf(o.Gamma, 0) {
		panic(fmt.Sprintf("auc: Gamma %v must be finite and >= 0", o.Gamma))
	}
	if o.GammaGrid == nil {
		o.GammaGrid = DefaultGammaGrid
	}
	for _, g := range o.GammaGrid {
		if !(g > 0) || math.IsInf(g, 0) {
			panic(fmt.Sprintf("auc: GammaGrid value %v must be positive", g))
		}
	}
	for _, k := range o.Kernels {
		if k == nil {
			panic("auc: nil kernel among Options.Kernels")
		}
	}
	if o.Prior != Gaussian && o.Prior != SpikeSlab {
		panic(fmt.Sprintf("auc: unknown prior %v", o.Prior))
	}
	if o.Prior == SpikeSlab {
		if o.Kernel != nil || len(o.Kernels) > 0 {
			panic("auc: the spike-and-slab prior is for linear scores (no kernel)")
		}
		if o.SpikeSlab.Inclusion == 0 {
			o.SpikeSlab.Inclusion = 0.5
		}
		if !(o.SpikeSlab.Inclusion > 0 && o.SpikeSlab.Inclusion < 1) {
			panic(fmt.Sprintf("auc: spike-and-slab Inclusion %v outside (0, 1)", o.SpikeSlab.Inclusion))
		}
		if !(o.SpikeSlab.SpikeVar >= 0 && o.SpikeSlab.SpikeVar < o.PriorScale) {
			panic(fmt.Sprintf("auc: spike variance %v outside [0, PriorScale = %v)", o.SpikeSlab.SpikeVar, o.PriorScale))
		}
		if o.Engine == SMC && o.SpikeSlab.SpikeVar == 0 {
			panic("auc: SMC needs a spike variance > 0 (a point-mass spike has no density for its moves)")
		}
	}
	if o.LearnKernel && o.Engine != EP {
		panic("auc: LearnKernel needs the EP engine")
	}
	if o.Folds == 0 {
		o.Folds = 5
	}
	if o.Folds < 2 {
		panic(fmt.Sprintf("auc: Folds %d must be at least 2", o.Folds))
	}
	if o.Engine != EP && o.Engine != SMC {
		panic(fmt.Sprintf("auc: unknown engine %v", o.Engine))
	}
	o.SMC = o.SMC.withDefaults()
	return o
}

// standardize z-scores the columns of x in place and returns the centres
// and scales (scale 1 for a constant column).
func standardize(x *mat.Dense) (center, scale []float64) {
	n, d := x.Dims()
	center, scale = make([]float64, d), make([]float64, d)
	for k := 0; k < d; k++ {
		col := mat.Col(nil, k, x)
		mu := floats.Sum(col) / float64(n)
		ss := 0.0
		for _, v := range col {
			ss += (v - mu) * (v - mu)
		}
		sd := 1.0
		if n > 1 && ss > 0 {
			sd = math.Sqrt(ss / float64(n-1))
		}
		center[k], scale[k] = mu, sd
		for i := 0; i < n; i++ {
			x.Set(i, k, (col[i]-mu)/sd)
		}
	}
	return center, scale
}

// Predict returns the posterior predictive scores of new items (rows of
// xnew, covariates as given to Fit: the fit's standardisation is applied).
// Linear scores: s* = x*'theta, mean x*'E[theta] and variance
// x*'Cov[theta]x*. GP scores: mean u'E[w] and variance
// k** - |u|^2 + u'Cov[w]u with u = Lam^-1/2 Q'k* (the kept eigendirections
// of C; O(N r) per item).
func (r *Result) Predict(xnew *mat.Dense) []Score {
	m := r.model
	nn, d := xnew.Dims()
	if dx := r.dims(); d != dx {
		panic(fmt.Sprintf("auc: Predict: %d covariates, the fit had %d", d, dx))
	}
	x := mat.DenseCopyOf(xnew)
	if r.Center != nil {
		for i := 0; i < nn; i++ {
			for k := 0; k < d; k++ {
				x.Set(i, k, (x.At(i, k)-r.Center[k])/r.Scale[k])
			}
		}
	}
	var cross *mat.Dense
	var kss []float64
	if !m.linear {
		// A low-rank prior reads the new items' covariances with the
		// pivot items only.
		xs := m.x
		if m.fac != nil {
			xs = rows(m.x, m.fac.Pivots[:m.r])
		}
		ns, _ := xs.Dims()
		cross = mat.NewDense(nn, ns, nil)
		m.kern.CrossTo(cross, kernel.Inputs{N: nn, X: x}, kernel.Inputs{N: ns, X: xs})
		kss = m.kern.DiagTo(nil, kernel.Inputs{N: nn, X: x})
	}
	out := make([]Score, nn)
	u := make([]float64, m.r)
	uv := mat.NewVecDense(m.r, u)
	tmp := mat.NewVecDense(m.r, nil)
	for i := 0; i < nn; i++ {
		cv := m.loadingsTo(u, x, cross, kss, i)
		tmp.MulVec(r.wCov, uv)
		out[i] = Score{Mean: floats.Dot(u, r.wMean), SD: math.Sqrt(math.Max(cv+mat.Dot(uv, tmp), 0))}
	}
	return out
}

// dims is the number of covariates of the fitted items.
func (r *Result) dims() int {
	return r.model.d
}

// PredictMeansTo sets dst to the posterior mean scores of new items and
// returns it (allocated when nil).
func (r *Result) PredictMeansTo(dst []float64, xnew *mat.Dense) []float64 {
	s := r.Predict(xnew)
	if dst == nil {
		dst = make([]float64, len(s))
	}
	for i, v := range s {
		dst[i] = v.Mean
	}
	return dst
}

// radialDraws is the number of draws of EP's Gaussian in radialCorrect,
// radialMaxDim the largest whitened dimension it is applied to (its cost
// is O(radialDraws r^2)).
const radialDraws, radialMaxDim = 50000, 64

// radialCorrect replaces the EP posterior's moments of the whitened
// coefficients w (prior N(0, I_r)) by those of |w| u, with u the
// direction of w under EP's Gaussian N(mean, cov) and |w| independent of
// it with its prior law, chi with r degrees of freedom: the exact law of
// the length under a pseudo-likelihood that depends on the direction of w
// only (Ridgway et al.'s AUC risk for linear scores). E[w] = E|w| E[u] and
// E[w w'] = r E[u u'], with E|w| = sqrt(2) Gamma((r+1)/2) / Gamma(r/2) and
// E[u], E[u u'] by radialDraws draws from rng. A covariance that is not
// positive definite leaves EP's moments in place.
func radialCorrect(p *posterior, rng *rand.Rand) {
	r := len(p.mean)
	var chol mat.Cholesky
	if !chol.Factorize(p.cov) {
		return
	}
	var lt mat.TriDense
	chol.LTo(&lt)
	raw := lt.RawTriangular()
	l, ls := raw.Data, raw.Stride
	z, w := make([]float64, r), make([]float64, r)
	eu, euu := make([]float64, r), make([]float64, r*r)
	for s := 0; s < radialDraws; s++ {
		for k := range z {
			z[k] = rng.NormFloat64()
		}
		for i := 0; i < r; i++ {
			v := p.mean[i]
			v += floats.Dot(l[i*ls:i*ls+i+1], z[:i+1])
			w[i] = v
		}
		nrm := floats.Norm(w, 2)
		if nrm == 0 {
			continue
		}
		floats.Scale(1/nrm, w)
		floats.Add(eu, w)
		for i := 0; i < r; i++ {
			for j := 0; j <= i; j++ {
				euu[i*r+j] += w[i] * w[j]
			}
		}
	}
	lg1, _ := math.Lgamma(float64(r+1) / 2)
	lg0, _ := math.Lgamma(float64(r) / 2)
	er := math.Sqrt2 * math.Exp(lg1-lg0)
	mean := make([]float64, r)
	for i := range mean {
		mean[i] = er * eu[i] / radialDraws
	}
	cov := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := 0; j <= i; j++ {
			cov.SetSym(i, j, float64(r)*euu[i*r+j]/radialDraws-mean[i]*mean[j])
		}
	}
	p.mean, p.cov = mean, cov
}
