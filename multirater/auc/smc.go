package auc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// SMCOptions control the tempering SMC engine (Ridgway et al. sec. 3.2,
// algorithm 1). The zero value means the defaults given for each field.
type SMCOptions struct {
	// Particles is N, the number of particles; 0 means 2000.
	Particles int
	// ESS is tau, the fraction of N the effective sample size is kept at
	// by the choice of each next temperature; 0 means 0.5.
	ESS float64
	// Kappa scales the random-walk proposal N(0, Kappa Sigma) with Sigma
	// the resampled particles' covariance; 0 means 2.38^2/r (r the
	// dimension).
	Kappa float64
	// Moves is the number of Metropolis steps per particle at each
	// temperature; 0 means 10.
	Moves int
	// Repeats is the number of independent SMC runs, whose spread gives
	// the Monte Carlo standard errors (reported as 0, unknown, for one
	// run); 0 means 4. They run on up to two
	// goroutines, each with its own generator seeded from the fit's.
	Repeats int
}

func (o SMCOptions) withDefaults() SMCOptions {
	o.Particles = cmp.Or(o.Particles, 2000)
	o.ESS = cmp.Or(o.ESS, 0.5)
	o.Moves = cmp.Or(o.Moves, 10)
	o.Repeats = cmp.Or(o.Repeats, 4)
	if o.Particles < 10 || !(o.ESS > 0 && o.ESS < 1) || o.Moves < 1 || o.Repeats < 1 || o.Kappa < 0 {
		panic(fmt.Sprintf("auc: SMC options %+v out of range", o))
	}
	return o
}

// SMCStats are the SMC engine's diagnostics.
type SMCStats struct {
	// LogZ is each repeat's log Z estimate; Temperatures each repeat's
	// number of tempering steps; Acceptance the mean Metropolis acceptance
	// rate over all moves and repeats.
	LogZ         []float64 `json:"log_z"`
	Temperatures []int     `json:"temperatures"`
	Acceptance   float64   `json:"acceptance"`
	// MeanSE and SDSE are the Monte Carlo standard errors (over the
	// repeats) of the posterior means and sds of the whitened coordinates
	// w (for linear scores theta = sqrt(V) w: multiply by sqrt(V)).
	MeanSE []float64 `json:"mean_se"`
	SDSE   []float64 `json:"sd_se"`
	// Seeds are the repeats' generator seeds.
	Seeds []uint64 `json:"seeds"`
}

// riskScratch counts misordered pairs without allocating.
type riskScratch struct {
	s    []float64
	ord  []int
	lab  []bool
	nNeg int
}

// misordered returns the number of pairs (i positive, j negative) with
// s_i < s_j, n+ n- R_n(s) (Ridgway et al. sec. 2.1), in O(N log N).
func (rs *riskScratch) misordered() int {
	s := rs.s
	ord := rs.ord
	for i := range ord {
		ord[i] = i
	}
	slices.SortFunc(ord, func(a, b int) int {
		switch {
		case s[a] < s[b]:
			return -1
		case s[a] > s[b]:
			return 1
		}
		return 0
	})
	bad, seen := 0, 0
	for lo := 0; lo < len(ord); {
		hi := lo
		for hi < len(ord) && s[ord[hi]] == s[ord[lo]] {
			if !rs.lab[ord[hi]] {
				seen++
			}
			hi++
		}
		for t := lo; t < hi; t++ {
			if rs.lab[ord[t]] {
				bad += rs.nNeg - seen
			}
		}
		lo = hi
	}
	return bad
}

// smcPrior is the prior of the whitened coordinates: N(0, I), or the
// spike-and-slab p N(0, 1) + (1 - p) N(0, u0) per coordinate.
type smcPrior struct {
	mix   bool
	p, u0 float64
}

// logDens returns the log prior density of w up to a constant.
func (pr smcPrior) logDens(w []float64) float64 {
	if !pr.mix {
		return -0.5 * floats.Dot(w, w)
	}
	s := 0.0
	for _, x := range w {
		s += pr.logMix(x)
	}
	return s
}

