package main

import (
	"context"
	"encoding/json"
	goflag "flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"concord/analysis"
	"concord/annotations"
	"concord/raters"
)

const agreementHelp = `
Agreement coefficients and baseline aggregators for a project or a label file:
Krippendorff's alpha, Fleiss' kappa (with per-category kappas), Randolph's
kappa, Cohen's kappa for every pair of raters, Scott's pi, Gwet's AC1/AC2,
Brennan-Prediger, percent agreement, Conger's kappa and, for ordinal and
bounded schemes, the weighted coefficients and intraclass correlations; each
with its analytic standard error where the literature has one and a 95%
interval (bootstrap over items unless --bootstrap 0). Missing ratings are
allowed everywhere. Then the baseline aggregators with per-rater quality:
majority vote, Dawid-Skene, one-coin Dawid-Skene, Wawa (majority vote weighted
by each rater's agreement with it), GLAD (rater ability x item difficulty) and
MACE (rater competence against spamming) for categorical schemes, with
crowd-kit's defaults and the random starts seeded by --seed; mean and median
for ordinal and bounded ones. The rater table shows each rater's agreement
with every aggregator's consensus, Dawid-Skene's accuracy, Wawa's weight,
GLAD's ability and MACE's competence. Then a profile of each rater.

Which coefficients apply follows the scheme: nominal and binary schemes get the
nominal ones; ordinal schemes all of them; bounded schemes the interval and
ratio alphas, the weighted (continuous) coefficients and the ICCs.

--json prints the same as one JSON document (keys krippendorff_alpha,
fleiss_kappa, randolph_kappa, cohen_kappa, scott_pi, gwet_ac1, gwet_ac2,
brennan_prediger, percent_agreement, icc, aggregators, ...), indented up to
200 raters and compact above. Its size is linear in the labels: the pairwise
statistics cover the rater pairs of pair_selection (every pair sharing an item
up to 200 raters; above, those sharing at least --min-shared items, at most
10,000 by default; --pairs all for every pair), with the strongest and weakest
pairs listed apart; per-rater rows come from per-item counts; above 50,000
items the aggregators' per-item rows are left out (a note says so). --only
coefficients|aggregators|items|raters computes one part, and --only aggregators
lists every item's consensus.

Repeated labels (--duplicates keep): the coefficients and pairwise statistics
use each rater's first label of an item; the aggregators use every label.
--ties first breaks majority-vote and Wawa ties as crowd-kit does (the first
class in sorted order of the codes) instead of by the most frequent class.
--random-start crowdkit draws M-MSR's and KOS's random starts as crowd-kit
1.4.1 does (numpy's RandomState, with crowd-kit's random_state 0 unless
--seed is given): on data in crowd-kit's order (the file's) they then start,
and end, where crowd-kit's do.

The default bootstrap is bounded: past 2e8 resampled labels and rater pairs
it runs fewer replicates, or none (analytic intervals) below 100, and a note
says so; an explicit --bootstrap N runs N replicates. Replicates run in
parallel on every core.

--ci normal gives the normal-approximation intervals and z tests of
statsmodels and SAS (Cohen's kappa tested on its standard error under H0)
and --ci t irrCAC's t ones; an explicit --ci gives these analytic intervals
instead of the bootstrap ones unless --bootstrap N is given too. Every coefficient with a standard
error carries z and a two-sided p-value against 0 and, with --null V,
against V. --population N applies irrCAC's finite-population correction
for items sampled from N subjects: every analytic variance is multiplied by
1 - n/N (n the items; for --table the total count) and the analytic
intervals and tests use the corrected standard errors (bootstrap and ICC
intervals are not corrected). --weights chooses the weightings of the weighted coefficients
(linear, quadratic, ordinal, ratio, radical, circular, bipolar, or all).

--table FILE analyses a two-rater K x K contingency table (a header row of
categories after a corner cell, each row starting with its category; or K x K
numbers) and --counts FILE per-item category counts (one row per item, one
column per category, an optional item id column), with irrCAC's table and
distribution functions and their variances (Cohen's kappa, Scott's pi, Gwet's
AC1/AC2, Brennan-Prediger, Krippendorff's alpha, percent agreement; Fleiss'
kappa for counts). Their weights are on the category positions 1..K.
--weights-file FILE adds custom agreement weights, named "custom": a
headerless CSV of a K x K symmetric matrix with 1 on the diagonal, or one
row of K weights by distance 0..K-1 (toeplitz, w_kl = v_|k-l|, v_0 = 1).
statsmodels' cohens_kappa(table, weights=d) takes disagreement weights d
(wt='toeplitz' for a row): write 1 - d to get its kappa, SE, z and p. On
labels (categorical schemes; K the scheme's categories in its order) they
weigh percent agreement, Fleiss' and Conger's kappa, Gwet's AC2,
Brennan-Prediger and Krippendorff's alpha with the variances of irrCAC's
raw-data functions (the pairwise Cohen's kappas stay unweighted, linear
and quadratic).

Examples:
  concord agreement --project essays
  concord agreement --labels ratings.csv --scheme ordinal:0..3 --where criterion=k1
  concord agreement --labels rte.csv --scheme binary:0,1,pos=1 --json > agreement.json
  concord agreement --table abstractors.csv --weights quadratic --ci normal
  concord agreement --table abstractors.csv --weights-file weights.csv --ci normal
  concord agreement --labels ratings.csv --scheme ordinal:1..3 --weights-file weights.csv
  concord agreement --counts fleiss.csv --null 0.4
  concord agreement --labels ratings.csv --ci t --population 500
  concord agreement --labels answers.csv --ties first --random-start crowdkit --only aggregators
`

