package confusion

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/mathext"

	"concord/multirater"
	"concord/multirater/numeric"
)

// vb is the variational Bayes engine (Simpson et al. 2013 sec. 3; Kim &
// Ghahramani 2012; with communities, Venanzi et al. 2014 sec. 3):
// q(z, pi, m, rho) = prod_n q(z_n) prod_{l,k} q(pi_l[k, :]) prod_l q(m_l)
// q(rho), updated in turn,
//
//	alpha_l[k, j] = sum_c q(m_l = c) s_ck mu_c[k, j] + sum over rater l's labels j of q(z_n = k)
//	beta_k        = c_0 + sum_n q(z_n = k)
//	q(z_n = k)    ∝ exp(E[log rho_k] + sum over item n's labels (l, j) of E[log pi_l[k, j]])
//	q(m_l = c)    ∝ h_c exp(sum_k E[log Dirichlet(pi_l[k, :]; s_ck mu_c[k, :])])
//
// with E[log pi_l[k, j]] = psi(alpha_l[k, j]) - psi(sum_j alpha_l[k, j]),
// and (Pooled, Communities) the empirical-Bayes updates of h and of each
// community's s_ck mu_c[k, :] between them. With one community (Pooled)
// q(m_l) = 1 and this is the pooled model. The evidence lower bound, right
// after the Dirichlet updates, is
//
//	ELBO = H[q(z)] + sum_{l,k} ln B(alpha_l[k, :]) - sum_{l,c} q(m_l = c) (sum_k ln B(s_ck mu_c[k, :]) - ln h_c + ln q(m_l = c))
//	       + ln B(beta) - ln B(c_0)
//
// (B the multivariate Beta function).
//
// Soft labels (Data.Probs: a model rater's label j0 with probability p in
// (0, 1)) are virtual evidence on the rater's response: the response y_i
// of label i is latent, with evidence e_i(j) = p for j = j0 and
// (1-p)/(K-1) otherwise, and labelled by the rater's confusion row as a
// hard label is, y_i | z_n = k ~ Categorical(pi_l[k, :]). The variational
// factor is structured, q(z_n) q(y_i | z_n) (as MACE's competence
// indicators in coin.go), with the optimal
//
//	q(y_i = j | z_n = k) = e_i(j) pi~_l[k, j] / sum_j' e_i(j') pi~_l[k, j']
//
// (pi~ = exp E[log pi]), so a soft label contributes ln sum_j e_i(j)
// pi~_l[k, j], the label distribution passed through the rater's own
// confusion row, in place of E[log pi_l[k, j0]] to q(z_n = k); its expected
// counts are q(z_n = k) q(y_i = j | z_n = k) in place of q(z_n = k) at j0;
// and the bound gains sum_{k,j} q(z_n = k) q(y_i = j | k) (ln e_i(j) - ln
// q(y_i = j | k)). A label with p = 1 is a hard label; a rater whose
// probabilities are p = 1/K says nothing. Labels-only fits allocate
// nothing of this and run exactly as before.
//
// With a kernel (model.pr, probit.go) the class proportions' factor gives
// way to the multinomial-probit Gaussian process (Girolami & Rogers
// 2006's variational Bayes): q(f_k) = N(M_k, Sigma) with Sigma =
// G A^-1 G' = C (I + C)^-1 and M_k = Sigma ytilde_k (their update of
// Q(f_k)), q(z_n, y_n) = q(z_n) q(y_n | z_n), q(y_n | z_n = k) the normal
// N(m_n, I) truncated to argmax = k, so
//
//	q(z_n = k)    ∝ Z_nk exp(sum over item n's labels (l, j) of E[log pi_l[k, j]])
//	ytilde_n      = sum_k q(z_n = k) E[y_n | z_n = k]
//
// with Z_nk = E_u[prod_{j != k} Phi(u + m_nk - m_nj)] (their Z_n) and the
// truncated means of their update of Q(y_n) (probitItem.eval); q(pi), the
// communities and empirical Bayes are unchanged. The bound's terms of rho,
// ln B(beta) - ln B(c_0), give way to those of (z, y, f): in the whitened
// coordinates w_k = A^-1 G' ytilde_k of q(f_k),
//
//	sum_{n,k} q(z_n = k) ln Z_nk - 1/2 sum_k |w_k|^2 - K/2 ln|A|
//
// (E[ln N(y_n | f_n, I)] - E[ln q(y_n | z_n)] = sum_k q(z_n = k) ln Z_nk -
// K Sigma_nn / 2 when q(y) is centred at the M of q(f), and the
// Kullback-Leibler divergence of q(w_k) = N(A^-1 G' ytilde_k, A^-1) from
// N(0, I) is (tr A^-1 + |w_k|^2 - r + ln|A|)/2, whose trace terms cancel
// those of Sigma since sum_n Sigma_nn = r - tr A^-1). The bound is
// evaluated right after an item update, whose q(y) is centred at the M of
// the current q(f): it is the exact ELBO of the model with the factor's
// covariance G G' (TestKernelELBOMonteCarlo checks it against a Monte
// Carlo estimate), so the number of communities is chosen by it as with the
// identity kernel.
//
// Every array is allocated once: an iteration allocates nothing.
type vb struct {
	md   *model
	opts Options
	k    int
	// nc is the number of communities (1: pooled or none).
	nc int
	// q[n*K+k] = q(z_n = k).
	q []float64
	// alpha0[(c*K+k)*K+j] = s_ck mu_c[k, j]; s[c*K+k], mu likewise;
	// lnB0[c*K+k] = ln B(alpha0 of community c's row k).
	alpha0, s, mu, lnB0 []float64
	// resp[l*nc+c] = q(m_l = c); h[c] the community weights.
	resp, h []float64
	// counts[(l*K+k)*K+j], alpha likewise; elogT[(l*K+j)*K+k] =
	// E[log pi_l[k, j]] (transposed for the item update).
	counts, alpha, elogT      []float64
	beta, elogRho, classCount []float64
	// scratch of length K (lq, t, a2) and nc (lr).
	lq, t, a2, lr []float64
	elbo          float64
	// The kernel prior (md.pr != nil): yt[k*N+n] = ytilde_nk, m[k*N+n] =
	// M_nk, w[k*r+i] the whitened means; qlz = sum_{n,k} q(z_n = k) ln Z_nk
	// of the last item update; sc the item update's scratch.
	yt, m, w []float64
	qlz      float64
	sc       *itemScratch
	// half is the scratch of a split item update (updateQ).
	half *vbHalf
	// softC[s*K*K + k*K + j] = q(z_n = k) q(y_i = j | z_n = k) of soft
	// label s (model.slot), its expected counts; nil without soft labels.
	softC []float64
	// nu[c*K+k] is the Lagrange multiplier of the last empirical-Bayes fit
	// of community c's row k (fitMeanFrom's warm start; NaN: none yet).
	nu []float64
}

