// Package liktest is the conformance kit of the likelihoods that the
// engines use (multirater/lik and the families' own): one Case per
// likelihood, and Check tests what an engine relies on.
//
//   - LogLik's derivatives in f (Laplace's method: Rasmussen & Williams
//     alg. 3.1, Chu & Ghahramani eq. 11) against central finite
//     differences of the value and of the lower derivatives.
//   - Tilted's log Z = log ∫ p(y | f) N(f | mu, s2) df against quadrature
//     (gonum/integrate/quad's Gauss-Legendre nodes on mu ± 12 sd and
//     around the tilted mass, split at the likelihood's breaks), and the tilted moments EP matches (R&W eq.
//     3.58: mean mu + s2 d1, variance s2 + s2^2 d2) against the
//     quadrature's.
//   - Tilted's derivatives in mu against finite differences of log Z.
//   - For a lik.Learnable, TiltedGradTo against finite differences of log Z
//     in each parameter (SetParams), for a lik.TiltedGrader
//     TiltedLogZGradTo bit for bit against Tilted and TiltedGradTo, and for
//     a lik.LaplaceLearnable LogLikGradTo against those of lp, d1 and d2.
//
// A new likelihood is one file in its package and one Case in a table
// (multirater/lik/liktest's test holds lik's).
package liktest

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"

	"concord/multirater/lik"
)

// Cavity is a Gaussian N(Mu, S2) at which Tilted is checked; S2 = 0 (a
// point) checks log Z against LogLik's log p(y | Mu) instead of
// quadrature.
type Cavity struct{ Mu, S2 float64 }

// Case is one likelihood with the points where it is checked. The zero
// tolerances mean the defaults given.
type Case struct {
	Name string
	// Lik is the likelihood; a lik.Learnable must be a pointer (SetParams
	// changes it during the check, and the check restores it).
	Lik lik.Likelihood
	// Ys are the observations; Fs the latent values where LogLik is checked
	// (none: LogLik is not, as for a likelihood without derivatives in f);
	// Cavities where Tilted is.
	Ys       []float64
	Fs       []float64
	Cavities []Cavity
	// Breaks are the latent values where p(y | f) is not smooth (the
	// quadrature is split there).
	Breaks []float64
	// NoD3 says that LogLik gives no third derivative (0).
	NoD3 bool
	// Step is the finite-difference step; 0 means 1e-5.
	Step float64
	// Tol is the tolerance of a derivative against its finite difference,
	// relative to 1 + |finite difference|; 0 means 1e-5.
	Tol float64
	// QuadTol is the tolerance of log Z and the tilted moments against
	// quadrature, relative to 1 + |quadrature|; 0 means 1e-7.
	QuadTol float64
	// Nodes is the number of Gauss-Legendre nodes per piece; 0 means 200.
	Nodes int
}

func (c Case) withDefaults() Case {
	c.Step, c.Tol, c.QuadTol = cmp.Or(c.Step, 1e-5), cmp.Or(c.Tol, 1e-5), cmp.Or(c.QuadTol, 1e-7)
	c.Nodes = cmp.Or(c.Nodes, 200)
	if c.Lik == nil || len(c.Ys) == 0 {
		panic(fmt.Sprintf("liktest: case %q has no likelihood or no observations", c.Name))
	}
	return c
}

// Check runs every check of c as the subtest c.Name, one error per
// problem.
func Check(t *testing.T, c Case) {
	t.Helper()
	t.Run(c.Name, func(t *testing.T) {
		for _, p := range Problems(c) {
			t.Error(p)
		}
	})
}

// Problems returns what is wrong with c's likelihood, one line per check
// that fails (none when it conforms).
func Problems(c Case) []string {
	c = c.withDefaults()
	var out []string
	for _, y := range c.Ys {
		for _, f := range c.Fs {
			out = append(out, checkLogLik(c, y, f)...)
		}
		for _, cv := range c.Cavities {
			out = append(out, checkTilted(c, y, cv)...)
		}
	}
	return out
}

// near reports whether got is within tol of want, relative to 1 + |want|.
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*(1+math.Abs(want))
}

