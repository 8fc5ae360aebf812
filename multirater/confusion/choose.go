package confusion

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"concord/multirater"
	"concord/multirater/mcmc"
)

// RaterModel is the model of the raters' labels given the true class.
type RaterModel int

const (
	// RaterAuto fits every rater model that the data and the engine allow
	// and keeps the one with the highest penalised evidence lower bound
	// (the default; see chooseVB).
	RaterAuto RaterModel = iota
	// RaterOneCoin: one accuracy per rater, errors spread evenly
	// (coinVB).
	RaterOneCoin
	// RaterConfusion: a full confusion matrix per rater (Dawid-Skene)
	// under one prior shared by every rater (Hierarchy Pooled, or None).
	RaterConfusion
	// RaterCommunities: full confusion matrices under the communities
	// hierarchy (Venanzi et al. 2014; Options.Communities).
	RaterCommunities
	// RaterSpammer: MACE's competent-or-spam labels (coinVB).
	RaterSpammer
)

func (r RaterModel) String() string {
	switch r {
	case RaterAuto:
		return "auto"
	case RaterOneCoin:
		return "one-coin"
	case RaterConfusion:
		return "confusion"
	case RaterCommunities:
		return "communities"
	case RaterSpammer:
		return "spammer"
	}
	return fmt.Sprintf("RaterModel(%d)", int(r))
}

// ParseRaterModel reads auto, one-coin, confusion, communities or spammer
// ("" means auto).
func ParseRaterModel(s string) (RaterModel, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return RaterAuto, nil
	case "one-coin", "onecoin", "one_coin":
		return RaterOneCoin, nil
	case "confusion":
		return RaterConfusion, nil
	case "communities":
		return RaterCommunities, nil
	case "spammer":
		return RaterSpammer, nil
	}
	return 0, fmt.Errorf("unknown rater model %q (expected auto, one-coin, confusion, communities or spammer)", s)
}

// confusionFamily reports whether the rater model is fitted by vb (a
// confusion matrix per rater), which the Gibbs engine, EM-MAP and the
// kernel prior need.
func (r RaterModel) confusionFamily() bool { return r == RaterConfusion || r == RaterCommunities }

// candidateFit is one rater model's variational fit.
type candidateFit struct {
	model RaterModel
	coin  *coinVB
	conf  *vbFit
	iters int
	conv  bool
	err   error
	secs  float64
}

func (c *candidateFit) elbo() float64 {
	if c.coin != nil {
		return c.coin.elbo
	}
	return c.conf.v.elbo
}

// hyperparameters is the number of prior parameters that empirical Bayes
// learnt from the raters: m (one-coin), m and nu (spammer), each
// community's K x (K - 1) row means and the C - 1 weights (confusion,
// communities; none with Hierarchy None).
func (c *candidateFit) hyperparameters() int {
	if c.coin != nil {
		return c.coin.hyperparameters()
	}
	v := c.conf.v
	if v.opts.Hierarchy == None {
		return 0
	}
	return v.nc*v.k*(v.k-1) + v.nc - 1
}

// penalty is the Laplace (BIC) cost of the hyperparameters that empirical
// Bayes fixed at their maximum: the ELBO bounds ln p(labels | eta-hat), and
// integrating d hyperparameters learnt from L raters costs about
// d/2 ln L nats (Schwarz 1978), so that a richer rater model is chosen only
// when its raters carry evidence for it.
func (c *candidateFit) penalty(raters int) float64 {
	return 0.5 * float64(c.hyperparameters()) * math.Log(float64(max(raters, 2)))
}

