package ordinal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"concord/multirater"
	"concord/multirater/design"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/laplace"
	"concord/multirater/lik"
	"concord/multirater/mcmc"
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
	if o.Restarts == 0 {
		o.Restarts = 3
		if o.Priors {
			o.Restarts = 1
		}
	}
	if o.V == 0 {
		o.V = 1
	}
	if o.Lambda == 0 {
		o.Lambda = 1
	}
	if o.SigmaB == 0 {
		o.SigmaB = 1
	}
	if o.FlagThreshold == 0 {
		o.FlagThreshold = multirater.DefaultFlagThreshold
	}
	if o.KeepDraws == 0 {
		o.KeepDraws = multirater.DefaultKeepDraws
	}
	return o
}

// parallelSites is the number of ratings per item above which EP updates
// its sites in parallel (unless DetOptions.EP says otherwise).
const parallelSites = 4

// approx is what both engines give: the Gaussian marginals, the log
// evidence, the iterations and joint draws.
type approx struct {
	mean, vr []float64
	// siteS, siteV are the Gaussian sites summed per item.
	siteS, siteV []float64
	logZ         float64
	iters        int
	draw         func(rng *rand.Rand, dst []float64)
	ep           *ep.Result
	lap          *laplace.Result
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
// precision is the point estimate 1/sigma_l^2 (sd 0); Draws hold joint
// draws from the Gaussian posterior with the learnt rater parameters, so
// that the predictors work unchanged. Diagnostics.Engine holds the engine,
// its iterations and the log evidence.
func FitDeterministic(ctx context.Context, data *Data, opts DetOptions) (*multirater.FitResult, error) {
	start := time.Now()
	opts = opts.WithDefaults()
	if opts.Engine != multirater.EngineEP && opts.Engine != multirater.EngineLaplace {
		panic(fmt.Sprintf("multirater: FitDeterministic: unknown engine %q", opts.Engine))
	}
	n, nl, nk := len(data.ItemIDs), len(data.RaterIDs), len(data.Levels)
	dsg := design.Design{What: "OrdinalData", ItemIDs: data.ItemIDs, RaterIDs: data.RaterIDs, K: nk,
		Ratings: data.Ratings, Cov: data.Cov, Words: design.Words{Noun: "ratings", Verb: "rated"}}
	perRater, err := dsg.Check()
	if err != nil {
		return nil, err
	}
	if len(opts.Thresholds) != 0 {
		if len(opts.Thresholds) != nk-1 || !sort.Float64sAreSorted(opts.Thresholds) {
			panic(fmt.Sprintf("multirater: FitDeterministic: %d thresholds for %d levels, or not increasing", len(opts.Thresholds), nk))
		}
	}
	// The factor in double precision (the samplers keep G in float32; EP's
	// evidence is compared to 1e-2 nats and its gradients by finite
	// differences).
	// A kernel matrix is factorised by the pivoted Cholesky decomposition
	// to the rank that keeps the log evidence within about 1e-3 nats
	// (factorTol), refactorised when the rater parameters or the kernel
	// hyperparameters change enough to need it.
	var fac *gp.Factor
	var cov mat.Symmetric
	if data.Cov == nil && data.Learn == nil {
		fac = gp.IdentityFactor(n)
	} else {
		cov = data.Cov
	}
	// Kernel terms to learn: their hyperparameters follow the rater
	// parameters in the vector the optimiser sees.
	var kern *kernelState
	if data.Learn != nil {
		if kern, err = newKernelState(n, data.Cov, data.Learn); err != nil {
			return nil, err
		}
	}
	liks := make([]*lik.OrdinalProbit, nl)
	sites := make([]lik.Site, len(data.Ratings))
	for j, r := range data.Ratings {
		if liks[r.Rater] == nil {
			liks[r.Rater] = &lik.OrdinalProbit{B: make([]float64, nk-1)}
		}
		sites[j] = lik.Site{Item: r.Item, Y: float64(r.Level), Lik: liks[r.Rater]}
	}
	np := nk // parameters per rater: K-1 thresholds and ln sigma
	var warm *ep.Result
	optimising := false
	// evaluate runs the engine at the current rater parameters.
	evaluate := func() (*approx, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if kern != nil && kern.c != cov {
			cov, fac = kern.c, nil
		}
		ftol := factorTol(liks)
		if optimising {
			// The search needs the evidence's shape, not its last 1e-3
			// nats: a 10 times looser factor (the final posterior and its
			// evidence use factorTol).
			ftol *= 10
		}
		if cov != nil && (fac == nil || fac.Residual > ftol) {
			f, err := gp.NewPivotedFactor(cov, ftol/4)
			if err != nil {
				return nil, err
			}
			fac = f
		}
		if opts.Engine == multirater.EngineLaplace {
			r, err := laplace.Run(fac, sites, opts.Laplace)
			if err != nil {
				return nil, err
			}
			sv := make([]float64, n)
			for i := range sv {
				sv[i] = r.W[i]*r.Mean[i] + r.Grad[i]
			}
			return &approx{mean: r.Mean, vr: r.Var, siteS: r.W, siteV: sv, logZ: r.LogZ, iters: r.Iterations, draw: r.DrawTo, lap: r}, nil
		}
		eo := opts.EP
		if !eo.Parallel && eo.Damping == 0 && len(sites) > parallelSites*n {
			// A sequential sweep costs O(M r^2) in level-2 BLAS, a parallel
			// one O(N r^2) in level-3 BLAS but needs about twice the
			// sweeps: parallel pays when items have many ratings.
			eo.Parallel = true
		}
		if warm != nil {
			eo.InitTau, eo.InitNu = warm.Tau, warm.Nu
		}
		if optimising && eo.Tol == 0 {
			// Inside the evidence maximisation EP stops at 1e-3 (log Z_EP
			// is stationary in the sites, so its error is far smaller);
			// the final posterior is run to EP's default 1e-6.
			eo.Tol = 1e-3
		}
		r, err := ep.Run(fac, sites, eo)
		if err != nil && warm != nil {
			// A warm start far from the new parameters can stall: start cold.
			eo.InitTau, eo.InitNu = nil, nil
			r, err = ep.Run(fac, sites, eo)
		}
		if err != nil {
			return nil, err
		}
		warm = r
		ss, sv := make([]float64, n), make([]float64, n)
		for j, st := range sites {
			ss[st.Item] += r.Tau[j]
			sv[st.Item] += r.Nu[j]
		}
		return &approx{mean: r.Mean, vr: r.Var, siteS: ss, siteV: sv, logZ: r.LogZ, iters: r.Sweeps, draw: r.DrawTo, ep: r}, nil
	}
	// Free parameters: per rater, the thresholds unless fixed, ln sigma
	// unless fixed.
	learnB := len(opts.Thresholds) == 0
	learnS := opts.Sigma == 0
	setAll := func(theta []float64) error {
		if err := kern.set(theta[nl*np:]); err != nil {
			return err
		}
		for l, o := range liks {
			if o == nil {
				continue
			}
			p := o.ParamsTo(make([]float64, np))
			if learnB {
				copy(p[:nk-1], theta[l*np:l*np+nk-1])
			}
			if learnS {
				p[nk-1] = theta[l*np+nk-1]
			}
			o.SetParams(p)
			if !learnB {
				copy(o.B, opts.Thresholds)
			}
			if !learnS {
				o.Sigma = opts.Sigma
			}
		}
		return nil
	}
	// Starting points (Chu footnote 6): b_1 = -1, Delta = 2/(K-2), sigma 1;
	// later starts jitter the thresholds' spread and sigma.
	startTheta := func(s int, rng *rand.Rand) []float64 {
		theta := make([]float64, nl*np+kern.size())
		spread, sig := 1.0, 1.0
		if s > 0 {
			spread = math.Exp(rng.NormFloat64() * 0.5)
			sig = math.Exp(rng.NormFloat64() * 0.5)
		}
		for l := 0; l < nl; l++ {
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
			o := lik.OrdinalProbit{B: b, Sigma: sig}
			if !learnS {
				o.Sigma = opts.Sigma
			}
			copy(theta[l*np:], o.ParamsTo(make([]float64, np)))
		}
		kern.startTo(theta[nl*np:], s, rng)
		return theta
	}
	// objective returns -(log evidence + log priors) and its gradient.
	evals := 0
	var lastErr error
	objective := func(theta, grad []float64) float64 {
		if err := setAll(theta); err != nil {
			lastErr = err
			return math.Inf(1)
		}
		a, err := evaluate()
		evals++
		if err != nil {
			lastErr = err
			return math.Inf(1)
		}
		val := a.logZ
		if grad != nil {
			for i := range grad {
				grad[i] = 0
			}
			buf := make([]float64, np)
			if a.lap != nil {
				// Laplace (Chu eq. 11): explicit and implicit terms
				// (laplace.Result.Implicit).
				u := a.lap.Implicit()
				d1, d2 := make([]float64, np), make([]float64, np)
				for j, s := range sites {
					liks[data.Ratings[j].Rater].LogLikGradTo(buf, d1, d2, s.Y, a.mean[s.Item])
					g := grad[data.Ratings[j].Rater*np:]
					for k := range buf {
						g[k] += buf[k] + 0.5*a.vr[s.Item]*d2[k] + u[s.Item]*d1[k]
					}
				}
			} else {
				// EP: the sites' tilted gradients at their cavities.
				for j, s := range sites {
					liks[data.Ratings[j].Rater].TiltedGradTo(buf, s.Y, a.ep.CavMean[j], a.ep.CavVar[j])
					g := grad[data.Ratings[j].Rater*np:]
					for k := range buf {
						g[k] += buf[k]
					}
				}
			}
		}
		if grad != nil && kern != nil {
			var g []float64
			if a.lap != nil {
				g = a.lap.KernelGrad(kern.grads)
			} else {
				var err error
				if g, err = a.ep.KernelGrad(kern.grads); err != nil {
					lastErr = err
					return math.Inf(1)
				}
			}
			copy(grad[nl*np:], g)
		}
		if opts.Priors {
			for l, o := range liks {
				if o == nil {
					continue
				}
				val += raterLogPrior(o, opts, grad, l*np)
			}
		}
		if grad != nil {
			for l := 0; l < nl; l++ {
				for k := 0; k < np; k++ {
					if (k < nk-1 && !learnB) || (k == nk-1 && !learnS) {
						grad[l*np+k] = 0
					}
					grad[l*np+k] = -grad[l*np+k]
				}
			}
			for k := nl * np; k < len(grad); k++ {
				grad[k] = -grad[k]
			}
		}
		if opts.Progress != nil {
			opts.Progress(multirater.Progress{Elapsed: time.Since(start), Phase: "maximising the evidence"})
		}
		return -val
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x65766964))
	var best []float64
	bestVal := math.Inf(1)
	var notes []string
	if learnB || learnS || kern != nil {
		for s := 0; s < opts.Restarts; s++ {
			x0 := startTheta(s, rng)
			// L-BFGS asks for the value and the gradient at the same points:
			// one EP run gives both.
			var cx, cg []float64
			var cv float64
			eval := func(x []float64) {
				if cx != nil && floats.Equal(cx, x) {
					return
				}
				cx = append(cx[:0], x...)
				cg = make([]float64, len(x))
				cv = objective(x, cg)
			}
			prob := optimize.Problem{
				Func: func(x []float64) float64 { eval(x); return cv },
				Grad: func(g, x []float64) { eval(x); copy(g, cg) },
			}
			warm, optimising = nil, true
			// Converged when the objective has gained less than 1e-4 nats in
			// two iterations, or the gradient is below 1e-5.
			r, err := optimize.Minimize(prob, x0, &optimize.Settings{GradientThreshold: 1e-5, MajorIterations: 500,
				Converger: &optimize.FunctionConverge{Absolute: 1e-4, Iterations: 2}}, &optimize.LBFGS{})
			if err != nil && r == nil {
				return nil, fmt.Errorf("multirater: evidence maximisation: %w", err)
			}
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			status := "converged"
			if err != nil {
				status = err.Error()
			} else if r.Status != optimize.GradientThreshold && r.Status != optimize.FunctionConvergence {
				status = r.Status.String()
			}
			what := "log evidence"
			if opts.Priors {
				what = "log evidence + log prior of the rater parameters"
			}
			notes = append(notes, fmt.Sprintf("evidence maximisation start %d: %s %.4f after %d L-BFGS iterations (%s)", s+1, what, -r.F, r.Stats.MajorIterations, status))
			if r.F < bestVal {
				bestVal, best = r.F, append([]float64(nil), r.X...)
			}
		}
		if best == nil {
			if lastErr != nil {
				return nil, lastErr
			}
			return nil, errors.New("multirater: evidence maximisation found no finite evidence")
		}
	} else {
		best = startTheta(0, rng)
	}
	if err := setAll(best); err != nil {
		return nil, err
	}
	warm, optimising = nil, false
	a, err := evaluate()
	if err != nil {
		return nil, err
	}

	res := detResult(data, opts, liks, perRater, a, rng)
	if kern != nil {
		res.Model.Learnt = &multirater.Learnt{Source: "evidence (" + opts.Engine + ")", Terms: kern.terms()}
	}
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, notes...)
	res.Diagnostics.Seconds = time.Since(start).Seconds()
	if opts.Progress != nil {
		opts.Progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(start), Phase: "done"})
	}
	return res, nil
}

