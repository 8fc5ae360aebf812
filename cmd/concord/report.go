package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"concord/analysis"
	"concord/annotations"
	"concord/raters"
	"concord/reports"
)

const reportHelp = `
Render a fit result (the concord.fit/v1 document written by concord fit) as a
report: the concord.report/v1 JSON document, an Excel workbook, CSV tables or
plots. See docs/reports.md.

  --format json   the report document (schema docs/report-schema.json); --out FILE or -
  --format xlsx   the workbook: Summary, Items, Raters, Thresholds or Classes
                  (neither for bounded ratings), Agreement, Diagnostics, Flags,
                  Label errors (robust fits), Charts; --out FILE or -
  --format csv    the Items and Raters tables as two CSV files: with --out DIR
                  (an existing directory, or a path ending in /) they are
                  DIR/NAME-items.csv and DIR/NAME-raters.csv (NAME from the
                  project); otherwise --out is a prefix: PREFIX-items.csv and
                  PREFIX-raters.csv (a trailing .csv is dropped); a robust fit
                  adds the label errors (every label by p_error) as
                  NAME-label-errors.csv or PREFIX-label-errors.csv
  --format png    every plot as DIR/PLOT.png (DIR is --out, created if needed)
  --format svg    every plot as DIR/PLOT.svg
  --format all    all of the above into DIR, named after the project
Without --format, the format follows the extension of --out (.json, .xlsx, .csv).

The consensus back into the annotation tool (--out FILE or -):
  --format labelstudio  Label Studio tasks with predictions: per task its id,
                  and predictions [{model_version (the fit), score
                  (P(consensus)), result [{from_name, to_name, type, value}]}].
                  Task ids and control names are those of the Label Studio
                  import (--project, or --labels with the export); else the
                  item ids and --from-name/--to-name. The type is the
                  control's (choices, rating, number), else rating for an
                  ordinal fit of integer levels, choices otherwise (--type)
  --format doccano      doccano JSON Lines: {"id", "text", "label": [...], "score"}
  --format crowdkit     crowd-kit's aggregation table: task,label,prob
                  (a bounded fit: task,label,sd, its predictive mean and sd)
                  These formats take labels: an auc fit, which ranks items
                  by a score, is refused (write it as json, xlsx or csv).

Agreement coefficients and the baseline aggregators (majority vote,
Dawid-Skene, ...) need the labels. They come from the project (--project,
with --db), from label files (--labels, as for concord fit), or else from the
labels the fit result records for every item. --no-agreement leaves them out.
Gold labels (for accuracy and ROC curves of binary schemes) come from the
project's items or the --items file.

Examples:
  concord report --fit k1.json --out k1.xlsx
  concord report --fit k1.json --format png --out k1-plots
  concord report --fit rte.json --project rte --format all --out reports/
  concord report --fit k1.json --labels ratings.csv --where criterion=k1 --format json --out -
  concord report --fit k1.json --labels ratings.csv --where criterion=k1 --ci normal --null 0.4 --out k1.xlsx
  concord report --fit sentiment.json --project sentiment --format labelstudio --out predictions.json
  concord report --fit k1.json --format labelstudio --from-name grade --to-name essay --out -
`

func runReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report", "--fit FILE [--project NAME | --labels FILE [--items FILE]] [--format FORMAT] --out PATH", reportHelp)
	fitPath := fs.String("fit", "", `fit result (concord.fit/v1), "-" for standard input (required)`)
	src := addSourceFlags(fs, sourceHelp{
		project:    "project whose labels, items and scheme go with the fit (from the database)",
		labels:     "label file whose labels go with the fit (instead of --project)",
		items:      "items file for --labels (gold labels)",
		scheme:     "label scheme of --labels (default: the scheme recorded in the fit)",
		formatFlag: "labels-format",
		format:     "format of --labels: auto|csv-long|csv-wide|xlsx|json|jsonl|labelstudio|doccano",
		where:      "keep only rows of --labels whose COLUMN=VALUE (repeatable), e.g. criterion=k1",
	})
	fromName := fs.String("from-name", "", "labelstudio: the control's name (default: the Label Studio import's)")
	toName := fs.String("to-name", "", "labelstudio: the name of the object the control labels (default: the Label Studio import's)")
	lsType := fs.String("type", "", "labelstudio: result type choices|rating|number (default: the import's, else from the fit)")
	name := fs.String("name", "", "project name shown in the report with --labels or the fit's own labels (default: from the file names)")
	format := fs.String("format", "", "json | xlsx | csv | png | svg | all | labelstudio | doccano | crowdkit (default: from the extension of --out)")
	out := fs.String("out", "", `output file, directory or prefix (see above); "-" for standard output with json and xlsx (required)`)
	noAgreement := fs.Bool("no-agreement", false, "leave out the agreement coefficients and baseline aggregators")
	boot := fs.Int("bootstrap", 1000, "bootstrap replicates for the agreement intervals (0: analytic intervals only)")
	seed := fs.Uint64("seed", 1, "seed of the agreement bootstrap and the Dawid-Skene random starts")
	ci := fs.String("ci", "t", "agreement coefficients' tests and analytic intervals: t (irrCAC's) or normal (statsmodels' and SAS's); given, the intervals are these instead of the bootstrap's unless --bootstrap is given too")
	null := fs.String("null", "", "also test every agreement coefficient against this value (z and p-value vs it in the JSON and the workbook's Agreement sheet), e.g. 0.5")
	ties := fs.String("ties", "frequent", "majority-vote and Wawa tie rule of the baselines: frequent (the tied class with the most labels) or first (the first in sorted order of the class codes, crowd-kit's rule)")
	noCharts := fs.Bool("no-charts", false, "xlsx: leave out the Charts sheet")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	tieRule, err := raters.ParseTieRule(*ties)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "--ties %q: expected frequent or first", *ties)
	}
	if len(pos) > 0 {
		return annotations.Errorf(annotations.EINVALID, "unexpected argument %q (give the fit result with --fit)", pos[0])
	}
	if *fitPath == "" {
		return annotations.Errorf(annotations.EINVALID, "--fit is required: the result file of concord fit")
	}
	if *out == "" {
		return annotations.Errorf(annotations.EINVALID, "--out is required")
	}
	if *src.project != "" && *src.labels != "" {
		return annotations.Errorf(annotations.EINVALID, "give --project or --labels, not both")
	}
	if *src.labels == "" && (*src.items != "" || *src.scheme != "" || len(src.where) > 0 || src.rf.set()) {
		return annotations.Errorf(annotations.EINVALID, "--items, --scheme, --where, --item-col, --rater-col, --label-col, --rater, --prob-col and --model-raters go with --labels")
	}
	if *boot < 0 {
		return annotations.Errorf(annotations.EINVALID, "--bootstrap must be >= 0, got %d", *boot)
	}
	ciKind, err := analysis.ParseCI(*ci)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "--ci %s", err)
	}
	nullValue, err := analysis.ParseNull(*null)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "--null %s", err)
	}
	if flagGiven(fs, "ci") && !flagGiven(fs, "bootstrap") {
		*boot = 0 // an explicit --ci asks for its analytic intervals
	}
	f, tool, err := reportFormat(*format, *out, *fromName != "" || *toName != "" || *lsType != "")
	if err != nil {
		return err
	}

	fit, err := readFitFile(e, *fitPath)
	if err != nil {
		return err
	}

	// The project and the labels that go with the fit.
	rs := reportSource{sourceFlags: src, name: *name, fitPath: *fitPath}
	proj, ds, source, err := rs.load(ctx, e, fit)
	if err != nil {
		return err
	}

	var agr *raters.Report
	if !*noAgreement && !tool {
		agr = reportAgreement(ctx, e, fit, *fitPath, ds, source, raters.Options{Bootstrap: *boot, Seed: *seed, Ties: tieRule, CI: ciKind, Null: nullValue})
	}
	rep, err := reports.BuildFit(proj, fit, agr, ds)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "%s", strings.TrimPrefix(err.Error(), "reports: "))
	}

	if tool {
		to := reports.ToolOptions{FromName: *fromName, ToName: *toName, Type: *lsType, ModelVersion: modelVersion(fit, *fitPath)}
		if ds != nil {
			to.Items = ds.Items
		}
		return writeTool(e, rep, f, *out, to, source)
	}
	paths, err := writeReport(e, rep, f, *out, reports.XLSXOptions{NoCharts: *noCharts})
	if err != nil {
		return err
	}
	if *out != "-" {
		d := rep.Diagnostics
		state := "converged"
		if !d.Converged {
			state = "NOT converged: do not rely on these numbers"
		}
		fmt.Fprintf(e.stdout, "Report of %s (%s model, %d items, %d raters, %d labels; %s):\n", rep.Project.Name, rep.Model.Model, rep.Summary.Items, rep.Summary.Raters, rep.Summary.Labels, state)
		for _, p := range paths {
			fmt.Fprintf(e.stdout, "  %s\n", p)
		}
	}
	return nil
}

