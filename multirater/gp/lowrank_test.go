package gp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SynthFeatures returns n unit-norm sparse rows over d columns: 5-20 terms
// per row from a Zipf-like background plus, with probability 0.3 per term,
// one of 20 topic columns of the row's topic (one of 5), the shape of the
// ladder's bag-of-words documents.
func synthFeatures(rng *rand.Rand, n, d int) SparseRows {
	x := SparseRows{Cols: d, Idx: make([][]int32, n), Val: make([][]float64, n)}
	for i := 0; i < n; i++ {
		topic := rng.IntN(5)
		seen := map[int32]float64{}
		for t := 5 + rng.IntN(16); t > 0; t-- {
			var j int32
			if rng.Float64() < 0.3 {
				j = int32(topic*20 + rng.IntN(20))
			} else {
				j = int32(100 + int(float64(d-100)*math.Pow(rng.Float64(), 3)))
			}
			seen[j]++
		}
		norm := 0.0
		for _, v := range seen {
			norm += v * v
		}
		for j := int32(0); j < int32(d); j++ {
			if v, ok := seen[j]; ok {
				x.Idx[i] = append(x.Idx[i], j)
				x.Val[i] = append(x.Val[i], v/math.Sqrt(norm))
			}
		}
	}
	return x
}

func TestLowRankExactMatchesDense(t *testing.T) {
	for _, tc := range []struct{ n, d int }{{60, 130}, {200, 150}} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
		x := synthFeatures(rng, tc.n, tc.d)
		c := x.DenseGram()
		lr, err := NewLowRankFeatures(x, LowRankOptions{MaxRank: tc.d}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !lr.Exact || lr.Residual() > 1e-10*lr.Trace {
			t.Errorf("n=%d: exact factor with residual %g of %g", tc.n, lr.Residual(), lr.Trace)
		}
		f, err := NewFactor(lr)
		if err != nil {
			t.Fatal(err)
		}
		got := f.covTo()
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.n; j++ {
				if d := math.Abs(got.At(i, j) - c.At(i, j)); d > 1e-12 {
					t.Fatalf("n=%d: (G G')_%d,%d = %v, X X' %v", tc.n, i, j, got.At(i, j), c.At(i, j))
				}
				if d := math.Abs(lr.At(i, j) - c.At(i, j)); d > 1e-12 {
					t.Fatalf("n=%d: LowRank.At(%d, %d) = %v, X X' %v", tc.n, i, j, lr.At(i, j), c.At(i, j))
				}
			}
		}
		// Its eigenvalues are those of the dense matrix (gonum's EigenSym).
		vals, _, err := SymEigen(c)
		if err != nil {
			t.Fatal(err)
		}
		for k, l := range lr.Lam() {
			if want := vals[tc.n-1-k]; math.Abs(l-want) > 1e-10*vals[tc.n-1] {
				t.Errorf("n=%d: eigenvalue %d = %v, dense %v", tc.n, k, l, want)
			}
		}
		// KeptEigen's Q is orthonormal and Q Λ Q' = C.
		q, lam, err := KeptEigen(NewGramLowRank(lr))
		if err != nil {
			t.Fatal(err)
		}
		r := len(lam)
		for i := 0; i < tc.n; i += 7 {
			for j := 0; j < tc.n; j += 5 {
				s := 0.0
				for k := 0; k < r; k++ {
					s += q[i*r+k] * lam[k] * q[j*r+k]
				}
				if math.Abs(s-c.At(i, j)) > 1e-10 {
					t.Fatalf("n=%d: (Q Λ Q')_%d,%d = %v, want %v", tc.n, i, j, s, c.At(i, j))
				}
			}
		}
	}
}

