package main

import (
	"bytes"
	"context"
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
                  Charts; --out FILE or -
  --format csv    the Items and Raters tables as two CSV files: with --out DIR
                  (an existing directory, or a path ending in /) they are
                  DIR/NAME-items.csv and DIR/NAME-raters.csv (NAME from the
                  project); otherwise --out is a prefix: PREFIX-items.csv and
                  PREFIX-raters.csv (a trailing .csv is dropped)
  --format png    every plot as DIR/PLOT.png (DIR is --out, created if needed)
  --format svg    every plot as DIR/PLOT.svg
  --format all    all of the above into DIR, named after the project
Without --format, the format follows the extension of --out (.json, .xlsx, .csv).

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
`

func runReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report", "--fit FILE [--project NAME | --labels FILE [--items FILE]] [--format FORMAT] --out PATH", reportHelp)
	fitPath := fs.String("fit", "", `fit result (concord.fit/v1), "-" for standard input (required)`)
	dsn := dbFlag(fs)
	project := fs.String("project", "", "project whose labels, items and scheme go with the fit (from the database)")
	labels := fs.String("labels", "", "label file whose labels go with the fit (instead of --project)")
	items := fs.String("items", "", "items file for --labels (gold labels)")
	schemeSpec := fs.String("scheme", "", "label scheme of --labels (default: the scheme recorded in the fit)")
	labelsFormat := fs.String("labels-format", "auto", "format of --labels: auto|csv-long|csv-wide|xlsx|json|jsonl|labelstudio|doccano")
	dups := addDuplicatesFlag(fs)
	where := whereFlag{}
	fs.Var(where, "where", "keep only rows of --labels whose COLUMN=VALUE (repeatable), e.g. criterion=k1")
	name := fs.String("name", "", "project name shown in the report with --labels or the fit's own labels (default: from the file names)")
	format := fs.String("format", "", "json | xlsx | csv | png | svg | all (default: from the extension of --out)")
	out := fs.String("out", "", `output file, directory or prefix (see above); "-" for standard output with json and xlsx (required)`)
	noAgreement := fs.Bool("no-agreement", false, "leave out the agreement coefficients and baseline aggregators")
	boot := fs.Int("bootstrap", 1000, "bootstrap replicates for the agreement intervals (0: analytic intervals only)")
	seed := fs.Uint64("seed", 1, "seed of the agreement bootstrap and the Dawid-Skene random starts")
	noCharts := fs.Bool("no-charts", false, "xlsx: leave out the Charts sheet")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
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
	if *project != "" && *labels != "" {
		return annotations.Errorf(annotations.EINVALID, "give --project or --labels, not both")
	}
	if *labels == "" && (*items != "" || *schemeSpec != "" || len(where) > 0) {
		return annotations.Errorf(annotations.EINVALID, "--items, --scheme and --where go with --labels")
	}
	if *boot < 0 {
		return annotations.Errorf(annotations.EINVALID, "--bootstrap must be >= 0, got %d", *boot)
	}
	f := strings.ToLower(*format)
	if f == "" {
		switch strings.ToLower(filepath.Ext(*out)) {
		case ".json":
			f = "json"
		case ".xlsx":
			f = "xlsx"
		case ".csv":
			f = "csv"
		default:
			return annotations.Errorf(annotations.EINVALID, "give --format json|xlsx|csv|png|svg|all (the extension of --out %q does not say)", *out)
		}
	}
	switch f {
	case "json", "xlsx":
	case "csv", "png", "svg", "all":
		if *out == "-" {
			return annotations.Errorf(annotations.EINVALID, "--format %s writes several files: give a directory or prefix with --out, not -", f)
		}
	default:
		return annotations.Errorf(annotations.EINVALID, "unknown --format %q (expected json, xlsx, csv, png, svg or all)", *format)
	}

	fit, err := readFitFile(e, *fitPath)
	if err != nil {
		return err
	}

	// The project and the labels that go with the fit.
	var proj annotations.Project
	var ds *annotations.Dataset
	source := ""
	switch {
	case *project != "":
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
		proj = *p
		source = "project " + p.Name
	case *labels != "":
		opts := annotations.LoadOptions{ItemsPath: *items}
		opts.Format = annotations.Format(*labelsFormat)
		if len(where) > 0 {
			opts.Where = where
		}
		spec := *schemeSpec
		if spec == "" {
			spec = fit.Model.Scheme
		}
		if spec != "" {
			s, err := annotations.ParseScheme(spec)
			if err != nil {
				return err
			}
			opts.Scheme = &s
		}
		opts.Duplicates = dups.mode
		ld, err := annotations.LoadFiles(*labels, opts)
		if err != nil {
			return err
		}
		ds = ld.Dataset
		reportDuplicates(e, "report", ds)
		proj = annotations.Project{Name: *name, Scheme: ds.Scheme}
		if proj.Name == "" {
			proj.Name = strings.TrimSuffix(filepath.Base(*labels), filepath.Ext(*labels))
		}
		source = *labels
	default:
		proj.Name = *name
		if proj.Name == "" {
			proj.Name = "fit"
			if *fitPath != "-" {
				proj.Name = strings.TrimSuffix(filepath.Base(*fitPath), filepath.Ext(*fitPath))
			}
		}
		if fit.Model.Scheme != "" {
			s, err := annotations.ParseScheme(fit.Model.Scheme)
			if err != nil {
				return annotations.Errorf(annotations.EINVALID, "%s: the fit's scheme %q: %s", *fitPath, fit.Model.Scheme, annotations.ErrorMessage(err))
			}
			proj.Scheme = s
		} else if m := fit.Model; fit.Values() && m.Lo != nil && m.Hi != nil {
			proj.Scheme = annotations.Scheme{Kind: annotations.Bounded, Lo: *m.Lo, Hi: *m.Hi}
		} else {
			proj.Scheme = annotations.Scheme{Kind: annotations.Ordinal}
			if fit.Classification() {
				proj.Scheme.Kind = annotations.Nominal
			}
			for _, l := range fit.Levels {
				proj.Scheme.Levels = append(proj.Scheme.Levels, annotations.Level{Code: l})
			}
		}
		ds = fit.Dataset(proj.Scheme)
		source = "the labels recorded in " + *fitPath
	}

	var agr *raters.Report
	if !*noAgreement {
		if ds == nil || len(ds.Labels) == 0 {
			fmt.Fprintf(e.stderr, "concord report: no labels (%s records none): the report has no agreement coefficients\n", *fitPath)
		} else {
			if n := fitLabels(fit); n > 0 && n != len(ds.Labels) {
				fmt.Fprintf(e.stderr, "concord report: warning: %s has %d labels but the fit was made from %d; check that they belong together (e.g. --where)\n", source, len(ds.Labels), n)
			}
			b := *boot
			if b == 0 {
				b = -1
			}
			ag, err := analysis.Agreement(ctx, ds, raters.Options{Bootstrap: b, Seed: *seed})
			if err != nil {
				fmt.Fprintf(e.stderr, "concord report: no agreement coefficients: %s\n", annotations.ErrorMessage(err))
			} else {
				agr = ag.Report
			}
		}
	}
	rep, err := reports.BuildFit(proj, fit, agr, ds)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "%s", strings.TrimPrefix(err.Error(), "reports: "))
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
		return []string{items, raters}, nil
	case "png", "svg":
		return reports.WritePlots(out, rep, f)
	case "all":
		return reports.WriteAll(out, rep)
	}
	return nil, fmt.Errorf("unknown format %q", f)
}