// checkLogLik checks LogLik's derivatives in f and, for a
// lik.LaplaceLearnable, LogLikGradTo.
func checkLogLik(c Case, y, f float64) []string {
	var out []string
	h := c.Step
	lp, d1, d2, d3 := c.Lik.LogLik(y, f)
	lpP, d1P, d2P, _ := c.Lik.LogLik(y, f+h)
	lpM, d1M, d2M, _ := c.Lik.LogLik(y, f-h)
	fd := [3]float64{(lpP - lpM) / (2 * h), (d1P - d1M) / (2 * h), (d2P - d2M) / (2 * h)}
	got := [3]float64{d1, d2, d3}
	for k := range got {
		if k == 2 && c.NoD3 {
			continue
		}
		if !near(got[k], fd[k], c.Tol) {
			out = append(out, fmt.Sprintf("y %v f %v: LogLik's derivative %d is %v, finite difference %v", y, f, k+1, got[k], fd[k]))
		}
	}
	ll, ok := c.Lik.(lik.LaplaceLearnable)
	if !ok {
		return out
	}
	np := ll.NumParams()
	dlp, dd1, dd2 := make([]float64, np), make([]float64, np), make([]float64, np)
	ll.LogLikGradTo(dlp, dd1, dd2, y, f)
	want := func() []float64 { lp, d1, d2, _ := ll.LogLik(y, f); return []float64{lp, d1, d2} }
	base := []float64{lp, d1, d2}
	for k := 0; k < np; k++ {
		plus, minus := atParam(ll, k, h, want)
		for i, g := range [][]float64{dlp, dd1, dd2} {
			if fdk := (plus[i] - minus[i]) / (2 * h); !near(g[k], fdk, c.Tol) {
				out = append(out, fmt.Sprintf("y %v f %v: LogLikGradTo of %s in parameter %d is %v, finite difference %v (at %v)", y, f, [3]string{"lp", "d1", "d2"}[i], k, g[k], fdk, base[i]))
			}
		}
	}
	return out
}

// atParam returns eval() with parameter k of l moved by +h and by -h, and
// restores l.
func atParam(l lik.Learnable, k int, h float64, eval func() []float64) (plus, minus []float64) {
	p := l.ParamsTo(make([]float64, l.NumParams()))
	q := append([]float64(nil), p...)
	q[k] = p[k] + h
	l.SetParams(q)
	plus = eval()
	q[k] = p[k] - h
	l.SetParams(q)
	minus = eval()
	l.SetParams(p)
	return plus, minus
}

// checkTilted checks Tilted against quadrature and finite differences in
// mu and, for a lik.Learnable, TiltedGradTo.
func checkTilted(c Case, y float64, cv Cavity) []string {
	var out []string
	h := c.Step
	lz, d1, d2 := c.Lik.Tilted(y, cv.Mu, cv.S2)
	if cv.S2 == 0 {
		// A point cavity: log Z is log p(y | mu).
		if lp, _, _, _ := c.Lik.LogLik(y, cv.Mu); !near(lz, lp, c.QuadTol) {
			out = append(out, fmt.Sprintf("y %v cavity N(%v, 0): log Z %v, log p %v", y, cv.Mu, lz, lp))
		}
	} else {
		qz, qmean, qvar := Tilted(c.Lik, y, cv.Mu, cv.S2, c.Breaks, c.Nodes)
		mean, vr := cv.Mu+cv.S2*d1, cv.S2+cv.S2*cv.S2*d2
		for _, chk := range []struct {
			what      string
			got, want float64
		}{{"log Z", lz, qz}, {"tilted mean", mean, qmean}, {"tilted variance", vr, qvar}} {
			if !near(chk.got, chk.want, c.QuadTol) {
				out = append(out, fmt.Sprintf("y %v cavity N(%v, %v): %s %v, quadrature %v", y, cv.Mu, cv.S2, chk.what, chk.got, chk.want))
			}
		}
	}
	lzP, d1P, _ := c.Lik.Tilted(y, cv.Mu+h, cv.S2)
	lzM, d1M, _ := c.Lik.Tilted(y, cv.Mu-h, cv.S2)
	if fd := (lzP - lzM) / (2 * h); !near(d1, fd, c.Tol) {
		out = append(out, fmt.Sprintf("y %v cavity N(%v, %v): Tilted's d1 %v, finite difference %v", y, cv.Mu, cv.S2, d1, fd))
	}
	if fd := (d1P - d1M) / (2 * h); !near(d2, fd, c.Tol) {
		out = append(out, fmt.Sprintf("y %v cavity N(%v, %v): Tilted's d2 %v, finite difference %v", y, cv.Mu, cv.S2, d2, fd))
	}
	l, ok := c.Lik.(lik.Learnable)
	if !ok {
		return out
	}
	g := l.TiltedGradTo(make([]float64, l.NumParams()), y, cv.Mu, cv.S2)
	for k := range g {
		plus, minus := atParam(l, k, h, func() []float64 { lz, _, _ := l.Tilted(y, cv.Mu, cv.S2); return []float64{lz} })
		if fd := (plus[0] - minus[0]) / (2 * h); !near(g[k], fd, c.Tol) {
			out = append(out, fmt.Sprintf("y %v cavity N(%v, %v): TiltedGradTo in parameter %d is %v, finite difference %v", y, cv.Mu, cv.S2, k, g[k], fd))
		}
	}
	if tg, ok := l.(lik.TiltedGrader); ok {
		// One computation for both: bit for bit the two calls' values.
		g2 := make([]float64, len(g))
		if lz2 := tg.TiltedLogZGradTo(g2, y, cv.Mu, cv.S2); lz2 != lz || !slices.Equal(g2, g) {
			out = append(out, fmt.Sprintf("y %v cavity N(%v, %v): TiltedLogZGradTo gives log Z %v and gradient %v, Tilted and TiltedGradTo %v and %v", y, cv.Mu, cv.S2, lz2, g2, lz, g))
		}
	}
	return out
}

