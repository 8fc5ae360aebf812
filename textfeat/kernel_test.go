package textfeat

import (
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// rteVectors fits tf-idf on the 150 training texts (plus an empty one) and
// returns the training and held-out vectors.
func rteVectors(t *testing.T) (v *Vectorizer, train, test []Vector) {
	t.Helper()
	trainDocs, testDocs := allDocs(t)
	trainDocs = append(trainDocs, "") // an empty document: zero row and column
	v, train, err := Fit(trainDocs, Options{Weighting: TFIDF})
	if err != nil {
		t.Fatal(err)
	}
	return v, train, v.TransformAll(testDocs)
}

func TestLinearKernel(t *testing.T) {
	_, vecs, _ := rteVectors(t)
	n := len(vecs)
	var k mat.SymDense
	LinearKernelTo(&k, vecs)
	if k.SymmetricDim() != n {
		t.Fatalf("dimension %d, want %d", k.SymmetricDim(), n)
	}
	for i := range n {
		for j := range n {
			if got, want := k.At(i, j), vecs[i].Dot(vecs[j]); math.Abs(got-want) > 1e-15 {
				t.Fatalf("K[%d,%d] = %.17g, Dot %.17g", i, j, got, want)
			}
		}
		want := 1.0
		if vecs[i].NNZ() == 0 {
			want = 0
		}
		if d := k.At(i, i); math.Abs(d-want) > 1e-14 {
			t.Errorf("K[%d,%d] = %.17g, want %v", i, i, d, want)
		}
	}
	// Positive semi-definite: with the empty document's zero row the matrix
	// is singular, but K + 1e-10 I factorises.
	kj := mat.NewSymDense(n, nil)
	kj.CopySym(&k)
	for i := range n {
		kj.SetSym(i, i, kj.At(i, i)+1e-10)
	}
	var chol mat.Cholesky
	if !chol.Factorize(kj) {
		t.Error("K + 1e-10 I is not positive definite")
	}
}

// TestKernelDeterministic checks that the parallel kernels give bit-identical
// results whatever the number of goroutines.
func TestKernelDeterministic(t *testing.T) {
	_, train, test := rteVectors(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref, refRBF []float64
	var refCross []float64
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		var k, r mat.SymDense
		var c mat.Dense
		LinearKernelTo(&k, train)
		RBFKernelTo(&r, train, 0.7)
		CrossKernelTo(&c, test, train)
		kd, rd, cd := k.RawSymmetric().Data, r.RawSymmetric().Data, c.RawMatrix().Data
		if ref == nil {
			ref, refRBF, refCross = kd, rd, cd
			continue
		}
		if !floats.Same(kd, ref) || !floats.Same(rd, refRBF) || !floats.Same(cd, refCross) {
			t.Errorf("GOMAXPROCS(%d) changes the kernels", procs)
		}
	}
}

func TestCrossKernel(t *testing.T) {
	_, train, test := rteVectors(t)
	var c mat.Dense
	CrossKernelTo(&c, test, train)
	if r, cc := c.Dims(); r != len(test) || cc != len(train) {
		t.Fatalf("dims %d x %d, want %d x %d", r, cc, len(test), len(train))
	}
	nonzero := 0
	for i := range test {
		for j := range train {
			if got, want := c.At(i, j), test[i].Dot(train[j]); math.Abs(got-want) > 1e-15 {
				t.Fatalf("C[%d,%d] = %.17g, Dot %.17g", i, j, got, want)
			}
			if c.At(i, j) != 0 {
				nonzero++
			}
		}
	}
	if nonzero == 0 {
		t.Fatal("held-out documents share no term with training ones")
	}
	// The cross kernel of a set with itself is the linear kernel.
	var k mat.SymDense
	var kk mat.Dense
	LinearKernelTo(&k, train)
	CrossKernelTo(&kk, train, train)
	if !mat.EqualApprox(&k, &kk, 1e-15) {
		t.Error("CrossKernelTo(a, a) != LinearKernelTo(a)")
	}
}

// rbfDense is exp(-gamma ||a-b||^2) computed on dense vectors.
func rbfDense(a, b Vector, d int, gamma float64) float64 {
	x, y := a.Dense(d), b.Dense(d)
	floats.Sub(x, y)
	return math.Exp(-gamma * floats.Dot(x, x))
}

func TestRBFKernel(t *testing.T) {
	v, train, test := rteVectors(t)
	d := v.Len()
	for _, gamma := range []float64{0.1, 1, 5} {
		var k mat.SymDense
		RBFKernelTo(&k, train, gamma)
		for i := range train {
			if k.At(i, i) != 1 {
				t.Errorf("gamma %v: K[%d,%d] = %v, want exactly 1", gamma, i, i, k.At(i, i))
			}
			for j := i + 1; j < len(train); j += 7 {
				if got, want := k.At(i, j), rbfDense(train[i], train[j], d, gamma); math.Abs(got-want) > 1e-14 {
					t.Fatalf("gamma %v: K[%d,%d] = %.17g, dense %.17g", gamma, i, j, got, want)
				}
			}
		}
		// The empty document is at squared distance 1 from every unit vector.
		last := len(train) - 1
		if got, want := k.At(0, last), math.Exp(-gamma); math.Abs(got-want) > 1e-15 {
			t.Errorf("gamma %v: K to the empty document %v, want %v", gamma, got, want)
		}
		var c mat.Dense
		RBFCrossKernelTo(&c, test, train, gamma)
		for i := range test {
			for j := 0; j < len(train); j += 5 {
				if got, want := c.At(i, j), rbfDense(test[i], train[j], d, gamma); math.Abs(got-want) > 1e-14 {
					t.Fatalf("gamma %v: C[%d,%d] = %.17g, dense %.17g", gamma, i, j, got, want)
				}
			}
		}
	}
}

// TestKernelSum shows the intended combination with other covariates: Gram
// matrices of the same items add with AddSym.
func TestKernelSum(t *testing.T) {
	_, train, _ := rteVectors(t)
	var lin, rbf, sum mat.SymDense
	LinearKernelTo(&lin, train)
	RBFKernelTo(&rbf, train, 1)
	sum.AddSym(&lin, &rbf)
	for i := 0; i < len(train); i += 11 {
		for j := 0; j < len(train); j += 13 {
			if got, want := sum.At(i, j), lin.At(i, j)+rbf.At(i, j); got != want {
				t.Fatalf("sum[%d,%d] = %v, want %v", i, j, got, want)
			}
		}
	}
}

func TestKernelReuseAndPanics(t *testing.T) {
	a := []Vector{{Idx: []int32{0, 2}, Val: []float64{0.6, 0.8}}, {}, {Idx: []int32{1}, Val: []float64{1}}}
	// A destination of the right size is reused and fully overwritten.
	k := mat.NewSymDense(3, []float64{9, 9, 9, 9, 9, 9, 9, 9, 9})
	LinearKernelTo(k, a)
	want := mat.NewSymDense(3, []float64{1, 0, 0, 0, 0, 0, 0, 0, 1})
	if !mat.EqualApprox(k, want, 1e-15) {
		t.Errorf("reused destination: got %v, want %v", mat.Formatted(k), mat.Formatted(want))
	}
	c := mat.NewDense(1, 3, []float64{9, 9, 9})
	CrossKernelTo(c, a[:1], a)
	if !mat.EqualApprox(c, mat.NewDense(1, 3, []float64{1, 0, 0}), 1e-15) {
		t.Errorf("reused cross destination: got %v", mat.Formatted(c))
	}

	for name, f := range map[string]func(){
		"no vectors":       func() { LinearKernelTo(&mat.SymDense{}, nil) },
		"wrong size":       func() { LinearKernelTo(mat.NewSymDense(2, nil), a) },
		"unsorted":         func() { LinearKernelTo(&mat.SymDense{}, []Vector{{Idx: []int32{2, 1}, Val: []float64{1, 1}}}) },
		"duplicate index":  func() { LinearKernelTo(&mat.SymDense{}, []Vector{{Idx: []int32{1, 1}, Val: []float64{1, 1}}}) },
		"negative index":   func() { LinearKernelTo(&mat.SymDense{}, []Vector{{Idx: []int32{-1}, Val: []float64{1}}}) },
		"length mismatch":  func() { LinearKernelTo(&mat.SymDense{}, []Vector{{Idx: []int32{1}, Val: nil}}) },
		"cross empty":      func() { CrossKernelTo(&mat.Dense{}, a, nil) },
		"cross wrong size": func() { CrossKernelTo(mat.NewDense(3, 2, nil), a, a) },
		"gamma zero":       func() { RBFKernelTo(&mat.SymDense{}, a, 0) },
		"gamma NaN":        func() { RBFCrossKernelTo(&mat.Dense{}, a, a, math.NaN()) },
		"gamma Inf":        func() { RBFKernelTo(&mat.SymDense{}, a, math.Inf(1)) },
		"dense too small":  func() { a[0].Dense(2) },
	} {
		if !panics(f) {
			t.Errorf("%s: no panic", name)
		}
	}
}
