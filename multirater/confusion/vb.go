package confusion

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mathext"

	"concord/multirater"
)

// vb is the variational Bayes engine (Simpson et al. 2013 sec. 3; Kim &
// Ghahramani 2012): q(z, pi, rho) = prod_n q(z_n) prod_{l,k} q(pi_l[k, :])
// q(rho), updated in turn,
//
//	alpha_l[k, j] = s_k mu[k, j] + sum over rater l's labels j of q(z_n = k)
//	beta_k        = c_0 + sum_n q(z_n = k)
//	q(z_n = k)    ∝ exp(E[log rho_k] + sum over item n's labels (l, j) of E[log pi_l[k, j]])
//
// with E[log pi_l[k, j]] = psi(alpha_l[k, j]) - psi(sum_j alpha_l[k, j]),
// and (Pooled) the empirical-Bayes update of s_k mu[k, :] between them.
// The evidence lower bound, right after the Dirichlet updates, is
//
//	ELBO = H[q(z)] + sum_{l,k} (ln B(alpha_l[k, :]) - ln B(s_k mu[k, :])) + ln B(beta) - ln B(c_0)
//
// (B the multivariate Beta function). Every array is allocated once: an
// iteration allocates nothing.
type vb struct {
	md   *model
	opts Options
	k    int
	// q[n*K+k] = q(z_n = k).
	q []float64
	// alpha0[k*K+j] = s_k mu[k, j]; s[k], mu[k*K+j].
	alpha0, s, mu []float64
	// counts[(l*K+k)*K+j], alpha likewise; elogT[(l*K+j)*K+k] =
	// E[log pi_l[k, j]] (transposed for the item update).
	counts, alpha, elogT      []float64
	beta, elogRho, classCount []float64
	// scratch of length K.
	lq, t, a2 []float64
	elbo      float64
}

func newVB(md *model, opts Options) *vb {
	k := md.k
	v := &vb{md: md, opts: opts, k: k,
		q:      make([]float64, md.n*k),
		alpha0: make([]float64, k*k), s: make([]float64, k), mu: make([]float64, k*k),
		counts: make([]float64, md.l*k*k), alpha: make([]float64, md.l*k*k), elogT: make([]float64, md.l*k*k),
		beta: make([]float64, k), elogRho: make([]float64, k), classCount: make([]float64, k),
		lq: make([]float64, k), t: make([]float64, k), a2: make([]float64, k)}
	off := (1 - opts.Diagonal) / float64(k-1)
	for r := 0; r < k; r++ {
		v.s[r] = opts.concentration()
		for j := 0; j < k; j++ {
			v.mu[r*k+j] = off
			if j == r {
				v.mu[r*k+j] = opts.Diagonal
			}
			v.alpha0[r*k+j] = v.s[r] * v.mu[r*k+j]
		}
	}
	v.initQ()
	return v
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
			base := int(md.rater[p])*k*k + int(md.y[p])
			for c, x := range qn {
				v.counts[base+c*k] += x
			}
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
				row[j] = v.alpha0[r*k+j] + cnt[j]
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
	var prior float64
	for r := 0; r < k; r++ {
		prior += lnB(v.alpha0[r*k : (r+1)*k])
	}
	e := h - float64(v.md.l)*prior
	for i := 0; i < v.md.l*k; i++ {
		e += lnB(v.alpha[i*k : (i+1)*k])
	}
	for c := range v.a2 {
		v.a2[c] = v.opts.ClassPrior
	}
	return e + lnB(v.beta) - lnB(v.a2)
}

// updateQ is the item update; it returns the largest change of a class
// probability.
func (v *vb) updateQ() float64 {
	md, k := v.md, v.k
	worst := 0.0
	for n := 0; n < md.n; n++ {
		if md.gold != nil && md.gold[n] >= 0 {
			continue
		}
		lq := v.lq
		md.classPosteriorTo(lq, n, v.elogRho, v.elogT)
		qn := v.q[n*k : (n+1)*k]
		for c, x := range lq {
			worst = math.Max(worst, math.Abs(x-qn[c]))
			qn[c] = x
		}
	}
	return worst
}

// empiricalBayes sets each row's prior s_k mu[k, :] to the maximum of
// sum_l E_q[ln Dirichlet(pi_l[k, :]; s_k mu[k, :])] (Minka 2000: the
// Dirichlet fit to the sufficient statistics t_j = mean_l E[ln pi_l[k, j]]),
// the concentration s_k included with Options.LearnConcentration.
func (v *vb) empiricalBayes() {
	k, nl := v.k, v.md.l
	for r := 0; r < k; r++ {
		t := v.t
		clear(t)
		for l := 0; l < nl; l++ {
			for j := 0; j < k; j++ {
				t[j] += v.elogT[(l*k+j)*k+r]
			}
		}
		for j := range t {
			t[j] /= float64(nl)
		}
		a := v.alpha0[r*k : (r+1)*k]
		if v.opts.LearnConcentration {
			fitDirichlet(a, t, v.a2)
		} else {
			fitMean(a, t, v.opts.concentration(), v.a2)
		}
		sum := 0.0
		for _, x := range a {
			sum += x
		}
		v.s[r] = sum
		for j, x := range a {
			v.mu[r*k+j] = x / sum
		}
	}
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
		if maxRelChange(a, old) < 1e-9 {
			return
		}
	}
}

// fitMean moves a = s m to the maximum-likelihood Dirichlet with fixed
// total s of the mean log-probabilities t (Minka 2000 sec. 3.3: m_j ∝
// psiInv(t_j - sum_i m_i (t_i - psi(s m_i)))). old is scratch.
func fitMean(a, t []float64, s float64, old []float64) {
	for it := 0; it < 200; it++ {
		copy(old, a)
		var c float64
		for i, x := range a {
			c += x / s * (t[i] - mathext.Digamma(x))
		}
		tot := 0.0
		for j := range a {
			a[j] = invDigamma(t[j] - c)
			tot += a[j]
		}
		for j := range a {
			a[j] *= s / tot
		}
		if maxRelChange(a, old) < 1e-9 {
			return
		}
	}
}

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
		x -= (mathext.Digamma(x) - y) / trigamma(x)
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

// run iterates until no class probability changes by more than Tol, or
// MaxIter iterations; it returns the iterations and whether it converged.
func (v *vb) run(ctx context.Context, start time.Time) (int, bool, error) {
	last := time.Now()
	for it := 1; it <= v.opts.MaxIter; it++ {
		v.countsFromQ()
		if v.opts.Hierarchy == Pooled && it > 1 {
			// Empirical Bayes at the current q(pi) (the expected logs of
			// the previous iteration), then q(pi) at the new prior.
			v.empiricalBayes()
		}
		v.dirichlets()
		change := v.updateQ()
		if math.IsNaN(change) {
			return it, false, fmt.Errorf("confusion: variational update failed (NaN) at iteration %d", it)
		}
		if change < v.opts.Tol {
			v.countsFromQ()
			v.dirichlets()
			if !v.opts.MAP {
				v.elbo = v.bound()
			}
			return it, true, nil
		}
		if it%16 == 0 {
			if err := ctx.Err(); err != nil {
				return it, false, err
			}
			if v.opts.Progress != nil && time.Since(last) > 500*time.Millisecond {
				last = time.Now()
				v.opts.Progress(multirater.Progress{Fraction: float64(it) / float64(v.opts.MaxIter), Elapsed: time.Since(start), Phase: "iterating"})
			}
		}
	}
	v.countsFromQ()
	v.dirichlets()
	if !v.opts.MAP {
		v.elbo = v.bound()
	}
	return v.opts.MaxIter, false, nil
}
