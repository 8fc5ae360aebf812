package laplace_test

import (
	"math"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater/gp"
	"concord/multirater/laplace"
	"concord/multirater/lik"
)

// polrCovariates are the z-scored columns of testdata/autompg_part1.csv
// used by testdata/polr_reference.R, in its order.
var polrCovariates = []string{"horsepower", "weight", "acceleration", "model_year"}

// polrRef is the reference of testdata/polr_reference.R: MASS::polr(method =
// "probit") on Auto MPG (Chu & Ghahramani's partition 1 training set, 5-bin
// label, 4 z-scored covariates).
type polrRef struct {
	x         *mat.Dense // z-scored covariates as computed here
	y         []int      // 0-based levels
	beta      []float64
	zeta      []float64
	lp        []float64 // polr's linear predictor X beta
	lpNewton  []float64 // lp after Newton steps in beta at fixed zeta (R)
	dlp       []float64 // -X H_bb^-1 beta: slope of the mode in 1/s^2
	varBB     []float64 // diag(X H_bb^-1 X'), H_bb from polr's Hessian
	varExact  []float64 // the same with the analytic X'WX at lp
	loglik    float64
	logDetHbb float64
	logZSlope float64 // slope in 1/s^2 of LogZ + (p/2) log s^2
}

// readCSV returns the header's column indices and the data rows.
func readCSV(t *testing.T, path string) (map[string]int, [][]string) {
	t.Helper()
	rows := testutil.ReadCSV(t, path)
	col := make(map[string]int)
	for j, h := range rows[0] {
		col[h] = j
	}
	return col, rows[1:]
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// loadPolrRef reads the data and R's reference, z-scores the covariates
// (sample sd, as R's scale()) and checks them and polr's lp = X beta against
// R's to rounding, so that the data pipeline is not part of the comparison.
func loadPolrRef(t *testing.T) *polrRef {
	t.Helper()
	dcol, drows := readCSV(t, "testdata/autompg_part1.csv")
	rcol, rrows := readCSV(t, "testdata/polr_reference.csv")
	pcol, prows := readCSV(t, "testdata/polr_params.csv")
	n, p := len(drows), len(polrCovariates)
	if len(rrows) != n {
		t.Fatalf("%d data rows, %d reference rows", n, len(rrows))
	}
	params := make(map[string]float64)
	for _, r := range prows {
		params[r[pcol["name"]]] = parseF(t, r[pcol["value"]])
	}
	if params["convergence"] != 0 {
		t.Fatalf("polr did not converge (code %v)", params["convergence"])
	}
	ref := &polrRef{x: mat.NewDense(n, p, nil), loglik: params["loglik"], logDetHbb: params["logdet_H_bb"], logZSlope: params["logz_slope"]}
	for j, c := range polrCovariates {
		ref.beta = append(ref.beta, params["beta_"+c])
		col := make([]float64, n)
		for i, r := range drows {
			if r[dcol["row_id"]] != rrows[i][rcol["row_id"]] {
				t.Fatalf("row %d: data row_id %s, reference %s", i, r[dcol["row_id"]], rrows[i][rcol["row_id"]])
			}
			col[i] = parseF(t, r[dcol[c]])
		}
		mean := 0.0
		for _, v := range col {
			mean += v
		}
		mean /= float64(n)
		ss := 0.0
		for _, v := range col {
			ss += (v - mean) * (v - mean)
		}
		sd := math.Sqrt(ss / float64(n-1))
		for i, v := range col {
			z := (v - mean) / sd
			if rz := parseF(t, rrows[i][rcol["x_"+c]]); math.Abs(z-rz) > 1e-12 {
				t.Fatalf("row %d, %s: z-score %.17g here, %.17g in R", i, c, z, rz)
			}
			ref.x.Set(i, j, z)
		}
	}
	for k := 1; ; k++ {
		v, ok := params["zeta_"+strconv.Itoa(k)]
		if !ok {
			break
		}
		ref.zeta = append(ref.zeta, v)
	}
	counts := make([]int, len(ref.zeta)+1)
	for i, r := range drows {
		y := int(parseF(t, r[dcol["y_bin5"]])) - 1
		if ry := int(parseF(t, rrows[i][rcol["y"]])); ry != y {
			t.Fatalf("row %d: level %d here, %d in R", i, y, ry)
		}
		counts[y]++
		ref.y = append(ref.y, y)
		rr := rrows[i]
		ref.lp = append(ref.lp, parseF(t, rr[rcol["lp"]]))
		ref.dlp = append(ref.dlp, parseF(t, rr[rcol["dlp"]]))
		ref.lpNewton = append(ref.lpNewton, parseF(t, rr[rcol["lp_newton"]]))
		ref.varBB = append(ref.varBB, parseF(t, rr[rcol["var_bb"]]))
		ref.varExact = append(ref.varExact, parseF(t, rr[rcol["var_exact"]]))
		eta := mat.Dot(ref.x.RowView(i), mat.NewVecDense(p, ref.beta))
		if math.Abs(eta-ref.lp[i]) > 1e-12 {
			t.Fatalf("row %d: X beta %.17g, polr's lp %.17g", i, eta, ref.lp[i])
		}
	}
	for k, c := range counts {
		if c == 0 {
			t.Fatalf("level %d unused", k)
		}
	}
	return ref
}

// TestPolrLinearLimit checks the Laplace engine against MASS::polr(method =
// "probit") in the linear-kernel limit. With C = s^2 X X' the latent values
// are f = X beta, beta ~ N(0, s^2 I); with sigma = 1 and the thresholds fixed
// at polr's zeta, the log posterior in beta is polr's log-likelihood minus
// |beta|^2 / (2 s^2). So as s^2 -> infinity (first-order slopes in 1/s^2
// computed by R, see polr_reference.R):
//
//   - the mode f_hat = lp + dlp/s^2 + O(s^-4), dlp = -X H^-1 beta_hat, H =
//     X'WX; max |dlp| = 0.28;
//   - the variances diag(X (X'W(f_hat)X + I/s^2)^-1 X') -> diag(X H_bb^-1
//     X'), relative error below 1/(s^2 lambda_min(H)) = 0.22/s^2 from the
//     ridge term, plus W's change at f_hat (same order; 0.15/s^2 measured);
//   - LogZ + (p/2) log s^2 = loglik - (1/2) log det H_bb + logz_slope/s^2 +
//     O(s^-4), logz_slope = -2.89.
//
// The reference's own errors set the floors: polr (optim BFGS, reltol 1e-15)
// stops with lp 2.5e-8 from the exact optimum (polr_params.csv,
// max_abs_lp_minus_polished; lp_newton is the exact one, by Newton steps in
// R), and polr's Hessian is by finite differences, 4.2e-7 relative off the
// analytic one in the variances (max_rel_var_bb_minus_exact). The second-order
// terms, measured with s^2 = 100 and 1000, are 0.06/s^4 (mode) and 0.08/s^4
// (evidence). s^2 = 1e8 checks that large prior scales cause no
// numerical trouble (the whitened Newton system I + G'WG then has condition
// ~1e10).
func TestPolrLinearLimit(t *testing.T) {
	ref := loadPolrRef(t)
	n, p := ref.x.Dims()
	var xxt mat.SymDense
	xxt.SymOuterK(1, ref.x)
	o := &lik.OrdinalProbit{B: ref.zeta, Sigma: 1}
	sites := make([]lik.Site, n)
	for i, y := range ref.y {
		sites[i] = lik.Site{Item: i, Y: float64(y), Lik: o}
	}
	maxDlp := 0.0
	for _, v := range ref.dlp {
		maxDlp = math.Max(maxDlp, math.Abs(v))
	}
	const (
		polrLpErr   = 5e-8 // 2 x polr's 2.5e-8 distance from the optimum
		polrHessErr = 1e-6 // 2 x polr's 4.2e-7 finite-difference error
	)
	evLimit := ref.loglik - 0.5*ref.logDetHbb
	prevMean, prevS2 := math.Inf(1), 0.0
	for _, tc := range []struct {
		s2 float64
	}{
		{1e4},
		{1e6},
		{1e8},
	} {
		s2 := tc.s2
		var c mat.SymDense
		c.ScaleSym(s2, &xxt)
		fac, err := gp.NewFactor(&c)
		if err != nil {
			t.Fatal(err)
		}
		if fac.R != p {
			t.Errorf("s2 = %g: factor rank %d, want %d", s2, fac.R, p)
		}
		res, err := laplace.Run(fac, sites, laplace.Options{})
		if err != nil {
			t.Fatalf("s2 = %g: %v", s2, err)
		}
		var maxMean, maxMean1, maxVar, maxVarExact float64
		for i := range ref.lp {
			maxMean = math.Max(maxMean, math.Abs(res.Mean[i]-ref.lp[i]))
			maxMean1 = math.Max(maxMean1, math.Abs(res.Mean[i]-ref.lpNewton[i]-ref.dlp[i]/s2))
			maxVar = math.Max(maxVar, math.Abs(res.Var[i]/ref.varBB[i]-1))
			maxVarExact = math.Max(maxVarExact, math.Abs(res.Var[i]/ref.varExact[i]-1))
		}
		ev := res.LogZ + 0.5*float64(p)*math.Log(s2)
		evErr := ev - evLimit
		evErr1 := evErr - ref.logZSlope/s2
		t.Logf("s2 = %g: %d Newton steps; max |f_hat - lp| %.3g, max |f_hat - lp_newton - dlp/s2| %.3g; "+
			"max rel var error %.3g (polr's Hessian), %.3g (analytic); LogZ %.6f, LogZ + p/2 log s2 - limit %.3g (%.3g after the 1/s2 term)",
			s2, res.Iterations, maxMean, maxMean1, maxVar, maxVarExact, res.LogZ, evErr, evErr1)
		for _, c := range []struct {
			what     string
			got, tol float64
		}{
			{"max |f_hat - lp|", maxMean, 1.05*maxDlp/s2 + polrLpErr},
			{"max |f_hat - lp_newton - dlp/s2|", maxMean1, 0.1/(s2*s2) + 1e-11},
			{"max |Var / diag(X H_bb^-1 X') - 1|, polr's Hessian", maxVar, 0.3/s2 + polrHessErr},
			{"max |Var / diag(X H_bb^-1 X') - 1|, analytic Hessian", maxVarExact, 0.3/s2 + 2e-8},
			{"|LogZ + p/2 log s2 - (loglik - 1/2 log det H_bb)|", math.Abs(evErr), 1.05*math.Abs(ref.logZSlope)/s2 + 1e-8},
			{"the same minus logz_slope/s2", math.Abs(evErr1), 0.2/(s2*s2) + 1e-8},
		} {
			if !(c.got <= c.tol) {
				t.Errorf("s2 = %g: %s = %.3g, tolerance %.3g", s2, c.what, c.got, c.tol)
			}
		}
		if math.IsNaN(res.LogZ) || math.IsInf(res.LogZ, 0) {
			t.Errorf("s2 = %g: LogZ = %v", s2, res.LogZ)
		}
		// The limit converges: the mode's distance to lp falls like 1/s2
		// (within a factor 2) down to polr's own 2.5e-8 floor.
		if maxMean > math.Max(2*prevMean*prevS2/s2, polrLpErr) {
			t.Errorf("s2 = %g: max |f_hat - lp| %.3g, not below 2 x %.3g x %g/s2", s2, maxMean, prevMean, prevS2)
		}
		prevMean, prevS2 = maxMean, s2
	}
}