// reportFormat returns the report's format (from --format, else from the
// extension of out) and whether it is a labelling tool's (tool); the
// tool's flags (toolFlags) go with those only.
func reportFormat(format, out string, toolFlags bool) (f string, tool bool, err error) {
	f = strings.ToLower(format)
	if f == "" {
		switch strings.ToLower(filepath.Ext(out)) {
		case ".json":
			f = "json"
		case ".xlsx":
			f = "xlsx"
		case ".csv":
			f = "csv"
		default:
			return "", false, annotations.Errorf(annotations.EINVALID, "give --format json|xlsx|csv|png|svg|all (the extension of --out %q does not say)", out)
		}
	}
	tool = f == "labelstudio" || f == "doccano" || f == "crowdkit"
	if !tool && toolFlags {
		return "", false, annotations.Errorf(annotations.EINVALID, "--from-name, --to-name and --type go with --format labelstudio")
	}
	switch f {
	case "json", "xlsx", "labelstudio", "doccano", "crowdkit":
	case "csv", "png", "svg", "all":
		if out == "-" {
			return "", false, annotations.Errorf(annotations.EINVALID, "--format %s writes several files: give a directory or prefix with --out, not -", f)
		}
	default:
		return "", false, annotations.Errorf(annotations.EINVALID, "unknown --format %q (expected json, xlsx, csv, png, svg, all, labelstudio, doccano or crowdkit)", format)
	}
	return f, tool, nil
}

// reportSource says where the labels that go with a fit come from: a
// project of the database, label files, or the fit's own record.
type reportSource struct {
	*sourceFlags
	name, fitPath string
}

// load returns the project, the dataset and a description of its source.
func (r reportSource) load(ctx context.Context, e *env, fit *reports.Fit) (annotations.Project, *annotations.Dataset, string, error) {
	switch {
	case *r.project != "":
		p, ds, err := projectDataset(ctx, e, *r.dsn, *r.project)
		if err != nil {
			return annotations.Project{}, nil, "", err
		}
		return *p, ds, "project " + p.Name, nil
	case *r.labels != "":
		proj, ds, err := r.loadFiles(e, fit)
		return proj, ds, *r.labels, err
	}
	proj, err := r.fitProject(fit)
	if err != nil {
		return proj, nil, "", err
	}
	return proj, fit.Dataset(proj.Scheme), "the labels recorded in " + r.fitPath, nil
}

