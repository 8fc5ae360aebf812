package main

import (
	"context"
	"encoding/json"
	goflag "flag"
	"fmt"
	"io"
	"math"
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

The default bootstrap is bounded: past 2e8 resampled labels and rater pairs
it runs fewer replicates, or none (analytic intervals) below 100, and a note
says so; an explicit --bootstrap N runs N replicates. Replicates run in
parallel on every core.

Examples:
  concord agreement --project essays
  concord agreement --labels ratings.csv --scheme ordinal:0..3 --where criterion=k1
  concord agreement --labels rte.csv --scheme binary:0,1,pos=1 --json > agreement.json
`

func runAgreement(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agreement", "(--project NAME [--db PATH] | --labels FILE [--items FILE] [--scheme SPEC]) [--json]", agreementHelp)
	dsn := dbFlag(fs)
	project := fs.String("project", "", "project name (reads the project's labels from the database)")
	labels := fs.String("labels", "", "label file (instead of --project)")
	items := fs.String("items", "", "items file for --labels (item ids and texts)")
	schemeSpec := fs.String("scheme", "", "label scheme for --labels, e.g. ordinal:1..5 (default: inferred and shown)")
	format := fs.String("format", "auto", "format of --labels: auto|csv-long|csv-wide|xlsx|json|jsonl|labelstudio|doccano")
	sheet := fs.String("sheet", "", "XLSX sheet name (default: the first sheet)")
	dups := addDuplicatesFlag(fs)
	rf := addReadFlags(fs)
	where := whereFlag{}
	fs.Var(where, "where", "keep only rows of --labels whose COLUMN=VALUE (repeatable), e.g. criterion=k1")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	boot := fs.Int("bootstrap", 1000, "bootstrap replicates for the intervals (0: analytic intervals only)")
	seed := fs.Uint64("seed", 1, "seed of the bootstrap and of the Dawid-Skene and MACE random starts")
	conf := fs.Float64("conf-level", 0.95, "confidence level of the intervals")
	observed := fs.Bool("observed-categories", false, "use only the categories that occur in the data (irrCAC without categ.labels) instead of all the scheme's levels")
	complete := fs.Bool("complete-cases", false, "ICC on the items every rater rated (classical ANOVA) instead of REML on all ratings")
	restarts := fs.Int("ds-restarts", 0, "Dawid-Skene random restarts besides the majority-vote start (each replaces it only when its log-likelihood is at least 2 higher; on sparse designs they can find spurious optima)")
	smoothing := fs.Float64("ds-smoothing", 0, "Dawid-Skene pseudo-count added to every class and confusion count (MAP under a Dirichlet prior; 0: maximum likelihood as in Dawid & Skene 1979)")
	pairsFlag := fs.String("pairs", "", fmt.Sprintf("rater pairs of the pairwise statistics: all (every pair sharing an item) or at most N, those sharing the most items (default: every pair sharing an item up to %d raters; above, those sharing at least --min-shared items, at most %d)", raters.MaxMatrixRaters, raters.DefaultMaxPairs))
	minShared := fs.Int("min-shared", 0, fmt.Sprintf("fewest items a rater pair must share for its pairwise statistics (0: 1 up to %d raters, %d above)", raters.MaxMatrixRaters, raters.DefaultMinShared))
	only := fs.String("only", "", "compute one part only: coefficients, aggregators, items (per-item agreement) or raters (profiles and per-rater agreement)")
	ties := fs.String("ties", "frequent", "majority-vote and Wawa tie rule: frequent (the tied class with the most labels in the file) or first (the first in sorted order of the class codes, crowd-kit's rule)")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return annotations.Errorf(annotations.EINVALID, "unexpected argument %q (give the label file with --labels)", pos[0])
	}
	if (*project == "") == (*labels == "") {
		return annotations.Errorf(annotations.EINVALID, "give either --project NAME or --labels FILE")
	}
	if !(*conf > 0 && *conf < 1) {
		return annotations.Errorf(annotations.EINVALID, "--conf-level must be between 0 and 1, got %v", *conf)
	}
	if *boot < 0 {
		return annotations.Errorf(annotations.EINVALID, "--bootstrap must be >= 0, got %d", *boot)
	}
	pairs, err := analysis.ParsePairs(*pairsFlag)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "--pairs %s", err)
	}
	if *minShared < 0 {
		return annotations.Errorf(annotations.EINVALID, "--min-shared must be >= 0, got %d", *minShared)
	}
	pairs.MinShared = *minShared
	part, err := analysis.ParseOnly(*only)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "--only %s", err)
	}
	tieRule, err := raters.ParseTieRule(*ties)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "--ties %q: expected frequent or first", *ties)
	}
	bootGiven := false
	fs.Visit(func(f *goflag.Flag) { bootGiven = bootGiven || f.Name == "bootstrap" })

	var ds *annotations.Dataset
	source := ""
	if *project != "" {
		if *labels != "" || *items != "" || *schemeSpec != "" || len(where) > 0 || rf.set() {
			return annotations.Errorf(annotations.EINVALID, "--labels, --items, --scheme, --where, --item-col, --rater-col, --label-col, --rater, --prob-col and --model-raters go with --labels, not --project")
		}
		st, err := openStore(ctx, e, *dsn)
		if err != nil {
			return err
		}
		defer st.Close()
		p, err := findProject(ctx, st, *project)
		if err != nil {
			return err
		}
		if ds, err = st.Dataset(ctx, p.ID); err != nil {
			return err
		}
		source = "project " + p.Name
	} else {
		var scheme *annotations.Scheme
		if *schemeSpec != "" {
			s, err := annotations.ParseScheme(*schemeSpec)
			if err != nil {
				return err
			}
			scheme = &s
		}
		lo := annotations.LoadOptions{
			ReadOptions: annotations.ReadOptions{Format: annotations.Format(*format), Sheet: *sheet, Where: where, Duplicates: dups.mode},
			Scheme:      scheme,
			ItemsPath:   *items,
		}
		rf.apply(&lo.ReadOptions)
		var doneReading func()
		lo.Progress, doneReading = readingProgress(e)
		loaded, err := annotations.LoadFiles(*labels, lo)
		doneReading()
		if err != nil {
			return err
		}
		ds = loaded.Dataset
		if loaded.Inferred {
			fmt.Fprintf(e.stderr, "Inferred scheme %s (%s); pass --scheme to override.\n", ds.Scheme, loaded.Reason)
		}
		reportDuplicates(e, "agreement", ds)
		source = *labels
	}
	if len(ds.Labels) == 0 {
		return annotations.Errorf(annotations.EINVALID, "%s has no labels", source)
	}
	b := *boot
	if b == 0 {
		b = -1
	}
	// The default bootstrap is bounded like the server's (fewer replicates,
	// or analytic intervals, past DefaultMaxBootstrapWork, with a note); an
	// explicit --bootstrap runs as asked.
	bootNote := ""
	if !bootGiven && part != raters.OnlyAggregators && part != raters.OnlyItems && part != raters.OnlyRaters {
		if b, bootNote, err = analysis.PlanBootstrap(ds, b, false, analysis.DefaultMaxBootstrapWork); err != nil {
			return err
		}
		if bootNote != "" {
			bootNote += "; --bootstrap N runs N replicates whatever the work"
		}
	}
	if *smoothing < 0 {
		return annotations.Errorf(annotations.EINVALID, "--ds-smoothing must be at least 0, got %g", *smoothing)
	}
	r := *restarts
	if r == 0 {
		r = -1
	}
	// The bootstrap's replicates, with an ETA, on a terminal.
	var bar *progressBar
	if b > 0 {
		bar = newProgressBar(e, fmt.Sprintf("bootstrap (%d replicates)", b))
	}
	rep, err := analysis.Agreement(ctx, ds, raters.Options{
		Progress:  func(done, total int) { bar.Set(float64(done)/float64(total), "") },
		Bootstrap: b, Seed: *seed, ConfLevel: *conf,
		ObservedCategoriesOnly: *observed,
		ICC:                    raters.ICCOptions{CompleteCasesOnly: *complete},
		DS:                     raters.DSOptions{Restarts: r, Smoothing: *smoothing},
		Pairs:                  pairs,
		Only:                   part,
		Ties:                   tieRule,
		MaxItemRows:            raters.DefaultMaxItemRows,
	})
	bar.Done()
	if err != nil {
		return err
	}
	if bootNote != "" {
		rep.Notes = append(rep.Notes, bootNote)
	}
	if *asJSON {
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
	fmt.Fprintf(w, "Agreement for %s: scheme %s (%s level), %d items, %d raters, %d labels\n",
		source, rep.Scheme, rep.Level, rep.Items, rep.Raters, rep.Labels)
	if rep.Bootstrap > 0 {
		fmt.Fprintf(w, "Intervals: %s, bootstrap over items (%d replicates, seed %d); ICC: F-based\n", pct, rep.Bootstrap, rep.Seed)
	} else {
		fmt.Fprintf(w, "Intervals: %s, analytic (t on the standard error; ICC: F-based)\n", pct)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Coefficient\tValue\tSE\t%s CI\t\n", pct)
	row := func(name string, e *raters.Estimate) {
		if e == nil {
			return
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, f4(e.Value), f4(e.SE), interval(e))
	}
	for _, m := range []string{"nominal", "ordinal", "interval", "ratio"} {
		if e, ok := rep.KrippendorffAlpha[m]; ok {
			row("Krippendorff's alpha ("+m+")", &e)
		}
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

	if len(rep.Weighted) > 0 {
		fmt.Fprintln(w)
		var names []string
		for n := range rep.Weighted {
			names = append(names, n)
		}
		sort.Strings(names)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "Weighted\tpercent agr.\tFleiss\tConger\tAC2\tBP\talpha\t\n")
		for _, n := range names {
			s := rep.Weighted[n]
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n, f4(s.PercentAgreement.Value), f4(s.FleissKappa.Value), f4(s.CongerKappa.Value), f4(s.GwetAC2.Value), f4(s.BrennanPrediger.Value), f4(s.KrippendorffAlpha.Value))
		}
		tw.Flush()
	}

	if len(rep.FleissCategories) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "Fleiss' kappa per category\tValue\tSE\t%s CI\t\n", pct)
		for _, c := range rep.FleissCategories {
			e := c.Estimate
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", c.Category, f4(e.Value), f4(e.SE), interval(&e))
		}
		tw.Flush()
	}

	if len(rep.CohenKappa) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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

	fmt.Fprintln(w)
	// The aggregators in the reports' order, any others after them.
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
	aggs = append(aggs, extra...)
	// Each aggregator's own rater parameter (Wawa's weight, GLAD's
	// ability, MACE's competence) gets a column.
	var skills []string
	for _, n := range aggs {
		if c := rep.Aggregators[n]; len(c.Raters) > 0 && c.Raters[0].SkillKind != "" {
			skills = append(skills, n)
		}
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Aggregator\tconsensus classes\tdetails\t\n")
	for _, n := range aggs {
		c := rep.Aggregators[n]
		var details []string
		if c.Ties > 0 {
			details = append(details, fmt.Sprintf("%d ties (broken by overall frequency, then lowest level)", c.Ties))
		}
		if c.Fit != nil {
			details = append(details, fmt.Sprintf("%d iterations, converged %v, log-likelihood %.4f, best of %d runs (%s start)",
				c.Fit.Iterations, c.Fit.Converged, c.Fit.LogLik[len(c.Fit.LogLik)-1], len(c.Fit.Runs), c.Fit.Start))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", n, priors(rep, c), strings.Join(details, "; "))
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "Rater\tlabels"
	for _, n := range aggs {
		header += "\tvs " + n
	}
	if _, ok := rep.Aggregators["dawid_skene"]; ok {
		header += "\tDS accuracy"
	}
	for _, n := range skills {
		header += "\t" + n + " " + rep.Aggregators[n].Raters[0].SkillKind
	}
	fmt.Fprintln(tw, header+"\t")
	for j, p := range rep.Profiles {
		line := fmt.Sprintf("%s\t%d", p.Rater, p.Labels)
		for _, n := range aggs {
			a := p.AgreementWith[n]
			if v := float64(a.Agreement); !math.IsNaN(v) {
				line += "\t" + f4(v)
			} else {
				line += "\tMAE " + f4(float64(a.MAE))
			}
		}
		if ds, ok := rep.Aggregators["dawid_skene"]; ok {
			line += "\t" + f4(ds.Raters[j].Accuracy)
		}
		for _, n := range skills {
			line += "\t" + f4(rep.Aggregators[n].Raters[j].Skill)
		}
		fmt.Fprintln(tw, line+"\t")
	}
	tw.Flush()
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
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
