package ordinal

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/lik"
)

// The EP-vs-NUTS reference of testdata/stan_ep (see its README.md): the
// ordinal probit GP at fixed hyperparameters on real data, its exact
// posterior sampled by Stan's NUTS (4 chains x 10000 draws), compared with
// concord's EP. The acceptance bar, from the issue:
const (
	// |mean_EP - mean_NUTS| / sd_NUTS for every latent value.
	stanEPMeanTol = 0.05
	// |sd_EP / sd_NUTS - 1| for every latent value.
	stanEPSDTol = 0.05
	// |P_EP(y = k) - P_NUTS(y = k)| for every predicted item and level.
	stanEPPredTol = 0.01
	// The reference itself must have a Monte Carlo error well inside the
	// bar: MCSE of each mean and of each sd below 1% of the sd, Rhat below
	// 1.01, MCSE of each predictive probability below 0.002.
	stanEPRefMCSE, stanEPRefRhat, stanEPRefPredMCSE = 0.01, 1.01, 0.002
)

const stanEPDir = "testdata/stan_ep"

// TestEPMatchesStan checks, per case of testdata/stan_ep/params.csv:
//
//   - ep.Run's posterior marginals against NUTS's means and sds;
//   - the predictive class probabilities computed here from the EP sites
//     (the Gaussian conditional of new items under the EP posterior,
//     independent of concord's predictor) against NUTS's Rao-Blackwellised
//     ones: for new items of the RBF cases, and for a fresh rating of each
//     rated (item, rater) pair in the identity case;
//   - for the one-rater cases, FitDeterministic (engine ep, the thresholds
//     and sigma fixed) and NewPredictor(...).Predict on the new items.
func TestEPMatchesStan(t *testing.T) {
	params := readStanEPParams(t)
	bar := stanEPTol{mean: stanEPMeanTol, sd: stanEPSDTol, pred: stanEPPredTol, gauss: stanEPPredTol}
	for _, tc := range []struct {
		name string
		tol  stanEPTol
	}{
		// Pyrimidines, 50 training and 24 new items, RBF kernel, sigma 0.4.
		{"pyrimidines_sigma0.4", bar},
		// The same with strong observations, sigma 0.1: the predictive
		// distributions of new items are skewed, and even a Gaussian with
		// the exact posterior moments misses the exact class probabilities
		// by up to 0.0125 (ref_pyrimidines_sigma0.1_pred.csv, gauss_prob):
		// the 0.01 is out of reach of any Gaussian predictive (EP's
		// misses by 0.0136; it is held to 0.01 of that Gaussian), and is
		// met by the EP evidence ratio (0.0034).
		{"pyrimidines_sigma0.1", bar},
		// sirt k1: 135 essays, 7 raters with their own thresholds and
		// sigma, identity kernel (several sites per item).
		{"sirt_k1", bar},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := params[tc.name]
			if !ok {
				t.Fatalf("case %s missing from params.csv", tc.name)
			}
			testEPMatchesStan(t, c, tc.tol)
		})
	}
}

// stanEPTol are the tolerances of a case: on |mean_EP - mean_NUTS|/sd_NUTS,
// |sd_EP/sd_NUTS - 1|, |P(y = k) - P_NUTS(y = k)| of the EP evidence ratio
// (pred), and |P(y = k) - P_Gauss(y = k)| of EP's Gaussian predictive
// (gauss), P_Gauss being that of a Gaussian with the exact posterior
// moments (the best any Gaussian predictive can do).
type stanEPTol struct{ mean, sd, pred, gauss float64 }

type stanEPRater struct {
	id    string
	sigma float64
	b     []float64
}

type stanEPCase struct {
	name, data, kernel string
	gamma, jitter      float64
	raters             []stanEPRater // sorted by id
}

