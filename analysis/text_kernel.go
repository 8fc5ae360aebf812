package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/numeric"
	"concord/textfeat"
)

// DefaultKernel is the kernel of a fit without one that has items to
// predict (concord eval's held-out items, say): "text" when some item of ds
// has a text, "identity" otherwise. A fit's own default also depends on its
// model (DefaultKernelFor).
func DefaultKernel(ds *annotations.Dataset) string {
	if ds != nil {
		for i := range ds.Items {
			if strings.TrimSpace(ds.Items[i].Text) != "" {
				return "text"
			}
		}
	}
	return "identity"
}

// DefaultKernelFor returns the kernel of a fit of model (the default model
// when "") that names none, for a project whose items number withText with a
// text and unlabelled without any label, and says why in a few words:
//
//   - no item has a text: "identity";
//   - the classification model with every item labelled: "identity". Its
//     sampler mixes slowly under the text kernel, and where every item has
//     labels the texts add little: on the demo's RTE project (800 items, 10
//     labels each) the default fit with the text kernel had not converged
//     after 4 x 2000 draws (max R-hat 1.016; 91.9% agreement with the expert
//     gold), with identity it converged, and sooner (max R-hat 1.002;
//     92.9%; 160 s against 228 s, back to back on a busy 2-core machine).
//     Items without labels are predicted from their texts, so with such
//     items the default is "text";
//   - the robust model with every item labelled: "identity", for the same
//     reason and its cost: on RTE with texts (800 items, 10 labels each)
//     the text kernel's evidence maximisation ran for over 20 minutes,
//     identity takes 26 s. With one label per item the identity kernel
//     cannot single out wrong labels, and the fit says so and names the
//     kernel to ask for;
//   - otherwise "text".
func DefaultKernelFor(model string, withText, unlabelled int) (kernel, reason string) {
	switch {
	case withText == 0:
		return "identity", "items have no texts"
	case strings.EqualFold(strings.TrimSpace(model), ModelClassification) && unlabelled == 0:
		return "identity", "every item is labelled; choose text to use the texts too"
	case strings.EqualFold(strings.TrimSpace(model), ModelRobust) && unlabelled == 0:
		return "identity", "every item is labelled; choose text to use the texts too (minutes on a few thousand items)"
	}
	return "text", "items have texts"
}

// ForData returns s with the defaults that depend on the data filled in:
// the kernel (DefaultKernelFor) when none is given, and the raters and
// levels that ExpectedCost counts. WithDefaults fills in the rest.
//
// Text featuriser settings (s.Text) ask for the items' texts: with them the
// default is "text" whenever some item has a text.
func (s FitSpec) ForData(ds *annotations.Dataset) FitSpec {
	if ds != nil {
		s.Raters, s.Levels = len(ds.RaterIDs()), ds.Scheme.K()
	}
	if strings.TrimSpace(s.Kernel) == "" {
		// The bounded model's choice, and the ordinal model's by EP or
		// Laplace, weigh the default kernel against the identity.
		s.KernelDefault = strings.EqualFold(s.Model, ModelBounded) || s.Model == "" || strings.EqualFold(s.Model, ModelOrdinal)
		withText, unlabelled := itemCounts(ds)
		switch {
		case strings.EqualFold(s.Model, ModelConfusion):
			// The confusion model's default is the identity kernel (the
			// labels alone); text and covariate kernels are asked for.
			s.Kernel = "identity"
		case strings.EqualFold(s.Model, ModelAUC):
			// The auc model's scores read the covariates (its
			// defaults give gp scores their kernel).
		case s.Text != (textfeat.Options{}):
			s.Kernel = DefaultKernel(ds)
		default:
			s.Kernel, _ = DefaultKernelFor(s.Model, withText, unlabelled)
		}
	}
	return s
}

// itemCounts returns the number of items of ds with a text and the number
// of items without any label.
func itemCounts(ds *annotations.Dataset) (withText, unlabelled int) {
	if ds == nil {
		return 0, 0
	}
	labelled := make(map[string]bool, len(ds.Items))
	for _, l := range ds.Labels {
		labelled[l.Item] = true
	}
	for i := range ds.Items {
		if strings.TrimSpace(ds.Items[i].Text) != "" {
			withText++
		}
		if !labelled[ds.Items[i].ID] {
			unlabelled++
		}
	}
	return withText, unlabelled
}

// validateKernel checks the kernel, covariate and text settings of s that do
// not depend on the data.
func (s FitSpec) validateKernel() error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if err := s.Text.Validate(); err != nil {
		return bad("text featuriser: %s", strings.TrimPrefix(err.Error(), "textfeat: "))
	}
	if _, err := parseCovariateList(s.Covariates); err != nil {
		return bad("%s", err)
	}
	if strings.TrimSpace(s.Kernel) == "" {
		return nil
	}
	ks, err := s.kernelSpec()
	if err != nil {
		return bad("%s", err)
	}
	if err := checkKernelRanges(ks); err != nil {
		return err
	}
	return s.checkKernelSettings(ks)
}

