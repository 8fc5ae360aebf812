package robust

import (
	"context"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater/kernel"
)

// The fixed-hyperparameter references of issue 16's first acceptance line,
// on two held-back real data sets (referenceSets):
//
//   - testdata/ionosphere40.csv, 40 rows of the Ionosphere data (rows 0, 8,
//     ..., 312 of bench_ionosphere/data.csv; the 32 continuous inputs
//     V3..V34 z-scored over those rows; y = +1 for "good"), made by
//     testdata/make_data.py; prior covariance C = exp(-gamma |x - x'|^2) +
//     1e-8 I with gamma = 1/32 (one over the number of inputs);
//   - testdata/thyroid40.csv, 40 rows of New Thyroid, Kim & Ghahramani's
//     own data set (rows 0, 5, ..., 195 of R's mclust::thyroid; the 5
//     inputs RT3U, T4, T3, TSH, DTSH z-scored over those rows; y = +1 for
//     "Hypo" or "Hyper", -1 for "Normal"), made by testdata/make_thyroid.R;
//     the same C with gamma = 0.05 (their thyroid kernel).
//
// Every reference number is read from a file in testdata that the named
// script writes (see testdata/README.md; the thyroid files carry the prefix
// ref_thyroid_ instead of ref_, each script run with the argument
// "thyroid"):
//
//   - ref_ep_logz.csv, ref_ep.csv: ep_reference.py, an independent EP
//     (GPML infEP / Rasmussen & Williams Alg. 3.5-3.6 with the tilted
//     moments of eps + (1 - 2 eps) Phi(y f / s) in closed form), converged
//     to 1e-13: log Z_EP and the posterior latent means and sds;
//   - ref_exact_logz.csv: exact_evidence.R, the exact evidence of the plain
//     model (eps = 0) as the orthant probability P(y_i g_i > 0 for all i),
//     g ~ N(0, C + s^2 I), by mvtnorm::pmvnorm (Genz-Bretz, 5 seeds);
//   - ref_is_logz.csv: is_evidence.py, importance sampling of the exact
//     evidence (proposal: a Student-t(5) around the EP posterior, widened
//     by 1.2; 2e6 draws) with its Monte Carlo error;
//   - ref_nuts.csv, ref_nuts_diagnostics.csv: nuts_reference.R, Stan NUTS
//     on robust_gp_fixed.stan (4 chains x 5000 draws after 1000 warmup):
//     posterior latent means and sds, R-hat.

// referenceCase is one fixed (eps, s).
type referenceCase struct {
	name string
	eps  float64
	s    float64
	// The NUTS tolerances (issue 16): EP mean within meanTol NUTS posterior
	// sds, EP sd within sdTol (relative) of the NUTS sd.
	meanTol, sdTol float64
	// exact: the reference of the evidence is the orthant probability
	// (exact_evidence.R); otherwise importance sampling (is_evidence.py).
	exact bool
}

var referenceCases = []referenceCase{
	{name: "A", eps: 0, s: 1, meanTol: 0.05, sdTol: 0.10, exact: true},
	{name: "B", eps: 0.1, s: 1, meanTol: 0.15, sdTol: 0.15},
	{name: "C", eps: 0.05, s: 0.5, meanTol: 0.15, sdTol: 0.15},
	// D: on ionosphere40 one site ends with a negative precision (kept,
	// Minka's EP).
	{name: "D", eps: 0.1, s: 0.5, meanTol: 0.15, sdTol: 0.15},
}

// referenceSet is one held-back data set of the references: its file in
// testdata, number of inputs, RBF gamma and the prefix of its reference
// files.
type referenceSet struct {
	name   string
	file   string
	d      int
	gamma  float64
	prefix string
	// factored: concord's pivoted factor of C (gp.NewPivotedFactor to the
	// residual trace 1e-2 s^2 / 4 that robust.Fit asks for) has a rank
	// below n here, and ep_reference.py wrote the EP with that factor as
	// the prior to <prefix>ep_factor.csv.
	factored bool
}

