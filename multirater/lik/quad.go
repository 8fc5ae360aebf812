package lik

import (
	"math"

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

// tiltedMode returns the mode of g(f) = log p(y | f) - (f - mu)^2/(2 s2)
// and g”(mode), by Newton's method with step halving (falling back to the
// cavity's curvature where g is not concave).
func tiltedMode(l density, y, mu, s2 float64) (mode, g2 float64) {
	f := mu
	logp := logpOf(l, y)
	lp, d1, d2, _ := l.LogLik(y, f)
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
		lp, d1, d2, _ = l.LogLik(y, f)
		g = lp - (f-mu)*(f-mu)/(2*s2)
		if !moved || math.Abs(step) < 1e-10*(1+math.Abs(f)) {
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
// distribution's mean and variance, by Gauss-Legendre quadrature on both
// sides of the tilted mode (Jensen et al. sec. 4.2 solve the same
// one-dimensional integrals numerically). When grad is not nil, gradTo (the
// gradient in the likelihood's parameters of log p(y | f)) is averaged
// over the tilted distribution into grad: d log Z / d theta =
// E_tilted[d log p / d theta].
func tilted(l density, y, mu, s2 float64, grad []float64, gradTo func(dst []float64, y, f float64)) (logZ, mean, vr float64) {
	m, g2 := tiltedMode(l, y, mu, s2)
	sc := 1 / math.Sqrt(-g2)
	lp := logpOf(l, y)
	g := func(f float64) float64 { return lp(f) - (f-mu)*(f-mu)/(2*s2) }
	top := g(m)
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
	type panel struct{ from, len float64 }
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
	var lw [3 * quadNodes]float64
	var fs [3 * quadNodes]float64
	nf := 0
	for _, pn := range panels {
		for i := range legX {
			fs[nf] = pn.from + pn.len*legX[i]
			lw[nf] = g(fs[nf]) - top + math.Log(math.Abs(pn.len)*legW[i])
			nf++
		}
	}
	var z, s1, sq float64
	var buf []float64
	if grad != nil {
		for k := range grad {
			grad[k] = 0
		}
		buf = make([]float64, len(grad))
	}
	for i, f := range fs[:nf] {
		w := math.Exp(lw[i])
		if !(w > 0) {
			continue
		}
		d := f - m
		z += w
		s1 += w * d
		sq += w * d * d
		if grad != nil {
			gradTo(buf, y, f)
			for k := range buf {
				grad[k] += w * buf[k]
			}
		}
	}
	mean = m + s1/z
	vr = sq/z - (s1/z)*(s1/z)
	for k := range grad {
		grad[k] /= z
	}
	logZ = top + math.Log(z) - 0.5*math.Log(2*math.Pi*s2)
	return logZ, mean, vr
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
