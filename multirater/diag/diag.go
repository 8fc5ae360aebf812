// Package diag holds the MCMC convergence diagnostics (split R-hat, bulk and
// tail ESS, autocorrelation) of Vehtari et al. (2021). It imports nothing of
// concord.
package diag

import (
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/stat/distuv"
)

// MCMC convergence diagnostics of Vehtari, Gelman, Simpson, Carpenter and
// Bürkner (2021), "Rank-normalization, folding, and localization: an improved
// R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2), computed
// exactly as R's posterior package (version 1.4.0) computes them; the
// functions are checked against posterior's numbers on the chains in
// testdata/diag.
//
// Conventions shared by every function here:
//   - chains holds one slice of draws per chain; all chains must have the
//     same, non-zero length (the functions panic otherwise).
//   - Split chains: each chain is cut into a first and a last half of
//     floor(n/2) draws; for odd n the middle draw is left out, as posterior
//     does.
//   - NaN is returned where posterior returns NA: when a draw is NaN or ±Inf
//     (for the tail ESS), when all draws are equal to within 2.2e-16
//     (posterior's is_constant, e.g. a parameter fixed for strong
//     identifiability), when a chain has fewer than 4 draws (R-hat) or when
//     the split halves have fewer than 3 draws (ESS, i.e. n < 6). A constant
//     parameter has no convergence to assess: callers should recognise it by
//     Summary.SD == 0 and leave it out of a convergence verdict rather than
//     count NaN as a failure.
//   - For chains of 1 to 3 draws posterior 1.4.0 returns numbers for R-hat
//     (and ESS at n = 3) that come from R dropping a matrix dimension in its
//     chain splitting (4 chains of 3 draws become 2 "chains" of 4 draws);
//     these are not meaningful and NaN is returned instead.

// Summary is the posterior summary of one scalar parameter over all chains:
// mean, standard deviation (n-1 denominator), the 2.5%, 50% and 97.5%
// quantiles (R's quantile type 7, the one posterior::quantile2 uses) of the
// pooled draws, and the diagnostics of SplitRhat, ESSBulk and ESSTail.
type Summary struct {
	Mean, SD, Q025, Q50, Q975 float64
	Rhat, ESSBulk, ESSTail    float64
}

// Summarize returns the Summary of chains (see the conventions above).
// It sorts the pooled draws once and derives the ranks of the split, folded
// and indicator chains from that order.
func Summarize(chains [][]float64) Summary {
	checkChains(chains, "Summarize")
	var ws diagWorkspace
	p := ws.pool(chains)
	var s Summary
	s.Mean, s.SD = meanSD(p.values)
	if p.nan {
		nan := math.NaN()
		s.Q025, s.Q50, s.Q975 = nan, nan, nan
		s.Rhat, s.ESSBulk, s.ESSTail = nan, nan, nan
		return s
	}
	s.Q025 = quantile7(p.sorted, 0.025)
	s.Q50 = quantile7(p.sorted, 0.5)
	s.Q975 = quantile7(p.sorted, 0.975)
	s.Rhat = ws.splitRhat(p)
	s.ESSBulk = ws.essBulk(p)
	s.ESSTail = ws.essTail(p)
	return s
}

// SplitRhat returns the rank-normalised split R-hat of Vehtari et al.
// (2021, sec. 4.1-4.2): the larger of the split R-hat of the rank-normalised
// draws (bulk) and of the rank-normalised folded draws |x - median(x)|
// (tails), as posterior::rhat. Values near 1 (below 1.01) indicate that the
// chains mix; it is NaN for constant draws, draws with NaN, or chains of
// fewer than 4 draws, and +Inf or huge when every split half is constant
// but the halves differ.
//
// The split R-hat of M split chains of N draws, chain means xbar_m and
// variances s_m^2, is sqrt(((N-1)/N W + B/N)/W) with W = mean(s_m^2) and
// B = N var(xbar_m) (Vehtari et al. eq. 3-4).
func SplitRhat(chains [][]float64) float64 {
	return pooled(chains, "SplitRhat", (*diagWorkspace).splitRhat)
}

