// Package bounded is the model family of bounded ratings (sliders,
// percentages, 0-100 scores): Jensen, Nielsen & Larsen's bounded Gaussian
// process regression (beta, truncated-Gaussian and probit-warped
// likelihoods, lik.Beta, lik.TruncGauss, lik.Warped), for one rater as in
// the paper and for many: a latent consensus f_n per item under the GP
// prior and each rater l with their own dispersion (nu_l, or the warped
// noise sd) and, as an option, an additive bias b_l on the probit scale,
// one site per rating. It is fitted by EP (the default) or Laplace's
// method, the dispersions (and biases, and learnt kernel terms) by
// maximising the evidence (multirater/infer).
//
// Values strictly inside (Lo, Hi) map linearly to (0, 1) and nothing else
// is done to them. A value exactly at a bound cannot come from any of the
// three likelihoods (their densities vanish or are infinite there). With
// eps half the smallest gap between the distinct values observed (the
// data's resolution: 0.005 for integers 0..100), at most 0.005 and at least
// 1e-4 on the (0, 1) scale, such a rating is by default moved inside by
// eps (Options.Bounds "squeeze"). Options.Bounds "censor" reads it as
// censored instead (lik.Censored): a rating at Lo has the likelihood
// P(y <= eps | f) and one at Hi P(y >= 1 - eps | f), what a slider at its
// end says; it is slower (the censored probabilities and their derivatives
// are computed numerically) and on data with most ratings at a bound (Snow
// et al.'s emotion ratings: 57-76% zeros) EP may not settle. The fit's
// notes say how many ratings were at a bound and what was done.
//
// The choice (Options.Likelihood or Options.Dispersions Auto, or
// Data.Alt): Fit fits every candidate, likelihood (Beta and lik.Normal,
// the Gaussian on the rating scale, whose consensus under one shared
// dispersion and the identity kernel is an affine map of the raters' mean
// when every item has as many ratings) x dispersions (PerRater, Shared) x
// prior (Data's and Data.Alt), and keeps the one whose reported consensus
// best predicts held-out ratings: the mean over the ratings of the log
// probability of the rating's cell at the data's resolution ([y - eps,
// y + eps], [0, eps] at Lo, [1 - eps, 1] at Hi) under a new rating by a
// rater with the median dispersion, given every other rating (the EP
// cavity of the rating's site; Opper & Winther 2000, Vehtari et al. 2016
// sec. 3). Evidences are not comparable across the likelihoods (a beta
// density at a squeezed bound is no probability), so the choice uses this
// score, which reads no gold. The fit document lists every candidate
// (diagnostics.model_candidates) and says why (diagnostics.choice); a
// candidate that fails drops out with a note.
package bounded

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/design"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/infer"
	"concord/multirater/laplace"
	"concord/multirater/lik"
	"concord/multirater/numeric"
)

// Name is the model's name in the fit document.
const Name = "bounded"

// Likelihood names.
const (
	Beta      = "beta"
	TruncNorm = "truncnorm"
	Warped    = "warped"
	Normal    = "normal"
	// Auto (Options.Likelihood, Options.Dispersions) asks Fit to choose
	// (see the package documentation).
	Auto = "auto"
)

// Dispersion sharing (Options.Dispersions).
const (
	PerRater = "per-rater"
	Shared   = "shared"
)

// Treatments of ratings at a bound (Options.Bounds).
const (
	BoundsCensor  = "censor"
	BoundsSqueeze = "squeeze"
)

// Likelihoods lists the likelihoods, the default first.
var Likelihoods = []string{Beta, TruncNorm, Warped, Normal}

// Rating is one bounded rating: item and rater indices and the value on
// the user's scale [Lo, Hi].
type Rating struct {
	Item, Rater int
	Value       float64
}

// Data is what Fit fits.
type Data struct {
	ItemIDs, RaterIDs []string
	Ratings           []Rating
	// Repeats allows several ratings of an item by one rater (repeated
	// labels): each is one more site of the likelihood.
	Repeats bool
	// Lo < Hi bound the values.
	Lo, Hi float64
	// Cov is the prior covariance of the items' latent values (nil: the
	// identity, unless Learn has terms); Kernel names it.
	Cov    mat.Symmetric
	Kernel string
	// Learn, when not nil, holds kernel terms whose hyperparameters are
	// learnt by the evidence (added to Cov).
	Learn *infer.LearnKernel
	// Alt are other priors of the items that the choice considers beside
	// Cov (see the package documentation): the identity kernel beside a text kernel the
	// user did not ask for, say. Empty: Cov only.
	Alt []Prior
	// Final, when set, gives the prior of a final run (and a few words
	// saying what it is, for the notes): when the fit that Fit keeps is
	// on Cov (no kernel term learnt, not one of Alt's priors), its rater
	// parameters, learnt by maximising the evidence on Cov, are held
	// fixed and one more EP run or Newton's method on Final's prior
	// (infer.FinalRun) gives the posterior, the log evidence and the
	// document (a low-rank Cov of a small rank for the many evaluations
	// of the search, a larger rank once). The choice among candidates
	// and its leave-one-out scores stay on Cov.
	Final func(ctx context.Context) (mat.Symmetric, string, error)
}

