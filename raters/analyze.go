package raters

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// analyzer holds one Analyze run: its input, the report being filled and
// what its steps share (the bootstrap's slots, Gwet's families by
// weighting, the pairs). AnalyzeContext runs its steps in order.
type analyzer struct {
	ctx         context.Context
	r           *Ratings
	o           Options
	t           *table
	rep         *Report
	level       float64
	categorical bool
	nonNeg      bool
	coefs       bool
	b           *booter
	// Gwet's family under one weighting shares its observed agreement
	// and class proportions: one bootstrap slot per weighting computes
	// them once per replicate for every member.
	famWeights []*weightMat
	fams       map[*weightMat][]famMember
	metrics    []Metric
	alphas     []Estimate
	weights    []Weights
	sets       []*WeightedSet
	cws        []Weights
	pairs      []PairKappa
}

type famMember struct {
	kind chanceKind
	dst  *Estimate
}

// AnalyzeContext is Analyze that stops early when ctx is done (a client
// that went away): the bootstrap checks ctx before every replicate and the
// Dawid-Skene, GLAD and MACE EM before every iteration. It then returns ctx.Err() (or its
// cause) and no report.
func AnalyzeContext(ctx context.Context, r *Ratings, o Options) (*Report, error) {
	a, err := newAnalyzer(ctx, r, o)
	if err != nil {
		return nil, err
	}
	steps := []func() error{
		a.alphaStep, a.familyStep, a.weightedStep, a.cohenStep, a.iccStep,
		a.bootstrapStep, a.aggregatorStep, a.profileStep, a.tableStep, a.finishStep,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return a.rep, nil
}

// newAnalyzer checks the input and options (panicking on caller bugs) and
// starts the report.
func newAnalyzer(ctx context.Context, r *Ratings, o Options) (*analyzer, error) {
	r.check()
	if r.Raters < 2 {
		return nil, errors.New("raters: agreement needs at least 2 raters")
	}
	categorical := o.Level == Nominal || o.Level == Ordinal
	if categorical && r.K == 0 {
		panic("raters: " + o.Level.String() + " level needs categorical ratings")
	}
	o.check()
	if o.WeightMatrix != nil {
		if r.K == 0 {
			panic("raters: Options.WeightMatrix needs categorical ratings")
		}
		checkWeightMatrix(o.WeightMatrix, r.K)
	}
	t := prepare(r, o.ObservedCategoriesOnly)
	if t.n == 0 {
		return nil, errors.New("raters: no ratings")
	}
	if err := checkPopulation(o.Population, float64(t.n), "items"); err != nil {
		return nil, err
	}
	level := CoefOptions{ConfLevel: o.ConfLevel}.level()
	rep := &Report{
		Level: o.Level.String(), Items: t.n, Raters: r.Raters, Labels: r.Len(),
		Bootstrap: o.bootstrap(), Seed: o.Seed, ConfLevel: level, Only: o.Only,
		CI: o.CI.String(), Population: o.Population, Aggregators: map[string]*Consensus{},
	}
	if o.Null != 0 {
		v := num(o.Null)
		rep.NullValue = &v
	}
	if !o.want(OnlyCoefficients) {
		rep.Bootstrap = 0
	}
	for k := 0; k < r.K; k++ {
		rep.Categories = append(rep.Categories, name(o.CategoryNames, k))
	}
	return &analyzer{
		ctx: ctx, r: r, o: o, t: t, rep: rep, level: level, categorical: categorical,
		nonNeg: t.q > 0 && t.vals[0] >= 0, coefs: o.want(OnlyCoefficients),
		b: &booter{t: t}, fams: map[*weightMat][]famMember{},
	}, nil
}

// check panics on options that are caller bugs.
func (o Options) check() {
	if o.Ties != TieFrequent && o.Ties != TieFirst {
		panic(fmt.Sprintf("raters: unknown TieRule %d", o.Ties))
	}
	if len(o.Gold) != 0 && o.DSGold && !hasGold(o.Gold) {
		panic("raters: Options.DSGold without gold classes")
	}
	if o.CI != CIT && o.CI != CINormal {
		panic(fmt.Sprintf("raters: unknown CIKind %d", o.CI))
	}
	if math.IsNaN(o.Null) || math.IsInf(o.Null, 0) {
		panic("raters: Options.Null must be finite")
	}
	if o.Population < 0 {
		panic(fmt.Sprintf("raters: negative Options.Population %d", o.Population))
	}
	o.RandomStart.check(o.Seed)
	for _, w := range o.Weights {
		if w < Unweighted || w > BipolarWeights {
			panic(fmt.Sprintf("raters: unknown Weights %d", w))
		}
	}
	o.want("") // checks o.Only
}

// PopulationError is the error of a population (Options.Population,
// TableOptions.Population) smaller than the sample it holds.
type PopulationError struct {
	// Population is the population size given, N the subjects of the
	// sample, What names them ("items", ...).
	Population int
	N          float64
	What       string
}

func (e *PopulationError) Error() string {
	return fmt.Sprintf("raters: population %d is smaller than the sample's %v %s; it must be at least that (0: infinite)", e.Population, e.N, e.What)
}

// checkPopulation says whether a population of pop subjects (0: infinite)
// can hold the n subjects of the sample, what naming them.
func checkPopulation(pop int, n float64, what string) error {
	if pop > 0 && float64(pop) < n {
		return &PopulationError{Population: pop, N: n, What: what}
	}
	return nil
}

// boot registers an estimate with the bootstrap.
func (a *analyzer) boot(dst *Estimate, f func(mult []float64) float64) {
	a.b.slots = append(a.b.slots, bootSlot{dsts: []*Estimate{dst}, f: func(mult, out []float64) { out[0] = f(mult) }})
}

// wm returns the weights on the table's categories.
func (a *analyzer) wm(w Weights) *weightMat {
	m, err := a.weightMat(w)
	if err != nil {
		panic(err) // only dense weights fail, on huge tables
	}
	return m
}

// weightMat returns the weights w on the table's categories; customWeights
// are Options.WeightMatrix's rows and columns of those categories.
func (a *analyzer) weightMat(w Weights) (*weightMat, error) {
	if w != customWeights {
		return a.t.weights(w)
	}
	m := make([][]float64, a.t.q)
	for k, ck := range a.t.cats {
		m[k] = make([]float64, a.t.q)
		for l, cl := range a.t.cats {
			m[k][l] = a.o.WeightMatrix[ck][cl]
		}
	}
	return newCustomWeightMat(m), nil
}

// famTo computes a member of Gwet's family into dst and registers it with
// its weighting's bootstrap slot.
func (a *analyzer) famTo(dst *Estimate, kind chanceKind, w *weightMat) {
	*dst = a.t.chance(kind, w, nil, true, a.level)
	if _, ok := a.fams[w]; !ok {
		a.famWeights = append(a.famWeights, w)
	}
	a.fams[w] = append(a.fams[w], famMember{kind, dst})
}

func (a *analyzer) fam(kind chanceKind, w *weightMat) *Estimate {
	e := new(Estimate)
	a.famTo(e, kind, w)
	return e
}

// alphaStep computes Krippendorff's alpha under the level's metrics.
func (a *analyzer) alphaStep() error {
	if !a.coefs {
		return nil
	}
	switch a.o.Level {
	case Nominal:
		a.metrics = []Metric{NominalMetric}
	case Ordinal:
		a.metrics = []Metric{NominalMetric, OrdinalMetric, IntervalMetric, RatioMetric}
	default:
		a.metrics = []Metric{IntervalMetric, RatioMetric}
	}
	a.rep.KrippendorffAlpha = map[string]Estimate{}
	a.alphas = make([]Estimate, len(a.metrics))
	for x, m := range a.metrics {
		if m == RatioMetric && !a.nonNeg {
			a.rep.Notes = append(a.rep.Notes, "ratio alpha left out: negative values")
			continue
		}
		e, err := a.t.alphaEstimate(m, a.level)
		if err != nil {
			return err
		}
		a.alphas[x] = e
		t := a.t
		a.boot(&a.alphas[x], func(mult []float64) float64 { v, _, _ := t.alpha(m, mult); return v })
	}
	return nil
}

// familyStep computes Gwet's family unweighted, Scott's pi and Fleiss'
// per-category kappas (categorical data).
func (a *analyzer) familyStep() error {
	if !a.coefs || !a.categorical {
		return nil
	}
	t, rep, level := a.t, a.rep, a.level
	unweighted := a.wm(Unweighted)
	rep.FleissKappa = a.fam(kindFleiss, unweighted)
	rep.RandolphKappa = a.fam(kindBP, unweighted)
	rep.GwetAC1 = a.fam(kindGwet, unweighted)
	rep.BrennanPrediger = a.fam(kindBP, unweighted)
	rep.PercentAgreement = a.fam(kindPA, unweighted)
	rep.CongerKappa = a.fam(kindConger, unweighted)
	if t.r == 2 {
		e := t.scott2(unweighted, nil, true, level)
		a.boot(&e, func(mult []float64) float64 { return t.scott2(unweighted, mult, false, level).Value })
		rep.ScottPi = &e
	} else {
		rep.ScottPi = a.fam(kindFleiss, unweighted)
	}
	if se0, ok := t.fleissNullSE(); ok {
		v := num(se0)
		rep.FleissKappaSENull = &v
		rep.FleissKappa.SENull = se0
	}
	for c := 0; c < t.q; c++ {
		d := t.dichotomize(c)
		ck := CategoryKappa{Category: catName(a.r, a.o, t, c), Estimate: d.chance(kindFleiss, unweighted2(), nil, true, level)}
		if se0, ok := d.fleissNullSE(); ok {
			ck.SENull = se0 // = sqrt(2/(N m (m-1))), Fleiss et al. (1979)
		}
		rep.FleissCategories = append(rep.FleissCategories, ck)
	}
	for c := range rep.FleissCategories {
		d := t.dichotomize(c)
		a.boot(&rep.FleissCategories[c].Estimate, func(mult []float64) float64 {
			return d.chance(kindFleiss, unweighted2(), mult, false, level).Value
		})
	}
	return nil
}

// DefaultWeights returns the weightings of the weighted coefficients of a
// level (Options.Weights nil): linear, quadratic, ordinal and, with
// nonNegative values, ratio for ordinal data; linear and quadratic for
// continuous data; none for nominal data.
func DefaultWeights(l Level, nonNegative bool) []Weights {
	switch l {
	case Ordinal:
		ws := []Weights{LinearWeights, QuadraticWeights, OrdinalWeights}
		if nonNegative {
			ws = append(ws, RatioWeights)
		}
		return ws
	case Interval, Ratio:
		return []Weights{LinearWeights, QuadraticWeights}
	}
	return nil
}

// weightedStep computes the weighted coefficients under each weighting.
func (a *analyzer) weightedStep() error {
	if !a.coefs {
		return nil
	}
	a.weights = a.o.Weights
	if a.weights == nil {
		a.weights = DefaultWeights(a.o.Level, a.nonNeg)
	}
	if a.o.WeightMatrix != nil {
		a.weights = append(a.weights[:len(a.weights):len(a.weights)], customWeights)
	}
	a.sets = make([]*WeightedSet, len(a.weights))
	if a.t.q < 2 {
		return nil
	}
	t := a.t
	for x, w := range a.weights {
		m, err := a.weightMat(w)
		if err != nil {
			a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("%s weights left out: %v", w, err))
			continue
		}
		s := new(WeightedSet)
		a.sets[x] = s
		a.famTo(&s.PercentAgreement, kindPA, m)
		a.famTo(&s.FleissKappa, kindFleiss, m)
		a.famTo(&s.CongerKappa, kindConger, m)
		a.famTo(&s.GwetAC2, kindGwet, m)
		a.famTo(&s.BrennanPrediger, kindBP, m)
		s.KrippendorffAlpha = t.alphaWeightsEstimate(m, a.level)
		a.boot(&s.KrippendorffAlpha, func(mult []float64) float64 { return t.alphaWeighted(m, mult) })
	}
	return nil
}

