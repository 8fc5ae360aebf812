package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"concord/annotations"
	"concord/raters"
)

// AgreementReport is the agreement document of a dataset: the scheme and
// raters.Report (every coefficient that applies to the scheme, the baseline
// aggregators and the rater profiles), flattened into one JSON object. The
// server, the CLI and the reports share it.
type AgreementReport struct {
	Scheme string `json:"scheme"`
	*raters.Report
}

// RatingsTable is a dataset laid out for package raters: its labels as
// sparse raters.Ratings (every label, repeats included) and the ids of its
// items, raters and categories.
type RatingsTable struct {
	Ratings *raters.Ratings
	// Items are the ids of the labelled items, in the dataset's item
	// order; Raters the rater ids in order of first label.
	Items, Raters []string
	// Categories are the level codes (categorical schemes).
	Categories []string
	// Level is the level of measurement of the scheme.
	Level raters.Level
	// Duplicates counts the labels that repeat an (item, rater) pair
	// (kept with --duplicates keep): the aggregators use them, the
	// coefficients each rater's first label of an item (see
	// raters.Ratings).
	Duplicates int
}

// Level returns the level of measurement of a scheme: nominal for nominal
// and binary schemes, ordinal for ordinal ones and interval for bounded
// ones.
func Level(s annotations.Scheme) raters.Level {
	switch s.Kind {
	case annotations.Ordinal:
		return raters.Ordinal
	case annotations.Bounded:
		return raters.Interval
	}
	return raters.Nominal
}

