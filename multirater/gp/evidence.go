package gp

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// SiteKernelGrad returns, for each derivative dC[k] (N×N) of the prior
// covariance in a kernel hyperparameter, the gradient of a Gaussian-site
// approximation's log evidence (EP's log Z_EP, Laplace's Chu eq. 11):
//
//	1/2 (alpha' dC alpha - tr(R dC)) + b' dC alpha,
//
// with R = (C + S^-1)^-1 = S - U U' for the sites' precisions S (U = S G
// L'^-1, N×r row-major, H = I + G'SG = L L'), alpha = R S^-1 V and b the
// implicit term of Laplace's mode (nil for EP, whose sites do not move with
// theta at a fixed point; Rasmussen & Williams eq. 5.22-5.23 and 5.27). A
// diagonal factor passes u nil and diagR2[n] = S_n - R_nn instead. The
// trace costs O(N^2 r) per hyperparameter in level-3 BLAS, split between two
// goroutines.
func SiteKernelGrad(dC []mat.Symmetric, s, alpha, b, u []float64, r int, diagR2 []float64) []float64 {
	n := len(s)
	out := make([]float64, len(dC))
	ad := make([]float64, n)
	var y []float64
	for k, d := range dC {
		if d.SymmetricDim() != n {
			panic("gp: SiteKernelGrad: derivative of the wrong size")
		}
		raw := symRaw(d)
		blas64.Symv(1, raw, blas64.Vector{N: n, Inc: 1, Data: alpha}, 0, blas64.Vector{N: n, Inc: 1, Data: ad})
		v := floats.Dot(alpha, ad)
		for i := 0; i < n; i++ {
			v -= s[i] * raw.Data[i*raw.Stride+i]
		}
		if u != nil {
			if y == nil {
				y = make([]float64, n*r)
			}
			// tr(U' dC U) = sum(U ∘ (dC U)), by column halves.
			half := r / 2
			cols := func(lo, hi int) {
				if hi > lo {
					blas64.Symm(blas.Left, 1, raw, blas64.General{Rows: n, Cols: hi - lo, Stride: r, Data: u[lo:]}, 0, blas64.General{Rows: n, Cols: hi - lo, Stride: r, Data: y[lo:]})
				}
			}
			if n*n*r >= 1<<16 && runtime.GOMAXPROCS(0) > 1 {
				var wg sync.WaitGroup
				wg.Add(1)
				go func() { defer wg.Done(); cols(half, r) }()
				cols(0, half)
				wg.Wait()
			} else {
				cols(0, r)
			}
			v += floats.Dot(u, y)
		} else {
			for i := 0; i < n; i++ {
				v += diagR2[i] * raw.Data[i*raw.Stride+i]
			}
		}
		out[k] = 0.5 * v
		if b != nil {
			out[k] += floats.Dot(b, ad)
		}
	}
	return out
}

// symRaw returns the upper triangle of a as a blas64.Symmetric (copying
// unless a is a *mat.SymDense).
func symRaw(a mat.Symmetric) blas64.Symmetric {
	if s, ok := a.(*mat.SymDense); ok {
		return s.RawSymmetric()
	}
	var s mat.SymDense
	s.CopySym(a)
	return s.RawSymmetric()
}
