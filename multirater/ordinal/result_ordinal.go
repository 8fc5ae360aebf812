package ordinal

import (
	"fmt"
	"math"
	"runtime"
	"slices"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/mcmc"
	"concord/multirater/numeric"
)

// maxRankDraws bounds the draws used for the rank posteriors.
const maxRankDraws = 2000

// summariseOrdinal turns the kept draws of the chains into a FitResult.
func summariseOrdinal(data *Data, md *ordModel, opts Options, chains []*ordChain) *multirater.FitResult {
	k := md.nk
	nc := len(chains)
	ns := opts.Samples
	res := opts.Common.Result(Name, multirater.OutputScores, data.Kernel, gp.Backend, data.Levels, data.RaterIDs, md.ref, nc)
	res.Model.SigmaB = opts.SigmaB

	// Diagnostics and summaries of every parameter, in parallel.
	var params []*mcmc.Param
	prec := mcmc.Precisions{RaterIDs: data.RaterIDs, Fixed: md.alphaFixed, Chains: nc, Samples: ns,
		Draws: func(c, l int) []float64 { return chains[c].drawAlpha[l] }}
	alphaP, varP := prec.Params()
	bP := make([][]*mcmc.Param, md.nl)
	sevP := make([]*mcmc.Param, md.nl)
	for l := 0; l < md.nl; l++ {
		l := l
		params = append(params, alphaP[l], varP[l])
		bP[l] = make([]*mcmc.Param, k-1)
		for j := 1; j < k; j++ {
			idx := l*(k-1) + j - 1
			bP[l][j-1] = &mcmc.Param{Name: fmt.Sprintf("b[%s,%d]", data.RaterIDs[l], j), Free: !md.bFixed(l, j),
				Get: func(c int) []float64 { return chains[c].drawB[idx] }}
			params = append(params, bP[l][j-1])
		}
		sevP[l] = &mcmc.Param{Name: "severity[" + data.RaterIDs[l] + "]", IsVar: true,
			Get: func(c int) []float64 { return severityDraws(md, chains[c], l, ns) }}
		params = append(params, sevP[l])
	}
	mP := make([]*mcmc.Param, md.n)
	for n := 0; n < md.n; n++ {
		n := n
		mP[n] = mcmc.LatentParam("m["+data.ItemIDs[n]+"]", func(c int) []float32 { return chains[c].drawM[n] })
		params = append(params, mP[n])
	}
	mcmc.SummariseParams(params, nc)

	// Convergence over the free parameters.
	dg := &res.Diagnostics
	mcmc.Converge(dg, params, opts.MaxRhat, opts.MinESS, nc, ns)
	if e := md.mStride(); e > 1 {
		dg.Notes = append(dg.Notes, fmt.Sprintf("the latent scores m were recorded every %d draws (N is large): their R-hat and ESS are those of the thinned series (the ESS conservatively), and the item scores, ranks, predictive distributions and the kept draws use the %d recorded draws per chain", e, md.mStored(ns)))
	}
	dg.Autocorrelation = prec.Autocorrelation()
	dg.Moves = moveStats(chains)
	if md.f.Dropped > 0 {
		dg.Notes = append(dg.Notes, fmt.Sprintf("the kernel matrix has numerical rank %d of %d: the consensus lives in a %d-dimensional subspace", md.f.R, md.n, md.f.R))
	}

	// Raters.
	perRater := make([]int, md.nl)
	levelCounts := make([][]int, md.nl)
	for l := range levelCounts {
		levelCounts[l] = make([]int, k)
		for c := 0; c < k; c++ {
			a, e := md.catRange(l, c)
			levelCounts[l][c] = e - a
			perRater[l] += e - a
		}
	}
	res.Raters = make([]multirater.RaterResult, md.nl)
	for l := range res.Raters {
		rr := &res.Raters[l]
		rr.ID = data.RaterIDs[l]
		rr.NLabels = perRater[l]
		rr.LevelCounts = levelCounts[l]
		rr.Reference = md.alphaFixed(l)
		rr.Precision = mcmc.ToEstimate(alphaP[l].Sum)
		rr.Variance = mcmc.ToEstimate(varP[l].Sum)
		rr.Thresholds = make([]multirater.Threshold, k-1)
		for j := 1; j < k; j++ {
			rr.Thresholds[j-1] = multirater.Threshold{Estimate: mcmc.ToEstimate(bP[l][j-1].Sum), Between: [2]string{data.Levels[j-1], data.Levels[j]}, Fixed: md.bFixed(l, j)}
		}
		rr.Severity = sevP[l].Sum.Mean
		rr.SeverityQ025 = sevP[l].Sum.Q025
		rr.SeverityQ975 = sevP[l].Sum.Q975
	}

	// Items: scores and ranks.
	res.Items = make([]multirater.ItemResult, md.n)
	for n := range res.Items {
		it := &res.Items[n]
		it.ID = data.ItemIDs[n]
		it.NLabels = md.itemCount[n]
		sc := mcmc.ToEstimate(mP[n].Sum)
		it.Score = &sc
	}
	for _, r := range data.Ratings {
		it := &res.Items[r.Item]
		if it.Labels == nil {
			it.Labels = make(map[string]string)
		}
		it.Labels[data.RaterIDs[r.Rater]] = data.Levels[r.Level]
	}
	rankItems(res.Items, chains, md.mStored(ns))

	// Predictive distributions, flags and compact draws from the kept
	// joint draws.
	// At most KeepDraws draws, and at most mcmc.MaxKeptNumbers latent scores in
	// them (fewer draws for very many items), at least 50.
	want := min(opts.KeepDraws, max(50, mcmc.MaxKeptNumbers/md.n))
	keep := mcmc.PickDraws(nc, md.mStored(ns), want)
	// Joint draws are those whose m was recorded: keep holds kept-draw
	// indices (drawM's index times the stride).
	for s := range keep {
		keep[s][1] *= md.mStride()
	}
	predictiveSummaries(res, data, md, chains, keep, opts.FlagThreshold)
	res.Draws = compactDraws(md, chains, keep)
	res.Traces = prec.Traces()
	return res
}

