package kernel

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Hyper is a covariance function whose hyperparameters can be learnt by
// maximising the evidence: they are exposed as unconstrained values (log
// gammas), with the derivatives of the Gram matrix in them.
type Hyper interface {
	Kernel
	// NumHyper is the number of hyperparameters for inputs of dim columns.
	NumHyper(dim int) int
	// HyperTo sets dst (length NumHyper) to the hyperparameters.
	HyperTo(dst []float64, dim int) []float64
	// WithHyper returns the kernel with the hyperparameters p.
	WithHyper(p []float64) Hyper
	// GramGradTo sets dst[k] to the derivative of the Gram matrix of x in
	// hyperparameter k (dst has NumHyper matrices, allocated when nil).
	GramGradTo(dst []*mat.SymDense, x Inputs)
}

// NumHyper is 1: log gamma.
func (RBF) NumHyper(int) int { return 1 }

// HyperTo sets dst[0] = log gamma.
func (k RBF) HyperTo(dst []float64, _ int) []float64 {
	dst[0] = math.Log(k.Gamma)
	return dst
}

// WithHyper returns the RBF kernel with gamma = exp(p[0]).
func (RBF) WithHyper(p []float64) Hyper { return RBF{Gamma: math.Exp(p[0])} }

// GramGradTo sets dst[0] to d K / d log gamma = -gamma |x_i - x_j|^2 K_ij.
func (k RBF) GramGradTo(dst []*mat.SymDense, x Inputs) {
	k.check()
	xs := rowsOf(x, "RBF")
	if dst[0] == nil {
		dst[0] = new(mat.SymDense)
	}
	reuseSym(dst[0], x.N)
	for i := 0; i < x.N; i++ {
		for j := i + 1; j < x.N; j++ {
			d2 := vecSqDist(xs[i], xs[j])
			dst[0].SetSym(i, j, -k.Gamma*d2*math.Exp(-k.Gamma*d2))
		}
	}
}

// ARD is the squared-exponential kernel with automatic relevance
// determination, one inverse length-scale per covariate (Chu & Ghahramani
// sec. 5; Neal 1996): k(x, y) = exp(-sum_d Gamma_d (x_d - y_d)^2). A
// covariate whose Gamma_d is learnt near 0 does not matter. With Gammas nil
// every Gamma_d is 1/(2D), Chu's starting point kappa = 1/D.
type ARD struct {
	Gammas []float64
}

func (k ARD) gammas(dim int) []float64 {
	if k.Gammas == nil {
		g := make([]float64, dim)
		for i := range g {
			g[i] = 0.5 / float64(dim)
		}
		return g
	}
	if len(k.Gammas) != dim {
		panic(fmt.Sprintf("multirater: ARD has %d gammas for %d covariates", len(k.Gammas), dim))
	}
	return k.Gammas
}

func ardDist(g, a, b []float64) float64 {
	s := 0.0
	for d, v := range a {
		e := v - b[d]
		s += g[d] * e * e
	}
	return s
}

// GramTo sets dst to the ARD Gram matrix of the rows of x.X.
func (k ARD) GramTo(dst *mat.SymDense, x Inputs) {
	xs := rowsOf(x, "ARD")
	reuseSym(dst, x.N)
	if x.N == 0 {
		return
	}
	g := k.gammas(len(xs[0]))
	for i := 0; i < x.N; i++ {
		dst.SetSym(i, i, 1)
		for j := i + 1; j < x.N; j++ {
			dst.SetSym(i, j, math.Exp(-ardDist(g, xs[i], xs[j])))
		}
	}
}

// CrossTo sets dst to the ARD covariances between the rows of a.X and b.X.
func (k ARD) CrossTo(dst *mat.Dense, a, b Inputs) {
	xa := rowsOf(a, "ARD")
	xb := rowsOf(b, "ARD")
	reuseDense(dst, a.N, b.N)
	if len(xa) == 0 || len(xb) == 0 {
		return
	}
	if len(xa[0]) != len(xb[0]) {
		panic("multirater: ARD.CrossTo: covariate dimensions differ")
	}
	g := k.gammas(len(xa[0]))
	for i := range xa {
		for j := range xb {
			dst.Set(i, j, math.Exp(-ardDist(g, xa[i], xb[j])))
		}
	}
}

