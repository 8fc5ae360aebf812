package ep

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// pairBlocks is RunPairs' block path, for pair sites that are every pair
// (P_a, N_b) of two disjoint item sets P (nP items) and N (nN), in
// row-major order (site k = a nN + b): the AUC pairs of Ridgway et al.
// sec. 3.3. The sites' precisions then form the nP×nN matrix T (the tau
// slice as it is) and
//
//	G'SG = Gp' diag(T 1) Gp + Gn' diag(T'1) Gn - Gp' T Gn - Gn' T' Gp,
//
// with Gp, Gn the rows of the prior factor G at P and N; the pair
// marginals' variances are |x_a|^2 + |x_b|^2 - 2 x_a'x_b with the rows
// x = L^-1 g of X = G L'^-T, the cross terms one product Xp Xn'. A sweep
// costs O(M r + N r^2 + r^3) for M = nP nN pairs, where by pairs costs
// O(M r^2) and by items O(N^2 r): with the linear scores' r = d
// covariates, the weight space's dimension, every per-pair cost is a
// length-r dot product inside two matrix products.
type pairBlocks struct {
	nP, nN, r int
	pIdx      []int     // the items of P, in site order
	nIdx      []int     // the items of N
	gp, gn    []float64 // nP×r, nN×r: the rows of G
	a, wp, wn []float64 // nP×r (T Gn, then 0.5 diag(T1) Gp - T Gn), nN×r scratch
	xp, xn    []float64 // nP×r, nN×r: Gp L'^-T, Gn L'^-T
	dp, dn    []float64 // the sums of T's rows and columns
	qn        []float64 // |x_b|^2 for the rows of Xn
}

// newPairBlocks returns the block path for the sites, or nil when they are
// not every pair of two item sets in row-major order.
func newPairBlocks(g []float64, n, r int, sites []PairSite) *pairBlocks {
	m := len(sites)
	if m == 0 {
		return nil
	}
	nN := 0
	for nN < m && sites[nN].I == sites[0].I {
		nN++
	}
	if m%nN != 0 {
		return nil
	}
	nP := m / nN
	b := &pairBlocks{nP: nP, nN: nN, r: r, pIdx: make([]int, nP), nIdx: make([]int, nN)}
	inP := make([]bool, n)
	for a := 0; a < nP; a++ {
		b.pIdx[a] = sites[a*nN].I
		if inP[b.pIdx[a]] {
			return nil
		}
		inP[b.pIdx[a]] = true
	}
	for j := 0; j < nN; j++ {
		b.nIdx[j] = sites[j].J
	}
	for k, s := range sites {
		if s.I != b.pIdx[k/nN] || s.J != b.nIdx[k%nN] || inP[s.J] {
			return nil
		}
	}
	b.gp, b.gn = make([]float64, nP*r), make([]float64, nN*r)
	for a, i := range b.pIdx {
		copy(b.gp[a*r:(a+1)*r], g[i*r:(i+1)*r])
	}
	for j, i := range b.nIdx {
		copy(b.gn[j*r:(j+1)*r], g[i*r:(i+1)*r])
	}
	b.a, b.wp, b.xp = make([]float64, nP*r), make([]float64, nP*r), make([]float64, nP*r)
	b.wn, b.xn = make([]float64, nN*r), make([]float64, nN*r)
	b.dp, b.dn, b.qn = make([]float64, nP), make([]float64, nN), make([]float64, nN)
	return b
}

func (b *pairBlocks) general(rows int, d []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: b.r, Stride: b.r, Data: d}
}

// refresh adds G'SG to the upper triangle of h (r×r) and sets the items'
// entries of u = sum_k nu_k a_k (zero elsewhere on entry).
func (b *pairBlocks) refresh(h, u, tau, nu []float64) {
	nP, nN, r := b.nP, b.nN, b.r
	for j := range b.dn {
		b.dn[j] = 0
	}
	for a := 0; a < nP; a++ {
		row, nrow := tau[a*nN:(a+1)*nN], nu[a*nN:(a+1)*nN]
		b.dp[a] = floats.Sum(row)
		floats.Add(b.dn, row)
		u[b.pIdx[a]] = floats.Sum(nrow)
		for j, v := range nrow {
			u[b.nIdx[j]] -= v
		}
	}
	// A = T Gn; Wp = 0.5 diag(T1) Gp - A; Wn = 0.5 diag(T'1) Gn. Then
	// Gp'Wp + Wp'Gp + Gn'Wn + Wn'Gn = G'SG.
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: nP, Cols: nN, Stride: nN, Data: tau},
		b.general(nN, b.gn), 0, b.general(nP, b.a))
	for a := 0; a < nP; a++ {
		floats.ScaleTo(b.wp[a*r:(a+1)*r], 0.5*b.dp[a], b.gp[a*r:(a+1)*r])
	}
	floats.Sub(b.wp, b.a)
	for j := 0; j < nN; j++ {
		floats.ScaleTo(b.wn[j*r:(j+1)*r], 0.5*b.dn[j], b.gn[j*r:(j+1)*r])
	}
	hs := blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: h}
	blas64.Syr2k(blas.Trans, 1, b.general(nP, b.gp), b.general(nP, b.wp), 1, hs)
	blas64.Syr2k(blas.Trans, 1, b.general(nN, b.gn), b.general(nN, b.wn), 1, hs)
}

// marginalsTo sets the pairs' marginal means (from the items' means fm)
// and variances at the posterior whose H = L L' is ch.
func (b *pairBlocks) marginalsTo(pm, pv []float64, ch *chol, fm []float64) {
	nP, nN, r := b.nP, b.nN, b.r
	copy(b.xp, b.gp)
	ch.rightSolve(b.xp, nP)
	copy(b.xn, b.gn)
	ch.rightSolve(b.xn, nN)
	blas64.Gemm(blas.NoTrans, blas.Trans, -2, b.general(nP, b.xp), b.general(nN, b.xn), 0,
		blas64.General{Rows: nP, Cols: nN, Stride: nN, Data: pv})
	for j := 0; j < nN; j++ {
		x := b.xn[j*r : (j+1)*r]
		b.qn[j] = floats.Dot(x, x)
	}
	for a := 0; a < nP; a++ {
		x := b.xp[a*r : (a+1)*r]
		qa, fa := floats.Dot(x, x), fm[b.pIdx[a]]
		row, mrow := pv[a*nN:(a+1)*nN], pm[a*nN:(a+1)*nN]
		for j, i := range b.nIdx {
			row[j] += qa + b.qn[j]
			mrow[j] = fa - fm[i]
		}
	}
}
