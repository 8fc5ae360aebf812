//go:build cblas && cgo

package gp

// The cblas build: gonum's BLAS and LAPACK are routed to OpenBLAS through
// cgo (gonum.org/v1/netlib), and the eigendecomposition of the kernel matrix
// calls LAPACKE's dsyevd (divide and conquer) directly, an order of magnitude
// faster than gonum's pure-Go Dsyev for large projects. It needs Debian's
// libopenblas-dev and liblapacke-dev (Debian's OpenBLAS exports no LAPACKE
// symbols):
//
//	go build -tags cblas ./...
//
// OpenBLAS runs single-threaded, because the chains already run in parallel
// goroutines and OpenBLAS's own threads would compete with them; only the
// one-off eigendecomposition, which runs before the chains, uses every CPU.

/*
#cgo LDFLAGS: -llapacke -lopenblas
#include <lapacke.h>
void openblas_set_num_threads(int num_threads);
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
	lapacknetlib "gonum.org/v1/netlib/lapack/netlib"
)

// Backend names the implementation of SymEigen in this build.
const Backend = "openblas"

func init() {
	C.openblas_set_num_threads(1)
	blas64.Use(blasnetlib.Implementation{})
	lapack64.Use(lapacknetlib.Implementation{})
}

// eigenMu serialises the eigendecompositions, which switch OpenBLAS to
// every CPU for their duration.
var eigenMu sync.Mutex

// SymEigen returns the eigenvalues of the symmetric matrix a in ascending
// order and the corresponding orthonormal eigenvectors as the columns of an
// n×n matrix, from LAPACKE_dsyevd.
func SymEigen(a mat.Symmetric) (vals []float64, vecs *mat.Dense, err error) {
	if g, ok := a.(*Gram); ok {
		return g.eigen() // decomposed once per Gram
	}
	n := a.SymmetricDim()
	data := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			data[i*n+j] = a.At(i, j)
		}
	}
	vals = make([]float64, n)
	eigenMu.Lock()
	C.openblas_set_num_threads(C.int(runtime.GOMAXPROCS(0)))
	info := C.LAPACKE_dsyevd(C.LAPACK_ROW_MAJOR, 'V', 'U', C.lapack_int(n), (*C.double)(&data[0]), C.lapack_int(n), (*C.double)(&vals[0]))
	C.openblas_set_num_threads(1)
	eigenMu.Unlock()
	if info != 0 {
		return nil, nil, fmt.Errorf("multirater: LAPACKE_dsyevd failed on the kernel matrix (info %d)", int(info))
	}
	return vals, mat.NewDense(n, n, data), nil
}
