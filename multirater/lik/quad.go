package lik

import (
	"math"

	"concord/multirater/numeric"

	"gonum.org/v1/gonum/integrate/quad"
)

// quadNodes is the number of Gauss-Legendre nodes on each side of the
// tilted mode: the tilted integrals are computed on [lo, mode] and
// [mode, hi], the interval where the integrand is within e^-32 of its
// value at the mode (found by doubling steps from the mode's curvature
// scale). A Gaussian rule around the mode alone misses the shoulder that a
// likelihood with a plateau (the truncated Gaussian as Phi(f) -> 0) puts
// under a wide cavity.
const quadNodes = 48

var legX, legW = func() ([]float64, []float64) {
	x, w := make([]float64, quadNodes), make([]float64, quadNodes)
	quad.Legendre{}.FixedLocations(x, w, 0, 1)
	return x, w
}()

// density is a likelihood whose log density is cheaper than LogLik with
// its derivatives (what the quadrature nodes need).
type density interface {
	Likelihood
	logp(y, f float64) float64
}

// densityAt is a density that prepares the terms that depend on y alone
// once for many f.
type densityAt interface {
	logpAt(y float64) func(f float64) float64
}

// logpOf returns f -> log p(y | f).
func logpOf(l density, y float64) func(f float64) float64 {
	if d, ok := l.(densityAt); ok {
		return d.logpAt(y)
	}
	return func(f float64) float64 { return l.logp(y, f) }
}

// logLik2 is a likelihood that gives LogLik's value and first two
// derivatives without the third (tiltedMode's Newton steps need no more).
type logLik2 interface {
	logLik2(y, f float64) (lp, d1, d2 float64)
}

// logLikOf returns (y, f) -> LogLik's lp, d1 and d2.
func logLikOf(l density) func(y, f float64) (lp, d1, d2 float64) {
	if d, ok := l.(logLik2); ok {
		return d.logLik2
	}
	return func(y, f float64) (float64, float64, float64) {
		lp, d1, d2, _ := l.LogLik(y, f)
		return lp, d1, d2
	}
}

// derivs2 is a likelihood that gives LogLik's d1 and d2 without lp, where
// lp is its log density (logpOf) bit for bit.
type derivs2 interface {
	derivs2(y, f float64) (d1, d2 float64)
}

// tiltedMode returns the mode of g(f) = log p(y | f) - (f - mu)^2/(2 s2)
// (to about 1e-8 of its curvature scale) and g”(mode), by Newton's
// method with step halving (falling back to the cavity's curvature where
// g is not concave).
func tiltedMode(l density, y, mu, s2 float64) (mode, g2 float64) {
	f := mu
	logp := logpOf(l, y)
	ll := logLikOf(l)
	dv, _ := l.(derivs2)
	lp, d1, d2 := ll(y, f)
	g := lp
	for it := 0; it < 100; it++ {
		gd := d1 - (f-mu)/s2
		gdd := d2 - 1/s2
		curv := gdd
		if curv >= -0.5/s2 {
			curv = -1 / s2
		}
		step := -gd / curv
		moved := false
		for h := 0; h < 40; h++ {
			fn := f + step
			lpn := logp(fn)
			gn := lpn - (fn-mu)*(fn-mu)/(2*s2)
			if gn >= g-1e-12*math.Abs(g) && !math.IsNaN(gn) {
				f, g, moved = fn, gn, true
				break
			}
			step /= 2
		}
		// Without a move d1 and d2 are those at f already; with one, a
		// derivs2 has g there too (its lp is logp's).
		switch {
		case moved && dv != nil:
			d1, d2 = dv.derivs2(y, f)
		case moved:
			lp, d1, d2 = ll(y, f)
			g = lp - (f-mu)*(f-mu)/(2*s2)
		}
		// A step below 1e-4 of the curvature scale leaves the next one
		// (Newton's convergence is quadratic) far below what moves the
		// quadrature, which centres its rules here but integrates about
		// any point within a fraction of that scale alike.
		if !moved || math.Abs(step) < 1e-10*(1+math.Abs(f)) || step*step < -1e-8/curv {
			break
		}
	}
	g2 = d2 - 1/s2
	if !(g2 < 0) {
		g2 = -1 / s2
	}
	return f, g2
}

// tilted returns log Z = log ∫ p(y | f) N(f | mu, s2) df and the tilted
// distribution's mean and variance by quadrature (Jensen et al. sec. 4.2
// solve the same one-dimensional integrals numerically): the 10- and
// 16-node Gauss-Hermite rules about the tilted mode at its curvature
// scale, the finer one taken when their moments agree within ghTol (on
// the sites of a bounded fit, all but about 1 in 100), and otherwise
// Gauss-Legendre panels on both sides of the mode. When grad is not nil, gradTo (the
// gradient in the likelihood's parameters of log p(y | f)) is averaged
// over the tilted distribution into grad: d log Z / d theta =
// E_tilted[d log p / d theta].
func tilted(l density, y, mu, s2 float64, grad []float64, gradTo func(dst []float64, y, f float64)) (logZ, mean, vr float64) {
	return tiltedQuad(l, y, mu, s2, grad, gradTo, true)
}