// agreementFlags are the flags of concord agreement.
type agreementFlags struct {
	fs                                      *goflag.FlagSet
	dsn, project, labels, items, schemeSpec *string
	format, sheet                           *string
	dups                                    *duplicatesFlag
	rf                                      *readFlags
	where                                   whereFlag
	asJSON, observed, complete              *bool
	boot, restarts, minShared               *int
	seed                                    *uint64
	conf, smoothing                         *float64
	pairs, only, ties, ci, null, weights    *string
	randomStart                             *string
	weightsFile                             *string
	population                              *string
	table, counts                           *string
	dsIter                                  *int
	dsTol                                   *float64
	dsInit, dsInitStrategy                  *string
	dsGold                                  *bool
}

func defineAgreementFlags(e *env) *agreementFlags {
	fs := newFlags(e, "agreement", "(--project NAME [--db PATH] | --labels FILE [--items FILE] [--scheme SPEC] | --table FILE | --counts FILE) [--json]", agreementHelp)
	f := &agreementFlags{fs: fs, where: whereFlag{}}
	f.dsn = dbFlag(fs)
	f.project = fs.String("project", "", "project name (reads the project's labels from the database)")
	f.labels = fs.String("labels", "", "label file (instead of --project)")
	f.items = fs.String("items", "", "items file for --labels (item ids and texts)")
	f.schemeSpec = fs.String("scheme", "", "label scheme for --labels, e.g. ordinal:1..5 (default: inferred and shown)")
	f.format = fs.String("format", "auto", "format of --labels: auto|csv-long|csv-wide|xlsx|json|jsonl|labelstudio|doccano")
	f.sheet = fs.String("sheet", "", "XLSX sheet name (default: the first sheet)")
	f.dups = addDuplicatesFlag(fs)
	f.rf = addReadFlags(fs)
	fs.Var(f.where, "where", "keep only rows of --labels whose COLUMN=VALUE (repeatable), e.g. criterion=k1")
	f.table = fs.String("table", "", "a two-rater K x K contingency table CSV (instead of labels): irrCAC's table functions")
	f.counts = fs.String("counts", "", "per-item category counts CSV, one row per item (Fleiss's layout; instead of labels): irrCAC's distribution functions")
	f.asJSON = fs.Bool("json", false, "print the report as JSON")
	f.boot = fs.Int("bootstrap", 1000, "bootstrap replicates for the intervals (0: analytic intervals only)")
	f.seed = fs.Uint64("seed", 1, "seed of the bootstrap and of the Dawid-Skene, MACE, M-MSR and KOS random starts (with --random-start crowdkit: 0, crowd-kit's random_state)")
	f.conf = fs.Float64("conf-level", 0.95, "confidence level of the intervals")
	f.ci = fs.String("ci", "t", "analytic intervals and tests: t (irrCAC's t on n-1 df, upper end capped at 1) or normal (statsmodels' and SAS's; Cohen's kappa is tested on its SE under H0); given, the intervals are these instead of the bootstrap's unless --bootstrap is given too")
	f.population = fs.String("population", "", "size N of the population of subjects the items are a sample of: irrCAC's finite-population correction multiplies every analytic variance by 1 - n/N (n the items; at least n; default or 0: infinite, no correction)")
	f.null = fs.String("null", "", "also test every coefficient against this value (z_null, p_value_null), e.g. 0.5")
	f.weights = fs.String("weights", "", "weightings of the weighted coefficients: all or a comma-separated list of linear, quadratic, ordinal, ratio, radical, circular, bipolar (default: ordinal schemes linear, quadratic, ordinal, ratio; bounded linear, quadratic; --table/--counts none)")
	f.weightsFile = fs.String("weights-file", "", "CSV (no header) of custom agreement weights for --table, --counts or the labels of a categorical scheme (K its categories in order), a K x K symmetric matrix with 1 on the diagonal or one row of K toeplitz weights by distance 0..K-1 (w_kl = v_|k-l|, v_0 = 1; statsmodels' cohens_kappa disagreement weights d are 1 - d), whose weighted coefficients are named \"custom\"")
	f.observed = fs.Bool("observed-categories", false, "use only the categories that occur in the data (irrCAC without categ.labels) instead of all the scheme's levels")
	f.complete = fs.Bool("complete-cases", false, "ICC on the items every rater rated (classical ANOVA) instead of REML on all ratings")
	f.restarts = fs.Int("ds-restarts", 0, "Dawid-Skene random restarts besides the majority-vote start (each replaces it only when its log-likelihood is at least 2 higher; on sparse designs they can find spurious optima)")
	f.smoothing = fs.Float64("ds-smoothing", 0, "Dawid-Skene pseudo-count added to every class and confusion count (MAP under a Dirichlet prior; 0: maximum likelihood as in Dawid & Skene 1979)")
	f.dsIter = fs.Int("ds-iter", 0, "Dawid-Skene's most EM iterations per run (0: 500; crowd-kit's n_iter is 100)")
	f.dsTol = fs.Float64("ds-tol", 0, "Dawid-Skene stops when the log-likelihood changes by less than this times (1 + |log-likelihood|) (0: 1e-10)")
	f.dsInit = fs.String("ds-init", "", "CSV of Dawid-Skene initial error matrices (header rater,true,label,value: a count from past work, or a probability, per cell; crowd-kit's initial_error), used in the first M-step")
	f.dsInitStrategy = fs.String("ds-init-strategy", "assign", "how --ds-init enters the first M-step: assign (the raters' matrices replace the estimates) or addition (their counts are added), as crowd-kit's initial_error_strategy")
	f.dsGold = fs.Bool("ds-gold", false, "Dawid-Skene fixes the items with a gold label (the items file's gold column) to it, as crowd-kit's true_labels (the gold majority vote always uses them)")
	f.pairs = fs.String("pairs", "", fmt.Sprintf("rater pairs of the pairwise statistics: all (every pair sharing an item) or at most N, those sharing the most items (default: every pair sharing an item up to %d raters; above, those sharing at least --min-shared items, at most %d)", raters.MaxMatrixRaters, raters.DefaultMaxPairs))
	f.minShared = fs.Int("min-shared", 0, fmt.Sprintf("fewest items a rater pair must share for its pairwise statistics (0: 1 up to %d raters, %d above)", raters.MaxMatrixRaters, raters.DefaultMinShared))
	f.only = fs.String("only", "", "compute one part only: coefficients, aggregators, items (per-item agreement) or raters (profiles and per-rater agreement)")
	f.randomStart = fs.String("random-start", "concord", "how M-MSR and KOS draw their random starts from --seed: concord (its seeded generator) or crowdkit (as crowd-kit 1.4.1 does, numpy's RandomState(seed), in the order of the labels: --labels the file's rows, --project sorted by item and rater id; the seed then defaults to 0, crowd-kit's random_state, and is at most 4294967295)")
	f.ties = fs.String("ties", "frequent", "majority-vote and Wawa tie rule: frequent (the tied class with the most labels in the file) or first (the first in sorted order of the class codes, crowd-kit's rule)")
	return f
}

