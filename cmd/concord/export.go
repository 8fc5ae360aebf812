package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"concord/annotations"
)

const exportHelp = `
Write a project's labels to a file: csv-long (item_id,rater_id,label), csv-wide
(one row per item, one column per rater) or xlsx (long form, or wide with
--wide). Exports read back with concord import to the same labels.
--items-out also writes the items (id, text, gold, covariates) as CSV.

Example:
  concord export --project essays --format csv-wide --out essays-wide.csv
`

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", "--project NAME --format csv-long|csv-wide|xlsx --out FILE", exportHelp)
	dsn := dbFlag(fs)
	project := fs.String("project", "", "project name (required)")
	format := fs.String("format", "csv-long", "csv-long|csv-wide|xlsx")
	out := fs.String("out", "", `output file ("-" for standard output) (required)`)
	wide := fs.Bool("wide", false, "xlsx: one row per item, one column per rater")
	itemsOut := fs.String("items-out", "", "also write the items as CSV to this file")
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return annotations.Errorf(annotations.EINVALID, "unexpected argument %q (use --out FILE)", pos[0])
	}
	if *out == "" {
		return annotations.Errorf(annotations.EINVALID, "--out is required")
	}
	var write func(io.Writer, *annotations.Dataset) error
	switch annotations.Format(*format) {
	case annotations.FormatCSVLong:
		write = annotations.WriteCSVLong
	case annotations.FormatCSVWide:
		write = annotations.WriteCSVWide
	case annotations.FormatXLSX:
		write = func(w io.Writer, ds *annotations.Dataset) error { return annotations.WriteXLSX(w, ds, *wide) }
	default:
		return annotations.Errorf(annotations.EINVALID, "unknown export format %q (expected csv-long, csv-wide or xlsx)", *format)
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
	ds, err := st.Dataset(ctx, p.ID)
	if err != nil {
		return err
	}
	if err := writeTo(e, *out, func(w io.Writer) error { return write(w, ds) }); err != nil {
		return err
	}
	if *itemsOut != "" {
		if err := writeTo(e, *itemsOut, func(w io.Writer) error { return annotations.WriteItemsCSV(w, ds.Items) }); err != nil {
			return err
		}
	}
	if *out != "-" {
		fmt.Fprintf(e.stdout, "Wrote %d labels of project %q to %s (%s)\n", len(ds.Labels), p.Name, *out, *format)
	}
	return nil
}

// writeTo writes to a file (atomically: a temporary file renamed into place)
// or to stdout for "-".
func writeTo(e *env, path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(e.stdout)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".concord-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