var referenceSets = []referenceSet{
	{name: "ionosphere40", file: "ionosphere40.csv", d: 32, gamma: 1.0 / 32, prefix: "ref_"},
	// Rank 25 (s = 1) and 28 (s = 0.5) of 40.
	{name: "thyroid40", file: "thyroid40.csv", d: 5, gamma: 0.05, prefix: "ref_thyroid_", factored: true},
}

// readRefCSV reads a CSV file of testdata with a header into one map per
// row.
func readRefCSV(t *testing.T, name string) []map[string]string {
	t.Helper()
	recs := testutil.ReadCSV(t, filepath.Join("testdata", name))
	if len(recs) < 2 {
		t.Fatalf("%s: no rows", name)
	}
	return testutil.Keyed(recs)
}

func refFloat(t *testing.T, m map[string]string, key string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(m[key], 64)
	if err != nil {
		t.Fatalf("reference field %q: %v", key, err)
	}
	return v
}

// referenceData builds the Data of a reference set's file (40 rows: row, y,
// x1..xd): one rater "r", classes "-1" and "1", and the RBF covariance with
// the set's gamma plus 1e-8 on the diagonal.
func referenceData(t *testing.T, set referenceSet) *Data {
	t.Helper()
	rows := readRefCSV(t, set.file)
	n := len(rows)
	if n != 40 {
		t.Fatalf("%s has %d rows, want 40", set.file, n)
	}
	x := mat.NewDense(n, set.d, nil)
	data := &Data{Classes: [2]string{"-1", "1"}, RaterIDs: []string{"r"},
		Kernel: "rbf:gamma=" + strconv.FormatFloat(set.gamma, 'g', -1, 64)}
	for i, r := range rows {
		if _, ok := r["x"+strconv.Itoa(set.d+1)]; ok || len(r) != set.d+2 {
			t.Fatalf("%s: %d columns, want row, y, x1..x%d", set.file, len(r), set.d)
		}
		for k := 0; k < set.d; k++ {
			x.Set(i, k, refFloat(t, r, "x"+strconv.Itoa(k+1)))
		}
		data.ItemIDs = append(data.ItemIDs, strconv.Itoa(i))
		data.Labels = append(data.Labels, Label{Item: i, Rater: 0, Y: refFloat(t, r, "y")})
	}
	cov := mat.NewSymDense(n, nil)
	kernel.RBF{Gamma: set.gamma}.GramTo(cov, kernel.Inputs{N: n, X: x})
	for i := 0; i < n; i++ {
		cov.SetSym(i, i, cov.At(i, i)+1e-8)
	}
	data.Cov = cov
	return data
}

// ionosphere40 builds the Data of testdata/ionosphere40.csv: one rater "r",
// classes "-1" and "1", and the RBF covariance with gamma 1/32 plus 1e-8 on
// the diagonal.
func ionosphere40(t *testing.T) *Data {
	t.Helper()
	return referenceData(t, referenceSets[0])
}