// stanEPProblem is a case's data: training items with ratings, and new items
// with their cross-covariances (RBF cases).
type stanEPProblem struct {
	itemIDs, raterIDs []string
	levels            []string
	ratings           []multirater.Rating
	cov               *mat.SymDense // nil: identity
	kern              string
	testIDs           []string
	cross             *mat.Dense
	prior             []float64
}

func testEPMatchesStan(t *testing.T, c stanEPCase, tol stanEPTol) {
	pb := loadStanEPProblem(t, c)
	n := len(pb.itemIDs)
	checkStanEPReference(t, c.name)

	fac := gp.IdentityFactor(n)
	if pb.cov != nil {
		var err error
		if fac, err = gp.NewFactor(pb.cov); err != nil {
			t.Fatal(err)
		}
	}
	liks := make([]lik.OrdinalProbit, len(c.raters))
	for l, r := range c.raters {
		liks[l] = lik.OrdinalProbit{B: r.b, Sigma: r.sigma}
	}
	sites := make([]lik.Site, len(pb.ratings))
	for j, r := range pb.ratings {
		sites[j] = lik.Site{Item: r.Item, Y: float64(r.Level), Lik: &liks[r.Rater]}
	}
	// Sequential EP (the default), and parallel EP (what FitDeterministic
	// uses for a prior of rank above 100): the same fixed point.
	par, err := ep.Run(fac, sites, ep.Options{Parallel: true})
	if err != nil {
		t.Fatalf("ep.Run parallel: %v", err)
	}
	t.Logf("parallel EP: %d sweeps, %d skipped site updates, log Z_EP %.4f", par.Sweeps, par.Skipped, par.LogZ)
	compareStanEPLatent(t, "ep.Run parallel", c.name, pb.itemIDs, par.Mean, par.Var, tol)
	res, err := ep.Run(fac, sites, ep.Options{})
	if err != nil {
		t.Fatalf("ep.Run: %v", err)
	}
	t.Logf("EP: %d sweeps, %d skipped site updates, log Z_EP %.4f", res.Sweeps, res.Skipped, res.LogZ)
	compareStanEPLatent(t, "ep.Run", c.name, pb.itemIDs, res.Mean, res.Var, tol)

	// The posterior q(f) = N(mu, Sigma) from the sites alone:
	// Sigma = (C^-1 + S)^-1 = C - C s B^-1 s C, B = I + s C s, s = sqrt(S),
	// mu = Sigma nu (Rasmussen & Williams sec. 3.6).
	post := newStanEPPosterior(t, pb, res)
	for i := 0; i < n; i++ {
		m, v := post.marginal(i)
		if math.Abs(m-res.Mean[i]) > 1e-6*math.Sqrt(v) || math.Abs(v/res.Var[i]-1) > 1e-6 {
			t.Fatalf("item %s: the EP sites give N(%.8g, %.8g), ep.Result N(%.8g, %.8g)", pb.itemIDs[i], m, v, res.Mean[i], res.Var[i])
		}
	}

	ref := readStanEPPred(t, c.name)
	byLevel := make([]float64, len(pb.levels))
	// New items (RBF cases): f* | q ~ N(mu*, v*), P(y* = k) = the probit
	// difference with sd sqrt(sigma^2 + v*) (Chu eq. 16-18): held to the
	// Gaussian with the exact moments, its distance to NUTS logged.
	if len(pb.testIDs) > 0 {
		worst := stanEPWorst{tolGauss: tol.gauss}
		for ti, id := range pb.testIDs {
			mu, v := post.predict(pb.cross.RawRowView(ti), pb.prior[ti])
			for k := range byLevel {
				byLevel[k] = probitLevel(c.raters[0].b, k, mu, math.Sqrt(c.raters[0].sigma*c.raters[0].sigma+v))
			}
			worst.pred(t, "Gaussian predictive from the EP sites", ref, "test", id, c.raters[0].id, byLevel, true)
		}
		t.Logf("new items, Gaussian predictive from the EP sites: %s", &worst)
	}
	// The EP evidence ratio P(y* = k) = Z_EP(D + y* = k)/Z_EP(D),
	// normalised over k (ep.Result.NewItem and Item with the default
	// block, AddOptions{}): new items, and (identity case) a fresh rating
	// of each rated (item, rater) pair. The ratios' sum before the
	// normalisation is logged.
	ratio := func(a *ep.Added, o *lik.OrdinalProbit) float64 {
		sum := 0.0
		for k := range byLevel {
			d, _, err := a.LogZRatio(o, float64(k))
			if err != nil {
				t.Fatalf("LogZRatio: %v", err)
			}
			byLevel[k] = math.Exp(d)
			sum += byLevel[k]
		}
		for k := range byLevel {
			byLevel[k] /= sum
		}
		return math.Abs(sum - 1)
	}
	if len(pb.testIDs) > 0 {
		worst := stanEPWorst{tol: tol.pred}
		g := make([]float64, fac.R)
		dev := 0.0
		minBlock, maxBlock := n, 0
		for ti, id := range pb.testIDs {
			resid := fac.WhitenTo(g, pb.cross.RawRowView(ti), pb.prior[ti])
			a := res.NewItem(g, resid, ep.AddOptions{})
			minBlock, maxBlock = min(minBlock, a.Items()), max(maxBlock, a.Items())
			dev = math.Max(dev, ratio(a, &liks[0]))
			worst.pred(t, "EP evidence ratio", ref, "test", id, c.raters[0].id, byLevel, true)
		}
		t.Logf("new items, EP evidence ratio (blocks of %d to %d items): %s; max |sum of the ratios - 1| = %.4f", minBlock, maxBlock, &worst, dev)
	}
	if pb.cov == nil {
		worst := stanEPWorst{tol: tol.pred}
		dev := 0.0
		for _, r := range pb.ratings {
			dev = math.Max(dev, ratio(res.Item(r.Item, ep.AddOptions{}), &liks[r.Rater]))
			worst.pred(t, "EP evidence ratio", ref, "replicate", pb.itemIDs[r.Item], c.raters[r.Rater].id, byLevel, true)
		}
		t.Logf("replicate ratings, EP evidence ratio: %s; max |sum of the ratios - 1| = %.4f", &worst, dev)
	}
	// Replicate ratings (identity case): a fresh rating by rater l of a
	// rated item i, P(y = k) = the probit difference at the EP marginal
	// with sd sqrt(sigma_l^2 + v_i) (what the fit reports as the item's
	// RaterGradeProbs). This is not a held-out item, so outside the issue's
	// bar: it is logged, not asserted. On sirt_k1 even a Gaussian with the
	// exact posterior moments misses the exact probabilities by up to 0.011
	// (the marginals are skewed), so 0.01 is out of reach of EP's
	// Gaussian here; the evidence ratio above meets it.
	if pb.cov == nil {
		worst := stanEPWorst{}
		for _, r := range pb.ratings {
			rt := c.raters[r.Rater]
			for k := range byLevel {
				byLevel[k] = probitLevel(rt.b, k, res.Mean[r.Item], math.Sqrt(rt.sigma*rt.sigma+res.Var[r.Item]))
			}
			worst.pred(t, "EP marginal", ref, "replicate", pb.itemIDs[r.Item], rt.id, byLevel, false)
		}
		t.Logf("replicate ratings (not asserted), EP marginals: %s", &worst)
	}

	// The public API: FitDeterministic with the common sigma and
	// thresholds fixed, then the predictor on the new items.
	if len(c.raters) != 1 {
		return
	}
	data := &Data{ItemIDs: pb.itemIDs, RaterIDs: pb.raterIDs, Levels: pb.levels, Ratings: pb.ratings, Kernel: pb.kern}
	if pb.cov != nil {
		data.Cov = pb.cov
	}
	det, err := FitDeterministic(context.Background(), data, DetOptions{Engine: multirater.EngineEP,
		Sigma: c.raters[0].sigma, Thresholds: c.raters[0].b, Seed: 1})
	if err != nil {
		t.Fatalf("FitDeterministic: %v", err)
	}
	mean, vr := make([]float64, n), make([]float64, n)
	for i, it := range det.Items {
		if it.ID != pb.itemIDs[i] {
			t.Fatalf("FitDeterministic item %d is %s, want %s", i, it.ID, pb.itemIDs[i])
		}
		mean[i], vr[i] = it.Score.Mean, it.Score.SD*it.Score.SD
	}
	compareStanEPLatent(t, "FitDeterministic", c.name, pb.itemIDs, mean, vr, tol)
	if len(pb.testIDs) == 0 {
		return
	}
	cov := data.CovOrIdentity()
	// The predictor: by default the EP evidence ratio, held to NUTS; with
	// PredictOptions.Gaussian the Gaussian predictive, held to the
	// Gaussian with the exact moments.
	for _, po := range []struct {
		name string
		opts PredictOptions
		tol  stanEPWorst
	}{
		{"Predictor", PredictOptions{}, stanEPWorst{tol: tol.pred}},
		{"Predictor (Gaussian)", PredictOptions{Gaussian: true}, stanEPWorst{tolGauss: tol.gauss}},
	} {
		pred, err := NewPredictorOptions(det, cov, po.opts)
		if err != nil {
			t.Fatalf("NewPredictor: %v", err)
		}
		out, notes := pred.PredictNotes(pb.testIDs, pb.cross, pb.prior)
		worst := po.tol
		for ti, it := range out {
			if it.ID != pb.testIDs[ti] {
				t.Fatalf("prediction %d is for %s, want %s", ti, it.ID, pb.testIDs[ti])
			}
			for k, lv := range pb.levels {
				p, ok := it.GradeProbs[lv]
				if !ok {
					t.Fatalf("prediction for %s has no level %s", it.ID, lv)
				}
				byLevel[k] = p
			}
			worst.pred(t, po.name, ref, "test", it.ID, c.raters[0].id, byLevel, true)
		}
		t.Logf("new items, %s: %s; notes %q", po.name, &worst, notes)
		if len(notes) == 0 || strings.Contains(notes[0], "evidence ratio P(") == po.opts.Gaussian {
			t.Errorf("%s: notes %q do not say which predictive was used", po.name, notes)
		}
	}
}