// given says whether the flag was set on the command line.
func (f *agreementFlags) given(name string) bool { return flagGiven(f.fs, name) }

// flagGiven says whether the flag name of fs was set on the command line.
func flagGiven(fs *goflag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(fl *goflag.Flag) { set = set || fl.Name == name })
	return set
}

// options reads the analysis options the flags give (the bootstrap is
// planned later).
func (f *agreementFlags) options() (raters.Options, error) {
	var o raters.Options
	if !(*f.conf > 0 && *f.conf < 1) {
		return o, annotations.Errorf(annotations.EINVALID, "--conf-level must be between 0 and 1, got %v", *f.conf)
	}
	if *f.boot < 0 {
		return o, annotations.Errorf(annotations.EINVALID, "--bootstrap must be >= 0, got %d", *f.boot)
	}
	if *f.minShared < 0 {
		return o, annotations.Errorf(annotations.EINVALID, "--min-shared must be >= 0, got %d", *f.minShared)
	}
	if *f.smoothing < 0 {
		return o, annotations.Errorf(annotations.EINVALID, "--ds-smoothing must be at least 0, got %g", *f.smoothing)
	}
	if *f.dsIter < 0 || !(*f.dsTol >= 0) || math.IsInf(*f.dsTol, 0) {
		return o, annotations.Errorf(annotations.EINVALID, "--ds-iter and --ds-tol must be at least 0, got %d and %g", *f.dsIter, *f.dsTol)
	}
	if *f.dsInitStrategy != "assign" && *f.dsInitStrategy != "addition" {
		return o, annotations.Errorf(annotations.EINVALID, "--ds-init-strategy %q: expected assign or addition", *f.dsInitStrategy)
	}
	var err error
	if o.Pairs, err = analysis.ParsePairs(*f.pairs); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "--pairs %s", err)
	}
	o.Pairs.MinShared = *f.minShared
	if o.Only, err = analysis.ParseOnly(*f.only); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "--only %s", err)
	}
	if o.Ties, err = raters.ParseTieRule(*f.ties); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "--ties %q: expected frequent or first", *f.ties)
	}
	if o.CI, err = analysis.ParseCI(*f.ci); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "--ci %s", err)
	}
	if o.Null, err = analysis.ParseNull(*f.null); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "--null %s", err)
	}
	if o.Population, err = analysis.ParsePopulation(*f.population); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "--population %s", err)
	}
	if o.Weights, err = analysis.ParseWeightsList(*f.weights); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "--weights %s", err)
	}
	if o.RandomStart, err = analysis.ParseRandomStart(*f.randomStart); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "--random-start %s", err)
	}
	if o.Seed, err = analysis.StartSeed(o.RandomStart, *f.seed, f.given("seed"), *f.seed); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "--seed %s", err)
	}
	o.Bootstrap, o.ConfLevel = *f.boot, *f.conf
	o.ObservedCategoriesOnly = *f.observed
	o.ICC = raters.ICCOptions{CompleteCasesOnly: *f.complete}
	o.DS = raters.DSOptions{Restarts: *f.restarts, Smoothing: *f.smoothing, MaxIter: *f.dsIter, Tol: *f.dsTol, InitialErrorAdd: *f.dsInitStrategy == "addition"}
	o.DSGold = *f.dsGold
	if o.DS.Restarts == 0 {
		o.DS.Restarts = -1
	}
	o.MaxItemRows = raters.DefaultMaxItemRows
	return o, nil
}