// severityDraws returns rater l's severity per kept draw of chain ch: the
// mean of the rater's thresholds minus the mean over raters of theirs.
func severityDraws(md *ordModel, ch *ordChain, l, ns int) []float64 {
	k := md.nk
	out := make([]float64, ns)
	for i := 0; i < ns; i++ {
		var all, own float64
		for r := 0; r < md.nl; r++ {
			var s float64
			for j := 0; j < k-1; j++ {
				s += ch.drawB[r*(k-1)+j][i]
			}
			s /= float64(k - 1)
			all += s
			if r == l {
				own = s
			}
		}
		out[i] = own - all/float64(md.nl)
	}
	return out
}

// rankItems sets every item's rank posterior (1 = highest score) from up to
// maxRankDraws draws evenly spaced over the chains.
func rankItems(items []multirater.ItemResult, chains []*ordChain, ns int) {
	n := len(items)
	nc := len(chains)
	draws := mcmc.PickDraws(nc, ns, maxRankDraws)
	ranks := make([][]int32, n)
	for i := range ranks {
		ranks[i] = make([]int32, len(draws))
	}
	type keyed struct {
		v float32
		i int32
	}
	workers := min(runtime.GOMAXPROCS(0), len(draws))
	numeric.ParallelFor(workers, func(w int) {
		buf := make([]keyed, n)
		for s := w; s < len(draws); s += workers {
			c, i := draws[s][0], draws[s][1]
			ch := chains[c]
			for j := range buf {
				buf[j] = keyed{v: ch.drawM[j][i], i: int32(j)}
			}
			// Highest score first; ties in item order.
			slices.SortFunc(buf, func(a, b keyed) int {
				switch {
				case a.v > b.v:
					return -1
				case a.v < b.v:
					return 1
				}
				return int(a.i - b.i)
			})
			for r, e := range buf {
				ranks[e.i][s] = int32(r + 1)
			}
		}
	})
	// Rank quantiles by counting (ranks are 1..n).
	workers = min(runtime.GOMAXPROCS(0), n)
	numeric.ParallelFor(workers, func(w int) {
		counts := make([]int32, n+1)
		for j := w; j < n; j += workers {
			r := ranks[j]
			clear(counts)
			var sum float64
			for _, v := range r {
				sum += float64(v)
				counts[v]++
			}
			q := func(p float64) float64 {
				target := int32(mcmc.QuantileIndex(len(r), p)) + 1 // 1-based position in the sorted ranks
				var c int32
				for v := 1; v <= n; v++ {
					c += counts[v]
					if c >= target {
						return float64(v)
					}
				}
				return float64(n)
			}
			items[j].Rank = &multirater.RankSummary{Mean: sum / float64(len(r)), Q025: q(0.025), Q50: q(0.5), Q975: q(0.975)}
		}
	})
}

