// Package confusion is the model family of multi-rater classification with
// a confusion matrix per rater (Dawid & Skene 1979 made Bayesian, as in
// Kim & Ghahramani 2012's independent Bayesian classifier combination and
// Simpson et al. 2013): item n has a latent class z_n, rater l labels an
// item of class k as j with probability pi_l[k, j], and each label
// (repeated labels included: Data.Repeats) is one more observation:
//
//	rho ~ Dirichlet(c_0, ..., c_0)                   class proportions
//	z_n | rho ~ Categorical(rho)                     (identity kernel)
//	pi_l[k, :] ~ Dirichlet(s_k mu[k, :])             each rater's row k
//	y | z_n = k ~ Categorical(pi_l[k, :])            each label of rater l for item n
//
// The rows' prior is hierarchical (Options.Hierarchy). By default
// (Communities; Venanzi, Guiver, Kazai, Kohli & Shokouhi 2014's
// community-based Bayesian classifier combination) each rater l belongs to
// one of C communities, m_l ~ Categorical(h), and
//
//	pi_l[k, :] | m_l = c ~ Dirichlet(s_ck mu_c[k, :])
//
// with the communities' confusion matrices mu_c and weights h learnt by
// empirical Bayes (type-II maximum likelihood inside variational EM: each
// row's mean is the maximum of sum_l q(m_l = c) E_q[log
// Dirichlet(pi_l[k, :]; s_ck mu_c[k, :])], Minka's fixed point) and the
// memberships q(m_l) by variational Bayes, at a fixed concentration s_ck =
// 4 (Options.Concentration; Options.LearnConcentration learns it too), so
// that a rater with few labels gets the confusions of the raters it
// resembles (reliable raters, spammers, adversaries) rather than a flat
// row or everyone's average. The number of communities is
// Options.Communities, or chosen by the evidence lower bound from 1 to 4
// (at most one per 10 raters; the fewest within 1 nat of the best). Pooled
// is one community shared by every rater (the community matrix mu learnt
// by empirical Bayes); Hierarchy None keeps mu and s fixed at
// Options.Diagonal (with Diagonal = 1/K, Concentration = K and MAP, the
// maximum-likelihood Dawid-Skene EM). Communities start at diagonals from
// 0.9 down to 0.4 with the raters split by their agreement with the label
// shares; one community starts at Options.Diagonal.
//
// The rater model itself is chosen by the evidence (Options.RaterModel,
// choose.go): by default the vb engine fits, with the identity kernel,
// one-coin (one accuracy per rater) and spammer-aware (MACE: competent or
// the rater's own spam) models (coin.go) beside the confusion model of the
// hierarchy (and, when Data.Ordered says the classes are three or more
// ordered grades, the graded model of graded.go), and keeps the one with
// the highest evidence lower bound less 1/2 ln(raters) per prior parameter
// learnt by empirical Bayes, among those
// that predict held-out labels no worse than a simpler model; every
// candidate's scores are in the result. The class proportions' default
// prior weighs more when items have fewer than two labels
// (model.sparseClassPrior), so that one label per item is not read as one
// class for every item.
//
// Engines: variational Bayes (EngineVB, the default; mean field q(z) q(pi)
// q(rho), Simpson et al. sec. 3), deterministic, with the evidence lower
// bound; and Gibbs sampling (EngineGibbs: z, pi and rho from their full
// conditionals, Dirichlet-multinomial conjugacy), at the hyperparameters
// VB's empirical Bayes found, whose answer confirms VB's.
//
// Gold labels (Data.Gold) fix the classes of those items (Dawid-Skene with
// true labels); callers pass them only when the user asks.
//
// The item's class comes from a multinomial-probit Gaussian process on the
// items' features (Data.Cov, any concord kernel; Girolami & Rogers 2006):
//
//	f_.k ~ GP(0, C + b 11'),  y_nk = f_nk + N(0, 1),  z_n = argmax_k y_nk
//
// (probit.go), so that items alike under the kernel get alike classes and
// new items are predicted from their features. With the identity kernel
// (no features, Data.Cov nil) the Gaussian process adds nothing but the
// class proportions, and the model keeps its plain form: z_n ~
// Categorical(rho), and new items are predicted by E[rho].
package confusion

