// Package robust is the model family of label-noise-robust binary
// classification: Kim & Ghahramani's outlier-robust Gaussian-process
// classifier (lik.RobustProbit: p(y | f) = eps + (1 - 2 eps) Phi(y f / s)),
// for one rater as in the paper (a single-label file) and for many: a
// latent f_n per item under the GP prior, and each rater l with their own
// labelling-error rate eps_l (how often the rater flips a label whatever
// the item says) and latent noise s_l (how soft their boundary is), one
// site per label.
//
// It is fitted by EP (Kim & Ghahramani sec. 3). The error rates are
// learnt by EM (sec. 4): EP at fixed error rates (the E-step) with the
// noise and any learnt kernel terms at the maximum of the EP evidence
// (multirater/infer: the gradient steps on the other hyperparameters),
// then an update of every rater's error rate (the M-step), until no eps_l
// moves by more than Options.EMTol. The default M-step is
//
//	eps_l = mean over rater l's labels of r_j,  r_j = P(label j is an error | the other labels),
//
// the error component's responsibility under the label's tilted
// distribution (its EP cavity times its likelihood): the exact EM step of
// the mixture at the EP approximation, whose fixed points are the
// stationary points of the EP evidence in eps_l (d log Z_EP / d eps_l =
// sum_j (r_j - eps_l) / (eps_l (1 - eps_l))). Options.PaperEM uses eq. 20
// as printed instead,
//
//	eps_l = mean over rater l's labels of 1 - w_j,  w_j = Phi(y_j h_j / sqrt(s_l^2 + lambda_j)),
//
// with N(h_j, lambda_j) the posterior marginal of the label's item (the
// maximum of a variational bound, eq. 16-19): it counts every label near
// the boundary as half an error, and on Kim's synthetic data settles at
// about twice the flip rate, with a lower evidence. With several raters
// the latent noise has a log-normal prior, ln s_l ~ N(0, 1). Options.Select fits both the
// plain classifier (eps = 0) and the robust one and keeps the one with the
// larger EP evidence (eq. 21). The robust model's evidence there is its EP
// evidence integrated over every error rate's prior, uniform on [0, 1/2]
// (IntegratedLogEvidence): the plain model is nested in the robust one at
// eps = 0, so the robust evidence at learnt error rates is never below the
// plain one and would pick the robust model on clean data too; integrating
// eps out charges the robust model its Occam factor (MacKay 1992), about
// the log of the prior's width over the posterior's.
//
// Every label gets the probability that it is a labelling error: for the
// robust model the posterior probability of the error component of the
// mixture given the other labels (lik.RobustProbit.ErrorProb at the
// label's EP cavity), for the plain model, which has no error component,
// the probability of the other label given the other labels (the cavity
// predictive). The sites of the robust likelihood are not log-concave: EP
// keeps negative site precisions (ep.Options.NegativeSites) and the fit's
// diagnostics count them.
//
// Costs: each EP run is O(N^3) (or O(N r^2) with a rank-r factor, as in
// multirater/infer); the evidence maximisation makes tens of runs per EM
// step, and EM a few to a few tens of steps.
package robust

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/design"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/infer"
	"concord/multirater/lik"
	"concord/multirater/numeric"
)

// Name is the model's name in the fit document.
const Name = "robust"

// The models Options.Select chooses between (Diagnostics.Selected), and
// the keys of Diagnostics.Evidence: the plain model's log evidence, the
// robust one's at the learnt error rates, and the robust one's with the
// error rates integrated out (IntegratedLogEvidence), which decides.
const (
	Plain            = "plain"
	Robust           = "robust"
	RobustIntegrated = "robust_integrated"
)

// Label is one binary label: item and rater indices and Y, -1 for the
// negative class and +1 for the positive one.
type Label struct {
	Item, Rater int
	Y           float64
}

// Data is what Fit fits.
type Data struct {
	ItemIDs, RaterIDs []string
	Labels            []Label
	// Classes are the codes of the negative and the positive class.
	Classes [2]string
	// Levels, when set, orders the fit's levels (FitResult.Levels) and
	// every per-level array of the result (the raters' label counts and
	// confusion tables, the predictions' per-rater distributions): the two
	// codes of Classes in the label scheme's order. nil means Classes'
	// order, negative first.
	Levels []string
	// Cov is the prior covariance of the items' latent values (nil: the
	// identity, unless Learn has terms); Kernel names it.
	Cov    mat.Symmetric
	Kernel string
	// Learn, when not nil, holds kernel terms whose hyperparameters are
	// learnt by the evidence (added to Cov).
	Learn *infer.LearnKernel
	// Repeats allows several labels of one item by one rater (repeated
	// labels, each one more site).
	Repeats bool
}

// Options control Fit. The zero value means the defaults given for each
// field: every rater's error rate learnt by EM, every rater's latent noise
// learnt by the evidence, no model selection.
type Options struct {
	// FixEpsilon fixes every rater's error rate at Epsilon (0: the plain
	// probit classifier) instead of learning them.
	FixEpsilon bool
	Epsilon    float64
	// StartEpsilon is the error rates' starting value for EM; 0 means 0.05
	// ("a small value", Kim & Ghahramani sec. 4).
	StartEpsilon float64
	// PaperEM uses Kim & Ghahramani's eq. 20 as the M-step instead of the
	// tilted responsibilities (see the package documentation).
	PaperEM bool
	// Select fits the plain and the robust model and keeps the one with
	// the larger EP evidence (eq. 21), the robust model's with its error
	// rates integrated out (IntegratedLogEvidence).
	Select bool
	// Noise, when positive, fixes every rater's latent noise sd s_l; 0
	// means each is learnt (starting at 1).
	Noise float64
	// MaxEM bounds the EM steps (0 means 50); EMTol is the change of every
	// error rate below which EM stops (0 means 1e-4).
	MaxEM int
	EMTol float64
	// Restarts is the number of starting points of the first evidence
	// maximisation; 0 means 1.
	Restarts int
	// Seed seeds the starting points and the draws of the ranks.
	Seed uint64
	// FlagThreshold: a label whose probability of being right, 1 -
	// p_error, is below it is flagged (as the other models flag a label
	// whose predictive probability is below it); 0 means
	// multirater.DefaultFlagThreshold. Every label's p_error is in the
	// result's LabelErrors whatever the threshold.
	FlagThreshold float64
	// RankDraws is the number of joint posterior draws of the ranks; 0
	// means multirater.DefaultKeepDraws.
	RankDraws int
	// EP controls the engine.
	EP ep.Options
	// Progress, when set, is called after each evaluation of the evidence.
	Progress func(multirater.Progress)
	// emStep marks an intermediate EM step (see gemIterations).
	emStep bool
}

