// Package kernel holds the covariance functions of the item features and
// their grammar (identity, linear, rbf:gamma=G and sums). It imports nothing
// of concord.
package kernel

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Inputs are the items a kernel is evaluated on: their number and, for
// kernels that use them, their numeric covariates (row i of X describes item
// i). X may be nil for kernels that need no covariates (Identity).
type Inputs struct {
	N int
	X mat.Matrix
}

// Kernel is a covariance function between items: the Gaussian-process prior
// of the latent consensus is m ~ N(0, C) with C_ij = k(x_i, x_j) (Rogers et
// al. sec. 2.2).
//
// The samplers need only the Gram matrix C of the items being fitted, so any
// positive semidefinite matrix can be used in its place (a text kernel built
// elsewhere, a sum of Gram matrices); prediction for new items needs only the
// cross-covariances k(x_new, x) and the prior variances k(x_new, x_new). A
// Kernel produces exactly these three things from Inputs.
type Kernel interface {
	// GramTo sets dst to the x.N×x.N matrix k(x_i, x_j). dst must be empty
	// (it is then resized) or of that size.
	GramTo(dst *mat.SymDense, x Inputs)
	// CrossTo sets dst to the a.N×b.N matrix k(a_i, b_j) between new items a
	// and training items b. New items are distinct items: for Identity the
	// result is zero. dst must be empty or of that size.
	CrossTo(dst *mat.Dense, a, b Inputs)
	// DiagTo sets dst[i] = k(a_i, a_i) and returns dst (allocated when nil
	// or too short).
	DiagTo(dst []float64, a Inputs) []float64
	// Covariates reports whether the kernel reads Inputs.X.
	Covariates() bool
	// String returns the kernel's specification, which ParseKernel reads
	// back.
	String() string
}

// Identity is the kernel k(x_i, x_j) = 1 if i and j are the same item and 0
// otherwise: no covariate information, Johnson's (1996) model (Rogers et
// al. sec. 2.2, C = I).
type Identity struct{}

// GramTo sets dst to the identity matrix.
func (Identity) GramTo(dst *mat.SymDense, x Inputs) {
	reuseSym(dst, x.N)
	for i := 0; i < x.N; i++ {
		dst.SetSym(i, i, 1)
	}
}

// CrossTo sets dst to zero: new items share nothing with the training items.
func (Identity) CrossTo(dst *mat.Dense, a, b Inputs) {
	reuseDense(dst, a.N, b.N)
}

// DiagTo sets every element of dst to 1.
func (Identity) DiagTo(dst []float64, a Inputs) []float64 {
	dst = vecResize(dst, a.N)
	for i := range dst {
		dst[i] = 1
	}
	return dst
}

// Covariates returns false.
func (Identity) Covariates() bool { return false }

func (Identity) String() string { return "identity" }

// Linear is the linear kernel on covariate vectors scaled to unit Euclidean
// norm, k(x_i, x_j) = x_i^T x_j / (|x_i| |x_j|) (Rogers et al. sec. 4 and 5:
// "each input vector is normalised to have unit norm"). An item whose
// covariates are all zero has a zero row and column. With fewer covariates
// than items C is singular, which the samplers handle.
type Linear struct{}

// GramTo sets dst to the Gram matrix of the unit-normalised rows of x.X.
func (Linear) GramTo(dst *mat.SymDense, x Inputs) {
	u := unitRows(x, "Linear")
	reuseSym(dst, x.N)
	for i := 0; i < x.N; i++ {
		ri := u.RawRowView(i)
		for j := i; j < x.N; j++ {
			dst.SetSym(i, j, vecDot(ri, u.RawRowView(j)))
		}
	}
}

// CrossTo sets dst to the inner products of the unit-normalised rows of a.X
// and b.X.
func (Linear) CrossTo(dst *mat.Dense, a, b Inputs) {
	ua := unitRows(a, "Linear")
	ub := unitRows(b, "Linear")
	if ua.RawMatrix().Cols != ub.RawMatrix().Cols {
		panic("multirater: Linear.CrossTo: covariate dimensions differ")
	}
	reuseDense(dst, a.N, b.N)
	dst.Mul(ua, ub.T())
}

// DiagTo sets dst[i] to 1, or 0 for an item whose covariates are all zero.
func (Linear) DiagTo(dst []float64, a Inputs) []float64 {
	u := unitRows(a, "Linear")
	dst = vecResize(dst, a.N)
	for i := range dst {
		r := u.RawRowView(i)
		dst[i] = vecDot(r, r)
	}
	return dst
}

// Covariates returns true.
func (Linear) Covariates() bool { return true }

func (Linear) String() string { return "linear" }

// RBF is the radial basis (squared exponential) kernel
// k(x_i, x_j) = exp(-Gamma |x_i - x_j|^2) on the raw covariates (Rogers et
// al. eq. 20). Gamma must be positive.
type RBF struct {
	Gamma float64
}