// cohenWeights are the weightings of Cohen's kappa per pair.
func cohenWeights(l Level) []Weights {
	switch l {
	case Nominal:
		return []Weights{Unweighted}
	case Ordinal:
		return []Weights{Unweighted, LinearWeights, QuadraticWeights}
	}
	return []Weights{LinearWeights, QuadraticWeights}
}

// cohenStep computes Cohen's kappa for the pairs that share enough items
// (PairOptions).
func (a *analyzer) cohenStep() error {
	a.cws = cohenWeights(a.o.Level)
	if !a.coefs && !a.o.want(OnlyRaters) {
		return nil
	}
	t, rep, o, r := a.t, a.rep, a.o, a.r
	rated, search := t.ratedPairs(o.Pairs)
	if note := search.note(r.Raters); note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	rep.PairSelection = &PairSelection{MinShared: search.minShared, Max: search.max, All: o.Pairs.All, Found: search.found, Reported: len(rated), RatersSearched: search.raters}
	var err error
	if a.pairs, err = t.pairwise(rated, a.cws, true, a.level); err != nil {
		return err
	}
	if !a.coefs {
		return nil
	}
	bootPairs := a.pairBootstrap(rated)
	rep.CohenKappa = make([]CohenPair, len(a.pairs))
	for x, p := range a.pairs {
		cp := &rep.CohenKappa[x]
		cp.A, cp.B, cp.N = name(o.RaterNames, p.A), name(o.RaterNames, p.B), p.N
		var co []coCell // the pair's shared items, for the bootstrap
		for _, w := range a.cws {
			e := p.Kappa[w]
			ep := &e
			if bootPairs {
				if co == nil {
					co = t.coCells(p.A, p.B)
				}
				a.bootPair(ep, co, a.wm(w))
			}
			switch w {
			case Unweighted:
				cp.Unweighted = ep
			case LinearWeights:
				cp.Linear = ep
			case QuadraticWeights:
				cp.Quadratic = ep
			}
		}
	}
	return nil
}

