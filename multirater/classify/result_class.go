package classify

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/floats"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/mcmc"
	"concord/multirater/numeric"
)

// summariseClass turns the kept draws of the classification chains into a
// FitResult.
func summariseClass(data *Data, md *classModel, plan *classPlan, opts Options, chains []*classChain) *multirater.FitResult {
	k, n, nl := md.nk, md.n, md.nl
	nc := len(chains)
	ns := opts.Samples
	res := opts.Common.Result(Name, multirater.OutputClasses, data.Kernel, gp.Backend, data.Classes, data.RaterIDs, md.ref, nc)
	res.Model.Precisions = opts.Precisions.String()
	res.Model.Quadrature = opts.Quadrature

	// Parameters: precisions (free ones diagnosed), variances (derived)
	// and the monitored class-centred latent values.
	var params []*mcmc.Param
	prec := mcmc.Precisions{RaterIDs: data.RaterIDs, Fixed: func(l int) bool { return md.fixedAlpha[l] }, Chains: nc, Samples: ns,
		Draws: func(c, l int) []float64 { return chains[c].drawAlpha[l] }}
	alphaP, varP := prec.Params()
	for l := 0; l < nl; l++ {
		params = append(params, alphaP[l], varP[l])
	}
	for p := 0; p < plan.nMon; p++ {
		p := p
		item, class := p, 1
		if k > 2 {
			item, class = p/k, p%k
		}
		params = append(params, mcmc.LatentParam("m["+data.ItemIDs[item]+","+data.Classes[class]+"]", func(c int) []float32 { return chains[c].mon[p] }))
	}
	mcmc.SummariseParams(params, nc)

	dg := &res.Diagnostics
	mcmc.Converge(dg, params, opts.MaxRhat, opts.MinESS, nc, ns)
	// The monitored series are summarised: the collector may have them
	// (up to maxMonitorNumbers float32, 64 MB) while the items and the draws
	// are built.
	for _, ch := range chains {
		ch.mon = nil
	}
	if plan.monEvery > 1 {
		dg.Notes = append(dg.Notes, fmt.Sprintf("the latent values m were recorded every %d draws for the diagnostics (N·K is large); their R-hat and ESS are those of the thinned series (the ESS conservatively)", plan.monEvery))
	}
	if md.f.Dropped > 0 {
		dg.Notes = append(dg.Notes, fmt.Sprintf("the kernel matrix has numerical rank %d of %d: the latent functions live in a %d-dimensional subspace", md.f.R, n, md.f.R))
	}
	switch opts.Precisions {
	case FixedPrecisions:
		dg.Notes = append(dg.Notes, "rater precisions fixed at 1, appendix B representation (one latent vector per item and labelled class)")
	case FixedFullPrecisions:
		dg.Notes = append(dg.Notes, "rater precisions fixed at 1 (one latent vector per label)")
	}
	dg.Autocorrelation = prec.Autocorrelation()
	dg.Moves = classMoveStats(chains)

	// Raters.
	res.Raters = make([]multirater.RaterResult, nl)
	for l := range res.Raters {
		rr := &res.Raters[l]
		rr.ID = data.RaterIDs[l]
		rr.NLabels = md.raterCount[l]
		rr.LevelCounts = append([]int(nil), md.raterClass[l]...)
		rr.Reference = l == md.ref
		rr.Precision = mcmc.ToEstimate(alphaP[l].Sum)
		rr.Variance = mcmc.ToEstimate(varP[l].Sum)
	}

	// Items.
	res.Items = make([]multirater.ItemResult, n)
	itemLabels := make([][]multirater.Rating, n)
	for _, r := range data.Labels {
		itemLabels[r.Item] = append(itemLabels[r.Item], r)
	}
	for i := range res.Items {
		it := &res.Items[i]
		it.ID = data.ItemIDs[i]
		it.NLabels = md.itemCount[i]
		if len(itemLabels[i]) > 0 {
			it.Labels = make(map[string]string, len(itemLabels[i]))
			for _, r := range itemLabels[i] {
				it.Labels[data.RaterIDs[r.Rater]] = data.Classes[r.Level]
			}
		}
	}
	classPredictive(res, data, md, plan, opts, chains, itemLabels)
	res.Draws = classDraws(md, plan, chains)
	res.Traces = prec.Traces()
	dg.Notes = append(dg.Notes, fmt.Sprintf("predictive class distributions averaged over %d posterior draws (%d-node adaptive Gauss-Hermite quadrature)", len(plan.keep), opts.Quadrature))
	if n*nl*k > maxRaterPairs {
		dg.Notes = append(dg.Notes, "each rater's own predictive class distribution (rater_class_probs) is given for the items the rater labelled")
	}
	return res
}

