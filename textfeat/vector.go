package textfeat

import (
	"fmt"
	"math"
)

// Vector is a sparse vector: Val[k] is the value of coordinate Idx[k].
// Idx is strictly increasing and non-negative, and len(Idx) == len(Val).
// The zero value is the zero vector (of any dimension).
//
// Vectors made by a Vectorizer have unit L2 norm, or are the zero vector when
// a document has no term of the vocabulary. A Vector marshals to JSON as
// {"idx": [...], "val": [...]}.
type Vector struct {
	Idx []int32   `json:"idx"`
	Val []float64 `json:"val"`
}

// NNZ returns the number of stored coordinates.
func (v Vector) NNZ() int { return len(v.Idx) }

// Dot returns the inner product of v and w, sum_k v_k w_k, by merging the two
// sorted index lists.
func (v Vector) Dot(w Vector) float64 {
	var s float64
	i, j := 0, 0
	for i < len(v.Idx) && j < len(w.Idx) {
		switch a, b := v.Idx[i], w.Idx[j]; {
		case a == b:
			s += v.Val[i] * w.Val[j]
			i++
			j++
		case a < b:
			i++
		default:
			j++
		}
	}
	return s
}

// Norm returns the Euclidean (L2) norm of v.
func (v Vector) Norm() float64 {
	var s float64
	for _, x := range v.Val {
		s += x * x
	}
	return math.Sqrt(s)
}

// Dense returns v as a dense slice of length n. It panics if an index of v is
// n or more.
func (v Vector) Dense(n int) []float64 {
	d := make([]float64, n)
	for k, i := range v.Idx {
		if int(i) >= n {
			panic(fmt.Sprintf("textfeat: index %d out of range for dimension %d", i, n))
		}
		d[i] = v.Val[k]
	}
	return d
}

// check returns a description of what is wrong with v, or "" if v is well
// formed.
func (v Vector) check() string {
	if len(v.Idx) != len(v.Val) {
		return fmt.Sprintf("len(Idx) = %d != len(Val) = %d", len(v.Idx), len(v.Val))
	}
	prev := int32(-1)
	for _, i := range v.Idx {
		if i <= prev {
			if i < 0 {
				return fmt.Sprintf("negative index %d", i)
			}
			return fmt.Sprintf("indices not strictly increasing (%d after %d)", i, prev)
		}
		prev = i
	}
	return ""
}

// dim returns one more than the largest index of any vector in vs, checking
// that every vector is well formed. It panics with the position of the first
// bad vector.
func dim(name string, vs []Vector) int {
	n := 0
	for k, v := range vs {
		if msg := v.check(); msg != "" {
			panic(fmt.Sprintf("textfeat: %s[%d]: %s", name, k, msg))
		}
		if len(v.Idx) > 0 {
			n = max(n, int(v.Idx[len(v.Idx)-1])+1)
		}
	}
	return n
}
