package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// WriteItemsCSV writes the Items table as CSV (RFC 4180, comma-separated,
// UTF-8, one header row): the columns of the Items sheet of the workbook,
// in consensus order. Undefined numbers and missing labels are empty
// fields; numbers are written in full precision with a dot decimal
// separator.
func WriteItemsCSV(w io.Writer, rep *Report) error {
	x := &xlsxWriter{rep: rep}
	return writeCSV(w, x.itemsBlock())
}

// WriteRatersCSV writes the Raters table as CSV: the columns of the Raters
// sheet of the workbook (see WriteItemsCSV for the conventions).
func WriteRatersCSV(w io.Writer, rep *Report) error {
	x := &xlsxWriter{rep: rep}
	return writeCSV(w, x.ratersBlock())
}

// WriteLabelErrorsCSV writes the Label errors table as CSV (robust fits):
// the columns of the Label errors sheet, every label by decreasing p_error
// (see WriteItemsCSV for the conventions). A report without label errors
// gives the header row only.
func WriteLabelErrorsCSV(w io.Writer, rep *Report) error {
	x := &xlsxWriter{rep: rep}
	return writeCSV(w, x.labelErrorsBlock(0))
}

func writeCSV(w io.Writer, b *block) error {
	cw := csv.NewWriter(w)
	rec := make([]string, len(b.cols))
	for j, c := range b.cols {
		rec[j] = c.header
	}
	if err := cw.Write(rec); err != nil {
		return fmt.Errorf("reports: writing CSV: %w", err)
	}
	var buf []any
	for i := 0; i < b.n; i++ {
		buf = b.row(i, buf[:0])
		rec = rec[:0]
		for _, v := range buf {
			rec = append(rec, csvField(v))
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("reports: writing CSV: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("reports: writing CSV: %w", err)
	}
	return nil
}

func csvField(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64:
		if !finite(t) {
			return ""
		}
		return strconv.FormatFloat(t, 'g', -1, 64)
	case Number:
		return csvField(float64(t))
	case int:
		return strconv.Itoa(t)
	case bool:
		return strconv.FormatBool(t)
	}
	return fmt.Sprint(v)
}
