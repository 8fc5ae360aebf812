package lik

import (
	"fmt"
	"math"
)

// Censored is a bounded likelihood L for a rating at a bound of the scale,
// read as censored there: a rating at the lower bound (Y = 0) has the
// probability P(y <= Delta | f) and one at the upper bound (Y = 1)
// P(y >= 1 - Delta | f), with Delta the data's resolution (half the
// smallest gap between values). None of the bounded likelihoods gives a
// value exactly at a bound positive finite density; a slider or a 0-100
// score at 0 says that the rater's value was at most the resolution.
// Censored shares L's parameters. Its derivatives in f and in the
// parameters are five-point central differences of log P (step 1e-3; the
// probabilities are smooth in f and the parameters, and their logs are
// computed from L's CDF).
type Censored struct {
	L     Bounded
	Delta float64
}

// Name is L's name.
func (c *Censored) Name() string { return c.L.Name() }

func (c *Censored) logp(y, f float64) float64 {
	var p float64
	switch y {
	case 0:
		p = c.L.CDF(c.Delta, f)
	case 1:
		p = 1 - c.L.CDF(1-c.Delta, f)
	default:
		panic(fmt.Sprintf("multirater: Censored: value %v is neither 0 nor 1", y))
	}
	return math.Log(math.Max(p, 1e-300))
}

const censStep = 1e-3

// diffs returns h(x) and its first three derivatives by five-point
// central differences.
func diffs(h func(x float64) float64, x float64) (v, d1, d2, d3 float64) {
	e := censStep
	m2, m1, z, p1, p2 := h(x-2*e), h(x-e), h(x), h(x+e), h(x+2*e)
	d1 = (m2 - 8*m1 + 8*p1 - p2) / (12 * e)
	d2 = (-m2 + 16*m1 - 30*z + 16*p1 - p2) / (12 * e * e)
	d3 = (-m2 + 2*m1 - 2*p1 + p2) / (2 * e * e * e)
	return z, d1, d2, d3
}

// LogLik returns log P and its derivatives in f.
func (c *Censored) LogLik(y, f float64) (lp, d1, d2, d3 float64) {
	return diffs(func(x float64) float64 { return c.logp(y, x) }, f)
}

// Tilted returns the tilted normaliser by quadrature.
func (c *Censored) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	return tiltedDerivs(c, y, mu, s2)
}

// Mean and CDF are L's (the rating scale's distribution).
func (c *Censored) Mean(f float64) float64           { return c.L.Mean(f) }
func (c *Censored) CDF(y, f float64) float64         { return c.L.CDF(y, f) }
func (c *Censored) NumParams() int                   { return c.L.NumParams() }
func (c *Censored) ParamsTo(dst []float64) []float64 { return c.L.ParamsTo(dst) }
func (c *Censored) SetParams(p []float64)            { c.L.SetParams(p) }

// LogLikGradTo sets dlp, dd1, dd2 to the derivatives in each parameter of
// log P and its first two derivatives in f.
func (c *Censored) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	p := c.L.ParamsTo(make([]float64, c.L.NumParams()))
	q := append([]float64(nil), p...)
	for k := range p {
		at := func(x float64) (float64, float64, float64) {
			q[k] = x
			c.L.SetParams(q)
			v, a, b, _ := c.LogLik(y, f)
			return v, a, b
		}
		e := censStep
		v1, a1, b1 := at(p[k] - 2*e)
		v2, a2, b2 := at(p[k] - e)
		v3, a3, b3 := at(p[k] + e)
		v4, a4, b4 := at(p[k] + 2*e)
		q[k] = p[k]
		dlp[k] = (v1 - 8*v2 + 8*v3 - v4) / (12 * e)
		dd1[k] = (a1 - 8*a2 + 8*a3 - a4) / (12 * e)
		dd2[k] = (b1 - 8*b2 + 8*b3 - b4) / (12 * e)
	}
	c.L.SetParams(p)
}

// TiltedGradTo sets dst to the gradient of Tilted's log Z in the
// parameters, E_tilted[d log P / d theta].
func (c *Censored) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	np := c.L.NumParams()
	grad := func(g []float64, y, f float64) {
		p := c.L.ParamsTo(make([]float64, np))
		q := append([]float64(nil), p...)
		for k := range p {
			e := censStep
			val := func(x float64) float64 { q[k] = x; c.L.SetParams(q); return c.logp(y, f) }
			g[k] = (val(p[k]-2*e) - 8*val(p[k]-e) + 8*val(p[k]+e) - val(p[k]+2*e)) / (12 * e)
			q[k] = p[k]
		}
		c.L.SetParams(p)
	}
	if s2 <= 0 {
		grad(dst, y, mu)
		return dst
	}
	tilted(c, y, mu, s2, dst, grad)
	return dst
}
