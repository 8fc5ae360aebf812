package reports

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FileBase returns the base of the report's file names: the project name
// with every character other than letters, digits, '.', '_' and '-'
// replaced by '-' ("report" for an empty name).
func FileBase(rep *Report) string {
	var b strings.Builder
	for _, r := range rep.Project.Name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), ".-")
	if s == "" || s == "unnamed" {
		return "report"
	}
	return s
}

// WriteAll writes every rendering of the report into dir (created when
// missing), named after the project (FileBase):
//
//	BASE.json            the concord.report/v1 document
//	BASE.xlsx            the workbook
//	BASE-items.csv       the Items table
//	BASE-raters.csv      the Raters table
//	BASE-label-errors.csv  the Label errors table (robust fits)
//	BASE-plots/NAME.png  every plot, and NAME.svg
//
// It returns the paths written, in that order. Each file is written to a
// temporary file and renamed into place, so a reader never sees half a
// file. concord demo uses it for ./concord-reports/.
func WriteAll(dir string, rep *Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	base := filepath.Join(dir, FileBase(rep))
	var paths []string
	write := func(path string, fn func(io.Writer) error) error {
		if err := WriteFile(path, fn); err != nil {
			return err
		}
		paths = append(paths, path)
		return nil
	}
	if err := write(base+".json", func(w io.Writer) error { return WriteJSON(w, rep) }); err != nil {
		return paths, err
	}
	if err := write(base+".xlsx", func(w io.Writer) error { return WriteXLSX(w, rep, XLSXOptions{}) }); err != nil {
		return paths, err
	}
	if err := write(base+"-items.csv", func(w io.Writer) error { return WriteItemsCSV(w, rep) }); err != nil {
		return paths, err
	}
	if err := write(base+"-raters.csv", func(w io.Writer) error { return WriteRatersCSV(w, rep) }); err != nil {
		return paths, err
	}
	if len(rep.LabelErrors) > 0 {
		if err := write(base+"-label-errors.csv", func(w io.Writer) error { return WriteLabelErrorsCSV(w, rep) }); err != nil {
			return paths, err
		}
	}
	for _, format := range []string{PNG, SVG} {
		ps, err := WritePlots(base+"-plots", rep, format)
		paths = append(paths, ps...)
		if err != nil {
			return paths, err
		}
	}
	return paths, nil
}

// WritePlots writes every plot of the report (Plots) into dir (created
// when missing) as NAME.png or NAME.svg and returns the paths written.
func WritePlots(dir string, rep *Report, format string) ([]string, error) {
	if format != PNG && format != SVG {
		return nil, fmt.Errorf("reports: plot format %q: expected png or svg", format)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	var paths []string
	for _, p := range Plots(rep) {
		path := filepath.Join(dir, plotFileName(p.Name, format))
		if err := WriteFile(path, func(w io.Writer) error { return WritePlot(w, rep, p.Name, format) }); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// WriteFile writes a file through fn: into a temporary file in the same
// directory, renamed to path when fn and the close succeed (removed
// otherwise).
func WriteFile(path string, fn func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = fn(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("reports: writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}