// pairBootstrap says whether the pairs' kappas get bootstrap intervals:
// their bootstrap costs their shared items per replicate, so it is kept
// up to MaxMatrixRaters raters and maxPairBootCells shared items, with
// analytic intervals above (and a note).
func (a *analyzer) pairBootstrap(rated []ratedPair) bool {
	boot := a.r.Raters <= MaxMatrixRaters
	cells := 0
	for _, p := range rated {
		cells += p.n
	}
	if a.o.bootstrap() == 0 || len(a.pairs) == 0 {
		return boot
	}
	switch {
	case !boot:
		a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("the pairwise Cohen's kappas carry analytic (t) intervals, not bootstrap ones: %d raters (bootstrap up to %d)", a.r.Raters, MaxMatrixRaters))
	case cells > maxPairBootCells:
		boot = false
		a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("the pairwise Cohen's kappas carry analytic (t) intervals, not bootstrap ones: the pairs share %d items in all (bootstrap up to %d)", cells, maxPairBootCells))
	}
	return boot
}

// bootPair registers a pair's kappa under weights m with the bootstrap.
func (a *analyzer) bootPair(ep *Estimate, cs []coCell, m *weightMat) {
	t, level := a.t, a.level
	each := func(f func(i int, x, y int32)) {
		for _, c := range cs {
			f(int(c.i), c.x, c.y)
		}
	}
	a.boot(ep, func(mult []float64) float64 { return t.pairStatsOver(each, m, mult, false, level).Value })
}

