package confusion

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"concord/multirater"
	"concord/multirater/diag"
	"concord/multirater/mcmc"
	"concord/multirater/numeric"
)

// The Gibbs engine samples the model's full conditionals in turn
// (Dirichlet-multinomial conjugacy):
//
//	z_n | pi, rho          ∝ rho_k prod over item n's labels (l, j) of pi_l[k, j]
//	pi_l[k, :] | z         ~ Dirichlet(a_l[k, :] + counts of rater l's labels j of items with z = k)
//	rho | z                ~ Dirichlet(c_0 + class counts)
//
// at the prior a_l[k, :] = sum_c q(m_l = c) s_ck mu_c[k, :] of the
// variational fit's empirical Bayes: its communities and each rater's
// membership are hyperparameters here (with Hierarchy None, the fixed
// prior; with one community, s_k mu[k, :] for every rater). Sampling the
// memberships too leaves raters between communities switching slowly
// (split R-hat 1.3 to 1.5 on the product-matching and AdultContent2
// data), so they are fixed at the variational posterior. Item class probabilities
// and the confusion cells' means and variances are Rao-Blackwellised (the
// conditional probabilities and Dirichlet moments averaged over the draws);
// a cell's 95% interval is that of the Beta distribution with its
// posterior mean and variance. R-hat and ESS are those of every rater's
// diagonal cells pi_l[k, k] and the class proportions. A sweep allocates
// nothing.
//
// With a kernel (model.pr, probit.go) the class proportions give way to
// the multinomial-probit Gaussian process and the auxiliary variables, and
// a sweep draws (Girolami & Rogers 2006's Gibbs sampler, after Albert & Chib 1993):
//
//	z_n | f_n, pi           ∝ P(argmax_k (f_nk + e_nk) = z_n) prod over item n's labels (l, j) of pi_l[z_n, j]
//	y_n | z_n, f_n          N(f_n, I) truncated to argmax = z_n (exactly: drawAux)
//	f_.k | y_.k             N(Sigma y_.k, Sigma): w ~ N(A^-1 G'y_.k, A^-1), f_.k = G w
//	pi_l[k, :] | z          as above
//
// (y integrated out of the z draw, then drawn given it: an exact joint
// draw of (z_n, y_n)). The class proportions monitored and reported are
// then the shares of the items' classes in each draw, and the auxiliary
// variables' posterior means and up to KeptTargetDraws of their draws
// (evenly spaced over the chains) are kept for prediction.
type chain struct {
	md *model
	// alpha0[(l*K+k)*K+j] is rater l's prior a_l[k, j].
	alpha0 []float64
	c0     float64
	rng    *rand.Rand
	k      int
	z      []int32
	counts []float64 // (l*K+k)*K+j
	// rowTot[l*K+k] is the sum over j of counts, a0Tot[l*K+k] that of
	// alpha0 (the collapsed z update's denominators).
	rowTot, a0Tot []float64
	class         []float64
	pi            []float64 // (l*K+k)*K+j
	logT          []float64 // (l*K+j)*K+k
	rho           []float64
	logRho        []float64
	prob          []float64 // n*K+k: P(z_n = k | pi, rho) of the last sweep
	lg, lq        []float64
	// lrow holds a row's logarithms (stored transposed in logT).
	lrow []float64

	// Kept draws and running sums.
	diagDraws [][]float32 // [l*K+k][draw]
	rhoDraws  [][]float64 // [k][draw]
	accDraws  [][]float32 // [l][draw]
	sumProb   []float64
	sumMean   []float64
	sumSq     []float64
	kept      int

	// The kernel prior: f[k*N+n], y[k*N+n], their draws' sum sumY;
	// scratch wk (length r), frow and yrow (length K), the probit
	// integrals.
	f, y, sumY []float64
	wk         []float64
	frow, yrow []float64
	pq         *probitItem
	// yDraws are kept draws of y, every keepEvery-th recorded draw.
	yDraws    [][]float64
	keepEvery int
	nyDraws   int
}

// KeptTargetDraws bounds the draws of the auxiliary variables a Gibbs fit
// with a kernel keeps for prediction (ConfusionProbit.TargetDraws).
const KeptTargetDraws = 100

