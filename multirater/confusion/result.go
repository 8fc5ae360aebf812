package confusion

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/mathext"

	"concord/multirater"
	"concord/multirater/numeric"
)

// post is an engine's posterior in the form summarise reads.
type post struct {
	// q[n*K+k] is P(z_n = k).
	q []float64
	// cells[(l*K+k)*K+j] summarises pi_l[k, j].
	cells []multirater.Estimate
	// rho summarises the class proportions, acc each rater's accuracy.
	rho, acc []multirater.Estimate
	// The prior used: nc communities with s[c*K+k], mu[(c*K+k)*K+j],
	// weights h and memberships resp[l*nc+c].
	nc         int
	s, mu, h   []float64
	resp       []float64
	candidates []multirater.CommunityCandidate
	// targets[k*N+n] is the posterior mean of y_nk (kernel prior);
	// targetDraws kept draws of y in the same layout (Gibbs).
	targets     []float64
	targetDraws [][]float64
	// rater is the rater model of the fit.
	rater RaterModel
	// bloc[l] = q(b_l = 1), rater l's membership of the subtypes model's
	// bloc (RaterSubtypes only).
	bloc []float64
}

// fitVB fits by variational Bayes (or EM-MAP): the options' rater model,
// or with RaterAuto (identity kernel, no MAP) every candidate, keeping the
// evidence's choice (chooseVB).
func fitVB(ctx context.Context, data *Data, md *model, opts Options) (*multirater.FitResult, error) {
	start := time.Now()
	rm := opts.RaterModel
	var (
		chosen *candidateFit
		cands  []multirater.RaterModelCandidate
		notes  []string
		err    error
	)
	switch {
	case rm == RaterAuto && md.pr == nil && !opts.MAP && md.prob == nil:
		chosen, cands, notes, err = chooseVB(ctx, md, opts, start)
	case rm == RaterAuto && md.prob != nil:
		// The one-coin and spammer models read labels only: their bounds
		// are not of the same evidence, so the confusion model is fitted.
		r := RaterCommunities
		if opts.Hierarchy != Communities {
			r = RaterConfusion
		}
		chosen = fitCandidate(ctx, md, opts, r, start)
		err = chosen.err
		notes = append(notes, fmt.Sprintf("%d labels carry probabilities, read as soft evidence through each rater's confusion matrix; the rater model is the confusion model (one-coin and spammer read labels only, so the evidence cannot compare them)", md.nSoft))
	case rm == RaterAuto:
		chosen = fitCandidate(ctx, md, opts, RaterCommunities, start)
		if opts.Hierarchy != Communities {
			chosen = fitCandidate(ctx, md, opts, RaterConfusion, start)
		}
		err = chosen.err
	default:
		chosen = fitCandidate(ctx, md, opts, rm, start)
		err = chosen.err
	}
	if err != nil {
		return nil, err
	}
	var p *post
	var elbo float64
	if chosen.coin != nil {
		p, elbo = chosen.coin.posterior(), chosen.coin.elbo
	} else if chosen.sub != nil {
		p, elbo = chosen.sub.posterior(), chosen.sub.elbo
	} else {
		p, elbo = chosen.conf.v.posterior(), chosen.conf.v.elbo
		p.candidates = chosen.conf.cands
		notes = append(notes, chosen.conf.notes...)
	}
	p.rater = chosen.model
	if p.rater == RaterCommunities && p.nc == 1 {
		p.rater = RaterConfusion
	}
	iters, conv := chosen.iters, chosen.conv
	if opts.Progress != nil {
		opts.Progress(multirater.Progress{Fraction: 0.99, Elapsed: time.Since(start), Phase: "summarising the items and raters"})
	}
	res := summarise(data, md, opts, p)
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, notes...)
	if len(cands) > 0 {
		cp := res.Model.Confusion
		cp.RaterModelCandidates = cands
		cp.RaterModelChoice = choiceNote(cands)
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, cp.RaterModelChoice)
	}
	dg := &res.Diagnostics
	dg.Engine = &multirater.EngineDiagnostics{Name: multirater.EngineVB, Iterations: iters}
	if !opts.MAP {
		e := elbo
		dg.Engine.LogEvidence = &e
		dg.LogEvidence = &e
	}
	dg.Converged = conv
	what := "variational Bayes"
	if opts.MAP {
		what = "EM-MAP"
	}
	if conv {
		dg.Verdict = fmt.Sprintf("converged: %s stopped after %d iterations, no class probability changing by more than %g or the evidence lower bound by less than %g of itself", what, iters, opts.Tol, elboTol)
	} else {
		dg.Verdict = fmt.Sprintf("NOT converged: %s reached its limit of %d iterations with class probabilities still changing by more than %g; raise the limit with --max-iter (API: max_iter)", what, iters, opts.Tol)
	}
	dg.Seconds = time.Since(start).Seconds()
	if opts.Progress != nil {
		opts.Progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(start), Phase: "done"})
	}
	return res, nil
}

