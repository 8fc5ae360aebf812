package confusion

import (
	"math"

	"gonum.org/v1/gonum/mathext"

	"concord/multirater"
)

// graded is the state of the graded rater model (RaterGraded, a coinVB
// mode): when the classes are ordered grades 0 < 1 < ... < K-1, rater l
// reports the true grade c moved by a shift s drawn from the rater's own
// shift distribution w_l over -(K-1), ..., K-1 and clamped to the scale,
//
//	y = min(max(c + s, 0), K - 1),  s ~ Cat(w_l),  w_l ~ Dirichlet(S nu),
//
// so pi_l[c, j] = sum over the shifts s with clamp(c + s) = j of w_l[s]:
// 2K - 1 weights per rater (its bias, spread and the shape of its errors
// by distance) shared by every true grade, against the K (K - 1) of a
// confusion matrix, so that a rater with few labels of a rare grade does
// not get a flat row there. The mean nu is learnt by empirical Bayes
// (fitMean, its floors) at the strength S = Options.Concentration; it
// starts at Options.Diagonal on s = 0, the rest spread evenly.
//
// The shifts are latent and kept exact given the class (structured mean
// field, as the spammer's competence), so that with E-logs written ~
//
//	ln pi~_l[c, j] = ln sum over s with clamp(c + s) = j of w~_l[s]
//
// and the bound (coin.go) is of the same labels' marginal likelihood as the
// other rater models', which the evidence compares (choose.go); a nominal
// scheme coded by numbers, whose errors do not fall off with distance,
// pays for the 2K - 1 weights per rater and is left to the other models.
type graded struct {
	// m = 2K - 1 shifts, s + K - 1 the index of shift s.
	m int
	// w[l*m+s] is rater l's Dirichlet posterior, w0 the prior S nu;
	// elw[l*m+s] = E[ln w_l[s]]; cnt the expected shift counts.
	w, w0, elw, cnt []float64
	// sq[(l*K+c)*K+j] = sum over rater l's labels j of q(z_n = c).
	sq []float64
	// nuW is the last empirical-Bayes multiplier (fitMeanFrom's warm
	// start; NaN: none yet).
	nuW float64
}

// newGradedVB is the graded rater model's engine (see graded).
func newGradedVB(md *model, opts Options) *coinVB {
	v := newCoinVB(md, opts, false)
	k, l := md.k, md.l
	m := 2*k - 1
	g := &graded{m: m, w: make([]float64, l*m), w0: make([]float64, m), elw: make([]float64, l*m), cnt: make([]float64, l*m),
		sq: make([]float64, l*k*k), nuW: math.NaN()}
	s := opts.concentration()
	for i := range g.w0 {
		g.w0[i] = s * (1 - opts.Diagonal) / float64(m-1)
	}
	g.w0[k-1] = s * opts.Diagonal
	for i := 0; i < l; i++ {
		copy(g.w[i*m:(i+1)*m], g.w0)
	}
	v.grade = g
	return v
}

// shiftRange returns the shifts s (as indices s + K - 1) with
// clamp(c + s) = j: one inside the scale, all those at or beyond its
// ends.
func shiftRange(k, c, j int) (lo, hi int) {
	lo, hi = j-c+k-1, j-c+k-1
	if j == 0 {
		lo = 0
	}
	if j == k-1 {
		hi = 2*k - 2
	}
	return lo, hi
}

// gradedRaters is coinVB.raters for the graded model: the soft counts sq
// from q, the prior mean by empirical Bayes when eb (at the previous
// posteriors), then q(s | z) and q(w) in turn at the fixed q(z)
// (spamInner), ln pi~ and the raters' KL terms.
func (v *coinVB) gradedRaters(eb bool) {
	md, k, g := v.md, v.k, v.grade
	clear(g.sq)
	for n := 0; n < md.n; n++ {
		qn := v.q[n*k : (n+1)*k]
		for p := md.start[n]; p < md.start[n+1]; p++ {
			row := g.sq[(int(md.rater[p])*k)*k:]
			y := int(md.y[p])
			for c, x := range qn {
				row[c*k+y] += x
			}
		}
	}
	if eb {
		g.empiricalBayes(md)
	}
	for r := 0; r < spamInner; r++ {
		if g.step(md, k) < 1e-6 {
			break
		}
	}
	v.kl = 0
	for l := 0; l < md.l; l++ {
		w := g.w[l*g.m : (l+1)*g.m]
		v.kl += klDirichlet(w, g.w0)
		g.elogs(l)
		for c := 0; c < k; c++ {
			for j := 0; j < k; j++ {
				v.elogT[(l*k+j)*k+c] = g.cell(l, k, c, j)
			}
		}
	}
}

// elogs sets rater l's E[ln w_l].
func (g *graded) elogs(l int) {
	w, e := g.w[l*g.m:(l+1)*g.m], g.elw[l*g.m:(l+1)*g.m]
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	ps := mathext.Digamma(sum)
	for s, x := range w {
		e[s] = mathext.Digamma(x) - ps
	}
}

// cell is ln pi~_l[c, j] = ln sum over its shifts of exp(E[ln w_l[s]]).
func (g *graded) cell(l, k, c, j int) float64 {
	e := g.elw[l*g.m : (l+1)*g.m]
	lo, hi := shiftRange(k, c, j)
	if lo == hi {
		return e[lo]
	}
	mx := math.Inf(-1)
	for s := lo; s <= hi; s++ {
		mx = math.Max(mx, e[s])
	}
	sum := 0.0
	for s := lo; s <= hi; s++ {
		sum += math.Exp(e[s] - mx)
	}
	return mx + math.Log(sum)
}

