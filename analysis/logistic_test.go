package analysis

import (
	"math"
	"strconv"
	"testing"

	"concord/internal/testutil"

	"gonum.org/v1/gonum/mat"
)

// readPima reads testdata/pima_tr.csv or pima_te.csv (MASS's Pima.tr and
// Pima.te; see testdata/README.md): the 7 covariates and type == "Yes".
func readPima(t testing.TB, name string) (names []string, x *mat.Dense, y []bool) {
	t.Helper()
	x, y, names, err := testutil.Classified(testutil.ReadCSV(t, "testdata/"+name), "Yes")
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return names, x, y
}

// TestLogisticIRLSMatchesGLM checks FitLogistic against R's glm on Pima.tr
// (testdata/pima_glm.csv, written by testdata/pima_glm.R).
func TestLogisticIRLSMatchesGLM(t *testing.T) {
	_, x, y := readPima(t, "pima_tr.csv")
	fit, err := FitLogistic(x, y)
	if err != nil {
		t.Fatal(err)
	}
	ref := testutil.ReadCSV(t, "testdata/pima_glm.csv")
	got := append([]float64{fit.Intercept}, fit.Coef...)
	if len(ref)-1 != len(got) {
		t.Fatalf("%d reference terms, %d fitted", len(ref)-1, len(got))
	}
	for j, r := range ref[1:] {
		est, _ := strconv.ParseFloat(r[1], 64)
		se, _ := strconv.ParseFloat(r[2], 64)
		if math.Abs(got[j]-est) > 1e-7*math.Abs(est) {
			t.Errorf("%s: estimate %.12g, glm %.12g", r[0], got[j], est)
		}
		if math.Abs(fit.SE[j]-se) > 1e-5*se {
			t.Errorf("%s: se %.12g, glm %.12g", r[0], fit.SE[j], se)
		}
	}
}

func TestLogisticSeparable(t *testing.T) {
	x := mat.NewDense(4, 1, []float64{0, 1, 2, 3})
	if _, err := FitLogistic(x, []bool{false, false, true, true}); err == nil {
		t.Fatal("separable classes: no error")
	}
}