// posterior summarises the variational posterior: each pi_l[k, j] is
// Beta(alpha, sum_j alpha - alpha) under q, and likewise each rho_k; a
// rater's accuracy sum_k rho_k pi_l[k, k] gets its exact mean and variance
// under q and the 95% interval of the Beta with those moments. With MAP the
// means are the modes (the point estimates) and the intervals those of
// the Dirichlets at the final counts.
func (v *vb) posterior() *post {
	md, k := v.md, v.k
	p := &post{q: v.q, cells: make([]multirater.Estimate, md.l*k*k), rho: make([]multirater.Estimate, k), acc: make([]multirater.Estimate, md.l),
		nc: v.nc, s: append([]float64(nil), v.s...), mu: append([]float64(nil), v.mu...), h: append([]float64(nil), v.h...),
		resp: append([]float64(nil), v.resp...), targets: v.yt}
	rowSum := func(a []float64) float64 {
		s := 0.0
		for _, x := range a {
			s += x
		}
		return s
	}
	bsum := rowSum(v.beta)
	rm, rv := make([]float64, k), make([]float64, k)
	for c, b := range v.beta {
		p.rho[c] = betaEstimate(b, bsum-b)
		rm[c] = b / bsum
		rv[c] = b * (b + 1) / (bsum * (bsum + 1)) // E[rho_c^2]
		if v.opts.MAP {
			p.rho[c].Mean = (b - 1) / (bsum - float64(k))
		}
	}
	numeric.ParallelFor(md.l, func(l int) {
		var mean, m2 float64
		dm := make([]float64, k)
		for r := 0; r < k; r++ {
			row := v.alpha[(l*k+r)*k : (l*k+r+1)*k]
			a := rowSum(row)
			for j, x := range row {
				e := betaEstimate(x, a-x)
				if v.opts.MAP {
					e.Mean = (x - 1) / (a - float64(k))
				}
				p.cells[(l*k+r)*k+j] = e
			}
			dm[r] = row[r] / a
			mean += rm[r] * dm[r]
			m2 += rv[r] * row[r] * (row[r] + 1) / (a * (a + 1))
		}
		// Cross terms: rows are independent, E[rho_r rho_c] =
		// beta_r beta_c / (B (B + 1)).
		for r := 0; r < k; r++ {
			for c := 0; c < k; c++ {
				if c != r {
					m2 += v.beta[r] * v.beta[c] / (bsum * (bsum + 1)) * dm[r] * dm[c]
				}
			}
		}
		p.acc[l] = momentEstimate(mean, m2-mean*mean)
	})
	return p
}

// betaEstimate summarises Beta(a, b).
func betaEstimate(a, b float64) multirater.Estimate {
	m := a / (a + b)
	sd := math.Sqrt(a * b / ((a + b) * (a + b) * (a + b + 1)))
	return multirater.Estimate{Mean: m, SD: sd, Q025: mathext.InvRegIncBeta(a, b, 0.025), Q50: mathext.InvRegIncBeta(a, b, 0.5), Q975: mathext.InvRegIncBeta(a, b, 0.975)}
}

