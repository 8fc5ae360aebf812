package numeric

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mathext"

	"concord/internal/testutil"
)

// TestTrigamma compares Trigamma with 50-digit values from mpmath
// (testdata/trigamma/make_ref.py) to 1e-14 relative, with the exact
// values psi_1(1) = pi^2/6 and psi_1(1/2) = pi^2/2, and with gonum's
// zeta(2, x) on a grid of the shape parameters the beta likelihood meets.
func TestTrigamma(t *testing.T) {
	rows := testutil.ReadCSV(t, "testdata/trigamma/trigamma_ref.csv")
	if len(rows) < 30 {
		t.Fatalf("%d reference rows", len(rows))
	}
	check := func(what string, x, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*math.Abs(want) {
			t.Errorf("%s: Trigamma(%v) = %.17g, want %.17g (relative error %.2g)", what, x, got, want, math.Abs(got/want-1))
		}
	}
	for i, r := range rows[1:] {
		v := testutil.Floats(t, fmt.Sprintf("trigamma_ref.csv row %d", i+1), r)
		check("mpmath", v[0], Trigamma(v[0]), v[1], 1e-14)
	}
	check("pi^2/6", 1, Trigamma(1), math.Pi*math.Pi/6, 1e-15)
	check("pi^2/2", 0.5, Trigamma(0.5), math.Pi*math.Pi/2, 1e-15)
	for x := 0.013; x < 500; x *= 1.07 {
		check("zeta(2, x)", x, Trigamma(x), mathext.Zeta(2, x), 2e-14)
	}
	if Trigamma(math.Inf(1)) != 0 {
		t.Error("Trigamma(+Inf) != 0")
	}
	for _, x := range []float64{0, -1, math.NaN()} {
		if v := Trigamma(x); !math.IsNaN(v) {
			t.Errorf("Trigamma(%v) = %v, want NaN", x, v)
		}
	}
}

// BenchmarkTrigamma: Trigamma against gonum's zeta(2, x) on the beta
// likelihood's shape parameters (nu Phi(f), 0.5 to 40).
func BenchmarkTrigamma(b *testing.B) {
	xs := make([]float64, 64)
	for i := range xs {
		xs[i] = 0.5 + 40*float64(i)/float64(len(xs))
	}
	for _, c := range []struct {
		name string
		f    func(float64) float64
	}{{"Trigamma", Trigamma}, {"Zeta", func(x float64) float64 { return mathext.Zeta(2, x) }}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			s := 0.0
			for b.Loop() {
				for _, x := range xs {
					s += c.f(x)
				}
			}
			if s == 0 {
				b.Fatal("no sum")
			}
		})
	}
}