// logMix is log(p N(x; 0, 1) + (1 - p) N(x; 0, u0)) + log sqrt(2 pi).
func (pr smcPrior) logMix(x float64) float64 {
	a := math.Log(pr.p) - 0.5*x*x
	b := math.Log1p(-pr.p) - 0.5*math.Log(pr.u0) - 0.5*x*x/pr.u0
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// draw sets w to a prior draw.
func (pr smcPrior) draw(rng *rand.Rand, w []float64) {
	for k := range w {
		w[k] = rng.NormFloat64()
		if pr.mix && rng.Float64() >= pr.p {
			w[k] *= math.Sqrt(pr.u0)
		}
	}
}

// slabProb returns P(slab | x) = p N(x; 0, 1) / mixture.
func (pr smcPrior) slabProb(x float64) float64 {
	return math.Exp(math.Log(pr.p) - 0.5*x*x - pr.logMix(x))
}

// repeatOut is one SMC repeat's weighted particles summarised.
type repeatOut struct {
	incl     []float64 // E[P(slab | w_k)] (spike-and-slab)
	mean, sd []float64
	second   *mat.SymDense // E[w w']
	logZ     float64
	temps    int
	acc      float64
	err      error
}

// runSMC runs opts.Repeats independent tempering SMC samplers for the
// model's whitened coordinates w ~ N(0, I_r) with the scores s = G w, and
// pools them.
func runSMC(ctx context.Context, m *model, pos, neg []int, gamma float64, opts SMCOptions, pr smcPrior, rng *rand.Rand) (*posterior, error) {
	reps := opts.Repeats
	outs := make([]repeatOut, reps)
	seeds := make([]uint64, reps)
	for k := range seeds {
		seeds[k] = rng.Uint64()
	}
	lab := make([]bool, m.n)
	for _, i := range pos {
		lab[i] = true
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for k := 0; k < reps; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			outs[k] = smcRepeat(ctx, m, lab, len(pos), len(neg), gamma, opts, pr, rand.New(rand.NewPCG(seeds[k], 0x736d63)))
		}(k)
	}
	wg.Wait()
	r := m.r
	st := &SMCStats{Seeds: seeds, MeanSE: make([]float64, r), SDSE: make([]float64, r)}
	mean := make([]float64, r)
	second := mat.NewSymDense(r, nil)
	for _, o := range outs {
		if o.err != nil {
			return nil, o.err
		}
		st.LogZ = append(st.LogZ, o.logZ)
		st.Temperatures = append(st.Temperatures, o.temps)
		st.Acceptance += o.acc / float64(reps)
		floats.AddScaled(mean, 1/float64(reps), o.mean)
		second.AddSym(second, o.second)
	}
	second.ScaleSym(1/float64(reps), second)
	cov := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := 0; j <= i; j++ {
			cov.SetSym(i, j, second.At(i, j)-mean[i]*mean[j])
		}
	}
	col := make([]float64, reps)
	for k := 0; k < r; k++ {
		for t, o := range outs {
			col[t] = o.mean[k]
		}
		_, st.MeanSE[k] = meanSE(col)
		for t, o := range outs {
			col[t] = o.sd[k]
		}
		_, st.SDSE[k] = meanSE(col)
	}
	lz, lse := meanSE(st.LogZ)
	post := &posterior{mean: mean, cov: cov, logZ: lz, logSE: lse, smc: st}
	if pr.mix {
		post.incl = make([]float64, r)
		for _, o := range outs {
			floats.AddScaled(post.incl, 1/float64(reps), o.incl)
		}
	}
	return post, nil
}