// compareStanEPLatent checks posterior marginals (mean, vr) of the items
// against the NUTS reference and logs the worst discrepancies.
func compareStanEPLatent(t *testing.T, who, name string, ids []string, mean, vr []float64, tol stanEPTol) {
	t.Helper()
	hdr, rows := readStanEPCSV(t, fmt.Sprintf("ref_%s_latent.csv", name))
	if len(rows) != len(ids) {
		t.Fatalf("%s: reference has %d items, the data %d", name, len(rows), len(ids))
	}
	idx := make(map[string]int, len(ids))
	for i, id := range ids {
		idx[id] = i
	}
	_, hasQuad := hdr["quad_mean"]
	var worstM, worstS, quadM, quadS float64
	var atM, atS string
	failed := 0
	for _, r := range rows {
		id := r[hdr["item_id"]]
		i, ok := idx[id]
		if !ok {
			t.Fatalf("%s: reference item %s not in the data", name, id)
		}
		m, sd := csvFloat(t, r[hdr["mean"]]), csvFloat(t, r[hdr["sd"]])
		em := math.Abs(mean[i]-m) / sd
		es := math.Abs(math.Sqrt(vr[i])/sd - 1)
		if em > worstM {
			worstM, atM = em, id
		}
		if es > worstS {
			worstS, atS = es, id
		}
		if (em > tol.mean || es > tol.sd) && failed < 10 {
			failed++
			t.Errorf("%s item %s: EP N(%.4f, sd %.4f), NUTS mean %.4f sd %.4f: |mean error|/sd %.4f (tol %g), |sd ratio - 1| %.4f (tol %g)",
				who, id, mean[i], math.Sqrt(vr[i]), m, sd, em, tol.mean, es, tol.sd)
		}
		if hasQuad {
			qm, qs := csvFloat(t, r[hdr["quad_mean"]]), csvFloat(t, r[hdr["quad_sd"]])
			quadM = math.Max(quadM, math.Abs(mean[i]-qm)/qs)
			quadS = math.Max(quadS, math.Abs(math.Sqrt(vr[i])/qs-1))
		}
	}
	t.Logf("%s vs NUTS: max |mean_EP - mean_NUTS|/sd_NUTS = %.4f (item %s), max |sd_EP/sd_NUTS - 1| = %.4f (item %s)", who, worstM, atM, worstS, atS)
	if hasQuad {
		t.Logf("%s vs exact quadrature: max |mean error|/sd = %.4f, max |sd ratio - 1| = %.4f", who, quadM, quadS)
	}
}