// TestLowRankRandomizedNearOptimal checks the randomized range finder
// against the best rank-M approximation, whose left-out trace is the sum
// of the dense matrix's eigenvalues beyond the M-th (Eckart-Young, dense
// eigenvalues from gonum's EigenSym). Bag-of-words spectra are flat beyond
// the topics, where the range finder converges slowly (Halko et al. 2011,
// sec. 10.4: the error factor shrinks as (M/(p-1))^(1/(2q+1))): with q = 2
// power iterations (the default) the trace left out is within 6% of the
// optimum, with q = 4 within 3%; the leading 8 eigenvalues, which carry
// the topics, are within 1% either way. The tolerances were set from
// these runs (5% and 2.6% measured at n = 400).
func TestLowRankRandomizedNearOptimal(t *testing.T) {
	for _, tc := range []struct {
		n, d, m, q int
		loss       float64
	}{{300, 600, 40, 0, 0.06}, {400, 900, 120, 0, 0.06}, {400, 900, 120, 4, 0.03}} {
		rng := rand.New(rand.NewPCG(2, uint64(tc.n)))
		x := synthFeatures(rng, tc.n, tc.d)
		c := x.DenseGram()
		vals, _, err := SymEigen(c)
		if err != nil {
			t.Fatal(err)
		}
		opt := 0.0
		for k := 0; k < tc.n-tc.m; k++ {
			opt += vals[k]
		}
		lr, err := NewLowRankFeatures(x, LowRankOptions{MaxRank: tc.m, Power: tc.q}, rand.New(rand.NewPCG(7, 7)), 7)
		if err != nil {
			t.Fatal(err)
		}
		if lr.Exact || lr.Rank() != tc.m {
			t.Fatalf("n=%d: rank %d exact %v", tc.n, lr.Rank(), lr.Exact)
		}
		if got := lr.Residual(); got > (1+tc.loss)*opt || got < opt*(1-1e-9) {
			t.Errorf("n=%d M=%d q=%d: trace left out %.6g, optimum %.6g", tc.n, tc.m, tc.q, got, opt)
		}
		for k, l := range lr.Lam()[:8] {
			if want := vals[tc.n-1-k]; l > want*(1+1e-9) || l < 0.99*want {
				t.Errorf("n=%d q=%d: eigenvalue %d = %v, dense %v", tc.n, tc.q, k, l, want)
			}
		}
		// The factor is G G' with orthogonal columns: At agrees with it.
		f, err := NewFactor(lr)
		if err != nil {
			t.Fatal(err)
		}
		gg := f.covTo()
		if d := math.Abs(gg.At(3, 5) - lr.At(3, 5)); d > 1e-12 {
			t.Errorf("At and the factor differ by %g", d)
		}
	}
}

func TestLowRankPivotedTruncates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	x := synthFeatures(rng, 150, 120)
	lr, err := NewLowRankFeatures(x, LowRankOptions{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tol     float64
		maxRank int
	}{{0, 1000}, {0.1 * lr.Trace, 1000}, {0, 10}} {
		f, err := NewPivotedFactorRank(lr, tc.tol, tc.maxRank)
		if err != nil {
			t.Fatal(err)
		}
		if f.R > tc.maxRank || (f.R < tc.maxRank && f.R < lr.Rank() && f.Residual > tc.tol) {
			t.Errorf("tol %g maxRank %d: rank %d residual %g", tc.tol, tc.maxRank, f.R, f.Residual)
		}
		// The rank is the smallest that meets the tolerance.
		if f.R > 1 && f.R < tc.maxRank && f.Residual+lr.Lam()[f.R-1] <= tc.tol {
			t.Errorf("tol %g: rank %d is not the smallest", tc.tol, f.R)
		}
		// The whitening of a training item's covariances recovers its row.
		k := make([]float64, lr.n)
		for i := range k {
			k[i] = lr.At(i, 4)
		}
		g := make([]float64, f.R)
		f.WhitenTo(g, k, lr.At(4, 4))
		for a := range g {
			if math.Abs(g[a]-f.G[4*f.R+a]) > 1e-9 {
				t.Fatalf("tol %g: whitened %d = %v, want %v", tc.tol, a, g[a], f.G[4*f.R+a])
			}
		}
	}
}