import (
	"context"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/mcmc"
)

// Name is the family's model name in fit documents.
const Name = "confusion"

// Data is what Fit fits: N items, L raters, K classes and the labels.
type Data struct {
	ItemIDs, RaterIDs, Classes []string
	// Labels are the observations; a Rating's Level is the class index.
	Labels []multirater.Rating
	// Repeats allows several labels of one item by one rater, each one
	// more observation.
	Repeats bool
	// Gold, when not nil, holds a class index per item (-1: none) fixing
	// those items' classes. Leave it nil unless the user asked for it: by
	// default gold labels are for evaluation only.
	Gold []int
	// Cov is the N×N kernel matrix C of the items' features (e.g. from a
	// kernel.Kernel's GramTo): the classes get the multinomial-probit
	// Gaussian-process prior (probit.go). nil means the identity kernel: the
	// classes' prior is the class proportions rho. It must be positive
	// semidefinite; it may be singular.
	Cov mat.Symmetric
	// Kernel describes Cov for the result ("" means "identity").
	Kernel string
	// Probs, when not nil, holds per label of Labels the rater's
	// probability of the label given, in (0, 1], or 0 for none (a model
	// rater's confidence). The vb engine's confusion models read a label
	// with probability p in (0, 1) as soft evidence (vb.go: the rater's
	// response is latent, with virtual evidence e(j) = p for the label
	// given and (1-p)/(K-1) for every other class); p = 1 and 0 are hard
	// labels. Such a rater's confusion matrix and accuracy are those of
	// its soft responses (a calibrated model's come out near the identity,
	// its doubt being in its probabilities), and a soft label's posterior
	// predictive probability (flags) is sum_j e(j) P(response j). The
	// one-coin and spammer models and the gibbs engine read labels only:
	// Fit says so in a note and fits the labels.
	Probs []float64
	// Ordered says that Classes are ordered grades, lowest first (an
	// ordinal scheme): the graded rater model (RaterGraded) needs it, and
	// RaterAuto then compares it too when there are three or more.
	Ordered bool
}

// Hierarchy says how the raters' rows share their prior.
type Hierarchy int

// ParseHierarchy reads "communities", "pooled" or "none" ("" means
// communities).
func ParseHierarchy(s string) (Hierarchy, error) { return hierarchies().Parse(s) }

func (h Hierarchy) String() string { return hierarchies().String(h) }

// hierarchies is the table of the Hierarchy names.
func hierarchies() multirater.Enum[Hierarchy] {
	return multirater.Enum[Hierarchy]{Type: "Hierarchy", Names: []string{"communities", "pooled", "none"}, Lenient: true,
		Unknown: "unknown hierarchy %q (expected communities, pooled or none)"}
}

const (
	// Communities gives each rater one of several community confusion
	// matrices as the prior mean of its rows (Venanzi et al. 2014's
	// community-based Bayesian classifier combination): the communities'
	// means, their weights and each rater's membership are learnt by
	// empirical Bayes and variational Bayes, and the number of communities
	// (Options.Communities, or chosen by the evidence lower bound) tells
	// reliable raters, spammers and adversaries apart so that a rater with
	// few labels borrows the confusions of raters like it (the default).
	Communities Hierarchy = iota
	// Pooled is one community: the community mean mu and the
	// concentrations s_k learnt by empirical Bayes, shared by every rater.
	Pooled
	// None keeps mu at Options.Diagonal and s at Options.Concentration.
	None
)

// MaxCommunities is the largest number of communities Fit chooses from
// (Options.Communities 0) and the largest it accepts.
const MaxCommunities = 8

// DefaultMaxCommunities bounds the communities tried: with
// Options.Communities 0 the variational fit is run with 1, ...,
// DefaultMaxCommunities communities and the one with the highest evidence
// lower bound kept (the fewest communities among those
// within CommunityTolerance nats of the best), at most one per
// MinCommunityRaters raters.
const DefaultMaxCommunities = 4