// checkStanEPReference fails when the reference's own Monte Carlo error is
// not well inside the acceptance bar.
func checkStanEPReference(t *testing.T, name string) {
	t.Helper()
	hdr, rows := readStanEPCSV(t, fmt.Sprintf("ref_%s_latent.csv", name))
	for _, r := range rows {
		sd := csvFloat(t, r[hdr["sd"]])
		mm, ms, rh := csvFloat(t, r[hdr["mcse_mean"]]), csvFloat(t, r[hdr["mcse_sd"]]), csvFloat(t, r[hdr["rhat"]])
		if mm/sd > stanEPRefMCSE || ms/sd > stanEPRefMCSE || rh > stanEPRefRhat {
			t.Fatalf("reference item %s: MCSE of mean %.4f sd, of sd %.4f sd, Rhat %.4f", r[hdr["item_id"]], mm/sd, ms/sd, rh)
		}
	}
	hdr, rows = readStanEPCSV(t, fmt.Sprintf("ref_%s_diagnostics.csv", name))
	if d := rows[0][hdr["divergences"]]; d != "0" {
		t.Fatalf("reference has %s divergent transitions", d)
	}
	hdr, rows = readStanEPCSV(t, fmt.Sprintf("ref_%s_pred.csv", name))
	for _, r := range rows {
		if m := csvFloat(t, r[hdr["mcse"]]); m > stanEPRefPredMCSE {
			t.Fatalf("reference prediction %v: MCSE %.4f", r, m)
		}
	}
}

