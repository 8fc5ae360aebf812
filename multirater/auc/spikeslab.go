package auc

import (
	"context"
	"fmt"
	"math"

	"concord/multirater"
	"concord/multirater/ep"
)

// Prior names the prior of linear scores' coefficients.
type Prior int

// ParsePrior reads a prior's name ("gaussian" or "spike-slab").
func ParsePrior(s string) (Prior, error) { return priors().Parse(s) }

func (p Prior) String() string { return priors().String(p) }

// priors is the table of the Prior names.
func priors() multirater.Enum[Prior] {
	return multirater.Enum[Prior]{Type: "Prior", Names: []string{"gaussian", "spike-slab"},
		Unknown: "auc: unknown prior %q (want gaussian or spike-slab)"}
}

const (
	// Gaussian is theta ~ N(0, V I) (Ridgway et al. sec. 2.3).
	Gaussian Prior = iota
	// SpikeSlab is theta_j ~ p N(0, V) + (1 - p) N(0, v0) independently
	// (sec. 2.4 and 3.4): each covariate is in the model (the slab) with
	// prior probability p.
	SpikeSlab
)

// MarshalText writes the prior's name.
func (p Prior) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a prior's name.
func (p *Prior) UnmarshalText(b []byte) error { return priors().Unmarshal(b, p) }

// SpikeSlabOptions are the spike-and-slab prior's parameters; the slab's
// variance is Options.PriorScale.
type SpikeSlabOptions struct {
	// Inclusion is p, each covariate's prior inclusion probability; 0
	// means 0.5.
	Inclusion float64
	// SpikeVar is v0, the spike's variance: 0 (the default) is a point
	// mass at 0, which EP handles exactly (Ridgway et al. sec. 3.4: "taking
	// v0 to be exactly zero also yields stable results"); a positive v0 <
	// PriorScale absorbs negligible effects (Rockova & George 2013).
	SpikeVar float64
}

// spikeSlabSite is the prior site of one coefficient in the whitened
// coordinate x = theta_j / sqrt(V) of EP's base prior N(0, 1) (the slab):
// the ratio of the spike-and-slab density to the slab's,
//
//	t(x) = p + (1 - p) N(x; 0, u0) / N(x; 0, 1),  u0 = v0 / V in [0, 1),
//
// (Ridgway et al. sec. 3.4 after Hernandez-Lobato et al. 2013, with the
// Bernoulli variable summed out). Under a cavity N(m, v),
//
//	Z = p + B,  B = (1 - p) D^-1/2 exp(-k m^2/2),  D = u0 + v (1 - u0),  k = (1 - u0)/D,
//
// and with rho = B/Z (the spike's posterior responsibility)
//
//	d log Z/dm = -rho k m,  d^2 log Z/dm^2 = -rho k + rho (1 - rho) k^2 m^2,
//
// whose second form turns positive for |m| large: negative site
// precisions occur and ep.RunPairsCoords keeps them while the posterior
// is proper. The covariate's posterior inclusion probability is 1 - rho
// at the final cavity.
type spikeSlabSite struct {
	p, u0 float64
}

// parts returns log Z, rho and k at the cavity N(m, v).
func (s spikeSlabSite) parts(m, v float64) (logZ, rho, k float64) {
	d := s.u0 + v*(1-s.u0)
	k = (1 - s.u0) / d
	lb := math.Log1p(-s.p) - 0.5*math.Log(d) - 0.5*k*m*m
	la := math.Log(s.p)
	hi, lo := la, lb
	if lb > la {
		hi, lo = lb, la
	}
	logZ = hi + math.Log1p(math.Exp(lo-hi))
	return logZ, math.Exp(lb - logZ), k
}

// LogLik returns log t(x) and its first two derivatives (d3 is not
// provided: 0). For u0 = 0 it is log p off 0.
func (s spikeSlabSite) LogLik(_, x float64) (lp, d1, d2, d3 float64) {
	if s.u0 == 0 {
		return math.Log(s.p), 0, 0, 0
	}
	a := 1/s.u0 - 1
	lb := math.Log1p(-s.p) - 0.5*math.Log(s.u0) - 0.5*a*x*x
	la := math.Log(s.p)
	hi, lo := la, lb
	if lb > la {
		hi, lo = lb, la
	}
	lp = hi + math.Log1p(math.Exp(lo-hi))
	rho := math.Exp(lb - lp)
	return lp, -rho * a * x, -rho*a + rho*(1-rho)*a*a*x*x, 0
}

// Tilted returns log Z and its derivatives in m (see the type).
func (s spikeSlabSite) Tilted(_, m, v float64) (logZ, d1, d2 float64) {
	logZ, rho, k := s.parts(m, v)
	return logZ, -rho * k * m, -rho*k + rho*(1-rho)*k*k*m*m
}

// coordSites returns the spike-and-slab prior sites of the r coefficients.
func coordSites(r int, o *Options) []ep.CoordSite {
	l := spikeSlabSite{p: o.SpikeSlab.Inclusion, u0: o.SpikeSlab.SpikeVar / o.PriorScale}
	cs := make([]ep.CoordSite, r)
	for k := range cs {
		cs[k] = ep.CoordSite{K: k, Lik: l}
	}
	return cs
}

// Path fits the spike-and-slab model at each spike variance v0 of
// spikeVars (Ridgway et al. sec. 5, Figure 3a: the regularisation plot of
// the coefficients as v0 goes to 0), with the other options as given
// (opts.Prior is set to SpikeSlab). When opts.Gamma is 0, gamma is chosen
// by cross-validation at the first v0 and kept along the path.
func Path(ctx context.Context, d Data, opts Options, spikeVars []float64) ([]*Result, error) {
	opts.Prior = SpikeSlab
	out := make([]*Result, 0, len(spikeVars))
	for _, v0 := range spikeVars {
		opts.SpikeSlab.SpikeVar = v0
		r, err := Fit(ctx, d, opts)
		if err != nil {
			return out, fmt.Errorf("auc: path at v0 = %v: %w", v0, err)
		}
		opts.Gamma = r.Gamma
		out = append(out, r)
	}
	return out, nil
}