// communityDiagonal is the starting diagonal of community c of nc: from
// 0.9 (reliable raters) down to 0.4 (spammers, or for two classes
// adversaries), so that the communities start apart; one community starts
// at Options.Diagonal.
func communityDiagonal(c, nc int, def float64) float64 {
	if nc == 1 {
		return def
	}
	return 0.9 - 0.5*float64(c)/float64(nc-1)
}

func newVB(md *model, opts Options, nc int) *vb {
	k := md.k
	v := &vb{md: md, opts: opts, k: k, nc: nc,
		q:      make([]float64, md.n*k),
		alpha0: make([]float64, nc*k*k), s: make([]float64, nc*k), mu: make([]float64, nc*k*k), lnB0: make([]float64, nc*k),
		resp: make([]float64, md.l*nc), h: make([]float64, nc),
		counts: make([]float64, md.l*k*k), alpha: make([]float64, md.l*k*k), elogT: make([]float64, md.l*k*k),
		beta: make([]float64, k), elogRho: make([]float64, k), classCount: make([]float64, k),
		lq: make([]float64, k), t: make([]float64, k), a2: make([]float64, k), lr: make([]float64, nc), nu: make([]float64, nc*k)}
	for i := range v.nu {
		v.nu[i] = math.NaN()
	}
	v.sc = v.newItemScratch()
	if md.nSoft > 0 {
		v.softC = make([]float64, md.nSoft*k*k)
	}
	if pr := md.pr; pr != nil {
		v.yt, v.m, v.w = make([]float64, k*md.n), make([]float64, k*md.n), make([]float64, k*pr.r)
	}
	for c := 0; c < nc; c++ {
		d := communityDiagonal(c, nc, opts.Diagonal)
		off := (1 - d) / float64(k-1)
		v.h[c] = 1 / float64(nc)
		for r := 0; r < k; r++ {
			v.s[c*k+r] = opts.concentration()
			for j := 0; j < k; j++ {
				x := off
				if j == r {
					x = d
				}
				v.mu[(c*k+r)*k+j] = x
				v.alpha0[(c*k+r)*k+j] = v.s[c*k+r] * x
			}
		}
	}
	v.priorNorms()
	v.initQ()
	v.initCommunities()
	return v
}

// initCommunities starts every rater in one community: the raters ranked
// by their agreement with the starting class probabilities (the label
// shares) are split into nc groups of equal size, the most agreeing in
// community 0 (whose starting diagonal is the highest). Starting the
// memberships apart, rather than equal, keeps the communities from
// collapsing into one at the first empirical-Bayes update.
func (v *vb) initCommunities() {
	md, k, nc := v.md, v.k, v.nc
	if nc == 1 {
		for l := range md.l {
			v.resp[l] = 1
		}
		return
	}
	agree := make([]float64, md.l)
	for n := 0; n < md.n; n++ {
		for p := md.start[n]; p < md.start[n+1]; p++ {
			agree[md.rater[p]] += v.q[n*k+int(md.y[p])]
		}
	}
	order := make([]int, md.l)
	for l := range order {
		order[l] = l
		if md.raterCount[l] > 0 {
			agree[l] /= float64(md.raterCount[l])
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return agree[order[a]] > agree[order[b]] })
	for rank, l := range order {
		c := rank * nc / md.l
		v.resp[l*nc+c] = 1
	}
}

// priorNorms sets lnB0 from alpha0.
func (v *vb) priorNorms() {
	k := v.k
	for i := range v.lnB0 {
		v.lnB0[i] = lnB(v.alpha0[i*k : (i+1)*k])
	}
}