// stanEPPredRef maps kind/item/rater to the NUTS class probabilities, their
// MCSEs, (identity case) the quadrature values and the probabilities of a
// Gaussian with the exact (NUTS) moments of the latent value, the best any
// Gaussian approximation can do.
type stanEPPredRef map[string]*stanEPPredRow

type stanEPPredRow struct{ prob, mcse, quad, gauss []float64 }

func readStanEPPred(t *testing.T, name string) stanEPPredRef {
	hdr, rows := readStanEPCSV(t, fmt.Sprintf("ref_%s_pred.csv", name))
	out := stanEPPredRef{}
	for _, r := range rows {
		key := r[hdr["kind"]] + "/" + r[hdr["item_id"]] + "/" + r[hdr["rater_id"]]
		e := out[key]
		if e == nil {
			e = &stanEPPredRow{}
			out[key] = e
		}
		if k, _ := strconv.Atoi(r[hdr["level"]]); k != len(e.prob) {
			t.Fatalf("%s: levels out of order", key)
		}
		e.prob = append(e.prob, csvFloat(t, r[hdr["prob"]]))
		e.mcse = append(e.mcse, csvFloat(t, r[hdr["mcse"]]))
		q := math.NaN()
		if s := r[hdr["quad_prob"]]; s != "" {
			q = csvFloat(t, s)
		}
		e.quad = append(e.quad, q)
		e.gauss = append(e.gauss, csvFloat(t, r[hdr["gauss_prob"]]))
	}
	return out
}

