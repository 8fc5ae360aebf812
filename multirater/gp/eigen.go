//go:build !cblas

package gp

import (
	"errors"

	"gonum.org/v1/gonum/mat"
)

// Backend names the implementation of SymEigen in this build.
const Backend = "gonum"

// SymEigen returns the eigenvalues of the symmetric matrix a in ascending
// order and the corresponding orthonormal eigenvectors as the columns of an
// n×n matrix. This build uses gonum's pure-Go LAPACK (Dsyev, the implicit QL/QR
// algorithm); the cblas build calls LAPACKE dsyevd (divide and conquer).
func SymEigen(a mat.Symmetric) (vals []float64, vecs *mat.Dense, err error) {
	if g, ok := a.(*Gram); ok {
		return g.eigen() // decomposed once per Gram
	}
	var e mat.EigenSym
	if !e.Factorize(a, true) {
		return nil, nil, errors.New("multirater: eigendecomposition of the kernel matrix did not converge")
	}
	vals = e.Values(nil)
	vecs = new(mat.Dense)
	e.VectorsTo(vecs)
	return vals, vecs, nil
}