// classPredictive sets every item's consensus and per-rater predictive
// class distributions (eq. 18 by quadrature, averaged over the kept draws),
// argmax probabilities, class and entropy, and from them the raters'
// agreement, confusion tables, mean log predictive probability and the
// flags.
func classPredictive(res *multirater.FitResult, data *Data, md *classModel, plan *classPlan, opts Options, chains []*classChain, itemLabels [][]multirater.Rating) {
	k, n, nl := md.nk, md.n, md.nl
	allPairs := n*nl*k <= maxRaterPairs
	rule := numeric.NewGHRule(opts.Quadrature)
	cons := make([]float64, n*k)
	// raterProbs[i] holds, for item i, K probabilities for each rater in
	// raterList(i).
	raterProbs := make([][]float64, n)
	raterList := func(i int) []int {
		if allPairs {
			out := make([]int, nl)
			for l := range out {
				out[l] = l
			}
			return out
		}
		out := make([]int, len(itemLabels[i]))
		for j, r := range itemLabels[i] {
			out[j] = r.Rater
		}
		sort.Ints(out)
		return slices.Compact(out) // a rater once, repeated labels or not
	}
	numeric.ParallelFor(n, func(i int) {
		q := newClassQuad(rule, k)
		m := make([]float64, k)
		pr := make([]float64, k)
		list := raterList(i)
		// must[j] is the class that rater list[j] gave the item (-1 for
		// none): its probability is always computed in full.
		must := make([]int, len(list))
		for j, l := range list {
			must[j] = -1
			for _, r := range itemLabels[i] {
				if r.Rater == l {
					must[j] = r.Level
				}
			}
		}
		rp := make([]float64, len(list)*k)
		cp := cons[i*k : (i+1)*k]
		for s, cd := range plan.keep {
			ch := chains[cd[0]]
			src := ch.keptM[s][i*k : (i+1)*k]
			for c, v := range src {
				m[c] = float64(v)
			}
			alpha := ch.keptAlpha[s]
			var sum float64
			for _, a := range alpha {
				sum += a
			}
			q.probsTo(pr, m, sum, -1)
			for c, p := range pr {
				cp[c] += p
			}
			for j, l := range list {
				q.probsTo(pr, m, alpha[l], must[j])
				dst := rp[j*k : (j+1)*k]
				for c, p := range pr {
					dst[c] += p
				}
			}
		}
		inv := 1 / float64(len(plan.keep))
		for c := range cp {
			cp[c] *= inv
		}
		for j := range rp {
			rp[j] *= inv
		}
		raterProbs[i] = rp
	})
	total := float64(len(chains) * plan.samples)
	top := make([]float64, k)
	for i := range res.Items {
		it := &res.Items[i]
		for c := range top {
			var t int32
			for _, ch := range chains {
				t += ch.top[i*k+c]
			}
			top[c] = float64(t) / total
		}
		setClassSummary(it, data.Classes, cons[i*k:(i+1)*k], top)
		list := raterList(i)
		it.RaterClassProbs = make(map[string][]float64, len(list))
		for j, l := range list {
			p := make([]float64, k)
			for c := range p {
				p[c] = numeric.Round6(raterProbs[i][j*k+c])
			}
			it.RaterClassProbs[data.RaterIDs[l]] = p
		}
	}
	// Raters against the consensus, log predictive probabilities, flags.
	classIdx := make(map[string]int, k)
	for c, code := range data.Classes {
		classIdx[code] = c
	}
	agree := make([]int, nl)
	conf := make([][][]int, nl)
	for l := range conf {
		conf[l] = make([][]int, k)
		for c := range conf[l] {
			conf[l][c] = make([]int, k)
		}
	}
	sumLog := make([]float64, nl)
	res.Flags = []multirater.Flag{}
	for i, labs := range itemLabels {
		cons := classIdx[res.Items[i].Class]
		list := raterList(i)
		for _, r := range labs {
			if r.Level == cons {
				agree[r.Rater]++
			}
			conf[r.Rater][cons][r.Level]++
			j := sort.SearchInts(list, r.Rater)
			p := raterProbs[i][j*k : (j+1)*k]
			pr := p[r.Level]
			sumLog[r.Rater] += math.Log(math.Max(pr, 1e-300))
			if pr < opts.FlagThreshold {
				res.Flags = append(res.Flags, multirater.Flag{Item: data.ItemIDs[i], Rater: data.RaterIDs[r.Rater], Label: data.Classes[r.Level],
					Prob: numeric.Round6(pr), Expected: data.Classes[floats.MaxIdx(p)]})
			}
		}
	}
	multirater.SortFlags(res.Flags)
	for l := range res.Raters {
		rr := &res.Raters[l]
		a := numeric.Round6(float64(agree[l]) / float64(rr.NLabels))
		rr.ConsensusAgreement = &a
		rr.Confusion = conf[l]
		rr.MeanLogPred = sumLog[l] / float64(rr.NLabels)
	}
}