func runAgreement(ctx context.Context, e *env, args []string) error {
	f := defineAgreementFlags(e)
	pos, err := parseFlags(e, f.fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return annotations.Errorf(annotations.EINVALID, "unexpected argument %q (give the label file with --labels)", pos[0])
	}
	inputs := 0
	for _, s := range []string{*f.project, *f.labels, *f.table, *f.counts} {
		if s != "" {
			inputs++
		}
	}
	if inputs != 1 {
		return annotations.Errorf(annotations.EINVALID, "give one of --project NAME, --labels FILE, --table FILE or --counts FILE")
	}
	o, err := f.options()
	if err != nil {
		return err
	}
	if *f.table != "" || *f.counts != "" {
		return runTableAgreement(ctx, e, f, o)
	}
	ds, source, order, err := loadAgreementDataset(ctx, e, f)
	if err != nil {
		return err
	}
	o.DataOrder = order
	if *f.weightsFile != "" {
		err := readWeightsFile(*f.weightsFile, func(r io.Reader) (err error) {
			o.WeightMatrix, err = analysis.ReadLabelWeightMatrix(*f.weightsFile, r, ds)
			return err
		})
		if err != nil {
			return err
		}
	}
	if o.DS.InitialError, err = readDSInit(*f.dsInit, ds); err != nil {
		return err
	}
	// The default bootstrap is bounded like the server's (fewer replicates,
	// or analytic intervals, past DefaultMaxBootstrapWork, with a note); an
	// explicit --bootstrap runs as asked.
	if o.Bootstrap == 0 || (f.given("ci") && !f.given("bootstrap")) {
		o.Bootstrap = -1 // none; an explicit --ci asks for its analytic intervals
	}
	bootNote := ""
	if !f.given("bootstrap") && (o.Only == "" || o.Only == raters.OnlyCoefficients) {
		if o.Bootstrap, bootNote, err = analysis.PlanBootstrap(ds, o.Bootstrap, false, analysis.DefaultMaxBootstrapWork); err != nil {
			return err
		}
		if bootNote != "" {
			bootNote += "; --bootstrap N runs N replicates whatever the work"
		}
	}
	// The bootstrap's replicates, with an ETA, on a terminal.
	var bar *progressBar
	if o.Bootstrap > 0 {
		bar = newProgressBar(e, fmt.Sprintf("bootstrap (%d replicates)", o.Bootstrap))
	}
	o.Progress = func(done, total int) { bar.Set(float64(done)/float64(total), "") }
	rep, err := analysis.Agreement(ctx, ds, o)
	bar.Done()
	if err != nil {
		return err
	}
	if bootNote != "" {
		rep.Notes = append(rep.Notes, bootNote)
	}
	return writeAgreement(e, source, rep, *f.asJSON)
}