// keepTargets prepares the chain, one of chains with samples draws each,
// to keep its share of KeptTargetDraws draws of y.
func (ch *chain) keepTargets(samples, chains int) {
	per := max(1, KeptTargetDraws/chains)
	ch.keepEvery = max(1, samples/per)
	m := min(per, (samples+ch.keepEvery-1)/ch.keepEvery)
	ch.yDraws = make([][]float64, m)
	for i := range ch.yDraws {
		ch.yDraws[i] = make([]float64, len(ch.y))
	}
}

func newChain(md *model, pr *gibbsPrior, c0 float64, samples int, seed uint64, c int) *chain {
	k := md.k
	rng, _ := mcmc.NewChainRand(seed, c)
	ch := &chain{md: md, alpha0: pr.alpha0, c0: c0, rowTot: make([]float64, md.l*k), a0Tot: make([]float64, md.l*k), rng: rng, k: k, z: make([]int32, md.n),
		counts: make([]float64, md.l*k*k), class: make([]float64, k), pi: make([]float64, md.l*k*k), logT: make([]float64, md.l*k*k),
		rho: make([]float64, k), logRho: make([]float64, k), prob: make([]float64, md.n*k), lg: make([]float64, k), lq: make([]float64, k), lrow: make([]float64, k),
		diagDraws: make([][]float32, md.l*k), rhoDraws: make([][]float64, k), accDraws: make([][]float32, md.l),
		sumProb: make([]float64, md.n*k), sumMean: make([]float64, md.l*k*k), sumSq: make([]float64, md.l*k*k)}
	for i := range ch.diagDraws {
		ch.diagDraws[i] = make([]float32, samples)
	}
	for i := range ch.rhoDraws {
		ch.rhoDraws[i] = make([]float64, samples)
	}
	for i := range ch.accDraws {
		ch.accDraws[i] = make([]float32, samples)
	}
	if p := md.pr; p != nil {
		ch.f, ch.y, ch.sumY = make([]float64, k*md.n), make([]float64, k*md.n), make([]float64, k*md.n)
		ch.wk, ch.frow, ch.yrow = make([]float64, p.r), make([]float64, k), make([]float64, k)
		ch.pq = newProbitItem(p.rule, k)
	}
	// Dispersed start: z_n from the item's label shares softened by one
	// label per class; gold items at their class.
	for n := 0; n < md.n; n++ {
		if md.gold != nil && md.gold[n] >= 0 {
			ch.z[n] = int32(md.gold[n])
			continue
		}
		for c := range ch.lq {
			ch.lq[c] = 1
		}
		for p := md.start[n]; p < md.start[n+1]; p++ {
			ch.lq[md.y[p]]++
		}
		ch.z[n] = int32(ch.categorical(ch.lq))
	}
	for i := range ch.a0Tot {
		for j := 0; j < k; j++ {
			ch.a0Tot[i] += ch.alpha0[i*k+j]
		}
	}
	ch.countsFromZ()
	ch.drawParams()
	return ch
}

// gibbsPrior is the prior the chains sample at: each rater's a_l[k, :]
// from the variational fit's communities and memberships.
type gibbsPrior struct {
	alpha0 []float64
}

func newGibbsPrior(v *vb) *gibbsPrior {
	k := v.k
	pr := &gibbsPrior{alpha0: make([]float64, v.md.l*k*k)}
	for l := 0; l < v.md.l; l++ {
		for c, w := range v.resp[l*v.nc : (l+1)*v.nc] {
			for i, a := range v.alpha0[c*k*k : (c+1)*k*k] {
				pr.alpha0[l*k*k+i] += w * a
			}
		}
	}
	return pr
}

// categorical draws an index with probabilities proportional to w.
func (ch *chain) categorical(w []float64) int {
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	u := ch.rng.Float64() * sum
	for c, x := range w {
		u -= x
		if u < 0 {
			return c
		}
	}
	return len(w) - 1
}

func (ch *chain) countsFromZ() {
	md, k := ch.md, ch.k
	clear(ch.counts)
	clear(ch.class)
	clear(ch.rowTot)
	for n := 0; n < md.n; n++ {
		z := int(ch.z[n])
		ch.class[z]++
		for p := md.start[n]; p < md.start[n+1]; p++ {
			l := int(md.rater[p])
			ch.counts[(l*k+z)*k+int(md.y[p])]++
			ch.rowTot[l*k+z]++
		}
	}
}

