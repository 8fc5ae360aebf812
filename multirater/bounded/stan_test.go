package bounded

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/kernel"
)

// readStanCSV reads a CSV of testdata/stan_bounded (a '#' line first) as
// rows keyed by column name.
func readStanCSV(t *testing.T, name string) []map[string]string {
	t.Helper()
	return testutil.Keyed(testutil.ReadCommentedCSV(t, "testdata/stan_bounded/"+name))
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestEPMatchesStan holds single-rater EP fits at fixed hyperparameters to
// Stan NUTS on the same models (testdata/stan_bounded: Chu's Pyrimidines
// activities in (0, 1), 50 training and 24 held-out rows, RBF kernel,
// gamma = 1/52): posterior latent means within 0.05 posterior sd of NUTS's
// (0.1 for the truncated Gaussian), sds within 5% (10%), predictive E[y*]
// of the held-out rows within 0.005 (the acceptance line). NUTS's
// Monte Carlo errors are below 0.005 sd and 0.0005 in E[y*] (README).
func TestEPMatchesStan(t *testing.T) {
	rows := readStanCSV(t, "pyrimidines_bounded.csv")
	var train, test [][]float64
	var ids, testIDs []string
	var y []float64
	for _, r := range rows {
		x := make([]float64, 26)
		for d := range x {
			x[d] = num(t, r["x"+strconv.Itoa(d+1)])
		}
		if r["set"] == "train" {
			train = append(train, x)
			ids = append(ids, r["row_id"])
			y = append(y, num(t, r["y"]))
		} else {
			test = append(test, x)
			testIDs = append(testIDs, r["row_id"])
		}
	}
	n := len(train)
	xtr := mat.NewDense(n, 26, nil)
	for i, x := range train {
		xtr.SetRow(i, x)
	}
	xte := mat.NewDense(len(test), 26, nil)
	for i, x := range test {
		xte.SetRow(i, x)
	}
	k := kernel.RBF{Gamma: 1.0 / 52}
	var c mat.SymDense
	k.GramTo(&c, kernel.Inputs{N: n, X: xtr})
	for i := 0; i < n; i++ {
		c.SetSym(i, i, c.At(i, i)+1e-8)
	}
	var cross mat.Dense
	k.CrossTo(&cross, kernel.Inputs{N: len(test), X: xte}, kernel.Inputs{N: n, X: xtr})
	prior := make([]float64, len(test))
	for i := range prior {
		prior[i] = 1
	}
	cases := []struct {
		name, lik      string
		nu             float64
		meanTol, sdTol float64
	}{
		{"pyr_beta_nu20", Beta, 20, 0.05, 0.05},
		{"pyr_beta_nu5", Beta, 5, 0.05, 0.05},
		{"pyr_tg_nu10", TruncNorm, 10, 0.1, 0.1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &Data{ItemIDs: ids, RaterIDs: []string{"r"}, Lo: 0, Hi: 1, Cov: &c, Kernel: k.String()}
			for i, v := range y {
				d.Ratings = append(d.Ratings, Rating{Item: i, Rater: 0, Value: v})
			}
			res, err := Fit(context.Background(), d, Options{Likelihood: tc.lik, Dispersion: tc.nu})
			if err != nil {
				t.Fatal(err)
			}
			ref := readStanCSV(t, "ref_"+tc.name+"_latent.csv")
			worstM, worstS := 0.0, 0.0
			for i, r := range ref {
				if r["row_id"] != ids[i] {
					t.Fatalf("row %d: reference row %s, data row %s", i, r["row_id"], ids[i])
				}
				m, sd := num(t, r["mean"]), num(t, r["sd"])
				e := res.Items[i].Score
				worstM = math.Max(worstM, math.Abs(e.Mean-m)/sd)
				worstS = math.Max(worstS, math.Abs(e.SD-sd)/sd)
			}
			t.Logf("latent: max |dmean|/sd %.4f, max sd error %.2f%%", worstM, 100*worstS)
			if worstM > tc.meanTol || worstS > tc.sdTol {
				t.Errorf("latent: max |dmean|/sd %.4f (tolerance %v), max relative sd error %.4f (tolerance %v)", worstM, tc.meanTol, worstS, tc.sdTol)
			}
			p, err := NewPredictor(res, &c)
			if err != nil {
				t.Fatal(err)
			}
			pred := p.Predict(testIDs, &cross, prior)
			worstY := 0.0
			for i, r := range readStanCSV(t, "ref_"+tc.name+"_pred.csv") {
				if r["row_id"] != testIDs[i] {
					t.Fatalf("test row %d: reference row %s, data row %s", i, r["row_id"], testIDs[i])
				}
				worstY = math.Max(worstY, math.Abs(pred[i].Value.Mean-num(t, r["ey"])))
			}
			t.Logf("predictive E[y*]: max error %.5f", worstY)
			if worstY > 0.005 {
				t.Errorf("predictive E[y*]: max error %.5f, tolerance 0.005", worstY)
			}
			if res.Model.Output != multirater.OutputValues {
				t.Errorf("output %q", res.Model.Output)
			}
		})
	}
}

