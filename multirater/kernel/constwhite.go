package kernel

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// Const is the constant (bias) kernel k(x_i, x_j) = V for every pair of
// items, new items included: a common offset of all latent values with
// prior variance V (GPflow's Constant; Kim & Ghahramani eq. 11's v1). V must
// be positive. As a term without a value ("const") V is learnt by the
// evidence, starting at 1.
type Const struct {
	V float64
}

// White is the white-noise kernel k(x_i, x_j) = V if i and j are the same
// item and 0 otherwise: an independent effect per item with prior variance
// V (GPflow's White; Kim & Ghahramani eq. 11's v2, the latent noise; V = 1
// is Identity). New items are distinct items: their cross covariances are
// 0. As a term without a value ("white") V is learnt, starting at 1.
type White struct {
	V float64
}

func (k Const) check() {
	if !(k.V > 0) || math.IsInf(k.V, 1) {
		panic(fmt.Sprintf("multirater: Const kernel: V = %v must be positive", k.V))
	}
}

func (k White) check() {
	if !(k.V > 0) || math.IsInf(k.V, 1) {
		panic(fmt.Sprintf("multirater: White kernel: V = %v must be positive", k.V))
	}
}

// GramTo sets every entry of dst to V.
func (k Const) GramTo(dst *mat.SymDense, x Inputs) {
	k.check()
	reuseSym(dst, x.N)
	for i := 0; i < x.N; i++ {
		for j := i; j < x.N; j++ {
			dst.SetSym(i, j, k.V)
		}
	}
}

// CrossTo sets every entry of dst to V.
func (k Const) CrossTo(dst *mat.Dense, a, b Inputs) {
	k.check()
	reuseDense(dst, a.N, b.N)
	for i := 0; i < a.N; i++ {
		for j := 0; j < b.N; j++ {
			dst.Set(i, j, k.V)
		}
	}
}

// DiagTo sets dst[i] = V.
func (k Const) DiagTo(dst []float64, a Inputs) []float64 {
	k.check()
	dst = vecResize(dst, a.N)
	for i := range dst {
		dst[i] = k.V
	}
	return dst
}

// Covariates returns false.
func (Const) Covariates() bool { return false }

func (k Const) String() string { return "const:" + strconv.FormatFloat(k.V, 'g', -1, 64) }

// NumHyper is 1: log V.
func (Const) NumHyper(int) int { return 1 }

// HyperTo sets dst[0] = log V.
func (k Const) HyperTo(dst []float64, _ int) []float64 {
	dst[0] = math.Log(k.V)
	return dst
}

// WithHyper returns the kernel with V = exp(p[0]).
func (Const) WithHyper(p []float64) Hyper { return Const{V: math.Exp(p[0])} }

// GramGradTo sets dst[0] to d K / d log V = K.
func (k Const) GramGradTo(dst []*mat.SymDense, x Inputs) {
	if dst[0] == nil {
		dst[0] = new(mat.SymDense)
	}
	k.GramTo(dst[0], x)
}

// GramTo sets dst to V I.
func (k White) GramTo(dst *mat.SymDense, x Inputs) {
	k.check()
	reuseSym(dst, x.N)
	for i := 0; i < x.N; i++ {
		for j := i; j < x.N; j++ {
			dst.SetSym(i, j, 0)
		}
		dst.SetSym(i, i, k.V)
	}
}

// CrossTo sets dst to zero: new items are distinct items.
func (k White) CrossTo(dst *mat.Dense, a, b Inputs) {
	k.check()
	reuseDense(dst, a.N, b.N)
	dst.Zero()
}

// DiagTo sets dst[i] = V.
func (k White) DiagTo(dst []float64, a Inputs) []float64 {
	k.check()
	dst = vecResize(dst, a.N)
	for i := range dst {
		dst[i] = k.V
	}
	return dst
}

// Covariates returns false.
func (White) Covariates() bool { return false }

func (k White) String() string { return "white:" + strconv.FormatFloat(k.V, 'g', -1, 64) }

// NumHyper is 1: log V.
func (White) NumHyper(int) int { return 1 }

// HyperTo sets dst[0] = log V.
func (k White) HyperTo(dst []float64, _ int) []float64 {
	dst[0] = math.Log(k.V)
	return dst
}

// WithHyper returns the kernel with V = exp(p[0]).
func (White) WithHyper(p []float64) Hyper { return White{V: math.Exp(p[0])} }

// GramGradTo sets dst[0] to d K / d log V = K.
func (k White) GramGradTo(dst []*mat.SymDense, x Inputs) {
	if dst[0] == nil {
		dst[0] = new(mat.SymDense)
	}
	k.GramTo(dst[0], x)
}

// parseVariance reads the V of const:V or white:V.
func parseVariance(name, args string) (float64, error) {
	v, err := strconv.ParseFloat(args, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 1) {
		return 0, fmt.Errorf("%s variance %q must be a positive number (or %s alone: learnt)", name, args, name)
	}
	return v, nil
}