// step is one update of the shifts' responsibilities (from the current
// posteriors: a label j of class c has shift s with probability w~[s] /
// pi~[c, j] over its shifts) and then of the posteriors from the expected
// counts; it returns the largest relative change of a posterior
// parameter.
func (g *graded) step(md *model, k int) float64 {
	worst := 0.0
	for l := 0; l < md.l; l++ {
		g.elogs(l)
		e := g.elw[l*g.m : (l+1)*g.m]
		cnt := g.cnt[l*g.m : (l+1)*g.m]
		clear(cnt)
		for c := 0; c < k; c++ {
			for j := 0; j < k; j++ {
				x := g.sq[(l*k+c)*k+j]
				if x == 0 {
					continue
				}
				t := g.cell(l, k, c, j)
				lo, hi := shiftRange(k, c, j)
				for s := lo; s <= hi; s++ {
					cnt[s] += x * math.Exp(e[s]-t)
				}
			}
		}
		w := g.w[l*g.m : (l+1)*g.m]
		for s := range w {
			x := g.w0[s] + cnt[s]
			worst = math.Max(worst, math.Abs(x-w[s])/x)
			w[s] = x
		}
	}
	return worst
}

// empiricalBayes sets the prior mean nu to the maximum of sum_l
// E_q[ln Dirichlet(w_l; S nu)] at the fixed total S (fitMeanFrom, its
// floors), over the raters with labels.
func (g *graded) empiricalBayes(md *model) {
	t := make([]float64, g.m)
	w := 0.0
	for l := 0; l < md.l; l++ {
		if md.raterCount[l] == 0 {
			continue
		}
		w++
		g.elogs(l)
		for s, x := range g.elw[l*g.m : (l+1)*g.m] {
			t[s] += x
		}
	}
	if w == 0 {
		return
	}
	for s := range t {
		t[s] /= w
	}
	s := 0.0
	for _, x := range g.w0 {
		s += x
	}
	g.nuW = fitMeanFrom(g.w0, t, s, g.nuW)
}

// heldOut is the graded model's leave-one-label-out score (see
// candidateFit.heldOut): the label's expected shift counts taken out of
// its rater's posterior.
func (v *coinVB) gradedHeldOut() float64 {
	k, g := v.k, v.grade
	own := make([]float64, g.m)
	return sumHeldOut(v.md, v.q, v.elogT, k, func(qi []float64, n, l, y int) float64 {
		w := g.w[l*g.m : (l+1)*g.m]
		e := g.elw[l*g.m : (l+1)*g.m]
		clear(own)
		for c := 0; c < k; c++ {
			t := g.cell(l, k, c, y)
			lo, hi := shiftRange(k, c, y)
			for s := lo; s <= hi; s++ {
				own[s] += v.q[n*k+c] * math.Exp(e[s]-t)
			}
		}
		tot := -1.0
		for _, x := range w {
			tot += x
		}
		pr := 0.0
		for c := 0; c < k; c++ {
			lo, hi := shiftRange(k, c, y)
			x := 0.0
			for s := lo; s <= hi; s++ {
				x += math.Max(w[s]-own[s], 1e-12)
			}
			pr += qi[c] * x / math.Max(tot, 1e-12)
		}
		return pr
	})
}

// gradedPosterior summarises the graded fit: each cell pi_l[c, j], a sum
// of Dirichlet weights, by its exact Beta marginal; the prior matrix mu
// from nu likewise; a rater's accuracy sum_c rho_c pi_l[c, c] at the
// means, its variance that of the shift 0 weight's Beta.
func (v *coinVB) gradedPosterior() *post {
	md, k, g := v.md, v.k, v.grade
	p := &post{q: v.q, cells: make([]multirater.Estimate, md.l*k*k), rho: make([]multirater.Estimate, k), acc: make([]multirater.Estimate, md.l),
		nc: 1, s: make([]float64, k), mu: make([]float64, k*k), h: []float64{1}, resp: make([]float64, md.l), rater: RaterGraded}
	bsum := 0.0
	for _, b := range v.beta {
		bsum += b
	}
	for c, b := range v.beta {
		p.rho[c] = betaEstimate(b, bsum-b)
	}
	sum := func(w []float64, c, j int) (float64, float64) {
		lo, hi := shiftRange(k, c, j)
		in, all := 0.0, 0.0
		for s, x := range w {
			all += x
			if s >= lo && s <= hi {
				in += x
			}
		}
		return in, all
	}
	for c := 0; c < k; c++ {
		for j := 0; j < k; j++ {
			in, all := sum(g.w0, c, j)
			p.s[c], p.mu[c*k+j] = all, in/all
		}
	}
	for l := 0; l < md.l; l++ {
		p.resp[l] = 1
		w := g.w[l*g.m : (l+1)*g.m]
		acc := 0.0
		for c := 0; c < k; c++ {
			for j := 0; j < k; j++ {
				in, all := sum(w, c, j)
				p.cells[(l*k+c)*k+j] = betaEstimate(in, all-in)
				if j == c {
					acc += v.beta[c] / bsum * in / all
				}
			}
		}
		in, all := sum(w, 1, 1)
		p.acc[l] = momentEstimate(acc, in*(all-in)/(all*all*(all+1)))
	}
	return p
}