// raterLogPrior returns the Gibbs model's log prior of o's thresholds and
// precision (up to constants) and adds its gradient in Chu's
// parametrisation to grad[off:], when grad is not nil.
func raterLogPrior(o *lik.OrdinalProbit, opts DetOptions, grad []float64, off int) float64 {
	s2 := opts.SigmaB * opts.SigmaB
	val := 0.0
	nb := len(o.B)
	for k, b := range o.B {
		val -= 0.5 * b * b / s2
		if grad != nil {
			g := -b / s2
			grad[off] += g
			for i := 1; i <= k; i++ {
				grad[off+i] += g * (o.B[i] - o.B[i-1])
			}
		}
	}
	alpha := 1 / (o.Sigma * o.Sigma)
	val += (opts.V-1)*math.Log(alpha) - opts.Lambda*alpha
	if grad != nil {
		// alpha = exp(-2 ln sigma).
		grad[off+nb] += -2*(opts.V-1) + 2*opts.Lambda*alpha
	}
	return val
}

// detResult summarises the Gaussian approximation a with the rater
// likelihoods liks as a fit document.
func detResult(data *Data, opts DetOptions, liks []*lik.OrdinalProbit, perRater []int, a *approx, rng *rand.Rand) *multirater.FitResult {
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
	le := a.logZ
	dg := &res.Diagnostics
	dg.Engine = &multirater.EngineDiagnostics{Name: opts.Engine, Iterations: a.iters, LogEvidence: &le}
	dg.Converged = true
	what := "EP"
	if opts.Engine == multirater.EngineLaplace {
		what = "Laplace's method"
	}
	dg.Verdict = fmt.Sprintf("converged: %s in %d iterations, log evidence %.4f", what, a.iters, le)
	dg.Parameters = []multirater.ParamDiag{}
	dg.Autocorrelation = map[string][]float64{}

	// Raters: point estimates.
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
	for i := range res.Items {
		it := &res.Items[i]
		it.ID, it.NLabels = data.ItemIDs[i], len(byItem[i])
		mu, sd := a.mean[i], math.Sqrt(a.vr[i])
		it.Score = &multirater.Estimate{Mean: mu, SD: sd, Q025: mu - 1.959963984540054*sd, Q50: mu, Q975: mu + 1.959963984540054*sd}
		if len(byItem[i]) > 0 {
			it.Labels = make(map[string]string, len(byItem[i]))
			for _, r := range byItem[i] {
				it.Labels[data.RaterIDs[r.Rater]] = data.Levels[r.Level]
			}
		}
		cons := make([]float64, nk)
		it.RaterGradeProbs = make(map[string][]float64, nl)
		for l, o := range liks {
			pr := make([]float64, nk)
			for k := range pr {
				lz, _, _ := o.Tilted(float64(k), mu, a.vr[i])
				pr[k] = mcmcRound(math.Exp(lz))
				cons[k] += math.Exp(lz) / float64(nl)
			}
			it.RaterGradeProbs[data.RaterIDs[l]] = pr
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
		lz, _, _ := liks[r.Rater].Tilted(float64(r.Level), a.mean[r.Item], a.vr[r.Item])
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
	sort.SliceStable(res.Flags, func(i, j int) bool { return res.Flags[i].Prob < res.Flags[j].Prob })
	if res.Flags == nil {
		res.Flags = []multirater.Flag{}
	}

	// Joint draws: ranks and the draws kept for prediction.
	keep := opts.KeepDraws
	draws := &multirater.Draws{N: keep}
	ranks := make([][]float64, n)
	order := make([]int, n)
	for s := 0; s < keep; s++ {
		m := make([]float64, n)
		a.draw(rng, m)
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(x, y int) bool { return m[order[x]] > m[order[y]] })
		for rank, i := range order {
			ranks[i] = append(ranks[i], float64(rank+1))
		}
		alpha := make([]float64, nl)
		th := make([][]float64, nl)
		for l, o := range liks {
			alpha[l] = 1 / (o.Sigma * o.Sigma)
			th[l] = append([]float64(nil), o.B...)
		}
		draws.Alpha = append(draws.Alpha, alpha)
		draws.Thresholds = append(draws.Thresholds, th)
		for i := range m {
			m[i] = float64(float32(m[i]))
		}
		draws.M = append(draws.M, m)
	}
	res.Draws = draws
	dg.Draws = keep
	res.Gaussian = &multirater.GaussianSites{Precision: a.siteS, Shift: a.siteV}
	for i := range res.Items {
		rk := ranks[i]
		sort.Float64s(rk)
		sum := 0.0
		for _, v := range rk {
			sum += v
		}
		q := func(p float64) float64 { return rk[min(len(rk)-1, int(p*float64(len(rk))))] }
		res.Items[i].Rank = &multirater.RankSummary{Mean: sum / float64(len(rk)), Q025: q(0.025), Q50: q(0.5), Q975: q(0.975)}
	}
	dg.Notes = append(dg.Notes, fmt.Sprintf("ranks and the kept draws come from %d joint draws of the Gaussian posterior approximation with the rater parameters at their estimates", keep))
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

// point is the Estimate of a point value (sd 0).
func point(v float64) multirater.Estimate {
	return multirater.Estimate{Mean: v, Q025: v, Q50: v, Q975: v}
}

// mcmcRound rounds a probability to 6 significant digits, as the Gibbs
// results do.
func mcmcRound(p float64) float64 { return mcmc.Round6(p) }

// kernelState is the prior covariance of FitDeterministic when kernel terms
// are learnt: C = fixed + sum_t Gram_t(theta_t) and the derivatives of C in
// every hyperparameter. A nil *kernelState has no
// hyperparameters.
type kernelState struct {
	n      int
	fixed  interface{ At(i, j int) float64 }
	learn  *LearnKernel
	dims   []int // hyperparameters per term
	cur    []float64
	terms_ []kernel.Hyper
	c      *mat.SymDense
	grads  []mat.Symmetric
}

func newKernelState(n int, fixed mat.Symmetric, l *LearnKernel) (*kernelState, error) {
	k := &kernelState{n: n, learn: l}
	if fixed != nil {
		k.fixed = fixed
	}
	dim := 0
	if l.Inputs.X != nil {
		_, dim = l.Inputs.X.Dims()
	}
	var p []float64
	for _, t := range l.Terms {
		d := t.NumHyper(dim)
		k.dims = append(k.dims, d)
		p = append(p, t.HyperTo(make([]float64, d), dim)...)
	}
	if err := k.set(p); err != nil {
		return nil, err
	}
	return k, nil
}

// size is the number of hyperparameters.
func (k *kernelState) size() int {
	if k == nil {
		return 0
	}
	return len(k.cur)
}

// startTo sets dst to the starting hyperparameters of start s: Chu's
// footnote 6 (gamma = kappa/2 = 1/(2D)) for the first, jittered by a factor
// exp(N(0, 1)) for the others.
func (k *kernelState) startTo(dst []float64, s int, rng *rand.Rand) {
	if k == nil {
		return
	}
	dim := 1
	if k.learn.Inputs.X != nil {
		_, dim = k.learn.Inputs.X.Dims()
	}
	for i := range dst {
		dst[i] = math.Log(0.5 / float64(dim))
		if s > 0 {
			dst[i] += rng.NormFloat64()
		}
	}
}

// set rebuilds C and its derivatives for hyperparameters p (a no-op when p
// has not changed).
func (k *kernelState) set(p []float64) error {
	if k == nil {
		return nil
	}
	if k.c != nil && floats.Equal(p, k.cur) {
		return nil
	}
	k.cur = append(k.cur[:0], p...)
	k.c = mat.NewSymDense(k.n, nil)
	if k.fixed != nil {
		for i := 0; i < k.n; i++ {
			for j := i; j < k.n; j++ {
				k.c.SetSym(i, j, k.fixed.At(i, j))
			}
		}
	}
	k.terms_ = k.terms_[:0]
	k.grads = k.grads[:0]
	off := 0
	for t, term := range k.learn.Terms {
		h := term.WithHyper(p[off : off+k.dims[t]])
		off += k.dims[t]
		k.terms_ = append(k.terms_, h)
		var g mat.SymDense
		h.GramTo(&g, k.learn.Inputs)
		k.c.AddSym(k.c, &g)
		gs := make([]*mat.SymDense, k.dims[t])
		h.GramGradTo(gs, k.learn.Inputs)
		for _, d := range gs {
			k.grads = append(k.grads, d)
		}
	}
	return nil
}

// terms returns the learnt terms in the kernel grammar.
func (k *kernelState) terms() []string {
	out := make([]string, len(k.terms_))
	for i, t := range k.terms_ {
		out[i] = t.String()
	}
	return out
}
