package main

import (
	"context"
	"flag"

	"concord/annotations"
)

// sourceFlags are the flags that name the dataset of a command reading
// one: a project of the database (--db, --project) or label files
// (--labels, with --items, --scheme, --format, --duplicates, --where and
// the read flags; --text-columns for the commands that fit a kernel).
type sourceFlags struct {
	dsn, project, labels, items, scheme, format *string
	dups                                        *duplicatesFlag
	rf                                          *readFlags
	where                                       whereFlag
	// textCols is nil for a command without --text-columns.
	textCols *string
}

// sourceHelp is a command's help of its source flags; an empty field takes
// the help most commands share, except items: without its help the
// command has no --items. formatFlag names the format flag (default
// "format").
type sourceHelp struct {
	project, labels, items, scheme, where string
	formatFlag, format                    string
}

// addSourceFlags registers the source flags on fs with the help h.
func addSourceFlags(fs *flag.FlagSet, h sourceHelp) *sourceFlags {
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	empty := ""
	src := &sourceFlags{dsn: dbFlag(fs), items: &empty, where: whereFlag{}}
	src.project = fs.String("project", "", or(h.project, "project (from the database)"))
	src.labels = fs.String("labels", "", or(h.labels, "label file (formats as for concord import)"))
	if h.items != "" {
		src.items = fs.String("items", "", h.items)
	}
	src.scheme = fs.String("scheme", "", or(h.scheme, "label scheme with --labels (default: inferred)"))
	src.format = fs.String(or(h.formatFlag, "format"), "auto", or(h.format, "label file format with --labels"))
	src.dups = addDuplicatesFlag(fs)
	src.rf = addReadFlags(fs)
	fs.Var(src.where, "where", or(h.where, "with --labels: keep only rows whose COLUMN=VALUE (repeatable)"))
	return src
}

// oneOf checks that exactly one of --project and --labels is given.
func (src *sourceFlags) oneOf() error {
	if (*src.project == "") == (*src.labels == "") {
		return annotations.Errorf(annotations.EINVALID, "give either --project NAME or --labels FILE")
	}
	return nil
}

// parseFitLike parses the flags of a fit-like command (fit, eval) that
// writes its result to the flag out: the usage shows the settings' flags, and
// positional arguments, both or neither of --project and --labels, and no
// --out are refused.
func (src *sourceFlags) parseFitLike(e *env, fs *flag.FlagSet, args []string, out *string) error {
	settingsUsage(fs, args)
	if err := parseNoArgsUsage(e, fs, args, " (use --labels FILE for a label file)"); err != nil {
		return err
	}
	if err := src.oneOf(); err != nil {
		return err
	}
	if *out == "" {
		return annotations.Errorf(annotations.EINVALID, `--out is required (a file name, or "-" for standard output)`)
	}
	return nil
}

// loadOptions are the options of reading --labels (the scheme apart).
func (src *sourceFlags) loadOptions() annotations.LoadOptions {
	opts := annotations.LoadOptions{ItemsPath: *src.items}
	opts.Format = annotations.Format(*src.format)
	if src.textCols != nil {
		opts.TextColumns = splitList(*src.textCols)
	}
	opts.Duplicates = src.dups.mode
	src.rf.apply(&opts.ReadOptions)
	if len(src.where) > 0 {
		opts.Where = src.where
	}
	return opts
}

// projectDataset reads the dataset of the project named name from the
// database dsn.
func projectDataset(ctx context.Context, e *env, dsn, name string) (*annotations.Project, *annotations.Dataset, error) {
	st, err := openStore(ctx, e, dsn)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	p, err := findProject(ctx, st, name)
	if err != nil {
		return nil, nil, err
	}
	ds, err := st.Dataset(ctx, p.ID)
	if err != nil {
		return nil, nil, err
	}
	return p, ds, nil
}

// readLabelFiles reads label files with opts, showing progress.
func readLabelFiles(e *env, paths []string, opts annotations.LoadOptions) (*annotations.Loaded, error) {
	var done func()
	opts.Progress, done = readingProgress(e)
	ld, err := annotations.LoadFileList(paths, opts)
	done()
	return ld, err
}