// loadFiles reads the label files (the fit's scheme unless one is given).
func (r reportSource) loadFiles(e *env, fit *reports.Fit) (annotations.Project, *annotations.Dataset, error) {
	opts := r.loadOptions()
	spec := *r.scheme
	if spec == "" {
		spec = fit.Model.Scheme
	}
	if spec != "" {
		s, err := annotations.ParseScheme(spec)
		if err != nil {
			return annotations.Project{}, nil, err
		}
		opts.Scheme = &s
	}
	ld, err := readLabelFiles(e, []string{*r.labels}, opts)
	if err != nil {
		return annotations.Project{}, nil, err
	}
	ds := ld.Dataset
	reportDuplicates(e, "report", ds)
	proj := annotations.Project{Name: r.name, Scheme: ds.Scheme}
	if proj.Name == "" {
		proj.Name = strings.TrimSuffix(filepath.Base(*r.labels), filepath.Ext(*r.labels))
	}
	return proj, ds, nil
}

// fitProject is the project of a fit reported on its own: named after the
// fit file, with the fit's scheme (or one made from its levels).
func (r reportSource) fitProject(fit *reports.Fit) (annotations.Project, error) {
	proj := annotations.Project{Name: r.name}
	if proj.Name == "" {
		proj.Name = "fit"
		if r.fitPath != "-" {
			proj.Name = strings.TrimSuffix(filepath.Base(r.fitPath), filepath.Ext(r.fitPath))
		}
	}
	switch m := fit.Model; {
	case m.Scheme != "":
		s, err := annotations.ParseScheme(m.Scheme)
		if err != nil {
			return proj, annotations.Errorf(annotations.EINVALID, "%s: the fit's scheme %q: %s", r.fitPath, m.Scheme, annotations.ErrorMessage(err))
		}
		proj.Scheme = s
	case fit.Values() && m.Lo != nil && m.Hi != nil:
		proj.Scheme = annotations.Scheme{Kind: annotations.Bounded, Lo: *m.Lo, Hi: *m.Hi}
	default:
		proj.Scheme = annotations.Scheme{Kind: annotations.Ordinal}
		if fit.Classification() {
			proj.Scheme.Kind = annotations.Nominal
		}
		for _, l := range fit.Levels {
			proj.Scheme.Levels = append(proj.Scheme.Levels, annotations.Level{Code: l})
		}
	}
	return proj, nil
}

// reportAgreement computes the agreement coefficients of the labels ds
// that go with fit (nil, said on stderr, when there are none or they
// fail); a bootstrap of 0 is analytic intervals only.
func reportAgreement(ctx context.Context, e *env, fit *reports.Fit, fitPath string, ds *annotations.Dataset, source string, o raters.Options) *raters.Report {
	if ds == nil || len(ds.Labels) == 0 {
		fmt.Fprintf(e.stderr, "concord report: no labels (%s records none): the report has no agreement coefficients\n", fitPath)
		return nil
	}
	if n := fitLabels(fit); n > 0 && n != len(ds.Labels) {
		fmt.Fprintf(e.stderr, "concord report: warning: %s has %d labels but the fit was made from %d; check that they belong together (e.g. --where)\n", source, len(ds.Labels), n)
	}
	if o.Bootstrap == 0 {
		o.Bootstrap = -1
	}
	ag, err := analysis.Agreement(ctx, ds, o)
	if err != nil {
		fmt.Fprintf(e.stderr, "concord report: no agreement coefficients: %s\n", annotations.ErrorMessage(err))
		return nil
	}
	return ag.Report
}

// readFitFile reads a fit result from a file or standard input.
func readFitFile(e *env, path string) (*reports.Fit, error) {
	var r io.Reader = e.stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			if os.IsNotExist(err) {
				return nil, annotations.Errorf(annotations.ENOTFOUND, "%s: no such file", path)
			}
			return nil, annotations.Errorf(annotations.EINVALID, "cannot open %s: %v", path, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "cannot read %s: %v", path, err)
	}
	name := path
	if path == "-" {
		name = "standard input"
	}
	if err := checkFitSchema(name, b); err != nil {
		return nil, err
	}
	fit, err := reports.ReadFit(bytes.NewReader(b))
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: %s", path, err)
	}
	return fit, nil
}