// momentEstimate summarises a quantity in [0, 1] with the given mean and
// variance by the Beta distribution of those moments.
func momentEstimate(mean, variance float64) multirater.Estimate {
	mean = math.Min(math.Max(mean, 0), 1)
	if !(variance > 0) || mean <= 0 || mean >= 1 {
		return multirater.Estimate{Mean: mean, Q025: mean, Q50: mean, Q975: mean}
	}
	n := mean*(1-mean)/variance - 1
	if n <= 0 {
		return multirater.Estimate{Mean: mean, SD: math.Sqrt(variance), Q025: 0, Q50: mean, Q975: 1}
	}
	e := betaEstimate(mean*n, (1-mean)*n)
	e.Mean = mean
	return e
}

// summarise makes the fit document from an engine's posterior: the
// confusion prior, the items' classes, the raters and the notes.
func summarise(data *Data, md *model, opts Options, p *post) *multirater.FitResult {
	res := &multirater.FitResult{
		Schema: multirater.FitSchema,
		Model: multirater.ModelSettings{Model: Name, Engine: opts.Engine, Output: multirater.OutputClasses, Kernel: kernelName(data),
			Identifiability: multirater.Weak.String(), Sampler: "default", Seed: opts.Seed, FlagThreshold: opts.FlagThreshold},
		Levels: append([]string(nil), data.Classes...),
	}
	cp, member := confusionPrior(md, opts, p)
	res.Model.Confusion = cp
	res.ClassProportions = roundEstimates(p.rho)
	cons := summariseItems(res, data, md, p)
	t := tally(res, data, md, opts, p, cons)
	spammers := summariseRaters(res, data, md, opts, p, t, member)
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, notes(data, md, opts, p, spammers)...)
	return res
}

// confusionPrior returns the learnt confusion prior (the communities'
// mixture, each community when there are several, the probit prior's
// targets) and each rater's community.
func confusionPrior(md *model, opts Options, p *post) (*multirater.ConfusionPrior, []int) {
	k := md.k
	cp := &multirater.ConfusionPrior{Hierarchy: opts.Hierarchy.String(), Diagonal: opts.Diagonal, ClassPrior: opts.ClassPrior,
		LearnConcentration: opts.LearnConcentration, Gold: md.nGold, MAP: opts.MAP, Concentration: make([]float64, k), Community: make([][]float64, k)}
	for r := 0; r < k; r++ {
		cp.Community[r] = make([]float64, k)
		for c := 0; c < p.nc; c++ {
			cp.Concentration[r] += p.h[c] * p.s[c*k+r]
			for j := range cp.Community[r] {
				cp.Community[r][j] += p.h[c] * p.mu[(c*k+r)*k+j]
			}
		}
		cp.Concentration[r] = numeric.Round6(cp.Concentration[r])
		for j, x := range cp.Community[r] {
			cp.Community[r][j] = numeric.Round6(x)
		}
	}
	member := make([]int, md.l)
	if p.nc > 1 {
		cp.Communities = communities(k, p, member)
	}
	cp.Candidates = p.candidates
	rm := p.rater
	if rm == RaterAuto {
		rm = RaterConfusion
		if p.nc > 1 {
			rm = RaterCommunities
		}
	}
	cp.RaterModel = rm.String()
	if md.pr != nil {
		cp.Probit = probitPrior(md, opts, p)
	}
	return cp, member
}

// communities returns each community's prior and size, setting member[l]
// to rater l's most probable community.
func communities(k int, p *post, member []int) []multirater.ConfusionCommunity {
	cs := make([]multirater.ConfusionCommunity, p.nc)
	for c := range cs {
		cm := &cs[c]
		cm.Weight = numeric.Round6(p.h[c])
		cm.Concentration = make([]float64, k)
		cm.Mean = make([][]float64, k)
		for r := 0; r < k; r++ {
			cm.Concentration[r] = numeric.Round6(p.s[c*k+r])
			cm.Mean[r] = make([]float64, k)
			for j := range cm.Mean[r] {
				cm.Mean[r][j] = numeric.Round6(p.mu[(c*k+r)*k+j])
			}
		}
	}
	for l := range member {
		w := p.resp[l*p.nc : (l+1)*p.nc]
		for c, x := range w {
			if x > w[member[l]] {
				member[l] = c
			}
		}
		cs[member[l]].Raters++
	}
	return cs
}