// smcRepeat is one run of algorithm 1 (Ridgway et al. sec. 4): tempering
// from the prior to gamma, each step (a) choosing the next temperature so
// that the effective sample size is ESS times the particles, (b)
// resampling and (c) moving the particles by random-walk Metropolis.
func smcRepeat(ctx context.Context, m *model, lab []bool, np, nn int, gamma float64, o SMCOptions, pr smcPrior, rng *rand.Rand) repeatOut {
	sm := newSMCRun(m, lab, np, nn, o, pr, rng)
	cur, logZ := 0.0, 0.0
	temps := 0
	for {
		if err := ctx.Err(); err != nil {
			return repeatOut{err: err}
		}
		temps++
		delta := sm.nextDelta(gamma - cur)
		cur += delta
		if gamma-cur < 1e-12*gamma {
			cur = gamma
		}
		// Z_t = Z_{t-1} mean_i w_t(theta^i) (w computed relative to the
		// smallest risk).
		rmin := floats.Min(sm.R)
		logZ += -delta*rmin + math.Log(floats.Sum(sm.w)/float64(sm.P))
		if cur == gamma {
			break
		}
		sm.resample()
		if err := sm.move(ctx, cur); err != nil {
			return repeatOut{err: err}
		}
	}
	return sm.final(logZ, temps)
}

// smcRun is the state of one SMC run: the particles th with their risks R,
// the incremental weights w and the scratch of the moves.
type smcRun struct {
	r, P          int
	o             SMCOptions
	pr            smcPrior
	rng           *rand.Rand
	kappa         float64
	risk          func(w []float64) float64
	th, next      *mat.Dense
	R, Rn         []float64
	w, cum        []float64
	prop, z       []float64
	chol          mat.Cholesky
	sig           mat.SymDense
	L             mat.TriDense
	moves, accept int
}

// newSMCRun draws the particles from the prior (theta_0^i ~ prior).
func newSMCRun(m *model, lab []bool, np, nn int, o SMCOptions, pr smcPrior, rng *rand.Rand) *smcRun {
	r, n, P := m.r, m.n, o.Particles
	sm := &smcRun{r: r, P: P, o: o, pr: pr, rng: rng, kappa: o.Kappa}
	if sm.kappa == 0 {
		sm.kappa = 2.38 * 2.38 / float64(r)
	}
	pairs := float64(np * nn)
	gm := mat.NewDense(n, r, m.g)
	rs := &riskScratch{s: make([]float64, n), ord: make([]int, n), lab: lab, nNeg: nn}
	sv := mat.NewVecDense(n, rs.s)
	sm.risk = func(w []float64) float64 {
		sv.MulVec(gm, mat.NewVecDense(r, w))
		return float64(rs.misordered()) / pairs
	}
	sm.th, sm.next = mat.NewDense(P, r, nil), mat.NewDense(P, r, nil)
	sm.R, sm.Rn = make([]float64, P), make([]float64, P)
	for i := 0; i < P; i++ {
		row := sm.th.RawRowView(i)
		pr.draw(rng, row)
		sm.R[i] = sm.risk(row)
	}
	sm.w, sm.cum = make([]float64, P), make([]float64, P)
	sm.prop, sm.z = make([]float64, r), make([]float64, r)
	return sm
}

// ess sets w to the incremental weights exp(-delta (R_i - min R)) and
// returns their effective sample size.
func (sm *smcRun) ess(delta float64) float64 {
	rmin := floats.Min(sm.R)
	var s1, s2 float64
	for i, v := range sm.R {
		e := math.Exp(-delta * (v - rmin))
		sm.w[i] = e
		s1 += e
		s2 += e * e
	}
	return s1 * s1 / s2
}