// CategoryValues returns the numeric values of a categorical scheme's
// levels: the codes themselves when they are all numbers increasing in the
// scheme's order (ordinal:1..5, ordinal:0..3), and 1..K otherwise. They are
// what the interval and ratio metrics, the weights and the ICCs use.
func CategoryValues(s annotations.Scheme) []float64 {
	k := s.K()
	vals := make([]float64, k)
	numeric := true
	for i, l := range s.Levels {
		v, err := strconv.ParseFloat(l.Code, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || (i > 0 && !(v > vals[i-1])) {
			numeric = false
			break
		}
		vals[i] = v
	}
	if !numeric {
		for i := range vals {
			vals[i] = float64(i + 1)
		}
	}
	return vals
}

// Table lays a dataset out as sparse raters.Ratings, in time and memory
// linear in the labels. Labels must be in canonical form (as stored or as
// annotations.LoadFiles returns them); a label outside the scheme is an
// error. Every label is kept, repeated labels (--duplicates keep) included,
// in the dataset's order (sorted by item and rater; LoadFiles's
// Loaded.FileOrder has the file's, for raters.Options.DataOrder): the
// aggregators count each one, as crowd-kit does, while the coefficients,
// which are defined for one label per rater and item (Cohen's and the
// pairwise kappas, and irrCAC's items × raters table for the others), use
// each rater's first label of an item, the table the file would give under
// --duplicates first (see raters.Ratings). Models use every label too (see
// Fit).
func Table(ds *annotations.Dataset) (*RatingsTable, error) {
	s := ds.Scheme
	if s.Open() {
		return nil, annotations.Errorf(annotations.EINVALID, "scheme %s names only one class", s)
	}
	rt := &RatingsTable{Raters: ds.RaterIDs(), Level: Level(s)}
	labelled := make(map[string]bool, len(ds.Items))
	for _, l := range ds.Labels {
		labelled[l.Item] = true
	}
	for _, id := range ds.ItemIDs() {
		if labelled[id] {
			rt.Items = append(rt.Items, id)
		}
	}
	itemIx, raterIx := indexOf(rt.Items), indexOf(rt.Raters)
	k := 0
	var codes map[string]int
	if s.Categorical() {
		k = s.K()
		rt.Categories = s.Codes()
		codes = indexOf(rt.Categories)
	}
	r := raters.NewRatings(len(rt.Items), len(rt.Raters), k)
	if k > 0 {
		r.Values = CategoryValues(s)
	}
	for _, l := range ds.Labels {
		var v float64
		if k > 0 {
			c, ok := codes[l.Value]
			if !ok {
				if c, ok = s.Index(l.Value); !ok {
					return nil, annotations.Errorf(annotations.EINVALID, "item %q, rater %q: label %q is not a level of %s", l.Item, l.Rater, l.Value, s)
				}
			}
			v = float64(c)
		} else {
			x, err := s.Value(l.Value)
			if err != nil {
				return nil, annotations.Errorf(annotations.EINVALID, "item %q, rater %q: %s", l.Item, l.Rater, annotations.ErrorMessage(err))
			}
			v = x
		}
		r.Add(itemIx[l.Item], raterIx[l.Rater], v)
	}
	rt.Duplicates = r.Repeats()
	rt.Ratings = r
	return rt, nil
}

// TieOrder is the order in which crowd-kit sorts a categorical scheme's
// classes, the order raters.TieFirst prefers them: numerically when every
// code is a number (pandas reads such a column as numbers), as strings
// otherwise.
func TieOrder(s annotations.Scheme) []int {
	codes := s.Codes()
	order := make([]int, len(codes))
	for c := range order {
		order[c] = c
	}
	nums := make([]float64, len(codes))
	numeric := true
	for c, code := range codes {
		v, err := strconv.ParseFloat(code, 64)
		if err != nil || math.IsNaN(v) {
			numeric = false
			break
		}
		nums[c] = v
	}
	sort.SliceStable(order, func(x, y int) bool {
		a, b := order[x], order[y]
		if numeric {
			return nums[a] < nums[b]
		}
		return codes[a] < codes[b]
	})
	return order
}

// Agreement computes the agreement report of a dataset: the level of
// measurement follows the scheme, and the ids of items, raters and
// categories label the output (opts.Level and the names in opts are
// overwritten; a bounded scheme's [lo, hi] is the scale of the per-item
// and per-rater agreement scores). It stops early with ctx's error when ctx is done (the
// bootstrap and the Dawid-Skene EM check it); PlanBootstrap bounds the
// bootstrap's work. opts.DataOrder, when not nil, is the order of
// ds.Labels in the user's file (Loaded.FileOrder), which crowd-kit's
// random starts follow.
func Agreement(ctx context.Context, ds *annotations.Dataset, opts raters.Options) (*AgreementReport, error) {
	r, opts, err := agreementInput(ds, opts)
	if err != nil {
		return nil, err
	}
	rep, err := raters.AnalyzeContext(ctx, r, opts)
	if err != nil {
		return nil, agreementError(ctx, err)
	}
	return &AgreementReport{Scheme: ds.Scheme.String(), Report: rep}, nil
}

// AgreementReplicates computes the bootstrap replicates [lo, hi) of the
// analysis Agreement(ctx, ds, opts) runs (raters.AnalyzeReplicates), so
// that the replicates of one analysis can be computed apart (jobs of
// several workers) and handed back to Agreement as opts.Replicates.
func AgreementReplicates(ctx context.Context, ds *annotations.Dataset, opts raters.Options, lo, hi int) (*raters.Replicates, error) {
	r, opts, err := agreementInput(ds, opts)
	if err != nil {
		return nil, err
	}
	reps, err := raters.AnalyzeReplicates(ctx, r, opts, lo, hi)
	if err != nil {
		return nil, agreementError(ctx, err)
	}
	return reps, nil
}

// CheckAgreement returns the error Agreement(ctx, ds, opts) would return
// on its input (too few raters, custom weights or gold labels that do
// not fit, ...) without analysing: what a plan of an analysis run in
// parts checks before the parts run.
func CheckAgreement(ds *annotations.Dataset, opts raters.Options) error {
	_, _, err := agreementInput(ds, opts)
	return err
}

// agreementError is an error of raters' analysis as Agreement returns it:
// ctx's as it is, the others for the user.
func agreementError(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if pe := populationError(err); pe != nil {
		return pe
	}
	return annotations.Errorf(annotations.EINVALID, "%s", err)
}

// agreementInput is the table of ds and opts completed as Agreement
// describes.
func agreementInput(ds *annotations.Dataset, opts raters.Options) (*raters.Ratings, raters.Options, error) {
	rt, err := Table(ds)
	if err != nil {
		return nil, opts, err
	}
	if len(rt.Raters) < 2 {
		return nil, opts, annotations.Errorf(annotations.EINVALID, "agreement needs labels from at least 2 raters, found %d", len(rt.Raters))
	}
	opts.Level = rt.Level
	if opts.WeightMatrix != nil && len(opts.WeightMatrix) != len(rt.Categories) {
		return nil, opts, annotations.Errorf(annotations.EINVALID, "custom agreement weights: %d rows for the %d categories of %s (read them with ReadLabelWeightMatrix)", len(opts.WeightMatrix), len(rt.Categories), ds.Scheme)
	}
	opts.RaterNames, opts.ItemNames = rt.Raters, rt.Items
	if opts.DataOrder != nil && len(opts.DataOrder) != len(ds.Labels) {
		panic(fmt.Sprintf("analysis: Options.DataOrder has %d positions for %d labels", len(opts.DataOrder), len(ds.Labels)))
	}
	if ds.Scheme.Kind == annotations.Bounded {
		// The per-item and per-rater scores divide by the scale's range.
		opts.ScaleMin, opts.ScaleMax = ds.Scheme.Lo, ds.Scheme.Hi
	}
	opts.CategoryNames = nil
	for _, l := range ds.Scheme.Levels {
		opts.CategoryNames = append(opts.CategoryNames, l.Code)
	}
	if ds.Scheme.Categorical() && opts.Ties == raters.TieFirst && opts.TieOrder == nil {
		opts.TieOrder = TieOrder(ds.Scheme)
	}
	if ds.Scheme.Categorical() {
		if opts.Gold, err = goldClasses(ds, rt); err != nil {
			return nil, opts, err
		}
	}
	if opts.DSGold && opts.Gold == nil {
		return nil, opts, annotations.Errorf(annotations.EINVALID, "Dawid-Skene with known true labels (ds-gold) needs items with a gold label among the labelled items; none has one")
	}
	if ds.Scheme.Categorical() && opts.LabelProbs == nil {
		// The labels' probabilities in the order Table added them.
		for x, l := range ds.Labels {
			if l.Prob > 0 {
				if opts.LabelProbs == nil {
					opts.LabelProbs = make([]float64, len(ds.Labels))
				}
				opts.LabelProbs[x] = l.Prob
			}
		}
	}
	return rt.Ratings, opts, nil
}

// populationError rephrases a raters.PopulationError for the user, naming
// the CLI flag and the API parameter; nil for other errors.
func populationError(err error) error {
	var pe *raters.PopulationError
	if !errors.As(err, &pe) {
		return nil
	}
	return annotations.Errorf(annotations.EINVALID, "population %d (concord agreement --population; API: population) is smaller than the %v %s analysed: give at least %v, or 0 for an infinite population", pe.Population, pe.N, pe.What, pe.N)
}

// goldClasses returns the gold class of each labelled item of rt (-1: none),
// or nil when no labelled item has a gold label; a gold label outside the
// scheme is EINVALID.
func goldClasses(ds *annotations.Dataset, rt *RatingsTable) ([]int, error) {
	ix, codes := indexOf(rt.Items), indexOf(rt.Categories)
	var gold []int
	for _, it := range ds.Items {
		i, ok := ix[it.ID]
		if !ok || it.Gold == "" {
			continue
		}
		c, ok := codes[it.Gold]
		if !ok {
			if c, ok = ds.Scheme.Index(it.Gold); !ok {
				return nil, annotations.Errorf(annotations.EINVALID, "item %q: gold label %q is not a level of %s", it.ID, it.Gold, ds.Scheme)
			}
		}
		if gold == nil {
			gold = make([]int, len(rt.Items))
			for x := range gold {
				gold[x] = -1
			}
		}
		gold[i] = c
	}
	return gold, nil
}

// DefaultBootstrap is the number of bootstrap replicates of the agreement
// coefficients when none is asked for.
const DefaultBootstrap = 1000

// MinReducedBootstrap is the fewest replicates PlanBootstrap reduces the
// default to; below it the intervals are the analytic ones.
const MinReducedBootstrap = 100

// DefaultMaxBootstrapWork is the default bound of PlanBootstrap: 2e8
// resampled cells (a few CPU seconds).
const DefaultMaxBootstrapWork = 200_000_000

// BootstrapWork is the work of one bootstrap replicate of the agreement
// analysis of ds, in resampled cells: its labels (every coefficient) plus
// the rater pairs that share an item (Cohen's kappa of every pair), Σ_i
// r_i + r_i(r_i-1)/2 over the items i with r_i labels.
func BootstrapWork(ds *annotations.Dataset) int64 {
	perItem := map[string]int64{}
	for _, l := range ds.Labels {
		perItem[l.Item]++
	}
	var w int64
	for _, r := range perItem {
		w += r + r*(r-1)/2
	}
	return w
}

// PlanBootstrap bounds the bootstrap of an agreement analysis of ds by
// maxWork resampled cells (replicates × BootstrapWork; maxWork <= 0: no
// bound). requested is the number of replicates asked for (negative: none);
// explicit says whether the user asked for it. An explicit request over the
// bound is EINVALID with a message naming the limit and the most that
// fits; the default (DefaultBootstrap) is reduced to what fits, or to none
// (analytic intervals) below MinReducedBootstrap, and note says so. It
// returns the replicates to run (negative: none, as raters.Options).
func PlanBootstrap(ds *annotations.Dataset, requested int, explicit bool, maxWork int64) (replicates int, note string, err error) {
	if requested <= 0 || maxWork <= 0 {
		return requested, "", nil
	}
	w := max(BootstrapWork(ds), 1)
	if int64(requested) <= maxWork/w {
		return requested, "", nil
	}
	fits := maxWork / w
	if explicit {
		hint := "bootstrap=0 for analytic intervals"
		if fits >= 1 {
			hint = fmt.Sprintf("bootstrap=%d or fewer, or %s", fits, hint)
		}
		return 0, "", annotations.Errorf(annotations.EINVALID,
			"query parameter bootstrap=%d: too much work for this project: %d replicates × %d resampled labels and rater pairs exceed the limit of %d per analysis; ask for %s",
			requested, requested, w, maxWork, hint)
	}
	if fits >= MinReducedBootstrap {
		return int(fits), fmt.Sprintf("bootstrap reduced from %d to %d replicates: the limit is %d resampled labels and rater pairs per analysis, and each replicate of this project resamples %d",
			requested, fits, maxWork, w), nil
	}
	return -1, fmt.Sprintf("no bootstrap intervals (the intervals are analytic): %d replicates × %d resampled labels and rater pairs exceed the limit of %d per analysis",
		requested, w, maxWork), nil
}

// ParsePairs reads the pairs setting of an agreement analysis: "" (the
// default: see raters.PairOptions), "all" (every pair of raters that
// shares an item) or a number N >= 1 (at most N pairs, those sharing the
// most items). The error says what was expected; callers name the flag or
// query parameter.
func ParsePairs(s string) (raters.PairOptions, error) {
	switch s {
	case "":
		return raters.PairOptions{}, nil
	case "all":
		return raters.PairOptions{All: true}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return raters.PairOptions{}, fmt.Errorf("%q: expected all or a number of pairs from 1 (default %d)", s, raters.DefaultMaxPairs)
	}
	return raters.PairOptions{Max: n}, nil
}

// ParseOnly reads the part of an agreement analysis to compute: "" (all)
// or one of raters.OnlyParts.
func ParseOnly(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	for _, p := range raters.OnlyParts {
		if s == p {
			return s, nil
		}
	}
	return "", fmt.Errorf("%q: expected one of %s", s, strings.Join(raters.OnlyParts, ", "))
}