// stanEPWorst collects the worst errors of predicted class probabilities:
// against NUTS (err, at item/rater/level), against the Gaussian with the
// exact moments (vsGauss), and that Gaussian's own error (floor).
type stanEPWorst struct {
	err, want, mcse, quad float64
	item, rater           string
	level, failed         int
	vsGauss, floor        float64
	tol                   float64 // if positive, assert errors below tol
	tolGauss              float64 // if positive, assert |P_EP - P_Gauss| below it
}

func (w *stanEPWorst) String() string {
	s := fmt.Sprintf("max |P_EP - P_NUTS| = %.5f (item %s rater %s level %d, NUTS %.4f, MCSE %.5f", w.err, w.item, w.rater, w.level, w.want, w.mcse)
	if !math.IsNaN(w.quad) {
		s += fmt.Sprintf(", quadrature %.4f", w.quad)
	}
	return s + fmt.Sprintf("); max |P_EP - P_Gauss| = %.5f, where P_Gauss is a Gaussian with the exact moments, whose own max error is %.5f", w.vsGauss, w.floor)
}

// pred compares the class probabilities got with the reference's and
// records the worst errors; with assert, an error above w.tol fails the
// test.
func (w *stanEPWorst) pred(t *testing.T, who string, ref stanEPPredRef, kind, item, rater string, got []float64, assert bool) {
	t.Helper()
	e := ref[kind+"/"+item+"/"+rater]
	if e == nil || len(e.prob) != len(got) {
		t.Fatalf("no reference %s prediction for item %s rater %s with %d levels", kind, item, rater, len(got))
	}
	for k, p := range got {
		d := math.Abs(p - e.prob[k])
		w.vsGauss = math.Max(w.vsGauss, math.Abs(p-e.gauss[k]))
		if assert && w.tolGauss > 0 && math.Abs(p-e.gauss[k]) > w.tolGauss {
			t.Errorf("%s: item %s rater %s level %d: P = %.4f, Gaussian with the exact moments %.4f: error %.4f > %g",
				who, item, rater, k, p, e.gauss[k], math.Abs(p-e.gauss[k]), w.tolGauss)
		}
		w.floor = math.Max(w.floor, math.Abs(e.prob[k]-e.gauss[k]))
		if d > w.err {
			w.err, w.want, w.mcse, w.quad, w.item, w.rater, w.level = d, e.prob[k], e.mcse[k], e.quad[k], item, rater, k
		}
		if assert && w.tol > 0 && d > w.tol && w.failed < 10 {
			w.failed++
			t.Errorf("%s: item %s rater %s level %d: P = %.4f, NUTS %.4f (MCSE %.5f): error %.4f > %g",
				who, item, rater, k, p, e.prob[k], e.mcse[k], d, w.tol)
		}
	}
}

// stanEPPosterior is the EP posterior rebuilt from the sites' summed
// natural parameters S (precision) and nu per item: B = I + s C s = U'U
// (Cholesky), s = sqrt(S), alpha = nu - s B^-1 s C nu, so that mu = C
// alpha, Sigma = C - C s B^-1 s C, and for a new item with covariances k
// mu* = k' alpha and v* = k** - (s k)' B^-1 (s k).
type stanEPPosterior struct {
	c     mat.Symmetric
	s     []float64
	chol  mat.Cholesky
	alpha *mat.VecDense
}