// initQ starts q(z_n) at the items' label shares (majority vote, softened
// by half a label per class); gold items at their class.
func (v *vb) initQ() {
	md, k := v.md, v.k
	for n := 0; n < md.n; n++ {
		qn := v.q[n*k : (n+1)*k]
		if md.gold != nil && md.gold[n] >= 0 {
			for c := range qn {
				qn[c] = 0
			}
			qn[md.gold[n]] = 1
			continue
		}
		tot := 0.0
		for c := range qn {
			qn[c] = 0.5
		}
		for p := md.start[n]; p < md.start[n+1]; p++ {
			if md.prob != nil && md.prob[p] > 0 {
				for c := range qn {
					qn[c] += md.softEvidence(p, c)
				}
				continue
			}
			qn[md.y[p]]++
		}
		for _, x := range qn {
			tot += x
		}
		for c := range qn {
			qn[c] /= tot
		}
	}
}

// countsFromQ sets counts and classCount from q.
func (v *vb) countsFromQ() {
	md, k := v.md, v.k
	clear(v.counts)
	clear(v.classCount)
	for n := 0; n < md.n; n++ {
		qn := v.q[n*k : (n+1)*k]
		for c, x := range qn {
			v.classCount[c] += x
		}
		for p := md.start[n]; p < md.start[n+1]; p++ {
			if md.prob != nil && md.prob[p] > 0 {
				v.softCounts(v.counts, qn, p, false)
				continue
			}
			base := int(md.rater[p])*k*k + int(md.y[p])
			for c, x := range qn {
				v.counts[base+c*k] += x
			}
		}
	}
}

// softCounts sets the expected counts of the soft label at position p to
// q(z_n = k) q(y = j | z_n = k) at the current expected logarithms and adds
// them to counts, less the label's previous counts when replace is set
// (the incremental item update; countsFromQ starts from zero counts).
func (v *vb) softCounts(counts, qn []float64, p int, replace bool) {
	md, k := v.md, v.k
	l := int(md.rater[p])
	s := int(md.slot[p])
	sc := v.softC[s*k*k : (s+1)*k*k]
	for c, qc := range qn {
		row := sc[c*k : (c+1)*k]
		mx := math.Inf(-1)
		for j := range row {
			mx = math.Max(mx, v.elogT[(l*k+j)*k+c])
		}
		sum := 0.0
		for j := 0; j < k; j++ {
			sum += md.softEvidence(p, j) * math.Exp(v.elogT[(l*k+j)*k+c]-mx)
		}
		for j := range row {
			x := qc * md.softEvidence(p, j) * math.Exp(v.elogT[(l*k+j)*k+c]-mx) / sum
			if replace {
				counts[(l*k+c)*k+j] += x - row[j]
			} else {
				counts[(l*k+c)*k+j] += x
			}
			row[j] = x
		}
	}
}

// dirichlets sets alpha, beta and the expected logarithms (or, with MAP,
// the logarithms of the modes) from the counts and the prior.
func (v *vb) dirichlets() {
	k := v.k
	for l := 0; l < v.md.l; l++ {
		for r := 0; r < k; r++ {
			row := v.alpha[(l*k+r)*k : (l*k+r+1)*k]
			cnt := v.counts[(l*k+r)*k : (l*k+r+1)*k]
			sum := 0.0
			for j := range row {
				a0 := 0.0
				for c, w := range v.resp[l*v.nc : (l+1)*v.nc] {
					a0 += w * v.alpha0[(c*k+r)*k+j]
				}
				row[j] = a0 + cnt[j]
				sum += row[j]
			}
			if v.opts.MAP {
				den := sum - float64(k)
				for j, a := range row {
					v.elogT[(l*k+j)*k+r] = math.Log(math.Max((a-1)/den, 1e-300))
				}
				continue
			}
			ps := mathext.Digamma(sum)
			for j, a := range row {
				v.elogT[(l*k+j)*k+r] = mathext.Digamma(a) - ps
			}
		}
	}
	sum := 0.0
	for c := range v.beta {
		v.beta[c] = v.opts.ClassPrior + v.classCount[c]
		sum += v.beta[c]
	}
	for c, b := range v.beta {
		if v.opts.MAP {
			v.elogRho[c] = math.Log(math.Max((b-1)/(sum-float64(k)), 1e-300))
		} else {
			v.elogRho[c] = mathext.Digamma(b) - mathext.Digamma(sum)
		}
	}
}

// lnB is ln B(a) = sum ln Gamma(a_j) - ln Gamma(sum a_j).
func lnB(a []float64) float64 {
	s, sum := 0.0, 0.0
	for _, x := range a {
		lg, _ := math.Lgamma(x)
		s += lg
		sum += x
	}
	lg, _ := math.Lgamma(sum)
	return s - lg
}

// bound returns the ELBO (valid right after dirichlets).
func (v *vb) bound() float64 {
	k := v.k
	var h float64
	for _, x := range v.q {
		if x > 0 {
			h -= x * math.Log(x)
		}
	}
	e := h
	for l := 0; l < v.md.l; l++ {
		for c, w := range v.resp[l*v.nc : (l+1)*v.nc] {
			if w == 0 {
				continue
			}
			var p float64
			for r := 0; r < k; r++ {
				p += v.lnB0[c*k+r]
			}
			e -= w * (p - math.Log(v.h[c]) + math.Log(w))
		}
	}
	for i := 0; i < v.md.l*k; i++ {
		e += lnB(v.alpha[i*k : (i+1)*k])
	}
	if v.softC != nil {
		e += v.softBound()
	}
	if v.md.pr != nil {
		// The Gaussian process's terms (see vb).
		e += v.qlz - 0.5*float64(k)*v.md.pr.logDetA
		for _, x := range v.w {
			e -= 0.5 * x * x
		}
		return e
	}
	for c := range v.a2 {
		v.a2[c] = v.opts.ClassPrior
	}
	return e + lnB(v.beta) - lnB(v.a2)
}