// GramTo sets dst to the RBF Gram matrix of the rows of x.X.
func (k RBF) GramTo(dst *mat.SymDense, x Inputs) {
	k.check()
	xs := rowsOf(x, "RBF")
	reuseSym(dst, x.N)
	for i := 0; i < x.N; i++ {
		dst.SetSym(i, i, 1)
		for j := i + 1; j < x.N; j++ {
			dst.SetSym(i, j, math.Exp(-k.Gamma*vecSqDist(xs[i], xs[j])))
		}
	}
}

// CrossTo sets dst to the RBF covariances between the rows of a.X and b.X.
func (k RBF) CrossTo(dst *mat.Dense, a, b Inputs) {
	k.check()
	xa := rowsOf(a, "RBF")
	xb := rowsOf(b, "RBF")
	if len(xa) > 0 && len(xb) > 0 && len(xa[0]) != len(xb[0]) {
		panic("multirater: RBF.CrossTo: covariate dimensions differ")
	}
	reuseDense(dst, a.N, b.N)
	for i := range xa {
		for j := range xb {
			dst.Set(i, j, math.Exp(-k.Gamma*vecSqDist(xa[i], xb[j])))
		}
	}
}

// DiagTo sets every element of dst to 1.
func (k RBF) DiagTo(dst []float64, a Inputs) []float64 {
	k.check()
	dst = vecResize(dst, a.N)
	for i := range dst {
		dst[i] = 1
	}
	return dst
}

// Covariates returns true.
func (RBF) Covariates() bool { return true }

func (k RBF) String() string { return "rbf:gamma=" + strconv.FormatFloat(k.Gamma, 'g', -1, 64) }

func (k RBF) check() {
	if !(k.Gamma > 0) || math.IsInf(k.Gamma, 1) {
		panic(fmt.Sprintf("multirater: RBF gamma %v must be positive and finite", k.Gamma))
	}
}

// Sum is the sum of kernels, k(x, x') = sum_i k_i(x, x'), a valid kernel for
// covariates of several kinds (Rogers et al. sec. 4 suggest combining
// covariance functions). Every term sees the same Inputs.
type Sum []Kernel

// GramTo sets dst to the sum of the terms' Gram matrices.
func (s Sum) GramTo(dst *mat.SymDense, x Inputs) {
	s.check()
	reuseSym(dst, x.N)
	var t mat.SymDense
	for _, k := range s {
		t.Reset()
		k.GramTo(&t, x)
		dst.AddSym(dst, &t)
	}
}

// CrossTo sets dst to the sum of the terms' cross-covariances.
func (s Sum) CrossTo(dst *mat.Dense, a, b Inputs) {
	s.check()
	reuseDense(dst, a.N, b.N)
	var t mat.Dense
	for _, k := range s {
		t.Reset()
		k.CrossTo(&t, a, b)
		dst.Add(dst, &t)
	}
}

// DiagTo sets dst to the sum of the terms' prior variances.
func (s Sum) DiagTo(dst []float64, a Inputs) []float64 {
	s.check()
	dst = vecResize(dst, a.N)
	for i := range dst {
		dst[i] = 0
	}
	t := make([]float64, a.N)
	for _, k := range s {
		t = k.DiagTo(t, a)
		for i, v := range t {
			dst[i] += v
		}
	}
	return dst
}

// Covariates reports whether any term reads covariates.
func (s Sum) Covariates() bool {
	for _, k := range s {
		if k.Covariates() {
			return true
		}
	}
	return false
}

func (s Sum) String() string {
	parts := make([]string, len(s))
	for i, k := range s {
		parts[i] = k.String()
	}
	return strings.Join(parts, "+")
}

func (s Sum) check() {
	if len(s) == 0 {
		panic("multirater: empty Sum kernel")
	}
}

// ParseKernel reads a covariate kernel, the terms of ParseSpec's grammar
// that read no texts: "identity", "linear",
// "rbf:gamma=G" ("rbf" alone means gamma = 1), or a sum of these joined with
// "+", e.g. "rbf:gamma=0.5+linear". Names are case-insensitive and spaces
// around terms are ignored. The error says what was expected.
func ParseKernel(spec string) (Kernel, error) {
	ks, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return CovKernel(ks, spec)
}