// MinCommunityRaters bounds the communities tried: when the number of
// communities is chosen, at most one community per MinCommunityRaters
// raters is tried (communities learnt
// from a handful of raters are each rater's own matrix, not a prior).
const MinCommunityRaters = 10

// CommunityTolerance is the ELBO difference, in nats, below which fewer
// communities are preferred.
const CommunityTolerance = 1.0

// Options control Fit. The zero value means the defaults given for each
// field.
type Options struct {
	// Engine is multirater.EngineVB (default) or multirater.EngineGibbs.
	Engine string
	// RaterModel: RaterAuto (default: one-coin, spammer, the confusion
	// model with Hierarchy and subtypes compared by the evidence, with
	// graded for ordered grades of three or more; choose.go), RaterOneCoin, RaterConfusion
	// (Hierarchy Communities then means Pooled), RaterCommunities,
	// RaterSpammer, RaterGraded (Data.Ordered only) or RaterSubtypes.
	// One-coin, spammer,
	// graded and subtypes are
	// fits of the vb engine with the identity kernel and without MAP;
	// with the gibbs engine, a kernel or MAP, auto is the confusion model.
	RaterModel RaterModel
	// Hierarchy: Communities (default), Pooled or None.
	Hierarchy Hierarchy
	// Communities, with Hierarchy Communities, fixes the number of
	// communities (1 to MaxCommunities); 0 chooses it by the evidence lower
	// bound from 1 to DefaultMaxCommunities.
	Communities int
	// Diagonal is the prior mean of a correct label, mu[k, k] (the start
	// of empirical Bayes with Pooled or one community; several communities
	// start at diagonals from 0.9 down to 0.4); 0 means DefaultDiagonal.
	Diagonal float64
	// Concentration, when positive, fixes every s_k; 0 means
	// DefaultConcentration. LearnConcentration learns each s_k by empirical
	// Bayes too (Pooled only), starting there.
	Concentration      float64
	LearnConcentration bool
	// ClassPrior is the Dirichlet pseudo-count c_0 of each class
	// proportion; 0 means the default of the data, max(1, N / (K m^2))
	// with m the mean number of labels per item (model.sparseClassPrior).
	ClassPrior float64
	// MAP makes the VB engine EM-MAP: the Dirichlets' modes in place of
	// their expected logarithms (with flat priors, Dawid-Skene's EM).
	MAP bool
	// MaxIter bounds the VB iterations (0: 1000); Tol is the largest
	// change of an item's class probability that ends them (0: 1e-6).
	MaxIter int
	Tol     float64
	// Settings are the Gibbs chains (defaults: 4 chains of 1000 draws after
	// 500 burn-in sweeps, enough for the collapsed sampler: on the eight
	// crowd datasets of issue 18 max split R-hat <= 1.006; Seed seeds the
	// chains).
	mcmc.Settings
	// FlagThreshold: a label whose posterior predictive probability is
	// below it is flagged; 0 means multirater.DefaultFlagThreshold.
	FlagThreshold float64
	// SpamThreshold: a rater whose spam score is below it is flagged as a
	// spammer; 0 means DefaultSpamThreshold.
	SpamThreshold float64
	// MaxRhat and MinESS are the Gibbs verdict's limits (0: 1.01, 400).
	MaxRhat, MinESS float64
	// Progress, when set, receives progress reports.
	Progress func(multirater.Progress)

	// The kernel prior (Data.Cov set; probit.go). BiasVariance is the
	// variance b of each class's constant (0: DefaultBiasVariance); Rank
	// bounds the rank of the pivoted factor of C (0: DefaultRank), which
	// stops earlier at a residual trace of DefaultFactorTol times the trace
	// of C; Quadrature is the number of Gauss-Hermite nodes of the
	// multinomial-probit integrals for K > 2 (0: DefaultQuadrature).
	BiasVariance float64
	Rank         int
	Quadrature   int

	// elboTol, when positive, replaces elboTol (the relative change of the
	// bound that ends the iterations): the looser one of the candidate
	// fits that RaterAuto compares (choose.go).
	elboTol float64
}