// logGamma returns the logarithm of a Gamma(a, 1) draw (Marsaglia & Tsang
// 2000; for a < 1 the boost G(a) = G(a+1) U^(1/a), in logarithms so that
// tiny shapes do not underflow).
func (ch *chain) logGamma(a float64) float64 {
	boost := 0.0
	if a < 1 {
		boost = math.Log(ch.rng.Float64()) / a
		a++
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := ch.rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := ch.rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return math.Log(d*v) + boost
		}
	}
}

// dirichletTo sets dst to a Dirichlet(a) draw and ldst to its logarithms.
func (ch *chain) dirichletTo(dst, ldst, a []float64) {
	mx := math.Inf(-1)
	for j, x := range a {
		ch.lg[j] = ch.logGamma(x)
		mx = math.Max(mx, ch.lg[j])
	}
	sum := 0.0
	for j := range a {
		sum += math.Exp(ch.lg[j] - mx)
	}
	ls := mx + math.Log(sum)
	for j := range a {
		ldst[j] = ch.lg[j] - ls
		dst[j] = math.Exp(ldst[j])
	}
}

// drawParams draws pi and rho given the counts of z.
func (ch *chain) drawParams() {
	k := ch.k
	a := ch.lq // scratch
	for l := 0; l < ch.md.l; l++ {
		a0 := ch.alpha0[l*k*k : (l+1)*k*k]
		for r := 0; r < k; r++ {
			base := (l*k + r) * k
			for j := 0; j < k; j++ {
				a[j] = a0[r*k+j] + ch.counts[base+j]
			}
			row := ch.pi[base : base+k]
			ch.dirichletTo(row, ch.lrow, a)
			for j := 0; j < k; j++ {
				ch.logT[(l*k+j)*k+r] = math.Log(math.Max(row[j], 1e-300))
			}
		}
	}
	if ch.md.pr != nil {
		// No class proportions: the shares of the classes drawn.
		for c, x := range ch.class {
			ch.rho[c] = x / float64(ch.md.n)
		}
		return
	}
	for c := range a {
		a[c] = ch.c0 + ch.class[c]
	}
	ch.dirichletTo(ch.rho, ch.logRho, a)
}

// drawZY draws every item's class and auxiliary vector given f and pi
// (kernel prior), keeping the conditional class probabilities.
func (ch *chain) drawZY() {
	md, k, nn := ch.md, ch.k, ch.md.n
	for n := 0; n < nn; n++ {
		for c := range ch.frow {
			ch.frow[c] = ch.f[c*nn+n]
		}
		pn := ch.prob[n*k : (n+1)*k]
		if md.gold != nil && md.gold[n] >= 0 {
			clear(pn)
			pn[md.gold[n]] = 1
			ch.z[n] = int32(md.gold[n])
		} else {
			ch.pq.eval(ch.frow, false)
			md.classPosteriorTo(pn, n, ch.pq.lz, ch.logT)
			ch.z[n] = int32(ch.categorical(pn))
		}
		drawAux(ch.rng, ch.yrow, ch.frow, int(ch.z[n]))
		for c, y := range ch.yrow {
			ch.y[c*nn+n] = y
		}
	}
}

// drawF draws each class's latent function given its auxiliary variables.
func (ch *chain) drawF() {
	nn := ch.md.n
	for c := 0; c < ch.k; c++ {
		ch.md.pr.drawTo(ch.rng, ch.f[c*nn:(c+1)*nn], ch.wk, ch.y[c*nn:(c+1)*nn])
	}
}

// drawZ draws every item's class in turn from its collapsed full
// conditional, pi and rho integrated out (Dirichlet-multinomial):
//
//	P(z_n = k | z_-n) ∝ (c_0 + #{m != n: z_m = k}) prod over item n's labels (l, j), in order, of
//	                    (a_l[k, j] + N_l[k, j]) / (sum_j a_l[k, j] + N_l[k, .])
//
// with the counts N of the other items' labels (and of the item's earlier
// labels: repeated labels of one rater), keeping these probabilities for
// the Rao-Blackwellised class probabilities. Integrating pi out lets the
// classes of a rater's items move together, where drawing them given pi
// mixes slowly for a rater whose confusions the data leave uncertain.
// The products are kept in range by rescaling.
func (ch *chain) drawZ() {
	md, k := ch.md, ch.k
	for n := 0; n < md.n; n++ {
		pn := ch.prob[n*k : (n+1)*k]
		if md.gold != nil && md.gold[n] >= 0 {
			clear(pn)
			pn[md.gold[n]] = 1
			continue
		}
		lo, hi := md.start[n], md.start[n+1]
		z := int(ch.z[n])
		ch.class[z]--
		for p := lo; p < hi; p++ {
			l := int(md.rater[p])
			ch.counts[(l*k+z)*k+int(md.y[p])]--
			ch.rowTot[l*k+z]--
		}
		for c := range pn {
			pn[c] = ch.c0 + ch.class[c]
		}
		ch.labelTerms(pn, lo, hi, md.repeat[n])
		sum := 0.0
		for _, x := range pn {
			sum += x
		}
		for c := range pn {
			pn[c] /= sum
		}
		z = ch.categorical(pn)
		ch.z[n] = int32(z)
		ch.class[z]++
		for p := lo; p < hi; p++ {
			l := int(md.rater[p])
			ch.counts[(l*k+z)*k+int(md.y[p])]++
			ch.rowTot[l*k+z]++
		}
	}
}