// DiagTo sets every element of dst to 1.
func (k ARD) DiagTo(dst []float64, a Inputs) []float64 {
	dst = vecResize(dst, a.N)
	for i := range dst {
		dst[i] = 1
	}
	return dst
}

// Covariates returns true.
func (ARD) Covariates() bool { return true }

// String returns "ard" (Gammas not set) or "ard:gamma=g1,g2,...".
func (k ARD) String() string {
	if k.Gammas == nil {
		return "ard"
	}
	s := make([]string, len(k.Gammas))
	for i, g := range k.Gammas {
		s[i] = strconv.FormatFloat(g, 'g', -1, 64)
	}
	return "ard:gamma=" + strings.Join(s, ",")
}

// NumHyper is one log gamma per covariate.
func (ARD) NumHyper(dim int) int { return dim }

// HyperTo sets dst to the log gammas.
func (k ARD) HyperTo(dst []float64, dim int) []float64 {
	for d, g := range k.gammas(dim) {
		dst[d] = math.Log(g)
	}
	return dst
}

// WithHyper returns the ARD kernel with gammas exp(p).
func (ARD) WithHyper(p []float64) Hyper {
	g := make([]float64, len(p))
	for d, v := range p {
		g[d] = math.Exp(v)
	}
	return ARD{Gammas: g}
}

// GramGradTo sets dst[d] to d K / d log gamma_d = -gamma_d (x_d - y_d)^2 K.
func (k ARD) GramGradTo(dst []*mat.SymDense, x Inputs) {
	xs := rowsOf(x, "ARD")
	if x.N == 0 {
		return
	}
	g := k.gammas(len(xs[0]))
	for d := range g {
		if dst[d] == nil {
			dst[d] = new(mat.SymDense)
		}
		reuseSym(dst[d], x.N)
	}
	for i := 0; i < x.N; i++ {
		for j := i + 1; j < x.N; j++ {
			kij := math.Exp(-ardDist(g, xs[i], xs[j]))
			for d := range g {
				e := xs[i][d] - xs[j][d]
				dst[d].SetSym(i, j, -g[d]*e*e*kij)
			}
		}
	}
}

// CrossHyper is a Hyper kernel on covariates that also gives the
// derivatives of its cross-covariances in its hyperparameters, and whose
// diagonal does not depend on them (RBF, ARD): what the gradient of an
// inducing-point prior needs (K_nP instead of the N×N Gram matrix).
type CrossHyper interface {
	Hyper
	// CrossGradTo sets dst[k] (a.N×b.N, allocated when nil) to the
	// derivative of the cross-covariances between the rows of a.X and b.X
	// in hyperparameter k.
	CrossGradTo(dst []*mat.Dense, a, b Inputs)
}

// CrossGradTo sets dst[0] to d K(a, b) / d log gamma = -gamma |a_i - b_j|^2 K_ij.
func (k RBF) CrossGradTo(dst []*mat.Dense, a, b Inputs) {
	k.check()
	xa, xb := rowsOf(a, "RBF"), rowsOf(b, "RBF")
	if dst[0] == nil {
		dst[0] = new(mat.Dense)
	}
	reuseDense(dst[0], a.N, b.N)
	for i := range xa {
		for j := range xb {
			d2 := vecSqDist(xa[i], xb[j])
			dst[0].Set(i, j, -k.Gamma*d2*math.Exp(-k.Gamma*d2))
		}
	}
}

// CrossGradTo sets dst[d] to d K(a, b) / d log gamma_d = -gamma_d (a_d - b_d)^2 K.
func (k ARD) CrossGradTo(dst []*mat.Dense, a, b Inputs) {
	xa, xb := rowsOf(a, "ARD"), rowsOf(b, "ARD")
	if len(xa) == 0 || len(xb) == 0 {
		return
	}
	g := k.gammas(len(xa[0]))
	for d := range g {
		if dst[d] == nil {
			dst[d] = new(mat.Dense)
		}
		reuseDense(dst[d], a.N, b.N)
	}
	for i := range xa {
		for j := range xb {
			kij := math.Exp(-ardDist(g, xa[i], xb[j]))
			for d := range g {
				e := xa[i][d] - xb[j][d]
				dst[d].Set(i, j, -g[d]*e*e*kij)
			}
		}
	}
}
