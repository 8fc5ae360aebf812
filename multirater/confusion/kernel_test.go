package confusion

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/numeric"
)

// covData simulates items whose class is set by a covariate x (K classes
// by equal-width bins of x in [-2, 2]; with informative false, the class
// is drawn independently of x) and labels from L raters who are right with
// probability acc (else a uniformly drawn wrong class), each item getting
// 1 to maxl labels (1 or 2: sparse and noisy). It returns the data (no
// kernel), the covariate and the true classes.
func covData(n, l, k int, acc float64, informative bool, maxl int, seed uint64) (*Data, []float64, []int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	d := &Data{ItemIDs: ids("i", n), RaterIDs: ids("r", l), Classes: ids("c", k)}
	x := make([]float64, n)
	truth := make([]int, n)
	for i := range x {
		x[i] = -2 + 4*rng.Float64()
		truth[i] = min(k-1, int((x[i]+2)/4*float64(k)))
		if !informative {
			truth[i] = rng.IntN(k)
		}
		nl := 1 + rng.IntN(maxl)
		first := rng.IntN(l)
		for j := 0; j < nl; j++ {
			y := truth[i]
			if rng.Float64() > acc {
				y = (y + 1 + rng.IntN(k-1)) % k
			}
			d.Labels = append(d.Labels, multirater.Rating{Item: i, Rater: (first + j) % l, Level: y})
		}
	}
	return d, x, truth
}

// rbfCov is the RBF kernel matrix exp(-gamma (x_i - x_j)^2).
func rbfCov(x []float64, gamma float64) *mat.SymDense {
	c := mat.NewSymDense(len(x), nil)
	for i := range x {
		for j := i; j < len(x); j++ {
			c.SetSym(i, j, math.Exp(-gamma*(x[i]-x[j])*(x[i]-x[j])))
		}
	}
	return c
}

// linearCov is the linear kernel matrix x_i x_j.
func linearCov(x []float64) *mat.SymDense {
	c := mat.NewSymDense(len(x), nil)
	for i := range x {
		for j := i; j < len(x); j++ {
			c.SetSym(i, j, x[i]*x[j])
		}
	}
	return c
}

func accuracy(res *multirater.FitResult, classes []string, truth []int) float64 {
	hits := 0
	for i, it := range res.Items {
		if it.Class == classes[truth[i]] {
			hits++
		}
	}
	return float64(hits) / float64(len(truth))
}

// crossRBF is the RBF covariance between new items xn and fitted items x.
func crossRBF(xn, x []float64, gamma float64) *mat.Dense {
	c := mat.NewDense(len(xn), len(x), nil)
	for i, a := range xn {
		for j, b := range x {
			c.Set(i, j, math.Exp(-gamma*(a-b)*(a-b)))
		}
	}
	return c
}

// TestKernelConsensus: items whose class is set by a covariate, labelled
// by noisy raters (right 65% of the time) with one or two labels each. The
// identity kernel can do little better than the labels; a kernel on the
// covariate lets alike items share their labels, and the consensus is
// clearly more accurate (seed 1, N = 300, L = 40: K = 2 identity 0.547,
// rbf 0.887, linear 0.940; K = 3 identity 0.493, rbf 0.953, linear 0.880).
func TestKernelConsensus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		k      int
		linear bool
		min    float64
	}{
		{"K2 rbf", 2, false, 0.85},
		{"K2 linear", 2, true, 0.9},
		{"K3 rbf", 3, false, 0.9},
		{"K3 linear", 3, true, 0.85},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, x, truth := covData(300, 40, tc.k, 0.65, true, 2, 1)
			a0 := accuracy(fit(t, d, Options{}), d.Classes, truth)
			dk := *d
			dk.Cov, dk.Kernel = rbfCov(x, 2), "rbf:gamma=2"
			if tc.linear {
				dk.Cov, dk.Kernel = linearCov(x), "linear"
			}
			res := fit(t, &dk, Options{MaxIter: 3000})
			a1 := accuracy(res, d.Classes, truth)
			t.Logf("accuracy: identity %.3f, %s %.3f (%s)", a0, dk.Kernel, a1, res.Diagnostics.Verdict)
			if a1 < tc.min || a1 < a0+0.2 {
				t.Errorf("accuracy with %s %.3f, identity %.3f: want at least %.2f and 0.2 above identity", dk.Kernel, a1, a0, tc.min)
			}
			if !res.Diagnostics.Converged || res.Diagnostics.LogEvidence == nil || res.Model.Kernel != dk.Kernel || res.Model.Confusion.Probit == nil {
				t.Errorf("fit: %s, kernel %q, probit %v", res.Diagnostics.Verdict, res.Model.Kernel, res.Model.Confusion.Probit)
			}
		})
	}
}