// probitPrior returns the multinomial-probit prior's settings, its
// targets per item and class and their draws.
func probitPrior(md *model, opts Options, p *post) *multirater.ConfusionProbit {
	pr, k, n := md.pr, md.k, md.n
	out := &multirater.ConfusionProbit{BiasVariance: pr.bias, Rank: pr.rank, MaxRank: opts.Rank, Residual: numeric.Round6(pr.residual),
		Quadrature: opts.Quadrature, Targets: make([][]float64, n)}
	for i := range out.Targets {
		row := make([]float64, k)
		for c := range row {
			row[c] = numeric.Round6(p.targets[c*n+i])
		}
		out.Targets[i] = row
	}
	for _, y := range p.targetDraws {
		d := make([][]float64, n)
		for i := range d {
			d[i] = make([]float64, k)
			for c := range d[i] {
				d[i][c] = numeric.Round6(y[c*n+i])
			}
		}
		out.TargetDraws = append(out.TargetDraws, d)
	}
	return out
}

// summariseItems fills res.Items (class probabilities, entropy in bits,
// the consensus class and the labels) and returns each item's consensus
// class.
func summariseItems(res *multirater.FitResult, data *Data, md *model, p *post) []int {
	k, n := md.k, md.n
	res.Items = make([]multirater.ItemResult, n)
	cons := make([]int, n)
	for i := range res.Items {
		it := &res.Items[i]
		it.ID = data.ItemIDs[i]
		it.NLabels = md.itemCount[i]
		qn := p.q[i*k : (i+1)*k]
		it.ClassProbs = make(map[string]float64, k)
		var h float64
		best := 0
		for c, x := range qn {
			it.ClassProbs[data.Classes[c]] = numeric.Round6(x)
			if x > 0 {
				h -= x * math.Log2(x)
			}
			if x > qn[best] {
				best = c
			}
		}
		h = numeric.Round6(math.Max(h, 0))
		it.Entropy = &h
		it.Class = data.Classes[best]
		cons[i] = best
		if it.NLabels > 0 {
			it.Labels = make(map[string]string, it.NLabels)
			for q := md.start[i]; q < md.start[i+1]; q++ {
				it.Labels[data.RaterIDs[md.rater[q]]] = data.Classes[md.y[q]]
			}
		}
	}
	return cons
}

// raterTally is what the labels say of each rater against the consensus:
// the labels that agree, the sum of the labels' log posterior predictive
// probabilities and the confusion counts [consensus][label].
type raterTally struct {
	agree     []int
	logPred   []float64
	confusion [][][]int
}

// tally counts every label against its item's consensus class cons and
// flags the labels whose posterior predictive probability is below the
// flag threshold (res.Flags, least probable first).
func tally(res *multirater.FitResult, data *Data, md *model, opts Options, p *post, cons []int) *raterTally {
	k, nl := md.k, md.l
	t := &raterTally{agree: make([]int, nl), logPred: make([]float64, nl), confusion: make([][][]int, nl)}
	for l := range t.confusion {
		t.confusion[l] = make([][]int, k)
		for r := range t.confusion[l] {
			t.confusion[l][r] = make([]int, k)
		}
	}
	pred := make([]float64, k)
	for i := 0; i < md.n; i++ {
		qn := p.q[i*k : (i+1)*k]
		for q := md.start[i]; q < md.start[i+1]; q++ {
			l, y := int(md.rater[q]), int(md.y[q])
			t.confusion[l][cons[i]][y]++
			if y == cons[i] {
				t.agree[l]++
			}
			// The label's posterior predictive probability, sum_k
			// q(z = k) E[pi_l[k, j]], for each j.
			for j := range pred {
				pred[j] = 0
				for c, x := range qn {
					pred[j] += x * p.cells[(l*k+c)*k+j].Mean
				}
			}
			py := pred[y]
			if md.prob != nil && md.prob[q] > 0 {
				// A soft label: the probability of its soft response,
				// sum_j e(j) pred(j), so that a doubtful wrong label is
				// not flagged as a confident one is.
				py = 0
				for j, x := range pred {
					py += md.softEvidence(q, j) * x
				}
			}
			t.logPred[l] += math.Log(math.Max(py, 1e-300))
			if py < opts.FlagThreshold {
				exp := 0
				for j := range pred {
					if pred[j] > pred[exp] {
						exp = j
					}
				}
				res.Flags = append(res.Flags, multirater.Flag{Item: data.ItemIDs[i], Rater: data.RaterIDs[l], Label: data.Classes[y],
					Prob: numeric.Round6(py), Expected: data.Classes[exp]})
			}
		}
	}
	sort.SliceStable(res.Flags, func(a, b int) bool { return res.Flags[a].Prob < res.Flags[b].Prob })
	return t
}