// softBound is the soft labels' part of the bound: sum over soft labels
// of sum_{k,j} q(z_n = k) q(y = j | k) (ln e(j) - ln q(y = j | k)), from
// the expected counts softC and q.
func (v *vb) softBound() float64 {
	md, k := v.md, v.k
	e := 0.0
	for n := 0; n < md.n; n++ {
		for p := md.start[n]; p < md.start[n+1]; p++ {
			if md.prob[p] == 0 {
				continue
			}
			s := int(md.slot[p])
			sc := v.softC[s*k*k : (s+1)*k*k]
			for c := 0; c < k; c++ {
				qc := v.q[n*k+c]
				for j := 0; j < k; j++ {
					if x := sc[c*k+j]; x > 0 && qc > 0 {
						e += x * (math.Log(md.softEvidence(p, j)) - math.Log(x/qc))
					}
				}
			}
		}
	}
	return e
}

// itemScratch is the scratch of an item update (one per goroutine): lq of
// length K, and with a kernel the probit integrals, an item's latent means
// and the sum of q(z_n = k) ln Z_nk.
type itemScratch struct {
	lq, mrow []float64
	pi       *probitItem
	qlz      float64
}

func (v *vb) newItemScratch() *itemScratch {
	sc := &itemScratch{lq: make([]float64, v.k)}
	if v.md.pr != nil {
		sc.mrow = make([]float64, v.k)
		sc.pi = newProbitItem(v.md.pr.rule, v.k)
	}
	return sc
}

// latentMeans sets q(f): M_k = Sigma ytilde_k and its whitened mean w_k
// (Girolami & Rogers 2006's update of Q(f_k)).
func (v *vb) latentMeans() {
	pr, n := v.md.pr, v.md.n
	for c := 0; c < v.k; c++ {
		pr.meanTo(v.m[c*n:(c+1)*n], v.w[c*pr.r:(c+1)*pr.r], v.yt[c*n:(c+1)*n])
	}
}

// updateQ is the item update, keeping counts and classCount those of q;
// it returns the largest change of a class probability. With many labels
// the items are split into two halves updated concurrently, each adding
// its count changes to its own buffer (a fixed split: the result does not
// depend on the machine).
func (v *vb) updateQ() float64 {
	md := v.md
	v.sc.qlz = 0
	if len(md.y) < parallelLabels {
		w := v.updateItemsSc(0, md.n, v.sc, v.counts, v.classCount)
		v.qlz = v.sc.qlz
		return w
	}
	h := v.half
	if h == nil {
		h = &vbHalf{sc: v.newItemScratch(), counts: make([]float64, len(v.counts)), classCount: make([]float64, v.k),
			work: make(chan struct{}), done: make(chan struct{})}
		v.half = h
		go func() {
			for range h.work {
				h.worst = v.updateItemsSc(md.n/2, md.n, h.sc, h.counts, h.classCount)
				h.done <- struct{}{}
			}
		}()
	}
	h.sc.qlz = 0
	h.work <- struct{}{}
	w0 := v.updateItemsSc(0, md.n/2, v.sc, v.counts, v.classCount)
	<-h.done
	w1 := h.worst
	v.qlz = v.sc.qlz + h.sc.qlz
	for i, d := range h.counts {
		v.counts[i] += d
	}
	clear(h.counts)
	for c, d := range h.classCount {
		v.classCount[c] += d
	}
	clear(h.classCount)
	if w1 > w0 || w1 != w1 {
		return w1
	}
	return w0
}

// parallelLabels is the number of labels from which updateQ splits the
// items between two goroutines.
const parallelLabels = 20000

// vbHalf is the second half of a split item update: its goroutine,
// started once (stopped by vb.stop), updates the second half of the items
// on each work signal into its own scratch.
type vbHalf struct {
	sc                 *itemScratch
	counts, classCount []float64
	worst              float64
	work, done         chan struct{}
}

// stop ends the goroutine of a split item update.
func (v *vb) stop() {
	if v.half != nil {
		close(v.half.work)
		v.half = nil
	}
}

// updateItems updates q(z_n) for items lo..hi-1 (identity kernel), adding
// the changes of the counts to counts and classCount; lq is scratch of
// length K.
func (v *vb) updateItems(lo, hi int, lq, counts, classCount []float64) float64 {
	if v.md.pr != nil {
		panic("confusion: internal error: updateItems with a kernel prior")
	}
	sc := itemScratch{lq: lq}
	return v.updateItemsSc(lo, hi, &sc, counts, classCount)
}