// Prior is one prior covariance of the items: Cov (nil: the identity,
// unless Learn has terms), named Kernel, and kernel terms Learn whose
// hyperparameters the evidence learns.
type Prior struct {
	Kernel string
	Cov    mat.Symmetric
	Learn  *infer.LearnKernel
}

// Options control Fit. The zero value means the defaults given for each
// field.
type Options struct {
	// Likelihood is Beta (the default), TruncNorm, Warped, Normal or Auto
	// (chosen among Beta and Normal, see the package documentation).
	Likelihood string
	// Dispersions is PerRater (the default: each rater's dispersion is
	// learnt), Shared (one dispersion for every rater, learnt) or Auto
	// (chosen, see the package documentation). Shared does not go with
	// Bias.
	Dispersions string
	// Engine is multirater.EngineEP (the default) or
	// multirater.EngineLaplace.
	Engine string
	// Dispersion, when positive, fixes every rater's nu (beta, truncnorm:
	// the inverse dispersion; warped: the noise sd on the probit scale is
	// 1/Dispersion); zero means each rater's is learnt.
	Dispersion float64
	// Bias fits an additive bias b_l per rater on the probit scale (with a
	// N(0, 1) prior; the first rater's is 0 when there is one rater).
	Bias bool
	// Priors adds a weak log-normal prior on each rater's dispersion,
	// ln nu_l ~ N(ln nu_0, 1.5^2) (nu_0 = 10 for beta, 5 for truncnorm,
	// 1/sigma with sigma = 0.5 for warped, 1/sigma with sigma = 0.2 of the
	// range for normal), to the maximised evidence
	// (type-II MAP): a rater with few ratings borrows a sensible scale.
	// analysis sets it for several raters.
	Priors bool
	// PriorSD is the sd of the log-normal prior of Priors; 0 means 1.5.
	PriorSD float64
	// Restarts is the number of starting points of the evidence
	// maximisation; 0 means 2, or 1 under Priors (the prior makes the
	// optimum unique in practice).
	Restarts int
	// Seed seeds the starting points and the draws of the ranks.
	Seed uint64
	// FlagThreshold: a rating whose two-sided predictive tail probability
	// 2 min(F(y), 1 - F(y)) (F the rater's predictive CDF for the item) is
	// below it is flagged; 0 means multirater.DefaultFlagThreshold.
	FlagThreshold float64
	// Bounds is what is done with ratings exactly at Lo or Hi: "squeeze"
	// (the default) or "censor" (see the package documentation).
	Bounds string
	// RankDraws is the number of joint posterior draws of the ranks; 0
	// means multirater.DefaultKeepDraws.
	RankDraws int
	// EP and Laplace control the engines.
	EP      ep.Options
	Laplace laplace.Options
	// Progress, when set, is called after each evaluation of the evidence.
	Progress func(multirater.Progress)
	// candidate marks a candidate of the choice (choose), whose search
	// stops at gainTol.
	candidate bool
}

// WithDefaults returns the options with zero fields replaced by their
// defaults.
func (o Options) WithDefaults() Options {
	if o.Likelihood == "" {
		o.Likelihood = Beta
	}
	if o.Dispersions == "" {
		o.Dispersions = PerRater
	}
	if o.Engine == "" {
		o.Engine = multirater.EngineEP
	}
	if o.Restarts == 0 {
		o.Restarts = 2
		if o.Priors {
			o.Restarts = 1
		}
	}
	if o.FlagThreshold == 0 {
		o.FlagThreshold = multirater.DefaultFlagThreshold
	}
	if o.PriorSD == 0 {
		o.PriorSD = 1.5
	}
	if o.Bounds == "" {
		o.Bounds = BoundsSqueeze
	}
	if o.RankDraws == 0 {
		o.RankDraws = multirater.DefaultKeepDraws
	}
	return o
}

// ParseLikelihood returns the likelihood's name in canonical form, or an
// error listing the known ones.
func ParseLikelihood(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "":
		return Beta, nil
	case Beta, TruncNorm, Warped, Normal, Auto:
		return s, nil
	case "tg", "truncgauss", "truncated":
		return TruncNorm, nil
	case "gauss", "gaussian":
		return Normal, nil
	}
	return "", fmt.Errorf("likelihood %q: expected auto, beta, truncnorm, warped or normal", s)
}