// checkKernelSettings checks that covariate and text settings fit the
// kernel.
func (s FitSpec) checkKernelSettings(ks kernel.Spec) error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if s.Text != (textfeat.Options{}) && !ks.Text() {
		return bad("text featuriser settings were given but kernel %s has no text term (use kernel text, or a sum such as text+linear)", ks)
	}
	cov, _ := parseCovariateList(s.Covariates)
	if ks.Covariates() {
		if cov.none {
			return bad("kernel %s reads numeric covariates, and covariates is \"none\" (name the columns, e.g. covariates x,y, or use kernel text)", ks)
		}
	} else if len(cov.names) > 0 || cov.all {
		return bad("covariates %q were given but kernel %s reads no numeric covariates (use a sum such as text+linear or text+rbf:gamma=1 to add them)", s.Covariates, ks)
	}
	return nil
}

// covariateList is a parsed FitSpec.Covariates.
type covariateList struct {
	all, none bool
	names     []string
}

func parseCovariateList(s string) (covariateList, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return covariateList{}, nil
	case "all":
		return covariateList{all: true}, nil
	case "none":
		return covariateList{none: true}, nil
	}
	var c covariateList
	seen := map[string]bool{}
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			return c, fmt.Errorf("covariates %q: empty column name (expected none, all or a comma-separated list of numeric item columns)", s)
		}
		if seen[n] {
			return c, fmt.Errorf("covariates %q: column %q is listed twice", s, n)
		}
		seen[n] = true
		c.names = append(c.names, n)
	}
	return c, nil
}

// itemFeatures are the kernel inputs of a list of items.
type itemFeatures struct {
	n int
	// text holds a featurised text per text the kernel reads, in the order
	// of kernel.Spec.textColumns (empty without a text term).
	text []textField
	// cols names the covariates and x holds them (nil without a covariate
	// term).
	cols []string
	x    *mat.Dense
	// std, when set, z-scored x (FitSpec.Standardize).
	std *multirater.Standardization
	// cat names the categorical columns whose indicators are among cols
	// (FitSpec.Categorical).
	cat []string
}

// textField is one text of the items featurised: the item text (column "")
// or an items-file column. vec is its featuriser, docs the items' vectors
// and counts their bags of words.
type textField struct {
	column string
	vec    *textfeat.Vectorizer
	docs   []textfeat.Vector
	counts []multirater.TermCounts
}

// what names the text for messages.
func (t *textField) what() string {
	if t.column == "" {
		return "text"
	}
	return fmt.Sprintf("column %q", t.column)
}

// field returns the featurised text of column col.
func (f *itemFeatures) field(col string) *textField {
	for i := range f.text {
		if f.text[i].column == col {
			return &f.text[i]
		}
	}
	panic(fmt.Sprintf("analysis: internal error: no text field %q", col))
}

// columnText returns the text an item has for a text term: its text for
// column "", else the value of the items-file column col (matched exactly,
// else ignoring case) kept with the item.
func columnText(it *annotations.Item, col string) string {
	if col == "" {
		return it.Text
	}
	if v, ok := it.Attrs[col]; ok {
		return v
	}
	for k, v := range it.Attrs {
		if strings.EqualFold(k, col) {
			return v
		}
	}
	return ""
}

// Covariance is the prior covariance of a fit's items built from a FitSpec:
// what the samplers need (Cov) and what the fit result keeps (Kernel,
// Features, Notes).
type Covariance struct {
	// Cov is the N×N covariance matrix C, nil for the identity kernel. It
	// remembers its eigendecomposition, so that fits and predictors given
	// the same Covariance decompose C once.
	Cov *gp.Gram
	// Kernel is the canonical kernel specification.
	Kernel string
	// Features are the items' kernel inputs, for FitResult.Features (nil
	// for the identity kernel).
	Features *multirater.Features
	// Notes describe choices made for the data (e.g. empty documents).
	Notes []string
	// parsed is the kernel's parse (nil: not known).
	parsed kernel.Spec
	// final, when not nil, builds the prior of the fit's final run
	// (finalPrior; ordinal.Data.Final) and says what it is.
	final func(context.Context) (*gp.Gram, string, error)
}

// ItemCovariance builds the prior covariance of the items ids of ds under
// spec's kernel, covariates and text settings (spec.Kernel "" is the
// default of DefaultKernel). Problems with the data (no texts for a text
// kernel, missing covariates, a vocabulary left empty) are EINVALID errors.
// Both models' fits use it. A cancelled ctx stops a truncated text basis
// between the passes of its range finder (gp.LowRankOptions.Stop) with
// ctx's error.
func ItemCovariance(ctx context.Context, ds *annotations.Dataset, ids []string, spec FitSpec) (*Covariance, error) {
	cov, _, _, err := buildCovariance(ctx, ds, ids, spec)
	return cov, err
}

