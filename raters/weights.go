package raters

import (
	"fmt"
	"math"
)

// Weights names the agreement weights of the weighted coefficients, as
// defined by Gwet (2014, ch. 3) and his irrCAC package (weights.gen.r). With
// category values x_1 < ... < x_q spanning [min, max], the weight of the
// pair (k, l) is
//
//	Unweighted  1 if k = l, else 0
//	Linear      1 - |x_k - x_l| / (max - min)
//	Quadratic   1 - (x_k - x_l)² / (max - min)²
//	Ordinal     1 - C(|k - l| + 1, 2) / C(q, 2)   (ranks, not values)
//	Ratio       1 - ((x_k - x_l)/(x_k + x_l))² / ((max - min)/(max + min))²
//	Radical     1 - sqrt|x_k - x_l| / sqrt(max - min)
//	Circular    1 - s_kl / max s, s_kl = sin²(π (x_k - x_l) / (max - min + 1))
//	Bipolar     1 - s_kl / max s, s_kl = (x_k - x_l)² / ((x_k + x_l - 2 min)(2 max - x_k - x_l)), s_kk = 0
//
// The weighted coefficients are those of the unweighted ones with the
// weighted counts r*_ik = Σ_l w_kl r_il in place of r_ik.
type Weights int

// The weights.
const (
	Unweighted Weights = iota
	LinearWeights
	QuadraticWeights
	OrdinalWeights
	RatioWeights
	RadicalWeights
	CircularWeights
	BipolarWeights
)

var weightNames = [...]string{"unweighted", "linear", "quadratic", "ordinal", "ratio", "radical", "circular", "bipolar"}

// String returns irrCAC's name of the weights ("custom" for a user-given
// matrix, Options.WeightMatrix).
func (w Weights) String() string {
	if w == customWeights {
		return CustomWeightsName
	}
	return enumName(weightNames[:], w, "Weights")
}

// ParseWeights returns the weights named as irrCAC names them ("unweighted",
// "linear", "quadratic", "ordinal", "ratio", "radical", "circular",
// "bipolar"; "identity" is "unweighted").
func ParseWeights(name string) (Weights, error) {
	if name == "identity" {
		return Unweighted, nil
	}
	if w, ok := enumValue[Weights](weightNames[:], name); ok {
		return w, nil
	}
	return 0, fmt.Errorf("raters: unknown weights %q (expected one of unweighted, linear, quadratic, ordinal, ratio, radical, circular, bipolar)", name)
}

// weightMat is a q × q weight matrix on given category values. Identity,
// linear and quadratic weights multiply vectors in O(q) (so that continuous
// data with many distinct values stay cheap); the others are held dense.
type weightMat struct {
	kind     Weights
	q        int
	vals     []float64
	min, max float64
	dense    []float64 // q*q, for the kinds without a fast path
}

// maxDenseWeights bounds the number of categories of the dense weight
// matrices (ordinal, ratio, radical, circular and bipolar weights).
const maxDenseWeights = 4096

func newWeightMat(kind Weights, vals []float64) (*weightMat, error) {
	q := len(vals)
	w := &weightMat{kind: kind, q: q, vals: vals}
	if q > 0 {
		w.min, w.max = vals[0], vals[q-1]
	}
	switch kind {
	case Unweighted, LinearWeights, QuadraticWeights:
		return w, nil
	case OrdinalWeights, RatioWeights, RadicalWeights, CircularWeights, BipolarWeights:
	default:
		panic("raters: unknown weights " + kind.String())
	}
	if q > maxDenseWeights {
		return nil, fmt.Errorf("raters: %s weights on %d categories (at most %d)", kind, q, maxDenseWeights)
	}
	if kind == RatioWeights && w.min < 0 {
		return nil, fmt.Errorf("raters: ratio weights need non-negative values, have %v", w.min)
	}
	w.dense = make([]float64, q*q)
	span := w.max - w.min
	switch kind {
	case OrdinalWeights:
		// max over pairs of C(|k-l|+1, 2) is C(q, 2).
		m := float64(q) * float64(q-1) / 2
		for k := 0; k < q; k++ {
			for l := 0; l < q; l++ {
				d := float64(absInt(k-l) + 1)
				w.dense[k*q+l] = 1 - d*(d-1)/2/m
			}
		}
	case RatioWeights:
		den := span / (w.max + w.min)
		den *= den
		for k := 0; k < q; k++ {
			for l := 0; l < q; l++ {
				w.dense[k*q+l] = 1 - ratioDist(vals[k], vals[l])/den
			}
		}
	case RadicalWeights:
		for k := 0; k < q; k++ {
			for l := 0; l < q; l++ {
				w.dense[k*q+l] = 1 - math.Sqrt(math.Abs(vals[k]-vals[l]))/math.Sqrt(span)
			}
		}
	case CircularWeights, BipolarWeights:
		mx := 0.0
		for k := 0; k < q; k++ {
			for l := 0; l < q; l++ {
				var s float64
				if kind == CircularWeights {
					s = math.Sin(math.Pi * (vals[k] - vals[l]) / (span + 1))
					s *= s
				} else if k != l {
					d := vals[k] - vals[l]
					s = d * d / ((vals[k] + vals[l] - 2*w.min) * (2*w.max - vals[k] - vals[l]))
				}
				w.dense[k*q+l] = s
				mx = math.Max(mx, s)
			}
		}
		for i, s := range w.dense {
			w.dense[i] = 1 - s/mx
		}
	}
	return w, nil
}