// ParseDispersions returns the dispersion sharing in canonical form, or an
// error listing the known ones.
func ParseDispersions(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return PerRater, nil
	case PerRater, "rater", "per_rater", "perrater":
		return PerRater, nil
	case Shared, "one", "common":
		return Shared, nil
	case Auto:
		return Auto, nil
	}
	return "", fmt.Errorf("dispersions %q: expected auto, per-rater or shared", s)
}

// newLik returns a likelihood of the named kind with dispersion nu.
func newLik(name string, nu float64) lik.Bounded {
	switch name {
	case Beta:
		return &lik.Beta{Nu: nu}
	case TruncNorm:
		return &lik.TruncGauss{Nu: nu}
	case Warped:
		return &lik.Warped{Sigma: 1 / nu}
	case Normal:
		return &lik.Normal{Sigma: 1 / nu}
	}
	panic(fmt.Sprintf("bounded: unknown likelihood %q", name))
}

// startNu is the first start's dispersion nu_0 of each likelihood, the
// centre of the prior of Options.Priors.
func startNu(name string) float64 {
	switch name {
	case TruncNorm:
		return 5
	case Warped:
		return 2
	case Normal:
		return 5 // Sigma = 0.2 of the range
	}
	return 10
}

// nuOf returns the dispersion nu of a likelihood (1/sigma for warped).
func nuOf(l lik.Bounded) float64 {
	switch v := l.(type) {
	case *lik.Beta:
		return v.Nu
	case *lik.TruncGauss:
		return v.Nu
	case *lik.Warped:
		return 1 / v.Sigma
	case *lik.Normal:
		return 1 / v.Sigma
	case *lik.Shift:
		return nuOf(v.L)
	}
	panic("bounded: unknown likelihood")
}

// biasOf returns the bias of a likelihood (0 without one).
func biasOf(l lik.Bounded) float64 {
	if s, ok := l.(*lik.Shift); ok {
		return s.B
	}
	return 0
}

// Squeeze returns the values mapped to (0, 1) with those at a bound moved
// inside by eps (see the package documentation), eps, and how many were
// moved.
func Squeeze(values []float64, lo, hi float64) (u []float64, eps float64, moved int) {
	u = make([]float64, len(values))
	distinct := []float64{0, 1}
	for i, v := range values {
		u[i] = (v - lo) / (hi - lo)
		distinct = append(distinct, u[i])
	}
	sort.Float64s(distinct)
	gap := 1.0
	for i := 1; i < len(distinct); i++ {
		if d := distinct[i] - distinct[i-1]; d > 1e-12 && d < gap {
			gap = d
		}
	}
	eps = math.Max(1e-4, math.Min(0.005, gap/2))
	for i := range u {
		switch {
		case u[i] <= 0:
			u[i] = eps
			moved++
		case u[i] >= 1:
			u[i] = 1 - eps
			moved++
		}
	}
	return u, eps, moved
}

// Fit fits the bounded model to data. With Options.Likelihood or
// Options.Dispersions Auto, or priors in Data.Alt, it fits every candidate
// and keeps the best (see the package documentation).
func Fit(ctx context.Context, data *Data, opts Options) (*multirater.FitResult, error) {
	opts = opts.WithDefaults()
	name, err := ParseLikelihood(opts.Likelihood)
	if err != nil {
		panic("bounded: " + err.Error())
	}
	disp, err := ParseDispersions(opts.Dispersions)
	if err != nil {
		panic("bounded: " + err.Error())
	}
	if disp != PerRater && opts.Bias {
		panic("bounded: shared dispersions with a bias per rater")
	}
	if name == Auto || disp == Auto || len(data.Alt) > 0 {
		return choose(ctx, data, opts, name, disp)
	}
	res, _, err := fitOne(ctx, data, opts, name, disp == Shared)
	return res, err
}

// fitOne fits one model: likelihood name, shared or per-rater
// dispersions; it returns the fit and its leave-one-out scores (looScore).
func fitOne(ctx context.Context, data *Data, opts Options, name string, shared bool) (*multirater.FitResult, looScores, error) {
	c, err := fitCandidate(ctx, data, opts, name, shared, nil)
	if err != nil {
		return nil, looScores{}, err
	}
	res, err := c.result(ctx)
	return res, c.loo, err
}

// candidate is one fitted model before its fit document is made: the
// approximation, its leave-one-out scores and what summarise needs (the
// document costs quadratures per item, so that choose makes it for the
// chosen candidate alone).
type candidate struct {
	data   *Data
	opts   Options
	name   string
	shared bool
	ur     *unitRatings
	prob   *infer.Problem
	liks   []lik.Bounded
	a      *infer.Approx
	rng    *rand.Rand
	loo    looScores
	start  time.Time
}