// buildCovariance is ItemCovariance, also returning the parsed kernel and
// the items' features.
func buildCovariance(ctx context.Context, ds *annotations.Dataset, ids []string, spec FitSpec) (*Covariance, kernel.Spec, *itemFeatures, error) {
	spec = spec.withKernel()
	if err := spec.validateKernel(); err != nil {
		return nil, nil, nil, err
	}
	spec = spec.ForData(ds).withKernel()
	ds, err := withCategorical(ds, ids, spec.Categorical)
	if err != nil {
		return nil, nil, nil, err
	}
	ks, err := spec.kernelSpec()
	if err != nil {
		return nil, nil, nil, annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	if err := spec.checkKernelSettings(ks); err != nil {
		return nil, nil, nil, err
	}
	out := &Covariance{Kernel: ks.String(), parsed: ks}
	f := &itemFeatures{n: len(ids)}
	if ks.Identity() {
		return out, ks, f, nil
	}
	f, err = trainFeatures(ds, ids, ks, spec)
	if err != nil {
		return nil, nil, nil, err
	}
	out.Notes = f.notes(ks, ds, ids)
	var zero int
	labels := len(ds.Labels)
	if x, empty := f.textSparse(ks); x != nil && spec.Rank >= 0 {
		// Weight-space form: never the N×N matrix.
		lr, note, err := textLowRank(ctx, *x, spec, labels)
		if ctx.Err() != nil {
			return nil, nil, nil, ctx.Err()
		}
		if err != nil {
			return nil, nil, nil, invalidData(err, "the text kernel: ")
		}
		out.Cov = gp.NewGramLowRank(lr)
		out.final = f.finalPrior(ks, spec, labels, lr, x)
		out.Notes = append(out.Notes, lr.Describe())
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
		zero = empty
	} else if lr, note := f.covLowRank(ks, spec, labels); lr != nil {
		out.Cov = gp.NewGramLowRank(lr)
		out.final = f.finalPrior(ks, spec, labels, lr, nil)
		if learntCross(ks) {
			out.Notes = append(out.Notes, fmt.Sprintf("the learnt kernel's prior is held in inducing-point form (FITC, at most %d inducing items; see the evidence maximisation's note), never as the N×N matrix", lr.MaxRank))
		} else {
			out.Notes = append(out.Notes, fmt.Sprintf("inducing-point prior (FITC, Snelson & Ghahramani 2006): the kernel matrix by %d pivoted columns (Nyström), leaving out %.3g of its trace %.4g (%.2f%%), as independent per-item variance", lr.Rank(), lr.Residual(), lr.Trace, 100*lr.Residual()/lr.Trace))
		}
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
	} else {
		var c *mat.SymDense
		c, zero = f.gram(ks)
		if x := f.textFeatures(ks); x != nil {
			out.Cov = gp.NewGramFeatures(c, x)
		} else {
			out.Cov = gp.NewGram(c)
		}
	}
	if out.Features, err = f.record(); err != nil {
		return nil, nil, nil, err
	}
	for i := range f.text {
		t := &f.text[i]
		empty := 0
		for _, d := range t.docs {
			if d.NNZ() == 0 {
				empty++
			}
		}
		o := t.vec.Options()
		name := "text featuriser"
		if t.column != "" {
			name = fmt.Sprintf("text featuriser of column %q", t.column)
		}
		out.Notes = append(out.Notes, fmt.Sprintf("%s: %d terms from %d documents (min_df %d, max_features %d, weighting %s, stem %t, bigrams %t)",
			name, t.vec.Len(), t.vec.NumDocs(), o.MinDF, o.MaxFeatures, o.Weighting, o.Stem, o.Bigrams))
		if empty > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("%d item(s) have no vocabulary term in their %s (empty, only stop words or only rare words)", empty, t.what()))
		}
	}
	if zero > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d item(s) have zero prior variance under the kernel (no features): they get the identity kernel's prior (variance 1, no covariance with other items)", zero))
	}
	return out, ks, f, nil
}

// leakCorrelation is the correlation between a covariate and the items'
// mean label above which the covariate is reported as possibly derived from
// the labels.
const leakCorrelation = 0.9

// notes names the covariates the kernel reads and, for an ordinal scheme,
// warns about any that follows the items' mean label almost exactly (a
// resolved or total score would make every evaluation meaningless).
func (f *itemFeatures) notes(ks kernel.Spec, ds *annotations.Dataset, ids []string) []string {
	if f.x == nil {
		return nil
	}
	out := []string{fmt.Sprintf("kernel %s reads the numeric covariates %s", ks, strings.Join(f.cols, ", "))}
	if ds.Scheme.Kind != annotations.Ordinal {
		return out
	}
	sum := map[string]float64{}
	cnt := map[string]float64{}
	for _, l := range ds.Labels {
		if k, ok := ds.Scheme.Index(l.Value); ok {
			sum[l.Item] += float64(k)
			cnt[l.Item]++
		}
	}
	for j, c := range f.cols {
		var xs, ys []float64
		for i, id := range ids {
			if cnt[id] > 0 {
				xs = append(xs, f.x.At(i, j))
				ys = append(ys, sum[id]/cnt[id])
			}
		}
		if len(xs) < 3 {
			continue
		}
		if r := stat.Correlation(xs, ys, nil); math.Abs(r) >= leakCorrelation {
			out = append(out, fmt.Sprintf("WARNING: covariate %q has correlation %.3f with the items' mean label: if it is derived from the labels (a resolved or total score), it leaks them into the model; leave it out (covariates)", c, r))
		}
	}
	return out
}