// TestWarpedEvidenceIsExact: the warped model's likelihood is Gaussian in
// f, so EP and Laplace are exact and the log evidence is the Gaussian
// marginal likelihood of z = Phi^-1(y) plus the log Jacobian of the
// warping, log N(z | 0, C + sigma^2 I) - sum_i log phi(z_i) (computed here
// with a Cholesky factor of C + sigma^2 I, not by the engines' code), on the
// Pyrimidines activities.
func TestWarpedEvidenceIsExact(t *testing.T) {
	rows := readStanCSV(t, "pyrimidines_bounded.csv")
	var xs [][]float64
	var y []float64
	for _, r := range rows {
		if r["set"] != "train" {
			continue
		}
		x := make([]float64, 26)
		for d := range x {
			x[d] = num(t, r["x"+strconv.Itoa(d+1)])
		}
		xs = append(xs, x)
		y = append(y, num(t, r["y"]))
	}
	n := len(xs)
	x := mat.NewDense(n, 26, nil)
	for i, r := range xs {
		x.SetRow(i, r)
	}
	var c mat.SymDense
	kernel.RBF{Gamma: 1.0 / 52}.GramTo(&c, kernel.Inputs{N: n, X: x})
	for i := 0; i < n; i++ {
		c.SetSym(i, i, c.At(i, i)+1e-8)
	}
	const sigma = 0.5
	// Exact: z ~ N(0, C + sigma^2 I).
	k := mat.NewSymDense(n, nil)
	k.CopySym(&c)
	z := make([]float64, n)
	jac := 0.0
	for i, v := range y {
		z[i] = math.Sqrt2 * math.Erfinv(2*v-1)
		k.SetSym(i, i, k.At(i, i)+sigma*sigma)
		jac -= -0.5*z[i]*z[i] - 0.5*math.Log(2*math.Pi) // - log phi(z_i)
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		t.Fatal("not positive definite")
	}
	var a mat.VecDense
	if err := ch.SolveVecTo(&a, mat.NewVecDense(n, z)); err != nil {
		t.Fatal(err)
	}
	exact := -0.5*mat.Dot(mat.NewVecDense(n, z), &a) - 0.5*ch.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi) + jac
	for _, eng := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		d := &Data{ItemIDs: make([]string, n), RaterIDs: []string{"r"}, Lo: 0, Hi: 1, Cov: &c}
		for i, v := range y {
			d.ItemIDs[i] = strconv.Itoa(i)
			d.Ratings = append(d.Ratings, Rating{Item: i, Value: v})
		}
		res, err := Fit(context.Background(), d, Options{Likelihood: Warped, Dispersion: 1 / sigma, Engine: eng})
		if err != nil {
			t.Fatal(err)
		}
		if got := *res.Diagnostics.Engine.LogEvidence; math.Abs(got-exact) > 1e-6 {
			t.Errorf("%s: log evidence %.8f, exact %.8f", eng, got, exact)
		}
	}
}