// fitCandidate fits one model (see fitOne) without making its document.
// warm, when not nil, is a fitted candidate of the same likelihood on the
// same ratings (see warmStart) whose optimum starts the evidence
// maximisation and whose EP sites start the first EP run.
func fitCandidate(ctx context.Context, data *Data, opts Options, name string, shared bool, warm *candidate) (*candidate, error) {
	start := time.Now()
	if opts.Engine != multirater.EngineEP && opts.Engine != multirater.EngineLaplace {
		panic(fmt.Sprintf("bounded: unknown engine %q", opts.Engine))
	}
	ur, err := toUnit(data, opts, name)
	if err != nil {
		return nil, err
	}
	prob, liks, err := newProblem(data, opts, name, shared, ur)
	if err != nil {
		return nil, err
	}
	warm.warmStart(prob, opts, name, shared)
	rng := rand.New(rand.NewPCG(opts.Seed, 0x626f756e64))
	a, err := infer.Fit(ctx, prob, rng)
	if err != nil {
		return nil, err
	}
	c := &candidate{data: data, opts: opts, name: name, shared: shared, ur: ur, prob: prob, liks: liks, a: a, rng: rng, start: start}
	c.loo.fresh, c.loo.own = looScore(name, liks, ur.rs, ur.raw, ur.eps, prob.Sites, a)
	return c, nil
}

// gainTol is the evidence maximisation's stop of the choice's candidates
// (infer.Problem.GainTol; a single fit keeps infer's 1e-4):
// less than 1e-3 nats gained in two L-BFGS iterations. On the ladder's
// 1,000 items the last iterations to 1e-4 (infer's default) gain a few
// 1e-4 nats in all, move the leave-one-out scores of the choice by
// about 1e-6 per rating and cost 2-3 of the 10-13 evaluations of each
// candidate.
const gainTol = 1e-3

// warmFirstStep is the length of the first L-BFGS step from a warm start
// (infer.Problem.FirstStep): a warm start is within about 0.2 of its
// optimum in ln nu on the ladder's data, where gonum's first step of length 1
// leaves the region and takes several evaluations to return.
const warmFirstStep = 0.2

// warmStart makes the first start of prob (likelihood name, shared or
// per-rater dispersions) begin at c's optimum, c a fitted candidate of the
// same likelihood on the same ratings (another prior or dispersion
// sharing: the choice's candidates, see choose), and its first EP run at
// c's EP sites (infer.Problem.WarmEP): per-rater parameters from per-rater
// ones as they are, one shared dispersion from per-rater ones by the
// ratings-weighted mean of ln nu_l (each rater's from a shared one, the
// shared one). The later starts keep their jitter about nu_0. Nothing
// changes with c nil, with a fixed dispersion (Options.Dispersion) or
// under another likelihood.
func (c *candidate) warmStart(prob *infer.Problem, opts Options, name string, shared bool) {
	if c == nil || c.name != name || opts.Dispersion > 0 {
		return
	}
	if prob.Engine == multirater.EngineEP && c.a.EP != nil && len(c.a.EP.Tau) == len(prob.Sites) {
		prob.WarmEP = c.a.EP
	}
	np := c.liks[0].NumParams()
	from := make([]float64, len(prob.Liks)*np)
	switch {
	case c.shared == shared:
		for l, o := range c.prob.Liks {
			o.ParamsTo(from[l*np : (l+1)*np])
		}
	case shared:
		// ln nu weighted by each rater's ratings.
		s, w := 0.0, 0.0
		for l, o := range c.liks {
			s += float64(c.ur.perRater[l]) * math.Log(nuOf(o))
			w += float64(c.ur.perRater[l])
		}
		newLik(name, math.Exp(s/w)).ParamsTo(from[:1])
	default:
		for l := range prob.Liks {
			newLik(name, nuOf(c.liks[0])).ParamsTo(from[l*np : l*np+1])
		}
	}
	prob.FirstStep = warmFirstStep
	start := prob.Start
	prob.Start = func(s int, rng *rand.Rand, dst []float64) {
		start(s, rng, dst)
		if s == 0 {
			copy(dst, from)
		}
	}
}

// result makes the candidate's fit document (once: it draws from the
// candidate's generator), of the final run on Data.Final's prior
// (infer.FinalRun) when there is one and no kernel term was learnt; the
// final run's failure (a cancelled context, a numerical one) is its
// error.
func (c *candidate) result(ctx context.Context) (*multirater.FitResult, error) {
	data, opts, a := c.data, c.opts, c.a
	doc := a
	var fin *infer.FinalApprox
	if data.Final != nil && c.prob.Kernel == nil {
		f, err := infer.FinalRun(ctx, data.Final, c.prob, a, opts.Progress)
		if err != nil {
			return nil, err
		}
		fin, doc = f, f.A
	}
	res := summarise(data, opts, c.name, c.shared, c.liks, c.ur.perRater, c.prob.Sites, doc, c.rng)
	if a.Learnt != nil {
		res.Model.Learnt = &multirater.Learnt{Source: "evidence (" + opts.Engine + ")", Terms: a.Learnt}
	}
	if note := c.ur.boundsNote(data, opts, c.name); note != "" {
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, note)
	}
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, a.Notes...)
	if fin != nil {
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, fin.Note(opts.Engine, a))
	}
	res.Diagnostics.Seconds = time.Since(c.start).Seconds()
	if opts.Progress != nil {
		opts.Progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(c.start), Phase: "done"})
	}
	return res, nil
}