// summariseRaters fills res.Raters (agreement, confusion matrices and
// their most confused cell, accuracy, spam score, community) and returns
// the number of spammers.
func summariseRaters(res *multirater.FitResult, data *Data, md *model, opts Options, p *post, t *raterTally, member []int) int {
	k := md.k
	res.Raters = make([]multirater.RaterResult, md.l)
	spammers := 0
	for l := range res.Raters {
		rr := &res.Raters[l]
		rr.ID = data.RaterIDs[l]
		rr.NLabels = md.raterCount[l]
		rr.LevelCounts = append([]int(nil), md.raterClass[l]...)
		rr.Confusion = t.confusion[l]
		if rr.NLabels > 0 {
			a := numeric.Round6(float64(t.agree[l]) / float64(rr.NLabels))
			rr.ConsensusAgreement = &a
			rr.MeanLogPred = numeric.Round6(t.logPred[l] / float64(rr.NLabels))
		}
		rr.ConfusionProbs = make([][]multirater.Estimate, k)
		var worst *multirater.ClassConfusion
		for r := 0; r < k; r++ {
			rr.ConfusionProbs[r] = roundEstimates(p.cells[(l*k+r)*k : (l*k+r+1)*k])
			for j, e := range rr.ConfusionProbs[r] {
				if j != r && (worst == nil || e.Mean > worst.Prob) {
					worst = &multirater.ClassConfusion{True: data.Classes[r], Label: data.Classes[j], Prob: e.Mean}
				}
			}
		}
		rr.MostConfused = worst
		acc := roundEstimate(p.acc[l])
		rr.Accuracy = &acc
		sc := numeric.Round6(spamScore(p.cells[l*k*k:(l+1)*k*k], k))
		rr.SpamScore = &sc
		rr.Spammer = sc < opts.SpamThreshold
		if p.nc > 1 {
			rr.Community = member[l] + 1
		}
		if rr.Spammer {
			spammers++
		}
	}
	return spammers
}

// blocNote names the raters more likely in the subtypes model's bloc than
// not (q(b_l = 1) > 1/2), at most ten.
func blocNote(data *Data, bloc []float64) string {
	var in []string
	for l, b := range bloc {
		if b > 0.5 { // as subVB.blocSize counts
			in = append(in, data.RaterIDs[l])
		}
	}
	switch {
	case len(in) == 0:
		return "No rater is in the bloc: every rater labels both subtypes by one row."
	case len(in) > 10:
		return fmt.Sprintf("%d raters are in the bloc, among them %s.", len(in), strings.Join(in[:10], ", "))
	}
	return fmt.Sprintf("In the bloc (%d of %d raters): %s.", len(in), len(bloc), strings.Join(in, ", "))
}