// TestKernelVBMatchesGibbs: on a small kernel problem (N = 80, 1 to 4
// labels per item) the Gibbs sampler (converged) and the variational fit
// agree: the mean absolute difference of the item class probabilities is
// within 0.04 and no larger (by 0.01) than the two engines' difference
// with the identity kernel on the same labels (mean-field VB is an
// approximation in both: seed 11, identity 0.052 / 0.052 for K = 2 / 3,
// rbf 0.024 / 0.019); the largest difference is within 0.3 (K = 2) and 0.45
// (K = 3); and the auxiliary variables' posterior means (the GP's
// regression targets) correlate above 0.95.
func TestKernelVBMatchesGibbs(t *testing.T) {
	for _, tc := range []struct {
		k     int
		worst float64
	}{{2, 0.3}, {3, 0.45}} {
		t.Run(fmt.Sprintf("K%d", tc.k), func(t *testing.T) {
			k := tc.k
			d, x, _ := covData(80, 10, k, 0.7, true, 4, 11)
			dk := *d
			dk.Cov, dk.Kernel = rbfCov(x, 2), "rbf:gamma=2"
			gs := Options{Hierarchy: Pooled, Engine: multirater.EngineGibbs, Settings: mcmcSettings(4, 2000, 1000, 5)}
			diff := func(d *Data) (worst, mean float64, vbr, gr *multirater.FitResult) {
				vbr = fit(t, d, Options{Hierarchy: Pooled})
				gr = fit(t, d, gs)
				if !gr.Diagnostics.Converged {
					t.Fatalf("Gibbs (kernel %q) not converged: %s", d.Kernel, gr.Diagnostics.Verdict)
				}
				for i := range vbr.Items {
					for _, c := range d.Classes {
						x := math.Abs(vbr.Items[i].ClassProbs[c] - gr.Items[i].ClassProbs[c])
						worst = math.Max(worst, x)
						mean += x / float64(len(vbr.Items)*k)
					}
				}
				return worst, mean, vbr, gr
			}
			_, m0, _, _ := diff(d)
			w1, m1, vbr, gr := diff(&dk)
			tv, tg := vbr.Model.Confusion.Probit.Targets, gr.Model.Confusion.Probit.Targets
			var a, b []float64
			for i := range tv {
				for c := 1; c < k; c++ {
					a = append(a, tv[i][c]-tv[i][0])
					b = append(b, tg[i][c]-tg[i][0])
				}
			}
			r := corr(a, b)
			t.Logf("VB vs Gibbs class probabilities: identity mean difference %.4f; rbf mean %.4f, largest %.3f; targets' correlation %.3f", m0, m1, w1, r)
			if m1 > 0.04 || m1 > m0+0.01 || w1 > tc.worst || r < 0.95 {
				t.Errorf("VB and Gibbs disagree: mean difference %.4f (identity %.4f), largest %.3f, targets' correlation %.3f", m1, m0, w1, r)
			}
		})
	}
}

// corr is the Pearson correlation of a and b.
func corr(a, b []float64) float64 {
	var ma, mb float64
	for i := range a {
		ma += a[i] / float64(len(a))
		mb += b[i] / float64(len(b))
	}
	var sab, saa, sbb float64
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	}
	return sab / math.Sqrt(saa*sbb)
}