func fitLabels(fit *reports.Fit) int {
	n := 0
	for _, r := range fit.Raters {
		n += r.NLabels
	}
	return n
}

// writeReport renders the report in format f to out and returns the paths
// written.
func writeReport(e *env, rep *reports.Report, f, out string, xo reports.XLSXOptions) ([]string, error) {
	one := func(fn func(io.Writer) error) ([]string, error) {
		if out == "-" {
			return nil, fn(e.stdout)
		}
		if dir := filepath.Dir(out); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		if err := reports.WriteFile(out, fn); err != nil {
			return nil, err
		}
		return []string{out}, nil
	}
	switch f {
	case "json":
		return one(func(w io.Writer) error { return reports.WriteJSON(w, rep) })
	case "xlsx":
		return one(func(w io.Writer) error { return reports.WriteXLSX(w, rep, xo) })
	case "csv":
		prefix := strings.TrimSuffix(out, ".csv")
		if st, err := os.Stat(out); (err == nil && st.IsDir()) || strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(os.PathSeparator)) {
			if err := os.MkdirAll(out, 0o755); err != nil {
				return nil, err
			}
			prefix = filepath.Join(out, reports.FileBase(rep))
		} else if dir := filepath.Dir(prefix); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		items, raters := prefix+"-items.csv", prefix+"-raters.csv"
		if err := reports.WriteFile(items, func(w io.Writer) error { return reports.WriteItemsCSV(w, rep) }); err != nil {
			return nil, err
		}
		if err := reports.WriteFile(raters, func(w io.Writer) error { return reports.WriteRatersCSV(w, rep) }); err != nil {
			return []string{items}, err
		}
		if len(rep.LabelErrors) == 0 {
			return []string{items, raters}, nil
		}
		errs := prefix + "-label-errors.csv"
		if err := reports.WriteFile(errs, func(w io.Writer) error { return reports.WriteLabelErrorsCSV(w, rep) }); err != nil {
			return []string{items, raters}, err
		}
		return []string{items, raters, errs}, nil
	case "png", "svg":
		return reports.WritePlots(out, rep, f)
	case "all":
		return reports.WriteAll(out, rep)
	}
	return nil, fmt.Errorf("unknown format %q", f)
}

// modelVersion names a fit in the predictions written back to the
// annotation tool: the fit file, the model and engine, and the seed.
func modelVersion(fit *reports.Fit, path string) string {
	name := "fit"
	if path != "-" {
		name = filepath.Base(path)
	}
	m := fit.Model.Model
	if fit.Model.Engine != "" {
		m += "/" + fit.Model.Engine
	}
	return fmt.Sprintf("concord %s %s seed %d", name, m, fit.Model.Seed)
}

// writeTool writes the consensus in an annotation tool's format.
func writeTool(e *env, rep *reports.Report, f, out string, to reports.ToolOptions, source string) error {
	var write func(io.Writer) error
	switch f {
	case "labelstudio":
		write = func(w io.Writer) error { return reports.WriteLabelStudio(w, rep, to) }
	case "doccano":
		write = func(w io.Writer) error { return reports.WriteDoccano(w, rep, to) }
	default:
		write = func(w io.Writer) error { return reports.WriteCrowdKit(w, rep, to) }
	}
	err := writeTo(e, out, write)
	if errors.Is(err, reports.ErrControlNames) {
		return annotations.Errorf(annotations.EINVALID, "the Label Studio control names are not known from %s (they are kept by a Label Studio JSON import; JSON-MIN and CSV exports do not hold to_name): give --from-name NAME and --to-name NAME, the name and toName of the control in the labelling config (e.g. <Choices name=\"sentiment\" toName=\"text\">)", source)
	}
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "%s", strings.TrimPrefix(err.Error(), "reports: "))
	}
	if out != "-" {
		fmt.Fprintf(e.stdout, "Wrote the consensus of %d items of %s to %s (%s)\n", len(rep.Items), rep.Project.Name, out, f)
	}
	return nil
}
