package ordinal

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/design"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/infer"
	"concord/multirater/laplace"
	"concord/multirater/lik"
	"concord/multirater/mcmc"
	"concord/multirater/numeric"
)

// DetOptions control FitDeterministic. The zero value means the defaults
// given for each field.
type DetOptions struct {
	// Engine is multirater.EngineEP (the default) or
	// multirater.EngineLaplace.
	Engine string
	// Sigma, when positive, fixes every rater's noise sd sigma_l; zero means
	// each rater's sigma is learnt.
	Sigma float64
	// Thresholds, when it has K-1 increasing values, fixes every rater's
	// thresholds; empty means each rater's thresholds are learnt.
	Thresholds []float64
	// Noise is PerRater (the default, "" too: each rater's
	// thresholds and noise sd are their own), SharedThresholds (one set of
	// thresholds for every rater, each rater's own noise sd), Shared (one
	// noise sd and one set of thresholds for every rater: raters alike) or
	// Auto (the three, with each prior of Data and Data.Alt, fitted and
	// the one with the largest penalised log evidence kept; see choose).
	Noise string
	// Priors adds the log densities of the Gibbs model's priors on the
	// rater parameters to the log evidence that is maximised (type-II MAP):
	// thresholds b_lk ~ N(0, SigmaB^2) and precisions 1/sigma_l^2 ~
	// Gamma(V, Lambda), with zero meaning the Gibbs defaults (1, 1, 1).
	// Without them (the default, Chu & Ghahramani's setting) a rater who
	// never used a level has a threshold that runs off to infinity.
	Priors            bool
	V, Lambda, SigmaB float64
	// Restarts is the number of starting points of the evidence
	// maximisation (Chu footnote 6); 0 means 3 with one rater and 1 with
	// several under Priors (the priors make the optimum unique in
	// practice). Each start's log evidence is reported in the diagnostics'
	// notes and the best is kept.
	Restarts int
	// Seed seeds the generator of the starting points after the first and of
	// the posterior draws kept in the result.
	Seed uint64
	// FlagThreshold and KeepDraws are as in Options (0: the defaults).
	FlagThreshold float64
	KeepDraws     int
	// EP and Laplace control the engines.
	EP      ep.Options
	Laplace laplace.Options
	// Progress, when set, is called after each evaluation of the evidence.
	Progress func(multirater.Progress)
}

// WithDefaults returns the options with zero fields replaced by their
// defaults.
func (o DetOptions) WithDefaults() DetOptions {
	if o.Engine == "" {
		o.Engine = multirater.EngineEP
	}
	if o.Noise == "" {
		o.Noise = PerRater
	}
	if o.Restarts == 0 {
		o.Restarts = 3
		if o.Priors {
			o.Restarts = 1
		}
	}
	o.V = cmp.Or(o.V, 1)
	o.Lambda = cmp.Or(o.Lambda, 1)
	o.SigmaB = cmp.Or(o.SigmaB, 1)
	o.FlagThreshold = cmp.Or(o.FlagThreshold, multirater.DefaultFlagThreshold)
	o.KeepDraws = cmp.Or(o.KeepDraws, multirater.DefaultKeepDraws)
	return o
}