// updateItemsSc is updateItems with the scratch sc; with a kernel it also
// sets ytilde_n of every item (gold items' too) and adds q(z_n = k) ln Z_nk
// to sc.qlz.
func (v *vb) updateItemsSc(lo, hi int, sc *itemScratch, counts, classCount []float64) float64 {
	md, k := v.md, v.k
	worst := 0.0
	lq := sc.lq
	for n := lo; n < hi; n++ {
		gold := md.gold != nil && md.gold[n] >= 0
		switch {
		case md.pr != nil:
			v.probitItem(n, sc, gold)
			if gold {
				continue
			}
		case gold:
			continue
		default:
			md.classPosteriorTo(lq, n, v.elogRho, v.elogT)
		}
		qn := v.q[n*k : (n+1)*k]
		for c, x := range lq {
			d := x - qn[c]
			if a := math.Abs(d); a > worst || a != a {
				worst = a
			}
			lq[c] = d
			qn[c] = x
			classCount[c] += d
		}
		// The counts follow q: the next iteration's countsFromQ, without
		// a second pass over the labels.
		for p := md.start[n]; p < md.start[n+1]; p++ {
			if md.prob != nil && md.prob[p] > 0 {
				v.softCounts(counts, qn, p, true)
				continue
			}
			base := int(md.rater[p])*k*k + int(md.y[p])
			for c, d := range lq {
				counts[base+c*k] += d
			}
		}
	}
	return worst
}

// probitItem is the item update with a kernel: sc.lq = q(z_n) ∝ Z_nk
// exp(label terms) (q fixed for a gold item), ytilde_n = sum_k q(z_n = k)
// E[y_n | z_n = k] at the current M (Girolami & Rogers 2006's update of Q(y_n)).
func (v *vb) probitItem(n int, sc *itemScratch, gold bool) {
	md, k, nn := v.md, v.k, v.md.n
	for c := range sc.mrow {
		sc.mrow[c] = v.m[c*nn+n]
	}
	sc.pi.eval(sc.mrow, true)
	lq := sc.lq
	if gold {
		clear(lq)
		lq[md.gold[n]] = 1
	} else {
		md.classPosteriorTo(lq, n, sc.pi.lz, v.elogT)
	}
	for j, mj := range sc.mrow {
		y := mj
		for c, qc := range lq {
			y += qc * sc.pi.dy[c*k+j]
		}
		v.yt[j*nn+n] = y
	}
	for c, qc := range lq {
		if qc > 0 {
			sc.qlz += qc * sc.pi.lz[c]
		}
	}
}

// communities updates q(m_l) and the community weights h (their MAP
// under a Dirichlet(2, ..., 2) prior, which keeps every weight positive)
// at the current q(pi) (Venanzi et al. 2014 sec. 3.2).
func (v *vb) communities() {
	k, nc := v.k, v.nc
	if nc == 1 {
		return
	}
	for l := 0; l < v.md.l; l++ {
		lr := v.lr
		mx := math.Inf(-1)
		for c := 0; c < nc; c++ {
			x := math.Log(v.h[c])
			for r := 0; r < k; r++ {
				x -= v.lnB0[c*k+r]
				for j := 0; j < k; j++ {
					x += (v.alpha0[(c*k+r)*k+j] - 1) * v.elogT[(l*k+j)*k+r]
				}
			}
			lr[c] = x
			mx = math.Max(mx, x)
		}
		sum := 0.0
		for c := range lr {
			lr[c] = math.Exp(lr[c] - mx)
			sum += lr[c]
		}
		for c := range lr {
			v.resp[l*nc+c] = lr[c] / sum
		}
	}
	for c := 0; c < nc; c++ {
		w := 1.0
		for l := 0; l < v.md.l; l++ {
			w += v.resp[l*nc+c]
		}
		v.h[c] = w / float64(v.md.l+nc)
	}
}

// empiricalBayes sets each community's row prior s_ck mu_c[k, :] to the
// maximum of sum_l q(m_l = c) E_q[ln Dirichlet(pi_l[k, :]; s_ck mu_c[k, :])]
// (Minka 2000: the Dirichlet fit to the sufficient statistics t_j, the
// q(m)-weighted mean over raters of E[ln pi_l[k, j]]), the concentration
// included with Options.LearnConcentration.
func (v *vb) empiricalBayes() {
	k, nl, nc := v.k, v.md.l, v.nc
	for c := 0; c < nc; c++ {
		wsum := 0.0
		for l := 0; l < nl; l++ {
			wsum += v.resp[l*nc+c]
		}
		if wsum < 1e-9 {
			continue // an empty community keeps its prior
		}
		for r := 0; r < k; r++ {
			t := v.t
			clear(t)
			for l := 0; l < nl; l++ {
				w := v.resp[l*nc+c]
				for j := 0; j < k; j++ {
					t[j] += w * v.elogT[(l*k+j)*k+r]
				}
			}
			for j := range t {
				t[j] /= wsum
			}
			a := v.alpha0[(c*k+r)*k : (c*k+r+1)*k]
			if v.opts.LearnConcentration {
				fitDirichlet(a, t, v.a2)
			} else {
				v.nu[c*k+r] = fitMeanFrom(a, t, v.opts.concentration(), v.nu[c*k+r])
			}
			sum := 0.0
			for _, x := range a {
				sum += x
			}
			v.s[c*k+r] = sum
			for j, x := range a {
				v.mu[(c*k+r)*k+j] = x / sum
			}
		}
	}
	v.priorNorms()
}