// loadAgreementDataset reads the labels of --project or --labels, with
// the labels' order in --labels (Loaded.FileOrder; nil for a project).
func loadAgreementDataset(ctx context.Context, e *env, f *agreementFlags) (*annotations.Dataset, string, []int32, error) {
	if *f.project != "" {
		if *f.labels != "" || *f.items != "" || *f.schemeSpec != "" || len(f.where) > 0 || f.rf.set() {
			return nil, "", nil, annotations.Errorf(annotations.EINVALID, "--labels, --items, --scheme, --where, --item-col, --rater-col, --label-col, --rater, --prob-col and --model-raters go with --labels, not --project")
		}
		st, err := openStore(ctx, e, *f.dsn)
		if err != nil {
			return nil, "", nil, err
		}
		defer st.Close()
		p, err := findProject(ctx, st, *f.project)
		if err != nil {
			return nil, "", nil, err
		}
		ds, err := st.Dataset(ctx, p.ID)
		if err != nil {
			return nil, "", nil, err
		}
		return ds, "project " + p.Name, nil, checkLabelled(ds, "project "+p.Name)
	}
	var scheme *annotations.Scheme
	if *f.schemeSpec != "" {
		s, err := annotations.ParseScheme(*f.schemeSpec)
		if err != nil {
			return nil, "", nil, err
		}
		scheme = &s
	}
	lo := annotations.LoadOptions{
		ReadOptions: annotations.ReadOptions{Format: annotations.Format(*f.format), Sheet: *f.sheet, Where: f.where, Duplicates: f.dups.mode},
		Scheme:      scheme,
		ItemsPath:   *f.items,
	}
	f.rf.apply(&lo.ReadOptions)
	var doneReading func()
	lo.Progress, doneReading = readingProgress(e)
	loaded, err := annotations.LoadFiles(*f.labels, lo)
	doneReading()
	if err != nil {
		return nil, "", nil, err
	}
	ds := loaded.Dataset
	if loaded.Inferred {
		fmt.Fprintf(e.stderr, "Inferred scheme %s (%s); pass --scheme to override.\n", ds.Scheme, loaded.Reason)
	}
	reportDuplicates(e, "agreement", ds)
	return ds, *f.labels, loaded.FileOrder, checkLabelled(ds, *f.labels)
}

// readDSInit reads --ds-init for the dataset's raters and categories (nil
// without the flag).
func readDSInit(path string, ds *annotations.Dataset) ([][]float64, error) {
	if path == "" {
		return nil, nil
	}
	rs, cats, err := analysis.ErrorMatricesTable(ds, "--ds-init")
	if err != nil {
		return nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "--ds-init: %v", err)
	}
	defer file.Close()
	return analysis.ReadErrorMatrices(path, file, rs, cats)
}

// readWeightsFile opens --weights-file's path and hands it to read.
func readWeightsFile(path string, read func(io.Reader) error) error {
	wf, err := os.Open(path)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "--weights-file: %v", err)
	}
	defer wf.Close()
	return read(wf)
}

func checkLabelled(ds *annotations.Dataset, source string) error {
	if len(ds.Labels) == 0 {
		return annotations.Errorf(annotations.EINVALID, "%s has no labels", source)
	}
	return nil
}