// FitDeterministic fits the multi-rater ordinal model (the model of Fit, or
// with one rater Chu & Ghahramani's ordinal GP, sigma_l = 1/sqrt(alpha_l))
// by expectation propagation or Laplace's method at fixed kernel, with each
// rater's thresholds b_l and noise sd sigma_l (unless fixed by the options)
// learnt by maximising the log evidence with L-BFGS (gonum/optimize) in
// Chu's parametrisation (b_l1, ln Delta_l2, ..., ln sigma_l; Chu sec. 4)
// from Restarts starting points, and with them the hyperparameters of the
// kernel terms in Data.Learn. The EP objective is log Z_EP with its exact
// gradient (the sum of the sites' tilted gradients at their cavities, and
// ep.Result.KernelGrad); Laplace's is Chu's eq. 11 with its exact gradient,
// the explicit terms and those through the mode (laplace.Result.Implicit
// and KernelGrad).
//
// The result has the same shape as Fit's: each item's score is its
// Gaussian posterior marginal, its grade distribution the average over
// raters of their predictive distributions (Chu eq. 18); the rater
// precision is the estimate 1/sigma_l^2 and the thresholds the estimates,
// with 95% intervals of the Laplace approximation of their posterior
// (raterLaplace); Draws hold joint
// draws from the Gaussian posterior with the learnt rater parameters, so
// that the predictors work unchanged. Diagnostics.Engine holds the engine,
// its iterations and the log evidence.
//
// With Noise Shared one likelihood (noise sd and thresholds) is
// every rater's, with SharedThresholds the thresholds are; with Auto the
// candidates are fitted and chosen among (choose).
func FitDeterministic(ctx context.Context, data *Data, opts DetOptions) (*multirater.FitResult, error) {
	opts = opts.WithDefaults()
	if opts.Engine != multirater.EngineEP && opts.Engine != multirater.EngineLaplace {
		panic(fmt.Sprintf("multirater: FitDeterministic: unknown engine %q", opts.Engine))
	}
	disp, err := ParseNoise(opts.Noise)
	if err != nil {
		panic("multirater: FitDeterministic: " + err.Error())
	}
	if disp == Auto {
		return choose(ctx, data, opts)
	}
	df, err := fitDet(ctx, data, opts, disp)
	if err != nil {
		return nil, err
	}
	res, err := df.result()
	if err != nil {
		return nil, err
	}
	if err := df.intervals(ctx, res); err != nil {
		return nil, err
	}
	return res, nil
}

// detFit is what the choice needs of one fit besides its document: the
// log evidence (without the rater parameters' log prior), the number of
// learnt parameters and their penalty (see multirater.ModelCandidate).
type detFit struct {
	logZ    float64
	params  int
	penalty float64
	// result builds the fit's document (items, raters, flags, rank draws):
	// for the candidate kept only, so that a choice among candidates holds
	// one document, not one per candidate (hundreds of MB each from 64,000
	// items), and for it the final run on Data.Final's prior (infer.FinalRun),
	// whose failure (a cancelled context, a numerical one) is its error.
	// It is called at most once.
	result func() (*multirater.FitResult, error)
	// intervals gives the fit's rater parameters their Laplace intervals
	// (raterIntervals), for the fit kept only.
	intervals func(ctx context.Context, res *multirater.FitResult) error
}

// addPenalty counts the learnt rater parameters of noise model mode and
// adds their penalty, 1/2 ln(n) each with n the ratings that inform it
// (its rater's, or all of them for a shared one): nb thresholds less the
// widths fixed at 0 (empty, per owner) and ns noise sds per owner, owned
// and ratedBy the ratings per owner and per rater.
func (df *detFit) addPenalty(mode string, nb, ns int, owned, ratedBy []int, empty [][]bool, ratings int) {
	add := func(k, m int) {
		if m > 0 {
			df.params += k
			df.penalty += 0.5 * float64(k) * math.Log(float64(m))
		}
	}
	nfix := func(l int) int {
		c := 0
		for _, x := range empty[l] {
			if x {
				c++
			}
		}
		return c
	}
	switch mode {
	case PerRater:
		for l, m := range owned {
			add(nb+ns-nfix(l), m)
		}
	case Shared:
		add(nb+ns-nfix(0), ratings)
	case SharedThresholds:
		add(nb-nfix(0), ratings)
		for _, m := range ratedBy {
			add(ns, m)
		}
	}
}