// unitRatings are the ratings on the unit scale: rs without values, the
// values as given, u those the likelihood reads (Squeeze's, or raw for the
// normal likelihood), raw clamped to [0, 1] with the bounds kept, Squeeze's
// eps and count of values moved, and the ratings per rater.
type unitRatings struct {
	rs             []multirater.Rating
	values, u, raw []float64
	eps            float64
	moved          int
	perRater       []int
}

// toUnit checks data (values within the bounds, the design's checks) and
// maps the values to the unit scale for likelihood name.
func toUnit(data *Data, opts Options, name string) (*unitRatings, error) {
	if !(data.Lo < data.Hi) || math.IsInf(data.Lo, 0) || math.IsInf(data.Hi, 0) {
		panic(fmt.Sprintf("bounded: bounds [%v, %v]", data.Lo, data.Hi))
	}
	ur := &unitRatings{rs: make([]multirater.Rating, len(data.Ratings)), values: make([]float64, len(data.Ratings))}
	for j, r := range data.Ratings {
		ur.rs[j] = multirater.Rating{Item: r.Item, Rater: r.Rater}
		if !(r.Value >= data.Lo && r.Value <= data.Hi) {
			return nil, multirater.DataErrorf("rating %v of rater %q for item %q is outside [%v, %v]", r.Value, data.RaterIDs[r.Rater], data.ItemIDs[r.Item], data.Lo, data.Hi)
		}
		ur.values[j] = r.Value
	}
	// The design's checks (no ratings, duplicates, raters without
	// ratings); values carry no level: K = 2, every level 0.
	dsg := design.Design{What: "bounded.Data", ItemIDs: data.ItemIDs, RaterIDs: data.RaterIDs, K: 2,
		Ratings: ur.rs, Cov: data.Cov, Words: design.Words{Noun: "ratings", Verb: "rated"}, Repeats: data.Repeats}
	var err error
	if ur.perRater, err = dsg.Check(); err != nil {
		return nil, err
	}
	if opts.Bounds != BoundsCensor && opts.Bounds != BoundsSqueeze {
		panic(fmt.Sprintf("bounded: bounds treatment %q", opts.Bounds))
	}
	ur.u, ur.eps, ur.moved = Squeeze(ur.values, data.Lo, data.Hi)
	ur.raw = make([]float64, len(ur.values)) // on the unit scale, bounds kept
	for j, v := range ur.values {
		ur.raw[j] = math.Max(0, math.Min(1, (v-data.Lo)/(data.Hi-data.Lo)))
	}
	if name == Normal {
		// The Gaussian has a density at the bounds: nothing is moved.
		copy(ur.u, ur.raw)
	}
	return ur, nil
}

// boundsNote says what became of the ratings at a bound ("" when none).
func (ur *unitRatings) boundsNote(data *Data, opts Options, name string) string {
	moved, m, eps := ur.moved, len(ur.rs), ur.eps
	switch {
	case moved > 0 && name == Normal && opts.Bounds != BoundsCensor:
		return fmt.Sprintf("%d of %d ratings lay at a bound (%v or %v); the normal likelihood reads them as they are", moved, m, data.Lo, data.Hi)
	case moved > 0 && opts.Bounds == BoundsCensor:
		return fmt.Sprintf("%d of %d ratings lay at a bound (%v or %v) and were censored there: their likelihood is the %s probability of a value within %.4g of the range (half the data's resolution) of the bound", moved, m, data.Lo, data.Hi, name, eps)
	case moved > 0:
		return fmt.Sprintf("%d of %d ratings lay at a bound (%v or %v) and were moved inside by %.4g of the range (half the data's resolution), so that the %s likelihood can explain them", moved, m, data.Lo, data.Hi, eps, name)
	}
	return ""
}