// notes are the fit's notes on spammers, gold labels, repeats, the rater
// model, the probit prior and the choice of communities.
func notes(data *Data, md *model, opts Options, p *post, spammers int) []string {
	var out []string
	if spammers > 0 {
		out = append(out, fmt.Sprintf("%d rater(s) flagged as spammers: the rows of their confusion matrices are alike (spam score below %g), so their labels say little about the class", spammers, opts.SpamThreshold))
	}
	if md.nGold > 0 {
		out = append(out, fmt.Sprintf("the classes of %d items were fixed at their gold labels (as asked); accuracy against those gold labels is not a fair test", md.nGold))
	}
	if data.Repeats {
		out = append(out, "repeated labels of a rater for an item are each one more observation (item labels show one of them)")
	}
	switch {
	case p.rater == RaterOneCoin:
		out = append(out, "one-coin rater model: one accuracy per rater, errors spread evenly over the other classes; the accuracies share a Beta prior whose mean was learnt by empirical Bayes (model.confusion)")
	case p.rater == RaterGraded:
		out = append(out, "graded rater model: each label is the true grade moved by a shift drawn from the rater's own shift distribution and clamped to the scale; the shift distributions share a prior learnt by empirical Bayes (model.confusion)")
	case p.rater == RaterSpammer:
		out = append(out, "spammer-aware rater model (MACE): each label is competent (the true class) with a rater's own probability, else drawn from the rater's own spam distribution; the competences and spam distributions share priors learnt by empirical Bayes (model.confusion)")
	case p.rater == RaterSubtypes:
		out = append(out, fmt.Sprintf("subtypes rater model (after EBCC): each class's items are of %d subtypes, and the raters of a bloc that the evidence finds have a confusion row per subtype, so that raters who err together on the same items are explained by the items' subtype; a rater's confusion matrix is its rows weighted by the subtypes' shares; the rows have a fixed prior (model.confusion). %s", Subtypes, blocNote(data, p.bloc)))
	case opts.Hierarchy == Pooled || opts.Hierarchy == Communities && p.nc == 1:
		out = append(out, "the raters' confusion rows share one community prior learnt by empirical Bayes (model.confusion)")
	case p.nc > 1:
		out = append(out, fmt.Sprintf("the raters fall into %d communities, each with a confusion-matrix prior learnt by empirical Bayes (model.confusion.communities; each rater's community in raters[].community)", p.nc))
	}
	if pr := md.pr; pr != nil {
		out = append(out, fmt.Sprintf("the items' classes have the multinomial-probit Gaussian-process prior of kernel %s (Girolami & Rogers 2006) with a per-class constant of variance %g; its factor has rank %d (residual trace %.3g); class_proportions are the shares of the items' classes", kernelName(data), pr.bias, pr.rank, pr.residual))
	}
	if len(p.candidates) > 1 {
		out = append(out, fmt.Sprintf("the number of communities, %d, was chosen by the evidence lower bound from 1 to %d (model.confusion.community_candidates)", p.nc, len(p.candidates)))
	}
	return out
}

// kernelName is the data's kernel for the result.
func kernelName(data *Data) string {
	if k := strings.TrimSpace(data.Kernel); k != "" {
		return k
	}
	if data.Cov != nil {
		return "custom"
	}
	return "identity"
}

// spamScore is the mean total-variation distance between the rows of the
// posterior mean confusion matrix (cells row-major, K×K): for K = 2 it is
// |pi[0,0] + pi[1,1] - 1|, Raykar & Yu's (2012) spammer score.
func spamScore(cells []multirater.Estimate, k int) float64 {
	var sum float64
	pairs := 0
	for a := 0; a < k; a++ {
		for b := a + 1; b < k; b++ {
			var tv float64
			for j := 0; j < k; j++ {
				tv += math.Abs(cells[a*k+j].Mean - cells[b*k+j].Mean)
			}
			sum += tv / 2
			pairs++
		}
	}
	return sum / float64(pairs)
}

func roundEstimate(e multirater.Estimate) multirater.Estimate {
	return multirater.Estimate{Mean: numeric.Round6(e.Mean), SD: numeric.Round6(e.SD), Q025: numeric.Round6(e.Q025), Q50: numeric.Round6(e.Q50), Q975: numeric.Round6(e.Q975)}
}

func roundEstimates(es []multirater.Estimate) []multirater.Estimate {
	out := make([]multirater.Estimate, len(es))
	for i, e := range es {
		out[i] = roundEstimate(e)
	}
	return out
}