// fitDet is FitDeterministic with one noise model (PerRater, SharedThresholds or
// Shared), its document built by the fit's result.
func fitDet(ctx context.Context, data *Data, opts DetOptions, mode string) (detFit, error) {
	start := time.Now()
	n, nl, nk := len(data.ItemIDs), len(data.RaterIDs), len(data.Levels)
	dsg := design.Design{What: "OrdinalData", ItemIDs: data.ItemIDs, RaterIDs: data.RaterIDs, K: nk,
		Ratings: data.Ratings, Cov: data.Cov, Words: design.Words{Noun: "ratings", Verb: "rated"}, Repeats: data.Repeats}
	perRater, err := dsg.Check()
	if err != nil {
		return detFit{}, err
	}
	if len(opts.Thresholds) != 0 {
		if len(opts.Thresholds) != nk-1 || !sort.Float64sAreSorted(opts.Thresholds) {
			panic(fmt.Sprintf("multirater: FitDeterministic: %d thresholds for %d levels, or not increasing", len(opts.Thresholds), nk))
		}
	}
	// Kernel terms to learn: their hyperparameters follow the rater
	// parameters in the vector the optimiser sees.
	prob := &infer.Problem{Engine: opts.Engine, N: n, Cov: data.Cov, Restarts: opts.Restarts,
		EP: opts.EP, Laplace: opts.Laplace, Progress: opts.Progress}
	if data.Learn != nil {
		if prob.Kernel, err = data.Learn.NewKernel(n, data.Cov); err != nil {
			return detFit{}, err
		}
		prob.Cov = nil
	}
	// The owners of the learnt parameters (noiseModel): one per rater,
	// one for every rater (Shared), or one holding the shared thresholds
	// and every rater's sd (SharedThresholds).
	nm := newNoiseModel(mode, nl, nk)
	nm.setSites(prob, data, opts)
	// The restarts after the first may run at once, each on a noise model
	// of its own.
	prob.Replica = func() *infer.Problem {
		q := &infer.Problem{}
		newNoiseModel(mode, nl, nk).setSites(q, data, opts)
		return q
	}
	owned := make([]int, len(nm.owners))
	ratedBy := make([]int, nl)
	for j, r := range data.Ratings {
		owned[prob.Owner[j]]++
		ratedBy[r.Rater]++
	}
	// Free parameters: per owner, the thresholds unless fixed, ln sigma
	// (one or one per rater) unless fixed (Chu's parametrisation: K-1
	// thresholds, then ln sigma).
	learnB := len(opts.Thresholds) == 0
	learnS := opts.Sigma == 0
	// Without priors, an owner's interior level that none of its ratings
	// use has width 0 at the maximum (emptyWidths): fixed there.
	empty := emptyWidths(prob, nm, nk, learnB && !opts.Priors)
	prob.Fixed = func(l, k int) bool {
		if k < nk-1 {
			return !learnB || empty[l][k]
		}
		return !learnS
	}
	// Starting points (Chu footnote 6): b_1 = -1, Delta = 2/(K-2), sigma 1;
	// later starts jitter the thresholds' spread and sigma.
	prob.Start = func(s int, rng *rand.Rand, dst []float64) {
		spread, sig := 1.0, 1.0
		if s > 0 {
			spread = math.Exp(rng.NormFloat64() * 0.5)
			sig = math.Exp(rng.NormFloat64() * 0.5)
		}
		b := make([]float64, nk-1)
		for k := range b {
			b[k] = spread * (-1 + 2*float64(k)/math.Max(1, float64(nk-2)))
		}
		if nk == 2 {
			b[0] = 0
		}
		if !learnB {
			copy(b, opts.Thresholds)
		}
		if !learnS {
			sig = opts.Sigma
		}
		nm.startTo(dst, b, sig)
		for l, e := range empty {
			for k, x := range e {
				if x {
					dst[l*nm.owners[0].NumParams()+k] = lnZeroWidth
				}
			}
		}
	}
	if opts.Priors {
		prob.PriorNote = "log evidence + log prior of the rater parameters"
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x65766964))
	a, err := infer.Fit(ctx, prob, rng)
	if err != nil {
		return detFit{}, err
	}
	// The penalty: 1/2 ln(n) per learnt parameter (addPenalty); 1/2
	// ln(ratings) per learnt kernel hyperparameter.
	df := detFit{logZ: a.LogZ}
	nb := 0
	if learnB {
		nb = nk - 1
	}
	ns := 0
	if learnS {
		ns = 1
	}
	df.addPenalty(mode, nb, ns, owned, ratedBy, empty, len(data.Ratings))
	if prob.Kernel != nil {
		h := prob.Kernel.Size()
		df.params += h
		df.penalty += 0.5 * float64(h) * math.Log(float64(max(len(data.Ratings), 1)))
	}

	df.intervals = func(ctx context.Context, res *multirater.FitResult) error {
		return raterIntervals(ctx, res, prob, a, nm)
	}
	df.result = func() (*multirater.FitResult, error) {
		var fin *infer.FinalApprox
		if data.Final != nil && prob.Kernel == nil {
			f, err := infer.FinalRun(ctx, data.Final, prob, a, opts.Progress)
			if err != nil {
				return nil, err
			}
			fin = f
		}
		return fitDetResult(ctx, data, opts, mode, nm, perRater, prob, a, fin, rng, start, learnB || learnS), nil
	}
	if opts.Progress != nil {
		opts.Progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(start), Phase: "done"})
	}
	return df, nil
}