// labelTerms multiplies pn by the collapsed predictive probability of
// each of labels lo..hi-1 under each class; with sequential (an item with
// repeated labels of a rater) each label is counted before the next, so
// that a rater's repeated labels are the sequential predictive, not
// independent draws.
func (ch *chain) labelTerms(pn []float64, lo, hi int, sequential bool) {
	md, k := ch.md, ch.k
	for p := lo; p < hi; p++ {
		l, y := int(md.rater[p]), int(md.y[p])
		mx := 0.0
		for c := range pn {
			i := l*k + c
			pn[c] *= (ch.alpha0[i*k+y] + ch.counts[i*k+y]) / (ch.a0Tot[i] + ch.rowTot[i])
			if sequential {
				ch.counts[i*k+y]++
				ch.rowTot[i]++
			}
			if pn[c] > mx {
				mx = pn[c]
			}
		}
		if mx < 0x1p-512 { // every class alike: the ratios are unchanged
			for c := range pn {
				pn[c] *= 0x1p512
			}
		}
	}
	if !sequential {
		return
	}
	for p := lo; p < hi; p++ {
		l, y := int(md.rater[p]), int(md.y[p])
		for c := range pn {
			ch.counts[(l*k+c)*k+y]--
			ch.rowTot[l*k+c]--
		}
	}
}

// Sweep draws z (collapsed), then pi and rho given z; with a kernel
// (z, y) given f and pi, then pi, then f.
func (ch *chain) Sweep(bool) error {
	if ch.md.pr != nil {
		ch.drawZY()
		ch.countsFromZ()
		ch.drawParams()
		ch.drawF()
		return nil
	}
	ch.drawZ()
	ch.drawParams()
	return nil
}

func (ch *chain) EndWarmup() {}

// Record keeps draw i: the diagonal cells, the class proportions and the
// accuracies, and adds the conditional moments to the running sums.
func (ch *chain) Record(i int) {
	md, k := ch.md, ch.k
	for l := 0; l < md.l; l++ {
		acc := 0.0
		for r := 0; r < k; r++ {
			d := ch.pi[(l*k+r)*k+r]
			ch.diagDraws[l*k+r][i] = float32(d)
			acc += ch.rho[r] * d
		}
		ch.accDraws[l][i] = float32(acc)
	}
	for c := range ch.rho {
		ch.rhoDraws[c][i] = ch.rho[c]
	}
	// The prob of the last sweep is each item's collapsed conditional
	// P(z_n | z_-n) at the sweep's draws, an average over the posterior.
	for j, x := range ch.prob {
		ch.sumProb[j] += x
	}
	for j, x := range ch.y {
		ch.sumY[j] += x
	}
	if ch.keepEvery > 0 && i%ch.keepEvery == 0 && ch.nyDraws < len(ch.yDraws) {
		copy(ch.yDraws[ch.nyDraws], ch.y)
		ch.nyDraws++
	}
	for l := 0; l < md.l; l++ {
		a0 := ch.alpha0[l*k*k : (l+1)*k*k]
		for r := 0; r < k; r++ {
			base := (l*k + r) * k
			a := 0.0
			for j := 0; j < k; j++ {
				a += a0[r*k+j] + ch.counts[base+j]
			}
			for j := 0; j < k; j++ {
				x := a0[r*k+j] + ch.counts[base+j]
				ch.sumMean[base+j] += x / a
				ch.sumSq[base+j] += x * (x + 1) / (a * (a + 1))
			}
		}
	}
	ch.kept++
}

// Monitored returns the class proportions' series for the live R-hat.
func (ch *chain) Monitored() [][]float64 { return ch.rhoDraws }