// trainFeatures computes the features of the fitted items ids: fits the
// text featuriser to their texts and selects their covariates.
func trainFeatures(ds *annotations.Dataset, ids []string, ks kernel.Spec, spec FitSpec) (*itemFeatures, error) {
	f := &itemFeatures{n: len(ids)}
	byID := make(map[string]*annotations.Item, len(ds.Items))
	for i := range ds.Items {
		byID[ds.Items[i].ID] = &ds.Items[i]
	}
	for _, col := range ks.TextColumns() {
		texts := make([]string, len(ids))
		have := 0
		for i, id := range ids {
			if it := byID[id]; it != nil {
				texts[i] = columnText(it, col)
				if strings.TrimSpace(texts[i]) != "" {
					have++
				}
			}
		}
		if have == 0 {
			if col == "" {
				return nil, annotations.Errorf(annotations.EINVALID, "kernel %s needs item texts, and none of the %d items has one (give an items file with a text column, choose the text columns, or use kernel identity)", ks, len(ids))
			}
			return nil, annotations.Errorf(annotations.EINVALID, "kernel %s reads the items-file column %q, and none of the %d items has a value there (%s)", ks, col, len(ids), textColumnsAvailable(ds))
		}
		vec, _, err := textfeat.Fit(texts, spec.Text)
		if err != nil {
			return nil, annotations.Errorf(annotations.EINVALID, "kernel %s: %s", ks, strings.TrimPrefix(err.Error(), "textfeat: "))
		}
		t := textField{column: col, vec: vec, counts: termCounts(vec, texts)}
		t.docs = vectorsFromCounts(vec, t.counts)
		f.text = append(f.text, t)
	}
	if ks.Covariates() {
		cols, err := selectCovariates(ds, ks, spec.Covariates)
		if err != nil {
			return nil, err
		}
		// The categorical columns' indicators are read whatever the
		// covariates named.
		if f.cat = spec.Categorical; len(f.cat) > 0 {
			var ind []string
			for i := range ds.Items {
				for c := range ds.Items[i].Covariates {
					if isCategorical(c, f.cat) && !slices.Contains(cols, c) && !slices.Contains(ind, c) {
						ind = append(ind, c)
					}
				}
			}
			sort.Strings(ind)
			cols = append(slices.Clip(cols), ind...)
		}
		f.cols = cols
		var missing []string
		f.x, missing, _ = covariateMatrix(byID, ids, cols, notInItemsFile)
		if len(missing) > 0 {
			return nil, annotations.Errorf(annotations.EINVALID, "kernel %s needs the covariates %s for every item: %s", ks, strings.Join(cols, ", "), strings.Join(missing, "; "))
		}
		if spec.Standardize {
			f.standardize()
		}
	}
	return f, nil
}

// standardize z-scores the covariates with the items' means and sds.
func (f *itemFeatures) standardize() {
	n, d := f.x.Dims()
	f.std = &multirater.Standardization{Means: make([]float64, d), SDs: make([]float64, d)}
	col := make([]float64, n)
	for j := 0; j < d; j++ {
		if isCategorical(f.cols[j], f.cat) {
			f.std.Means[j], f.std.SDs[j] = 0, 1 // indicators stay 0 or 1
			continue
		}
		mat.Col(col, j, f.x)
		m, sd := stat.MeanStdDev(col, nil)
		if !(sd > 0) || n < 2 {
			sd = 0
		}
		f.std.Means[j], f.std.SDs[j] = m, sd
		for i := range col {
			f.x.Set(i, j, f.std.Z(j, col[i]))
		}
	}
}

// textColumnsAvailable lists the items' columns a text:COLUMN term can
// read, for messages.
func textColumnsAvailable(ds *annotations.Dataset) string {
	have := map[string]bool{}
	for i := range ds.Items {
		for c := range ds.Items[i].Attrs {
			have[c] = true
		}
	}
	if len(have) == 0 {
		return "the items have no other columns; a column joined into the item text (text columns) is read by the term text"
	}
	names := make([]string, 0, len(have))
	for c := range have {
		names = append(names, c)
	}
	sort.Strings(names)
	return "the items' other columns are " + strings.Join(names, ", ") + "; a column joined into the item text (text columns) is read by the term text"
}

// numericColumns returns the names of the items' numeric columns, sorted.
func numericColumns(ds *annotations.Dataset) []string {
	have := map[string]bool{}
	for i := range ds.Items {
		for c := range ds.Items[i].Covariates {
			have[c] = true
		}
	}
	avail := make([]string, 0, len(have))
	for c := range have {
		avail = append(avail, c)
	}
	sort.Strings(avail)
	return avail
}