// WithDefaults returns the options with zero fields replaced by their
// defaults.
func (o Options) WithDefaults() Options {
	o.StartEpsilon = cmp.Or(o.StartEpsilon, 0.05)
	o.MaxEM = cmp.Or(o.MaxEM, 50)
	o.EMTol = cmp.Or(o.EMTol, 1e-4)
	o.Restarts = cmp.Or(o.Restarts, 1)
	o.FlagThreshold = cmp.Or(o.FlagThreshold, multirater.DefaultFlagThreshold)
	o.RankDraws = cmp.Or(o.RankDraws, multirater.DefaultKeepDraws)
	return o
}

// minEps and maxEps bound a learnt error rate: eq. 20 gives 0 for a rater
// whose labels all agree with the posterior, where the likelihood would be
// the plain one (logit -Inf).
const (
	minEps = 1e-6
	maxEps = 0.49
)

// fitted is one model fitted: the approximation, the raters' likelihoods
// and the EM history of their error rates.
type fitted struct {
	a       *infer.Approx
	liks    []*lik.RobustProbit
	history [][]float64 // per rater
	em      int         // EM steps
	plain   bool
	notes   []string
}

// Fit fits the robust classifier to data.
func Fit(ctx context.Context, data *Data, opts Options) (*multirater.FitResult, error) {
	start := time.Now()
	opts = opts.WithDefaults()
	if opts.FixEpsilon && !(opts.Epsilon >= 0 && opts.Epsilon < 0.5) {
		panic(fmt.Sprintf("robust: Epsilon %v outside [0, 1/2)", opts.Epsilon))
	}
	if opts.Noise < 0 || math.IsNaN(opts.Noise) {
		panic(fmt.Sprintf("robust: Noise %v", opts.Noise))
	}
	if lv := data.Levels; lv != nil && (len(lv) != 2 || !(lv[0] == data.Classes[0] && lv[1] == data.Classes[1] || lv[0] == data.Classes[1] && lv[1] == data.Classes[0])) {
		panic(fmt.Sprintf("robust: Levels %q are not the two classes %q", lv, data.Classes))
	}
	rs := make([]multirater.Rating, len(data.Labels))
	for j, l := range data.Labels {
		if l.Y != 1 && l.Y != -1 {
			panic(fmt.Sprintf("robust: label %d is %v, neither -1 nor +1", j, l.Y))
		}
		rs[j] = multirater.Rating{Item: l.Item, Rater: l.Rater, Level: int(l.Y+1) / 2}
	}
	dsg := design.Design{What: "robust.Data", ItemIDs: data.ItemIDs, RaterIDs: data.RaterIDs, K: 2,
		Ratings: rs, Cov: data.Cov, Words: design.Words{Noun: "labels", Verb: "labelled"}, Repeats: data.Repeats}
	perRater, err := dsg.Check()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x726f62757374))

	var chosen *fitted
	evidence := map[string]float64{}
	switch {
	case opts.Select:
		p, err := fitModel(ctx, data, opts, true, rng)
		if err != nil {
			return nil, err
		}
		r, err := fitModel(ctx, data, opts, false, rng)
		if err != nil {
			return nil, err
		}
		marg := IntegratedLogEvidence(r.a, data, r.liks)
		evidence[Plain], evidence[Robust], evidence[RobustIntegrated] = p.a.LogZ, r.a.LogZ, marg
		chosen = r
		if p.a.LogZ >= marg {
			chosen = p
		}
	default:
		plain := opts.FixEpsilon && opts.Epsilon == 0
		if chosen, err = fitModel(ctx, data, opts, plain, rng); err != nil {
			return nil, err
		}
	}
	res := summarise(data, opts, perRater, chosen, rng)
	if !opts.Select && !chosen.plain && !opts.FixEpsilon {
		res.Diagnostics.Evidence = map[string]float64{Robust: chosen.a.LogZ, RobustIntegrated: IntegratedLogEvidence(chosen.a, data, chosen.liks)}
	}
	if opts.Select {
		res.Diagnostics.Evidence = evidence
		res.Diagnostics.Selected = Robust
		if chosen.plain {
			res.Diagnostics.Selected = Plain
		}
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, fmt.Sprintf("model selection by the EP evidence (Kim & Ghahramani eq. 21), the robust model's with every error rate integrated over its uniform prior on [0, 1/2]: plain %.4f, robust %.4f (%.4f at the learnt error rates): %s",
			evidence[Plain], evidence[RobustIntegrated], evidence[Robust], res.Diagnostics.Selected))
	}
	res.Diagnostics.Seconds = time.Since(start).Seconds()
	if opts.Progress != nil {
		opts.Progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(start), Phase: "done"})
	}
	return res, nil
}