// newProblem returns the evidence maximisation of likelihood name (one
// per rater, or one shared) on the unit ratings, and every rater's
// likelihood.
func newProblem(data *Data, opts Options, name string, shared bool, ur *unitRatings) (*infer.Problem, []lik.Bounded, error) {
	n, nl := len(data.ItemIDs), len(data.RaterIDs)
	var err error
	// EP: the bounded likelihoods are not log-concave in f (a rating in
	// conflict with the rest of its item pushes the tilted variance above
	// the cavity's): sequential EP keeps such negative site precisions
	// (Minka's EP, so that the evidence gradient is exact), and stops at
	// 1e-4 posterior sds, about where the quadrature of the tilted moments
	// blurs the fixed point.
	eo := opts.EP
	eo.NegativeSites = true
	if eo.Tol == 0 {
		eo.Tol = 1e-4
	}
	prob := &infer.Problem{Engine: opts.Engine, N: n, Cov: data.Cov, Restarts: opts.Restarts,
		EP: eo, Laplace: opts.Laplace, Progress: opts.Progress, ParallelSites: -1}
	if opts.candidate {
		prob.GainTol = gainTol
	}
	if data.Learn != nil {
		if prob.Kernel, err = data.Learn.NewKernel(n, data.Cov); err != nil {
			return nil, nil, err
		}
		prob.Cov = nil
	}
	liks := setSites(prob, data, opts, name, shared, ur)
	// The restarts after the first may run at once, each on likelihoods
	// of its own.
	prob.Replica = func() *infer.Problem {
		q := &infer.Problem{}
		setSites(q, data, opts, name, shared, ur)
		return q
	}
	owners := len(prob.Liks)
	np := liks[0].NumParams()
	nu0 := startNu(name)
	if opts.Dispersion > 0 {
		nu0 = opts.Dispersion
	}
	prob.Fixed = func(l, k int) bool {
		if k == 0 {
			return opts.Dispersion > 0
		}
		return nl == 1 // a single rater's bias is the consensus's location
	}
	prob.Start = func(s int, rng *rand.Rand, dst []float64) {
		for l := 0; l < owners; l++ {
			nu := nu0
			if s > 0 && opts.Dispersion == 0 {
				nu *= math.Exp(rng.NormFloat64())
			}
			o := newLik(name, nu)
			o.ParamsTo(dst[l*np : l*np+1])
			if opts.Bias {
				dst[l*np+1] = 0
			}
		}
	}
	if opts.Priors || opts.Bias {
		prob.PriorNote = "log evidence + log prior of the rater parameters"
	}
	return prob, liks, nil
}

// setSites sets prob's likelihoods (one per rater, or one shared), its
// sites on them, one per unit rating (censored at a bound under
// BoundsCensor), LogPrior and FactorTol, and returns every rater's
// likelihood.
func setSites(prob *infer.Problem, data *Data, opts Options, name string, shared bool, ur *unitRatings) []lik.Bounded {
	nl := len(data.RaterIDs)
	// Shared: one likelihood, owned by the first rater's slot, is every
	// rater's.
	liks := make([]lik.Bounded, nl)
	owners := nl
	if shared {
		owners = 1
	}
	owner := func(l int) int { return min(l, owners-1) }
	prob.Liks = make([]lik.LaplaceLearnable, owners)
	for l := range liks {
		if l >= owners {
			liks[l] = liks[owner(l)]
			continue
		}
		liks[l] = newLik(name, startNu(name))
		if opts.Bias {
			liks[l] = &lik.Shift{L: liks[l]}
		}
		prob.Liks[l] = liks[l]
	}
	rs, values, u, eps := ur.rs, ur.values, ur.u, ur.eps
	prob.Sites = make([]lik.Site, len(rs))
	prob.Owner = make([]int, len(rs))
	cens := make([]*lik.Censored, nl)
	for j, r := range rs {
		prob.Sites[j] = lik.Site{Item: r.Item, Y: u[j], Lik: liks[r.Rater]}
		prob.Owner[j] = owner(r.Rater)
		if at := values[j] <= data.Lo || values[j] >= data.Hi; at && opts.Bounds == BoundsCensor {
			if cens[r.Rater] == nil {
				cens[r.Rater] = &lik.Censored{L: liks[r.Rater], Delta: eps}
			}
			prob.Sites[j].Lik = cens[r.Rater]
			prob.Sites[j].Y = 0
			if values[j] >= data.Hi {
				prob.Sites[j].Y = 1
			}
		}
	}
	priorSD := opts.PriorSD
	if opts.Priors || opts.Bias {
		c := newLik(name, startNu(name)).ParamsTo(make([]float64, 1))[0]
		prob.LogPrior = func(l int, p, grad []float64) float64 {
			v := 0.0
			if opts.Priors {
				d := p[0] - c
				v -= 0.5 * d * d / (priorSD * priorSD)
				if grad != nil {
					grad[0] -= d / (priorSD * priorSD)
				}
			}
			if opts.Bias {
				v -= 0.5 * p[1] * p[1]
				if grad != nil {
					grad[1] -= p[1]
				}
			}
			return v
		}
	}
	// The factor may leave out 1e-2 of the smallest rater's latent noise
	// variance.
	prob.FactorTol = func() float64 {
		s := math.Inf(1)
		for _, o := range liks {
			s = math.Min(s, latentNoiseVar(o))
		}
		if math.IsInf(s, 1) {
			s = 1
		}
		return 1e-2 * math.Max(s, 1e-4)
	}
	return liks
}