// ESSBulk returns the bulk effective sample size of Vehtari et al. (2021,
// sec. 4.3): the ESS of the rank-normalised split chains, as
// posterior::ess_bulk. The ESS of M chains of N draws is
// M N / tau, tau = -1 + 2 sum_{t=0}^{T} rho_t' with the autocorrelations
// rho_t = 1 - (W - mean_m acov_m(t)) / var+ (Vehtari et al. eq. 10,
// acov biased as Geyer 1992 recommends), truncated at Geyer's initial
// positive sequence and made monotone (Geyer's initial monotone sequence),
// and tau at least 1/log10(M N). NaN for constant draws, draws with NaN or
// split halves of fewer than 3 draws.
func ESSBulk(chains [][]float64) float64 {
	return pooled(chains, "ESSBulk", (*diagWorkspace).essBulk)
}

// ESSTail returns the tail effective sample size of Vehtari et al. (2021,
// sec. 4.3): the smaller of the ESS of the indicators I(x <= q05) and
// I(x <= q95) of the split chains, q05 and q95 the pooled 5% and 95%
// quantiles (type 7), as posterior::ess_tail. NaN for constant draws, draws
// that are NaN or infinite, split halves of fewer than 3 draws, or a
// constant indicator.
func ESSTail(chains [][]float64) float64 {
	return pooled(chains, "ESSTail", (*diagWorkspace).essTail)
}

// pooled returns stat of the pooled chains (NaN when a draw is NaN), for
// the function name (in its panic on malformed chains).
func pooled(chains [][]float64, name string, stat func(*diagWorkspace, *pooledDraws) float64) float64 {
	checkChains(chains, name)
	var ws diagWorkspace
	p := ws.pool(chains)
	if p.nan {
		return math.NaN()
	}
	return stat(&ws, p)
}

// Autocorrelation stores the autocorrelations of x at lags 0..maxLag in
// dst[:maxLag+1] (allocating a new slice when cap(dst) is too small) and
// returns it. It is posterior's autocorrelation: the biased estimate
// rho_t = sum_{i<n-t} (x_i - xbar)(x_{i+t} - xbar) / sum_i (x_i - xbar)^2
// (Geyer 1992), computed directly for short lag ranges and by FFT otherwise.
// All values are NaN when x is constant. It panics unless
// 0 <= maxLag < len(x).
func Autocorrelation(dst, x []float64, maxLag int) []float64 {
	if maxLag < 0 || maxLag >= len(x) {
		panic("multirater: Autocorrelation: need 0 <= maxLag < len(x)")
	}
	if cap(dst) < maxLag+1 {
		dst = make([]float64, maxLag+1)
	}
	dst = dst[:maxLag+1]
	if maxLag < directACFMaxLag {
		autocovDirect(dst, x)
	} else {
		var ws diagWorkspace
		ac := ws.autocov(x)
		copy(dst, ac[:maxLag+1])
	}
	c0 := dst[0]
	for i := range dst {
		dst[i] /= c0
	}
	return dst
}

// directACFMaxLag: Autocorrelation sums lags below this directly (n*maxLag
// flops) and uses the FFT above.
const directACFMaxLag = 64

// diagWorkspace holds scratch space reused across the ESS computations of
// one call.
type diagWorkspace struct {
	fft   *fourier.FFT
	pad   []float64
	coef  []complex128
	acov  []float64
	ac    []float64
	cen   []float64
	means []float64
	rho   []float64
	seq   []rankedDraw
	bulk  [][]float64 // cached bulkZ of the current pooledDraws
}

// checkChains panics unless chains is non-empty with equal, non-zero
// lengths, and returns the number of chains and draws per chain.
func checkChains(chains [][]float64, fn string) (nc, n int) {
	if len(chains) == 0 {
		panic("multirater: " + fn + ": no chains")
	}
	n = len(chains[0])
	if n == 0 {
		panic("multirater: " + fn + ": empty chain")
	}
	for _, c := range chains[1:] {
		if len(c) != n {
			panic("multirater: " + fn + ": chains of unequal length")
		}
	}
	return len(chains), n
}

func hasNaN(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

func hasNonFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return true
		}
	}
	return false
}