// fitModel fits the plain model (every eps 0) or the robust one (eps fixed
// at Options.Epsilon, or learnt by EM).
func fitModel(ctx context.Context, data *Data, opts Options, plain bool, rng *rand.Rand) (*fitted, error) {
	n, nl := len(data.ItemIDs), len(data.RaterIDs)
	eps := make([]float64, nl)
	learn := !plain && !opts.FixEpsilon
	for l := range eps {
		switch {
		case plain:
		case opts.FixEpsilon:
			eps[l] = opts.Epsilon
		default:
			eps[l] = opts.StartEpsilon
		}
	}
	noise := make([]float64, nl)
	for l := range noise {
		noise[l] = 1
		if opts.Noise > 0 {
			noise[l] = opts.Noise
		}
	}
	byRater := make([][]int, nl)
	for j, lb := range data.Labels {
		byRater[lb.Rater] = append(byRater[lb.Rater], j)
	}
	f := &fitted{plain: plain, history: make([][]float64, nl)}
	for l := range eps {
		f.history[l] = []float64{eps[l]}
	}
	var kern *infer.Kernel
	if data.Learn != nil {
		var err error
		if kern, err = data.Learn.NewKernel(n, data.Cov); err != nil {
			return nil, err
		}
	}
	// Progress over the EM steps: EM converges geometrically, so the
	// fraction done is log(first change / change) over
	// log(first change / EMTol) (or step/MaxEM when larger); each step's
	// evidence maximisation fills the share up to the next step's.
	emFrac, firstMoved, emStep := 0.0, 0.0, 0
	// After EM, the direct maximisation and the boundary's try fill the
	// shares [stageLo, stageHi] of the fraction under their own names.
	stage, stageLo, stageHi, last := "", 0.0, 0.0, 0.0
	inner := opts
	if opts.Progress != nil && learn {
		start := time.Now()
		inner.Progress = func(pr multirater.Progress) {
			next := math.Min(0.95, emFrac+math.Max(1/float64(opts.MaxEM), (1-emFrac)/4))
			lo, phase := emFrac, fmt.Sprintf("EM step %d of the error rates: %s", emStep+1, pr.Phase)
			if stage != "" {
				lo, next, phase = stageLo, stageHi, stage+": "+pr.Phase
			}
			// Never backwards: a step that ends before its share is used
			// up leaves the fraction where it was.
			f := math.Max(last, lo+pr.Fraction*(next-lo))
			last = f
			out := multirater.Progress{Fraction: f, Elapsed: time.Since(start), Phase: phase}
			if f > 0 {
				out.ETA = time.Duration(float64(out.Elapsed) * (1 - f) / f)
			}
			opts.Progress(out)
		}
	}
	for step := 0; ; step++ {
		emStep = step
		stepOpts := inner
		// Every E-step before the last is a generalised one, the first
		// too when it has one start (several starts need their full
		// searches to be compared): its latent noise and kernel only
		// start the next step's (labels only, 16,000 items: the first
		// step's full search took 64 evaluations, 30 of them in line
		// searches gaining nothing).
		stepOpts.emStep = step > 0 || learn && opts.Restarts == 1
		a, liks, err := runEP(ctx, data, stepOpts, eps, noise, kern, step == 0, f.a, rng)
		if err != nil {
			return nil, err
		}
		f.a, f.liks = a, liks
		for l, o := range liks {
			noise[l] = o.S
		}
		if !learn {
			break
		}
		// M-step per rater.
		moved := 0.0
		for l, js := range byRater {
			s := 0.0
			for _, j := range js {
				s += mStepTerm(a, data, liks[l], j, opts.PaperEM)
			}
			e := math.Min(maxEps, math.Max(minEps, s/float64(len(js))))
			moved = math.Max(moved, math.Abs(e-eps[l]))
			eps[l] = e
			f.history[l] = append(f.history[l], e)
		}
		f.em = step + 1
		if step == 0 {
			firstMoved = moved
		}
		if firstMoved > opts.EMTol && moved > 0 {
			emFrac = math.Max(emFrac, math.Min(0.95, math.Max(float64(f.em)/float64(opts.MaxEM), math.Log(firstMoved/moved)/math.Log(firstMoved/opts.EMTol))))
		}
		if moved < opts.EMTol {
			// One last E-step at the final error rates.
			if f.a, f.liks, err = runEP(ctx, data, inner, eps, noise, kern, false, f.a, rng); err != nil {
				return nil, err
			}
			f.notes = append(f.notes, fmt.Sprintf("error rates learnt by EM (%s): converged after %d steps (largest change %.2g < %.2g)", emRule(opts), f.em, moved, opts.EMTol))
			break
		}
		if f.em >= opts.MaxEM || (!opts.PaperEM && f.em >= directAfter) {
			if opts.PaperEM {
				if f.a, f.liks, err = runEP(ctx, data, inner, eps, noise, kern, false, f.a, rng); err != nil {
					return nil, err
				}
				f.notes = append(f.notes, fmt.Sprintf("error rates learnt by EM (%s): stopped after %d steps with a change of %.2g (tolerance %.2g); the error rates may still move", emRule(opts), f.em, moved, opts.EMTol))
				break
			}
			// EM converges slowly (geometrically, and slowest where an
			// error rate heads to 0): finish at its fixed point, the
			// maximum of the EP evidence, by maximising the evidence in the
			// error rates directly from where EM stopped.
			stage, stageLo, stageHi = fmt.Sprintf("after %d EM steps, the error rates by maximising the evidence directly", f.em), math.Max(last, emFrac), 0.85
			if f.a, f.liks, err = runEPFree(ctx, data, inner, eps, noise, kern, false, true, f.a, rng); err != nil {
				return nil, err
			}
			for l, o := range f.liks {
				f.history[l] = append(f.history[l], o.Eps)
			}
			f.notes = append(f.notes, fmt.Sprintf("error rates learnt by EM (%s): after %d steps (last change %.2g, tolerance %.2g) finished by maximising the EP evidence in them directly, EM's fixed point", emRule(opts), f.em, moved, opts.EMTol))
			break
		}
	}
	if learn && !opts.PaperEM {
		// The boundary is a completion tried from EM's optimum: a
		// generalised step (at most gemIterations) decides it.
		stage, stageLo, stageHi = fmt.Sprintf("the error rates below %g tried at 0", boundaryEps), math.Max(last, 0.85), 0.97
		bopts := inner
		bopts.emStep = true
		if err := f.tryBoundary(ctx, data, bopts, noise, kern, rng); err != nil {
			return nil, err
		}
	}
	f.noteDecayed(opts)
	return f, nil
}