// fitDirichlet moves a to the maximum-likelihood Dirichlet parameters of
// the mean log-probabilities t (Minka 2000 eq. 9, the fixed point
// psi(a_j) = psi(sum a) + t_j), keeping the total within
// [minConcentration, maxConcentration]. old is scratch of len(a).
func fitDirichlet(a, t, old []float64) {
	for it := 0; it < 200; it++ {
		copy(old, a)
		sum := 0.0
		for _, x := range a {
			sum += x
		}
		ps := mathext.Digamma(sum)
		tot := 0.0
		for j := range a {
			a[j] = invDigamma(ps + t[j])
			tot += a[j]
		}
		if tot > maxConcentration || tot < minConcentration {
			f := math.Min(math.Max(tot, minConcentration), maxConcentration) / tot
			for j := range a {
				a[j] *= f
			}
		}
		for j := range a {
			a[j] = math.Max(a[j], minPseudoCount)
		}
		if maxRelChange(a, old) < 1e-9 {
			return
		}
	}
}

// fitMean moves a = s m to the maximum-likelihood Dirichlet with fixed
// total s of the mean log-probabilities t (Minka 2000 sec. 3.3), with
// every a_j at least minPseudoCount. With s fixed the log-likelihood
// s sum_j m_j t_j - sum_j ln Gamma(s m_j) is separable and concave in m,
// so the maximum on the floored simplex is a_j = max(minPseudoCount,
// psiInv(t_j - nu)) with the one nu that makes the a_j sum to s (the
// Lagrange condition of Minka's fixed point, solved exactly by a
// safeguarded Newton iteration on nu rather than by the fixed point, whose
// steps crawl when a mean approaches the floor). old is unused scratch.
func fitMean(a, t []float64, s float64, old []float64) {
	_ = old
	fitMeanFrom(a, t, s, math.NaN())
}

// fitMeanFrom is fitMean started from the Lagrange multiplier nu0 (NaN:
// none), typically the previous iteration's; it returns the multiplier
// found. g(nu) = sum_j a_j(nu) - s is decreasing and convex in nu (each
// a_j = max(floor, psiInv(t_j - nu)) is: the second derivative of
// psiInv(t - nu) in nu is -psi2(a)/psi1(a)^3 > 0, psi1 and psi2 the
// trigamma and tetragamma functions), so Newton's method from any nu where g has a
// negative slope converges monotonically after its first step, and a
// warm start needs two or three evaluations of g instead of the bracket's
// ten or more; where the slope vanishes (every a_j at its floor) the
// bracketed search takes over.
func fitMeanFrom(a, t []float64, s, nu0 float64) float64 {
	if float64(len(a))*minPseudoCount >= s {
		for j := range a {
			a[j] = s / float64(len(a))
		}
		return math.NaN()
	}
	// g(nu) = sum_j a_j(nu) - s is decreasing in nu.
	g := func(nu float64) (float64, float64) {
		sum, d := 0.0, 0.0
		for j := range a {
			x := invDigamma(t[j] - nu)
			if x <= minPseudoCount {
				x = minPseudoCount
			} else {
				d -= 1 / trigamma(x)
			}
			a[j] = x
			sum += x
		}
		return sum - s, d
	}
	if nu := nu0; !math.IsNaN(nu) {
		for it := 0; it < 50; it++ {
			f, d := g(nu)
			next := nu - f/d
			if math.Abs(f) <= 1e-12*s || next == nu {
				scaleTo(a, s)
				return nu
			}
			if !(d < 0) || math.IsNaN(next) || math.IsInf(next, 0) {
				break
			}
			nu = next
		}
	}
	// Bracket: nu from the largest t_j, where one a_j alone is about s.
	mx := t[0]
	for _, x := range t[1:] {
		mx = math.Max(mx, x)
	}
	lo, hi := mx-mathext.Digamma(s)-1, mx-mathext.Digamma(s/float64(len(a)))+1
	for f, _ := g(lo); f < 0; f, _ = g(lo) {
		lo -= 2 * (hi - lo)
	}
	for f, _ := g(hi); f > 0; f, _ = g(hi) {
		hi += 2 * (hi - lo)
	}
	nu := 0.5 * (lo + hi)
	for it := 0; it < 100; it++ {
		f, d := g(nu)
		if math.Abs(f) <= 1e-12*s {
			break
		}
		if f > 0 {
			lo = nu
		} else {
			hi = nu
		}
		next := nu - f/d
		if !(d < 0) || !(next > lo && next < hi) {
			next = 0.5 * (lo + hi)
		}
		if next == nu {
			break
		}
		nu = next
	}
	scaleTo(a, s)
	return nu
}

// scaleTo scales a to sum to s (the last evaluation of fitMeanFrom's g set
// a; this takes away the remaining error).
func scaleTo(a []float64, s float64) {
	sum := 0.0
	for _, x := range a {
		sum += x
	}
	for j := range a {
		a[j] *= s / sum
	}
}

// minPseudoCount is the floor of every prior pseudo-count that empirical
// Bayes sets (fitMean, fitDirichlet): without it a community's row learnt
// from a few raters who never gave a class drives that class's count to
// ~1e-18 and the next update to NaN (issue 29: a 10-class crowd).
const minPseudoCount = 1e-2

func maxRelChange(a, b []float64) float64 {
	w := 0.0
	for i := range a {
		w = math.Max(w, math.Abs(a[i]-b[i])/b[i])
	}
	return w
}