// predictiveSummaries sets the raters' and the consensus grade
// distributions of every item, the raters' mean log predictive probability
// and the flags, averaging the ordinal likelihood over the given draws:
//
//	P(t_nl = k) = E[Phi(sqrt(alpha_l)(b_lk - m_n)) - Phi(sqrt(alpha_l)(b_l,k-1 - m_n))]
//
// (Rogers et al. eq. 3).
func predictiveSummaries(res *multirater.FitResult, data *Data, md *ordModel, chains []*ordChain, keep [][2]int, flagBelow float64) {
	e := md.mStride()
	k, nl, n := md.nk, md.nl, md.n
	// Per item: every rater's distribution in a scratch block (nl*k), of
	// which the consensus (cons, [item][level]) and the labels' own
	// (perLabel, [rating][level]) are kept: linear in items and labels,
	// never items x raters.
	byItem := make([][]int, n)
	for j, r := range data.Ratings {
		byItem[r.Item] = append(byItem[r.Item], j)
	}
	cons := make([]float64, n*k)
	perLabel := make([]float64, len(data.Ratings)*k)
	numeric.ParallelFor(n, func(item int) {
		// phi[j] = Phi(z_j) and q[j] = 1 - Phi(z_j) at the standardised
		// thresholds, each from one erfc and accurate where it is small.
		phi := make([]float64, k+1)
		q := make([]float64, k+1)
		p := make([]float64, nl*k)
		for _, cd := range keep {
			ch := chains[cd[0]]
			i := cd[1]
			m := float64(ch.drawM[item][i/e])
			for l := 0; l < nl; l++ {
				sa := math.Sqrt(ch.drawAlpha[l][i])
				phi[0], q[0], phi[k], q[k] = 0, 1, 1, 0
				for j := 1; j < k; j++ {
					z := sa * (ch.drawB[l*(k-1)+j-1][i] - m)
					if z <= 0 {
						phi[j] = 0.5 * math.Erfc(-z/math.Sqrt2)
						q[j] = 1 - phi[j]
					} else {
						q[j] = 0.5 * math.Erfc(z/math.Sqrt2)
						phi[j] = 1 - q[j]
					}
				}
				for c := 0; c < k; c++ {
					var v float64
					switch {
					case c+1 < k && q[c+1] >= 0.5:
						// Both standardised thresholds <= 0.
						v = phi[c+1] - phi[c]
					case c > 0 && phi[c] >= 0.5:
						// Both > 0.
						v = q[c] - q[c+1]
					default:
						v = 1 - phi[c] - q[c+1]
					}
					p[l*k+c] += max(v, 0)
				}
			}
		}
		inv := 1 / float64(len(keep))
		cs := cons[item*k : (item+1)*k]
		for l := 0; l < nl; l++ {
			for c := 0; c < k; c++ {
				p[l*k+c] *= inv
				cs[c] += p[l*k+c] / float64(nl)
			}
		}
		for _, j := range byItem[item] {
			l := data.Ratings[j].Rater
			copy(perLabel[j*k:(j+1)*k], p[l*k:(l+1)*k])
		}
	})
	for item := range res.Items {
		it := &res.Items[item]
		it.GradeProbs = make(map[string]float64, k)
		// The raters who labelled the item (the document stays linear in
		// the labels).
		it.RaterGradeProbs = make(map[string][]float64, len(byItem[item]))
		for _, j := range byItem[item] {
			rp := make([]float64, k)
			for c := range rp {
				rp[c] = numeric.Round6(perLabel[j*k+c])
			}
			it.RaterGradeProbs[data.RaterIDs[data.Ratings[j].Rater]] = rp
		}
		cs := cons[item*k : (item+1)*k]
		best := 0
		for c := range cs {
			it.GradeProbs[data.Levels[c]] = numeric.Round6(cs[c])
			if cs[c] > cs[best] {
				best = c
			}
		}
		it.Grade = data.Levels[best]
	}
	sumLog := make([]float64, nl)
	res.Flags = []multirater.Flag{}
	for j, r := range data.Ratings {
		p := perLabel[j*k : (j+1)*k]
		pr := p[r.Level]
		sumLog[r.Rater] += math.Log(math.Max(pr, 1e-300))
		if pr < flagBelow {
			best := 0
			for c := range p {
				if p[c] > p[best] {
					best = c
				}
			}
			res.Flags = append(res.Flags, multirater.Flag{Item: data.ItemIDs[r.Item], Rater: data.RaterIDs[r.Rater], Label: data.Levels[r.Level], Prob: numeric.Round6(pr), Expected: data.Levels[best]})
		}
	}
	multirater.SortFlags(res.Flags)
	for l := range res.Raters {
		res.Raters[l].MeanLogPred = sumLog[l] / float64(res.Raters[l].NLabels)
	}
}