// fitGibbs runs the chains at the empirical-Bayes prior of a variational
// fit.
func fitGibbs(ctx context.Context, data *Data, md *model, opts Options) (*multirater.FitResult, error) {
	start := time.Now()
	vo := opts
	vo.Engine, vo.Progress = multirater.EngineVB, nil
	if vo.RaterModel == RaterConfusion && vo.Hierarchy == Communities {
		vo.Hierarchy, vo.Communities = Pooled, 0
	}
	vf, err := runVB(ctx, md, vo, start)
	if err != nil {
		return nil, err
	}
	v, cands := vf.v, vf.cands
	pr := newGibbsPrior(v)
	vbSeconds := time.Since(start).Seconds()
	k := md.k
	ns := opts.Samples
	var res *multirater.FitResult
	_, err = mcmc.Fit(ctx, opts.Settings, opts.Progress, start, 0.95,
		func(c int) *chain {
			ch := newChain(md, pr, opts.ClassPrior, ns, opts.Seed, c)
			if md.pr != nil {
				ch.keepTargets(ns, opts.Chains)
			}
			return ch
		},
		func(chains []*chain) *multirater.FitResult {
			nc := len(chains)
			var params []*mcmc.Param
			for l := 0; l < md.l; l++ {
				for r := 0; r < k; r++ {
					idx := l*k + r
					params = append(params, &mcmc.Param{Name: fmt.Sprintf("pi[%s,%s,%s]", data.RaterIDs[l], data.Classes[r], data.Classes[r]), Free: true,
						Get: func(c int) []float64 { return f64(chains[c].diagDraws[idx]) }})
				}
			}
			rhoP := make([]*mcmc.Param, k)
			for r := 0; r < k; r++ {
				rhoP[r] = &mcmc.Param{Name: fmt.Sprintf("rho[%s]", data.Classes[r]), Free: true, Get: func(c int) []float64 { return chains[c].rhoDraws[r] }}
				params = append(params, rhoP[r])
			}
			mcmc.SummariseParams(params, nc)
			p := &post{q: make([]float64, md.n*k), cells: make([]multirater.Estimate, md.l*k*k), rho: make([]multirater.Estimate, k),
				acc: make([]multirater.Estimate, md.l),
				nc:  v.nc, s: v.s, mu: v.mu, h: v.h, resp: v.resp, candidates: cands}
			tot := 0
			for _, ch := range chains {
				tot += ch.kept
			}
			for _, ch := range chains {
				for j, x := range ch.sumProb {
					p.q[j] += x / float64(tot)
				}
			}
			if md.pr != nil {
				p.targets = make([]float64, md.n*k)
				for _, ch := range chains {
					for j, x := range ch.sumY {
						p.targets[j] += x / float64(tot)
					}
					p.targetDraws = append(p.targetDraws, ch.yDraws[:ch.nyDraws]...)
				}
			}
			numeric.ParallelFor(md.l, func(l int) {
				for j := l * k * k; j < (l+1)*k*k; j++ {
					var m, m2 float64
					for _, ch := range chains {
						m += ch.sumMean[j]
						m2 += ch.sumSq[j]
					}
					m /= float64(tot)
					m2 /= float64(tot)
					p.cells[j] = momentEstimate(m, m2-m*m)
				}
				cs := make([][]float64, nc)
				for c, ch := range chains {
					cs[c] = f64(ch.accDraws[l])
				}
				p.acc[l] = mcmc.ToEstimate(diag.QuickSummary(cs))
			})
			for r := 0; r < k; r++ {
				p.rho[r] = mcmc.ToEstimate(rhoP[r].Sum)
			}
			res = summarise(data, md, opts, p)
			m := &res.Model
			m.Chains, m.Samples, m.Burnin, m.Thin, m.MaxRhat, m.MinESS = nc, opts.Samples, opts.Burnin, opts.Thin, opts.MaxRhat, opts.MinESS
			dg := &res.Diagnostics
			dg.Notes = append(dg.Notes, vf.notes...)
			mcmc.Converge(dg, params, opts.MaxRhat, opts.MinESS, nc, ns)
			dg.Notes = append(dg.Notes, fmt.Sprintf("Gibbs sampling at the prior found by the variational fit's empirical Bayes (%.2f s); R-hat and ESS of every rater's diagonal cells and the class proportions; class probabilities and confusion cells Rao-Blackwellised", vbSeconds))
			return res
		})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