// noteDecayed notes the items of the final EP run that settled only as
// their damping decayed (ep.Options.DecayAfter).
func (f *fitted) noteDecayed(opts Options) {
	if f.a.EP != nil && f.a.EP.Decayed > 0 {
		f.notes = append(f.notes, fmt.Sprintf("%d items' EP sites kept cycling (conflicting labels from precise raters) and settled only as their damping decayed after %d sweeps: their marginals are not exactly at a fixed point of EP", f.a.EP.Decayed, epOptions(opts.EP).DecayAfter))
	}
}

// boundaryEps is the error rate below which tryBoundary tries a rater's
// error rate at exactly 0.
const boundaryEps = 0.01

// tryBoundary completes the maximisation of the evidence in the error
// rates at the boundary eps = 0, which EM cannot reach (eps_l = 0 is a
// fixed point of every EM step, so EM starts above it and can only
// approach it, and stops where its steps become small): the raters whose
// learnt error rate is below boundaryEps get eps_l = 0 exactly (their
// plain probit likelihood), the latent noise is learnt again, and the fit
// is kept if its evidence is at least EM's. On data without labelling
// errors this makes the robust model the plain one exactly, as the
// maximum of the evidence over eps in [0, 1/2) says.
func (f *fitted) tryBoundary(ctx context.Context, data *Data, opts Options, noise []float64, kern *infer.Kernel, rng *rand.Rand) error {
	eps := make([]float64, len(f.liks))
	zeroed := 0
	for l, o := range f.liks {
		eps[l] = o.Eps
		if o.Eps < boundaryEps {
			eps[l] = 0
			zeroed++
		}
	}
	if zeroed == 0 {
		return nil
	}
	a, liks, err := runEP(ctx, data, opts, eps, append([]float64(nil), noise...), kern, false, f.a, rng)
	if err != nil {
		return err
	}
	if a.LogZ < f.a.LogZ {
		f.notes = append(f.notes, fmt.Sprintf("the %d error rates below %g set to 0 gave a lower evidence (%.4f < %.4f): EM's kept", zeroed, boundaryEps, a.LogZ, f.a.LogZ))
		return nil
	}
	f.notes = append(f.notes, fmt.Sprintf("the %d error rates below %g set to exactly 0 (the boundary of [0, 1/2), which EM only approaches) with the latent noise learnt again: evidence %.4f >= EM's %.4f", zeroed, boundaryEps, a.LogZ, f.a.LogZ))
	f.a, f.liks = a, liks
	for l, o := range liks {
		if o.Eps == 0 {
			f.history[l] = append(f.history[l], 0)
		}
	}
	return nil
}

// mStepTerm is label j's term of the M-step: its error responsibility
// under the tilted distribution, or with paper 1 - w_j of Kim &
// Ghahramani's eq. 19-20.
func mStepTerm(a *infer.Approx, data *Data, o *lik.RobustProbit, j int, paper bool) float64 {
	lb := data.Labels[j]
	if paper {
		return 1 - numeric.NormCDF(lb.Y*a.Mean[lb.Item]/math.Sqrt(o.S*o.S+a.Var[lb.Item]))
	}
	mu, s2 := cavity(a, data, j)
	return o.ErrorProb(lb.Y, mu, s2)
}

// directAfter is the number of EM steps (tilted M-step) after which the
// error rates are learnt by maximising the EP evidence in them directly
// (jointly with the latent noise, by L-BFGS with the analytic gradient),
// which reaches EM's fixed point in one maximisation instead of tens of
// geometrically slowing EM steps: on RTE (800 items, 164 raters, text
// kernel) EM was still moving after 20 steps.
const directAfter = 3

// directGainTol is the gain (nats in two L-BFGS iterations) at which the
// direct maximisation of the evidence in the error rates stops.
const directGainTol = 1e-2

// gemIterations bounds the L-BFGS iterations over the latent noise and
// kernel in the EM steps between the first and the final one.
const gemIterations = 8

// inducingWork bounds N M^2, the work of one sequential EP sweep under a
// FITC prior of M inducing items on N items (each item's site change is a
// rank-one update of the M×M inverse), for InducingRank: 4,000 items at
// M = 128.
const inducingWork = 4000 * 128 * 128

// minInducing is the fewest inducing items InducingRank gives.
const minInducing = 32

// InducingRank returns the default number of inducing items of a learnt
// covariate kernel's FITC prior (infer.LearnKernel.Rank) for a robust fit
// of n items whose families' default is m: m while n m^2 stays within
// inducingWork (up to 4,000 items at m = 128), beyond it the largest M
// with n M^2 <= inducingWork (64 at 16,000 items, 32 at 64,000), at least
// minInducing. The fit evaluates the evidence 60-100 times, each an EP
// run of 8-16 sweeps over every item (the width's evidence couples them
// all), so its cost grows as n M^2: on the ladder's data (rbf width
// learnt, 4,000 items) M = 64 took 21.3 CPU s against 48.5 for M = 128,
// with consensus Spearman 0.994 between the two and accuracy against the
// synthetic truth 0.887 against 0.891.
func InducingRank(n, m int) int {
	if n <= 0 || m <= 0 {
		panic(fmt.Sprintf("robust: InducingRank(%d, %d)", n, m))
	}
	if float64(n)*float64(m)*float64(m) <= inducingWork {
		return m
	}
	return min(m, max(minInducing, int(math.Sqrt(inducingWork/float64(n)))))
}

