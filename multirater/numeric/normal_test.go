package numeric

import (
	"fmt"
	"math"
	"testing"

	"concord/internal/testutil"
)

// TestLogNormCDF checks log Phi against R's pnorm(x, log.p = TRUE)
// (values printed by R 4 with 17 significant digits).
func TestLogNormCDF(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		// R: sprintf("%.17g", pnorm(c(-40, -20, -5, -1, 0, 0.5, 2, 3.8, 5, 8, 9), log.p = TRUE))
		{-40, -804.6084420137538},
		{-20, -203.91715537109727},
		{-5, -15.064998393988725},
		{-1, -1.8410216450092636},
		{0, -0.69314718055994529},
		{0.5, -0.36894641528865652},
		{2, -0.023012909328963493},
		{3.8, -7.23506611710858e-05},
		{5, -2.8665161296376358e-07},
		{8, -6.2209605742717868e-16},
		{9, -1.1285884059538408e-19},
	} {
		got := LogNormCDF(c.x)
		tol := 1e-13 * math.Abs(c.want)
		if c.x > PhiOne {
			tol = 1e-18 // rounded to 0
		}
		if math.Abs(got-c.want) > tol {
			t.Errorf("logNormCDF(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
}

// TestLogPhiDiff compares LogPhiDiff with 50-digit values from mpmath
// (testdata/logphidiff/make_ref.py), to 1e-8 relative (the narrow intervals
// lose digits to the difference of two logarithms; elsewhere it is ~1e-15).
func TestLogPhiDiff(t *testing.T) {
	rows := testutil.ReadCSV(t, "testdata/logphidiff/logphidiff_ref.csv")
	if len(rows) < 20 {
		t.Fatalf("%d reference rows", len(rows))
	}
	for i, r := range rows[1:] {
		v := testutil.Floats(t, fmt.Sprintf("logphidiff_ref.csv row %d", i+1), r)
		a, b, want := v[0], v[1], v[2]
		got := LogPhiDiff(a, b)
		if math.Abs(got-want) > 1e-8*math.Max(1, math.Abs(want)) {
			t.Errorf("LogPhiDiff(%v, %v) = %.17g, want %.17g", a, b, got, want)
		}
	}
	if !math.IsInf(LogPhiDiff(1, 1), -1) {
		t.Error("empty interval")
	}
	testutil.Panics(t, "a > b", "multirater: ", func() { LogPhiDiff(2, 1) })
}
