package annotations

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// WriteCSVLong writes the labels as CSV with the header item_id,rater_id,label,
// one row per label in the dataset's order, and the columns prob and
// is_model (longHeader) when a label carries a probability or a rater is a
// model. ReadLabels reads it back to the same labels.
func WriteCSVLong(w io.Writer, ds *Dataset) error {
	cw := csv.NewWriter(w)
	header := longHeader(ds)
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for _, l := range ds.Labels {
		rec[0], rec[1], rec[2] = l.Item, l.Rater, l.Value
		if len(rec) > 3 {
			rec[3], rec[4] = probCell(l.Prob), strconv.FormatBool(ds.IsModel(l.Rater))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// longHeader is the header of a long-form export: item_id, rater_id,
// label, then prob and is_model when the dataset has probabilities or
// model raters.
func longHeader(ds *Dataset) []string {
	if len(ds.ModelRaters) == 0 && !ds.HasProbs() {
		return []string{"item_id", "rater_id", "label"}
	}
	return []string{"item_id", "rater_id", "label", "prob", "is_model"}
}

// probCell formats a probability exactly ("" for none).
func probCell(p float64) string {
	if p == 0 {
		return ""
	}
	return strconv.FormatFloat(p, 'g', -1, 64)
}

// wideMatrix lays the labels out with one row per labelled item (in order of
// first label) and one column per rater (in order of first label); repeated
// labels of a rater for an item are an error.
func wideMatrix(ds *Dataset) (raters, items []string, cells [][]string, err error) {
	if len(ds.ModelRaters) > 0 || ds.HasProbs() {
		return nil, nil, nil, Errorf(EINVALID, "the wide layout cannot hold label probabilities or model raters; export in long form")
	}
	raters = ds.RaterIDs()
	col := make(map[string]int, len(raters))
	for i, r := range raters {
		if reservedWide(r) {
			return nil, nil, nil, Errorf(EINVALID, "rater id %q is also the name of an item column (text, gold) in the wide layout; export in long form", r)
		}
		col[r] = i
	}
	row := map[string]int{}
	for _, l := range ds.Labels {
		i, ok := row[l.Item]
		if !ok {
			i = len(items)
			row[l.Item] = i
			items = append(items, l.Item)
			cells = append(cells, make([]string, len(raters)))
		}
		if cells[i][col[l.Rater]] != "" {
			return nil, nil, nil, Errorf(EINVALID, "item %q has more than one label by rater %q (kept with --duplicates keep): the wide layout holds one label per item and rater; export in long form", l.Item, l.Rater)
		}
		cells[i][col[l.Rater]] = l.Value
	}
	return raters, items, cells, nil
}

// WriteCSVWide writes the labels as a CSV table with the header
// item_id,<rater ids in order of first label> and one row per labelled item
// (in order of first label); an empty cell means "not rated". Raters named
// text or gold (which the wide layout reads as item columns) are an error.
func WriteCSVWide(w io.Writer, ds *Dataset) error {
	raters, items, cells, err := wideMatrix(ds)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	rec := make([]string, 1+len(raters))
	rec[0] = "item_id"
	copy(rec[1:], raters)
	if err := cw.Write(rec); err != nil {
		return err
	}
	for i, id := range items {
		rec[0] = id
		copy(rec[1:], cells[i])
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Spreadsheet limits of the XLSX format.
const (
	xlsxMaxRows = 1048576
	xlsxMaxCols = 16384
)

// xlsxCell returns the value to store in a cell: a number when s is a plain
// decimal number that a spreadsheet stores exactly (at most 15 significant
// digits, no exponent, canonical form), so that it reads back as the same
// text; otherwise the string itself.
func xlsxCell(s string) any {
	if s == "" || len(s) > 17 {
		return s
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' && i == 0) {
			return s
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || strconv.FormatFloat(f, 'f', -1, 64) != s {
		return s
	}
	digits := strings.TrimLeft(strings.Replace(strings.TrimPrefix(s, "-"), ".", "", 1), "0")
	if len(digits) > 15 || s == "-0" {
		return s
	}
	return f
}

// WriteXLSX writes the labels as an XLSX workbook with one sheet, "Labels":
// in long form (item_id, rater_id, label) or, when wide is set, one row per
// item and one column per rater as WriteCSVWide. Numeric values are stored
// as numbers, everything else as text; ReadLabels reads the workbook back to
// the same labels.
func WriteXLSX(w io.Writer, ds *Dataset, wide bool) error {
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "Labels"
	if err := f.SetSheetName(f.GetSheetName(0), sheet); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	setRow := func(r int, vals []any) error {
		ref, err := excelize.CoordinatesToCellName(1, r)
		if err != nil {
			return err
		}
		return sw.SetRow(ref, vals)
	}
	if !wide {
		if len(ds.Labels)+1 > xlsxMaxRows {
			return Errorf(EINVALID, "%d labels do not fit in one XLSX sheet (at most %d rows); export as CSV", len(ds.Labels), xlsxMaxRows-1)
		}
		header := longHeader(ds)
		hv := make([]any, len(header))
		for i, h := range header {
			hv[i] = h
		}
		if err := setRow(1, hv); err != nil {
			return err
		}
		vals := make([]any, len(header))
		for i, l := range ds.Labels {
			vals[0], vals[1], vals[2] = xlsxCell(l.Item), xlsxCell(l.Rater), xlsxCell(l.Value)
			if len(vals) > 3 {
				vals[3], vals[4] = nil, ds.IsModel(l.Rater)
				if l.Prob != 0 {
					vals[3] = l.Prob
				}
			}
			if err := setRow(i+2, vals); err != nil {
				return err
			}
		}
	} else {
		raters, items, cells, err := wideMatrix(ds)
		if err != nil {
			return err
		}
		if len(raters)+1 > xlsxMaxCols || len(items)+1 > xlsxMaxRows {
			return Errorf(EINVALID, "%d items x %d raters do not fit in one XLSX sheet (at most %d rows and %d columns); export in long form or as CSV", len(items), len(raters), xlsxMaxRows-1, xlsxMaxCols-1)
		}
		vals := make([]any, 1+len(raters))
		vals[0] = "item_id"
		for i, r := range raters {
			vals[i+1] = r
		}
		if err := setRow(1, vals); err != nil {
			return err
		}
		for i, id := range items {
			vals[0] = xlsxCell(id)
			for j, v := range cells[i] {
				if v == "" {
					vals[j+1] = nil
				} else {
					vals[j+1] = xlsxCell(v)
				}
			}
			if err := setRow(i+2, vals); err != nil {
				return err
			}
		}
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	_, err = f.WriteTo(w)
	return err
}

// WriteItemsCSV writes items as CSV with the header
// item_id,text[,gold],<covariates>,<attributes> (covariate and attribute
// columns each in name order), which ReadItems reads back to the same items.
// An item without a value for a covariate that others have gets an empty
// cell, which ReadItems rejects.
func WriteItemsCSV(w io.Writer, items []Item) error {
	hasGold := false
	covs, attrs := map[string]bool{}, map[string]bool{}
	for _, it := range items {
		if it.Gold != "" {
			hasGold = true
		}
		for k := range it.Covariates {
			covs[k] = true
		}
		for k := range it.Attrs {
			attrs[k] = true
		}
	}
	covNames, attrNames := sortedKeys(covs), sortedKeys(attrs)
	header := []string{"item_id", "text"}
	if hasGold {
		header = append(header, "gold")
	}
	seen := map[string]bool{}
	for _, h := range header {
		seen[normName(h)] = true
	}
	for _, n := range append(append([]string{}, covNames...), attrNames...) {
		k := normName(n)
		if seen[k] || aliasRank(n, itemAliases) >= 0 || reservedWide(n) || strings.TrimSpace(n) != n || n == "" {
			return Errorf(EINVALID, "item column name %q clashes with another column of the items file", n)
		}
		seen[k] = true
	}
	header = append(header, covNames...)
	header = append(header, attrNames...)
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for _, it := range items {
		rec = rec[:0]
		rec = append(rec, it.ID, it.Text)
		if hasGold {
			rec = append(rec, it.Gold)
		}
		for _, k := range covNames {
			if v, ok := it.Covariates[k]; ok {
				rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
			} else {
				rec = append(rec, "")
			}
		}
		for _, k := range attrNames {
			rec = append(rec, it.Attrs[k])
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("annotations: writing items: %w", err)
	}
	return nil
}