// TestKernelPredict: held-out items predicted from their covariate by a
// kernel fit are classified far better than by the class proportions (the
// identity kernel's prediction), and their log loss is lower.
func TestKernelPredict(t *testing.T) {
	for _, k := range []int{2, 3} {
		t.Run(fmt.Sprintf("K%d", k), func(t *testing.T) {
			const n, held = 300, 200
			d, x, truth := covData(n+held, 40, k, 0.65, true, 2, 21)
			// Fit the first n items; the rest are new.
			train := &Data{ItemIDs: d.ItemIDs[:n], RaterIDs: d.RaterIDs, Classes: d.Classes}
			for _, r := range d.Labels {
				if r.Item < n {
					train.Labels = append(train.Labels, r)
				}
			}
			xn := x[n:]
			ones := make([]float64, held)
			for i := range ones {
				ones[i] = 1
			}
			cross := crossRBF(xn, x[:n], 2)
			score := func(res *multirater.FitResult, cov mat.Symmetric) (acc, loss float64) {
				p, err := NewPredictor(res, cov)
				if err != nil {
					t.Fatal(err)
				}
				out := p.Predict(d.ItemIDs[n:], cross, ones)
				for i, it := range out {
					if it.Class == d.Classes[truth[n+i]] {
						acc++
					}
					loss -= math.Log(math.Max(it.ClassProbs[d.Classes[truth[n+i]]], 1e-12))
				}
				return acc / held, loss / held
			}
			ident := identity(n)
			a0, l0 := score(fit(t, train, Options{}), ident)
			tk := *train
			tk.Cov, tk.Kernel = rbfCov(x[:n], 2), "rbf:gamma=2"
			a1, l1 := score(fit(t, &tk, Options{}), tk.Cov)
			a2, l2 := score(fit(t, &tk, Options{Engine: multirater.EngineGibbs, Settings: mcmcSettings(2, 300, 200, 3)}), tk.Cov)
			t.Logf("held-out accuracy (log loss): class proportions %.3f (%.3f), kernel VB %.3f (%.3f), kernel Gibbs %.3f (%.3f)", a0, l0, a1, l1, a2, l2)
			for _, r := range []struct {
				name      string
				acc, loss float64
			}{{"vb", a1, l1}, {"gibbs", a2, l2}} {
				if r.acc < 0.8 || r.acc < a0+0.25 || r.loss > l0-0.2 {
					t.Errorf("%s: held-out accuracy %.3f (log loss %.3f) against the class proportions' %.3f (%.3f)", r.name, r.acc, r.loss, a0, l0)
				}
			}
		})
	}
}

// identity is the n×n identity matrix.
func identity(n int) mat.Symmetric {
	d := make([]float64, n)
	for i := range d {
		d[i] = 1
	}
	return mat.NewDiagDense(n, d)
}

// TestKernelUninformative: when the covariate says nothing of the class
// (classes drawn independently of it; 1 to 5 labels per item, raters right
// 70% of the time), the kernel fit stays close to the identity fit. With
// the linear kernel, whose latent functions are a slope and a constant, the
// slopes come out near 0 and the fit is close to the identity's (seed 31:
// mean absolute difference of the class probabilities 0.0010 for K = 2,
// 0.018 for K = 3; accuracy 0.737 both, 0.753 against 0.763). The RBF
// kernel follows the
// local fluctuations of the classes' shares that a finite sample has (0.086
// and 0.030; accuracy 0.760 against 0.737, 0.760 against 0.763).
func TestKernelUninformative(t *testing.T) {
	for _, tc := range []struct {
		name         string
		k            int
		linear       bool
		accTol, mean float64
	}{
		{"K2 linear", 2, true, 0.01, 0.01},
		{"K3 linear", 3, true, 0.02, 0.03},
		{"K2 rbf", 2, false, 0.03, 0.1},
		{"K3 rbf", 3, false, 0.03, 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, x, truth := covData(300, 40, tc.k, 0.7, false, 5, 31)
			// The identity fit with the kernel fit's rater model (the
			// default's choice among rater models is the identity
			// kernel's only).
			r0 := fit(t, d, Options{RaterModel: RaterCommunities})
			dk := *d
			dk.Cov, dk.Kernel = rbfCov(x, 2), "rbf:gamma=2"
			if tc.linear {
				dk.Cov, dk.Kernel = linearCov(x), "linear"
			}
			r1 := fit(t, &dk, Options{})
			a0, a1 := accuracy(r0, d.Classes, truth), accuracy(r1, d.Classes, truth)
			mean := 0.0
			for i := range r0.Items {
				for _, c := range d.Classes {
					mean += math.Abs(r0.Items[i].ClassProbs[c]-r1.Items[i].ClassProbs[c]) / float64(len(r0.Items)*tc.k)
				}
			}
			t.Logf("accuracy identity %.3f, %s %.3f; mean class probability difference %.4f", a0, dk.Kernel, a1, mean)
			if math.Abs(a0-a1) > tc.accTol || mean > tc.mean {
				t.Errorf("uninformative kernel: accuracy %.3f against identity's %.3f (tolerance %.2f), mean difference %.4f (tolerance %.2f)", a1, a0, tc.accTol, mean, tc.mean)
			}
		})
	}
}