// boundTol is the relative change of the evidence lower bound that ends
// the variational iterations.
func (o Options) boundTol() float64 {
	if o.elboTol > 0 {
		return o.elboTol
	}
	return elboTol
}

// Defaults of the prior and the engines.
const (
	DefaultDiagonal      = 0.7
	DefaultConcentration = 4
	DefaultSpamThreshold = 0.15
	DefaultSamples       = 1000
	DefaultBurnin        = 500
	// maxConcentration and minConcentration bound a learnt s_k.
	maxConcentration = 1e4
	minConcentration = 1e-2
)

// WithDefaults returns the options with zero fields set to their
// defaults.
func (o Options) WithDefaults() Options {
	if o.Engine == "" {
		o.Engine = multirater.EngineVB
	}
	if o.Diagonal == 0 {
		o.Diagonal = DefaultDiagonal
	}
	if o.ClassPrior == 0 {
		o.ClassPrior = 1
	}
	if o.Concentration == 0 {
		o.Concentration = DefaultConcentration
	}
	if o.MaxIter == 0 {
		o.MaxIter = 1000
	}
	if o.Tol == 0 {
		o.Tol = 1e-6
	}
	if o.Samples == 0 {
		o.Samples = DefaultSamples
	}
	if o.Burnin == 0 {
		o.Burnin = DefaultBurnin
	}
	o.Settings = o.Settings.WithDefaults()
	if o.FlagThreshold == 0 {
		o.FlagThreshold = multirater.DefaultFlagThreshold
	}
	if o.SpamThreshold == 0 {
		o.SpamThreshold = DefaultSpamThreshold
	}
	if o.MaxRhat == 0 {
		o.MaxRhat = multirater.DefaultMaxRhat
	}
	if o.MinESS == 0 {
		o.MinESS = multirater.DefaultMinESS
	}
	if o.BiasVariance == 0 {
		o.BiasVariance = DefaultBiasVariance
	}
	if o.Rank == 0 {
		o.Rank = DefaultRank
	}
	if o.Quadrature == 0 {
		o.Quadrature = DefaultQuadrature
	}
	return o
}

// check panics on options no fit can run (caller bugs).
func (o Options) check(k int) {
	switch o.Engine {
	case multirater.EngineVB, multirater.EngineGibbs:
	default:
		panic(fmt.Sprintf("confusion: unknown engine %q", o.Engine))
	}
	if o.MAP && o.Engine != multirater.EngineVB {
		panic("confusion: MAP is a setting of the vb engine")
	}
	if !(o.Diagonal > 0 && o.Diagonal < 1) && !(o.Diagonal == 1 && k == 1) {
		panic(fmt.Sprintf("confusion: Diagonal %v outside (0, 1)", o.Diagonal))
	}
	if !(o.Concentration > 0) || math.IsInf(o.Concentration, 0) {
		panic(fmt.Sprintf("confusion: Concentration %v", o.Concentration))
	}
	if o.Communities < 0 || o.Communities > MaxCommunities {
		panic(fmt.Sprintf("confusion: Communities %d outside [0, %d]", o.Communities, MaxCommunities))
	}
	if o.RaterModel.LabelsOnly() && (o.Engine != multirater.EngineVB || o.MAP) {
		panic(fmt.Sprintf("confusion: rater model %s is a model of the vb engine without MAP", o.RaterModel))
	}
	if o.RaterModel == RaterCommunities && o.Hierarchy != Communities {
		panic("confusion: rater model communities needs hierarchy communities")
	}
	if o.RaterModel < RaterAuto || o.RaterModel > RaterSubtypes {
		panic(fmt.Sprintf("confusion: unknown rater model %d", int(o.RaterModel)))
	}
	if o.Communities > 0 && o.Hierarchy != Communities {
		panic("confusion: Communities is a setting of hierarchy communities")
	}
	mcmc.CheckPositive("ClassPrior", o.ClassPrior)
	mcmc.CheckPositive("BiasVariance", o.BiasVariance)
	if o.Rank < 1 || o.Quadrature < 2 || o.Quadrature > 200 {
		panic(fmt.Sprintf("confusion: Rank %d below 1 or Quadrature %d outside [2, 200]", o.Rank, o.Quadrature))
	}
	mcmc.CheckPositive("Tol", o.Tol)
	o.Settings.Check()
	if !(o.FlagThreshold > 0 && o.FlagThreshold < 1) || !(o.SpamThreshold > 0 && o.SpamThreshold < 1) {
		panic("confusion: FlagThreshold and SpamThreshold must be in (0, 1)")
	}
	if o.MAP && (o.ClassPrior < 1 || o.Diagonal*o.concentration() < 1) {
		// The Dirichlet modes need pseudo-counts of at least 1.
		panic("confusion: MAP needs ClassPrior >= 1 and prior pseudo-counts >= 1")
	}
}