// runEP runs EP with every rater's error rate fixed at eps, and their
// latent noise (unless fixed by Options.Noise) and the kernel's learnt
// terms at the maximum of the evidence, starting from noise.
func runEP(ctx context.Context, data *Data, opts Options, eps, noise []float64, kern *infer.Kernel, first bool, warm *infer.Approx, rng *rand.Rand) (*infer.Approx, []*lik.RobustProbit, error) {
	return runEPFree(ctx, data, opts, eps, noise, kern, first, false, warm, rng)
}

// runEPFree is runEP; with freeEps the error rates are learnt by the
// evidence too, starting at eps. EP starts from warm's sites when warm is
// an EP approximation of the same labels (the previous EM step's).
func runEPFree(ctx context.Context, data *Data, opts Options, eps, noise []float64, kern *infer.Kernel, first, freeEps bool, warm *infer.Approx, rng *rand.Rand) (*infer.Approx, []*lik.RobustProbit, error) {
	n, nl := len(data.ItemIDs), len(data.RaterIDs)
	// Sequential EP with damping: the robust sites are not log-concave, and
	// an item's labels from several raters with small latent noise pull
	// undamped EP into oscillation.
	eo := epOptions(opts.EP)
	prob := &infer.Problem{Engine: multirater.EngineEP, N: n, Cov: data.Cov, Kernel: kern, Restarts: 1,
		EP: eo, Progress: opts.Progress, ParallelSites: -1}
	if kern != nil {
		prob.Cov = nil
	}
	if warm != nil && warm.EP != nil && len(warm.EP.Tau) == len(data.Labels) {
		prob.WarmEP = warm.EP
	}
	if first {
		prob.Restarts = opts.Restarts
	} else {
		// An EM step after the first: start the kernel where the last
		// step left it, as the latent noise starts at noise.
		prob.WarmKernel = true
	}
	if opts.emStep {
		// A generalised EM step (Dempster et al. 1977 sec. 3; Neal &
		// Hinton 1998): the noise and kernel only need to raise the
		// evidence between two M-steps of the error rates, from where the
		// last step left them; the final E-step maximises fully.
		prob.MaxIterations = gemIterations
	}
	liks := setSites(prob, data, eps, noise)
	// The restarts after the first may run at once, each on likelihoods
	// of its own.
	prob.Replica = func() *infer.Problem {
		q := &infer.Problem{}
		setSites(q, data, eps, noise)
		return q
	}
	if freeEps {
		// Every error rate and latent noise at once (twice the raters):
		// the last of hundreds of L-BFGS iterations gain hundredths of a
		// nat (RTE: 213 iterations at 1e-4).
		prob.GainTol = directGainTol
	}
	prob.Fixed = func(l, k int) bool {
		if k == 0 {
			return !freeEps // the error rate: learnt by EM, fixed here
		}
		return opts.Noise > 0
	}
	prob.Start = func(s int, rng *rand.Rand, dst []float64) {
		for l := 0; l < nl; l++ {
			o := lik.RobustProbit{Eps: eps[l], S: noise[l]}
			o.ParamsTo(dst[2*l : 2*l+2])
			if s > 0 && opts.Noise == 0 {
				dst[2*l+1] += 0.5 * rng.NormFloat64()
			}
		}
	}
	if nl > 1 && opts.Noise == 0 {
		// Several raters: a log-normal prior ln s_l ~ N(0, 1) on the latent
		// noise (type-II MAP), so that a rater whose labels say little is
		// not explained by an unbounded noise (which makes the error rate
		// unidentifiable) and raters with few labels borrow a sensible
		// scale.
		prob.PriorNote = "log evidence + log prior of the raters' latent noise"
		prob.LogPrior = func(l int, p, grad []float64) float64 {
			if grad != nil {
				grad[1] -= p[1]
			}
			return -0.5 * p[1] * p[1]
		}
	}
	a, err := infer.Fit(ctx, prob, rng)
	if err != nil {
		return nil, nil, err
	}
	return a, liks, nil
}

// epOptions returns the EP options of every run of the fit: o with
// negative sites kept, and Damping, MaxSweeps and DecayAfter defaulted.
func epOptions(o ep.Options) ep.Options {
	eo := o
	eo.NegativeSites = true
	if eo.Damping == 0 {
		eo.Damping = 0.7
	}
	if eo.MaxSweeps == 0 {
		eo.MaxSweeps = 500
	}
	if eo.DecayAfter == 0 {
		// Labels only (independent items): an item whose labels conflict
		// and come from raters with small latent noise has a bimodal tilted
		// distribution, and its sites can cycle for good (64,000 ladder
		// items, 50 raters: 5-10 items with 4-5 labels split 2:2 or 3:2
		// between raters of s_l near 0.2 kept EP from converging in 500
		// sweeps at every evaluation after the fourth, and the fit failed
		// in its final approximation); when the final approximation's runs
		// (warm, cold, clamped) do not settle, a last one decays their
		// damping after half the sweeps (infer.EP.Approximate).
		eo.DecayAfter = eo.MaxSweeps / 2
	}
	return eo
}

// setSites sets prob's likelihoods (one per rater, at error rates eps and
// latent noise noise), its sites on them, one per label, and FactorTol,
// and returns the likelihoods.
func setSites(prob *infer.Problem, data *Data, eps, noise []float64) []*lik.RobustProbit {
	liks := make([]*lik.RobustProbit, len(data.RaterIDs))
	prob.Liks = make([]lik.LaplaceLearnable, len(liks))
	for l := range liks {
		liks[l] = &lik.RobustProbit{Eps: eps[l], S: noise[l]}
		prob.Liks[l] = liks[l]
	}
	prob.Sites = make([]lik.Site, len(data.Labels))
	prob.Owner = make([]int, len(data.Labels))
	for j, lb := range data.Labels {
		prob.Sites[j] = lik.Site{Item: lb.Item, Y: lb.Y, Lik: liks[lb.Rater]}
		prob.Owner[j] = lb.Rater
	}
	// The factor may leave out 1e-2 of the smallest rater's latent noise
	// variance.
	prob.FactorTol = func() float64 {
		s := math.Inf(1)
		for _, o := range liks {
			s = math.Min(s, o.S*o.S)
		}
		return 1e-2 * math.Max(s, 1e-4)
	}
	return liks
}

