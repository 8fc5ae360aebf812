package numeric

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLogPhiTable compares LogPhiTable.At with LogNormCDF on a fine grid
// over the table's range, at random points, at the grid points and
// midpoints, and beyond the table: within 2e-15 relative (a few units in
// the last place) plus 2e-16 absolute (LogNormCDF's own rounding where
// log Phi is small: log(1 - Q) rounds 1 - Q).
func TestLogPhiTable(t *testing.T) {
	tab := NewLogPhiTable()
	rng := rand.New(rand.NewPCG(1, 2))
	var xs []float64
	for x := -40.0; x <= 9; x += 1.0 / 1024 {
		xs = append(xs, x)
	}
	for j := 0; j <= int(math.Floor((PhiOne-logPhiLo)*logPhiPerUnit)); j++ {
		xj := logPhiLo + float64(j)/logPhiPerUnit
		xs = append(xs, xj, xj+0.5/logPhiPerUnit, math.Nextafter(xj+0.5/logPhiPerUnit, -100))
	}
	for i := 0; i < 100000; i++ {
		xs = append(xs, -39+48*rng.Float64())
	}
	xs = append(xs, math.Inf(1), math.Inf(-1), -1e10, 1e10, 0, math.SmallestNonzeroFloat64)
	worst, worstX := 0.0, 0.0
	for _, x := range xs {
		got, want := tab.At(x), LogNormCDF(x)
		if got == want {
			continue
		}
		e := math.Abs(got-want) / (2e-15*math.Abs(want) + 2e-16)
		if e > worst {
			worst, worstX = e, x
		}
		if !(e <= 1) {
			t.Errorf("At(%v) = %v, LogNormCDF = %v", x, got, want)
		}
	}
	if !math.IsNaN(tab.At(math.NaN())) {
		t.Error("At(NaN) is not NaN")
	}
	t.Logf("largest difference %.2g of the tolerance, at %v", worst, worstX)
}

// BenchmarkLogPhi compares LogPhiTable.At with LogNormCDF over the
// arguments of a collapsed slice move (standard normal, so that every
// branch of LogNormCDF is taken).
func BenchmarkLogPhi(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 4096)
	for i := range xs {
		xs[i] = 2 * rng.NormFloat64()
	}
	tab := NewLogPhiTable()
	for _, bc := range []struct {
		name string
		f    func(float64) float64
	}{{"LogNormCDF", LogNormCDF}, {"LogPhiTable", tab.At}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var s float64
			for i := 0; i < b.N; i++ {
				s += bc.f(xs[i&4095])
			}
			if math.IsNaN(s) {
				b.Fatal(s)
			}
		})
	}
}