func TestLowRankCallerBugsPanic(t *testing.T) {
	x := SparseRows{Cols: 3, Idx: [][]int32{{0, 5}}, Val: [][]float64{{1, 1}}}
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("no panic for a column out of range")
		}
	}()
	NewLowRankFeatures(x, LowRankOptions{}, nil, 0)
}

func TestLowRankDataErrors(t *testing.T) {
	x := SparseRows{Cols: 3, Idx: [][]int32{{0}, {}}, Val: [][]float64{{0}, {}}}
	if _, err := NewLowRankFeatures(x, LowRankOptions{}, nil, 0); err == nil {
		t.Fatal("no error for all-zero features")
	}
	x.Val[0][0] = math.NaN()
	if _, err := NewLowRankFeatures(x, LowRankOptions{}, nil, 0); err == nil {
		t.Fatal("no error for NaN features")
	}
}

func BenchmarkLowRankFeatures(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		rng := rand.New(rand.NewPCG(4, 4))
		x := synthFeatures(rng, n, 5000)
		b.Run("N="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := NewLowRankFeatures(x, LowRankOptions{}, rand.New(rand.NewPCG(1, uint64(i))), uint64(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for n > 0 || s == "" {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

func TestDefaultRank(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{10, 10}, {256, 256}, {1000, 349}, {4000, 250}, {16000, 128}, {64000, 128}} {
		if got := DefaultRank(tc.n); got != tc.want {
			t.Errorf("DefaultRank(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// TestLowRankColumnsFITC checks the pivoted low-rank form of an RBF kernel
// matrix against the dense one (kernel values computed here): at full rank
// it is C to 1e-9; truncated, its factor with the diagonal correction has
// C's diagonal exactly (FITC) and leaves out the trace it reports.
func TestLowRankColumnsFITC(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	const n, d = 200, 3
	x := make([][]float64, n)
	for i := range x {
		x[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
	}
	k := func(i, j int) float64 {
		s := 0.0
		for a := 0; a < d; a++ {
			s += (x[i][a] - x[j][a]) * (x[i][a] - x[j][a])
		}
		return math.Exp(-0.5 * s)
	}
	diag := make([]float64, n)
	for i := range diag {
		diag[i] = 1
	}
	col := func(p int, dst []float64) {
		for i := range dst {
			dst[i] = k(i, p)
		}
	}
	for _, tc := range []struct {
		rank  int
		exact bool
	}{{n, true}, {30, false}} {
		lr, err := NewLowRankColumns(diag, col, tc.rank, 0)
		if err != nil {
			t.Fatal(err)
		}
		f, err := NewFactor(lr)
		if err != nil {
			t.Fatal(err)
		}
		left := 0.0
		for i := 0; i < n; i++ {
			gi := 0.0
			for _, g := range f.G[i*f.R : (i+1)*f.R] {
				gi += g * g
			}
			extra := 0.0
			if f.Extra != nil {
				extra = f.Extra[i]
			}
			if math.Abs(gi+extra-1) > 1e-9 {
				t.Fatalf("rank %d: item %d prior variance %v + %v", tc.rank, i, gi, extra)
			}
			left += 1 - gi
			if tc.exact {
				for j := 0; j < n; j += 7 {
					if math.Abs(lr.At(i, j)-k(i, j)) > 1e-9 {
						t.Fatalf("full rank: (%d, %d) = %v, kernel %v", i, j, lr.At(i, j), k(i, j))
					}
				}
			}
		}
		if math.Abs(left-lr.Residual()) > 1e-8*float64(n) {
			t.Errorf("rank %d: left out %v, Residual %v", tc.rank, left, lr.Residual())
		}
		if tc.exact != (f.Extra == nil) || lr.Rank() > tc.rank {
			t.Errorf("rank %d: Extra %v, rank %d", tc.rank, f.Extra != nil, lr.Rank())
		}
	}
}
