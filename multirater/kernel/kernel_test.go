package kernel

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
)

func TestParseKernel(t *testing.T) {
	for _, tc := range []struct {
		spec, want string
	}{
		{"identity", "identity"},
		{" Linear ", "linear"},
		{"rbf", "rbf:gamma=1"},
		{"RBF:gamma=0.5", "rbf:gamma=0.5"},
		{"rbf:gamma=2+linear", "rbf:gamma=2+linear"},
		{"identity + rbf:Gamma=1e-3", "identity+rbf:gamma=0.001"},
	} {
		k, err := ParseKernel(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if k.String() != tc.want {
			t.Errorf("%q: got %q, want %q", tc.spec, k.String(), tc.want)
		}
		if _, err := ParseKernel(k.String()); err != nil {
			t.Errorf("%q does not parse back: %v", k.String(), err)
		}
	}
	for _, tc := range []struct{ spec, msg string }{
		{"", "empty"},
		{"poly", "unknown kernel"},
		{"rbf:gamma=-1", "positive"},
		{"rbf:gamma=abc", "positive"},
		{"rbf:sigma=1", "expected gamma"},
		{"linear:2", "no parameters"},
		{"rbf+", "empty term"},
		{"rbf:gamma=inf", "positive"},
	} {
		_, err := ParseKernel(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: error %v, want one mentioning %q", tc.spec, err, tc.msg)
		}
	}
}

// FuzzParseKernel: any accepted kernel prints in a canonical form that
// parses back to itself.
func FuzzParseKernel(f *testing.F) {
	fuzzCanonical(f, []string{"identity", "linear", "rbf", "rbf:gamma=1", "rbf:gamma=0.5+linear", "identity+identity", "rbf:gamma=", "+", "rbf:gamma=1e400"}, ParseKernel)
}

// fuzzCanonical fuzzes parse from the seeds: whatever it accepts prints
// (String) in a form that parses back and prints the same.
func fuzzCanonical[T fmt.Stringer](f *testing.F, seeds []string, parse func(string) (T, error)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parse(s)
		if err != nil {
			return
		}
		again, err := parse(v.String())
		if err != nil {
			t.Fatalf("%q -> %q does not parse: %v", s, v, err)
		}
		if again.String() != v.String() {
			t.Fatalf("%q -> %q -> %q", s, v, again)
		}
	})
}

func TestKernels(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{3, 4, 0, 0, -1, 1})
	in := Inputs{N: 3, X: x}
	var g mat.SymDense
	Linear{}.GramTo(&g, in)
	// Rows scaled to unit norm; the zero row stays zero.
	want := [][]float64{{1, 0, (-3 + 4) / (5 * math.Sqrt2)}, {0, 0, 0}, {(-3 + 4) / (5 * math.Sqrt2), 0, 1}}
	for i := range want {
		for j := range want[i] {
			if !scalar.EqualWithinAbs(g.At(i, j), want[i][j], 1e-15) {
				t.Errorf("linear (%d,%d) = %v, want %v", i, j, g.At(i, j), want[i][j])
			}
		}
	}
	g.Reset()
	RBF{Gamma: 0.5}.GramTo(&g, in)
	if v := g.At(0, 2); !scalar.EqualWithinAbs(v, math.Exp(-0.5*(16+9)), 1e-15) {
		t.Errorf("rbf (0,2) = %v", v)
	}
	g.Reset()
	Sum{Identity{}, RBF{Gamma: 0.5}}.GramTo(&g, in)
	if v := g.At(1, 1); v != 2 {
		t.Errorf("identity+rbf diagonal %v, want 2", v)
	}
	// Cross-covariances of new items and prior variances.
	a := Inputs{N: 2, X: mat.NewDense(2, 2, []float64{3, 4, 1, 0})}
	var c mat.Dense
	Sum{Identity{}, Linear{}}.CrossTo(&c, a, in)
	if v := c.At(0, 0); !scalar.EqualWithinAbs(v, 1, 1e-15) {
		t.Errorf("cross (0,0) = %v, want 1 (identity contributes 0)", v)
	}
	if v := c.At(1, 2); !scalar.EqualWithinAbs(v, -1/math.Sqrt2, 1e-15) {
		t.Errorf("cross (1,2) = %v", v)
	}
	dg := Sum{Identity{}, RBF{Gamma: 2}}.DiagTo(nil, a)
	if dg[0] != 2 || dg[1] != 2 {
		t.Errorf("diag %v, want [2 2]", dg)
	}
	if !(RBF{Gamma: 1}).Covariates() || (Identity{}).Covariates() || !(Sum{Identity{}, Linear{}}).Covariates() {
		t.Error("Covariates")
	}
	// Cross of the training items with themselves equals the Gram matrix.
	for _, k := range []Kernel{Linear{}, RBF{Gamma: 0.3}, Sum{Linear{}, RBF{Gamma: 1}}} {
		var gm mat.SymDense
		var cr mat.Dense
		k.GramTo(&gm, in)
		k.CrossTo(&cr, in, in)
		if !mat.EqualApprox(&gm, &cr, 1e-14) {
			t.Errorf("%v: CrossTo(x, x) != GramTo(x)", k)
		}
	}
}

func TestKernelPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"rbf without covariates": func() { var g mat.SymDense; RBF{Gamma: 1}.GramTo(&g, Inputs{N: 2}) },
		"rbf gamma 0":            func() { var g mat.SymDense; RBF{}.GramTo(&g, Inputs{N: 1, X: mat.NewDense(1, 1, nil)}) },
		"rows mismatch":          func() { var g mat.SymDense; Linear{}.GramTo(&g, Inputs{N: 3, X: mat.NewDense(2, 1, nil)}) },
		"NaN covariate": func() {
			var g mat.SymDense
			Linear{}.GramTo(&g, Inputs{N: 1, X: mat.NewDense(1, 1, []float64{math.NaN()})})
		},
		"wrong destination": func() { g := mat.NewSymDense(3, nil); Identity{}.GramTo(g, Inputs{N: 2}) },
	} {
		testutil.Panics(t, name, "multirater: ", f)
	}
}