func newStanEPPosterior(t *testing.T, pb *stanEPProblem, res *ep.Result) *stanEPPosterior {
	n := len(pb.itemIDs)
	var c mat.Symmetric = pb.cov
	if pb.cov == nil {
		id := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			id.SetSym(i, i, 1)
		}
		c = id
	}
	sum, nu := make([]float64, n), make([]float64, n)
	for j, r := range pb.ratings {
		sum[r.Item] += res.Tau[j]
		nu[r.Item] += res.Nu[j]
	}
	p := &stanEPPosterior{c: c, s: make([]float64, n)}
	for i, v := range sum {
		if v < 0 {
			t.Fatalf("item %s: summed site precision %g < 0", pb.itemIDs[i], v)
		}
		p.s[i] = math.Sqrt(v)
	}
	if !p.chol.Factorize(gp.IPlusSCS(c, p.s)) {
		t.Fatal("B = I + s C s is not positive definite")
	}
	nuv := mat.NewVecDense(n, nu)
	var cnu mat.VecDense
	cnu.MulVec(c, nuv)
	x := p.solveScaled(t, cnu.RawVector().Data)
	p.alpha = mat.NewVecDense(n, nil)
	for i := 0; i < n; i++ {
		p.alpha.SetVec(i, nu[i]-x[i])
	}
	return p
}

// solveScaled returns s B^-1 s v.
func (p *stanEPPosterior) solveScaled(t *testing.T, v []float64) []float64 {
	n := len(p.s)
	sv := mat.NewVecDense(n, nil)
	for i := range p.s {
		sv.SetVec(i, p.s[i]*v[i])
	}
	var x mat.VecDense
	if err := p.chol.SolveVecTo(&x, sv); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = p.s[i] * x.AtVec(i)
	}
	return out
}

// predict returns the posterior mean and variance of a latent value with
// covariances k to the training items and prior variance kss.
func (p *stanEPPosterior) predict(k []float64, kss float64) (mu, v float64) {
	n := len(p.s)
	kv := mat.NewVecDense(n, k)
	mu = mat.Dot(kv, p.alpha)
	sk := mat.NewVecDense(n, nil)
	for i := range p.s {
		sk.SetVec(i, p.s[i]*k[i])
	}
	var x mat.VecDense
	if err := p.chol.SolveVecTo(&x, sk); err != nil {
		panic(err)
	}
	return mu, kss - mat.Dot(sk, &x)
}

// marginal returns the posterior mean and variance of training item i.
func (p *stanEPPosterior) marginal(i int) (mu, v float64) {
	n := len(p.s)
	k := make([]float64, n)
	for j := range k {
		k[j] = p.c.At(j, i)
	}
	return p.predict(k, p.c.At(i, i))
}

// probitLevel is P(y = k) = Phi((b_k - mu)/s) - Phi((b_{k-1} - mu)/s),
// b_{-1} = -inf, b_{K-1} = +inf.
func probitLevel(b []float64, k int, mu, s float64) float64 {
	phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	hi, lo := 1.0, 0.0
	if k < len(b) {
		hi = phi((b[k] - mu) / s)
	}
	if k > 0 {
		lo = phi((b[k-1] - mu) / s)
	}
	return hi - lo
}