// fitDetResult is the document of fitDet's fit a (mode, its noise model
// nm, problem prob, rng after the fit), started at start, or of its final
// run fin on Data.Final's prior when not nil (a's notes and Laplace check
// kept); learnt says that rater parameters were learnt. A cancelled ctx
// stops the Laplace fit's EP check (checkLaplaceEvidence).
func fitDetResult(ctx context.Context, data *Data, opts DetOptions, mode string, nm *noiseModel, perRater []int, prob *infer.Problem, a *infer.Approx, fin *infer.FinalApprox, rng *rand.Rand, start time.Time, learnt bool) *multirater.FitResult {
	doc := a
	if fin != nil {
		doc = fin.A
	}
	res := detResult(data, opts, nm.liks, perRater, doc, rng)
	switch mode {
	case Shared:
		res.Model.Noise = Shared
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, "one noise sd and one set of thresholds shared by every rater (noise shared)")
	case SharedThresholds:
		res.Model.Noise = SharedThresholds
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, "one set of thresholds shared by every rater, each rater's own noise sd (noise shared-thresholds)")
	}
	if a.Learnt != nil {
		res.Model.Learnt = &multirater.Learnt{Source: "evidence (" + opts.Engine + ")", Terms: a.Learnt}
	}
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, a.Notes...)
	if fin != nil {
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, fin.Note(opts.Engine, a))
	}
	if opts.Engine == multirater.EngineLaplace && (learnt || prob.Kernel != nil) {
		checkLaplaceEvidence(ctx, res, prob, a.LogZ, opts.EP)
	}
	res.Diagnostics.Seconds = time.Since(start).Seconds()
	return res
}

// raterLogPrior returns the Gibbs model's log prior of o's thresholds and
// precision (up to constants) and adds its gradient in Chu's
// parametrisation to grad, when grad is not nil.
func raterLogPrior(o *lik.OrdinalProbit, opts DetOptions, grad []float64) float64 {
	nb := len(o.B)
	var gb []float64
	var gs *float64
	if grad != nil {
		gb, gs = grad[:nb], &grad[nb]
	}
	return thresholdLogPrior(o.B, opts, gb) + sigmaLogPrior(o.Sigma, opts, gs)
}

// thresholdLogPrior returns the log prior of thresholds b, each
// N(0, SigmaB^2) (up to constants), and adds its gradient in Chu's
// parametrisation (b_0, ln Delta_1, ...) to grad, when grad is not nil.
func thresholdLogPrior(b []float64, opts DetOptions, grad []float64) float64 {
	s2 := opts.SigmaB * opts.SigmaB
	val := 0.0
	for k, bk := range b {
		val -= 0.5 * bk * bk / s2
		if grad != nil {
			g := -bk / s2
			grad[0] += g
			for i := 1; i <= k; i++ {
				grad[i] += g * (b[i] - b[i-1])
			}
		}
	}
	return val
}