// invDigamma returns x with psi(x) = y, by Newton's method from Minka's
// starting point.
func invDigamma(y float64) float64 {
	var x float64
	if y >= -2.22 {
		x = math.Exp(y) + 0.5
	} else {
		x = -1 / (y + 0.5772156649015329)
	}
	for i := 0; i < 6; i++ {
		nx := x - (mathext.Digamma(x)-y)/trigamma(x)
		if !(nx > 0) {
			nx = x / 2 // Newton overshot below 0: halve instead
		}
		if math.Abs(nx-x) <= 1e-10*x {
			return nx // converged quadratically: nx is within ~1e-20 of x*
		}
		x = nx
	}
	return x
}

// trigamma returns psi'(x) for x > 0 (recurrence to x >= 6, then the
// asymptotic series).
func trigamma(x float64) float64 {
	var r float64
	for x < 6 {
		r += 1 / (x * x)
		x++
	}
	x2 := 1 / (x * x)
	return r + 1/x + x2/2 + x2/x*(1.0/6-x2*(1.0/30-x2*(1.0/42-x2/30)))
}

// emptyCommunity reports whether some community is no rater's most
// probable one: a fit with fewer communities in effect (two alike sharing
// their raters, or one unused), which the choice of the number skips.
func (v *vb) emptyCommunity() bool {
	if v.nc == 1 {
		return false
	}
	used := make([]bool, v.nc)
	for l := 0; l < v.md.l; l++ {
		w := v.resp[l*v.nc : (l+1)*v.nc]
		b := 0
		for c, x := range w {
			if x > w[b] {
				b = c
			}
		}
		used[b] = true
	}
	for _, u := range used {
		if !u {
			return true
		}
	}
	return false
}

// candidateTol and candidateMaxIter are the tolerance and the iteration
// budget of the candidate fits when the number of communities is chosen.
const (
	candidateTol     = 1e-3
	candidateMaxIter = 50
)

// vbFit is what runVB found: the fit, its iterations and convergence,
// the community candidates (when their number was chosen) and notes on
// candidates that dropped out.
type vbFit struct {
	v     *vb
	iters int
	conv  bool
	cands []multirater.CommunityCandidate
	notes []string
}