// selectCovariates resolves FitSpec.Covariates against the items' numeric
// columns. The default ("") is every numeric column when the kernel has no
// text term; with a text term the columns must be named, so that a numeric
// column of an items file (a score, an id) never slips into a text model
// unasked.
func selectCovariates(ds *annotations.Dataset, ks kernel.Spec, spec string) ([]string, error) {
	avail := numericColumns(ds)
	list := "the items have none"
	if len(avail) > 0 {
		list = "the items have " + strings.Join(avail, ", ")
	}
	cl, _ := parseCovariateList(spec)
	switch {
	case cl.all || (spec == "" && !ks.Text()):
		if len(avail) == 0 {
			return nil, annotations.Errorf(annotations.EINVALID, "kernel %s needs numeric item covariates, and the items have none (give an items file with numeric columns, or use kernel identity)", ks)
		}
		return avail, nil
	case spec == "":
		return nil, annotations.Errorf(annotations.EINVALID, "kernel %s combines text with numeric covariates: name the covariate columns (covariates \"col,col\" or \"all\"; %s) so that no numeric column, such as a score derived from the labels, is used unasked", ks, list)
	}
	for _, c := range cl.names {
		if !slices.Contains(avail, c) {
			return nil, annotations.Errorf(annotations.EINVALID, "covariate %q is not a numeric item column (%s)", c, list)
		}
	}
	return cl.names, nil
}

// termCounts returns each text's bag of words over vec's vocabulary.
func termCounts(vec *textfeat.Vectorizer, texts []string) []multirater.TermCounts {
	opts := vec.Options()
	out := make([]multirater.TermCounts, len(texts))
	numeric.ParallelFor(len(texts), func(i int) {
		var idx []int32
		for _, t := range textfeat.Terms(texts[i], opts) {
			if k, ok := vec.Index(t); ok {
				idx = append(idx, int32(k))
			}
		}
		slices.Sort(idx)
		var tc multirater.TermCounts
		for j := 0; j < len(idx); {
			k := j + 1
			for k < len(idx) && idx[k] == idx[j] {
				k++
			}
			tc.I = append(tc.I, idx[j])
			tc.N = append(tc.N, int32(k-j))
			j = k
		}
		out[i] = tc
	})
	return out
}

// vectorsFromCounts turns bags of words into the vectors vec.Transform
// gives for the same documents, bit for bit: the weight of each term
// (count, 1, or count times idf), then division by the vector's L2 norm,
// computed as textfeat computes them (tested against Transform).
func vectorsFromCounts(vec *textfeat.Vectorizer, counts []multirater.TermCounts) []textfeat.Vector {
	w := vec.Options().Weighting
	idf := vec.IDF()
	out := make([]textfeat.Vector, len(counts))
	for i, tc := range counts {
		if len(tc.I) == 0 {
			continue
		}
		v := textfeat.Vector{Idx: slices.Clone(tc.I), Val: make([]float64, len(tc.I))}
		for k, c := range tc.N {
			switch w {
			case textfeat.Binary:
				v.Val[k] = 1
			case textfeat.TFIDF:
				v.Val[k] = float64(c) * idf[tc.I[k]]
			default:
				v.Val[k] = float64(c)
			}
		}
		nrm := v.Norm()
		for k := range v.Val {
			v.Val[k] /= nrm
		}
		out[i] = v
	}
	return out
}

// gram returns the covariance matrix of the items and the number of items
// whose zero prior variance was replaced by 1 (see kernel.Want's comment).
// It returns nil for the identity kernel.
func (f *itemFeatures) gram(ks kernel.Spec) (*mat.SymDense, int) {
	if ks.Identity() {
		return nil, 0
	}
	c := mat.NewSymDense(f.n, nil)
	var t mat.SymDense
	for _, term := range ks {
		t.Reset()
		switch term.Kind {
		case kernel.TextTerm:
			textfeat.LinearKernelTo(&t, f.field(term.Column).docs)
		case kernel.TextRBFTerm:
			textfeat.RBFKernelTo(&t, f.field("").docs, term.Gamma)
		default:
			term.Cov.GramTo(&t, f.inputs())
		}
		c.AddSym(c, &t)
	}
	zero := 0
	for i := 0; i < f.n; i++ {
		if c.At(i, i) == 0 {
			c.SetSym(i, i, 1)
			zero++
		}
	}
	return c, zero
}

// textFeatures returns, for a kernel of linear text terms alone (text, or a
// sum of text:COLUMN terms), the n×p feature matrix X with C = X X' that
// gram built, when it has fewer columns than there are items, so that the
// eigendecomposition of C can come from the p×p matrix X'X (see
// gp.NewGramFeatures): a column per vocabulary term of each text,
// and a unit column for each item whose zero prior variance gram replaced
// by 1. It returns nil otherwise.
func (f *itemFeatures) textFeatures(ks kernel.Spec) *mat.Dense {
	for _, t := range ks {
		if t.Kind != kernel.TextTerm {
			return nil
		}
	}
	v := 0
	for _, t := range f.text {
		v += t.vec.Len()
	}
	var empty []int
	for i := 0; i < f.n; i++ {
		zero := true
		for _, t := range f.text {
			if t.docs[i].NNZ() > 0 {
				zero = false
			}
		}
		if zero {
			empty = append(empty, i)
		}
	}
	p := v + len(empty)
	if p >= f.n {
		return nil
	}
	x := mat.NewDense(f.n, p, nil)
	off := 0
	for _, t := range f.text {
		for i, d := range t.docs {
			for k, j := range d.Idx {
				x.Set(i, off+int(j), d.Val[k])
			}
		}
		off += t.vec.Len()
	}
	for k, i := range empty {
		x.Set(i, v+k, 1)
	}
	return x
}