// TestReference compares, on each reference set, the EP fit at fixed eps
// and latent noise with the independent references (see above): log Z_EP to
// 1e-3 and the posterior means and sds to 1e-4 of ep_reference.py; log Z_EP
// within 0.4 nats of the exact (eps = 0) or importance-sampled (eps > 0)
// evidence; the posterior means within 0.05 (eps = 0) / 0.15 (eps > 0) NUTS
// posterior sds and the sds within 10% / 15% of the NUTS sds, per item.
//
// On thyroid40 concord's pivoted factor of C (residual trace at most
// 1e-2 s^2 / 4) has rank 25 (s = 1) or 28 (s = 0.5): its posterior differs
// from ep_reference.py's EP with the exact C by up to 1.4e-4 in the means
// and 5.0e-4 in the sds (case A; log Z_EP by 1.8e-4), above 1e-4. There the
// posterior is checked to 1e-4 against ep_reference.py's EP with that
// factor's G G' as the prior (ref_thyroid_ep_factor.csv; log Z_EP to 1e-3
// against both), and the difference from the exact C is logged.
//
// The references' values (for the record; the test reads the files):
//
//	ionosphere40 (gamma 1/32)
//	case  eps   s    log Z_EP (ep_reference.py)  exact (pmvnorm)        IS (is_evidence.py)
//	A     0     1    -19.39698                   -19.38642 +- 0.0004    -19.38833 +- 0.0010
//	B     0.1   1    -21.38792                                          -21.37985 +- 0.0010
//	C     0.05  0.5  -18.21804                                          -18.15767 +- 0.0014
//	D     0.1   0.5  -19.34108                                          -19.28968 +- 0.0013
//
//	thyroid40 (gamma 0.05)
//	case  eps   s    log Z_EP (ep_reference.py)  exact (pmvnorm)        IS (is_evidence.py)
//	A     0     1    -15.33383                   -15.32786 +- 0.0009    -15.32984 +- 0.0009
//	B     0.1   1    -17.70382                                          -17.68986 +- 0.0028
//	C     0.05  0.5  -13.63035                                          -13.60114 +- 0.0011
//	D     0.1   0.5  -15.13739                                          -15.10468 +- 0.0012
//
// Against NUTS (nuts_reference.R) the largest |EP mean - NUTS mean| / NUTS
// sd is, for A / B / C / D, 0.015 / 0.012 / 0.023 / 0.022 on ionosphere40
// (max R-hat 1.0002, min n_eff 20829, no divergences) and 0.012 / 0.019 /
// 0.012 / 0.019 on thyroid40 (max R-hat 1.0001, min n_eff 20333, no
// divergences); the largest |EP sd / NUTS sd - 1| is 0.022 / 0.029 / 0.062
// / 0.060 and 0.018 / 0.041 / 0.067 / 0.072. In case D on ionosphere40 one
// site's precision is negative at the EP fixed point (ep_reference.py keeps
// it, as concord does); the test checks that concord's count of negative
// sites equals ep_reference.py's in every case.
func TestReference(t *testing.T) {
	for _, set := range referenceSets {
		t.Run(set.name, func(t *testing.T) { testReferenceSet(t, set) })
	}
}