// numericFailure reports whether err is a numerical failure of a fit (not
// a cancellation): such a fit drops out, the others go on.
func numericFailure(err error) bool {
	return err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// runVB runs the variational fit with the options' hierarchy: one
// community for Pooled and None, Options.Communities, or, when that is 0,
// 1 to DefaultMaxCommunities communities (at most one per
// MinCommunityRaters raters; one and two in parallel, then one more while
// the last count raised the bound by more than CommunityTolerance) keeping
// the fewest within
// CommunityTolerance nats of the highest evidence lower bound among those
// whose every community is some rater's most probable one. A community
// count whose fit fails numerically drops out with a note (a fixed count
// falls back to one fewer), never the whole fit.
func runVB(ctx context.Context, md *model, opts Options, start time.Time) (*vbFit, error) {
	if opts.Hierarchy != Communities || opts.Communities > 0 || opts.MAP {
		nc := 1
		if opts.Hierarchy == Communities && opts.Communities > 0 {
			nc = opts.Communities
		}
		var notes []string
		for {
			v := newVB(md, opts, nc)
			it, conv, err := v.run(ctx, start)
			if err == nil {
				return &vbFit{v: v, iters: it, conv: conv, notes: notes}, nil
			}
			if !numericFailure(err) || nc == 1 {
				return nil, err
			}
			notes = append(notes, fmt.Sprintf("the fit with %d communities failed (%v) and dropped out; %d communities were fitted instead", nc, err, nc-1))
			nc--
		}
	}
	m := max(1, min(DefaultMaxCommunities, md.l/MinCommunityRaters))
	vs := make([]*vb, m)
	its := make([]int, m)
	convs := make([]bool, m)
	errs := make([]error, m)
	fitCount := func(i int) {
		// The candidates are compared at a looser tolerance and within an
		// iteration budget (their ELBOs, each a lower bound at any
		// iteration, differ by nats), the chosen one then run to the
		// options' tolerance.
		o := opts
		o.Tol = math.Max(o.Tol, candidateTol)
		o.MaxIter = min(o.MaxIter, candidateMaxIter)
		if i > 0 {
			o.Progress = nil
		}
		vs[i] = newVB(md, o, i+1)
		its[i], convs[i], errs[i] = vs[i].run(ctx, start)
	}
	// One and two communities side by side; then one more while the last
	// count raised the bound by more than CommunityTolerance over every
	// fewer count with every community in use (a count that does not
	// leaves the raters no structure for a further community to find, and
	// the larger counts, the dearest fits, are not run).
	numeric.ParallelFor(min(m, 2), fitCount)
	fitted := min(m, 2)
	degenerate := func(i int) bool { return errs[i] != nil || vs[i].emptyCommunity() }
	for fitted < m {
		last, prev := fitted-1, math.Inf(-1)
		for i := range last {
			if !degenerate(i) {
				prev = math.Max(prev, vs[i].elbo)
			}
		}
		if degenerate(last) || vs[last].elbo <= prev+CommunityTolerance {
			break
		}
		fitCount(fitted)
		fitted++
	}
	best := -1
	cands := make([]multirater.CommunityCandidate, fitted)
	var notes []string
	for i, v := range vs[:fitted] {
		cands[i] = multirater.CommunityCandidate{Communities: i + 1}
		if errs[i] != nil {
			if !numericFailure(errs[i]) {
				return nil, errs[i]
			}
			cands[i].Failed = errs[i].Error()
			notes = append(notes, fmt.Sprintf("the fit with %d communities failed (%v) and dropped out of the choice", i+1, errs[i]))
			continue
		}
		cands[i].ELBO, cands[i].Degenerate = numeric.Round6(v.elbo), v.emptyCommunity()
		if !cands[i].Degenerate && (best < 0 || v.elbo > vs[best].elbo) {
			best = i
		}
	}
	if fitted < m {
		skipped := fmt.Sprintf("%d to %d communities were", fitted+1, m)
		if fitted+1 == m {
			skipped = fmt.Sprintf("%d communities were", m)
		}
		notes = append(notes, fmt.Sprintf("%s not fitted: %d communities did not raise the evidence lower bound by more than %g nats over fewer (or left a community without raters)", skipped, fitted, CommunityTolerance))
	}
	if best < 0 {
		return nil, fmt.Errorf("confusion: every number of communities failed: %v", errors.Join(errs[:fitted]...))
	}
	for i := range vs[:fitted] {
		if errs[i] == nil && !cands[i].Degenerate && vs[i].elbo >= vs[best].elbo-CommunityTolerance {
			best = i
			break
		}
	}
	cands[best].Chosen = true
	v := vs[best]
	if rest := opts.MaxIter - its[best]; rest > 0 {
		v.opts.Tol, v.opts.MaxIter, v.opts.Progress = opts.Tol, rest, opts.Progress
		it, conv, err := v.run(ctx, start)
		if err != nil {
			return nil, err
		}
		its[best] += it
		convs[best] = conv
	}
	v.opts = opts
	return &vbFit{v: v, iters: its[best], conv: convs[best], cands: cands, notes: notes}, nil
}

// vbFraction is the share of the variational iterations done, for
// progress reports: the larger of the iterations' share of the limit and
// the way from the first iteration's largest change down to the
// tolerance on a log scale (the changes fall about geometrically), at most
// 0.99 until the iterations end.
func vbFraction(it, maxIter int, first, change, tol float64) float64 {
	f := float64(it) / float64(maxIter)
	if first > tol && change > 0 {
		f = math.Max(f, math.Log(first/change)/math.Log(first/tol))
	}
	return math.Min(math.Max(f, 0), 0.99)
}

// elboTol is the relative change of the evidence lower bound between two
// iterations below which the variational iterations stop (identity kernel).
const elboTol = 1e-8

// run iterates until no class probability changes by more than Tol or the
// evidence lower bound changes by less than elboTol of itself, or MaxIter
// iterations; it returns the iterations and whether it converged.
func (v *vb) run(ctx context.Context, start time.Time) (int, bool, error) {
	last := time.Now()
	first := 0.0 // the largest change of the first iteration
	defer v.stop()
	v.countsFromQ()
	prevELBO := math.Inf(-1)
	for it := 1; it <= v.opts.MaxIter; it++ {
		if it%64 == 0 {
			v.countsFromQ() // no drift from the incremental updates
		}
		if v.opts.Hierarchy != None && it > 1 {
			// Communities and empirical Bayes at the current q(pi) (the
			// expected logs of the previous iteration), then q(pi) at the
			// new prior.
			v.communities()
			v.empiricalBayes()
		}
		v.dirichlets()
		if v.md.pr != nil {
			v.latentMeans()
		}
		stall := false
		if v.md.pr == nil && !v.opts.MAP {
			// The bound at (q(z), q(pi)) of this iteration: its relative
			// change ends the iterations too (a slow, steady drift of a
			// few items' probabilities that no longer moves the evidence).
			e := v.bound()
			stall = it > 2 && math.Abs(e-prevELBO) <= v.opts.boundTol()*math.Abs(e)
			prevELBO = e
		}
		change := v.updateQ()
		if math.IsNaN(change) {
			return it, false, fmt.Errorf("confusion: variational update failed (NaN) at iteration %d", it)
		}
		if change < v.opts.Tol || stall {
			v.countsFromQ()
			v.dirichlets()
			if !v.opts.MAP {
				v.elbo = v.bound()
			}
			return it, true, nil
		}
		if it == 1 {
			first = change
		}
		if it%16 == 0 {
			if err := ctx.Err(); err != nil {
				return it, false, err
			}
		}
		// Every iteration may report (at most twice a second): on a
		// million labels one takes a second or more, and a fit converges
		// in tens of them.
		if v.opts.Progress != nil && time.Since(last) > 500*time.Millisecond {
			last = time.Now()
			v.opts.Progress(multirater.Progress{Fraction: vbFraction(it, v.opts.MaxIter, first, change, v.opts.Tol), Elapsed: time.Since(start),
				Phase: fmt.Sprintf("variational iteration %d, largest change %.1e (stops below %.0e)", it, change, v.opts.Tol)})
		}
	}
	v.countsFromQ()
	v.dirichlets()
	if !v.opts.MAP {
		v.elbo = v.bound()
	}
	return v.opts.MaxIter, false, nil
}