func (o Options) concentration() float64 {
	if o.Concentration > 0 {
		return o.Concentration
	}
	return DefaultConcentration
}

// model is the data in the engines' form: labels sorted by item (CSR), the
// prior.
type model struct {
	n, l, k int
	// start[n]..start[n+1] index item n's labels in rater, y.
	start    []int
	rater, y []int32
	gold     []int // nil or per item
	nGold    int
	// raterCount, raterClass count each rater's labels (per class).
	raterCount []int
	raterClass [][]int
	itemCount  []int
	// repeat[n] is true when a rater labelled item n more than once.
	repeat []bool
	// pr is the multinomial-probit GP prior (nil: identity kernel).
	pr *probit
	// prob[p] is the probability in (0, 1) of the soft label at position
	// p, 0 for a hard label; slot[p] its index among the soft labels
	// (-1: hard) and nSoft their number. Both nil when no label is soft
	// (Data.Probs), so that a labels-only fit runs exactly as without them.
	prob  []float64
	slot  []int32
	nSoft int
	// ordered is Data.Ordered.
	ordered bool
}

func newModel(data *Data) (*model, error) {
	if err := checkData(data); err != nil {
		return nil, err
	}
	n, l, k := len(data.ItemIDs), len(data.RaterIDs), len(data.Classes)
	md := &model{n: n, l: l, k: k, start: make([]int, n+1), rater: make([]int32, len(data.Labels)), y: make([]int32, len(data.Labels)),
		raterCount: make([]int, l), raterClass: make([][]int, l), itemCount: make([]int, n), repeat: make([]bool, n), ordered: data.Ordered}
	for i := range md.raterClass {
		md.raterClass[i] = make([]int, k)
	}
	seen := map[[2]int]bool{}
	for _, r := range data.Labels {
		if r.Item < 0 || r.Item >= n || r.Rater < 0 || r.Rater >= l || r.Level < 0 || r.Level >= k {
			return nil, multirater.DataErrorf("label (item %d, rater %d, class %d) out of range", r.Item, r.Rater, r.Level)
		}
		key := [2]int{r.Item, r.Rater}
		if seen[key] && !data.Repeats {
			return nil, multirater.DataErrorf("duplicate label: rater %q labelled item %q more than once (keep repeated labels with --duplicates keep)", data.RaterIDs[r.Rater], data.ItemIDs[r.Item])
		}
		if seen[key] {
			md.repeat[r.Item] = true
		}
		seen[key] = true
		md.itemCount[r.Item]++
		md.raterCount[r.Rater]++
		md.raterClass[r.Rater][r.Level]++
	}
	for i := 0; i < n; i++ {
		md.start[i+1] = md.start[i] + md.itemCount[i]
	}
	if err := md.placeLabels(data); err != nil {
		return nil, err
	}
	if err := md.setGold(data.Gold); err != nil {
		return nil, err
	}
	return md, nil
}