// PivotedFromItems is the number of items from which a fixed covariate
// kernel (rbf, ard, linear and their sums, no term learnt) of an EP or
// Laplace fit is held in low-rank (FITC) form by default (FitSpec.Rank 0):
// below it the dense matrix. On the ladder's 1,000 items (ordinal EP,
// rbf:gamma=0.125 on 8 covariates) the default rank 349 gave consensus
// Spearman 0.9925 with the dense fit in 11 CPU s instead of 101.
const PivotedFromItems = 500

// covLowRank returns the low-rank (pivoted, FITC) form of a kernel of
// fixed covariate terms for many items (PivotedFromItems, or a positive
// spec.Rank; by default for the engines whose priors take FITC's diagonal
// correction: EP, Laplace, and the ordinal and classification Gibbs
// samplers, which take it from gp.ExtraFromItems = PivotedFromItems items),
// or nil: for other kernels, for items
// of zero prior variance and with spec.Rank -1.
func (f *itemFeatures) covLowRank(ks kernel.Spec, spec FitSpec, labels int) (*gp.LowRank, string) {
	det := strings.EqualFold(spec.Engine, multirater.EngineEP) || strings.EqualFold(spec.Engine, multirater.EngineLaplace) ||
		// The ordinal and classification Gibbs samplers take FITC's
		// diagonal correction too (gp.NewPriorExtra).
		(strings.EqualFold(spec.Engine, multirater.EngineGibbs) && (strings.EqualFold(spec.Model, ModelOrdinal) || strings.EqualFold(spec.Model, ModelClassification)))
	if spec.Rank < 0 || (spec.Rank == 0 && (f.n < PivotedFromItems || !det)) || f.x == nil {
		return nil, ""
	}
	learnt := learntCross(ks)
	diag, col := f.covColumns(ks, learnt)
	if diag == nil {
		return nil, ""
	}
	rank := spec.Rank
	if rank == 0 && learnt {
		rank = learntRank(spec, f.n)
	}
	if rank != 0 {
		lr, err := gp.NewLowRankColumns(diag, col, rank, 0)
		if err != nil {
			return nil, ""
		}
		return lr, ""
	}
	// The default rule (defaultRank): pivots from base until at most
	// RankTraceShare of the trace is left out, or most.
	base, most := defaultRank(spec, labels, f.n)
	if most == base {
		lr, err := gp.NewLowRankColumns(diag, col, base, 0)
		if err != nil {
			return nil, ""
		}
		return lr, rankNote(lr.Rank(), base, most, f.n, lr.Residual(), lr.Trace)
	}
	lr, err := gp.NewLowRankColumnsShare(diag, col, min(base, f.n), min(most, f.n), RankTraceShare)
	if err != nil {
		return nil, ""
	}
	return lr, rankNote(lr.Rank(), base, most, f.n, lr.Residual(), lr.Trace)
}

// covColumns returns the diagonal and the columns (col sets dst to column
// p) of the kernel matrix of ks, a sum of covariate terms, fixed or, with
// learnt, learnt cross-covariance terms; nil when ks is not such a kernel
// or some item has no prior variance.
func (f *itemFeatures) covColumns(ks kernel.Spec, learnt bool) ([]float64, func(p int, dst []float64)) {
	for _, t := range ks {
		if t.Kind != kernel.CovTerm || (t.Learn && !learnt) || !t.Cov.Covariates() {
			return nil, nil
		}
	}
	in := f.inputs()
	diag := make([]float64, f.n)
	for _, t := range ks {
		for i, v := range t.Cov.DiagTo(nil, in) {
			diag[i] += v
		}
	}
	for _, v := range diag {
		if !(v > 0) {
			return nil, nil
		}
	}
	_, d := f.x.Dims()
	var c mat.Dense
	col := func(p int, dst []float64) {
		clear(dst)
		one := kernel.Inputs{N: 1, X: mat.NewDense(1, d, append([]float64(nil), f.x.RawRowView(p)...))}
		for _, t := range ks {
			c.Reset()
			t.Cov.CrossTo(&c, in, one)
			for i := range dst {
				dst[i] += c.At(i, 0)
			}
		}
	}
	return diag, col
}