// tiltedQuad is tilted, with the Gauss-Hermite pair first when hermite is true
// and with the 48-node Gauss-Legendre rule alone otherwise.
func tiltedQuad(l density, y, mu, s2 float64, grad []float64, gradTo func(dst []float64, y, f float64), hermite bool) (logZ, mean, vr float64) {
	if _, cens := l.(*Censored); cens {
		// A censored rating's probability is floored (1e-300) far from
		// its bound, where the integrand is the cavity's Gaussian to every
		// Gauss-Hermite rule: the panels alone.
		hermite = false
	}
	m, g2 := tiltedMode(l, y, mu, s2)
	sc := 1 / math.Sqrt(-g2)
	lp := logpOf(l, y)
	g := func(f float64) float64 { return lp(f) - (f-mu)*(f-mu)/(2*s2) }
	top := g(m)
	// Two Gauss-Hermite rules about the mode at its curvature scale
	// first; when their moments agree within ghTol the finer one is used,
	// and only an integrand that they do not resolve (a shoulder, a kink at
	// the likelihood's clamp) gets the 48-node Gauss-Legendre panels.
	var lw, fs [3 * quadNodes]float64
	nf := 0
	done := false
	if hermite {
		var prev [3]float64
		for k, r := range ghRules {
			nf = 0
			for i, u := range r.X {
				f := m + sc*u
				v := top
				if u != 0 {
					v = g(f)
				}
				fs[nf] = f
				lw[nf] = v - top + 0.5*u*u + math.Log(r.W[i]*sc*math.Sqrt(2*math.Pi))
				nf++
			}
			cur := nodeMoments(fs[:nf], lw[:nf], m)
			done = k > 0 && ghAgree(prev, cur)
			prev = cur
		}
	}
	if !done {
		panels := tiltedPanels(g, m, mu, sc, top)
		nf = 0
		for _, pn := range panels {
			for i := range legX {
				fs[nf] = pn.from + pn.len*legX[i]
				lw[nf] = g(fs[nf]) - top + math.Log(math.Abs(pn.len)*legW[i])
				nf++
			}
		}
	}
	mom := nodeMoments(fs[:nf], lw[:nf], m)
	z := mom[0]
	if grad != nil {
		for k := range grad {
			grad[k] = 0
		}
		buf := make([]float64, len(grad))
		for i, f := range fs[:nf] {
			w := math.Exp(lw[i])
			if !(w > 0) {
				continue
			}
			gradTo(buf, y, f)
			for k := range buf {
				grad[k] += w * buf[k]
			}
		}
		for k := range grad {
			grad[k] /= z
		}
	}
	mean, vr = mom[1], mom[2]
	logZ = top + math.Log(z) - 0.5*math.Log(2*math.Pi*s2)
	return logZ, mean, vr
}

// panel is a quadrature panel of tilted: from + len x, x in [0, 1].
type panel struct{ from, len float64 }

// tiltedPanels returns the Gauss-Legendre panels of the tilted integrand g
// (log, top at the mode m, curvature scale sc; mu the cavity mean).
func tiltedPanels(g func(float64) float64, m, mu, sc, top float64) []panel {
	// reach returns the distance from the mode, in direction dir, at which
	// the integrand has fallen below e^-32 of its top.
	reach := func(dir float64) float64 {
		d := 4 * sc
		for i := 0; i < 60; i++ {
			if v := g(m + dir*d); !(v > top-32) {
				return d
			}
			d *= 1.5
		}
		return d
	}
	left, right := reach(-1), reach(1)
	// Panels from the mode outwards; the side of the cavity mean, when it
	// is more than two curvature scales away, is split there too (the
	// shoulder a plateau of the likelihood leaves under the cavity).
	panels := make([]panel, 0, 3)
	if d := m - mu; d > 2*sc && d < left {
		panels = append(panels, panel{m, -d}, panel{mu, -(left - d)})
	} else {
		panels = append(panels, panel{m, -left})
	}
	if d := mu - m; d > 2*sc && d < right {
		panels = append(panels, panel{m, d}, panel{mu, right - d})
	} else {
		panels = append(panels, panel{m, right})
	}
	return panels
}

// nodeMoments returns the integral z of the weights exp(lw) at nodes fs
// and the mean and variance they give (accumulated about m, the mode).
func nodeMoments(fs, lw []float64, m float64) [3]float64 {
	var z, s1, sq float64
	for i, f := range fs {
		w := math.Exp(lw[i])
		if !(w > 0) {
			continue
		}
		d := f - m
		z += w
		s1 += w * d
		sq += w * d * d
	}
	return [3]float64{z, m + s1/z, sq/z - (s1/z)*(s1/z)}
}

// ghTol is the agreement of the two Gauss-Hermite rules' tilted moments
// at which the finer one is taken: log z within ghTol, the mean within
// ghTol sd and the variance within ghTol of itself.
const ghTol = 1e-6

// ghRules are the Gauss-Hermite rules tilted tries first, coarse to fine.
var ghRules = []*numeric.GHRule{numeric.NewGHRule(10), numeric.NewGHRule(16)}

// ghAgree reports whether moments a and b agree within ghTol.
func ghAgree(a, b [3]float64) bool {
	return math.Abs(math.Log(a[0]/b[0])) < ghTol && b[2] > 0 &&
		math.Abs(a[1]-b[1]) < ghTol*math.Sqrt(b[2]) && math.Abs(a[2]-b[2]) < ghTol*b[2]
}

// tiltedDerivs returns Tilted's values from the tilted moments: d log Z /
// d mu = (mean - mu)/s2, d^2 log Z / d mu^2 = (var - s2)/s2^2 (Rasmussen &
// Williams eq. 3.58 in moment form). s2 = 0 gives LogLik's.
func tiltedDerivs(l density, y, mu, s2 float64) (logZ, d1, d2 float64) {
	if s2 <= 0 {
		lp, d1, d2, _ := l.LogLik(y, mu)
		return lp, d1, d2
	}
	lz, m, v := tilted(l, y, mu, s2, nil, nil)
	return lz, (m - mu) / s2, (v - s2) / (s2 * s2)
}