// normInterval returns Phi(hi) - Phi(lo) for lo <= hi, accurate in both
// tails.
func normInterval(lo, hi float64) float64 {
	switch {
	case lo > 0:
		return 0.5 * (math.Erfc(lo/math.Sqrt2) - math.Erfc(hi/math.Sqrt2))
	case hi < 0:
		return 0.5 * (math.Erfc(-hi/math.Sqrt2) - math.Erfc(-lo/math.Sqrt2))
	}
	return 1 - 0.5*math.Erfc(hi/math.Sqrt2) - 0.5*math.Erfc(-lo/math.Sqrt2)
}

func compactDraws(md *ordModel, chains []*ordChain, keep [][2]int) *multirater.Draws {
	e := md.mStride()
	k := md.nk
	d := &multirater.Draws{N: len(keep), Alpha: make([][]float64, len(keep)), Thresholds: make([][][]float64, len(keep)), M: make([][]float64, len(keep))}
	for s, cd := range keep {
		ch, i := chains[cd[0]], cd[1]
		d.Alpha[s] = make([]float64, md.nl)
		d.Thresholds[s] = make([][]float64, md.nl)
		for l := 0; l < md.nl; l++ {
			d.Alpha[s][l] = numeric.Round7(ch.drawAlpha[l][i])
			t := make([]float64, k-1)
			for j := range t {
				t[j] = numeric.Round7(ch.drawB[l*(k-1)+j][i])
			}
			d.Thresholds[s][l] = t
		}
		d.M[s] = make([]float64, md.n)
		for n := range d.M[s] {
			d.M[s][n] = numeric.Round7(float64(ch.drawM[n][i/e]))
		}
	}
	return d
}

func moveStats(chains []*ordChain) map[string]float64 {
	ms, scale, loc := mcmc.TotalMoves(chains, func(ch *ordChain) (mcmc.MoveStats, float64, float64) {
		return mcmc.MoveStats{Sweeps: ch.sweeps, CGIters: ch.cgIters, Slices: ch.slices, SliceEvals: ch.sliceEvals}, ch.scaleSum, ch.locSum
	})
	m := ms.Map()
	if ms.Sweeps > 0 && ms.Slices > 0 {
		m["scale_move_mean_abs_log"] = numeric.Round6(scale / float64(ms.Sweeps))
		if loc > 0 {
			m["location_move_mean_abs"] = numeric.Round6(loc / float64(ms.Sweeps))
		}
	}
	return m
}