// iccStep computes the intraclass correlations (ordinal and continuous
// data).
func (a *analyzer) iccStep() error {
	if !a.coefs || a.o.Level == Nominal {
		return nil
	}
	rep := a.rep
	if a.r.Raters > MaxICCRaters {
		rep.Notes = append(rep.Notes, fmt.Sprintf("ICC left out: %d raters (the REML fit works on a raters × raters matrix; at most %d)", a.r.Raters, MaxICCRaters))
		return nil
	}
	io := a.o.ICC
	io.ConfLevel = a.level
	res, err := iccTable(a.t, a.r, io)
	if err != nil {
		rep.Notes = append(rep.Notes, "ICC left out: "+err.Error())
		return nil
	}
	rep.ICC = &ICCReport{ICC1: res.ICC1, ICC2: res.ICC2, ICC3: res.ICC3, ICC1k: res.ICC1k, ICC2k: res.ICC2k, ICC3k: res.ICC3k,
		Method: res.Method, N: res.N, K: res.K, MSB: num(res.MSB), MSJ: num(res.MSJ), MSE: num(res.MSE), MSW: num(res.MSW), FTests: res.FTests()}
	if res.Dropped > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("ICC: %d items left out", res.Dropped))
	}
	return nil
}

// bootstrapStep runs the bootstrap over items and stores the alphas and
// weighted sets in the report. Resampling one item gives every replicate
// the same value: a zero-width interval that claims certainty, so with
// fewer than 2 items the intervals are not available.
func (a *analyzer) bootstrapStep() error {
	t, rep := a.t, a.rep
	a.familySlots()
	if err := ctxErr(a.ctx); err != nil {
		return err
	}
	if B := a.o.bootstrap(); B > 0 && len(a.b.slots) > 0 {
		switch {
		case t.n < minBootItems:
			a.b.unavailable()
			rep.Notes = append(rep.Notes, fmt.Sprintf("bootstrap intervals not available: %d item with ratings, and resampling items needs at least %d", t.n, minBootItems))
		case a.o.Replicates != nil:
			dsts, _ := a.b.estimates()
			if err := a.o.Replicates.check(B, len(dsts)); err != nil {
				return err
			}
			a.b.intervals(a.o.Replicates.Values, B, a.level)
		default:
			if err := a.b.run(a.ctx, B, a.o.Seed, a.level, a.o.Progress); err != nil {
				return err
			}
		}
	}
	for x, m := range a.metrics {
		if !(m == RatioMetric && !a.nonNeg) {
			rep.KrippendorffAlpha[m.String()] = a.alphas[x]
		}
	}
	for x, w := range a.weights {
		if a.sets[x] == nil {
			continue
		}
		if rep.Weighted == nil {
			rep.Weighted = map[string]WeightedSet{}
		}
		rep.Weighted[w.String()] = *a.sets[x]
		if w == QuadraticWeights {
			e := a.sets[x].GwetAC2
			rep.GwetAC2, rep.GwetAC2Weights = &e, w.String()
		}
	}
	return nil
}