// runTableAgreement analyses --table or --counts.
func runTableAgreement(_ context.Context, e *env, f *agreementFlags, o raters.Options) error {
	for _, name := range []string{"labels", "items", "scheme", "where", "bootstrap", "pairs", "min-shared", "only", "ties", "random-start", "ds-restarts", "ds-smoothing", "ds-iter", "ds-tol", "ds-init", "ds-init-strategy", "ds-gold", "observed-categories", "complete-cases", "db"} {
		if f.given(name) {
			return annotations.Errorf(annotations.EINVALID, "--%s goes with labels (--project or --labels), not --table or --counts", name)
		}
	}
	kind, path := "table", *f.table
	read := analysis.ReadContingencyTable
	if *f.counts != "" {
		kind, path, read = "counts", *f.counts, analysis.ReadCounts
	}
	file, err := os.Open(path)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "--%s: %v", kind, err)
	}
	defer file.Close()
	in, err := read(path, file)
	if err != nil {
		return err
	}
	to := raters.TableOptions{Weights: o.Weights, ConfLevel: o.ConfLevel, CI: o.CI, Null: o.Null, Population: o.Population}
	if *f.weightsFile != "" {
		err := readWeightsFile(*f.weightsFile, func(r io.Reader) (err error) {
			to.WeightMatrix, err = analysis.ReadWeightMatrix(*f.weightsFile, r, len(in.Categories))
			return err
		})
		if err != nil {
			return err
		}
	}
	rep, err := analysis.TableAgreement(context.Background(), kind, in, to)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "%s: %s", path, annotations.ErrorMessage(err))
	}
	return writeAgreement(e, path, rep, *f.asJSON)
}

// writeAgreement prints the report as JSON or as tables.
func writeAgreement(e *env, source string, rep *analysis.AgreementReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		if rep.Raters <= raters.MaxMatrixRaters {
			enc.SetIndent("", "  ") // compact above: the indentation of per-rater rows would double the size
		}
		return enc.Encode(rep)
	}
	printAgreement(e.stdout, source, rep, 30)
	return nil
}

