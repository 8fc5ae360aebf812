package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"concord/annotations"
	"concord/multirater"
	"concord/raters"
)

// Build makes the report of a fit result. project names the project and
// its scheme; a zero project.Scheme means the scheme recorded in the fit
// (res.Model.Scheme), or failing that an ordinal or nominal scheme of the
// fit's levels. agreement, when not nil, is the agreement analysis of the
// same labels (the Report of analysis.Agreement): it adds the agreement
// coefficients, the pairwise kappa matrix and the baseline aggregators
// beside the model. ds, when not nil, is the dataset the fit was made from:
// it adds the items' gold labels, and the raters' labels of items whose
// result does not list them.
//
// Build copies what it needs: the report does not share memory with res
// (except Traces and Draws, used read-only by the plots). Inconsistent
// input (labels of unknown raters, levels that differ from the scheme's)
// is an error.
func Build(project annotations.Project, res *multirater.FitResult, agreement *raters.Report, ds *annotations.Dataset) (*Report, error) {
	return BuildFit(project, FitFromResult(res), agreement, ds)
}

// BuildFit is Build for a fit document read by ReadFit.
func BuildFit(project annotations.Project, fit *Fit, agreement *raters.Report, ds *annotations.Dataset) (*Report, error) {
	if fit == nil {
		panic("reports: nil fit")
	}
	if err := fit.check(); err != nil {
		return nil, fmt.Errorf("reports: fit result: %w", err)
	}
	scheme, err := resolveScheme(project.Scheme, fit)
	if err != nil {
		return nil, err
	}
	name := project.Name
	if name == "" {
		name = "(unnamed)"
	}
	rep := &Report{
		Schema:  Schema,
		Project: Project{Name: name, Scheme: scheme.String(), SchemeKind: string(scheme.Kind), Positive: scheme.Positive},
		Model:   fit.Model,
		Kind:    KindOrdinal,
		Traces:  fit.Traces,
		Draws:   fit.Draws,
	}
	switch {
	case fit.Model.Shape() == multirater.OutputRanking:
		rep.Kind = KindRanking
	case fit.Values():
		rep.Kind = KindValues
	case fit.Classification():
		rep.Kind = KindClassification
	}
	rep.Levels = []Level{}
	for _, l := range scheme.Levels {
		rep.Levels = append(rep.Levels, Level{Code: l.Code, Name: l.Name})
	}
	b := &builder{rep: rep, fit: fit, ds: ds, k: len(fit.Levels)}
	b.items()
	b.raters()
	if rep.Kind == KindOrdinal || rep.Kind == KindClassification {
		b.gold()
	}
	switch rep.Kind {
	case KindOrdinal:
		b.thresholds()
	case KindClassification:
		b.classes()
	}
	b.flags()
	b.labelErrors()
	b.diagnostics()
	rep.ModelChoice = ChoiceOf(&fit.Model, &fit.Diagnostics)
	if agreement != nil {
		b.agreement(agreement)
	} else {
		rep.Notes = append(rep.Notes, "no agreement analysis: the report was built without the labels' agreement coefficients and baseline aggregators")
	}
	b.rocs()
	b.summary()
	if rep.Kind == KindRanking {
		b.ranking()
		return rep, nil
	}
	if rep.Kind == KindValues {
		rep.Notes = append(rep.Notes, fmt.Sprintf("bounded ratings on %s: each item's consensus is its value on the rating scale with a 95%% predictive interval, each rater's reliability their dispersion nu; there are no levels, grade or class distributions, thresholds or posterior draws", scheme))
		return rep, nil
	}
	if fit.Draws == nil || len(fit.Draws.Alpha) == 0 {
		rep.Notes = append(rep.Notes, "the fit kept no posterior draws: no density plot of the rater variances")
	}
	if fit.Traces == nil || len(fit.Traces.Alpha) == 0 {
		rep.Notes = append(rep.Notes, "the fit kept no traces: no trace plot")
	}
	return rep, nil
}

// resolveScheme returns the scheme of the report and checks that its
// levels are the fit's (for values: that it is a bounded scheme of the
// fit's range).
func resolveScheme(s annotations.Scheme, fit *Fit) (annotations.Scheme, error) {
	if s.Kind == "" && fit.Model.Scheme != "" {
		if p, err := annotations.ParseScheme(fit.Model.Scheme); err == nil && !p.Open() {
			s = p
		}
	}
	if fit.Values() {
		m := fit.Model
		if s.Kind == "" && m.Lo != nil && m.Hi != nil {
			s = annotations.Scheme{Kind: annotations.Bounded, Lo: *m.Lo, Hi: *m.Hi}
		}
		switch {
		case s.Kind != annotations.Bounded:
			return s, fmt.Errorf("reports: the fit is of bounded ratings (model.output \"values\") but the scheme is %s", schemeName(s))
		case m.Lo != nil && m.Hi != nil && (*m.Lo != s.Lo || *m.Hi != s.Hi):
			return s, fmt.Errorf("reports: the scheme %s does not bound the fit's ratings to [%g, %g]", s, *m.Lo, *m.Hi)
		}
		return s, nil
	}
	if s.Kind == annotations.Bounded {
		return s, fmt.Errorf("reports: the scheme %s is bounded but the fit has levels %s", s, strings.Join(fit.Levels, ","))
	}
	if s.Kind == "" {
		s.Kind = annotations.Ordinal
		if fit.Classification() {
			s.Kind = annotations.Nominal
		}
		for _, c := range fit.Levels {
			s.Levels = append(s.Levels, annotations.Level{Code: c})
		}
	}
	codes := s.Codes()
	if strings.Join(codes, "\x00") != strings.Join(fit.Levels, "\x00") {
		return s, fmt.Errorf("reports: the scheme %s has levels %s but the fit has %s", s, strings.Join(codes, ","), strings.Join(fit.Levels, ","))
	}
	return s, nil
}

// schemeName is a scheme's textual form, or "unknown" for none.
func schemeName(s annotations.Scheme) string {
	if s.Kind == "" {
		return "unknown"
	}
	return s.String()
}

type builder struct {
	rep *Report
	fit *Fit
	ds  *annotations.Dataset
	k   int
	// byID maps item id to its index in rep.Items (after sorting).
	byID map[string]int
	// raterIx maps rater id to its index in rep.Raters.
	raterIx map[string]int
	labels  int
}