// isConstant is posterior's is_constant: |max - min| < 2.2e-16.
func isConstant(sorted []float64) bool {
	return math.Abs(sorted[len(sorted)-1]-sorted[0]) < 0x1p-52
}

// splitHalves returns the split chains as views into chains: the first and
// last floor(n/2) draws of each chain (posterior's .split_chains).
func splitHalves(chains [][]float64) [][]float64 {
	n := len(chains[0])
	h := n / 2
	out := make([][]float64, 0, 2*len(chains))
	for _, c := range chains {
		out = append(out, c[:h])
	}
	for _, c := range chains {
		out = append(out, c[n-h:])
	}
	return out
}

// pooledDraws is the set of draws of all chains, sorted once.
type pooledDraws struct {
	chains [][]float64
	nc, n  int
	h      int          // draws per split half, floor(n/2)
	values []float64    // pooled draws, chain by chain
	order  []rankedDraw // pooled draws sorted by value; i = c*n + j
	sorted []float64    // the sorted values
	nan    bool         // some draw is NaN
}

// rankedDraw is a draw and an index: its position in the pooled draws, or
// in the split chains.
type rankedDraw struct {
	v float64
	i int
}

func cmpRanked(a, b rankedDraw) int {
	switch {
	case a.v < b.v:
		return -1
	case a.v > b.v:
		return 1
	}
	return 0
}

// pool builds the pooledDraws of chains (already checked).
func (ws *diagWorkspace) pool(chains [][]float64) *pooledDraws {
	nc, n := len(chains), len(chains[0])
	p := &pooledDraws{chains: chains, nc: nc, n: n, h: n / 2}
	p.values = make([]float64, 0, nc*n)
	for _, c := range chains {
		p.values = append(p.values, c...)
	}
	if hasNaN(p.values) {
		p.nan = true
		return p
	}
	p.order = make([]rankedDraw, len(p.values))
	for i, v := range p.values {
		p.order[i] = rankedDraw{v: v, i: i}
	}
	slices.SortFunc(p.order, cmpRanked)
	p.sorted = make([]float64, len(p.order))
	for k, d := range p.order {
		p.sorted[k] = d.v
	}
	return p
}

// splitOrder returns the draws of the split chains in increasing order, each
// with its index col*h + pos in the split chains (first halves in columns
// 0..nc-1, second halves in nc..2nc-1; the middle draw of an odd-length
// chain is left out).
func (ws *diagWorkspace) splitOrder(p *pooledDraws) []rankedDraw {
	seq := slices.Grow(ws.seq[:0], 2*p.nc*p.h)
	for _, d := range p.order {
		c, j := d.i/p.n, d.i%p.n
		switch {
		case j < p.h:
			seq = append(seq, rankedDraw{v: d.v, i: c*p.h + j})
		case j >= p.n-p.h:
			seq = append(seq, rankedDraw{v: d.v, i: (p.nc+c)*p.h + j - (p.n - p.h)})
		}
	}
	ws.seq = seq
	return seq
}

// rankZ stores in z[d.i] the rank-normalised value of every draw d of the
// sorted sequence seq: Phi^-1((r - 3/8)/(S + 1/4)), r the rank among the S
// draws with ties given their average rank (posterior's z_scale, Vehtari et
// al. eq. 14).
func rankZ(seq []rankedDraw, z []float64) {
	s := len(seq)
	den := float64(s) + 0.25
	for i := 0; i < s; {
		j := i + 1
		for j < s && seq[j].v == seq[i].v {
			j++
		}
		// Ranks i+1..j share the average rank (i+1+j)/2.
		r := 0.5 * float64(i+1+j)
		v := distuv.UnitNormal.Quantile((r - 0.375) / den)
		for k := i; k < j; k++ {
			z[seq[k].i] = v
		}
		i = j
	}
}

// columns cuts z into 2*nc split chains of h draws.
func (p *pooledDraws) columns(z []float64) [][]float64 {
	cols := make([][]float64, 2*p.nc)
	for c := range cols {
		cols[c] = z[c*p.h : (c+1)*p.h]
	}
	return cols
}