// checkData refuses data the model cannot be fitted to (a data error) and
// panics on a kernel matrix of the wrong size (a caller bug).
func checkData(data *Data) error {
	n, l, k := len(data.ItemIDs), len(data.RaterIDs), len(data.Classes)
	if n == 0 || l == 0 {
		return multirater.DataErrorf("no items or no raters")
	}
	if k < 2 {
		return multirater.DataErrorf("the confusion model needs at least 2 classes, got %d", k)
	}
	if len(data.Labels) == 0 {
		return multirater.DataErrorf("no labels")
	}
	if kern := strings.TrimSpace(data.Kernel); data.Cov == nil && kern != "" && kern != "identity" {
		return multirater.DataErrorf("kernel %q without its kernel matrix (Data.Cov)", data.Kernel)
	}
	if data.Cov != nil && data.Cov.SymmetricDim() != n {
		panic(fmt.Sprintf("confusion: kernel matrix is %d×%d for %d items", data.Cov.SymmetricDim(), data.Cov.SymmetricDim(), n))
	}
	return nil
}

// placeLabels writes each label's rater and class at its position among
// its item's labels (md.start), and with soft labels (a probability in
// (0, 1) in data.Probs) their probabilities and slots.
func (md *model) placeLabels(data *Data) error {
	if data.Probs != nil && len(data.Probs) != len(data.Labels) {
		panic(fmt.Sprintf("confusion: %d probabilities for %d labels", len(data.Probs), len(data.Labels)))
	}
	soft := false
	for i, pr := range data.Probs {
		if !(pr >= 0 && pr <= 1) {
			return multirater.DataErrorf("label %d: probability %v outside (0, 1]", i+1, pr)
		}
		soft = soft || (pr > 0 && pr < 1)
	}
	if soft {
		md.prob, md.slot = make([]float64, len(data.Labels)), make([]int32, len(data.Labels))
	}
	pos := append([]int(nil), md.start[:md.n]...)
	for i, r := range data.Labels {
		p := pos[r.Item]
		pos[r.Item]++
		md.rater[p], md.y[p] = int32(r.Rater), int32(r.Level)
		if soft {
			md.slot[p] = -1
			if pr := data.Probs[i]; pr > 0 && pr < 1 {
				md.prob[p] = pr
			}
		}
	}
	for p := range md.prob {
		if md.prob[p] > 0 {
			md.slot[p] = int32(md.nSoft)
			md.nSoft++
		}
	}
	return nil
}

// setGold keeps the items' gold classes (-1: none; nil: no gold).
func (md *model) setGold(gold []int) error {
	if gold == nil {
		return nil
	}
	if len(gold) != md.n {
		return multirater.DataErrorf("%d gold labels for %d items", len(gold), md.n)
	}
	md.gold = gold
	for _, g := range gold {
		if g >= md.k {
			return multirater.DataErrorf("gold class %d out of range", g)
		}
		if g >= 0 {
			md.nGold++
		}
	}
	return nil
}

// Fit fits the confusion model to data.
func Fit(ctx context.Context, data *Data, opts Options) (*multirater.FitResult, error) {
	defaultClassPrior := opts.ClassPrior == 0
	opts = opts.WithDefaults()
	md, err := newModel(data)
	if err != nil {
		return nil, err
	}
	if defaultClassPrior {
		opts.ClassPrior = md.sparseClassPrior()
	}
	opts.check(md.k)
	if opts.RaterModel == RaterGraded && (!md.ordered || md.k < 3) {
		return nil, multirater.DataErrorf("rater model graded needs ordered grades, three or more (an ordinal scheme); these %d classes are not", md.k)
	}
	if data.Cov != nil {
		if opts.RaterModel.LabelsOnly() {
			panic(fmt.Sprintf("confusion: rater model %s is a model of the identity kernel", opts.RaterModel))
		}
		if opts.MAP {
			panic("confusion: MAP is a setting of the identity kernel")
		}
		if md.pr, err = newProbit(data.Cov, opts.BiasVariance, DefaultFactorTol, opts.Rank, opts.Quadrature); err != nil {
			return nil, err
		}
	}
	var softNote string
	if md.prob != nil && (opts.Engine == multirater.EngineGibbs || opts.MAP || opts.RaterModel.LabelsOnly()) {
		what := "the " + opts.RaterModel.String() + " rater model"
		if opts.Engine == multirater.EngineGibbs {
			what = "the gibbs engine"
		} else if opts.MAP {
			what = "EM-MAP"
		}
		softNote = fmt.Sprintf("the %d label probabilities were not used: %s reads labels only (the vb engine's confusion and communities rater models read them as soft evidence)", md.nSoft, what)
		md.prob, md.slot, md.nSoft = nil, nil, 0
	}
	var res *multirater.FitResult
	if opts.Engine == multirater.EngineGibbs {
		res, err = fitGibbs(ctx, data, md, opts)
	} else {
		res, err = fitVB(ctx, data, md, opts)
	}
	if err == nil && softNote != "" {
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, softNote)
	}
	return res, err
}