// sigmaLogPrior returns the log prior of the precision 1/sigma^2,
// Gamma(V, Lambda) (up to constants), and adds its derivative in ln sigma
// to *grad, when grad is not nil.
func sigmaLogPrior(sigma float64, opts DetOptions, grad *float64) float64 {
	alpha := 1 / (sigma * sigma)
	if grad != nil {
		// alpha = exp(-2 ln sigma).
		*grad += -2*(opts.V-1) + 2*opts.Lambda*alpha
	}
	return (opts.V-1)*math.Log(alpha) - opts.Lambda*alpha
}

// detResult summarises the Gaussian approximation a with the rater
// likelihoods liks as a fit document.
func detResult(data *Data, opts DetOptions, liks []*lik.OrdinalProbit, perRater []int, a *infer.Approx, rng *rand.Rand) *multirater.FitResult {
	n, nl, nk := len(data.ItemIDs), len(data.RaterIDs), len(data.Levels)
	kernel := data.Kernel
	if kernel == "" {
		kernel = "identity"
	}
	res := &multirater.FitResult{
		Schema: multirater.FitSchema,
		Model: multirater.ModelSettings{Model: Name, Engine: opts.Engine, Output: multirater.OutputScores, Kernel: kernel,
			Identifiability: multirater.Weak.String(), Seed: opts.Seed, FlagThreshold: opts.FlagThreshold,
			KeepDraws: opts.KeepDraws, Backend: gp.Backend},
		Levels: append([]string(nil), data.Levels...),
	}
	if opts.Priors {
		res.Model.V, res.Model.Lambda, res.Model.SigmaB = opts.V, opts.Lambda, opts.SigmaB
	}
	dg := &res.Diagnostics
	a.Diagnose(dg, opts.Engine)

	// Raters: the estimates (their intervals: raterLaplace, after).
	levelCounts := make([][]int, nl)
	for l := range levelCounts {
		levelCounts[l] = make([]int, nk)
	}
	for _, r := range data.Ratings {
		levelCounts[r.Rater][r.Level]++
	}
	meanB := 0.0
	for _, o := range liks {
		for _, b := range o.B {
			meanB += b / float64(nl*(nk-1))
		}
	}
	res.Raters = make([]multirater.RaterResult, nl)
	for l, o := range liks {
		alpha := 1 / (o.Sigma * o.Sigma)
		rr := &res.Raters[l]
		rr.ID, rr.NLabels, rr.LevelCounts = data.RaterIDs[l], perRater[l], levelCounts[l]
		rr.Precision = point(alpha)
		rr.Variance = point(1 / alpha)
		sb := 0.0
		for k, b := range o.B {
			rr.Thresholds = append(rr.Thresholds, multirater.Threshold{Estimate: point(b), Between: [2]string{data.Levels[k], data.Levels[k+1]}})
			sb += b / float64(nk-1)
		}
		rr.Severity = sb - meanB
		rr.SeverityQ025, rr.SeverityQ975 = rr.Severity, rr.Severity
	}

	// Items: Gaussian marginals, grade distributions, ranks from joint draws.
	byItem := make([][]multirater.Rating, n)
	for _, r := range data.Ratings {
		byItem[r.Item] = append(byItem[r.Item], r)
	}
	res.Items = make([]multirater.ItemResult, n)
	pr := make([]float64, nk)
	rated := make([]int, nl) // rated[l] == i+1: rater l labelled item i
	for i := range res.Items {
		it := &res.Items[i]
		it.ID, it.NLabels = data.ItemIDs[i], len(byItem[i])
		for _, r := range byItem[i] {
			rated[r.Rater] = i + 1
		}
		mu, sd := a.Mean[i], math.Sqrt(a.Var[i])
		it.Score = multirater.NormalEstimate(mu, sd)
		if len(byItem[i]) > 0 {
			it.Labels = make(map[string]string, len(byItem[i]))
			for _, r := range byItem[i] {
				it.Labels[data.RaterIDs[r.Rater]] = data.Levels[r.Level]
			}
		}
		// The consensus averages every rater's predictive distribution;
		// the document keeps those of the raters who labelled the item
		// (linear in the labels, not items x raters).
		cons := make([]float64, nk)
		it.RaterGradeProbs = make(map[string][]float64, len(byItem[i]))
		for l, o := range liks {
			for k := range pr {
				lz, _, _ := o.Tilted(float64(k), mu, a.Var[i])
				pr[k] = math.Exp(lz)
				cons[k] += pr[k] / float64(nl)
			}
			if rated[l] == i+1 {
				out := make([]float64, nk)
				for k, v := range pr {
					out[k] = mcmcRound(v)
				}
				it.RaterGradeProbs[data.RaterIDs[l]] = out
			}
		}
		it.GradeProbs = make(map[string]float64, nk)
		bestK := 0
		for k, p := range cons {
			it.GradeProbs[data.Levels[k]] = mcmcRound(p)
			if p > cons[bestK] {
				bestK = k
			}
		}
		it.Grade = data.Levels[bestK]
	}
	// Flags: observed ratings with a small posterior predictive probability.
	for _, r := range data.Ratings {
		lz, _, _ := liks[r.Rater].Tilted(float64(r.Level), a.Mean[r.Item], a.Var[r.Item])
		if p := math.Exp(lz); p < opts.FlagThreshold {
			pr := res.Items[r.Item].RaterGradeProbs[data.RaterIDs[r.Rater]]
			exp := 0
			for k := range pr {
				if pr[k] > pr[exp] {
					exp = k
				}
			}
			res.Flags = append(res.Flags, multirater.Flag{Item: data.ItemIDs[r.Item], Rater: data.RaterIDs[r.Rater],
				Label: data.Levels[r.Level], Prob: mcmcRound(p), Expected: data.Levels[exp]})
		}
	}
	res.SortFlags()

	// Joint draws: ranks and the draws kept for prediction.
	// The document keeps at most mcmc.MaxKeptNumbers latent values (at
	// least 50 draws), evenly spaced among the rank draws, as the Gibbs
	// fits do: linear in the items.
	keep := infer.RankDraws(n, opts.KeepDraws)
	stored := min(keep, max(50, mcmc.MaxKeptNumbers/max(n, 1)))
	draws := &multirater.Draws{}
	drawIdx := 0
	ranks := a.Ranks(rng, keep, func(m []float64) {
		s := drawIdx
		drawIdx++
		if s*stored/keep == (s+1)*stored/keep {
			return
		}
		alpha := make([]float64, nl)
		th := make([][]float64, nl)
		for l, o := range liks {
			alpha[l] = 1 / (o.Sigma * o.Sigma)
			th[l] = append([]float64(nil), o.B...)
		}
		draws.Alpha = append(draws.Alpha, alpha)
		draws.Thresholds = append(draws.Thresholds, th)
		kept := make([]float64, len(m))
		for i, v := range m {
			kept[i] = float64(float32(v))
		}
		draws.M = append(draws.M, kept)
	})
	draws.N = len(draws.M)
	res.Draws = draws
	dg.Draws = draws.N
	res.Gaussian = &multirater.GaussianSites{Precision: a.SiteS, Shift: a.SiteV}
	for i := range res.Items {
		res.Items[i].Rank = ranks[i]
	}
	dg.Notes = append(dg.Notes, fmt.Sprintf("ranks come from %d joint draws of the Gaussian posterior approximation with the rater parameters at their estimates, %d of them kept in the result", keep, draws.N))
	return res
}