func (b *builder) levelIndex(code string) int { return indexOf(b.fit.Levels, code) }

func (b *builder) items() {
	fit, rep := b.fit, b.rep
	gold, text, dsLabels := b.datasetItems()
	rep.Items = make([]Item, len(fit.Items))
	for i := range fit.Items {
		fi := &fit.Items[i]
		src := fi.Labels
		if len(src) == 0 && fi.NLabels > 0 && dsLabels != nil {
			src = dsLabels[fi.ID]
		}
		rep.Items[i] = b.item(fi, src)
		rep.Items[i].Gold = gold[fi.ID]
		rep.Items[i].Text = text[fi.ID]
		b.labels += len(rep.Items[i].Labels)
	}
	less := b.consensusOrder()
	sort.SliceStable(rep.Items, func(i, j int) bool { return less(&rep.Items[i], &rep.Items[j]) })
	b.byID = make(map[string]int, len(rep.Items))
	for i := range rep.Items {
		rep.Items[i].Position = i + 1
		b.byID[rep.Items[i].ID] = i
	}
}

// datasetItems returns what the dataset the report is built with adds to
// the fit's items: their gold labels and texts by item id, and the labels
// by item and rater when a fit item counts labels it does not keep (nil
// otherwise, and all nil without a dataset).
func (b *builder) datasetItems() (gold, text map[string]string, labels map[string]map[string]string) {
	if b.ds == nil {
		return nil, nil, nil
	}
	gold, text = map[string]string{}, map[string]string{}
	for _, it := range b.ds.Items {
		if it.Gold != "" {
			gold[it.ID] = it.Gold
		}
		if it.Text != "" {
			text[it.ID] = it.Text
		}
	}
	if !slices.ContainsFunc(b.fit.Items, func(fi FitItem) bool { return len(fi.Labels) == 0 && fi.NLabels > 0 }) {
		return gold, text, nil
	}
	labels = map[string]map[string]string{}
	for _, l := range b.ds.Labels {
		m := labels[l.Item]
		if m == nil {
			m = map[string]string{}
			labels[l.Item] = m
		}
		if _, dup := m[l.Rater]; !dup {
			m[l.Rater] = l.Value
		}
	}
	return gold, text, labels
}

// item is the report's row of a fit item whose labels (by rater) are
// labels: the labels and their majority, the scores, and the consensus
// with its distribution.
func (b *builder) item(fi *FitItem, labels map[string]string) Item {
	it := Item{ID: fi.ID, NLabels: fi.NLabels, Labels: maps.Clone(labels), MajorityShare: nan}
	if it.Labels == nil {
		it.Labels = map[string]string{}
	}
	if it.NLabels == 0 {
		it.NLabels = len(it.Labels)
	}
	it.NRaters = len(it.Labels)
	if b.rep.Kind != KindValues {
		it.Majority, it.MajorityTie, it.MajorityShare = b.majority(it.Labels)
	} else {
		it.Baselines = ratingBaselines(it.Labels)
	}
	if fi.Score != nil {
		it.Score = estimate(*fi.Score)
	}
	if fi.Rank != nil {
		it.Rank = &RankSummary{Mean: Number(fi.Rank.Mean), Q025: Number(fi.Rank.Q025), Q50: Number(fi.Rank.Q50), Q975: Number(fi.Rank.Q975)}
	}
	if fi.Value != nil {
		it.Value = estimate(*fi.Value)
	}
	probs := b.itemProbs(fi)
	it.Consensus = fi.Grade
	if b.rep.Kind == KindClassification {
		it.Consensus = fi.Class
	}
	if it.Consensus == "" && probs != nil {
		it.Consensus = b.fit.Levels[floats.MaxIdx(probs)]
	}
	it.Prob, it.Entropy, it.Probs = nan, nan, make([]Number, len(probs))
	for c, p := range probs {
		it.Probs[c] = Number(p)
	}
	if probs != nil {
		if c := b.levelIndex(it.Consensus); c >= 0 {
			it.Prob = Number(probs[c])
		}
		it.Entropy = Number(entropyBits(probs))
	}
	return it
}

// consensusOrder returns the order of the consensus (Item.Position):
// scores and values by posterior mean rank, then by decreasing score; a
// two-class classification by decreasing probability of the positive
// class; more classes by consensus class (level order), then by
// decreasing probability of it. Missing numbers sort last.
func (b *builder) consensusOrder() func(a, c *Item) bool {
	if b.rep.Kind != KindClassification {
		return func(a, c *Item) bool {
			ra, rc := rankOf(a), rankOf(c)
			if ra != rc {
				return ra < rc
			}
			return scoreOf(a) > scoreOf(c)
		}
	}
	if b.k == 2 {
		if pos := positiveIndex(b.rep, b.fit.Levels); pos >= 0 {
			return func(a, c *Item) bool { return probOf(a, pos) > probOf(c, pos) }
		}
	}
	class := func(it *Item) int {
		if k := b.levelIndex(it.Consensus); k >= 0 {
			return k
		}
		return b.k
	}
	return func(a, c *Item) bool {
		ca, cc := class(a), class(c)
		if ca != cc {
			return ca < cc
		}
		return probOf(a, ca) > probOf(c, cc)
	}
}

// rankOf is an item's posterior mean rank, +Inf without one.
func rankOf(it *Item) float64 {
	if it.Rank != nil && it.Rank.Mean.Valid() {
		return float64(it.Rank.Mean)
	}
	return math.Inf(1)
}

// scoreOf is an item's posterior mean score, -Inf without one.
func scoreOf(it *Item) float64 {
	if it.Score != nil && it.Score.Mean.Valid() {
		return float64(it.Score.Mean)
	}
	return math.Inf(-1)
}

// probOf is the probability of level c in an item's consensus
// distribution, -Inf without one.
func probOf(it *Item, c int) float64 {
	if c < 0 || c >= len(it.Probs) || !it.Probs[c].Valid() {
		return math.Inf(-1)
	}
	return float64(it.Probs[c])
}