// bulkZ returns the rank-normalised split chains (posterior's
// z_scale(.split_chains(x))).
func (ws *diagWorkspace) bulkZ(p *pooledDraws) [][]float64 {
	if ws.bulk == nil {
		z := make([]float64, 2*p.nc*p.h)
		rankZ(ws.splitOrder(p), z)
		ws.bulk = p.columns(z)
	}
	return ws.bulk
}

// foldedZ returns the rank-normalised split folded chains
// z_scale(.split_chains(|x - median(x)|)), the median over all draws. The
// sorted order of |x - med| is merged from the sorted draws below and above
// the median, so no second sort is needed.
func (ws *diagWorkspace) foldedZ(p *pooledDraws) [][]float64 {
	med := quantile7(p.sorted, 0.5)
	seq := ws.splitOrder(p)
	fold := make([]rankedDraw, 0, len(seq))
	hi, _ := slices.BinarySearchFunc(seq, med, func(d rankedDraw, m float64) int {
		if d.v < m {
			return -1
		}
		return 1
	})
	lo := hi - 1
	for lo >= 0 || hi < len(seq) {
		var d rankedDraw
		if hi >= len(seq) || (lo >= 0 && med-seq[lo].v <= seq[hi].v-med) {
			d = rankedDraw{v: med - seq[lo].v, i: seq[lo].i}
			lo--
		} else {
			d = rankedDraw{v: seq[hi].v - med, i: seq[hi].i}
			hi++
		}
		fold = append(fold, d)
	}
	z := make([]float64, len(seq))
	rankZ(fold, z)
	return p.columns(z)
}

// splitRhat is SplitRhat on pooled draws without NaN.
func (ws *diagWorkspace) splitRhat(p *pooledDraws) float64 {
	if p.n < 4 {
		return math.NaN()
	}
	bulk := rhatBasic(ws.bulkZ(p))
	tail := rhatBasic(ws.foldedZ(p))
	return math.Max(bulk, tail)
}

// rhatBasic is posterior's .rhat on the given (already split) chains.
func rhatBasic(cols [][]float64) float64 {
	n := len(cols[0])
	if n < 2 || len(cols) < 2 || constantCols(cols) {
		return math.NaN()
	}
	means := make([]float64, len(cols))
	var within float64
	for i, c := range cols {
		m, sd := meanSD(c)
		means[i] = m
		within += sd * sd
	}
	within /= float64(len(cols))
	_, sdm := meanSD(means)
	between := float64(n) * sdm * sdm
	return math.Sqrt((between/within + float64(n) - 1) / float64(n))
}