// printAgreement writes the report as readable tables.
func printAgreement(w io.Writer, source string, rep *analysis.AgreementReport, maxPairs int) {
	pct := fmt.Sprintf("%g%%", rep.ConfLevel*100)
	printAgreementHeader(w, source, rep, pct)
	printCoefficients(w, rep, pct)
	printWeighted(w, rep)
	printCategoryKappas(w, rep, pct)
	printCohen(w, rep, maxPairs)
	if rep.Input == "" {
		aggs := aggregatorOrder(rep)
		printAggregators(w, rep, aggs)
		printRaterRows(w, rep, aggs)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
}

func printAgreementHeader(w io.Writer, source string, rep *analysis.AgreementReport, pct string) {
	tests := "tests against 0"
	if rep.NullValue != nil {
		b, _ := json.Marshal(rep.NullValue)
		tests += " and " + string(b)
	}
	analytic := "t on the standard error"
	if rep.CI == raters.CINormal.String() {
		analytic = "normal on the standard error"
	}
	if rep.Population > 0 {
		analytic += fmt.Sprintf(", finite-population corrected for %d subjects", rep.Population)
	}
	switch {
	case rep.Input != "":
		fmt.Fprintf(w, "Agreement for %s: %s input, %d categories, %d items, %d labels\n", source, rep.Input, len(rep.Categories), rep.Items, rep.Labels)
		fmt.Fprintf(w, "Intervals: %s, analytic (%s, irrCAC's %s functions); %s\n", pct, analytic, map[string]string{"table": "table", "counts": "distribution"}[rep.Input], tests)
	case rep.Bootstrap > 0:
		fmt.Fprintf(w, "Agreement for %s: scheme %s (%s level), %d items, %d raters, %d labels\n", source, rep.Scheme, rep.Level, rep.Items, rep.Raters, rep.Labels)
		fmt.Fprintf(w, "Intervals: %s, bootstrap over items (%d replicates, seed %d); ICC: F-based; %s (%s)\n", pct, rep.Bootstrap, rep.Seed, tests, rep.CI)
	default:
		fmt.Fprintf(w, "Agreement for %s: scheme %s (%s level), %d items, %d raters, %d labels\n", source, rep.Scheme, rep.Level, rep.Items, rep.Raters, rep.Labels)
		fmt.Fprintf(w, "Intervals: %s, analytic (%s; ICC: F-based); %s\n", pct, analytic, tests)
	}
	fmt.Fprintln(w)
}

func printCoefficients(w io.Writer, rep *analysis.AgreementReport, pct string) {
	if rep.Only != "" && rep.Only != raters.OnlyCoefficients {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	withNull := rep.NullValue != nil
	head := fmt.Sprintf("Coefficient\tValue\tSE\t%s CI\tz\tp\t", pct)
	if withNull {
		head += "z (null)\tp (null)\t"
	}
	fmt.Fprintln(tw, head)
	row := func(name string, e *raters.Estimate) {
		if e == nil {
			return
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t", name, f4(e.Value), f4(e.SE), interval(e), f4(e.Z), pval(e.P))
		if withNull {
			line += fmt.Sprintf("%s\t%s\t", f4(e.ZNull), pval(e.PNull))
		}
		fmt.Fprintln(tw, line)
	}
	for _, m := range []string{"nominal", "ordinal", "interval", "ratio"} {
		if e, ok := rep.KrippendorffAlpha[m]; ok {
			row("Krippendorff's alpha ("+m+")", &e)
		}
	}
	if rep.Input == "table" && len(rep.CohenKappa) == 1 {
		row("Cohen's kappa", rep.CohenKappa[0].Unweighted)
	}
	row("Fleiss' kappa", rep.FleissKappa)
	row("Randolph's kappa", rep.RandolphKappa)
	row("Scott's pi", rep.ScottPi)
	row("Conger's kappa", rep.CongerKappa)
	row("Gwet's AC1", rep.GwetAC1)
	if rep.GwetAC2 != nil {
		row("Gwet's AC2 ("+rep.GwetAC2Weights+")", rep.GwetAC2)
	}
	row("Brennan-Prediger", rep.BrennanPrediger)
	row("Percent agreement", rep.PercentAgreement)
	if rep.ICC != nil {
		for _, x := range []struct {
			n string
			e raters.Estimate
		}{{"ICC(1,1)", rep.ICC.ICC1}, {"ICC(2,1)", rep.ICC.ICC2}, {"ICC(3,1)", rep.ICC.ICC3}, {"ICC(1,k)", rep.ICC.ICC1k}, {"ICC(2,k)", rep.ICC.ICC2k}, {"ICC(3,k)", rep.ICC.ICC3k}} {
			e := x.e
			row(x.n+" ["+rep.ICC.Method+"]", &e)
		}
	}
	tw.Flush()
	if rep.ICC != nil && rep.ICC.FTests != nil {
		// The ICCs' F tests against 0 (psych::ICC, pingouin): one for
		// ICC(1,*), one for ICC(2,*) and ICC(3,*).
		for _, x := range [][2]string{{"ICC(1,1), ICC(1,k)", "ICC1"}, {"ICC(2,*), ICC(3,*)", "ICC2"}} {
			ft := rep.ICC.FTests[x[1]]
			fmt.Fprintf(w, "F test of %s: F = %s on %g and %g df, p = %s\n", x[0], f4(float64(ft.F)), float64(ft.DF1), float64(ft.DF2), pval(float64(ft.P)))
		}
	}
}

func printWeighted(w io.Writer, rep *analysis.AgreementReport) {
	if len(rep.Weighted) == 0 {
		return
	}
	fmt.Fprintln(w)
	var names []string
	for n := range rep.Weighted {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if rep.Input == "table" {
		fmt.Fprintf(tw, "Weighted\tpercent agr.\tCohen\tScott\tAC2\tBP\talpha\t\n")
		for _, n := range names {
			s := rep.Weighted[n]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n, f4(s.PercentAgreement.Value), est(s.CohenKappa), est(s.ScottPi), f4(s.GwetAC2.Value), f4(s.BrennanPrediger.Value), f4(s.KrippendorffAlpha.Value))
		}
		tw.Flush()
		return
	}
	fmt.Fprintf(tw, "Weighted\tpercent agr.\tFleiss\tConger\tAC2\tBP\talpha\t\n")
	for _, n := range names {
		s := rep.Weighted[n]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n, f4(s.PercentAgreement.Value), f4(s.FleissKappa.Value), f4(s.CongerKappa.Value), f4(s.GwetAC2.Value), f4(s.BrennanPrediger.Value), f4(s.KrippendorffAlpha.Value))
	}
	tw.Flush()
}

func printCategoryKappas(w io.Writer, rep *analysis.AgreementReport, pct string) {
	if len(rep.FleissCategories) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Fleiss' kappa per category\tValue\tSE\t%s CI\t\n", pct)
	for _, c := range rep.FleissCategories {
		e := c.Estimate
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", c.Category, f4(e.Value), f4(e.SE), interval(&e))
	}
	tw.Flush()
}

func printCohen(w io.Writer, rep *analysis.AgreementReport, maxPairs int) {
	if len(rep.CohenKappa) == 0 || rep.Input != "" {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Cohen's kappa\titems\tunweighted\tlinear\tquadratic\t\n")
	for x, p := range rep.CohenKappa {
		if x == maxPairs {
			fmt.Fprintf(tw, "... %d more pairs (see --json)\t\t\t\t\t\n", len(rep.CohenKappa)-maxPairs)
			break
		}
		fmt.Fprintf(tw, "%s - %s\t%d\t%s\t%s\t%s\t\n", p.A, p.B, p.N, est(p.Unweighted), est(p.Linear), est(p.Quadratic))
	}
	tw.Flush()
}

// aggregatorOrder lists the report's aggregators in the reports' order,
// any others after them.
func aggregatorOrder(rep *analysis.AgreementReport) []string {
	var aggs, extra []string
	for _, n := range raters.AggregatorNames() {
		if rep.Aggregators[n] != nil {
			aggs = append(aggs, n)
		}
	}
	for n := range rep.Aggregators {
		if !slices.Contains(aggs, n) {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	return append(aggs, extra...)
}

func printAggregators(w io.Writer, rep *analysis.AgreementReport, aggs []string) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Aggregator\tconsensus classes\tdetails\t\n")
	for _, n := range aggs {
		c := rep.Aggregators[n]
		var details []string
		if c.Ties > 0 {
			details = append(details, fmt.Sprintf("%d ties (broken by the tie rule, --ties)", c.Ties))
		}
		switch {
		case c.Fit != nil && len(c.Fit.LogLik) > 0:
			details = append(details, fmt.Sprintf("%d iterations, converged %v, log-likelihood %.4f, best of %d runs (%s start)",
				c.Fit.Iterations, c.Fit.Converged, c.Fit.LogLik[len(c.Fit.LogLik)-1], len(c.Fit.Runs), c.Fit.Start))
		case c.Fit != nil:
			details = append(details, fmt.Sprintf("%d iterations, converged %v (%s start, seed %d)", c.Fit.Iterations, c.Fit.Converged, c.Fit.Start, c.Fit.Seed))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", n, priors(rep, c), strings.Join(details, "; "))
	}
	tw.Flush()
}

// printRaterRows writes each rater's agreement with every aggregator and
// each aggregator's own rater parameter (Wawa's weight, GLAD's ability,
// MACE's competence, ...).
func printRaterRows(w io.Writer, rep *analysis.AgreementReport, aggs []string) {
	var skills []string
	for _, n := range aggs {
		if c := rep.Aggregators[n]; len(c.Raters) > 0 && c.Raters[0].SkillKind != "" {
			skills = append(skills, n)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "Rater\tlabels"
	for _, n := range aggs {
		header += "\tvs " + n
	}
	ds, hasDS := rep.Aggregators["dawid_skene"]
	if hasDS {
		header += "\tDS accuracy"
	}
	for _, n := range skills {
		header += "\t" + n + " " + rep.Aggregators[n].Raters[0].SkillKind
	}
	fmt.Fprintln(tw, header+"\t")
	for j, p := range rep.Profiles {
		line := fmt.Sprintf("%s\t%d", p.Rater, p.Labels)
		for _, n := range aggs {
			line += "\t" + versus(p.AgreementWith[n])
		}
		if hasDS {
			line += "\t" + f4(ds.Raters[j].Accuracy)
		}
		for _, n := range skills {
			line += "\t" + f4(rep.Aggregators[n].Raters[j].Skill)
		}
		fmt.Fprintln(tw, line+"\t")
	}
	tw.Flush()
}

// versus is a rater's agreement with a consensus: the share of equal
// labels, or the MAE for continuous data.
func versus(a raters.ConsensusAgreement) string {
	if v := float64(a.Agreement); !math.IsNaN(v) {
		return f4(v)
	}
	return "MAE " + f4(float64(a.MAE))
}

// pval writes a p-value: 4 significant digits, "<1e-16" below.
func pval(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p < 1e-16:
		return "<1e-16"
	}
	return fmt.Sprintf("%.4g", p)
}

func f4(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.4f", v)
}

func interval(e *raters.Estimate) string {
	if math.IsNaN(e.CILow) || math.IsNaN(e.CIHigh) {
		return "-"
	}
	return fmt.Sprintf("[%.4f, %.4f] %s", e.CILow, e.CIHigh, e.CIMethod)
}

func est(e *raters.Estimate) string {
	if e == nil {
		return ""
	}
	return f4(e.Value)
}

func priors(rep *analysis.AgreementReport, c *raters.Consensus) string {
	if len(c.Priors) == 0 || len(rep.Categories) == 0 {
		return "-"
	}
	var parts []string
	for k, p := range c.Priors {
		parts = append(parts, fmt.Sprintf("%s %.3f", rep.Categories[k], p))
	}
	return strings.Join(parts, ", ")
}