// familySlots registers Gwet's families, one slot per weighting, with the
// bootstrap.
func (a *analyzer) familySlots() {
	t := a.t
	for _, w := range a.famWeights {
		ms := a.fams[w]
		kinds := make([]chanceKind, len(ms))
		dsts := make([]*Estimate, len(ms))
		for x, m := range ms {
			kinds[x], dsts[x] = m.kind, m.dst
		}
		a.b.slots = append(a.b.slots, bootSlot{dsts: dsts, f: func(mult, out []float64) { t.chanceValues(kinds, w, mult, out) }})
	}
}

// aggregatorStep runs the baseline aggregators on every label and names
// their rows.
func (a *analyzer) aggregatorStep() error {
	if !a.o.want(OnlyAggregators) {
		return nil
	}
	if a.categorical {
		if err := a.runAggregators(); err != nil {
			return err
		}
	}
	if a.o.Level != Nominal {
		a.rep.Aggregators["mean"] = MeanRating(a.r)
		a.rep.Aggregators["median"] = MedianRating(a.r)
	}
	for _, c := range a.rep.Aggregators {
		for i := range c.Items {
			c.Items[i].ID = name(a.o.ItemNames, i)
			if c.Items[i].Class >= 0 {
				c.Items[i].Label = name(a.o.CategoryNames, c.Items[i].Class)
			}
		}
		for j := range c.Raters {
			c.Raters[j].ID = name(a.o.RaterNames, j)
		}
	}
	return nil
}

// aggregatorRun is one categorical aggregator of the report: its key, its
// name in notes and the function that runs it (nil, nil: not applicable).
type aggregatorRun struct {
	key, title string
	run        func(ctx context.Context, in *aggInput) (*Consensus, error)
}

