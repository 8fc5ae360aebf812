package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"concord/annotations"
	"concord/db"
)

// defaultDB is the database used when --db is not given.
const defaultDB = "concord.db"

func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", defaultDB, "database: a SQLite file path, or a postgres:// DSN")
}

// openStore opens the database named by dsn.
func openStore(ctx context.Context, e *env, dsn string) (*db.DB, error) {
	if dsn == "" {
		dsn = defaultDB
	}
	return db.Open(ctx, dsn, db.Options{Logger: e.log})
}

// whereFlag collects repeated --where COLUMN=VALUE filters.
type whereFlag map[string]string

func (w whereFlag) String() string {
	var parts []string
	for k, v := range w {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

func (w whereFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("expected COLUMN=VALUE, got %q", s)
	}
	w[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

// listFlag parses a comma-separated list.
func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// findProject looks a project up by name with a helpful error.
func findProject(ctx context.Context, st annotations.ProjectStore, name string) (*annotations.Project, error) {
	if name == "" {
		return nil, annotations.Errorf(annotations.EINVALID, "--project is required")
	}
	p, err := st.FindProjectByName(ctx, name)
	if annotations.ErrorCode(err) == annotations.ENOTFOUND {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "no project named %q (see concord projects list)", name)
	}
	return p, err
}

// duplicatesFlag is --duplicates keep|first|error, for every command that
// reads label files.
type duplicatesFlag struct{ mode annotations.Duplicates }

func (d *duplicatesFlag) String() string { return string(d.mode.Mode()) }

func (d *duplicatesFlag) Set(s string) error {
	m, err := annotations.ParseDuplicates(s)
	if err != nil {
		return fmt.Errorf("expected keep, first or error, got %q", s)
	}
	d.mode = m
	return nil
}

// addDuplicatesFlag registers --duplicates on fs.
func addDuplicatesFlag(fs *flag.FlagSet) *duplicatesFlag {
	d := &duplicatesFlag{mode: annotations.DuplicatesError}
	fs.Var(d, "duplicates", "repeated labels of one rater for one item in the label file: keep (separate observations, the crowd case), first (keep the first, drop and count the others) or error")
	return d
}

// reportDuplicates says what happened to the repeated labels of a dataset
// read from a file.
func reportDuplicates(e *env, cmd string, ds *annotations.Dataset) {
	if ds.Dropped > 0 {
		fmt.Fprintf(e.stderr, "concord %s: %d repeated labels dropped (--duplicates first kept the first label of each rater for each item)\n", cmd, ds.Dropped)
	}
	if n := ds.Repeats(); n > 0 {
		fmt.Fprintf(e.stderr, "concord %s: %d repeated labels kept as separate observations (--duplicates keep)\n", cmd, n)
	}
}

// readFlags are --item-col, --rater-col, --label-col and --rater, for every
// command that reads label files (as --format, --where and --duplicates):
// they name a table's columns, pick a Label Studio control, and name the
// rater of files that name none.
type readFlags struct {
	itemCol, raterCol, labelCol, rater *string
	// probCol and models: the labels' probability column and the model
	// raters (--prob-col, --model-raters).
	probCol, models *string
}

// addReadFlags registers the read flags on fs.
func addReadFlags(fs *flag.FlagSet) *readFlags {
	return &readFlags{
		itemCol:  fs.String("item-col", "", "label file: the item id column (default: item_id, item, task, id, essay, ... by name)"),
		raterCol: fs.String("rater-col", "", "label file: the rater id column (default: rater_id, rater, worker, annotator, grader, ... by name)"),
		labelCol: fs.String("label-col", "", "label file: the label column (default: label, value, rating, score, grade, ... by name); for Label Studio exports the control (from_name) whose labels are read"),
		rater:    fs.String("rater", "", "label file: the rater of records that name none (a doccano per-annotator file; default: the file name), or of a table without a rater column"),
		probCol:  fs.String("prob-col", "", "label file: the column of each label's probability in (0, 1], a model rater's confidence (default: prob, probability, confidence by name; an empty cell is none); the confusion model reads it as soft evidence"),
		models:   fs.String("model-raters", "", "label file: comma-separated raters that are models (LLM judges, classifiers), besides those an is_model or rater_kind column marks"),
	}
}

// apply sets the read options.
func (r *readFlags) apply(o *annotations.ReadOptions) {
	if r == nil {
		return
	}
	o.ItemCol = strings.TrimSpace(*r.itemCol)
	o.RaterCol = strings.TrimSpace(*r.raterCol)
	o.LabelCol = strings.TrimSpace(*r.labelCol)
	o.Rater = strings.TrimSpace(*r.rater)
	o.ProbCol = strings.TrimSpace(*r.probCol)
	o.ModelRaters = nil
	for _, m := range strings.Split(*r.models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			o.ModelRaters = append(o.ModelRaters, m)
		}
	}
}

// set reports whether any read flag was given.
func (r *readFlags) set() bool {
	return r != nil && (*r.itemCol != "" || *r.raterCol != "" || *r.labelCol != "" || *r.rater != "" || *r.probCol != "" || *r.models != "")
}