// majority returns the most common of an item's labels (ties broken by
// level order, then by code), whether other labels are as common, and the
// share of the labels equal to it: the item's observed agreement. No
// labels give "", false, NaN.
func (b *builder) majority(labels map[string]string) (string, bool, Number) {
	if len(labels) == 0 {
		return "", false, nan
	}
	counts := make(map[string]int, len(labels))
	for _, v := range labels {
		counts[v]++
	}
	best, n, tie := "", 0, false
	for v, c := range counts {
		switch {
		case c > n:
			best, n, tie = v, c, false
		case c == n:
			tie = true
			if b.labelBefore(v, best) {
				best = v
			}
		}
	}
	return best, tie, ratio(n, len(labels))
}

// labelBefore orders labels by level, unknown codes last, then by code.
func (b *builder) labelBefore(u, v string) bool {
	iu, iv := b.levelIndex(u), b.levelIndex(v)
	if iu < 0 {
		iu = math.MaxInt
	}
	if iv < 0 {
		iv = math.MaxInt
	}
	if iu != iv {
		return iu < iv
	}
	return u < v
}

// ratingBaselines returns the raters' mean and median of an item's
// ratings (values), as the baseline aggregators "mean" and "median" of the
// agreement analysis give them; nil without ratings.
func ratingBaselines(labels map[string]string) map[string]Baseline {
	vals := make([]float64, 0, len(labels))
	for _, v := range labels {
		if x, ok := ratingValue(v); ok {
			vals = append(vals, x)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	sort.Float64s(vals)
	med := vals[len(vals)/2]
	if len(vals)%2 == 0 {
		med = (vals[len(vals)/2-1] + med) / 2
	}
	return map[string]Baseline{"mean": {Score: Number(stat.Mean(vals, nil))}, "median": {Score: Number(med)}}
}

// itemProbs returns the item's consensus distribution in level order: the
// class distribution (classification), the consensus grade distribution
// (ordinal), or the mean of the raters' predictive distributions.
func (b *builder) itemProbs(fi *FitItem) []float64 {
	if fi.ClassProbs != nil {
		return fi.ClassProbs
	}
	if len(fi.GradeProbs) > 0 {
		p := make([]float64, b.k)
		for c, l := range b.fit.Levels {
			p[c] = fi.GradeProbs[l]
		}
		return p
	}
	if len(fi.RaterGradeProbs) > 0 {
		p := make([]float64, b.k)
		n := 0
		for _, rp := range fi.RaterGradeProbs {
			if len(rp) != b.k {
				continue
			}
			n++
			for c := range p {
				p[c] += rp[c]
			}
		}
		if n > 0 {
			for c := range p {
				p[c] /= float64(n)
			}
			return p
		}
	}
	return nil
}

// positiveIndex returns the index of the positive class of a two-level
// report: the binary scheme's positive class, else the second level.
func positiveIndex(rep *Report, levels []string) int {
	if rep.Project.Positive != "" {
		if i := indexOf(levels, rep.Project.Positive); i >= 0 {
			return i
		}
	}
	return len(levels) - 1
}

func (b *builder) raters() {
	fit, rep := b.fit, b.rep
	rep.Raters = make([]Rater, len(fit.Raters))
	b.raterIx = make(map[string]int, len(fit.Raters))
	for l := range fit.Raters {
		fr := &fit.Raters[l]
		r := &rep.Raters[l]
		b.raterIx[fr.ID] = l
		r.ID = fr.ID
		r.NLabels = fr.NLabels
		r.Reference = fr.Reference
		r.Model = fr.Model
		r.Precision = *estimate(fr.Precision)
		r.Variance = *estimate(fr.Variance)
		if fr.Dispersion != nil {
			r.Dispersion = estimate(*fr.Dispersion)
		}
		if fr.Bias != nil {
			r.Bias = estimate(*fr.Bias)
		}
		r.MeanLogPred = Number(fr.MeanLogPred)
		if fr.LevelCounts != nil {
			r.LevelCounts = append([]int(nil), fr.LevelCounts...)
		} else {
			r.LevelCounts = make([]int, b.k)
		}
		if rep.Kind == KindOrdinal && len(fr.Thresholds) > 0 {
			r.Severity = &Interval{Mean: Number(fr.Severity), Q025: Number(fr.SeverityQ025), Q975: Number(fr.SeverityQ975)}
		}
		r.MeanKappa = nan
		if e := fr.Epsilon; e != nil {
			// The fit keeps the EM history only when the rates were
			// learnt: the starting value, then one entry per step.
			r.Epsilon = &ErrorRate{Value: Number(e.Value), Learnt: len(e.History) > 1, Steps: max(len(e.History)-1, 0)}
			if r.Epsilon.Learnt {
				r.Epsilon.History = append([]float64(nil), e.History...)
			}
		}
		confusionRater(r, fr)
	}
	// Agreement with the consensus, and the level counts when the fit has
	// none.
	hits := make([]int, len(rep.Raters))
	n := make([]int, len(rep.Raters))
	counts := make([][]int, len(rep.Raters))
	for l := range counts {
		counts[l] = make([]int, b.k)
	}
	for i := range rep.Items {
		it := &rep.Items[i]
		for rid, v := range it.Labels {
			l := b.raterIx[rid]
			if c := b.levelIndex(v); c >= 0 {
				counts[l][c]++
			}
			if it.Consensus == "" {
				continue
			}
			n[l]++
			if v == it.Consensus {
				hits[l]++
			}
		}
	}
	for l := range rep.Raters {
		r := &rep.Raters[l]
		r.ConsensusAgreement = ratio(hits[l], n[l])
		if fit.Raters[l].LevelCounts == nil {
			r.LevelCounts = counts[l]
		}
		if r.NLabels == 0 {
			for _, c := range counts[l] {
				r.NLabels += c
			}
		}
	}
}

// gold scores each rater on the gold questions: the dataset's labels
// (every repeated label) when the report has them, else the items' labels.
func (b *builder) gold() {
	rep := b.rep
	gold := map[string]string{}
	for i := range rep.Items {
		if g := rep.Items[i].Gold; g != "" {
			gold[rep.Items[i].ID] = g
		}
	}
	if len(gold) == 0 {
		return
	}
	var labels []annotations.Label
	if b.ds != nil && len(b.ds.Labels) > 0 {
		labels = b.ds.Labels
	} else {
		for i := range rep.Items {
			for r, v := range rep.Items[i].Labels {
				labels = append(labels, annotations.Label{Item: rep.Items[i].ID, Rater: r, Value: v})
			}
		}
	}
	scores := goldScores(gold, labels)
	for l := range rep.Raters {
		sc := scores[rep.Raters[l].ID]
		if sc == nil {
			sc = &GoldScore{Accuracy: nan, Q025: nan, Q975: nan}
		}
		rep.Raters[l].Gold = sc
	}
}

// GoldScores returns each rater's record on the gold questions of ds (the
// items with a gold label; every repeated label counts), by rater id, for
// every rater with labels; nil when no item has gold.
func GoldScores(ds *annotations.Dataset) map[string]*GoldScore {
	gold := map[string]string{}
	for _, it := range ds.Items {
		if it.Gold != "" {
			gold[it.ID] = it.Gold
		}
	}
	if len(gold) == 0 {
		return nil
	}
	out := goldScores(gold, ds.Labels)
	for _, l := range ds.Labels {
		if out[l.Rater] == nil {
			out[l.Rater] = &GoldScore{Accuracy: nan, Q025: nan, Q975: nan}
		}
	}
	return out
}

// goldScores scores the raters of labels on the items of gold (item id ->
// gold label): only raters with a label on a gold item get a record.
func goldScores(gold map[string]string, labels []annotations.Label) map[string]*GoldScore {
	out := map[string]*GoldScore{}
	seen := map[[2]string]bool{}
	for _, lb := range labels {
		g, ok := gold[lb.Item]
		if !ok {
			continue
		}
		sc := out[lb.Rater]
		if sc == nil {
			sc = &GoldScore{}
			out[lb.Rater] = sc
		}
		sc.Labels++
		if lb.Value == g {
			sc.Correct++
		}
		if k := [2]string{lb.Rater, lb.Item}; !seen[k] {
			seen[k] = true
			sc.Items++
		}
	}
	for _, sc := range out {
		p, lo, hi := raters.WilsonInterval(float64(sc.Correct), float64(sc.Labels), 0.95)
		sc.Accuracy, sc.Q025, sc.Q975 = Number(p), Number(lo), Number(hi)
	}
	return out
}

func (b *builder) thresholds() {
	for _, fr := range b.fit.Raters {
		if len(fr.Thresholds) == 0 {
			continue
		}
		rt := RaterThresholds{Rater: fr.ID}
		for j, t := range fr.Thresholds {
			between := t.Between
			if between[0] == "" && j+1 < b.k {
				between = [2]string{b.fit.Levels[j], b.fit.Levels[j+1]}
			}
			rt.Thresholds = append(rt.Thresholds, Threshold{Index: j + 1, Between: between, Estimate: *estimate(t.Estimate), Fixed: t.Fixed})
		}
		b.rep.Thresholds = append(b.rep.Thresholds, rt)
	}
}

func (b *builder) classes() {
	rep := b.rep
	k := b.k
	cl := &Classes{Counts: make([]ClassCount, k)}
	for c, l := range rep.Levels {
		cl.Counts[c] = ClassCount{Class: l.Code, Name: l.Name}
	}
	conf := make([][][]int, len(rep.Raters))
	for l := range conf {
		conf[l] = make([][]int, k)
		for c := range conf[l] {
			conf[l][c] = make([]int, k)
		}
	}
	total, withCons := 0, 0
	probSum := make([]float64, k)
	withProbs := 0
	for i := range rep.Items {
		it := &rep.Items[i]
		ci := b.levelIndex(it.Consensus)
		if ci >= 0 {
			cl.Counts[ci].Consensus++
			withCons++
		}
		if g := b.levelIndex(it.Gold); g >= 0 {
			cl.Counts[g].Gold++
		}
		if len(it.Probs) == k {
			withProbs++
			for c, p := range it.Probs {
				if p.Valid() {
					probSum[c] += float64(p)
				}
			}
		}
		for rid, v := range it.Labels {
			li := b.levelIndex(v)
			if li < 0 {
				continue
			}
			cl.Counts[li].Labels++
			total++
			if ci >= 0 {
				conf[b.raterIx[rid]][ci][li]++
			}
		}
	}
	for c := range cl.Counts {
		cc := &cl.Counts[c]
		cc.LabelShare = ratio(cc.Labels, total)
		cc.ConsensusShare = ratio(cc.Consensus, withCons)
		cc.MeanProb = nan
		if withProbs > 0 {
			cc.MeanProb = Number(probSum[c] / float64(withProbs))
		}
	}
	for l, r := range rep.Raters {
		cl.Confusion = append(cl.Confusion, RaterConfusion{Rater: r.ID, Agreement: r.ConsensusAgreement, Counts: conf[l]})
	}
	rep.Classes = cl
}

func (b *builder) flags() {
	rep := b.rep
	rep.Flags = make([]Flag, 0, len(b.fit.Flags))
	for _, f := range b.fit.Flags {
		i := b.byID[f.Item]
		it := &rep.Items[i]
		it.Flags++
		if l, ok := b.raterIx[f.Rater]; ok {
			rep.Raters[l].Flags++
		}
		fl := Flag{Item: f.Item, Rater: f.Rater, Label: f.Label, Prob: Number(f.Prob), Expected: f.Expected, Consensus: it.Consensus, Position: it.Position, Flagged: true}
		if v := it.Value; v != nil {
			fl.ItemValue = &Interval{Mean: v.Mean, Q025: v.Q025, Q975: v.Q975}
		}
		rep.Flags = append(rep.Flags, fl)
	}
	b.lowest()
}

// labelErrors sets Report.LabelErrors from the fit's (the robust model):
// every label, most probably wrong first (ties by item position, then
// rater), with its item's consensus.
func (b *builder) labelErrors() {
	rep := b.rep
	if len(b.fit.LabelErrors) == 0 {
		return
	}
	flagged := make(map[[2]string]bool, len(rep.Flags))
	for _, f := range rep.Flags {
		flagged[[2]string{f.Item, f.Rater}] = true
	}
	rep.LabelErrors = make([]LabelError, len(b.fit.LabelErrors))
	for i, le := range b.fit.LabelErrors {
		it := &rep.Items[b.byID[le.Item]]
		rep.LabelErrors[i] = LabelError{Item: le.Item, Rater: le.Rater, Label: le.Label, PError: Number(le.PError),
			Consensus: it.Consensus, ConsensusProb: it.Prob, Position: it.Position, Flagged: flagged[[2]string{le.Item, le.Rater}]}
	}
	sort.SliceStable(rep.LabelErrors, func(i, j int) bool {
		a, c := &rep.LabelErrors[i], &rep.LabelErrors[j]
		if a.PError != c.PError {
			return a.PError > c.PError
		}
		if a.Position != c.Position {
			return a.Position < c.Position
		}
		return a.Rater < c.Rater
	})
}

// lowest sets Report.Lowest: the LowestLabels labels with the lowest
// probability under the model, flagged or not, from the raters' predictive
// distributions of the items (ordinal: rater_grade_probs; classification:
// rater_class_probs) or, for the robust model, the probability that the
// label is right (1 - p_error). The order is by probability, then item
// position, then rater. Fits without per-label probabilities (bounded
// ratings) have no list.
func (b *builder) lowest() {
	rep := b.rep
	flagged := make(map[[2]string]bool, len(rep.Flags))
	for _, f := range rep.Flags {
		flagged[[2]string{f.Item, f.Rater}] = true
	}
	less := func(a, c *Flag) bool {
		if a.Prob != c.Prob {
			return a.Prob < c.Prob
		}
		if a.Position != c.Position {
			return a.Position < c.Position
		}
		return a.Rater < c.Rater
	}
	var low []Flag
	add := func(f Flag) {
		if len(low) == LowestLabels && !less(&f, &low[len(low)-1]) {
			return
		}
		// Insert in order, dropping the last when full.
		j := sort.Search(len(low), func(j int) bool { return less(&f, &low[j]) })
		if len(low) < LowestLabels {
			low = append(low, Flag{})
		}
		copy(low[j+1:], low[j:])
		low[j] = f
	}
	if len(b.fit.LabelErrors) > 0 {
		for _, le := range b.fit.LabelErrors {
			i, ok := b.byID[le.Item]
			if !ok || !finite(le.PError) {
				continue
			}
			it := &rep.Items[i]
			p := math.Round((1-le.PError)*1e6) / 1e6 // the fit rounds p_error to 6 decimals
			exp := le.Label
			if le.PError > 0.5 && b.k == 2 {
				exp = b.fit.Levels[1-max(b.levelIndex(le.Label), 0)]
			}
			add(Flag{Item: le.Item, Rater: le.Rater, Label: le.Label, Prob: Number(p), Expected: exp,
				Consensus: it.Consensus, Position: it.Position, Flagged: flagged[[2]string{le.Item, le.Rater}] || p < b.fit.Model.FlagThreshold})
		}
		rep.Lowest = low
		return
	}
	for i := range b.fit.Items {
		fi := &b.fit.Items[i]
		dist := fi.RaterGradeProbs
		if len(dist) == 0 {
			dist = fi.RaterClassProbs
		}
		if len(dist) == 0 {
			continue
		}
		it := &rep.Items[b.byID[fi.ID]]
		for r, v := range it.Labels {
			probs := dist[r]
			c := b.levelIndex(v)
			if c < 0 || c >= len(probs) || !finite(probs[c]) {
				continue
			}
			add(Flag{Item: fi.ID, Rater: r, Label: v, Prob: Number(probs[c]), Expected: b.fit.Levels[floats.MaxIdx(probs)],
				Consensus: it.Consensus, Position: it.Position, Flagged: flagged[[2]string{fi.ID, r}] || probs[c] < b.fit.Model.FlagThreshold})
		}
	}
	rep.Lowest = low
}

// paramGroup returns the group of a parameter name: the part before "[".
func paramGroup(name string) string {
	if g, _, ok := strings.Cut(name, "["); ok && g != "" {
		return g
	}
	return name
}

func (b *builder) diagnostics() {
	d := b.fit.Diagnostics
	m := b.fit.Model
	out := &b.rep.Diagnostics
	*out = Diagnostics{
		Converged: d.Converged, Verdict: d.Verdict,
		LimitRhat: m.MaxRhat, LimitESS: m.MinESS,
		MaxRhat: Number(d.MaxRhat), MinESSBulk: Number(d.MinESSBulk), MinESSTail: Number(d.MinESSTail),
		WorstRhat: d.WorstRhat, WorstESS: d.WorstESS,
		Seconds: Number(d.Seconds), SamplingSeconds: Number(d.SamplingSeconds), SweepsPerSecond: Number(d.SweepsPerSecond),
		ESSPerCPUSecond: Number(d.ESSPerCPUSecond),
		Draws:           d.Draws, Autocorrelation: d.Autocorrelation, Moves: d.Moves,
		Notes:      append([]string(nil), d.Notes...),
		Groups:     []ParamGroup{},
		Parameters: make([]Param, len(d.Parameters)),
	}
	switch {
	case d.LogEvidence != nil:
		out.LogEvidence = numberPtr(*d.LogEvidence)
	case d.Engine != nil && d.Engine.LogEvidence != nil:
		out.LogEvidence = numberPtr(*d.Engine.LogEvidence)
	}
	if len(d.Evidence) > 0 {
		out.Evidence = make(map[string]Number, len(d.Evidence))
		for k, v := range d.Evidence {
			out.Evidence[k] = Number(v)
		}
	}
	out.Selected = d.Selected
	if out.Verdict == "" {
		if d.Converged {
			out.Verdict = "converged"
		} else {
			out.Verdict = "NOT converged"
		}
	}
	limR, limE := m.MaxRhat, m.MinESS
	if limR == 0 {
		limR = multirater.DefaultMaxRhat
		out.LimitRhat = limR
	}
	if limE == 0 {
		limE = multirater.DefaultMinESS
		out.LimitESS = limE
	}
	groups := map[string]int{}
	for i, p := range d.Parameters {
		g := paramGroup(p.Name)
		over := !(p.Rhat < limR)
		under := !(p.ESSBulk >= limE)
		out.Parameters[i] = Param{Name: p.Name, Group: g, Mean: Number(p.Mean), SD: Number(p.SD), Rhat: Number(p.Rhat), ESSBulk: Number(p.ESSBulk), ESSTail: Number(p.ESSTail), Flagged: over || under}
		gi, ok := groups[g]
		if !ok {
			gi = len(out.Groups)
			groups[g] = gi
			out.Groups = append(out.Groups, ParamGroup{Group: g, MaxRhat: Number(math.Inf(-1)), MinESSBulk: Number(math.Inf(1)), MinESSTail: Number(math.Inf(1))})
		}
		pg := &out.Groups[gi]
		pg.Parameters++
		pg.MaxRhat = Number(math.Max(float64(pg.MaxRhat), p.Rhat))
		pg.MinESSBulk = Number(math.Min(float64(pg.MinESSBulk), p.ESSBulk))
		pg.MinESSTail = Number(math.Min(float64(pg.MinESSTail), p.ESSTail))
		if over {
			pg.OverRhat++
		}
		if under {
			pg.UnderESS++
		}
	}
}

// agreement reshapes the raters report: the coefficients, the pairwise
// kappas (and each rater's mean kappa), the agreement tables and the
// baseline aggregators beside the model.
func (b *builder) agreement(ag *raters.Report) {
	a := &Agreement{
		Level: ag.Level, Items: ag.Items, Raters: ag.Raters, Labels: ag.Labels,
		Bootstrap: ag.Bootstrap, Seed: ag.Seed, ConfLevel: ag.ConfLevel, CI: ag.CI,
		Coefficients: coefficients(ag),
		Notes:        append([]string(nil), ag.Notes...),
		Aggregators:  []Aggregator{},
		// The agreement tables, items lowest agreement first.
		AgreementScore: ag.AgreementScore,
		ItemAgreement:  append([]raters.ItemAgreement(nil), ag.ItemAgreement...),
		RaterAgreement: ag.RaterAgreement,
	}
	if ag.NullValue != nil {
		a.Null = optNumber(float64(*ag.NullValue))
	}
	raters.SortItemAgreement(a.ItemAgreement)
	if len(ag.CohenKappa) > 0 {
		a.Kappa, a.Pairs = b.kappas(ag)
	}
	for _, name := range aggregatorNames(ag) {
		a.Aggregators = append(a.Aggregators, b.aggregator(name, ag.Aggregators[name]))
	}
	b.rep.Agreement = a
}

// kappas returns the matrix of pairwise Cohen's kappas (unweighted for
// nominal data, quadratic otherwise; the report's raters first) and every
// pair under each weighting, and sets each rater's mean kappa.
func (b *builder) kappas(ag *raters.Report) (*KappaMatrix, []KappaPair) {
	rep := b.rep
	weights := "unweighted"
	if ag.Level != raters.Nominal.String() {
		weights = "quadratic"
	}
	var names []string
	seen := map[string]int{}
	add := func(id string) {
		if _, ok := seen[id]; !ok {
			seen[id] = len(names)
			names = append(names, id)
		}
	}
	for _, r := range rep.Raters {
		add(r.ID)
	}
	for _, p := range ag.CohenKappa {
		add(p.A)
		add(p.B)
	}
	km := &KappaMatrix{Weights: weights, Raters: names, Values: make([][]Number, len(names)), N: make([][]int, len(names))}
	for i := range names {
		km.Values[i] = make([]Number, len(names))
		km.N[i] = make([]int, len(names))
		for j := range km.Values[i] {
			km.Values[i][j] = nan
		}
	}
	var pairs []KappaPair
	for _, p := range ag.CohenKappa {
		kp := KappaPair{A: p.A, B: p.B, N: p.N, Kappa: map[string]Coefficient{}}
		for _, w := range []struct {
			name string
			e    *raters.Estimate
		}{{"unweighted", p.Unweighted}, {"linear", p.Linear}, {"quadratic", p.Quadratic}} {
			if w.e != nil {
				kp.Kappa[w.name] = coef("cohen_kappa", w.name, "Cohen's kappa ("+w.name+")", *w.e)
			}
		}
		pairs = append(pairs, kp)
		i, j := seen[p.A], seen[p.B]
		km.N[i][j], km.N[j][i] = p.N, p.N
		if c, ok := kp.Kappa[weights]; ok {
			km.Values[i][j], km.Values[j][i] = c.Value, c.Value
		}
	}
	for l := range rep.Raters {
		i := seen[rep.Raters[l].ID]
		var s float64
		n := 0
		for j, v := range km.Values[i] {
			if j != i && v.Valid() {
				s += float64(v)
				n++
			}
		}
		if n > 0 {
			rep.Raters[l].MeanKappa = Number(s / float64(n))
		}
	}
	return km, pairs
}

// aggregatorNames lists the aggregators of the agreement analysis in
// raters.AggregatorNames order, any others after them by name.
func aggregatorNames(ag *raters.Report) []string {
	order := raters.AggregatorNames()
	var names, extra []string
	for _, n := range order {
		if ag.Aggregators[n] != nil {
			names = append(names, n)
		}
	}
	for n := range ag.Aggregators {
		if indexOf(order, n) < 0 && ag.Aggregators[n] != nil {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}

// aggregator summarises the baseline aggregator name beside the model (how
// often its class is the model's consensus, the correlation of its score
// with the model's), and records its answer in each item's and its
// quality in each rater's Baselines.
func (b *builder) aggregator(name string, c *raters.Consensus) Aggregator {
	rep := b.rep
	out := Aggregator{Name: name, Label: aggregatorLabel(name), Ties: c.Ties, AgreementWithModel: nan, ScoreCorrelation: nan}
	if c.Fit != nil {
		conv := c.Fit.Converged
		out.Converged = &conv
		out.Iterations = c.Fit.Iterations
	}
	hits := 0
	var xs, ys []float64
	for _, ic := range c.Items {
		i, ok := b.byID[ic.ID]
		if !ok {
			continue
		}
		it := &rep.Items[i]
		put(&it.Baselines, name, Baseline{Label: ic.Label, Score: Number(ic.Score), Tie: ic.Tie})
		if ic.Label != "" && it.Consensus != "" {
			out.Items++
			if ic.Label == it.Consensus {
				hits++
			}
		}
		// The model's consensus: the value on the rating scale
		// (values), else the latent score.
		cons := it.Score
		if it.Value != nil {
			cons = it.Value
		}
		if cons != nil && cons.Mean.Valid() && !math.IsNaN(ic.Score) && !math.IsInf(ic.Score, 0) {
			xs = append(xs, ic.Score)
			ys = append(ys, float64(cons.Mean))
		}
	}
	out.AgreementWithModel = ratio(hits, out.Items)
	if len(xs) >= 3 {
		if r := stat.Correlation(xs, ys, nil); !math.IsNaN(r) {
			out.ScoreCorrelation = Number(r)
		}
	}
	for _, q := range c.Raters {
		l, ok := b.raterIx[q.ID]
		if !ok {
			continue
		}
		rb := RaterBaseline{Accuracy: Number(q.Accuracy), MAE: Number(q.MAE)}
		if q.SkillKind != "" {
			s := Number(q.Skill)
			rb.Skill, rb.SkillKind = &s, q.SkillKind
		}
		put(&rep.Raters[l].Baselines, name, rb)
	}
	return out
}

func aggregatorLabel(name string) string {
	switch name {
	case "majority":
		return "majority vote"
	case "dawid_skene":
		return "Dawid-Skene"
	case "one_coin":
		return "one-coin Dawid-Skene"
	case "wawa":
		return "Wawa (weighted majority vote)"
	case "glad":
		return "GLAD"
	case "mace":
		return "MACE"
	case "zero_based_skill":
		return "Zero-Based Skill"
	case "kos":
		return "KOS"
	case "mmsr":
		return "M-MSR"
	case "gold_majority":
		return "gold majority vote"
	case "prob_majority":
		return "probability-weighted majority vote"
	case "mean":
		return "mean rating"
	case "median":
		return "median rating"
	}
	return name
}

// optNumber is v, or nil when it is NaN or infinite.
func optNumber(v float64) *Number {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	n := Number(v)
	return &n
}

func coef(key, variant, label string, e raters.Estimate) Coefficient {
	return Coefficient{Key: key, Variant: variant, Label: label, Value: Number(e.Value), SE: Number(e.SE), CILow: Number(e.CILow), CIHigh: Number(e.CIHigh), CIMethod: e.CIMethod,
		Z: optNumber(e.Z), P: optNumber(e.P), ZNull: optNumber(e.ZNull), PNull: optNumber(e.PNull)}
}

// coefLabels are the coefficients' labels in the report, by their keys
// (raters.NamedEstimate.Key).
var coefLabels = map[string]string{
	"fleiss_kappa": "Fleiss' kappa", "randolph_kappa": "Randolph's free-marginal kappa", "conger_kappa": "Conger's kappa",
	"scott_pi": "Scott's pi", "gwet_ac1": "Gwet's AC1", "gwet_ac2": "Gwet's AC2", "brennan_prediger": "Brennan-Prediger",
	"percent_agreement": "percent agreement", "krippendorff_alpha": "Krippendorff's alpha",
}

// coefficients lists the coefficients of a raters report in a fixed order.
func coefficients(ag *raters.Report) []Coefficient {
	out := []Coefficient{}
	for _, m := range []string{"nominal", "ordinal", "interval", "ratio"} {
		if e, ok := ag.KrippendorffAlpha[m]; ok {
			out = append(out, coef("krippendorff_alpha", m, "Krippendorff's alpha ("+m+" metric)", e))
		}
	}
	for _, c := range ag.Coefficients() {
		if c.Estimate != nil {
			out = append(out, coef(c.Key, "", coefLabels[c.Key], *c.Estimate))
		}
	}
	if _, inSet := ag.Weighted[ag.GwetAC2Weights]; ag.GwetAC2 != nil && !inSet {
		v := ag.GwetAC2Weights + " weights"
		out = append(out, coef("gwet_ac2", v, coefLabels["gwet_ac2"]+" ("+v+")", *ag.GwetAC2))
	}
	for _, w := range sortedKeys(ag.Weighted, []string{"linear", "quadratic", "ordinal", "ratio"}) {
		s := ag.Weighted[w]
		v := w + " weights"
		for _, c := range s.Coefficients() {
			label := coefLabels[c.Key] + " (" + v + ")"
			if c.Key == "krippendorff_alpha" {
				// Not the metric alpha above: irrCAC's weighted form (its
				// ordinal weights ignore the label frequencies).
				label = coefLabels[c.Key] + " (irrCAC " + v + ", not the " + w + " metric)"
				if w == "linear" || w == "quadratic" {
					label = coefLabels[c.Key] + " (irrCAC " + v + ")"
				}
			}
			out = append(out, coef(c.Key, v, label, *c.Estimate))
		}
	}
	if ic := ag.ICC; ic != nil {
		for _, c := range []struct {
			v, label string
			e        raters.Estimate
		}{
			{"ICC1", "ICC(1,1)", ic.ICC1}, {"ICC2", "ICC(2,1)", ic.ICC2}, {"ICC3", "ICC(3,1)", ic.ICC3},
			{"ICC1k", "ICC(1,k)", ic.ICC1k}, {"ICC2k", "ICC(2,k)", ic.ICC2k}, {"ICC3k", "ICC(3,k)", ic.ICC3k},
		} {
			out = append(out, coef("icc", c.v, "intraclass correlation "+c.label, c.e))
		}
	}
	for _, ck := range ag.FleissCategories {
		out = append(out, coef("fleiss_kappa_category", ck.Category, "Fleiss' kappa of category "+ck.Category+" against the rest", ck.Estimate))
	}
	return out
}

// sortedKeys returns the keys of m: those in first, in that order, then the
// others sorted.
func sortedKeys[V any](m map[string]V, first []string) []string {
	var out, rest []string
	for _, k := range first {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	for k := range m {
		if indexOf(first, k) < 0 {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func (b *builder) rocs() {
	for _, c := range rocCurves(b.rep) {
		b.rep.ROC = append(b.rep.ROC, c.ROC)
	}
}

func (b *builder) summary() {
	rep := b.rep
	s := &rep.Summary
	s.Items = len(rep.Items)
	s.Raters = len(rep.Raters)
	for _, r := range rep.Raters {
		s.Labels += r.NLabels
	}
	if s.Labels == 0 {
		s.Labels = b.labels
	}
	hits, n, goldHits := 0, 0, 0
	for i := range rep.Items {
		it := &rep.Items[i]
		if it.NLabels > 0 {
			s.RatedItems++
		}
		if it.Consensus == "" {
			continue
		}
		for _, v := range it.Labels {
			n++
			if v == it.Consensus {
				hits++
			}
		}
		if it.Gold != "" {
			s.GoldItems++
			if it.Gold == it.Consensus {
				goldHits++
			}
		}
	}
	s.LabelsPer = ratio(s.Labels, s.RatedItems)
	s.ConsensusAgreement = ratio(hits, n)
	s.GoldAccuracy = ratio(goldHits, s.GoldItems)
	s.Converged = rep.Diagnostics.Converged
	s.Verdict = rep.Diagnostics.Verdict
	s.Flags = len(rep.Flags)
	s.FlagShare = ratio(s.Flags, s.Labels)
	if len(rep.Items) > 0 {
		s.TopItem = rep.Items[0].ID
	}
	if len(rep.Raters) > 1 {
		// The reference rater's precision is fixed: it says nothing.
		s.MostPrecise, s.LeastPrecise = extremeRaters(rep.Raters, func(r *Rater) (Number, bool) {
			return r.Precision.Mean, !r.Reference
		})
		s.MostSevere, s.MostLenient = extremeRaters(rep.Raters, func(r *Rater) (Number, bool) {
			if r.Severity == nil {
				return nan, false
			}
			return r.Severity.Mean, true
		})
	}
	b.robustSummary()
	s.MajorityAgreement = nan
	if a := rep.Agreement; a != nil {
		for i, c := range a.Coefficients {
			if c.Key == "krippendorff_alpha" && c.Variant == a.Level {
				s.Alpha = &a.Coefficients[i]
			}
		}
		for _, g := range a.Aggregators {
			if g.Name == "majority" {
				s.MajorityAgreement = g.AgreementWithModel
			}
		}
	}
}

// extremeRaters returns the ids of the raters with the highest and the
// lowest value of key (the first of equals), among those whose key is a
// number and applies (ok); "", "" when there are none.
func extremeRaters(rs []Rater, key func(*Rater) (v Number, ok bool)) (hi, lo string) {
	h, l := -1, -1
	var vh, vl Number
	for i := range rs {
		v, ok := key(&rs[i])
		if !ok || !v.Valid() {
			continue
		}
		if h < 0 || v > vh {
			h, vh = i, v
		}
		if l < 0 || v < vl {
			l, vl = i, v
		}
	}
	if h < 0 {
		return "", ""
	}
	return rs[h].ID, rs[l].ID
}

// robustSummary sets the summary's robust-model fields: how the error
// rates were set, the labels more probably wrong than right, the raters
// with the highest and lowest error rate, the log evidence and the model
// selection.
func (b *builder) robustSummary() {
	rep := b.rep
	s := &rep.Summary
	if rep.Diagnostics.Selected != "" || len(rep.LabelErrors) > 0 {
		s.LogEvidence = rep.Diagnostics.LogEvidence
		s.Selected = rep.Diagnostics.Selected
	}
	if len(rep.LabelErrors) > 0 {
		n := 0
		for _, le := range rep.LabelErrors {
			if le.PError > 0.5 {
				n++
			}
		}
		s.LikelyErrors = &n
	}
	learnt, has, zero := false, false, false
	for _, r := range rep.Raters {
		if e := r.Epsilon; e != nil {
			has = true
			learnt = learnt || e.Learnt
		}
	}
	errorRate := func(r *Rater) (Number, bool) {
		if r.Epsilon == nil {
			return nan, false
		}
		return r.Epsilon.Value, true
	}
	hi, lo := extremeRaters(rep.Raters, errorRate)
	for i := range rep.Raters {
		if rep.Raters[i].ID == hi {
			zero = rep.Raters[i].Epsilon.Value == 0
			break
		}
	}
	switch {
	case !has:
		return
	case learnt:
		s.ErrorRates = "learnt"
	case rep.Diagnostics.Selected == "plain" || zero:
		s.ErrorRates = "none"
	default:
		s.ErrorRates = "fixed"
	}
	if learnt && len(rep.Raters) > 1 && hi != "" {
		s.MostErrorProne, s.LeastErrorProne = hi, lo
	}
}

// confusionRater copies the confusion model's per-rater results: the
// confusion matrix with intervals, the accuracy, the most confused pair of
// classes and the spam score.
func confusionRater(r *Rater, fr *multirater.RaterResult) {
	if len(fr.ConfusionProbs) > 0 {
		r.ConfusionProbs = make([][]Interval, len(fr.ConfusionProbs))
		for k, row := range fr.ConfusionProbs {
			r.ConfusionProbs[k] = make([]Interval, len(row))
			for j, e := range row {
				r.ConfusionProbs[k][j] = Interval{Mean: Number(e.Mean), Q025: Number(e.Q025), Q975: Number(e.Q975)}
			}
		}
	}
	if a := fr.Accuracy; a != nil {
		r.Accuracy = &Interval{Mean: Number(a.Mean), Q025: Number(a.Q025), Q975: Number(a.Q975)}
	}
	if m := fr.MostConfused; m != nil {
		r.MostConfused = &ClassConfusion{True: m.True, Label: m.Label, Prob: Number(m.Prob)}
	}
	if fr.SpamScore != nil {
		r.SpamScore = numberPtr(*fr.SpamScore)
	}
	r.Spammer = fr.Spammer
	r.Community = fr.Community
}

// numberPtr returns a pointer to v as a Number.
func numberPtr(v float64) *Number {
	n := Number(v)
	return &n
}

func estimate(e multirater.Estimate) *Estimate {
	return &Estimate{Mean: Number(e.Mean), SD: Number(e.SD), Q025: Number(e.Q025), Q50: Number(e.Q50), Q975: Number(e.Q975)}
}

func ratio(a, b int) Number {
	if b == 0 {
		return nan
	}
	return Number(float64(a) / float64(b))
}

// entropyBits is -sum p log2 p.
func entropyBits(p []float64) float64 {
	var h float64
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log2(v)
		}
	}
	return math.Max(h, 0)
}

// put sets (*m)[k] = v, making the map first when it is nil.
func put[V any](m *map[string]V, k string, v V) {
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[k] = v
}
