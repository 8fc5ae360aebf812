package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"concord/annotations"
)

const importHelp = `
Import a label file into a project, creating the project if it does not exist.
The whole import is one transaction: when any row is bad nothing is written and
every problem is reported with its file, line or row, column and what was
expected. Re-importing the same file changes nothing; a label that differs from
the stored label of the same (item, rater) is an error unless --replace is given.

Repeated labels (one rater labelling the same item more than once, as crowd
exports often hold) are refused by default; --duplicates keep stores them all as
separate observations (the models count each; agreement coefficients use each
rater's first), --duplicates first keeps the first and reports how many were
dropped. Kept repeats are matched with stored ones by position on re-import.

Formats (detected from the content unless --format is given):
  csv-long     item_id,rater_id,label (also task,worker,label and item,annotator,value; TSV too)
  csv-wide     one row per item, one column per rater, empty cell = not rated
  xlsx         long or wide form, first sheet or --sheet
  json         an array of {"item_id", "rater_id", "label"}
  jsonl        one such object per line
  labelstudio  Label Studio export: JSON (choices, rating or number results),
               JSON-MIN or CSV (the control's column detected, or --label-col)
  doccano      doccano JSONL export; its ZIP (one file per annotator) as it ships

Columns are found by name (item_id, item, task, id, essay, ...; rater_id,
rater, worker, annotator, grader, ...; label, value, rating, score, grade,
...); --item-col, --rater-col and --label-col name them outright, so that a
spreadsheet with headers such as "Essay, Grader, Score" or any others reads as
a long table. A header with a label column is never read as a wide table: the
missing column is named instead. For a Label Studio export with several
controls, --label-col picks one. Several files (or a ZIP of them) are read as
one: the rater of records that name none (doccano's per-annotator files) is
--rater, or the file name.

Schemes (--scheme; inferred from the labels and shown when omitted):
  ordinal:1..5  ordinal:poor,fair,good  ordinal:1=poor,2=fair,3=good
  nominal:yes,no,maybe  binary:0,1,pos=1  binary:pos=yes  bounded:0..100

Examples:
  concord import --project essays --scheme ordinal:0..3 --where criterion=k1 ratings.csv
  concord import --project rte --scheme binary:0,1,pos=1 --items items.csv ratings.csv
  concord import --project sentiment project-3-at-2024.json
  concord import --project rte doccano-export.zip
  concord import --project essays --rater-col Teacher grades.xlsx
`

func runImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "import", "--project NAME [--scheme SPEC] [--items FILE] [--format F] [--item-col C --rater-col C --label-col C | --rater NAME] [--replace] [--duplicates keep|first|error] FILE...", importHelp)
	dsn := dbFlag(fs)
	project := fs.String("project", "", "project name (created if it does not exist) (required)")
	schemeSpec := fs.String("scheme", "", "label scheme, e.g. ordinal:1..5 (default: the project's, or inferred)")
	items := fs.String("items", "", "items file: item_id,text,<numeric covariates> (CSV, TSV or XLSX)")
	format := fs.String("format", "auto", "auto|csv-long|csv-wide|xlsx|json|jsonl|labelstudio|doccano")
	sheet := fs.String("sheet", "", "XLSX sheet name (default: the first sheet)")
	textCols := addTextColumnsFlag(fs)
	replace := fs.Bool("replace", false, "replace stored labels that differ from the file's")
	yes := fs.Bool("yes", false, "accept an inferred scheme without asking")
	dups := addDuplicatesFlag(fs)
	rf := addReadFlags(fs)
	where := whereFlag{}
	fs.Var(where, "where", "keep only rows whose COLUMN=VALUE (repeatable), e.g. criterion=k1")
	pos, err := parseArgs(e, fs, args, "expected a label file (or several, read as one: e.g. the per-annotator files of a doccano export)")
	if err != nil {
		return err
	}
	if *project == "" {
		return annotations.Errorf(annotations.EINVALID, "--project is required")
	}
	st, err := openStore(ctx, e, *dsn)
	if err != nil {
		return err
	}
	defer st.Close()

	existing, err := st.FindProjectByName(ctx, *project)
	if err != nil && annotations.ErrorCode(err) != annotations.ENOTFOUND {
		return err
	}
	var scheme *annotations.Scheme
	if *schemeSpec != "" {
		s, err := annotations.ParseScheme(*schemeSpec)
		if err != nil {
			return err
		}
		scheme = &s
	}
	if existing != nil {
		if scheme != nil && !scheme.Open() && !scheme.Equal(existing.Scheme) {
			return annotations.Errorf(annotations.EINVALID, "project %q has scheme %s, not %s", existing.Name, existing.Scheme, scheme)
		}
		s := existing.Scheme
		scheme = &s
	}
	opts := annotations.LoadOptions{
		ReadOptions: annotations.ReadOptions{
			Format:      annotations.Format(*format),
			Sheet:       *sheet,
			Where:       where,
			TextColumns: splitList(*textCols),
			Duplicates:  dups.mode,
		},
		Scheme:    scheme,
		ItemsPath: *items,
	}
	rf.apply(&opts.ReadOptions)
	var doneReading func()
	opts.Progress, doneReading = readingProgress(e)
	loaded, err := annotations.LoadFileList(pos, opts)
	doneReading()
	if err != nil {
		return err
	}
	ds := loaded.Dataset
	if loaded.Inferred {
		fmt.Fprintf(e.stdout, "Inferred scheme %s (%s); pass --scheme to override.\n", ds.Scheme, loaded.Reason)
		if e.interactive && !*yes && !confirm(e, "Use this scheme?") {
			return annotations.Errorf(annotations.EINVALID, "import cancelled: scheme not confirmed")
		}
	}
	if len(loaded.Unused) > 0 {
		fmt.Fprintf(e.stdout, "Columns not used: %s\n", strings.Join(loaded.Unused, ", "))
	}

	created := existing == nil
	bar := newProgressBar(e, "importing")
	io := annotations.ImportOptions{
		Replace:    *replace,
		Duplicates: dups.mode,
		Progress:   func(done, total int) { bar.Set(float64(done)/float64(max(total, 1)), "") },
	}
	var res annotations.ImportResult
	p := existing
	if created {
		// The new project and its labels are written in one transaction:
		// bad input, or a killed import, leaves no empty project.
		p = &annotations.Project{Name: *project, Scheme: ds.Scheme}
		res, err = st.ImportNew(ctx, p, ds, io)
	} else {
		res, err = st.Import(ctx, p.ID, ds, io)
	}
	bar.Done()
	if err != nil {
		return err
	}
	verb := "into"
	if created {
		verb = "into new"
	}
	fmt.Fprintf(e.stdout, "Imported %s (%s) %s project %q (scheme %s):\n", strings.Join(pos, ", "), loaded.Format, verb, p.Name, p.Scheme)
	fmt.Fprintf(e.stdout, "  labels: %d added, %d replaced, %d unchanged\n", res.LabelsAdded, res.LabelsReplaced, res.LabelsUnchanged)
	fmt.Fprintf(e.stdout, "  items:  %d added, %d updated\n", res.ItemsAdded, res.ItemsUpdated)
	fmt.Fprintf(e.stdout, "  raters: %d added\n", res.RatersAdded)
	if n := len(ds.ModelRaters); n > 0 {
		shown := ds.ModelRaters[:min(n, 10)]
		more := ""
		if n > len(shown) {
			more = fmt.Sprintf(" and %d more", n-len(shown))
		}
		fmt.Fprintf(e.stdout, "  model raters: %s%s (%d stored raters newly marked)\n", strings.Join(shown, ", "), more, res.ModelsMarked)
	}
	if n := res.DuplicatesDropped; n > 0 {
		fmt.Fprintf(e.stdout, "  repeated labels: %d dropped (--duplicates first kept the first of each rater for each item)\n", n)
	}
	if n := ds.Repeats(); n > 0 {
		fmt.Fprintf(e.stdout, "  repeated labels: %d kept as separate observations (--duplicates keep)\n", n)
	}
	return nil
}

// confirm asks a yes/no question on the terminal; an empty answer is yes.
func confirm(e *env, question string) bool {
	fmt.Fprintf(e.stderr, "%s [Y/n] ", question)
	line, _ := bufio.NewReader(e.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "", "y", "yes":
		return true
	}
	return false
}