// aggInput is what the categorical aggregators read.
type aggInput struct {
	r      *Ratings
	o      Options
	labels []Label
	vals   []float64
}

// categoricalAggregators lists the categorical aggregators in the
// reports' order.
func categoricalAggregators() []aggregatorRun {
	return []aggregatorRun{
		{"majority", "majority vote", func(_ context.Context, in *aggInput) (*Consensus, error) {
			return MajorityVoteWith(in.r, MVOptions{Ties: in.o.Ties, TieOrder: in.o.TieOrder}), nil
		}},
		{"dawid_skene", "Dawid-Skene", func(ctx context.Context, in *aggInput) (*Consensus, error) {
			return dawidSkene(ctx, in.labels, in.r.Items, in.r.Raters, in.r.K, in.dsOptions(), false)
		}},
		{"one_coin", "one-coin Dawid-Skene", func(ctx context.Context, in *aggInput) (*Consensus, error) {
			return dawidSkene(ctx, in.labels, in.r.Items, in.r.Raters, in.r.K, in.dsOptions(), true)
		}},
		{"wawa", "Wawa", func(_ context.Context, in *aggInput) (*Consensus, error) {
			return Wawa(in.labels, in.r.Items, in.r.Raters, in.r.K, WawaOptions{Values: in.vals, Ties: in.o.Ties, TieOrder: in.o.TieOrder})
		}},
		{"glad", "GLAD", func(ctx context.Context, in *aggInput) (*Consensus, error) {
			gl := in.o.GLAD
			gl.Values = in.vals
			return glad(ctx, in.labels, in.r.Items, in.r.Raters, in.r.K, gl)
		}},
		{"mace", "MACE", func(ctx context.Context, in *aggInput) (*Consensus, error) {
			mo := in.o.MACE
			mo.Seed, mo.Values = in.o.Seed, in.vals
			return mace(ctx, in.labels, in.r.Items, in.r.Raters, in.r.K, mo)
		}},
	}
}

// allAggregators lists every categorical aggregator in the reports' order.
func allAggregators() []aggregatorRun {
	return append(append(append(categoricalAggregators(), skillAggregators()...), mmsrAggregator()), probAggregators()...)
}

func (in *aggInput) dsOptions() DSOptions {
	dso := in.o.DS
	dso.Seed = in.o.Seed
	dso.Values = in.vals
	if in.o.DSGold && dso.TrueClasses == nil {
		dso.TrueClasses = in.o.Gold
	}
	return dso
}

// runAggregators runs the categorical aggregators; one that fails on the
// data is left out with a note.
func (a *analyzer) runAggregators() error {
	in := &aggInput{r: a.r, o: a.o, labels: LabelsOf(a.r), vals: valuesOf(a.r)}
	for _, ag := range allAggregators() {
		c, err := ag.run(a.ctx, in)
		if cerr := ctxErr(a.ctx); cerr != nil {
			return cerr
		}
		if err != nil {
			a.rep.Notes = append(a.rep.Notes, ag.title+" left out: "+err.Error())
			continue
		}
		if c != nil {
			a.rep.Aggregators[ag.key] = c
		}
	}
	return nil
}

// profileStep builds the rater profiles.
func (a *analyzer) profileStep() error {
	if !a.o.want(OnlyRaters) {
		return nil
	}
	a.rep.Profiles = profiles(a.r, a.t, a.o, a.rep, a.pairs)
	if a.r.Raters > MaxMatrixRaters && len(a.rep.Aggregators) > 0 {
		a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("rater_profiles leave out agreement_with and ds_confusion above %d raters: each aggregator's raters rows hold the same (accuracy, confusion)", MaxMatrixRaters))
	}
	return nil
}