// settings records opts in the fit document.
func settings(opts Options) *multirater.RobustSettings {
	rs := &multirater.RobustSettings{Noise: opts.Noise, Select: opts.Select, Restarts: opts.Restarts}
	if opts.FixEpsilon {
		e := opts.Epsilon
		rs.Epsilon = &e
	}
	if !opts.FixEpsilon {
		rs.EM = "tilted"
		if opts.PaperEM {
			rs.EM = "paper"
		}
		rs.StartEpsilon, rs.MaxEM, rs.EMTol = opts.StartEpsilon, opts.MaxEM, opts.EMTol
	}
	return rs
}

// emRule names the M-step.
func emRule(opts Options) string {
	if opts.PaperEM {
		return "Kim & Ghahramani sec. 4, eq. 20 as printed"
	}
	return "Kim & Ghahramani sec. 4 with the tilted error responsibilities: a stationary point of the EP evidence"
}

// cavity returns label j's EP cavity.
func cavity(a *infer.Approx, data *Data, j int) (float64, float64) {
	if a.EP != nil && len(a.EP.CavMean) == len(data.Labels) {
		return a.EP.CavMean[j], a.EP.CavVar[j]
	}
	i := data.Labels[j].Item
	return a.Mean[i], a.Var[i]
}

// PError returns the probability that a label with value y and cavity
// N(mu, s2) under likelihood o is a labelling error: the error component's
// posterior probability, or with Eps = 0 the cavity's predictive
// probability of the other label.
func PError(o lik.RobustProbit, y, mu, s2 float64) float64 {
	if o.Eps == 0 {
		return numeric.NormCDF(-y * mu / math.Sqrt(o.S*o.S+s2))
	}
	return o.ErrorProb(y, mu, s2)
}

// summarise turns the chosen fit into the fit document.
func summarise(data *Data, opts Options, perRater []int, f *fitted, rng *rand.Rand) *multirater.FitResult {
	a := f.a
	n, nl := len(data.ItemIDs), len(data.RaterIDs)
	kern := data.Kernel
	if kern == "" {
		kern = "identity"
	}
	neg, pos := data.Classes[0], data.Classes[1]
	// at[k] is the place of class k (0 negative, 1 positive) in the
	// result's levels.
	levels, at := []string{neg, pos}, [2]int{0, 1}
	if data.Levels != nil && data.Levels[0] == pos {
		levels, at = []string{pos, neg}, [2]int{1, 0}
	}
	res := &multirater.FitResult{
		Schema: multirater.FitSchema,
		Model: multirater.ModelSettings{Model: Name, Engine: multirater.EngineEP, Output: multirater.OutputClasses, Kernel: kern,
			Likelihood: "robust-probit", Seed: opts.Seed, FlagThreshold: opts.FlagThreshold, KeepDraws: opts.RankDraws,
			Backend: gp.Backend},
		Levels: levels,
	}
	if a.Learnt != nil {
		res.Model.Learnt = &multirater.Learnt{Source: "evidence (ep)", Terms: a.Learnt}
	}
	res.Model.Robust = settings(opts)
	res.Model.Robust.Positive = pos
	dg := &res.Diagnostics
	a.Diagnose(dg, multirater.EngineEP)
	le := a.LogZ
	dg.LogEvidence = &le
	if a.EP != nil {
		neg := 0
		for _, t := range a.EP.Tau {
			if t < 0 {
				neg++
			}
		}
		dg.Moves = map[string]float64{"negative_sites": float64(neg), "clamped_updates": float64(a.EP.Clamped), "skipped_updates": float64(a.EP.Skipped)}
		if neg > 0 {
			dg.Notes = append(dg.Notes, fmt.Sprintf("%d of %d sites ended with a negative precision (the robust likelihood is not log-concave); EP kept them (Minka's EP)", neg, len(data.Labels)))
		}
	}

	// Consensus: the class of the latent f with the noise of the median
	// rater, and no labelling error.
	ss := make([]float64, nl)
	for l, o := range f.liks {
		ss[l] = o.S
	}
	sort.Float64s(ss)
	sMed := ss[nl/2]
	res.Items = make([]multirater.ItemResult, n)
	cls := make([]int, n)
	for i := range res.Items {
		it := &res.Items[i]
		it.ID = data.ItemIDs[i]
		mu, sd := a.Mean[i], math.Sqrt(a.Var[i])
		it.Score = multirater.NormalEstimate(mu, sd)
		p := numeric.NormCDF(mu / math.Sqrt(sMed*sMed+a.Var[i]))
		it.ClassProbs = map[string]float64{neg: numeric.Round6(1 - p), pos: numeric.Round6(p)}
		it.Class = neg
		if p > 0.5 {
			it.Class, cls[i] = pos, 1
		}
		h := 0.0
		for _, q := range []float64{p, 1 - p} {
			if q > 0 {
				h -= q * math.Log2(q)
			}
		}
		it.Entropy = &h
	}
	code := func(y float64) string {
		if y > 0 {
			return pos
		}
		return neg
	}
	res.LabelErrors = make([]multirater.LabelError, len(data.Labels))
	res.Raters = make([]multirater.RaterResult, nl)
	for l := range res.Raters {
		o := f.liks[l]
		rr := &res.Raters[l]
		rr.ID, rr.NLabels = data.RaterIDs[l], perRater[l]
		rr.LevelCounts = make([]int, 2)
		rr.Confusion = [][]int{{0, 0}, {0, 0}}
		prec := 1 / (o.S * o.S)
		rr.Precision = multirater.Estimate{Mean: prec, Q025: prec, Q50: prec, Q975: prec}
		rr.Variance = multirater.Estimate{Mean: o.S * o.S, Q025: o.S * o.S, Q50: o.S * o.S, Q975: o.S * o.S}
		hist := append([]float64(nil), f.history[l]...)
		if f.plain {
			hist = nil
		}
		rr.Epsilon = &multirater.ErrorRate{Value: o.Eps, History: hist}
	}
	agree := make([]int, nl)
	lp := make([]float64, nl)
	for j, lb := range data.Labels {
		o := f.liks[lb.Rater]
		mu, s2 := cavity(a, data, j)
		pe := PError(*o, lb.Y, mu, s2)
		res.LabelErrors[j] = multirater.LabelError{Item: data.ItemIDs[lb.Item], Rater: data.RaterIDs[lb.Rater], Label: code(lb.Y), PError: numeric.Round6(pe)}
		rr := &res.Raters[lb.Rater]
		k := int(lb.Y+1) / 2
		rr.LevelCounts[at[k]]++
		rr.Confusion[at[cls[lb.Item]]][at[k]]++
		if k == cls[lb.Item] {
			agree[lb.Rater]++
		}
		lz, _, _ := o.Tilted(lb.Y, a.Mean[lb.Item], a.Var[lb.Item])
		lp[lb.Rater] += lz
		it := &res.Items[lb.Item]
		it.NLabels++
		if it.Labels == nil {
			it.Labels = map[string]string{}
		}
		it.Labels[data.RaterIDs[lb.Rater]] = code(lb.Y)
		if 1-pe < opts.FlagThreshold {
			res.Flags = append(res.Flags, multirater.Flag{Item: data.ItemIDs[lb.Item], Rater: data.RaterIDs[lb.Rater],
				Label: code(lb.Y), Prob: numeric.Round6(1 - pe), Expected: code(-lb.Y)})
		}
	}
	for l := range res.Raters {
		rr := &res.Raters[l]
		c := float64(agree[l]) / float64(rr.NLabels)
		rr.ConsensusAgreement = &c
		rr.MeanLogPred = lp[l] / float64(rr.NLabels)
	}
	sort.SliceStable(res.LabelErrors, func(x, y int) bool { return res.LabelErrors[x].PError > res.LabelErrors[y].PError })
	res.SortFlags()
	// Ranks from joint draws of the Gaussian posterior.
	a.SetRanks(res, rng, opts.RankDraws)
	what := "robust: error rates learnt by EM"
	switch {
	case f.plain:
		what = "plain: no labelling errors (epsilon 0)"
	case opts.FixEpsilon:
		what = fmt.Sprintf("robust: error rates fixed at %g", opts.Epsilon)
	}
	dg.Notes = append(dg.Notes, "model "+what)
	dg.Notes = append(dg.Notes, f.notes...)
	dg.Notes = append(dg.Notes,
		fmt.Sprintf("class probabilities are those of the latent consensus with the median rater's latent noise (%.4g) and no labelling error", sMed),
		"p_error of a label: "+map[bool]string{true: "the probability of the other label given the other labels (the plain model has no error component)", false: "the posterior probability that it is a labelling error given the other labels (the error component of Kim & Ghahramani eq. 10 at the label's EP cavity)"}[f.plain],
		fmt.Sprintf("ranks come from %d joint draws of the Gaussian posterior approximation", infer.RankDraws(len(res.Items), opts.RankDraws)))
	dg.Notes = append(dg.Notes, a.Notes...)
	return res
}

