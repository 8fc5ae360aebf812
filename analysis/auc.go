package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/auc"
	"concord/multirater/kernel"
)

// ModelAUC is the AUC scoring model (Ridgway et al.).
const ModelAUC = auc.Name

// Scores of the AUC model (FitSpec.Scores).
const (
	ScoresLinear = "linear"
	ScoresGP     = "gp"
)

// GammaCV is FitSpec.Gamma's value that chooses gamma by cross-validation.
const GammaCV = auc.GammaCV

// AUCGammaFolds is the number of folds of the cross-validation that
// chooses gamma (stratified by label, seeded by FitSpec.Seed).
const AUCGammaFolds = 5

// DefaultRBFCandidates are the inverse squared length-scales of the
// candidate kernels of GP scores whose kernel is "rbf" without a gamma:
// the candidate with the largest log evidence at each gamma is used
// (Ridgway et al. sec. 5 set the prior's hyperparameters by the evidence).
// They suit z-scored covariates (--standardize): on Pima (7 covariates)
// the evidence grows as gamma shrinks towards the linear limit
// (docs/scripts/auc).
var DefaultRBFCandidates = []float64{0.005, 0.01, 0.02, 0.05, 0.1}

// AUCGammaGrid returns the candidates of gamma's cross-validation (the
// family's auc.DefaultGammaGrid).
func AUCGammaGrid() []float64 { return slices.Clone(auc.DefaultGammaGrid) }

// GammaSpec is FitSpec.Gamma: the auc family's declared gamma (a number,
// or "cv").
type GammaSpec = auc.Gamma

// aucModel is the model table's entry of the AUC model.
func aucModel() Model {
	return Model{
		Name:           ModelAUC,
		settings:       reflect.TypeFor[auc.Settings](),
		Doc:            "AUC scoring (Ridgway et al., PAC-Bayesian bipartite ranking): a score per item with its sd (higher = more likely positive), the ROC curve and AUC, coefficients of linear scores; needs numeric item covariates",
		Schemes:        []annotations.Kind{annotations.Binary},
		Engines:        []string{multirater.EngineEP, multirater.EngineSMC},
		Output:         multirater.OutputRanking,
		checkScheme:    checkClasses,
		defaults:       aucDefaults,
		validate:       validateAUC,
		fit:            fitAUC,
		itemsPredictor: newAUCPredictor,
	}
}

// aucDefaults fills the AUC model's defaults: linear scores, gamma by
// cross-validation, the Gaussian prior with scale 1; GP scores without a
// kernel get "rbf" (its width chosen by the evidence among
// DefaultRBFCandidates). The gibbs settings, which the model does not use,
// are cleared so that the stored spec says what ran.
func aucDefaults(s FitSpec) FitSpec {
	s.Scores = strings.ToLower(strings.TrimSpace(s.Scores))
	if s.Scores == "" {
		s.Scores = ScoresLinear
	}
	if s.Scores == ScoresGP && strings.TrimSpace(s.Kernel) == "" {
		s.Kernel = "rbf"
	}
	if s.Scores == ScoresLinear {
		s.Kernel = ""
	}
	s.Gamma = GammaSpec(strings.ToLower(strings.TrimSpace(string(s.Gamma))))
	if s.Gamma == "" {
		s.Gamma = GammaCV
	}
	s.Prior = strings.ToLower(strings.TrimSpace(s.Prior))
	if s.Prior == "" {
		s.Prior = auc.Gaussian.String()
	}
	if s.PriorScale == 0 {
		s.PriorScale = 1
	}
	s.Identifiability, s.Sampler = "", ""
	return s
}