// fitCandidate fits one rater model by variational Bayes.
func fitCandidate(ctx context.Context, md *model, opts Options, r RaterModel, start time.Time) *candidateFit {
	t0 := time.Now()
	c := &candidateFit{model: r}
	switch r {
	case RaterOneCoin, RaterSpammer:
		c.coin = newCoinVB(md, opts, r == RaterSpammer)
		c.iters, c.conv, c.err = c.coin.run(ctx)
	default:
		o := opts
		if r == RaterConfusion && o.Hierarchy == Communities {
			o.Hierarchy, o.Communities = Pooled, 0
		}
		c.conf, c.err = runVB(ctx, md, o, start)
		if c.err == nil {
			c.iters, c.conv = c.conf.iters, c.conf.conv
		}
	}
	c.secs = time.Since(t0).Seconds()
	return c
}

// autoCandidates are the rater models RaterAuto compares: with the
// communities hierarchy the communities fit (whose choice of the number
// of communities includes one: the pooled Dawid-Skene), else the
// confusion model with the given hierarchy; one-coin and spammer always.
func autoCandidates(opts Options) []RaterModel {
	conf := RaterConfusion
	if opts.Hierarchy == Communities {
		conf = RaterCommunities
	}
	return []RaterModel{RaterOneCoin, conf, RaterSpammer}
}

// chooseVB fits the candidates concurrently and keeps the one with the
// highest score, ELBO - penalty (the bounds are of the same labels'
// marginal likelihood under the same class prior, so comparable); a
// candidate that fails numerically drops out with a note. It returns every
// candidate for the fit document.
func chooseVB(ctx context.Context, md *model, opts Options, start time.Time) (*candidateFit, []multirater.RaterModelCandidate, []string, error) {
	models := autoCandidates(opts)
	fits := make([]*candidateFit, len(models))
	var wg sync.WaitGroup
	for i, r := range models {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := opts
			if r != RaterCommunities && r != RaterConfusion {
				o.Progress = nil
			}
			fits[i] = fitCandidate(ctx, md, o, r, start)
		}()
	}
	wg.Wait()
	var notes []string
	best := -1
	score := func(c *candidateFit) float64 { return c.elbo() - c.penalty(md.l) }
	cands := make([]multirater.RaterModelCandidate, len(fits))
	for i, c := range fits {
		cd := &cands[i]
		cd.Model = c.model.String()
		cd.Seconds = mcmc.Round6(c.secs)
		if c.err != nil {
			if !numericFailure(c.err) {
				return nil, nil, nil, c.err
			}
			cd.Failed = c.err.Error()
			notes = append(notes, fmt.Sprintf("the %s rater model failed (%v) and dropped out of the choice", c.model, c.err))
			continue
		}
		cd.ELBO = mcmc.Round6(c.elbo())
		cd.Hyperparameters = c.hyperparameters()
		cd.Penalty = mcmc.Round6(c.penalty(md.l))
		cd.Score = mcmc.Round6(score(c))
		cd.Iterations, cd.Converged = c.iters, c.conv
		if c.conf != nil && c.conf.v.nc > 1 {
			cd.Communities = c.conf.v.nc
		}
		if best < 0 || score(c) > score(fits[best]) {
			best = i
		}
	}
	if best < 0 {
		return nil, nil, nil, fmt.Errorf("confusion: every rater model failed numerically: %s", strings.Join(notes, "; "))
	}
	cands[best].Chosen = true
	return fits[best], cands, notes, nil
}

// choiceNote says which rater model was chosen and why, with the runner-up.
func choiceNote(cands []multirater.RaterModelCandidate) string {
	order := make([]int, 0, len(cands))
	for i, c := range cands {
		if c.Failed == "" {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return cands[order[a]].Score > cands[order[b]].Score })
	best := cands[order[0]]
	s := fmt.Sprintf("rater model %s chosen by the evidence: the highest evidence lower bound less the cost of its %d empirical-Bayes hyperparameters (1/2 ln(raters) each), %.1f nats", best.Model, best.Hyperparameters, best.Score)
	if len(order) > 1 {
		nx := cands[order[1]]
		s += fmt.Sprintf(", %.1f above %s", best.Score-nx.Score, nx.Model)
	}
	return s + " (model.confusion.rater_model_candidates)"
}