func testReferenceSet(t *testing.T, set referenceSet) {
	data := referenceData(t, set)
	n := len(data.ItemIDs)
	type pair struct{ mean, sd float64 }
	epLogZ := map[string]float64{}
	epNeg := map[string]float64{}
	for _, r := range readRefCSV(t, set.prefix+"ep_logz.csv") {
		epLogZ[r["case"]] = refFloat(t, r, "logz_ep")
		epNeg[r["case"]] = refFloat(t, r, "negative_sites")
	}
	epItems := map[string][]pair{}
	for _, r := range readRefCSV(t, set.prefix+"ep.csv") {
		epItems[r["case"]] = append(epItems[r["case"]], pair{refFloat(t, r, "mean"), refFloat(t, r, "sd")})
	}
	factorItems := map[string][]pair{}
	factorLogZ := map[string]float64{}
	factorResidual := map[string]float64{}
	if set.factored {
		for _, r := range readRefCSV(t, set.prefix+"ep_factor.csv") {
			factorItems[r["case"]] = append(factorItems[r["case"]], pair{refFloat(t, r, "mean"), refFloat(t, r, "sd")})
			factorLogZ[r["case"]] = refFloat(t, r, "logz_ep")
			factorResidual[r["case"]] = refFloat(t, r, "residual")
		}
	}
	exact := map[string][2]float64{}
	for _, r := range readRefCSV(t, set.prefix+"exact_logz.csv") {
		exact[r["case"]] = [2]float64{refFloat(t, r, "logz_exact"), refFloat(t, r, "logz_err")}
	}
	is := map[string][2]float64{}
	for _, r := range readRefCSV(t, set.prefix+"is_logz.csv") {
		is[r["case"]] = [2]float64{refFloat(t, r, "logz_is"), refFloat(t, r, "mc_se")}
	}
	nuts := map[string][]pair{}
	for _, r := range readRefCSV(t, set.prefix+"nuts.csv") {
		nuts[r["case"]] = append(nuts[r["case"]], pair{refFloat(t, r, "mean"), refFloat(t, r, "sd")})
	}
	for _, r := range readRefCSV(t, set.prefix+"nuts_diagnostics.csv") {
		if rh := refFloat(t, r, "max_rhat"); rh > 1.01 {
			t.Fatalf("case %s: the NUTS reference has R-hat %v", r["case"], rh)
		}
	}

	for _, c := range referenceCases {
		t.Run(c.name, func(t *testing.T) {
			if len(epItems[c.name]) != n || len(nuts[c.name]) != n {
				t.Fatalf("references of case %s: %d EP items, %d NUTS items, want %d", c.name, len(epItems[c.name]), len(nuts[c.name]), n)
			}
			res, err := Fit(context.Background(), data, Options{FixEpsilon: true, Epsilon: c.eps, Noise: c.s, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			logZ := *res.Diagnostics.LogEvidence

			// (a) ep_reference.py: the same EP fixed point.
			if d := math.Abs(logZ - epLogZ[c.name]); d > 1e-3 {
				t.Errorf("log Z_EP %.6f, ep_reference.py %.6f: differ by %.2g > 1e-3", logZ, epLogZ[c.name], d)
			}
			maxDiff := func(ref []pair) (dMean, dSD float64) {
				for i, it := range res.Items {
					dMean = math.Max(dMean, math.Abs(it.Score.Mean-ref[i].mean))
					dSD = math.Max(dSD, math.Abs(it.Score.SD-ref[i].sd))
				}
				return dMean, dSD
			}
			dMean, dSD := maxDiff(epItems[c.name])
			// The posterior to 1e-4: against the EP with the exact C, or,
			// where concord's pivoted factor of C has a rank below n
			// (set.factored), against the same EP with that factor's
			// G G' as the prior (ep_factor.csv), the fixed point concord
			// computes.
			refMean, refSD, refName := dMean, dSD, "ep_reference.py"
			if set.factored {
				fz := factorLogZ[c.name]
				if len(factorItems[c.name]) != n {
					t.Fatalf("%sep_factor.csv: %d items of case %s, want %d", set.prefix, len(factorItems[c.name]), c.name, n)
				}
				if d := math.Abs(logZ - fz); d > 1e-3 {
					t.Errorf("log Z_EP %.6f, ep_reference.py with concord's prior factor %.6f: differ by %.2g > 1e-3", logZ, fz, d)
				}
				refMean, refSD = maxDiff(factorItems[c.name])
				refName = "ep_reference.py with concord's prior factor"
				t.Logf("against ep_reference.py with the exact C: max |mean diff| %.2g, max |sd diff| %.2g (concord's prior factor leaves out a residual trace of %.3g)",
					dMean, dSD, factorResidual[c.name])
			}
			if refMean > 1e-4 || refSD > 1e-4 {
				t.Errorf("posterior against %s: max |mean diff| %.2g, max |sd diff| %.2g, want both <= 1e-4", refName, refMean, refSD)
			}
			if neg := res.Diagnostics.Moves["negative_sites"]; neg != epNeg[c.name] {
				t.Errorf("%v sites with a negative precision, ep_reference.py has %v", neg, epNeg[c.name])
			}

			// (b) exact_evidence.R (eps = 0) or (c) is_evidence.py (eps > 0).
			ev, src := is[c.name], "is_evidence.py"
			if c.exact {
				ev, src = exact[c.name], "exact_evidence.R"
			}
			if ev == [2]float64{} {
				t.Fatalf("no %s reference for case %s", src, c.name)
			}
			if d := math.Abs(logZ - ev[0]); d > 0.4 {
				t.Errorf("log Z_EP %.4f, %s %.4f +- %.2g: differ by %.3f > 0.4 nats", logZ, src, ev[0], ev[1], d)
			}

			// (d) nuts_reference.R.
			var wMean, wSD float64
			for i, it := range res.Items {
				ref := nuts[c.name][i]
				m := math.Abs(it.Score.Mean-ref.mean) / ref.sd
				s := math.Abs(it.Score.SD/ref.sd - 1)
				wMean, wSD = math.Max(wMean, m), math.Max(wSD, s)
				if m > c.meanTol {
					t.Errorf("item %d: EP mean %.4f, NUTS %.4f (sd %.4f): %.3f NUTS sds > %v", i, it.Score.Mean, ref.mean, ref.sd, m, c.meanTol)
				}
				if s > c.sdTol {
					t.Errorf("item %d: EP sd %.4f, NUTS sd %.4f: relative difference %.3f > %v", i, it.Score.SD, ref.sd, s, c.sdTol)
				}
			}
			t.Logf("eps %g s %g: log Z_EP %.6f (ep_reference.py %.6f, %s %.4f +- %.2g); against %s max |mean diff| %.2g, |sd diff| %.2g; against NUTS max |mean diff|/sd %.4f, max |sd ratio - 1| %.4f; negative sites %v",
				c.eps, c.s, logZ, epLogZ[c.name], src, ev[0], ev[1], refName, refMean, refSD, wMean, wSD, res.Diagnostics.Moves["negative_sites"])
		})
	}
}

// TestIntegratedEvidence compares IntegratedLogEvidence (the evidence
// Options.Select gives the robust model: the EP evidence with the error rate
// integrated over its uniform prior on [0, 1/2], by the EP cavities held
// fixed) at a fixed latent noise with an importance-sampling estimate of the
// exact integral (testdata/integrated_evidence.py, ref_integrated_logz.csv)
// within 0.2 nats (measured: 0.034 at s = 1, 0.077 at s = 0.5; the issue's
// bar for the EP evidence itself against importance sampling is 0.4), that
// the evidence at the learnt error rate is at least the plain one, and that
// the selection compares the plain evidence with the integrated one.
func TestIntegratedEvidence(t *testing.T) {
	data := ionosphere40(t)
	for _, r := range readRefCSV(t, "ref_integrated_logz.csv") {
		s, want := refFloat(t, r, "s"), refFloat(t, r, "logz_int")
		t.Run(r["s"], func(t *testing.T) {
			res, err := Fit(context.Background(), data, Options{Select: true, Noise: s, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			ev := res.Diagnostics.Evidence
			got := ev[RobustIntegrated]
			t.Logf("s %g: plain %.4f, robust at learnt eps %.4f, integrated %.4f, importance sampling %.4f; selected %s",
				s, ev[Plain], ev[Robust], got, want, res.Diagnostics.Selected)
			if d := math.Abs(got - want); d > 0.2 {
				t.Errorf("integrated log evidence %.4f, importance sampling %.4f: differ by %.3f > 0.2", got, want, d)
			}
			// The plain model is the robust one at eps = 0: the learnt
			// error rate's evidence is never below it (tryBoundary; EM
			// alone stopped at -19.3984 < -19.3970 for s = 1).
			if ev[Robust] < ev[Plain]-1e-6 {
				t.Errorf("robust evidence at the learnt error rate %.6f below the plain evidence %.6f", ev[Robust], ev[Plain])
			}
			if got > ev[Robust] {
				t.Errorf("integrated log evidence %.4f above the evidence at the learnt error rate %.4f", got, ev[Robust])
			}
			wantSel := Robust
			if ev[Plain] >= got {
				wantSel = Plain
			}
			if res.Diagnostics.Selected != wantSel {
				t.Errorf("selected %s, want %s", res.Diagnostics.Selected, wantSel)
			}
		})
	}
}