// factorTol is the trace of C - G G' the pivoted factor of the kernel
// matrix may leave out (it is built to a quarter of it): 1e-2 sigma_min^2,
// with sigma_min the smallest noise sd of the raters. Leaving out a
// positive semidefinite Delta changes the log evidence by about
// 1/2 tr((C + S^-1)^-1 Delta), at most 1/2 tr(Delta) max_n S_n with S_n of
// the order of an item's ratings' 1/sigma^2, and in practice far less: on
// Chu's Abalone and Boston training sets (N = 1000 and 300, RBF learnt,
// sigma 0.09) the log evidence moved by 3e-4 and 2e-5 nats, at ranks 232 of
// 843 and 268 of 300.
func factorTol(liks []*lik.OrdinalProbit) float64 {
	s := math.Inf(1)
	for _, o := range liks {
		if o != nil {
			s = math.Min(s, o.Sigma)
		}
	}
	return 1e-2 * s * s
}

// setSites sets prob's likelihoods (the noise model's owners), its sites
// on them, one per rating, FactorTol and, with opts.Priors, LogPrior.
func (nm *noiseModel) setSites(prob *infer.Problem, data *Data, opts DetOptions) {
	prob.Liks = nm.owners
	prob.Sites = make([]lik.Site, len(data.Ratings))
	prob.Owner = make([]int, len(data.Ratings))
	for j, r := range data.Ratings {
		prob.Sites[j] = lik.Site{Item: r.Item, Y: float64(r.Level), Lik: nm.site[r.Rater]}
		prob.Owner[j] = nm.owner(r.Rater)
	}
	// The factor keeps the log evidence within about 1e-3 nats
	// (factorTol).
	prob.FactorTol = func() float64 { return factorTol(nm.liks) }
	if opts.Priors {
		prob.LogPrior = func(l int, _, grad []float64) float64 { return nm.logPrior(l, opts, grad) }
	}
}