// probitModel is the model of d with the kernel prior's probit made with
// the options o (with defaults): a failure fails the test.
func probitModel(tb testing.TB, d *Data, o Options) *model {
	tb.Helper()
	md, err := newModel(d)
	if err != nil {
		tb.Fatal(err)
	}
	if md.pr, err = newProbit(d.Cov, o.BiasVariance, DefaultFactorTol, o.Rank, o.Quadrature); err != nil {
		tb.Fatal(err)
	}
	return md
}

// TestKernelNoAlloc: a kernel VB iteration and a kernel Gibbs sweep
// allocate nothing.
func TestKernelNoAlloc(t *testing.T) {
	for _, k := range []int{2, 3} {
		d, x, _ := covData(80, 10, k, 0.7, true, 2, 41)
		d.Cov = rbfCov(x, 2)
		o := Options{}.WithDefaults()
		md := probitModel(t, d, o)
		v := newVB(md, o, 2)
		v.countsFromQ()
		if a := testing.AllocsPerRun(20, func() {
			v.communities()
			v.empiricalBayes()
			v.dirichlets()
			v.latentMeans()
			v.updateQ()
		}); a != 0 {
			t.Errorf("K=%d: a VB iteration allocates %v times", k, a)
		}
		ch := newChain(md, newGibbsPrior(v), 1, 1, 1, 0)
		if a := testing.AllocsPerRun(20, func() {
			_ = ch.Sweep(false)
			ch.Record(0)
		}); a != 0 {
			t.Errorf("K=%d: a Gibbs sweep allocates %v times", k, a)
		}
	}
}

// TestKernelELBOMonotone: each round of coordinate ascent (q(f), then
// q(z, y), then q(pi), hierarchy none) never lowers the kernel ELBO (to
// 1e-8), for K = 2 and 3.
func TestKernelELBOMonotone(t *testing.T) {
	for _, k := range []int{2, 3} {
		d, x, _ := covData(120, 20, k, 0.7, true, 2, 3)
		d.Cov, d.Kernel = rbfCov(x, 2), "rbf:gamma=2"
		o := Options{Hierarchy: None}.WithDefaults()
		md := probitModel(t, d, o)
		v := newVB(md, o, 1)
		v.countsFromQ()
		prev := math.Inf(-1)
		for it := 0; it < 60; it++ {
			v.dirichlets()
			v.latentMeans()
			v.updateQ()
			v.countsFromQ()
			v.dirichlets()
			e := v.bound()
			if e < prev-1e-8 {
				t.Errorf("K=%d iteration %d: ELBO %v fell from %v", k, it, e, prev)
			}
			prev = e
		}
		t.Logf("K=%d final %v", k, prev)
	}
}

// TestProbitIntegrals: Z_k and the truncated means E[y | argmax = k] of
// probitItem.eval agree with Monte Carlo estimates (10^6 draws of N(m, I),
// tolerance 5 standard errors), for K = 2 (closed form) and K = 3, 4
// (quadrature); and drawAux's draws have those means.
func TestProbitIntegrals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range [][]float64{{0.3, -0.5}, {1.2, 0, -0.7}, {-1, 0.5, 0.2, 2}} {
		k := len(m)
		pq := newProbitItem(numeric.NewGHRule(DefaultQuadrature), k)
		pq.eval(m, true)
		const draws = 1000000
		cnt := make([]float64, k)
		sum := make([]float64, k*k)
		y := make([]float64, k)
		for s := 0; s < draws; s++ {
			best := 0
			for j := range y {
				y[j] = m[j] + rng.NormFloat64()
				if y[j] > y[best] {
					best = j
				}
			}
			cnt[best]++
			for j := range y {
				sum[best*k+j] += y[j]
			}
		}
		aux := make([]float64, k*k)
		for c := 0; c < k; c++ {
			for s := 0; s < 200000; s++ {
				drawAux(rng, y, m, c)
				for j := range y {
					aux[c*k+j] += y[j] / 200000
				}
			}
		}
		for c := 0; c < k; c++ {
			z := cnt[c] / draws
			if se := math.Sqrt(z * (1 - z) / draws); math.Abs(math.Exp(pq.lz[c])-z) > 5*se+1e-4 {
				t.Errorf("m %v: Z_%d = %v, Monte Carlo %v (se %.2g)", m, c, math.Exp(pq.lz[c]), z, se)
			}
			for j := range m {
				mc := sum[c*k+j] / cnt[c]
				got := m[j] + pq.dy[c*k+j]
				if se := 1 / math.Sqrt(cnt[c]); math.Abs(got-mc) > 5*se+1e-3 {
					t.Errorf("m %v: E[y_%d | z = %d] = %v, Monte Carlo %v", m, j, c, got, mc)
				}
				if math.Abs(aux[c*k+j]-got) > 0.01 {
					t.Errorf("m %v: drawAux mean of y_%d given z = %d is %v, want %v", m, j, c, aux[c*k+j], got)
				}
			}
		}
	}
}