// CheckTiltedDifferences checks Tilted's derivatives in mu at (y, mu, s2)
// against central differences of its log Z at step 1e-5: d1 within tol1
// and d2 (against the second difference of log Z) within tol2, relative to
// max(1, |difference|). Errors begin with name.
func CheckTiltedDifferences(t *testing.T, name string, l lik.Likelihood, y, mu, s2, tol1, tol2 float64) {
	t.Helper()
	const h = 1e-5
	lz, d1, d2 := l.Tilted(y, mu, s2)
	lp, _, _ := l.Tilted(y, mu+h, s2)
	lm, _, _ := l.Tilted(y, mu-h, s2)
	if fd := (lp - lm) / (2 * h); math.Abs(d1-fd) > tol1*math.Max(1, math.Abs(fd)) {
		t.Errorf("%s: d1 %.9g, difference %.9g", name, d1, fd)
	}
	if fd := (lp - 2*lz + lm) / (h * h); math.Abs(d2-fd) > tol2*math.Max(1, math.Abs(fd)) {
		t.Errorf("%s: d2 %.9g, difference %.9g", name, d2, fd)
	}
}

// Tilted returns log ∫ p(y | f) N(f | mu, s2) df and the mean and variance
// of the tilted distribution by Gauss-Legendre quadrature (nodes per
// piece of at most 6 sd, split at the breaks inside and around the peak), summed in the log
// domain. The range covers mu ± 12 sd and the integrand's largest value on
// a grid of step sd/10 over mu ± 40 sd, ± 12 sd: a likelihood far from the cavity moves
// the tilted mass into the cavity's tail.
func Tilted(l lik.Likelihood, y, mu, s2 float64, breaks []float64, nodes int) (logZ, mean, vr float64) {
	sd := math.Sqrt(s2)
	peak, best := mu, math.Inf(-1)
	for i := -400; i <= 400; i++ {
		f := mu + float64(i)*sd/10
		if lp, _, _, _ := l.LogLik(y, f); lp-0.5*(f-mu)*(f-mu)/s2 > best {
			peak, best = f, lp-0.5*(f-mu)*(f-mu)/s2
		}
	}
	lo, hi := math.Min(mu, peak)-12*sd, math.Max(mu, peak)+12*sd
	// A piece of its own for the tilted mass: peak ± 12 tilted sds, the
	// tilted sd from the curvature at the peak.
	st := sd
	if _, _, d2, _ := l.LogLik(y, peak); d2 < 0 {
		st = 1 / math.Sqrt(1/s2-d2)
	}
	cuts := []float64{lo}
	for _, b := range append([]float64{peak - 12*st, peak + 12*st}, breaks...) {
		if b > lo && b < hi {
			cuts = append(cuts, b)
		}
	}
	sort.Float64s(cuts)
	cuts = append(cuts, hi)
	var pieces []float64
	for i := 0; i+1 < len(cuts); i++ {
		np := math.Ceil((cuts[i+1] - cuts[i]) / (6 * sd))
		for k := 0.0; k < np; k++ {
			pieces = append(pieces, cuts[i]+k*(cuts[i+1]-cuts[i])/np)
		}
	}
	cuts = append(pieces, hi)
	var fs, logs, ws []float64
	x, w := make([]float64, nodes), make([]float64, nodes)
	for i := 0; i+1 < len(cuts); i++ {
		quad.Legendre{}.FixedLocations(x, w, cuts[i], cuts[i+1])
		for j, f := range x {
			lp, _, _, _ := l.LogLik(y, f)
			fs = append(fs, f)
			logs = append(logs, lp-0.5*(f-mu)*(f-mu)/s2)
			ws = append(ws, w[j])
		}
	}
	top := math.Inf(-1)
	for _, v := range logs {
		top = math.Max(top, v)
	}
	var z, m1, m2 float64
	for j, v := range logs {
		e := ws[j] * math.Exp(v-top)
		z += e
		m1 += e * fs[j]
		m2 += e * fs[j] * fs[j]
	}
	mean = m1 / z
	return top + math.Log(z) - 0.5*math.Log(2*math.Pi*s2), mean, m2/z - mean*mean
}