func loadStanEPProblem(t *testing.T, c stanEPCase) *stanEPProblem {
	pb := &stanEPProblem{}
	for _, r := range c.raters {
		pb.raterIDs = append(pb.raterIDs, r.id)
	}
	for k := 0; k <= len(c.raters[0].b); k++ {
		pb.levels = append(pb.levels, strconv.Itoa(k))
	}
	hdr, rows := readStanEPCSV(t, c.data)
	switch c.kernel {
	case "rbf":
		// pyrimidines.csv: row_id, set, y, x1..xD (already z-scored).
		var xcols []int
		for d := 1; ; d++ {
			j, ok := hdr[fmt.Sprintf("x%d", d)]
			if !ok {
				break
			}
			xcols = append(xcols, j)
		}
		var xtr, xte []float64
		for _, r := range rows {
			row := make([]float64, len(xcols))
			for d, j := range xcols {
				row[d] = csvFloat(t, r[j])
			}
			switch r[hdr["set"]] {
			case "train":
				y, err := strconv.Atoi(r[hdr["y"]])
				if err != nil || y < 0 || y >= len(pb.levels) {
					t.Fatalf("bad level %q", r[hdr["y"]])
				}
				pb.ratings = append(pb.ratings, multirater.Rating{Item: len(pb.itemIDs), Rater: 0, Level: y})
				pb.itemIDs = append(pb.itemIDs, r[hdr["row_id"]])
				xtr = append(xtr, row...)
			case "test":
				pb.testIDs = append(pb.testIDs, r[hdr["row_id"]])
				xte = append(xte, row...)
			}
		}
		dim := len(xcols)
		in := kernel.Inputs{N: len(pb.itemIDs), X: mat.NewDense(len(pb.itemIDs), dim, xtr)}
		nw := kernel.Inputs{N: len(pb.testIDs), X: mat.NewDense(len(pb.testIDs), dim, xte)}
		k := kernel.RBF{Gamma: c.gamma}
		pb.cov = new(mat.SymDense)
		k.GramTo(pb.cov, in)
		// The Stan model's prior: C + jitter I.
		for i := 0; i < in.N; i++ {
			pb.cov.SetSym(i, i, pb.cov.At(i, i)+c.jitter)
		}
		pb.cross = new(mat.Dense)
		k.CrossTo(pb.cross, nw, in)
		pb.prior = k.DiagTo(nil, nw)
		pb.kern = k.String()
	case "identity":
		// sirt_k1.csv: item_id, rater_id, label; items sorted by id.
		seen := map[string]bool{}
		for _, r := range rows {
			if !seen[r[hdr["item_id"]]] {
				seen[r[hdr["item_id"]]] = true
				pb.itemIDs = append(pb.itemIDs, r[hdr["item_id"]])
			}
		}
		sort.Strings(pb.itemIDs)
		item := map[string]int{}
		for i, id := range pb.itemIDs {
			item[id] = i
		}
		rater := map[string]int{}
		for l, id := range pb.raterIDs {
			rater[id] = l
		}
		for _, r := range rows {
			l, ok := rater[r[hdr["rater_id"]]]
			y, err := strconv.Atoi(r[hdr["label"]])
			if !ok || err != nil || y < 0 || y >= len(pb.levels) {
				t.Fatalf("bad rating %v", r)
			}
			pb.ratings = append(pb.ratings, multirater.Rating{Item: item[r[hdr["item_id"]]], Rater: l, Level: y})
		}
		pb.kern = "identity"
	default:
		t.Fatalf("unknown kernel %q", c.kernel)
	}
	return pb
}

func readStanEPParams(t *testing.T) map[string]stanEPCase {
	hdr, rows := readStanEPCSV(t, "params.csv")
	out := map[string]stanEPCase{}
	for _, r := range rows {
		name := r[hdr["case"]]
		c := out[name]
		c.name, c.data, c.kernel = name, r[hdr["data"]], r[hdr["kernel"]]
		if g := r[hdr["gamma"]]; g != "" {
			c.gamma = csvFloat(t, g)
		}
		c.jitter = csvFloat(t, r[hdr["jitter"]])
		rt := stanEPRater{id: r[hdr["rater_id"]], sigma: csvFloat(t, r[hdr["sigma"]])}
		for _, f := range strings.Fields(r[hdr["b"]]) {
			rt.b = append(rt.b, csvFloat(t, f))
		}
		c.raters = append(c.raters, rt)
		out[name] = c
	}
	for _, c := range out {
		sort.Slice(c.raters, func(i, j int) bool { return c.raters[i].id < c.raters[j].id })
	}
	return out
}

// readStanEPCSV reads a CSV of testdata/stan_ep ('#' lines are comments):
// the header's column indices and the rows.
func readStanEPCSV(t *testing.T, name string) (map[string]int, [][]string) {
	t.Helper()
	header, rows := readCSVFile(t, filepath.Join(stanEPDir, name))
	hdr := make(map[string]int, len(header))
	for j, h := range header {
		hdr[h] = j
	}
	return hdr, rows
}

func csvFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return v
}