// TestKernelELBOMonteCarlo checks the closed form of the kernel ELBO (vb's
// doc comment) against a Monte Carlo estimate of E_q[ln p(labels, z, y, w,
// pi) - ln q(z, y, w, pi)] from draws of the variational posterior itself
// (z ~ q(z), y ~ q(y | z) by drawAux at the means M, w_k ~ N(mu_k, A^-1),
// pi ~ q(pi)), on a small problem with the prior fixed (hierarchy none):
// they agree within 4 Monte Carlo standard errors.
func TestKernelELBOMonteCarlo(t *testing.T) {
	for _, k := range []int{2, 3} {
		t.Run(fmt.Sprintf("K%d", k), func(t *testing.T) {
			d, x, _ := covData(8, 3, k, 0.7, true, 3, 51)
			d.Cov = rbfCov(x, 1)
			o := Options{Hierarchy: None}.WithDefaults()
			md := probitModel(t, d, o)
			pr := md.pr
			v := newVB(md, o, 1)
			v.countsFromQ()
			for it := 0; it < 30; it++ {
				v.dirichlets()
				v.latentMeans()
				v.updateQ()
			}
			v.countsFromQ()
			v.dirichlets()
			elbo := v.bound()

			rng := rand.New(rand.NewPCG(9, 9))
			ch := &chain{rng: rng, lg: make([]float64, k)}
			n, r, nl := md.n, pr.r, md.l
			z := make([]int, n)
			y := make([]float64, n*k)
			w := make([]float64, k*r)
			f := make([]float64, k*n)
			pi := make([]float64, nl*k*k)
			lpi := make([]float64, k)
			e := make([]float64, r)
			mrow, yrow := make([]float64, k), make([]float64, k)
			pq := newProbitItem(pr.rule, k)
			lnDir := func(p, a []float64) float64 {
				s, sa := 0.0, 0.0
				for j, aj := range a {
					lg, _ := math.Lgamma(aj)
					s += (aj-1)*math.Log(p[j]) - lg
					sa += aj
				}
				lg, _ := math.Lgamma(sa)
				return s + lg
			}
			lz := make([]float64, n*k)
			for i := 0; i < n; i++ {
				for c := range mrow {
					mrow[c] = v.m[c*n+i]
				}
				pq.eval(mrow, false)
				copy(lz[i*k:(i+1)*k], pq.lz)
			}
			const draws = 100000
			var sum, sum2 float64
			for s := 0; s < draws; s++ {
				lp, lq := 0.0, 0.0
				// pi ~ q(pi), prior Dirichlet(alpha0).
				for l := 0; l < nl; l++ {
					for c := 0; c < k; c++ {
						a := v.alpha[(l*k+c)*k : (l*k+c+1)*k]
						row := pi[(l*k+c)*k : (l*k+c+1)*k]
						ch.dirichletTo(row, lpi, a)
						lq += lnDir(row, a)
						lp += lnDir(row, v.alpha0[c*k:(c+1)*k])
					}
				}
				// w_k ~ N(mu_k, A^-1): mu_k + L^-T e.
				for c := 0; c < k; c++ {
					wc := w[c*r : (c+1)*r]
					for i := range e {
						e[i] = rng.NormFloat64()
						lq += -0.5*e[i]*e[i] - 0.5*math.Log(2*math.Pi)
					}
					lq += 0.5 * pr.logDetA
					copy(wc, e)
					blas64.Trsv(blas.Trans, pr.tri(), blas64.Vector{N: r, Inc: 1, Data: wc})
					for i := range wc {
						wc[i] += v.w[c*r+i]
						lp += -0.5*wc[i]*wc[i] - 0.5*math.Log(2*math.Pi)
					}
					pr.mulG(f[c*n:(c+1)*n], wc)
				}
				for i := 0; i < n; i++ {
					qn := v.q[i*k : (i+1)*k]
					u := rng.Float64()
					z[i] = k - 1
					for c, qc := range qn {
						if u -= qc; u < 0 {
							z[i] = c
							break
						}
					}
					lq += math.Log(qn[z[i]])
					for c := range mrow {
						mrow[c] = v.m[c*n+i]
					}
					drawAux(rng, yrow, mrow, z[i])
					copy(y[i*k:(i+1)*k], yrow)
					for c := range yrow {
						dq, dp := yrow[c]-mrow[c], yrow[c]-f[c*n+i]
						lq += -0.5*dq*dq - 0.5*math.Log(2*math.Pi)
						lp += -0.5*dp*dp - 0.5*math.Log(2*math.Pi)
					}
					lq -= lz[i*k+z[i]]
					for p := md.start[i]; p < md.start[i+1]; p++ {
						lp += math.Log(pi[(int(md.rater[p])*k+z[i])*k+int(md.y[p])])
					}
				}
				x := lp - lq
				sum += x
				sum2 += x * x
			}
			mean := sum / draws
			se := math.Sqrt((sum2/draws - mean*mean) / draws)
			t.Logf("ELBO closed form %.4f, Monte Carlo %.4f ± %.4f", elbo, mean, se)
			if math.Abs(elbo-mean) > 4*se {
				t.Errorf("ELBO %.4f, Monte Carlo estimate %.4f (se %.4f)", elbo, mean, se)
			}
		})
	}
}