// nextDelta returns the step to the next temperature, at most left: the
// largest with ESS(delta) >= ESS N by bisection (step a), with w set to
// its weights.
func (sm *smcRun) nextDelta(left float64) float64 {
	delta := left
	target := sm.o.ESS * float64(sm.P)
	if sm.ess(delta) >= target {
		return delta
	}
	lo, hi := 0.0, delta
	for it := 0; it < 60; it++ {
		mid := 0.5 * (lo + hi)
		if sm.ess(mid) >= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	delta = lo
	if delta <= 0 {
		delta = hi
	}
	sm.ess(delta)
	return delta
}

// resample draws the particles anew in proportion to w (multinomial
// resampling, step b).
func (sm *smcRun) resample() {
	P := sm.P
	floats.CumSum(sm.cum, sm.w)
	tot := sm.cum[P-1]
	for i := 0; i < P; i++ {
		u := sm.rng.Float64() * tot
		a := sort.SearchFloat64s(sm.cum, u)
		if a >= P {
			a = P - 1
		}
		copy(sm.next.RawRowView(i), sm.th.RawRowView(a))
		sm.Rn[i] = sm.R[a]
	}
	sm.th, sm.next = sm.next, sm.th
	sm.R, sm.Rn = sm.Rn, sm.R
}

// move makes o.Moves random-walk Metropolis moves of every particle at
// temperature cur, proposal N(0, kappa Sigma-hat) with Sigma-hat the
// particles' covariance (step c). A cancelled ctx stops it (checked every
// moveCheck particles) with ctx's error.
func (sm *smcRun) move(ctx context.Context, cur float64) error {
	r := sm.r
	stat.CovarianceMatrix(&sm.sig, sm.th, nil)
	tr := 0.0
	for k := 0; k < r; k++ {
		tr += sm.sig.At(k, k)
	}
	for k := 0; k < r; k++ {
		sm.sig.SetSym(k, k, sm.sig.At(k, k)+1e-10*tr/float64(r)+1e-300)
	}
	sm.sig.ScaleSym(sm.kappa, &sm.sig)
	if !sm.chol.Factorize(&sm.sig) {
		return fmt.Errorf("auc: SMC: the particles' covariance is not positive definite at gamma %v", cur)
	}
	sm.chol.LTo(&sm.L)
	for i := 0; i < sm.P; i++ {
		if i%moveCheck == moveCheck-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		row := sm.th.RawRowView(i)
		lp := sm.pr.logDens(row)
		for mv := 0; mv < sm.o.Moves; mv++ {
			for k := range sm.z {
				sm.z[k] = sm.rng.NormFloat64()
			}
			for k := 0; k < r; k++ {
				s := row[k]
				for j := 0; j <= k; j++ {
					s += sm.L.At(k, j) * sm.z[j]
				}
				sm.prop[k] = s
			}
			lq := sm.pr.logDens(sm.prop)
			rq := sm.risk(sm.prop)
			sm.moves++
			if math.Log(sm.rng.Float64()) < lq-lp-cur*(rq-sm.R[i]) {
				copy(row, sm.prop)
				lp, sm.R[i] = lq, rq
				sm.accept++
			}
		}
	}
	return nil
}

// moveCheck is the number of particles move moves between two checks of
// its context: 640 risks of the N items' scores.
const moveCheck = 64

// final returns the run's weighted particles' moments, inclusion
// probabilities and evidence.
func (sm *smcRun) final(logZ float64, temps int) repeatOut {
	r, P, th, w, pr := sm.r, sm.P, sm.th, sm.w, sm.pr
	logw := make([]float64, P)
	for i := range logw {
		logw[i] = math.Log(w[i])
	}
	moves, accepted := sm.moves, sm.accept
	// The final weighted particles.
	lmax := floats.Max(logw)
	for i := range w {
		w[i] = math.Exp(logw[i] - lmax)
	}
	ws := floats.Sum(w)
	out := repeatOut{incl: make([]float64, r), mean: make([]float64, r), sd: make([]float64, r), second: mat.NewSymDense(r, nil), logZ: logZ, temps: temps}
	if moves > 0 {
		out.acc = float64(accepted) / float64(moves)
	}
	sec := out.second.RawSymmetric()
	for i := 0; i < P; i++ {
		row := th.RawRowView(i)
		c := w[i] / ws
		floats.AddScaled(out.mean, c, row)
		if pr.mix {
			for k, x := range row {
				out.incl[k] += c * pr.slabProb(x)
			}
		}
		for a := 0; a < r; a++ {
			for b := a; b < r; b++ {
				sec.Data[a*sec.Stride+b] += c * row[a] * row[b]
			}
		}
	}
	for k := 0; k < r; k++ {
		out.sd[k] = math.Sqrt(math.Max(out.second.At(k, k)-out.mean[k]*out.mean[k], 0))
	}
	return out
}