// constantCols is posterior's should_return_NA on a matrix: any non-finite
// value or |max - min| < 2.2e-16 over all values.
func constantCols(cols [][]float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cols {
		if hasNonFinite(c) {
			return true
		}
		for _, v := range c {
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
	}
	return math.Abs(hi-lo) < 0x1p-52
}

// essBulk is ESSBulk on pooled draws without NaN.
func (ws *diagWorkspace) essBulk(p *pooledDraws) float64 {
	if p.h < 3 {
		return math.NaN()
	}
	return ws.ess(ws.bulkZ(p))
}

// essTail is ESSTail on pooled draws without NaN.
func (ws *diagWorkspace) essTail(p *pooledDraws) float64 {
	first, last := p.sorted[0], p.sorted[len(p.sorted)-1]
	if math.IsInf(first, 0) || math.IsInf(last, 0) || isConstant(p.sorted) {
		return math.NaN()
	}
	return math.Min(essQuantile(p.chains, p.sorted, 0.05, ws), essQuantile(p.chains, p.sorted, 0.95, ws))
}

// essQuantile is posterior's .ess_quantile: the ESS of the split
// indicators I(x <= q), q the type-7 quantile of the pooled draws.
func essQuantile(chains [][]float64, sorted []float64, p float64, ws *diagWorkspace) float64 {
	if len(chains[0])/2 < 3 {
		return math.NaN()
	}
	q := quantile7(sorted, p)
	ind := make([][]float64, len(chains))
	for i, c := range chains {
		v := make([]float64, len(c))
		for j, x := range c {
			if x <= q {
				v[j] = 1
			}
		}
		ind[i] = v
	}
	return ws.ess(splitHalves(ind))
}

// ess is posterior's .ess on the given (already split) chains: Geyer's
// initial monotone sequence estimator on the multi-chain autocorrelations
// (Vehtari et al. 2021, eq. 10-11, and Stan's reference manual).
func (ws *diagWorkspace) ess(cols [][]float64) float64 {
	m := len(cols)
	n := len(cols[0])
	if n < 3 || constantCols(cols) {
		return math.NaN()
	}
	// The mean over chains of the autocovariances, acov[t], is computed
	// lazily: Geyer's sequence usually stops after a few dozen lags, which
	// direct sums reach faster than an FFT of every chain; past
	// directESSMaxLag all lags come from the FFT.
	ws.cen = slices.Grow(ws.cen[:0], m*n)[:m*n]
	ws.means = slices.Grow(ws.means[:0], m)[:m]
	for i, c := range cols {
		mu := mean(c)
		ws.means[i] = mu
		cc := ws.cen[i*n : (i+1)*n]
		if constantSeries(c) {
			clear(cc) // posterior: zero autocovariance when var(x) == 0
			continue
		}
		for j, v := range c {
			cc[j] = v - mu
		}
	}
	acov := slices.Grow(ws.acov[:0], n)[:n]
	ws.acov = acov
	done := 0 // acov[:done] is computed
	fm, fn := float64(m), float64(n)
	lag := func(t int) float64 {
		for done <= t {
			if done >= directESSMaxLag {
				ws.acovFFT(cols, acov[done:], done)
				done = n
				break
			}
			var s float64
			for i := 0; i < m; i++ {
				cc := ws.cen[i*n : (i+1)*n]
				a, b := cc[:n-done], cc[done:]
				for j, v := range a {
					s += v * b[j]
				}
			}
			acov[done] = s / fn / fm
			done++
		}
		return acov[t]
	}
	meanVar := lag(0) * fn / (fn - 1)
	varPlus := meanVar * (fn - 1) / fn
	if m > 1 {
		_, sd := meanSD(ws.means)
		varPlus += sd * sd
	}

	rho := slices.Grow(ws.rho[:0], n)[:n]
	clear(rho)
	ws.rho = rho
	// Geyer's initial positive sequence: sums of adjacent pairs of
	// autocorrelations, stopped at the first negative pair sum.
	t := 0
	even := 1.0
	rho[0] = even
	odd := 1 - (meanVar-lag(1))/varPlus
	rho[1] = odd
	for t < n-5 && !math.IsNaN(even+odd) && even+odd > 0 {
		t += 2
		even = 1 - (meanVar-lag(t))/varPlus
		odd = 1 - (meanVar-lag(t+1))/varPlus
		if even+odd >= 0 {
			rho[t] = even
			rho[t+1] = odd
		}
	}
	maxT := t
	if even > 0 {
		rho[maxT] = even
	}
	// Geyer's initial monotone sequence.
	for t = 0; t <= maxT-4; {
		t += 2
		if rho[t]+rho[t+1] > rho[t-2]+rho[t-1] {
			rho[t] = (rho[t-2] + rho[t-1]) / 2
			rho[t+1] = rho[t]
		}
	}
	// tau = -1 + 2 sum_{t<maxT} rho_t + rho_maxT. posterior sums R's
	// rho_hat_t[1:max_t], which for max_t = 0 is rho_hat_t[1] (R's 1:0 is
	// c(1, 0)); that is reproduced here.
	var sum float64
	if maxT == 0 {
		sum = rho[0]
	}
	for _, r := range rho[:maxT] {
		sum += r
	}
	tau := -1 + 2*sum + rho[maxT]
	ess := fm * fn
	tau = math.Max(tau, 1/math.Log10(ess))
	return ess / tau
}

// directESSMaxLag: ess sums the autocovariances of lags below this
// directly and takes the rest from the FFT.
const directESSMaxLag = 32

// acovFFT stores in dst[k] the mean over the chains cols of the
// autocovariance at lag from+k, by FFT.
func (ws *diagWorkspace) acovFFT(cols [][]float64, dst []float64, from int) {
	clear(dst)
	for _, c := range cols {
		ac := ws.autocov(c)
		for k := range dst {
			dst[k] += ac[from+k]
		}
	}
	for k := range dst {
		dst[k] /= float64(len(cols))
	}
}

// autocov returns posterior's autocovariance of x in workspace memory: the
// biased estimates acov_t = (1/n) sum_{i<n-t} (x_i - xbar)(x_{i+t} - xbar)
// for every lag t = 0..n-1, by FFT of the series zero-padded to at least 2n.
// A series with zero variance gives all zeros.
func (ws *diagWorkspace) autocov(x []float64) []float64 {
	n := len(x)
	ws.ac = slices.Grow(ws.ac[:0], n)[:n]
	out := ws.ac
	if constantSeries(x) {
		clear(out)
		return out
	}
	size := 1
	for size < 2*n {
		size <<= 1
	}
	if ws.fft == nil || ws.fft.Len() != size {
		ws.fft = fourier.NewFFT(size)
		ws.pad = make([]float64, size)
		ws.coef = make([]complex128, size/2+1)
	}
	xbar := mean(x)
	for i, v := range x {
		ws.pad[i] = v - xbar
	}
	clear(ws.pad[n:])
	ws.fft.Coefficients(ws.coef, ws.pad)
	for i, c := range ws.coef {
		ws.coef[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	ws.fft.Sequence(ws.pad, ws.coef)
	// Scale so that acov_0 is the biased variance, as posterior does
	// (ac/ac[1] * var(x) * (n-1)/n).
	var ss float64
	for _, v := range x {
		ss += (v - xbar) * (v - xbar)
	}
	scale := ss / float64(n) / ws.pad[0]
	for t := range out {
		out[t] = ws.pad[t] * scale
	}
	return out
}

// autocovDirect stores the biased autocovariances of x at lags
// 0..len(dst)-1 in dst by direct summation.
func autocovDirect(dst, x []float64) {
	n := len(x)
	if constantSeries(x) {
		clear(dst)
		return
	}
	xbar := mean(x)
	for t := range dst {
		var s float64
		for i := 0; i+t < n; i++ {
			s += (x[i] - xbar) * (x[i+t] - xbar)
		}
		dst[t] = s / float64(n)
	}
}

func constantSeries(x []float64) bool {
	for _, v := range x[1:] {
		if v != x[0] {
			return false
		}
	}
	return true
}

// mean returns the mean of x with one refinement pass, like R's mean.
func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	m := s / float64(len(x))
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return m
	}
	var c float64
	for _, v := range x {
		c += v - m
	}
	return m + c/float64(len(x))
}

// meanSD returns the mean and the standard deviation with denominator
// n-1 (NaN for n < 2, as R's sd).
func meanSD(x []float64) (m, sd float64) {
	m = mean(x)
	if len(x) < 2 {
		return m, math.NaN()
	}
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(x)-1))
}