// CovKernel is the covariance function of ks, the parse of spec (as
// ParseKernel, for a caller that holds the parse): one term, or the sum
// of the terms. A text term is an error.
func CovKernel(ks Spec, spec string) (Kernel, error) {
	var terms Sum
	for _, t := range ks {
		if t.Kind != CovTerm {
			return nil, fmt.Errorf("kernel %q: %s reads item texts (%s)", spec, t, covWant)
		}
		terms = append(terms, t.Cov)
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return terms, nil
}

// covWant is what a covariate kernel term may be.
const covWant = `expected identity, linear, rbf:gamma=G, ard, const:V, white:V or a sum such as "rbf:gamma=1+linear"`

// parseCovTerm reads one term of a covariate kernel: identity, linear,
// rbf[:gamma=G], ard[:gamma=G1,G2,...], const[:V] or white[:V]. Its errors do not name the whole specification.
func parseCovTerm(t string) (Kernel, error) {
	name, args, hasArgs := strings.Cut(t, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	switch name {
	case "identity", "linear":
		if hasArgs {
			return nil, fmt.Errorf("%s takes no parameters (%s)", name, covWant)
		}
		if name == "identity" {
			return Identity{}, nil
		}
		return Linear{}, nil
	case "const", "white":
		v := 1.0
		if hasArgs {
			var err error
			if v, err = parseVariance(name, strings.TrimSpace(args)); err != nil {
				return nil, err
			}
		}
		if name == "const" {
			return Const{variance{v}}, nil
		}
		return White{variance{v}}, nil
	case "ard":
		if !hasArgs {
			return ARD{}, nil
		}
		key, val, ok := strings.Cut(args, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "gamma") {
			return nil, fmt.Errorf("ard parameter %q: expected gamma=G1,G2,... (one per covariate) or none (learnt)", args)
		}
		var g []float64
		for _, f := range strings.Split(val, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 1) {
				return nil, fmt.Errorf("ard gamma %q must be a positive number", strings.TrimSpace(f))
			}
			g = append(g, v)
		}
		return ARD{Gammas: g}, nil
	case "rbf":
		k := RBF{Gamma: 1}
		if hasArgs {
			key, val, ok := strings.Cut(args, "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(key), "gamma") {
				return nil, fmt.Errorf("rbf parameter %q: expected gamma=G", args)
			}
			g, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if err != nil || !(g > 0) || math.IsInf(g, 1) {
				return nil, fmt.Errorf("rbf gamma %q must be a positive number", strings.TrimSpace(val))
			}
			k.Gamma = g
		}
		return k, nil
	}
	return nil, fmt.Errorf("unknown kernel %q (%s)", name, covWant)
}

// unitRows returns the rows of x.X scaled to unit norm (zero rows stay
// zero).
func unitRows(x Inputs, who string) *mat.Dense {
	rows := rowsOf(x, who)
	d := 0
	if len(rows) > 0 {
		d = len(rows[0])
	}
	u := mat.NewDense(max(x.N, 1), max(d, 1), nil)
	for i, r := range rows {
		nrm := math.Sqrt(vecDot(r, r))
		if nrm == 0 {
			continue
		}
		out := u.RawRowView(i)
		for j, v := range r {
			out[j] = v / nrm
		}
	}
	return u
}

// rowsOf copies the covariate rows of x, checking that they exist, match N
// and are finite.
func rowsOf(x Inputs, who string) [][]float64 {
	if x.X == nil {
		panic("multirater: " + who + " kernel needs covariates (Inputs.X is nil)")
	}
	r, c := x.X.Dims()
	if r != x.N {
		panic(fmt.Sprintf("multirater: %s kernel: Inputs.X has %d rows, Inputs.N is %d", who, r, x.N))
	}
	rows := make([][]float64, r)
	for i := range rows {
		rows[i] = make([]float64, c)
		for j := range rows[i] {
			v := x.X.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				panic(fmt.Sprintf("multirater: %s kernel: covariate (%d, %d) is %v", who, i, j, v))
			}
			rows[i][j] = v
		}
	}
	return rows
}

func vecSqDist(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		d := v - b[i]
		s += d * d
	}
	return s
}

func vecDot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func vecResize(dst []float64, n int) []float64 {
	if cap(dst) < n {
		return make([]float64, n)
	}
	return dst[:n]
}

// reuseSym makes dst an n×n zero matrix, panicking if it is non-empty with
// another size.
func reuseSym(dst *mat.SymDense, n int) {
	if n <= 0 {
		panic("multirater: kernel on no items")
	}
	if dst.IsEmpty() {
		dst.ReuseAsSym(n)
		return
	}
	if dst.SymmetricDim() != n {
		panic(fmt.Sprintf("multirater: destination is %d×%d, want %d×%d", dst.SymmetricDim(), dst.SymmetricDim(), n, n))
	}
	dst.Zero()
}

func reuseDense(dst *mat.Dense, r, c int) {
	if r <= 0 || c <= 0 {
		panic("multirater: kernel on no items")
	}
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
		return
	}
	if rr, cc := dst.Dims(); rr != r || cc != c {
		panic(fmt.Sprintf("multirater: destination is %d×%d, want %d×%d", rr, cc, r, c))
	}
	dst.Zero()
}