// textLowRank returns the weight-space prior C ≈ G G' of the text
// features x (gp.NewLowRankFeatures, its random test matrix from spec.Seed),
// of rank spec.Rank, or by default (Rank 0) of the rank defaultRank's rule
// gives for a fit of spec on labels labels, with a note saying how it was
// chosen (none when the basis is exact or the rank was asked for). The
// default rank is read from a basis of the budget's largest rank (the
// smallest from the base rule leaving out at most RankTraceShare of the
// trace), then the basis is rebuilt at it when smaller, so that the rank
// and the seed alone rebuild the fit's prior (priorLowRank); when the rule
// cannot raise the rank the one basis is the base rule's, as before it.
// A cancelled ctx stops a build (gp.LowRankOptions.Stop).
func textLowRank(ctx context.Context, x gp.SparseRows, spec FitSpec, labels int) (*gp.LowRank, string, error) {
	build := func(r int) (*gp.LowRank, error) {
		return gp.NewLowRankFeatures(x, gp.LowRankOptions{MaxRank: r, Stop: ctx.Err}, rand.New(rand.NewPCG(spec.Seed, lowRankStream)), spec.Seed)
	}
	n := x.Rows()
	if spec.Rank != 0 {
		lr, err := build(spec.Rank)
		return lr, "", err
	}
	base, most := defaultRank(spec, labels, n)
	lr, err := build(most)
	if err != nil || lr.Exact || base >= n {
		// Up to 256 items the base rank keeps every dimension: no rule.
		return lr, "", err
	}
	if r := lr.ShareRank(base, RankTraceShare); r < lr.Rank() {
		if lr, err = build(r); err != nil {
			return nil, "", err
		}
	}
	return lr, rankNote(lr.Rank(), base, most, n, lr.Residual(), lr.Trace), nil
}

// learntCross reports whether every term of ks is learnt and gives its
// cross-covariance derivatives (kernel.CrossHyper: rbf, ard): the fits
// then hold the prior in inducing-point form (infer.LearnKernel.Rank), and
// the covariance built before the fit, at the terms' starting
// hyperparameters, need not be the N×N matrix either.
func learntCross(ks kernel.Spec) bool {
	for _, t := range ks {
		if _, ok := t.Cov.(kernel.CrossHyper); !ok || !t.Learn {
			return false
		}
	}
	return len(ks) > 0
}

// priorLowRank rebuilds the low-rank prior of a fit result that used one
// (Model.PriorRank): the text basis from the same features, rank and seed
// (the randomized range finder is deterministic given them), or the same
// pivoted columns; nil otherwise.
func (f *itemFeatures) priorLowRank(ks kernel.Spec, res *multirater.FitResult) *gp.LowRank {
	r := res.Model.PriorRank
	if r <= 0 {
		return nil
	}
	if x, _ := f.textSparse(ks); x != nil {
		lr, err := gp.NewLowRankFeatures(*x, gp.LowRankOptions{MaxRank: r}, rand.New(rand.NewPCG(res.Model.Seed, lowRankStream)), res.Model.Seed)
		if err != nil {
			return nil
		}
		return lr
	}
	lr, _ := f.covLowRank(ks, FitSpec{Rank: r, Engine: res.Model.Engine}, 0)
	return lr
}

// lowRankStream is the stream of the fit's seed that draws the random test
// matrix of a truncated text basis (gp.NewLowRankFeatures).
const lowRankStream = 0x6c6f7772616e6b

// textSparse returns, for a kernel of linear text terms alone, the items'
// features X with C = X X' as sparse rows (the text terms' columns side by
// side, and a unit column for each item with no features, as in gram), and
// the number of such items; nil otherwise.
func (f *itemFeatures) textSparse(ks kernel.Spec) (*gp.SparseRows, int) {
	if len(ks) == 0 {
		return nil, 0
	}
	for _, t := range ks {
		if t.Kind != kernel.TextTerm {
			return nil, 0
		}
	}
	fields := make([]*textField, len(ks))
	offs := make([]int, len(ks))
	cols := 0
	for k, t := range ks {
		fields[k] = f.field(t.Column)
		offs[k] = cols
		cols += fields[k].vec.Len()
	}
	x := &gp.SparseRows{Idx: make([][]int32, f.n), Val: make([][]float64, f.n)}
	empty := 0
	for i := 0; i < f.n; i++ {
		for k, t := range fields {
			d := t.docs[i]
			for j, c := range d.Idx {
				x.Idx[i] = append(x.Idx[i], int32(offs[k])+c)
				x.Val[i] = append(x.Val[i], d.Val[j])
			}
		}
		if len(x.Idx[i]) == 0 {
			x.Idx[i] = []int32{int32(cols + empty)}
			x.Val[i] = []float64{1}
			empty++
		}
	}
	x.Cols = cols + empty
	return x, empty
}