// Predictor predicts new items from a robust fit: the latent predictive
// N(mu, s^2) of gp.SitePredictor and the class probability of the latent
// consensus, Phi(mu / sqrt(s_med^2 + s^2)) with the median rater's latent
// noise s_med and no labelling error (the fit's items' ClassProbs).
type Predictor struct {
	n        int
	sp       *gp.SitePredictor
	s        float64
	neg, pos string
	posFirst bool // the result's levels are [positive, negative]
	// The raters' ids, latent noise sds and error rates, for their label
	// predictive distributions.
	raters []string
	rs     []float64
	eps    []float64
}

// NewPredictor prepares the predictions of a robust fit result whose items
// have the covariance cov.
func NewPredictor(res *multirater.FitResult, cov mat.Symmetric) (*Predictor, error) {
	if err := multirater.CheckPredictable(res, "a", Name, cov); err != nil {
		return nil, err
	}
	n := len(res.Items)
	if res.Gaussian == nil || len(res.Levels) != 2 || len(res.Raters) == 0 {
		return nil, multirater.DataErrorf("the robust fit result has no gaussian posterior, raters or two classes")
	}
	// The positive class: recorded in model.robust (documents written
	// before it was say Levels[1]).
	p := &Predictor{n: n, neg: res.Levels[0], pos: res.Levels[1]}
	if rs := res.Model.Robust; rs != nil && rs.Positive != "" {
		switch rs.Positive {
		case res.Levels[1]:
		case res.Levels[0]:
			p.neg, p.pos, p.posFirst = res.Levels[1], res.Levels[0], true
		default:
			return nil, multirater.DataErrorf("the robust fit result's positive class %q is not one of its levels %q", rs.Positive, res.Levels)
		}
	}
	ss := make([]float64, len(res.Raters))
	for l, r := range res.Raters {
		if !(r.Variance.Mean > 0) || math.IsInf(r.Variance.Mean, 0) {
			return nil, multirater.DataErrorf("rater %q has no valid latent noise variance in the fit result", r.ID)
		}
		ss[l] = math.Sqrt(r.Variance.Mean)
		e := 0.0
		if r.Epsilon != nil {
			e = r.Epsilon.Value
		}
		if !(e >= 0 && e < 0.5) {
			return nil, multirater.DataErrorf("rater %q has the error rate %v in the fit result, outside [0, 1/2)", r.ID, e)
		}
		p.raters, p.rs, p.eps = append(p.raters, r.ID), append(p.rs, ss[l]), append(p.eps, e)
	}
	sort.Float64s(ss)
	p.s = ss[len(ss)/2]
	var err error
	if p.sp, err = gp.NewSitePredictor(res.Gaussian.Precision, res.Gaussian.Shift, cov); err != nil {
		return nil, multirater.DataErrorf("the fit's gaussian posterior: %v", err)
	}
	return p, nil
}