// customWeights is the kind of a user-given weight matrix
// (TableOptions.WeightMatrix); it is held dense.
const customWeights = BipolarWeights + 1

// checkWeightMatrix panics unless m is a q × q symmetric matrix of finite
// weights with 1 on the diagonal.
func checkWeightMatrix(m [][]float64, q int) {
	if len(m) != q {
		panic(fmt.Sprintf("raters: weight matrix has %d rows for %d categories", len(m), q))
	}
	for k, row := range m {
		if len(row) != q {
			panic(fmt.Sprintf("raters: weight matrix row %d has %d weights for %d categories", k, len(row), q))
		}
		for l, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				panic(fmt.Sprintf("raters: weight matrix cell (%d, %d) is %v", k, l, v))
			}
			if k == l && v != 1 {
				panic(fmt.Sprintf("raters: weight matrix diagonal cell (%d, %d) is %v, not 1", k, l, v))
			}
			if m[l][k] != v {
				panic(fmt.Sprintf("raters: weight matrix is not symmetric: cell (%d, %d) is %v, cell (%d, %d) %v", k, l, v, l, k, m[l][k]))
			}
		}
	}
}

// newCustomWeightMat holds the checked matrix m dense.
func newCustomWeightMat(m [][]float64) *weightMat {
	q := len(m)
	w := &weightMat{kind: customWeights, q: q, dense: make([]float64, 0, q*q)}
	for _, row := range m {
		w.dense = append(w.dense, row...)
	}
	return w
}

// ratioDist is Krippendorff's ratio difference ((a-b)/(a+b))², 0 when a = b.
func ratioDist(a, b float64) float64 {
	if a == b {
		return 0
	}
	d := (a - b) / (a + b)
	return d * d
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// at returns w_kl.
func (w *weightMat) at(k, l int) float64 {
	switch w.kind {
	case Unweighted:
		if k == l {
			return 1
		}
		return 0
	case LinearWeights:
		return 1 - math.Abs(w.vals[k]-w.vals[l])/(w.max-w.min)
	case QuadraticWeights:
		d := (w.vals[k] - w.vals[l]) / (w.max - w.min)
		return 1 - d*d
	}
	return w.dense[k*w.q+l]
}

// mulVec sets dst = W x. The weights are symmetric, so this is also Wᵀx.
func (w *weightMat) mulVec(dst, x []float64) {
	q := w.q
	switch w.kind {
	case Unweighted:
		copy(dst, x)
	case LinearWeights:
		// Σ_l x_l |v_k - v_l| from prefix sums over the sorted values.
		var tx, tsx float64
		for l := 0; l < q; l++ {
			tx += x[l]
			tsx += x[l] * w.vals[l]
		}
		span := w.max - w.min
		var cx, csx float64 // sums over l <= k
		for k := 0; k < q; k++ {
			cx += x[k]
			csx += x[k] * w.vals[k]
			v := w.vals[k]
			s := v*cx - csx + (tsx - csx) - v*(tx-cx)
			dst[k] = tx - s/span
		}
	case QuadraticWeights:
		var s0, s1, s2 float64
		for l := 0; l < q; l++ {
			s0 += x[l]
			s1 += x[l] * w.vals[l]
			s2 += x[l] * w.vals[l] * w.vals[l]
		}
		span := w.max - w.min
		span *= span
		for k := 0; k < q; k++ {
			v := w.vals[k]
			dst[k] = s0 - (v*v*s0-2*v*s1+s2)/span
		}
	default:
		for k := 0; k < q; k++ {
			s := 0.0
			row := w.dense[k*q : (k+1)*q]
			for l, xl := range x {
				s += row[l] * xl
			}
			dst[k] = s
		}
	}
}

// sum returns Σ_kl w_kl.
func (w *weightMat) sum() float64 {
	ones := make([]float64, w.q)
	for i := range ones {
		ones[i] = 1
	}
	dst := make([]float64, w.q)
	w.mulVec(dst, ones)
	s := 0.0
	for _, v := range dst {
		s += v
	}
	return s
}

// quad returns xᵀ W x.
func (w *weightMat) quad(x []float64) float64 {
	dst := make([]float64, w.q)
	w.mulVec(dst, x)
	s := 0.0
	for k, v := range dst {
		s += x[k] * v
	}
	return s
}