// cross returns the covariances between the new items g (rows) and the
// fitted items f (columns), and the new items' prior variances, with the
// zero-variance rule of gram.
func (f *itemFeatures) cross(ks kernel.Spec, g *itemFeatures) (*mat.Dense, []float64) {
	c := mat.NewDense(g.n, f.n, nil)
	prior := make([]float64, g.n)
	var t mat.Dense
	for _, term := range ks {
		t.Reset()
		switch term.Kind {
		case kernel.TextTerm:
			gd := g.field(term.Column).docs
			textfeat.CrossKernelTo(&t, gd, f.field(term.Column).docs)
			for i, d := range gd {
				prior[i] += d.Dot(d)
			}
		case kernel.TextRBFTerm:
			textfeat.RBFCrossKernelTo(&t, g.field("").docs, f.field("").docs, term.Gamma)
			for i := range prior {
				prior[i]++
			}
		default:
			term.Cov.CrossTo(&t, g.inputs(), f.inputs())
			for i, v := range term.Cov.DiagTo(nil, g.inputs()) {
				prior[i] += v
			}
		}
		c.Add(c, &t)
	}
	for i, v := range prior {
		if v == 0 {
			prior[i] = 1
		}
	}
	return c, prior
}

func (f *itemFeatures) inputs() kernel.Inputs {
	in := kernel.Inputs{N: f.n}
	if f.x != nil {
		in.X = f.x
	}
	return in
}

// record returns the features as the fit result keeps them.
func (f *itemFeatures) record() (*multirater.Features, error) {
	out := &multirater.Features{Covariates: f.cols, Standardize: f.std, Categorical: f.cat}
	if f.x != nil {
		out.X = make([][]float64, f.n)
		for i := range out.X {
			out.X[i] = mat.Row(nil, i, f.x)
		}
	}
	for _, t := range f.text {
		b, err := json.Marshal(t.vec)
		if err != nil {
			return nil, fmt.Errorf("saving the text featuriser: %w", err)
		}
		if t.column == "" {
			out.Text, out.Terms = b, t.counts
		} else {
			out.TextColumns = append(out.TextColumns, multirater.ColumnText{Column: t.column, Text: b, Terms: t.counts})
		}
	}
	return out, nil
}

// featuresOf restores the fitted items' features from a fit result, checking
// them against the kernel; errors describe what is missing or malformed.
func featuresOf(res *multirater.FitResult, ks kernel.Spec) (*itemFeatures, error) {
	n := len(res.Items)
	f := &itemFeatures{n: n}
	if ks.Identity() {
		return f, nil
	}
	ft := res.Features
	if ft == nil {
		return nil, fmt.Errorf("the fit result does not record its items' features (kernel %s; made by an older version of concord?): refit to predict new items", ks)
	}
	for _, col := range ks.TextColumns() {
		raw, terms, where := ft.Text, ft.Terms, "features"
		if col != "" {
			raw, terms, where = nil, nil, fmt.Sprintf("features.text_columns (column %q)", col)
			for k, c := range ft.TextColumns {
				if c.Column == col {
					raw, terms, where = c.Text, c.Terms, fmt.Sprintf("features.text_columns[%d]", k)
				}
			}
		}
		if len(raw) == 0 || len(terms) != n {
			return nil, fmt.Errorf("the fit result's %s have no text featuriser or not one bag of words per item (%d for %d items)", where, len(terms), n)
		}
		t := textField{column: col, vec: new(textfeat.Vectorizer)}
		if err := json.Unmarshal(raw, t.vec); err != nil {
			return nil, fmt.Errorf("the fit result's text featuriser (%s): %w", where, err)
		}
		nv := int32(t.vec.Len())
		for i, tc := range terms {
			if len(tc.I) != len(tc.N) {
				return nil, fmt.Errorf("%s.terms[%d] (item %q): %d indices and %d counts", where, i, res.Items[i].ID, len(tc.I), len(tc.N))
			}
			for k, x := range tc.I {
				if x < 0 || x >= nv || (k > 0 && x <= tc.I[k-1]) || tc.N[k] <= 0 {
					return nil, fmt.Errorf("%s.terms[%d] (item %q): expected increasing feature indices below %d with positive counts", where, i, res.Items[i].ID, nv)
				}
			}
		}
		t.counts = terms
		t.docs = vectorsFromCounts(t.vec, t.counts)
		f.text = append(f.text, t)
	}
	if ks.Covariates() {
		if len(ft.Covariates) == 0 || len(ft.X) != n {
			return nil, fmt.Errorf("the fit result's features do not hold the covariates of its %d items (kernel %s)", n, ks)
		}
		f.cols, f.cat = ft.Covariates, ft.Categorical
		f.x = mat.NewDense(n, len(f.cols), nil)
		for i, row := range ft.X {
			if len(row) != len(f.cols) {
				return nil, fmt.Errorf("features.x[%d] (item %q) has %d values for %d covariates", i, res.Items[i].ID, len(row), len(f.cols))
			}
			for j, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("features.x[%d][%d] (item %q) is %v", i, j, res.Items[i].ID, v)
				}
			}
			f.x.SetRow(i, row)
		}
		if st := ft.Standardize; st != nil {
			if len(st.Means) != len(f.cols) || len(st.SDs) != len(f.cols) {
				return nil, fmt.Errorf("the fit result's standardisation has %d means and %d sds for %d covariates", len(st.Means), len(st.SDs), len(f.cols))
			}
			f.std = st
		}
	}
	return f, nil
}