// validateAUC checks the AUC model's settings.
func validateAUC(s FitSpec) error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	scores := strings.ToLower(strings.TrimSpace(s.Scores))
	switch scores {
	case "", ScoresLinear, ScoresGP:
	default:
		return bad("scores %q: expected linear (s = <theta, x> on the covariates) or gp (a Gaussian process with --kernel)", s.Scores)
	}
	if _, _, err := s.Gamma.Value(); err != nil {
		return bad("%s", err)
	}
	prior, err := auc.ParsePrior(strings.ToLower(strings.TrimSpace(s.Prior)))
	if s.Prior != "" && err != nil {
		return bad("prior %q: expected gaussian or spike-slab", s.Prior)
	}
	k := strings.TrimSpace(s.Kernel)
	if scores != ScoresGP {
		if k != "" && !strings.EqualFold(k, "identity") {
			return bad("kernel %q is for gp scores (scores gp); linear scores s = <theta, x> read the covariates as given (choose them with covariates)", s.Kernel)
		}
	} else {
		if prior == auc.SpikeSlab {
			return bad("prior spike-slab is a prior of linear scores' coefficients; gp scores have the Gaussian process prior (use scores linear, or leave prior out)")
		}
		if strings.EqualFold(k, "identity") {
			return bad("kernel identity relates no item to another, so gp scores would rank nothing: use a covariate kernel (rbf, whose width is chosen by the evidence; rbf:gamma=G; linear; or a sum)")
		}
		if k != "" {
			if _, err := aucKernels(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// aucKernels reads the kernel of GP scores: a covariate kernel
// (kernel.ParseKernel's grammar), or "rbf" without a gamma, which stands for
// the candidates rbf:gamma=G for G in DefaultRBFCandidates (the one with the
// largest evidence is used). Text terms and other learnt terms are errors.
func aucKernels(s FitSpec) ([]kernel.Kernel, error) {
	spec := s.Kernel
	ks, err := s.kernelSpec()
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	if ks.Text() {
		return nil, annotations.Errorf(annotations.EINVALID, "kernel %q: the auc model's gp scores read numeric covariates only (no text terms): use rbf, rbf:gamma=G, linear or a sum of these", spec)
	}
	if len(ks) == 1 && ks[0].Learn {
		if _, ok := ks[0].Cov.(kernel.RBF); ok {
			out := make([]kernel.Kernel, len(DefaultRBFCandidates))
			for i, g := range DefaultRBFCandidates {
				out[i] = kernel.RBF{Gamma: g}
			}
			return out, nil
		}
	}
	for _, t := range ks {
		if t.Learn {
			return nil, annotations.Errorf(annotations.EINVALID, "kernel %q: term %s has hyperparameters to learn, which the auc model does not learn; give them (e.g. rbf:gamma=0.01), or use rbf alone (its width chosen by the evidence among %v)", spec, t, DefaultRBFCandidates)
		}
	}
	k, err := kernel.CovKernel(ks, spec)
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	return []kernel.Kernel{k}, nil
}

// aucFolds is the number of folds of gamma's cross-validation: the
// spec's gamma_folds, AUCGammaFolds by default.
func aucFolds(spec FitSpec) int { return cmp.Or(spec.GammaFolds, AUCGammaFolds) }

// aucOptions maps a spec (defaults filled in) to the family's options.
func aucOptions(spec FitSpec, progress func(multirater.Progress)) (auc.Options, error) {
	o := auc.Options{PriorScale: spec.PriorScale, Standardize: spec.Standardize, Seed: spec.Seed, Folds: aucFolds(spec), Progress: progress, Pairs: spec.MaxPairs}
	var err error
	if o.Engine, err = auc.ParseEngine(strings.ToLower(spec.Engine)); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	if o.Prior, err = auc.ParsePrior(strings.ToLower(spec.Prior)); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "prior %q: expected gaussian or spike-slab", spec.Prior)
	}
	g, _, err := spec.Gamma.Value()
	if err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	o.Gamma = g
	if spec.Scores == ScoresGP {
		ks, err := aucKernels(spec)
		if err != nil {
			return o, err
		}
		if len(ks) == 1 {
			o.Kernel = ks[0]
		} else {
			o.Kernels = ks
		}
	}
	return o, nil
}

// aucLabels returns each item's label for the AUC model: the majority of
// its labels (true: the positive class). Items with no labels or a tie are
// left out (ok false).
func aucLabels(ds *annotations.Dataset) (label map[string]bool, ties int) {
	pos := map[string]int{}
	neg := map[string]int{}
	for _, l := range ds.Labels {
		if l.Value == ds.Scheme.Positive {
			pos[l.Item]++
		} else {
			neg[l.Item]++
		}
	}
	label = make(map[string]bool, len(pos)+len(neg))
	seen := map[string]bool{}
	for _, l := range ds.Labels {
		if seen[l.Item] {
			continue
		}
		seen[l.Item] = true
		switch p, n := pos[l.Item], neg[l.Item]; {
		case p > n:
			label[l.Item] = true
		case n > p:
			label[l.Item] = false
		default:
			ties++
		}
	}
	return label, ties
}

// aucCovariates returns the raw covariates of the items ids (rows in ids
// order) chosen by spec.Covariates ("" or "all": every numeric item
// column), with precise errors for what is missing.
func aucCovariates(ds *annotations.Dataset, ids []string, spec FitSpec) ([]string, *mat.Dense, error) {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	avail := numericColumns(ds)
	if len(avail) == 0 {
		return nil, nil, bad("the auc model scores items by their numeric covariates, and the items have none: give an items file (--items) with numeric columns (chosen with --covariates col,col; default all)")
	}
	cl, err := parseCovariateList(spec.Covariates)
	if err != nil {
		return nil, nil, bad("%s", err)
	}
	var cols []string
	switch {
	case cl.none:
		return nil, nil, bad("covariates \"none\": the auc model scores items by their numeric covariates; name at least one (the items have %s)", strings.Join(avail, ", "))
	case cl.all || len(cl.names) == 0:
		cols = avail
	default:
		for _, c := range cl.names {
			if !slices.Contains(avail, c) {
				return nil, nil, bad("covariate %q is not a numeric item column (the items have %s)", c, strings.Join(avail, ", "))
			}
		}
		cols = cl.names
	}
	byID := make(map[string]*annotations.Item, len(ds.Items))
	for i := range ds.Items {
		byID[ds.Items[i].ID] = &ds.Items[i]
	}
	x, missing, nMissing := covariateMatrix(byID, ids, cols, "item %q has labels but is not in the items file")
	if nMissing > 0 {
		return nil, nil, annotations.Errorf(annotations.EINVALID, "the auc model needs the covariates %s for every item (%d item(s) lack one): %s", strings.Join(cols, ", "), nMissing, strings.Join(missing, "; "))
	}
	return cols, x, nil
}

// fitAUC fits the AUC scoring model: every item with a majority label is
// a fitted item (label: the majority is the positive class); the other
// items (no labels, or as many positive as negative labels) are scored by
// the fit's predictive distribution. cov is not used: the scores read the
// covariates themselves.
func fitAUC(ctx context.Context, ds *annotations.Dataset, _ *Covariance, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	opts, err := aucOptions(spec, progress)
	if err != nil {
		return nil, err
	}
	ids := ds.ItemIDs()
	cols, x, err := aucCovariates(ds, ids, spec)
	if err != nil {
		return nil, err
	}
	label, ties := aucLabels(ds)
	var fitIdx, otherIdx []int
	var positive []bool
	for i, id := range ids {
		if y, ok := label[id]; ok {
			fitIdx = append(fitIdx, i)
			positive = append(positive, y)
		} else {
			otherIdx = append(otherIdx, i)
		}
	}
	npos := 0
	for _, p := range positive {
		if p {
			npos++
		}
	}
	if npos == 0 || npos == len(positive) {
		return nil, annotations.Errorf(annotations.EINVALID, "the auc model ranks positive items above negative ones and needs both: of %d items with a majority label, %d are %q (the positive class of %s)", len(positive), npos, ds.Scheme.Positive, ds.Scheme)
	}
	xfit := rowsOf(x, fitIdx)
	if spec.Scores == ScoresGP {
		opts.Rank = aucRank(spec, len(fitIdx))
	}
	data := auc.Data{X: xfit, Positive: positive, Names: cols}
	res, err := auc.Fit(ctx, data, opts)
	if err != nil {
		if ctx.Err() == nil && !isDataError(err) {
			// EP that fails at the chosen gamma is the data's answer to
			// that setting: say which setting to change.
			if opts.Gamma > 0 {
				return nil, annotations.Errorf(annotations.EINVALID, "gamma %g: %v; a smaller gamma makes the pair sites gentler (flag --gamma, field \"gamma\": e.g. 10, or cv to choose it)", opts.Gamma, err)
			}
			return nil, annotations.Errorf(annotations.EINVALID, "gamma cv: %v; fix a small gamma (e.g. --gamma 1, field \"gamma\")", err)
		}
		return nil, invalidData(err, "")
	}
	var predicted []auc.Score
	if len(otherIdx) > 0 {
		predicted = res.Predict(rowsOf(x, otherIdx))
	}
	out := aucDocument(ds, ids, cols, x, fitIdx, otherIdx, positive, res, predicted, spec)
	if ties > 0 {
		out.Diagnostics.Notes = append(out.Diagnostics.Notes, fmt.Sprintf("%d item(s) have as many positive as negative labels: they are not fitted, and are scored by prediction", ties))
	}
	return out, nil
}

// aucRank is the rank of GP scores' low-rank (Nyström) prior for n
// fitted items (auc.Options.Rank): spec.Rank when positive, by default
// (spec.Rank 0) LearntKernelRank(n) from PivotedFromItems items, else 0,
// the dense kernel matrix (spec.Rank -1, or fewer items). Every fit of
// the cross-validation evaluates the prior: at 1,000 items the dense one
// costs an O(N^3) eigendecomposition per fold and a rank near N.
func aucRank(spec FitSpec, n int) int {
	switch {
	case spec.Rank > 0:
		return spec.Rank
	case spec.Rank == 0 && n >= PivotedFromItems:
		return LearntKernelRank(n)
	}
	return 0
}

// rowsOf returns the rows idx of x (nil for none).
func rowsOf(x *mat.Dense, idx []int) *mat.Dense {
	if len(idx) == 0 {
		return nil
	}
	_, d := x.Dims()
	out := mat.NewDense(len(idx), d, nil)
	for k, i := range idx {
		out.SetRow(k, x.RawRowView(i))
	}
	return out
}

// aucDocument writes an AUC fit as the fit document.
func aucDocument(ds *annotations.Dataset, ids, cols []string, x *mat.Dense, fitIdx, otherIdx []int, positive []bool, res *auc.Result, predicted []auc.Score, spec FitSpec) *multirater.FitResult {
	byItem := map[string]map[string]string{}
	nLabels := map[string]int{}
	for _, l := range ds.Labels {
		if byItem[l.Item] == nil {
			byItem[l.Item] = map[string]string{}
		}
		byItem[l.Item][l.Rater] = l.Value
		nLabels[l.Item]++
	}
	items := make([]multirater.ItemResult, len(ids))
	for i, id := range ids {
		items[i] = multirater.ItemResult{ID: id, NLabels: nLabels[id], Labels: byItem[id]}
	}
	for k, i := range fitIdx {
		s := res.Items[k]
		items[i].Score = multirater.NormalEstimate(s.Mean, s.SD)
		p := positive[k]
		items[i].Positive = &p
	}
	for k, i := range otherIdx {
		items[i].Score = multirater.NormalEstimate(predicted[k].Mean, predicted[k].SD)
	}
	feat := &multirater.Features{Covariates: cols, X: make([][]float64, len(ids))}
	for i := range ids {
		feat.X[i] = mat.Row(nil, i, x)
	}
	raters := ds.RaterIDs()
	rr := make([]multirater.RaterResult, len(raters))
	counts := map[string][]int{}
	codes := ds.Scheme.Codes()
	for _, l := range ds.Labels {
		if counts[l.Rater] == nil {
			counts[l.Rater] = make([]int, len(codes))
		}
		if k, ok := ds.Scheme.Index(l.Value); ok {
			counts[l.Rater][k]++
		}
	}
	for i, r := range raters {
		n := 0
		for _, c := range counts[r] {
			n += c
		}
		rr[i] = multirater.RaterResult{ID: r, NLabels: n, LevelCounts: counts[r]}
	}
	kernelSpec := res.Kernel
	a := &multirater.AUCFit{
		AUCScores: multirater.AUCScores{Positive: ds.Scheme.Positive, Scores: res.Scores, Prior: res.Prior.String(), PriorScale: res.PriorScale,
			Gamma: res.Gamma, GammaByCV: res.GammaByCV},
		Covariates: cols, Center: res.Center, Scale: res.Scale,
		Pairs: res.Pairs, Fitted: len(fitIdx),
	}
	if res.GammaByCV {
		a.Folds = aucFolds(spec)
	}
	if res.PairSites < res.Pairs {
		a.PairSites, a.MaxPairs = res.PairSites, spec.MaxPairs
		if a.MaxPairs <= 0 {
			a.MaxPairs = auc.DefaultPairs(len(fitIdx))
		}
	}
	if res.KernelGamma != res.Gamma {
		a.KernelGamma = res.KernelGamma
	}
	a.Rank, a.Residual = res.Rank, res.Residual
	for _, c := range res.CV {
		a.CV = append(a.CV, multirater.CVGamma{Gamma: c.Gamma, AUC: c.AUC, SE: c.SE})
	}
	for _, k := range res.KernelEvidence {
		a.KernelEvidence = append(a.KernelEvidence, multirater.KernelEvidence{Kernel: k.Kernel, LogEvidence: k.LogEvidence, Chosen: k.Kernel == kernelSpec})
	}
	var coefs []multirater.Coefficient
	for _, c := range res.Coefficients {
		coefs = append(coefs, multirater.Coefficient{Name: c.Name, Mean: c.Mean, SD: c.SD, Inclusion: c.Inclusion, MeanSE: c.MeanSE, SDSE: c.SDSE})
	}
	roc := rocPoints(res.ROC)
	trainAUC := res.TrainAUC
	logZ := res.LogEvidence
	eng := res.Engine.String()
	diag := multirater.Diagnostics{
		Engine:      &multirater.EngineDiagnostics{Name: eng, Iterations: res.Sweeps, LogEvidence: &logZ},
		LogEvidence: &logZ,
		Converged:   true,
		Seconds:     res.Elapsed.Seconds(),
		Parameters:  []multirater.ParamDiag{},

		Autocorrelation: map[string][]float64{},
	}
	switch res.Engine {
	case auc.SMC:
		se := res.LogEvidenceSE
		diag.LogEvidenceSE = &se
		if res.SMC != nil {
			diag.Engine.Iterations = 0
			for _, t := range res.SMC.Temperatures {
				diag.Engine.Iterations = max(diag.Engine.Iterations, t)
			}
			diag.Moves = map[string]float64{"acceptance": res.SMC.Acceptance}
		}
		diag.Verdict = fmt.Sprintf("converged: tempering SMC reached gamma %g in at most %d temperatures, log evidence %.4f ± %.4f (Monte Carlo SE over the repeats)", res.Gamma, diag.Engine.Iterations, logZ, se)
	default:
		diag.Verdict = fmt.Sprintf("converged: EP in %d sweeps over %d pair sites, log evidence %.4f", res.Sweeps, res.PairSites, logZ)
	}
	if len(ds.RaterIDs()) > 1 {
		diag.Notes = append(diag.Notes, "with several raters an item's label is the majority of its labels (the positive class when more than half of them are it)")
	}
	if res.GammaByCV {
		diag.Notes = append(diag.Notes, fmt.Sprintf("gamma %g chosen by %d-fold cross-validation of the held-out AUC", res.Gamma, a.Folds))
		diag.Notes = append(diag.Notes, res.Notes...)
	}
	if n := len(otherIdx); n > 0 {
		diag.Notes = append(diag.Notes, fmt.Sprintf("%d item(s) without a majority label are scored by the fit's predictive distribution", n))
	}
	diag.Notes = append(diag.Notes, aucApproxNotes(a)...)
	ms := multirater.ModelSettings{
		Model: ModelAUC, Engine: eng, Output: multirater.OutputRanking, Scheme: ds.Scheme.String(),
		Kernel: kernelSpec, Seed: res.Seed,
	}
	return &multirater.FitResult{
		Schema: multirater.FitSchema, Model: ms, Diagnostics: diag, Levels: codes, Items: items, Raters: rr,
		Flags: []multirater.Flag{}, Features: feat, Coefficients: coefs, ROC: roc, TrainAUC: &trainAUC, AUC: a,
	}
}

// aucApproxNotes are the notes of an AUC fit's approximations: the
// sample of pair sites, the low-rank prior, the kernel chosen once.
func aucApproxNotes(a *multirater.AUCFit) []string {
	var notes []string
	if a.PairSites > 0 {
		f := SettingOf(func(s *FitSpec) any { return &s.MaxPairs })
		notes = append(notes, fmt.Sprintf("EP's pair sites are a seeded stratified sample of %d of the %d (positive, negative) pairs, about %d per item (--%s %d; -1 for every pair, costlier), the AUC risk estimated on the sample", a.PairSites, a.Pairs, 2*a.PairSites/max(a.Fitted, 1), f.Flag(), a.MaxPairs))
	}
	if a.Rank > 0 {
		f := SettingOf(func(s *FitSpec) any { return &s.Rank })
		notes = append(notes, fmt.Sprintf("gp scores have a low-rank (Nyström) prior on %d pivot items, %.2g %% of the kernel matrix's trace left out (--%s: a larger rank, or -1 for the dense matrix)", a.Rank, 100*a.Residual, f.Flag()))
	}
	if a.KernelGamma > 0 && len(a.KernelEvidence) > 1 {
		notes = append(notes, fmt.Sprintf("the kernel was chosen once among %d candidates by the log evidence at gamma %g (the middle of the cross-validation's grid), then used in every fold and in the final fit", len(a.KernelEvidence), a.KernelGamma))
	}
	return notes
}

// aucRefit refits the AUC model of a fit document exactly (the final fit:
// its gamma and kernel, seed and engine), from the fitted items'
// covariates and labels the document records, and checks that it gives
// back the recorded scores. Predictions for new items come from it.
func aucRefit(ctx context.Context, res *multirater.FitResult) (*auc.Result, error) {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	a, ft := res.AUC, res.Features
	if a == nil || ft == nil || len(ft.X) != len(res.Items) || len(ft.Covariates) == 0 {
		return nil, bad("the auc fit result does not record its items' covariates and labels (features.x, items[].positive, auc): refit to predict new items")
	}
	// The recorded pair sample (every pair when none is recorded) and
	// low-rank prior.
	o := auc.Options{PriorScale: a.PriorScale, Standardize: a.Center != nil, Seed: res.Model.Seed, Folds: AUCGammaFolds, Gamma: a.Gamma,
		Pairs: cmp.Or(a.MaxPairs, -1), Rank: a.Rank}
	var err error
	if o.Engine, err = auc.ParseEngine(res.Model.Engine); err != nil {
		return nil, bad("the fit result's engine: %s", err)
	}
	if o.Prior, err = auc.ParsePrior(a.Prior); err != nil {
		return nil, bad("the fit result's prior %q: expected gaussian or spike-slab", a.Prior)
	}
	if a.Scores == ScoresGP {
		if o.Kernel, err = kernel.ParseKernel(res.Model.Kernel); err != nil {
			return nil, bad("the fit result's kernel: %s", err)
		}
	}
	d := len(ft.Covariates)
	var rows [][]float64
	var positive []bool
	var means []float64
	for i, it := range res.Items {
		if it.Positive == nil {
			continue
		}
		if len(ft.X[i]) != d {
			return nil, bad("features.x[%d] (item %q) has %d values for %d covariates", i, it.ID, len(ft.X[i]), d)
		}
		rows = append(rows, ft.X[i])
		positive = append(positive, *it.Positive)
		if it.Score != nil {
			means = append(means, it.Score.Mean)
		}
	}
	if len(rows) == 0 {
		return nil, bad("the auc fit result has no fitted items (items[].positive)")
	}
	x := mat.NewDense(len(rows), d, nil)
	for i, r := range rows {
		x.SetRow(i, r)
	}
	fit, err := auc.Fit(ctx, auc.Data{X: x, Positive: positive, Names: ft.Covariates}, o)
	if err != nil {
		return nil, invalidData(err, "refitting the auc model to predict: ")
	}
	if len(means) == len(fit.Items) {
		for i, s := range fit.Items {
			if math.Abs(s.Mean-means[i]) > 1e-6*(1+math.Abs(means[i])) {
				return nil, bad("refitting the auc model did not give back the recorded scores (item %d: %g, recorded %g): the fit cannot be repeated exactly (made by another version of concord?); fit it again to predict", i+1, s.Mean, means[i])
			}
		}
	}
	return fit, nil
}

// newAUCPredictor prepares the predictions of an AUC fit: it refits the
// posterior (aucRefit) once; predictAUC then scores new items.
func newAUCPredictor(res *multirater.FitResult) (func([]annotations.Item) (*Predictions, error), error) {
	fit, err := aucRefit(context.Background(), res)
	if err != nil {
		return nil, err
	}
	return func(items []annotations.Item) (*Predictions, error) { return predictAUC(res, fit, items) }, nil
}

// predictAUC scores new items with an AUC fit: the items' covariates (by
// the fit's covariate names; the fit's standardisation applied) through
// the posterior fit (from aucRefit): Result.Predict, the predictive mean
// and sd of each new item's score.
func predictAUC(res *multirater.FitResult, fit *auc.Result, items []annotations.Item) (*Predictions, error) {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if len(items) == 0 {
		return nil, bad("no items to predict")
	}
	cols := res.AUC.Covariates
	if len(cols) == 0 {
		cols = res.Features.Covariates
	}
	out := &Predictions{Schema: PredictionsSchema, FitOf: FitOf{Model: res.Model.Model, Kernel: res.Model.Kernel}, Levels: res.Levels}
	x := mat.NewDense(len(items), len(cols), nil)
	seen := make(seenItems, len(items))
	unused := map[string]bool{}
	withText := 0
	for i := range items {
		it := &items[i]
		if err := seen.check(i, it); err != nil {
			return nil, err
		}
		for j, c := range cols {
			v, ok := it.Covariates[c]
			if !ok {
				return nil, bad("%s (the auc fit's scores read %s)", missingCovariate(it, c), strings.Join(cols, ", "))
			}
			x.Set(i, j, v)
		}
		for c := range it.Covariates {
			if !containsString(cols, c) {
				unused[c] = true
			}
		}
		if strings.TrimSpace(it.Text) != "" {
			withText++
		}
	}
	scores := fit.Predict(x)
	out.Items = make([]multirater.ItemResult, len(items))
	var gs []float64
	var gy []bool
	npos, other := 0, 0
	for i := range items {
		out.Items[i] = multirater.ItemResult{ID: items[i].ID, Score: multirater.NormalEstimate(scores[i].Mean, scores[i].SD)}
		switch g := items[i].Gold; {
		case g == "":
		case g == res.AUC.Positive:
			gs, gy = append(gs, scores[i].Mean), append(gy, true)
			npos++
		case containsString(res.Levels, g):
			gs, gy = append(gs, scores[i].Mean), append(gy, false)
		default:
			other++
		}
	}
	if npos > 0 && npos < len(gy) {
		out.Gold = &GoldAUC{Items: len(gy), Positives: npos, AUC: auc.AUC(gs, gy), ROC: rocPoints(auc.ROC(gs, gy))}
	}
	if other > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d item(s) have a gold label that is not a class of the fit (%s): not used for the AUC", other, strings.Join(res.Levels, ", ")))
	}
	if len(unused) > 0 {
		names := make([]string, 0, len(unused))
		for c := range unused {
			names = append(names, c)
		}
		sort.Strings(names)
		out.Notes = append(out.Notes, fmt.Sprintf("covariate(s) %s are not used by the auc fit", strings.Join(names, ", ")))
	}
	if withText > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d item(s) have a text, which the auc model does not read", withText))
	}
	return out, nil
}

// CheckModelData checks, before a fit is queued, that the project's items
// have what the spec's model reads beyond its kernel (st from the store):
// the auc model scores items by their numeric covariates.
func CheckModelData(spec FitSpec, st *annotations.Stats) error {
	if st == nil || !strings.EqualFold(spec.Model, ModelAUC) {
		return nil
	}
	if st.ItemsWithCovariates == 0 {
		return annotations.Errorf(annotations.EINVALID, "the auc model scores items by their numeric covariates, and none of the project's %d items has any (import an items file with numeric columns, chosen with covariates)", st.Items)
	}
	return nil
}