// latentNoiseVar returns a rater's latent noise variance, the inverse
// curvature -1/(d^2 log p(y | f) / df^2) at f = 0 and y its mean there, of
// the likelihood without its bias (+Inf where the curvature is not
// negative). A bias moves the mean, not the noise: with the bias, the mean
// Phi(B / ...) of a rater with a large bias B rounds to 1, where no
// likelihood has a density.
func latentNoiseVar(o lik.Bounded) float64 {
	if s, ok := o.(*lik.Shift); ok {
		o = s.L
	}
	_, _, d2, _ := o.LogLik(o.Mean(0), 0)
	if d2 < 0 {
		return -1 / d2
	}
	return math.Inf(1)
}

// consensusLik is the likelihood of the consensus value: a new rater with
// the median dispersion and no bias.
func consensusLik(name string, liks []lik.Bounded) lik.Bounded {
	nus := make([]float64, len(liks))
	for l, o := range liks {
		nus[l] = nuOf(o)
	}
	sort.Float64s(nus)
	m := nus[len(nus)/2]
	if len(nus)%2 == 0 {
		m = math.Sqrt(nus[len(nus)/2-1] * nus[len(nus)/2])
	}
	return newLik(name, m)
}

// valueEstimate returns the predictive distribution of y under likelihood
// o and the latent N(mu, s2), on the user's scale [lo, hi]: mean, sd and
// the 2.5%, 50% and 97.5% quantiles.
func valueEstimate(o lik.Bounded, mu, s2, lo, hi float64) *multirater.Estimate {
	w := hi - lo
	// The normal likelihood's mean may lie beyond a bound; the rating
	// cannot.
	m := math.Max(0, math.Min(1, lik.PredictiveMean(o, mu, s2)))
	// E[y^2] in closed form where the likelihood has one, else
	// ∫_0^1 2 y (1 - F(y)) dy.
	ey2, ok := lik.PredictiveSecondMoment(o, mu, s2)
	if !ok {
		for i, x := range gl64X {
			ey2 += gl64W[i] * 2 * x * (1 - lik.PredictiveCDF(o, x, mu, s2))
		}
	}
	sd := math.Sqrt(math.Max(ey2-m*m, 0))
	q := func(p float64) float64 { return lo + w*lik.PredictiveQuantile(o, p, mu, s2) }
	return &multirater.Estimate{Mean: lo + w*m, SD: w * sd, Q025: q(0.025), Q50: q(0.5), Q975: q(0.975)}
}

