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
	variance
}

// White is the white-noise kernel k(x_i, x_j) = V if i and j are the same
// item and 0 otherwise: an independent effect per item with prior variance
// V (GPflow's White; Kim & Ghahramani eq. 11's v2, the latent noise; V = 1
// is Identity). New items are distinct items: their cross covariances are
// 0. As a term without a value ("white") V is learnt, starting at 1.
type White struct {
	variance
}

// variance is what Const and White share: their one parameter, the prior
// variance V > 0, its diagonal and its hyperparameter log V, in which the
// Gram matrix's derivative is the Gram matrix itself (K = V P with P fixed:
// all ones for Const, the identity for White).
type variance struct {
	V float64
}

func (v variance) check() {
	if !(v.V > 0) || math.IsInf(v.V, 1) {
		panic(fmt.Sprintf("multirater: const or white kernel: V = %v must be positive", v.V))
	}
}

// DiagTo sets dst[i] = V.
func (v variance) DiagTo(dst []float64, a Inputs) []float64 {
	v.check()
	dst = vecResize(dst, a.N)
	for i := range dst {
		dst[i] = v.V
	}
	return dst
}

// Covariates returns false.
func (variance) Covariates() bool { return false }

// NumHyper is 1: log V.
func (variance) NumHyper(int) int { return 1 }

// HyperTo sets dst[0] = log V.
func (v variance) HyperTo(dst []float64, _ int) []float64 {
	dst[0] = math.Log(v.V)
	return dst
}

// spec is the kernel's specification, name:V.
func (v variance) spec(name string) string { return name + ":" + strconv.FormatFloat(v.V, 'g', -1, 64) }

// gradTo is where GramGradTo writes d K / d log V = K: dst[0], allocated
// when nil.
func gradTo(dst []*mat.SymDense) *mat.SymDense {
	if dst[0] == nil {
		dst[0] = new(mat.SymDense)
	}
	return dst[0]
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

func (k Const) String() string { return k.spec("const") }

// WithHyper returns the kernel with V = exp(p[0]).
func (Const) WithHyper(p []float64) Hyper { return Const{variance{math.Exp(p[0])}} }

// GramGradTo sets dst[0] to d K / d log V = K.
func (k Const) GramGradTo(dst []*mat.SymDense, x Inputs) { k.GramTo(gradTo(dst), x) }

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

func (k White) String() string { return k.spec("white") }

// WithHyper returns the kernel with V = exp(p[0]).
func (White) WithHyper(p []float64) Hyper { return White{variance{math.Exp(p[0])}} }

// GramGradTo sets dst[0] to d K / d log V = K.
func (k White) GramGradTo(dst []*mat.SymDense, x Inputs) { k.GramTo(gradTo(dst), x) }

// parseVariance reads the V of const:V or white:V.
func parseVariance(name, args string) (float64, error) {
	v, err := strconv.ParseFloat(args, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 1) {
		return 0, fmt.Errorf("%s variance %q must be a positive number (or %s alone: learnt)", name, args, name)
	}
	return v, nil
}