// classDraws returns the compact joint draws of the result: at most
// KeepDraws, and at most mcmc.MaxKeptNumbers latent values (at least 50 draws),
// evenly spaced over the kept draws.
func classDraws(md *classModel, plan *classPlan, chains []*classChain) *multirater.Draws {
	k, n := md.nk, md.n
	want := min(len(plan.keep), max(50, mcmc.MaxKeptNumbers/(n*k)))
	d := &multirater.Draws{N: want, Alpha: make([][]float64, want), MClass: make([]multirater.ClassDraw, want)}
	freed := 0
	for s := 0; s < want; s++ {
		g := int(int64(s) * int64(len(plan.keep)) / int64(want))
		ch := chains[plan.keep[g][0]]
		a := make([]float64, md.nl)
		for l, v := range ch.keptAlpha[g] {
			a[l] = numeric.Round7(v)
		}
		d.Alpha[s] = a
		m := multirater.NewClassDraw(n, k)
		for i, v := range ch.keptM[g] {
			m.V[i] = numeric.Round7(float64(v))
		}
		d.MClass[s] = m
		// The kept draws up to this one are used (the predictive
		// distributions are done): the collector may have them.
		for ; freed <= g; freed++ {
			chains[plan.keep[freed][0]].keptM[freed] = nil
		}
	}
	return d
}

func classMoveStats(chains []*classChain) map[string]float64 {
	ms, scale, shift := mcmc.TotalMoves(chains, func(ch *classChain) (mcmc.MoveStats, float64, float64) {
		return mcmc.MoveStats{Sweeps: ch.sweeps, CGIters: ch.cgIters, Slices: ch.slices, SliceEvals: ch.sliceEvals}, ch.scaleSum, ch.shiftSum
	})
	m := ms.Map()
	if ms.Sweeps > 0 && scale > 0 {
		m["scale_move_mean_abs_log"] = numeric.Round6(scale / float64(ms.Sweeps))
	}
	if ms.Sweeps > 0 && shift > 0 {
		m["shift_move_rms"] = numeric.Round6(shift / float64(ms.Sweeps))
	}
	return m
}