// Predict returns the results of new items: ids names them, cross holds
// their covariances with the fit's items (len(ids)×N) and prior their prior
// variances. Each result has NLabels 0, the latent score, the class
// probabilities (at the median latent noise of the raters, without
// labelling errors: the item's class), the class, and each rater's
// predictive distribution of a label they would give (RaterClassProbs:
// their error rate and latent noise included); Rank is nil.
func (p *Predictor) Predict(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	out := make([]multirater.ItemResult, len(ids))
	p.sp.LatentRows("robust: Predict", len(ids), cross, prior, func(i int, _ []float64, mu, vr float64) {
		id := ids[i]
		sd := math.Sqrt(vr)
		q := numeric.NormCDF(mu / math.Sqrt(p.s*p.s+vr))
		it := multirater.ItemResult{ID: id,
			Score:      multirater.NormalEstimate(mu, sd),
			ClassProbs: map[string]float64{p.neg: numeric.Round6(1 - q), p.pos: numeric.Round6(q)}, Class: p.neg}
		if q > 0.5 {
			it.Class = p.pos
		}
		// Each rater's label predictive: their error rate mixed with the
		// probit of their latent noise (Kim & Ghahramani eq. 10).
		it.RaterClassProbs = make(map[string][]float64, len(p.raters))
		for l, id := range p.raters {
			pl := p.eps[l] + (1-2*p.eps[l])*numeric.NormCDF(mu/math.Sqrt(p.rs[l]*p.rs[l]+vr))
			it.RaterClassProbs[id] = []float64{numeric.Round6(1 - pl), numeric.Round6(pl)}
			if p.posFirst {
				it.RaterClassProbs[id] = []float64{numeric.Round6(pl), numeric.Round6(1 - pl)}
			}
		}
		out[i] = it
	})
	return out
}

// occamPanels and occamNodes are the composite Gauss-Legendre rule of
// IntegratedLogEvidence on [0, 1/2]: 64 panels of 16 nodes resolve an
// error rate's posterior down to a width of about 1e-3 (some 10^5 labels).
const occamPanels, occamNodes = 64, 16

// IntegratedLogEvidence returns the EP log evidence of a robust fit with
// every rater's error rate integrated over a uniform prior on [0, 1/2],
//
//	log integral Z_EP(eps) prod_l 2 d eps_l,
//
// at the fit's latent noise and kernel. Z_EP(eps) is taken as the fit's
// log Z_EP plus, per label j, the change of its tilted log normaliser
// log(eps_l + (1 - 2 eps_l) Phi(y_j mu_j / sqrt(s_l^2 + s2_j))) (Kim &
// Ghahramani sec. 3, step 2) with the label's EP cavity N(mu_j, s2_j) held
// fixed: the first-order change of log Z_EP, which is stationary in the
// sites at the EP fixed point, so that its slope in eps is exact (the EM
// responsibilities). With the cavities fixed the integral factorises over
// raters into one-dimensional integrals, done by a composite
// Gauss-Legendre rule. reference_test.go compares it with an
// importance-sampling estimate of the exact integral.
func IntegratedLogEvidence(a *infer.Approx, data *Data, liks []*lik.RobustProbit) float64 {
	nl := len(liks)
	// Each label's log Phi(y mu / sqrt(s^2 + s2)): with the cavities fixed
	// it does not depend on eps, so the quadrature's 1024 nodes per rater
	// need one log and one exp per label each (Tilted's log Z, the same
	// arithmetic).
	by := make([][]float64, nl)
	for j, lb := range data.Labels {
		mu, s2 := cavity(a, data, j)
		s := liks[lb.Rater].S
		k := 1 / math.Sqrt(s*s+s2)
		by[lb.Rater] = append(by[lb.Rater], numeric.LogNormCDF(lb.Y*mu*k))
	}
	x := make([]float64, occamNodes)
	w := make([]float64, occamNodes)
	quad.Legendre{}.FixedLocations(x, w, 0, 1)
	total := a.LogZ
	lt := make([]float64, occamPanels*occamNodes)
	for l, lphis := range by {
		total += logOccam(func(eps float64) float64 { return robustLogZSum(eps, lphis) }, liks[l].Eps, x, w, lt)
	}
	return total
}

// logOccam returns log integral_0^{1/2} exp(g(eps) - g(eps0)) 2 d eps, one
// rater's factor of IntegratedLogEvidence, by the composite Gauss-Legendre
// rule of occamPanels panels of the nodes x and weights w on [0, 1]
// (occamNodes each), using the scratch lt (occamPanels*occamNodes).
func logOccam(g func(eps float64) float64, eps0 float64, x, w, lt []float64) float64 {
	g0 := g(eps0)
	const h = 0.5 / occamPanels
	for p := 0; p < occamPanels; p++ {
		for k := range x {
			lt[p*occamNodes+k] = g((float64(p)+x[k])*h) - g0 + math.Log(2*h*w[k])
		}
	}
	return floats.LogSumExp(lt)
}

// robustLogZSum is the sum over labels of lik.RobustProbit's tilted log Z,
// log(eps + (1 - 2 eps) Phi(z)), given each label's log Phi(z) (lphis), by
// the arithmetic of RobustProbit.Tilted.
func robustLogZSum(eps float64, lphis []float64) float64 {
	l1 := math.Log1p(-2 * eps)
	le := math.Log(eps)
	v := 0.0
	for _, lp := range lphis {
		lw := l1 + lp
		if eps > 0 {
			a, b := le, lw
			if a < b {
				a, b = b, a
			}
			v += a + math.Log1p(math.Exp(b-a))
		} else {
			v += lw
		}
	}
	return v
}