// point is the Estimate of a point value (sd 0).
func point(v float64) multirater.Estimate {
	return multirater.Estimate{Mean: v, Q025: v, Q50: v, Q975: v}
}

// mcmcRound rounds a probability to 6 significant digits, as the Gibbs
// results do.
func mcmcRound(p float64) float64 { return numeric.Round6(p) }

// laplaceGapWarn is the excess of the Laplace evidence over the EP
// evidence, in nats, above which checkLaplaceEvidence warns.
const laplaceGapWarn = 1.0

// checkLaplaceEvidence compares the Laplace evidence (Chu eq. 11) that
// chose a fit's hyperparameters with the EP evidence at the same
// hyperparameters (one EP run; within a few hundredths of a nat of the
// exact box probability in ep_stan_test.go) and records both in
// Diagnostics.Evidence ("laplace", "ep"). Eq. 11 overstates the evidence
// of small noise sds, where the likelihood is a box and the mode sits at
// its edge: on Chu's Pyrimidines its maximum lies at sigma 0.05-0.09,
// where it is 4-13 nats above the exact evidence, which is 2.5-7.7 nats
// higher at sigma 0.13-0.2 (docs/scripts/chu/README.md). Above
// laplaceGapWarn nats the fit gets a note saying the learnt
// hyperparameters are unreliable. An EP failure leaves a note too; a
// cancelled ctx stops the EP run (ep.Options.Stop) and leaves nothing.
func checkLaplaceEvidence(ctx context.Context, res *multirater.FitResult, prob *infer.Problem, logZ float64, eo ep.Options) {
	var cov mat.Symmetric = prob.Cov
	if prob.Kernel != nil {
		cov = prob.Kernel.Cov()
	}
	fac := gp.IdentityFactor(prob.N)
	if cov != nil {
		var err error
		if fac, err = gp.NewFactor(cov); err != nil {
			res.Diagnostics.Notes = append(res.Diagnostics.Notes, fmt.Sprintf("the EP check of the Laplace evidence failed: %v", err))
			return
		}
	}
	eo.Stop = ctx.Err
	r, err := ep.Run(fac, prob.Sites, eo)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, fmt.Sprintf("the EP check of the Laplace evidence failed: %v", err))
		return
	}
	if res.Diagnostics.Evidence == nil {
		res.Diagnostics.Evidence = map[string]float64{}
	}
	res.Diagnostics.Evidence[multirater.EngineLaplace] = logZ
	res.Diagnostics.Evidence[multirater.EngineEP] = r.LogZ
	gap := logZ - r.LogZ
	note := fmt.Sprintf("Laplace log evidence %.4f; EP log evidence at the same hyperparameters %.4f", logZ, r.LogZ)
	if gap > laplaceGapWarn {
		note += fmt.Sprintf(": the Laplace approximation overstates the evidence by %.2f nats here (Chu's eq. 11 favours small noise sds, where the likelihood is a box and the approximation fails), so the learnt hyperparameters are unreliable; fit with --engine ep", gap)
	}
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, note)
}