// quantile7 is R's quantile(x, p, type = 7) of the sorted values:
// with h = 1 + (n-1)p, lo = floor(h), hi = ceil(h), it is
// (1-(h-lo)) x[lo] + (h-lo) x[hi] (1-based), x[lo] when h = lo or
// x[hi] == x[lo].
func quantile7(sorted []float64, p float64) float64 {
	n := len(sorted)
	h := 1 + float64(n-1)*p
	lo := math.Floor(h)
	hi := math.Ceil(h)
	q := sorted[int(lo)-1]
	xhi := sorted[int(hi)-1]
	if h > lo && xhi != q {
		g := h - lo
		q = (1-g)*q + g*xhi
	}
	return q
}

// QuickSummary returns the mean, sd and quantiles of the pooled draws (the
// same definitions as Summarize) without R-hat and ESS.
func QuickSummary(chains [][]float64) Summary {
	var pooled []float64
	for _, c := range chains {
		pooled = append(pooled, c...)
	}
	var s Summary
	s.Mean, s.SD = meanSD(pooled)
	sort.Float64s(pooled)
	s.Q025 = quantile7(pooled, 0.025)
	s.Q50 = quantile7(pooled, 0.5)
	s.Q975 = quantile7(pooled, 0.975)
	s.Rhat, s.ESSBulk, s.ESSTail = math.NaN(), math.NaN(), math.NaN()
	return s
}