// summarise turns the approximation into the fit document.
func summarise(data *Data, opts Options, name string, shared bool, liks []lik.Bounded, perRater []int, sites []lik.Site, a *infer.Approx, rng *rand.Rand) *multirater.FitResult {
	n, nl := len(data.ItemIDs), len(data.RaterIDs)
	kern := data.Kernel
	if kern == "" {
		kern = "identity"
	}
	res := &multirater.FitResult{
		Schema: multirater.FitSchema,
		Model: multirater.ModelSettings{Model: Name, Engine: opts.Engine, Output: multirater.OutputValues, Kernel: kern,
			Likelihood: name, Seed: opts.Seed, FlagThreshold: opts.FlagThreshold, KeepDraws: opts.RankDraws,
			Backend: gp.Backend, Lo: &data.Lo, Hi: &data.Hi, Dispersions: PerRater},
	}
	if shared {
		res.Model.Dispersions = Shared
	}
	dg := &res.Diagnostics
	a.Diagnose(dg, opts.Engine)

	// Dispersion intervals: Laplace's approximation on ln nu_l, from the
	// curvature of the rater's own log likelihood terms at the
	// approximation (the sites' tilted log Z as a function of ln nu_l).
	byRater := make([][]int, nl)
	for j, r := range data.Ratings {
		byRater[r.Rater] = append(byRater[r.Rater], j)
	}
	// byOwner: the ratings of each likelihood's parameters (every rating
	// under one shared dispersion).
	byOwner := byRater
	if shared {
		all := make([]int, len(data.Ratings))
		for j := range all {
			all[j] = j
		}
		byOwner = [][]int{all}
	}
	cav := func(j int) (float64, float64) {
		if a.EP != nil {
			return a.EP.CavMean[j], a.EP.CavVar[j]
		}
		return a.Mean[data.Ratings[j].Item], 0
	}
	logLikRater := func(l int) float64 {
		v := 0.0
		for _, j := range byOwner[l] {
			m, s2 := cav(j)
			lz, _, _ := sites[j].Lik.Tilted(sites[j].Y, m, s2)
			v += lz
		}
		return v
	}
	w := data.Hi - data.Lo
	res.Raters = make([]multirater.RaterResult, nl)
	var sharedEst *multirater.Estimate
	for l, o := range liks {
		rr := &res.Raters[l]
		rr.ID, rr.NLabels = data.RaterIDs[l], perRater[l]
		nu := nuOf(o)
		est := multirater.Estimate{Mean: nu, Q50: nu, Q025: nu, Q975: nu}
		switch {
		case sharedEst != nil:
			est = *sharedEst
		case opts.Dispersion == 0:
			p := o.ParamsTo(make([]float64, o.NumParams()))
			const h = 1e-3
			f0 := logLikRater(l)
			q := append([]float64(nil), p...)
			q[0] = p[0] + h
			o.SetParams(q)
			fp := logLikRater(l)
			q[0] = p[0] - h
			o.SetParams(q)
			fm := logLikRater(l)
			o.SetParams(p)
			curv := -(fp - 2*f0 + fm) / (h * h)
			if opts.Priors {
				curv += 1 / (opts.PriorSD * opts.PriorSD)
			}
			if curv > 0 {
				sd := 1 / math.Sqrt(curv)
				sign := 1.0
				if name == Warped || name == Normal {
					sign = -1 // the parameter is ln sigma = -ln nu
				}
				est.SD = nu * sd
				est.Q025, est.Q975 = nu*math.Exp(-1.959963984540054*sd*sign), nu*math.Exp(1.959963984540054*sd*sign)
				if est.Q025 > est.Q975 {
					est.Q025, est.Q975 = est.Q975, est.Q025
				}
			}
			if shared {
				sharedEst = &est
			}
		}
		rr.Dispersion = &est
		rr.Precision = est
		rr.Variance = multirater.Estimate{Mean: 1 / nu, Q025: 1 / est.Q975, Q50: 1 / nu, Q975: 1 / est.Q025}
		if opts.Bias {
			b := biasOf(o)
			rr.Bias = &multirater.Estimate{Mean: b, Q025: b, Q50: b, Q975: b}
			rr.Severity = -b
			rr.SeverityQ025, rr.SeverityQ975 = -b, -b
		}
		// Mean log predictive density (in sample, on the user's scale).
		lp := 0.0
		for _, j := range byRater[l] {
			r := data.Ratings[j]
			lz, _, _ := sites[j].Lik.Tilted(sites[j].Y, a.Mean[r.Item], a.Var[r.Item])
			if _, cens := sites[j].Lik.(*lik.Censored); !cens {
				lz -= math.Log(w) // a density on the rating scale
			}
			lp += lz
		}
		rr.MeanLogPred = lp / float64(len(byRater[l]))
	}

	// Items: the latent consensus, the value on the user's scale, ranks.
	cons := consensusLik(name, liks)
	byItem := make([][]int, n)
	for j, r := range data.Ratings {
		byItem[r.Item] = append(byItem[r.Item], j)
	}
	res.Items = make([]multirater.ItemResult, n)
	for i := range res.Items {
		it := &res.Items[i]
		it.ID, it.NLabels = data.ItemIDs[i], len(byItem[i])
		mu, sd := a.Mean[i], math.Sqrt(a.Var[i])
		it.Score = multirater.NormalEstimate(mu, sd)
		it.Value = valueEstimate(cons, mu, a.Var[i], data.Lo, data.Hi)
		if len(byItem[i]) > 0 {
			it.Labels = make(map[string]string, len(byItem[i]))
			for _, j := range byItem[i] {
				r := data.Ratings[j]
				it.Labels[data.RaterIDs[r.Rater]] = strconv.FormatFloat(r.Value, 'g', -1, 64)
			}
		}
	}
	// Flags: ratings in a predictive tail of their rater.
	for j, r := range data.Ratings {
		o := liks[r.Rater]
		y := sites[j].Y
		if c, cens := sites[j].Lik.(*lik.Censored); cens {
			y = c.Delta // the bound's side: F(Delta) at Lo, F(1 - Delta) at Hi
			if sites[j].Y == 1 {
				y = 1 - c.Delta
			}
		}
		f := lik.PredictiveCDF(o, y, a.Mean[r.Item], a.Var[r.Item])
		p := 2 * math.Min(f, 1-f)
		if p < opts.FlagThreshold {
			exp := data.Lo + w*lik.PredictiveMean(o, a.Mean[r.Item], a.Var[r.Item])
			res.Flags = append(res.Flags, multirater.Flag{Item: data.ItemIDs[r.Item], Rater: data.RaterIDs[r.Rater],
				Label: strconv.FormatFloat(r.Value, 'g', -1, 64), Prob: numeric.Round6(p), Expected: strconv.FormatFloat(numeric.Round6(exp), 'g', -1, 64)})
		}
	}
	res.SortFlags()
	// Ranks from joint draws of the Gaussian posterior.
	a.SetRanks(res, rng, opts.RankDraws)
	dg.Notes = append(dg.Notes,
		fmt.Sprintf("value is the consensus on the rating scale: the predictive distribution of a new rating by a rater with the median dispersion (%.4g) and no bias", nuOf(cons)),
		fmt.Sprintf("ranks come from %d joint draws of the Gaussian posterior approximation", infer.RankDraws(len(res.Items), opts.RankDraws)))
	return res
}