// sparseClassPrior is the default pseudo-count c_0 of each class
// proportion: max(1, N / (K m^2)) with m the mean number of labels per
// item. With many labels per item it is the uniform prior (c_0 = 1); with
// one or two, when the labels cannot tell the classes' proportions from
// the raters' biases (every item of one class and every rater labelling
// by its own label shares explains one label per item exactly as well as
// the labels' own classes), the uniform Dirichlet's preference for
// proportions near 0 and 1 (ln B(beta) gains up to N ln K nats when every
// item is one class) would decide alone and make every item one class
// (issue 29: RTE at one label per item, accuracy .500). At m = 1 the prior
// weighs as much as the items, so the proportions move from uniform only as
// far as the labels' shares pull them, and the consensus keeps the labels
// unless a rater's record says otherwise.
func (md *model) sparseClassPrior() float64 {
	m := float64(len(md.y)) / float64(md.n)
	return math.Max(1, float64(md.n)/float64(md.k)*math.Max(0, 2-m))
}

// classPosteriorTo sets dst (length K) to item n's class distribution
// proportional to exp(logRho[c] + sum over its labels of logT[l, c, y]),
// logT holding ln pi_l[c, y] (or its expectation, for VB) at
// (l*K + y)*K + c: the item update the Gibbs sampler draws from and VB
// takes as q(z_n).
func (md *model) classPosteriorTo(dst []float64, n int, logRho, logT []float64) {
	k := len(dst)
	copy(dst, logRho)
	for p := md.start[n]; p < md.start[n+1]; p++ {
		if md.prob != nil && md.prob[p] > 0 {
			md.softTermTo(dst, p, logT, 1)
			continue
		}
		b := (int(md.rater[p])*k + int(md.y[p])) * k
		e := logT[b : b+k : b+k]
		for c := range dst {
			dst[c] += e[c]
		}
	}
	mx := dst[0]
	for _, x := range dst[1:] {
		if x > mx {
			mx = x
		}
	}
	sum := 0.0
	for c, x := range dst {
		dst[c] = math.Exp(x - mx)
		sum += dst[c]
	}
	inv := 1 / sum
	for c := range dst {
		dst[c] *= inv
	}
}

// softEvidence returns the virtual evidence of the soft label at position
// p for the rater's response j: e(j) = p on the label given and (1-p)/(K-1)
// on every other class.
func (md *model) softEvidence(p, j int) float64 {
	if j == int(md.y[p]) {
		return md.prob[p]
	}
	return (1 - md.prob[p]) / float64(md.k-1)
}

// softTermTo adds sign times the soft label's term to dst (length K): for
// each class c, ln sum_j e(j) exp(logT[l, c, j]), the log of the label
// distribution passed through the rater's confusion row, sum_j e(j)
// pi_l[c, j] (with VB's expected logarithms, the geometric means of
// pi). logT is in the item update's layout.
func (md *model) softTermTo(dst []float64, p int, logT []float64, sign float64) {
	k := len(dst)
	l := int(md.rater[p])
	for c := range dst {
		mx := math.Inf(-1)
		for j := 0; j < k; j++ {
			mx = math.Max(mx, logT[(l*k+j)*k+c])
		}
		sum := 0.0
		for j := 0; j < k; j++ {
			sum += md.softEvidence(p, j) * math.Exp(logT[(l*k+j)*k+c]-mx)
		}
		dst[c] += sign * (mx + math.Log(sum))
	}
}