// tableStep builds the agreement tables: the matrix from the pairwise
// kappas above, the per-item and per-rater rows from per-item counts.
func (a *analyzer) tableStep() error {
	rep, o := a.rep, a.o
	mw := matrixWeights(o.Level)
	mpairs := make([]PairKappa, len(a.pairs))
	for x, p := range a.pairs {
		e := undefined()
		if v, ok := p.Kappa[mw]; ok {
			e = v
		}
		if a.coefs {
			switch mw {
			case Unweighted:
				e = *rep.CohenKappa[x].Unweighted
			case QuadraticWeights:
				e = *rep.CohenKappa[x].Quadratic
			}
		}
		mpairs[x] = PairKappa{A: p.A, B: p.B, N: p.N, Kappa: map[Weights]Estimate{mw: e}}
	}
	m, items, rs := agreementTables(a.r, a.t, o, mpairs, a.coefs, o.want(OnlyItems), o.want(OnlyRaters))
	rep.PairwiseMatrix, rep.ItemAgreement, rep.RaterAgreement = m, items, rs
	if items != nil || rs != nil {
		lo, hi := scale(a.r, o)
		rep.AgreementScore = agreementScore(o.Level, lo, hi)
	}
	if a.coefs {
		rep.StrongestPairs, rep.WeakestPairs = extremes(mpairs, mw, o)
		if m == nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("pairwise_matrix left out: %d raters (at most %d); cohen_kappa lists the pairs described by pair_selection, and each rater profile's pairwise list only those pairs", a.r.Raters, MaxMatrixRaters))
		}
	}
	return nil
}

// finishStep adds the tests (and normal intervals) and the closing notes.
func (a *analyzer) finishStep() error {
	rep, o := a.rep, a.o
	rep.eachEstimate(func(e *Estimate) {
		e.finite(o.Population, a.level)
		e.test(o.CI, a.level, o.Null)
	})
	if o.Only == "" && o.MaxItemRows > 0 && a.r.Items > o.MaxItemRows && len(rep.Aggregators) > 0 {
		for _, c := range rep.Aggregators {
			c.Items = nil
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("the aggregators' per-item rows (aggregators.*.items) are left out: %d items, at most %d in the full document; --only aggregators (API: only=aggregators) lists them", a.r.Items, o.MaxItemRows))
	}
	if a.t.repeats > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d repeated labels (a rater labelling an item more than once): the coefficients, Cohen's and the pairwise kappas, the ICCs, the per-item and per-rater agreement rows and the profiles' pairwise rows use each rater's first label of an item; the aggregators and the profiles' label counts, distributions and agreement with each consensus use every label", a.t.repeats))
	}
	return nil
}

// eachEstimate calls f with every coefficient estimate of the report (the
// pairwise matrix's and the per-rater rows' kappas, which repeat Cohen's,
// left aside).
func (rep *Report) eachEstimate(f func(*Estimate)) {
	for k, e := range rep.KrippendorffAlpha {
		f(&e)
		rep.KrippendorffAlpha[k] = e
	}
	for _, e := range []*Estimate{rep.FleissKappa, rep.RandolphKappa, rep.ScottPi, rep.GwetAC1, rep.GwetAC2,
		rep.BrennanPrediger, rep.PercentAgreement, rep.CongerKappa} {
		if e != nil {
			f(e)
		}
	}
	for i := range rep.FleissCategories {
		f(&rep.FleissCategories[i].Estimate)
	}
	for i := range rep.CohenKappa {
		for _, e := range []*Estimate{rep.CohenKappa[i].Unweighted, rep.CohenKappa[i].Linear, rep.CohenKappa[i].Quadratic} {
			if e != nil {
				f(e)
			}
		}
	}
	for k, s := range rep.Weighted {
		for _, e := range s.estimates() {
			if e != nil {
				f(e)
			}
		}
		rep.Weighted[k] = s
	}
	if rep.ICC != nil {
		for _, e := range []*Estimate{&rep.ICC.ICC1, &rep.ICC.ICC2, &rep.ICC.ICC3, &rep.ICC.ICC1k, &rep.ICC.ICC2k, &rep.ICC.ICC3k} {
			f(e)
		}
	}
}

// estimates lists the set's estimates (nil for those it does not have).
func (s *WeightedSet) estimates() []*Estimate {
	return []*Estimate{&s.PercentAgreement, &s.FleissKappa, &s.CongerKappa, &s.GwetAC2, &s.BrennanPrediger, &s.KrippendorffAlpha, s.CohenKappa, s.ScottPi}
}