// TestProbitDrawTo: the draws of the latent function given auxiliary
// values y have the mean Sigma y (meanTo) and the covariance Sigma =
// C (I + C)^-1 of GP regression with unit noise, computed here directly
// from C (within 5 Monte Carlo standard errors).
func TestProbitDrawTo(t *testing.T) {
	x := []float64{-1, -0.3, 0.2, 0.9, 1.5}
	n := len(x)
	c := rbfCov(x, 1)
	pr, err := newProbit(c, 0.5, 0, 10, DefaultQuadrature)
	if err != nil {
		t.Fatal(err)
	}
	y := []float64{0.5, -1, 0.3, 2, -0.4}
	// Sigma = Cb (I + Cb)^-1, Cb = C + b 11', by a linear solve.
	cb := mat.NewDense(n, n, nil)
	ipc := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			cb.Set(i, j, c.At(i, j)+0.5)
			ipc.Set(i, j, cb.At(i, j))
		}
		ipc.Set(i, i, ipc.At(i, i)+1)
	}
	var sig mat.Dense
	if err := sig.Solve(ipc, cb); err != nil { // (I + Cb)^-1 Cb = Cb (I + Cb)^-1 (they commute)
		t.Fatal(err)
	}
	mean := mat.NewVecDense(n, nil)
	mean.MulVec(&sig, mat.NewVecDense(n, y))
	m := make([]float64, n)
	w := make([]float64, pr.r)
	pr.meanTo(m, w, y)
	for i := range m {
		if math.Abs(m[i]-mean.AtVec(i)) > 1e-10 {
			t.Errorf("meanTo[%d] = %v, Sigma y %v", i, m[i], mean.AtVec(i))
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	const draws = 200000
	f := make([]float64, n)
	s1 := make([]float64, n)
	s2 := make([]float64, n*n)
	for s := 0; s < draws; s++ {
		pr.drawTo(rng, f, w, y)
		for i, a := range f {
			s1[i] += a / draws
			for j, b := range f {
				s2[i*n+j] += a * b / draws
			}
		}
	}
	for i := 0; i < n; i++ {
		sd := math.Sqrt(sig.At(i, i))
		if math.Abs(s1[i]-mean.AtVec(i)) > 5*sd/math.Sqrt(draws) {
			t.Errorf("mean of f[%d] %v, want %v", i, s1[i], mean.AtVec(i))
		}
		for j := 0; j < n; j++ {
			cv := s2[i*n+j] - s1[i]*s1[j]
			se := math.Sqrt((sig.At(i, i)*sig.At(j, j) + sig.At(i, j)*sig.At(i, j)) / draws)
			if math.Abs(cv-sig.At(i, j)) > 5*se {
				t.Errorf("cov of f[%d], f[%d] %v, Sigma %v", i, j, cv, sig.At(i, j))
			}
		}
	}
}
