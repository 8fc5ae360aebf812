package reports

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"concord/multirater"
)

// The sheets of the workbook, in order. A report has Thresholds (ordinal)
// or Classes (classification), not both; a report of values has neither,
// and its Items and Raters sheets show values and dispersions.
const (
	SheetSummary    = "Summary"
	SheetReview     = "Review"
	SheetItems      = "Items"
	SheetRaters     = "Raters"
	SheetThresholds = "Thresholds"
	SheetClasses    = "Classes"
	// SheetConfusion holds each rater's confusion matrix (the confusion
	// model).
	SheetConfusion = "Confusion matrices"
	SheetAgreement = "Agreement"
	// The agreement tables, when the report has the agreement analysis.
	SheetAgreementMatrix = "Agreement matrix"
	SheetItemAgreement   = "Item agreement"
	SheetRaterAgreement  = "Rater agreement"
	SheetDiagnostics     = "Diagnostics"
	SheetFlags           = "Flags"
	SheetLabelErrors     = "Label errors"
	SheetGlossary        = "Glossary"
	SheetCharts          = "Charts"
)

// maxSheetRows is the row limit of a worksheet.
const maxSheetRows = 1 << 20

// XLSXOptions control WriteXLSX. The zero value writes every sheet.
type XLSXOptions struct {
	// NoCharts leaves out the Charts sheet (the plots as pictures).
	NoCharts bool
}

// SheetNames returns the names of the report's sheets in workbook order.
// Reports of the robust model (with label errors) have the Label errors
// sheet after Flags.
func SheetNames(rep *Report, opts XLSXOptions) []string {
	names := []string{SheetSummary, SheetReview, SheetItems, SheetRaters}
	if rep.Kind == KindRanking {
		names = []string{SheetSummary, SheetRanking}
		if rep.Ranking != nil && len(rep.Ranking.Coefficients) > 0 {
			names = append(names, SheetCoefficients)
		}
		names = append(names, SheetItems, SheetDiagnostics, SheetGlossary)
		if !opts.NoCharts {
			names = append(names, SheetCharts)
		}
		return names
	}
	switch rep.Kind {
	case KindClassification:
		names = append(names, SheetClasses)
		if hasConfusionProbs(rep) {
			names = append(names, SheetConfusion)
		}
	case KindOrdinal:
		names = append(names, SheetThresholds)
	}
	names = append(names, SheetAgreement)
	if rep.Agreement != nil {
		names = append(names, SheetAgreementMatrix, SheetItemAgreement, SheetRaterAgreement)
	}
	names = append(names, SheetDiagnostics, SheetFlags)
	if len(rep.LabelErrors) > 0 {
		names = append(names, SheetLabelErrors)
	}
	names = append(names, SheetGlossary)
	if !opts.NoCharts {
		names = append(names, SheetCharts)
	}
	return names
}

// WriteXLSX writes the report as an Excel workbook with one sheet each for
// the summary, the items (consensus ranking), the raters, the thresholds
// (ordinal) or classes (classification), the agreement coefficients, the
// convergence diagnostics, the flagged labels and the charts (see
// docs/reports.md for every column). Numbers are stored as numbers with
// number formats; every table has its header row frozen and an autofilter;
// there are no formulas. The tables are written with excelize's streaming
// writer (rows go to a temporary file beyond 16 MB), so memory stays
// bounded by the report itself plus the compressed workbook, which
// excelize assembles in memory before writing it to w.
func WriteXLSX(w io.Writer, rep *Report, opts XLSXOptions) (err error) {
	if len(rep.Items)+1 > maxSheetRows || len(rep.Diagnostics.Parameters)+1 > maxSheetRows {
		return fmt.Errorf("reports: %d items or %d parameters do not fit in a worksheet (at most %d rows)", len(rep.Items), len(rep.Diagnostics.Parameters), maxSheetRows-1)
	}
	f := excelize.NewFile()
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("reports: closing the workbook: %w", cerr)
		}
	}()
	x := &xlsxWriter{f: f, rep: rep}
	if err := x.newStyles(); err != nil {
		return fmt.Errorf("reports: workbook styles: %w", err)
	}
	names := SheetNames(rep, opts)
	if err := f.SetSheetName("Sheet1", names[0]); err != nil {
		return err
	}
	for _, n := range names[1:] {
		if _, err := f.NewSheet(n); err != nil {
			return err
		}
	}
	steps := []struct {
		sheet string
		fn    func() error
	}{
		{SheetSummary, x.summary},
		{SheetReview, x.review},
		{SheetRanking, x.rankingSheet},
		{SheetCoefficients, x.coefficientsSheet},
		{SheetItems, x.items},
		{SheetRaters, x.raters},
		{SheetThresholds, x.thresholds},
		{SheetClasses, x.classes},
		{SheetConfusion, x.confusionMatrices},
		{SheetAgreement, x.agreement},
		{SheetAgreementMatrix, x.agreementMatrix},
		{SheetItemAgreement, x.itemAgreement},
		{SheetRaterAgreement, x.raterAgreement},
		{SheetDiagnostics, x.diagnostics},
		{SheetFlags, x.flags},
		{SheetLabelErrors, x.labelErrors},
		{SheetGlossary, x.glossary},
		{SheetCharts, x.charts},
	}
	for _, s := range steps {
		if indexOf(names, s.sheet) < 0 {
			continue
		}
		if err := s.fn(); err != nil {
			return fmt.Errorf("reports: sheet %s: %w", s.sheet, err)
		}
	}
	if err := f.SetDocProps(&excelize.DocProperties{
		Title:       "concord report: " + rep.Project.Name,
		Subject:     "multi-rater fit " + rep.Model.Model + ", seed " + strconv.FormatUint(rep.Model.Seed, 10),
		Creator:     "concord",
		Description: Schema,
	}); err != nil {
		return err
	}
	if err := f.Write(w); err != nil {
		return fmt.Errorf("reports: writing the workbook: %w", err)
	}
	return nil
}

type xlsxWriter struct {
	f   *excelize.File
	rep *Report
	st  styles
}

type styles struct {
	header, title, bold, note, wrap   int
	int, num2, num3, num4, pct, thous int
	red, amber                        int // conditional formats
}

func (x *xlsxWriter) newStyles() error {
	f := x.f
	var err error
	mk := func(s *excelize.Style) int {
		if err != nil {
			return 0
		}
		var id int
		id, err = f.NewStyle(s)
		return id
	}
	custom := func(code string) *excelize.Style { return &excelize.Style{CustomNumFmt: &code} }
	x.st = styles{
		header: mk(&excelize.Style{Font: &excelize.Font{Bold: true}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"D9E1F2"}},
			Border: []excelize.Border{{Type: "bottom", Color: "8EA9DB", Style: 1}}, Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}}),
		title: mk(&excelize.Style{Font: &excelize.Font{Bold: true, Size: 13}}),
		bold:  mk(&excelize.Style{Font: &excelize.Font{Bold: true}}),
		note:  mk(&excelize.Style{Font: &excelize.Font{Italic: true, Color: "595959"}}),
		wrap:  mk(&excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}}),
		int:   mk(&excelize.Style{NumFmt: 1}),
		num2:  mk(custom("0.00")),
		num3:  mk(custom("0.000")),
		num4:  mk(custom("0.0000")),
		pct:   mk(custom("0.0%")),
		thous: mk(&excelize.Style{NumFmt: 3}),
	}
	if err != nil {
		return err
	}
	if x.st.red, err = f.NewConditionalStyle(&excelize.Style{Font: &excelize.Font{Color: "9C0006"}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFC7CE"}}}); err != nil {
		return err
	}
	x.st.amber, err = f.NewConditionalStyle(&excelize.Style{Font: &excelize.Font{Color: "9C5700"}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"FFEB9C"}}})
	return err
}

// col describes one column of a table: its header, the style of its cells
// and how many decimals the format shows (for fitting the width).
type col struct {
	header string
	style  int
	dec    int  // decimals shown; -1 for general
	pct    bool // a percentage format
}

// block is one table (or titled list) of a sheet.
type block struct {
	// title is a bold line above the table.
	title string
	cols  []col
	// noHeader leaves out the header row.
	noHeader bool
	n        int
	// row returns the cells of row i (raw float64, int, string, bool or
	// nil values), appending to dst.
	row func(i int, dst []any) []any
	// filter puts an autofilter on the header and rows; freeze (first
	// block only) freezes the rows down to the header and freezeCols
	// columns.
	filter     bool
	freeze     bool
	freezeCols int
	// firstColHeader styles the first cell of each row as a header.
	firstColHeader bool
	// spill marks a block of notes: lines of text that spill over the
	// empty cells to their right, so that they do not widen the column
	// they start in (a 60-character "#" column on the Review sheet).
	spill bool
	// after adds conditional formats: the header is at row hdr, data in
	// rows first..last (1-based).
	after func(hdr, first, last int) error
}

func (x *xlsxWriter) c(name string, style, dec int) col {
	return col{header: name, style: style, dec: dec}
}
func (x *xlsxWriter) num(name string) col     { return col{header: name, style: x.st.num3, dec: 3} }
func (x *xlsxWriter) integer(name string) col { return col{header: name, style: x.st.int, dec: 0} }
func (x *xlsxWriter) text(name string) col    { return col{header: name, dec: -1} }
func (x *xlsxWriter) percent(name string) col {
	return col{header: name, style: x.st.pct, dec: 1, pct: true}
}

// cellWidth estimates the characters a value takes in a column.
func cellWidth(v any, c col) float64 {
	switch t := v.(type) {
	case excelize.Cell:
		return cellWidth(t.Value, c)
	case string:
		return float64(utf8.RuneCountInString(t))
	case float64:
		if !finite(t) {
			return 0
		}
		if c.pct {
			t *= 100
		}
		var s string
		if c.dec >= 0 {
			s = strconv.FormatFloat(t, 'f', c.dec, 64)
		} else {
			s = strconv.FormatFloat(t, 'g', 10, 64)
		}
		if c.pct {
			return float64(len(s) + 1)
		}
		if c.style != 0 && c.dec == 0 && math.Abs(t) >= 1000 {
			return float64(len(s) + len(s)/3)
		}
		return float64(len(s))
	case int:
		return float64(len(strconv.Itoa(t)))
	case bool:
		return 5
	}
	return 0
}

// cell wraps a raw value with the column's style; non-finite numbers
// become empty cells.
func cell(v any, style int) any {
	switch t := v.(type) {
	case nil:
		return nil
	case excelize.Cell:
		return t
	case float64:
		if !finite(t) {
			return nil
		}
	case Number:
		if !t.Valid() {
			return nil
		}
		v = float64(t)
	}
	return excelize.Cell{StyleID: style, Value: v}
}

// writeBlocks streams the blocks into the sheet, one after the other with
// a blank row between them, fitting the column widths to the content.
func (x *xlsxWriter) writeBlocks(sheet string, blocks []*block) error {
	widths := blockWidths(blocks)
	titleRow, keepCols := 0, 0
	if len(blocks) > 0 {
		keepCols = blocks[0].freezeCols
		if !blocks[0].noHeader {
			titleRow = 1
			if blocks[0].title != "" {
				titleRow = 2
			}
		}
	}
	total := 0.0
	for _, w := range widths {
		total += colWidth(w)
	}
	// Before the stream writer: it writes the sheet properties first.
	if err := x.printSetup(sheet, titleRow, pagesWide(total), keepCols); err != nil {
		return err
	}
	sw, err := x.f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	for j, w := range widths {
		if err := sw.SetColWidth(j+1, j+1, colWidth(w)); err != nil {
			return err
		}
	}
	if len(blocks) > 0 && blocks[0].freeze {
		if err := sw.SetPanes(freezePanes(blocks[0])); err != nil {
			return err
		}
	}
	st := &sheetStream{x: x, sheet: sheet, sw: sw, widths: widths, r: 1, row: make([]any, 0, 64)}
	for bi, b := range blocks {
		if bi > 0 {
			st.r++
		}
		if err := st.block(b); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// colWidth is the width of a column whose content is w characters wide:
// with a margin, at least 6 and at most 60.
func colWidth(w float64) float64 { return math.Min(math.Max(w+2, 6), 60) }

// blockWidths returns the width of each column over the blocks' headers
// and cells (the cells of spilled blocks are not measured).
func blockWidths(blocks []*block) map[int]float64 {
	widths := map[int]float64{}
	fit := func(j int, w float64) {
		if w > widths[j] {
			widths[j] = w
		}
	}
	var buf []any
	for _, b := range blocks {
		if !b.noHeader {
			for j, c := range b.cols {
				fit(j, headerWidth(c.header))
			}
		}
		for i := 0; i < b.n && !b.spill; i++ {
			buf = b.row(i, buf[:0])
			for j, v := range buf {
				if j < len(b.cols) {
					fit(j, cellWidth(v, b.cols[j]))
				}
			}
		}
	}
	return widths
}

// freezePanes freezes the title and header rows of the sheet's first
// block and its first freezeCols columns.
func freezePanes(b *block) *excelize.Panes {
	hdr := 1
	if b.title != "" {
		hdr = 2
	}
	p := &excelize.Panes{Freeze: true, YSplit: hdr, XSplit: b.freezeCols, ActivePane: "bottomLeft"}
	if b.freezeCols > 0 {
		p.ActivePane = "bottomRight"
	}
	p.TopLeftCell, _ = excelize.CoordinatesToCellName(b.freezeCols+1, hdr+1)
	return p
}

// sheetStream writes blocks into a sheet's stream writer, row r next.
type sheetStream struct {
	x        *xlsxWriter
	sheet    string
	sw       *excelize.StreamWriter
	widths   map[int]float64
	r        int
	buf, row []any
}

func (st *sheetStream) setRow(vals []any, opts ...excelize.RowOpts) error {
	name, _ := excelize.CoordinatesToCellName(1, st.r)
	st.r++
	return st.sw.SetRow(name, vals, opts...)
}

// block writes one block: its title, its header (as tall as its longest
// wrapped header needs), its rows, then its filter and its after hook.
func (st *sheetStream) block(b *block) error {
	x := st.x
	if b.title != "" {
		if err := st.setRow([]any{excelize.Cell{StyleID: x.st.bold, Value: b.title}}); err != nil {
			return err
		}
	}
	hdr := st.r
	if !b.noHeader {
		st.row = st.row[:0]
		lines := 1
		for j, c := range b.cols {
			st.row = append(st.row, excelize.Cell{StyleID: x.st.header, Value: c.header})
			lines = max(lines, headerLines(c.header, colWidth(st.widths[j])))
		}
		if err := st.setRow(st.row, excelize.RowOpts{Height: 15 * float64(lines)}); err != nil {
			return err
		}
	}
	first := st.r
	for i := 0; i < b.n; i++ {
		st.buf = b.row(i, st.buf[:0])
		st.row = st.row[:0]
		for j, v := range st.buf {
			style := 0
			if j < len(b.cols) {
				style = b.cols[j].style
			}
			if j == 0 && b.firstColHeader {
				style = x.st.header
			}
			st.row = append(st.row, cell(v, style))
		}
		if err := st.setRow(st.row); err != nil {
			return err
		}
	}
	last := st.r - 1
	if b.filter && !b.noHeader {
		if err := x.f.AutoFilter(st.sheet, rangeRef(1, hdr, len(b.cols), max(last, hdr)), nil); err != nil {
			return err
		}
	}
	if b.after != nil && last >= first {
		return b.after(hdr, first, last)
	}
	return nil
}

// The printed page of every sheet: landscape, with the margins below
// (inches). pageWidthPx and pageHeightPx are the printable area at 96 dpi
// of the smaller of A4 and US Letter in landscape, less the margins: the
// size the charts are scaled to.
const (
	marginSide, marginTopBottom, marginHeaderFooter = 0.4, 0.55, 0.25
	pageWidthPx                                     = (11.0 - 2*marginSide) * 96
	pageHeightPx                                    = (8.27 - 2*marginTopBottom) * 96
)

// maxPrintChars is the width of the columns, in characters, that one
// landscape page holds at about a third of their size (135 characters at
// full size): wider tables (a column per rater of many raters) print on
// several pages across rather than at an unreadable scale.
const maxPrintChars = 400

// pagesWide is the number of pages across for a table of the given width
// in characters.
func pagesWide(chars float64) int {
	return max(1, int(math.Ceil(chars/maxPrintChars)))
}

// printSetup makes a sheet print landscape, scaled to the width of wide
// pages (one for every table but the widest; as many pages down as
// needed), with narrow margins, the sheet name and page number in the
// footer and, when titleRow > 0, the rows down to titleRow (the table's
// header) repeated at the top of every page (_xlnm.Print_Titles), with
// the first keepCols columns (the item or rater) repeated on every page
// across.
func (x *xlsxWriter) printSetup(sheet string, titleRow, wide, keepCols int) error {
	f := x.f
	fit := true
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
		return err
	}
	landscape, down := "landscape", 0
	if err := f.SetPageLayout(sheet, &excelize.PageLayoutOptions{Orientation: &landscape, FitToWidth: &wide, FitToHeight: &down}); err != nil {
		return err
	}
	side, tb, hf := marginSide, marginTopBottom, marginHeaderFooter
	if err := f.SetPageMargins(sheet, &excelize.PageLayoutMarginsOptions{Left: &side, Right: &side, Top: &tb, Bottom: &tb, Header: &hf, Footer: &hf}); err != nil {
		return err
	}
	if err := f.SetHeaderFooter(sheet, &excelize.HeaderFooterOptions{OddFooter: "&L&8" + footerText(x.rep.Project.Name) + ": &A&R&8page &P of &N"}); err != nil {
		return err
	}
	if titleRow <= 0 {
		return nil
	}
	q := "'" + strings.ReplaceAll(sheet, "'", "''") + "'!"
	ref := fmt.Sprintf("%s$1:$%d", q, titleRow)
	if wide > 1 && keepCols > 0 {
		ref = fmt.Sprintf("%s$A:$%s,%s", q, colName(keepCols), ref)
	}
	return f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", Scope: sheet, RefersTo: ref})
}

// footerText escapes a name for a page footer ("&" starts a code) and
// keeps it short (a footer holds at most 255 characters).
func footerText(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return strings.ReplaceAll(s, "&", "&&")
}

// headerWidth is the width a header asks of its column: the whole header
// when short, else enough for its longest word (at least 10 characters),
// the header wrapping onto more lines.
func headerWidth(h string) float64 {
	full := float64(utf8.RuneCountInString(h))*1.1 + 1
	word := 0
	for _, w := range strings.Fields(h) {
		word = max(word, utf8.RuneCountInString(w))
	}
	return math.Min(full, math.Max(10, float64(word)*1.1+1))
}

// headerLines estimates the lines a header wraps onto in a column of the
// given width (characters).
func headerLines(h string, width float64) int {
	lines, cur := 1, 0.0
	for _, w := range strings.Fields(h) {
		n := float64(utf8.RuneCountInString(w)) * 1.1
		switch {
		case cur == 0:
			cur = n
		case cur+1.1+n <= width-1:
			cur += 1.1 + n
		default:
			lines++
			cur = n
		}
	}
	return lines
}

func rangeRef(c1, r1, c2, r2 int) string {
	a, _ := excelize.CoordinatesToCellName(c1, r1)
	b, _ := excelize.CoordinatesToCellName(c2, r2)
	return a + ":" + b
}

func colName(c int) string {
	s, _ := excelize.ColumnNumberToName(c)
	return s
}

// labelValue returns a label as a number when every level code is a
// number, else as text.
func (x *xlsxWriter) labelValue(v string, numeric bool) any {
	if v == "" {
		return nil
	}
	if numeric {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	}
	return v
}

// numericLevels reports whether every level code is a number in its
// shortest form ("3", "-1", "2.5"; not "03" or "1e1"), so that storing it
// as a number shows the same code.
func numericLevels(rep *Report) bool {
	for _, l := range rep.Levels {
		v, err := strconv.ParseFloat(l.Code, 64)
		if err != nil || strconv.FormatFloat(v, 'f', -1, 64) != l.Code {
			return false
		}
	}
	return len(rep.Levels) > 0
}

func yes(b bool) any {
	if b {
		return "yes"
	}
	return nil
}

// seedValue is the fit's seed for a cell: a number, or text when a
// number would lose digits.
func seedValue(seed uint64) any {
	if seed > 1<<53 {
		return strconv.FormatUint(seed, 10)
	}
	return float64(seed)
}

// fitRows are the Summary sheet's rows of the fit's verdict and time.
func (x *xlsxWriter) fitRows() []kv {
	return []kv{
		{"Convergence", convergenceWords(x.rep), x.st.wrap},
		{"Fit time (s)", float64(x.rep.Diagnostics.Seconds), x.st.num2},
	}
}

// labelRows are the Summary sheet's counts of items, raters and labels,
// the consensus agreement and the flags (grades and classes).
func (x *xlsxWriter) labelRows() []kv {
	s, st := x.rep.Summary, x.st
	return []kv{
		{"Items", s.Items, st.int},
		{"Items with labels", s.RatedItems, st.int},
		{"Raters", s.Raters, st.int},
		{"Labels", s.Labels, st.int},
		{"Labels per labelled item", float64(s.LabelsPer), st.num2},
		{"Labels equal to the consensus", float64(s.ConsensusAgreement), st.pct},
		{"Surprising labels (flags)", s.Flags, st.int},
		{"Share of labels flagged", float64(s.FlagShare), st.pct},
	}
}

// rowGroups joins groups of rows with a blank row between them.
func rowGroups(groups ...[]kv) []kv {
	var out []kv
	for i, g := range groups {
		if i > 0 {
			out = append(out, kv{"", nil, 0})
		}
		out = append(out, g...)
	}
	return out
}

// rankingSettings are the Summary sheet's rows of an AUC scoring fit.
func (x *xlsxWriter) rankingSettings() []kv {
	rep, st, m, r, s := x.rep, x.st, x.rep.Model, x.rep.Ranking, x.rep.Summary
	kern := m.Kernel
	if r.Scores == "linear" {
		kern = "none: linear scores s = <theta, x>"
	}
	gamma := "fixed"
	if r.GammaByCV {
		gamma = "chosen by cross-validation (sheet Ranking)"
	}
	return rowGroups([]kv{
		{"Project", rep.Project.Name, 0},
		{"Scheme", rep.Project.Scheme, 0},
		{"Positive class", r.Positive, 0},
		{"Model", modelDescription(m), 0},
		{"Scores", r.Scores, 0},
		{"Kernel", kern, 0},
		{"Prior", fmt.Sprintf("%s, scale %g", r.Prior, r.PriorScale), 0},
		{"Gamma", r.Gamma, 0},
		{"Gamma was", gamma, 0},
		{"Engine", m.Engine, 0},
		{"Seed", seedValue(m.Seed), st.int},
	}, x.fitRows(), []kv{
		{"Items", s.Items, st.int},
		{"Fitted items (with a majority label)", r.Fitted, st.int},
		{"Pairs (positive, negative)", r.Pairs, st.int},
		{"Raters", s.Raters, st.int},
		{"Labels", s.Labels, st.int},
		{"Training AUC", float64(r.TrainAUC), st.num3},
		{"Log evidence", float64(r.LogEvidence), st.num3},
	})
}

// valuesSettings are the Summary sheet's rows of a fit of bounded
// ratings.
func (x *xlsxWriter) valuesSettings() []kv {
	rep, st, m, s := x.rep, x.st, x.rep.Model, x.rep.Summary
	bias := "none"
	for _, r := range rep.Raters {
		if r.Bias != nil {
			bias = "fitted per rater (probit scale)"
			break
		}
	}
	return rowGroups([]kv{
		{"Project", rep.Project.Name, 0},
		{"Scheme", rep.Project.Scheme, 0},
		{"Model", modelDescription(m), 0},
		{"Likelihood", m.Likelihood, 0},
		{"Kernel", m.Kernel, 0},
		{"Engine", m.Engine, 0},
		{"Rater bias", bias, 0},
		{"Seed", seedValue(m.Seed), st.int},
		{"Flag threshold (two-sided predictive tail probability)", m.FlagThreshold, 0},
		{"Linear algebra", m.Backend, 0},
	}, x.fitRows(), []kv{
		{"Items", s.Items, st.int},
		{"Items with ratings", s.RatedItems, st.int},
		{"Raters", s.Raters, st.int},
		{"Ratings", s.Labels, st.int},
		{"Ratings per rated item", float64(s.LabelsPer), st.num2},
		{"Surprising ratings (flags)", s.Flags, st.int},
		{"Share of ratings flagged", float64(s.FlagShare), st.pct},
	})
}

// deterministicSettings are the Summary sheet's rows of an EP or Laplace
// fit: no sampler, chains or priors of the Gibbs models, and the engine's
// verdict instead of R-hat and ESS.
func (x *xlsxWriter) deterministicSettings() []kv {
	rep, st, m := x.rep, x.st, x.rep.Model
	settings := []kv{
		{"Project", rep.Project.Name, 0},
		{"Scheme", rep.Project.Scheme, 0},
		{"Levels", levelList(rep), 0},
		{"Model", modelDescription(m), 0},
	}
	if m.Likelihood != "" {
		settings = append(settings, kv{"Likelihood", m.Likelihood, 0})
	}
	settings = append(settings, []kv{
		{"Kernel", m.Kernel, 0},
		{"Engine", m.Engine, 0},
		{"Seed", seedValue(m.Seed), st.int},
		{"Flag threshold (predictive probability)", m.FlagThreshold, 0},
		{"Linear algebra", m.Backend, 0},
	}...)
	return rowGroups(settings, x.fitRows(), x.labelRows())
}

// gibbsSettings are the Summary sheet's rows of a Gibbs fit: the
// sampler's settings and the priors, R-hat and ESS against the limits.
func (x *xlsxWriter) gibbsSettings() []kv {
	rep, st, m, d := x.rep, x.st, x.rep.Model, x.rep.Diagnostics
	ident := m.Identifiability
	if m.RefRater != "" {
		ident += " (reference rater " + m.RefRater + ")"
	}
	fit := x.fitRows()
	return rowGroups([]kv{
		{"Project", rep.Project.Name, 0},
		{"Scheme", rep.Project.Scheme, 0},
		{"Levels", levelList(rep), 0},
		{"Model", modelDescription(m), 0},
		{"Kernel", m.Kernel, 0},
		{"Identifiability", ident, 0},
		{"Sampler", m.Sampler, 0},
		{"Chains", m.Chains, st.int},
		{"Draws per chain", m.Samples, st.int},
		{"Burn-in sweeps", m.Burnin, st.int},
		{"Thinning", m.Thin, st.int},
		{"Seed", seedValue(m.Seed), st.int},
		{"Precision prior shape v", m.V, 0},
		{"Precision prior rate lambda", m.Lambda, 0},
		{"Threshold prior sd sigma_b", m.SigmaB, 0},
		{"Flag threshold (predictive probability)", m.FlagThreshold, 0},
		{"Linear algebra", m.Backend, 0},
	}, []kv{
		fit[0],
		{"Max split R-hat", float64(d.MaxRhat), st.num4},
		{"R-hat limit", d.LimitRhat, 0},
		{"Min bulk ESS", float64(d.MinESSBulk), st.thous},
		{"ESS limit", d.LimitESS, st.thous},
		fit[1],
	}, x.labelRows())
}

// summary writes the Summary sheet with the normal (non-streaming) API: a
// list of settings and headline numbers.
func (x *xlsxWriter) summary() error {
	f, rep, st := x.f, x.rep, x.st
	const sh = SheetSummary
	s := rep.Summary
	d := rep.Diagnostics
	values := rep.Kind == KindValues
	var rows []kv
	switch {
	case rep.Kind == KindRanking && rep.Ranking != nil:
		rows = x.rankingSettings()
	case values:
		rows = x.valuesSettings()
	case deterministic(rep.Model):
		rows = append(x.deterministicSettings(), x.robustRows()...)
	default:
		rows = x.gibbsSettings()
	}
	if mc := rep.ModelChoice; mc != nil {
		rows = append(rows, kv{"Model chosen by the evidence", fmt.Sprintf("%s %s, among %d candidates (Diagnostics sheet, Model choice)", mc.Family, mc.Chosen, len(mc.Candidates)), 0})
	}
	if s.Alpha != nil {
		rows = append(rows,
			kv{s.Alpha.Label + ", the coefficient to quote", float64(s.Alpha.Value), st.num3},
			kv{"  95% interval, low", float64(s.Alpha.CILow), st.num3},
			kv{"  95% interval, high", float64(s.Alpha.CIHigh), st.num3})
	}
	if s.MajorityAgreement.Valid() {
		rows = append(rows, kv{"Items where majority vote = consensus", float64(s.MajorityAgreement), st.pct})
	}
	if s.GoldItems > 0 {
		rows = append(rows, kv{"Items with a gold label", s.GoldItems, st.int}, kv{"Consensus = gold", float64(s.GoldAccuracy), st.pct})
	}
	for _, r := range rep.ROC {
		rows = append(rows, kv{fmt.Sprintf("ROC AUC, %s vs %s", r.Scorer, r.Reference), float64(r.AUC), st.num3})
	}
	rows = append(rows, kv{"Top item of the consensus order", s.TopItem, 0})
	switch {
	case s.MostPrecise != "" && values:
		rows = append(rows, kv{"Most consistent rater (highest dispersion ν)", s.MostPrecise, 0}, kv{"Least consistent rater (lowest dispersion ν)", s.LeastPrecise, 0})
	case s.MostPrecise != "":
		rows = append(rows, kv{"Most precise rater", s.MostPrecise, 0}, kv{"Least precise rater", s.LeastPrecise, 0})
	}
	if s.MostSevere != "" {
		rows = append(rows, kv{"Most severe rater", s.MostSevere, 0}, kv{"Most lenient rater", s.MostLenient, 0})
	}
	notes := append(append([]string(nil), rep.Notes...), d.Notes...)
	if err := f.SetCellStr(sh, "A1", "concord report: "+rep.Project.Name); err != nil {
		return err
	}
	if err := f.SetCellStyle(sh, "A1", "A1", st.title); err != nil {
		return err
	}
	r := 3
	for _, e := range rows {
		if e.key != "" {
			a, _ := excelize.CoordinatesToCellName(1, r)
			b, _ := excelize.CoordinatesToCellName(2, r)
			if err := f.SetCellStr(sh, a, e.key); err != nil {
				return err
			}
			if err := f.SetCellStyle(sh, a, a, st.bold); err != nil {
				return err
			}
			if v := cell(e.val, e.style); v != nil {
				if err := f.SetCellValue(sh, b, v.(excelize.Cell).Value); err != nil {
					return err
				}
				if e.style != 0 {
					if err := f.SetCellStyle(sh, b, b, e.style); err != nil {
						return err
					}
				}
			}
		}
		r++
	}
	if len(notes) > 0 {
		r++
		a, _ := excelize.CoordinatesToCellName(1, r)
		f.SetCellStr(sh, a, "Notes")
		f.SetCellStyle(sh, a, a, st.bold)
		for _, n := range notes {
			b, _ := excelize.CoordinatesToCellName(2, r)
			f.SetCellStr(sh, b, n)
			f.SetCellStyle(sh, b, b, st.wrap)
			r++
		}
	}
	r++
	a, _ := excelize.CoordinatesToCellName(1, r)
	f.SetCellStr(sh, a, "The Items, Raters and Diagnostics sheets are sorted and filtered with the arrows in their header rows; the Charts sheet holds the plots.")
	f.SetCellStyle(sh, a, a, st.note)
	if err := f.SetColWidth(sh, "A", "A", 40); err != nil {
		return err
	}
	if err := x.printSetup(sh, 0, 1, 0); err != nil {
		return err
	}
	return f.SetColWidth(sh, "B", "B", 90)
}

func levelList(rep *Report) string {
	var s []string
	for _, l := range rep.Levels {
		if l.Name != "" {
			s = append(s, l.Code+" ("+l.Name+")")
		} else {
			s = append(s, l.Code)
		}
	}
	return strings.Join(s, ", ")
}

// convergenceWords says in words whether the chains converged; for the
// deterministic engines (EP, Laplace), the engine's verdict.
func convergenceWords(rep *Report) string {
	d := rep.Diagnostics
	switch rep.Model.Engine {
	case multirater.EngineEP, multirater.EngineLaplace:
		if d.Converged {
			return "The approximation has converged: " + strings.TrimPrefix(d.Verdict, "converged: ") + "."
		}
		return "The approximation has NOT converged: the numbers in this report are not reliable. " + d.Verdict + "."
	case multirater.EngineSMC:
		return "Done: " + strings.TrimPrefix(d.Verdict, "converged: ") + "."
	}
	if d.Converged {
		return fmt.Sprintf("The chains have converged: every free parameter's split R-hat is below %g (largest %.4f) and every bulk effective sample size is at least %g (smallest %.0f). %s",
			d.LimitRhat, float64(d.MaxRhat), d.LimitESS, float64(d.MinESSBulk), d.Verdict)
	}
	rhat := fmt.Sprintf("Largest split R-hat %.4f (%s; limit %g)", float64(d.MaxRhat), d.WorstRhat, d.LimitRhat)
	if !d.MaxRhat.Valid() {
		rhat = "Split R-hat not available (too few draws per chain)"
	}
	return fmt.Sprintf("The chains have NOT converged: the numbers in this report are not reliable. %s, smallest bulk effective sample size %.0f (%s; limit %g). %s",
		rhat, float64(d.MinESSBulk), d.WorstESS, d.LimitESS, d.Verdict)
}

// aggregatorColumns returns, for the items table, the baseline aggregators
// shown as a label (categorical) or a score (mean, median).
func (x *xlsxWriter) aggregatorColumns() (names []string, score []bool) {
	if x.rep.Agreement == nil {
		return nil, nil
	}
	for _, a := range x.rep.Agreement.Aggregators {
		names = append(names, a.Name)
		score = append(score, a.Name == "mean" || a.Name == "median")
	}
	return names, score
}

func (x *xlsxWriter) items() error {
	return x.writeBlocks(SheetItems, []*block{x.itemsBlock()})
}

func (x *xlsxWriter) raters() error {
	return x.writeBlocks(SheetRaters, []*block{x.ratersBlock()})
}

// itemsBlock is the Items table (also the items CSV).
func (x *xlsxWriter) itemsBlock() *block {
	rep := x.rep
	if rep.Kind == KindValues {
		return x.valueItemsBlock()
	}
	ordinal := rep.Kind == KindOrdinal
	numeric := numericLevels(rep)
	hasGold := rep.Summary.GoldItems > 0
	hasScore, hasRank := false, false
	for i := range rep.Items {
		hasScore = hasScore || rep.Items[i].Score != nil
		hasRank = hasRank || rep.Items[i].Rank != nil
	}
	labelCol := func(name string) col {
		if numeric {
			return col{header: name, dec: -1}
		}
		return x.text(name)
	}
	cols := []col{x.integer("Rank"), x.text("Item")}
	if hasScore {
		cols = append(cols, x.num("Score"), x.num("Score 2.5%"), x.num("Score 97.5%"), x.num("Score SD"))
	}
	if hasRank {
		cols = append(cols, x.c("Mean rank", x.st.num2, 2), x.integer("Rank 2.5%"), x.integer("Rank 97.5%"))
	}
	what := "class"
	if ordinal {
		what = "grade"
	}
	cols = append(cols, labelCol("Consensus "+what), x.num("Probability"))
	for _, l := range rep.Levels {
		cols = append(cols, x.num("P("+l.Code+")"))
	}
	cols = append(cols, x.num("Entropy (bits)"), x.integer("Labels"), x.integer("Raters"), labelCol("Majority label"), x.percent("Majority share"), x.integer("Flags"))
	if hasGold {
		cols = append(cols, labelCol("Gold"))
	}
	aggs, aggScore := x.aggregatorColumns()
	baselineScore := func(b Baseline) any { return float64(b.Score) }
	baselineLabel := func(b Baseline) any { return x.labelValue(b.Label, numeric) }
	for i, a := range aggs {
		if aggScore[i] {
			cols = append(cols, x.c(aggregatorLabel(a), x.st.num2, 2))
		} else {
			cols = append(cols, labelCol(aggregatorLabel(a)))
		}
	}
	for _, r := range rep.Raters {
		cols = append(cols, labelCol(r.ID))
	}
	k := len(rep.Levels)
	b := &block{cols: cols, n: len(rep.Items), filter: true, freeze: true, freezeCols: 2,
		row: func(i int, dst []any) []any {
			it := &rep.Items[i]
			dst = append(dst, it.Position, it.ID)
			if hasScore {
				dst = orBlank(dst, it.Score, 4, estimateCells)
			}
			if hasRank {
				dst = orBlank(dst, it.Rank, 3, rankCells)
			}
			dst = append(dst, x.labelValue(it.Consensus, numeric), float64(it.Prob))
			for c := 0; c < k; c++ {
				if c < len(it.Probs) {
					dst = append(dst, float64(it.Probs[c]))
				} else {
					dst = append(dst, nil)
				}
			}
			dst = append(dst, float64(it.Entropy), it.NLabels, it.NRaters, x.labelValue(it.Majority, numeric), float64(it.MajorityShare), it.Flags)
			if hasGold {
				dst = append(dst, x.labelValue(it.Gold, numeric))
			}
			dst = appendAggCells(dst, it.Baselines, aggs, aggScore, baselineScore, baselineLabel)
			for _, r := range rep.Raters {
				dst = append(dst, x.labelValue(it.Labels[r.ID], numeric))
			}
			return dst
		}}
	return b
}

// ratersBlock is the Raters table (also the raters CSV).
func (x *xlsxWriter) ratersBlock() *block {
	rep := x.rep
	if rep.Kind == KindValues {
		return x.valueRatersBlock()
	}
	hasSev := false
	for _, r := range rep.Raters {
		hasSev = hasSev || r.Severity != nil
	}
	hasModel := false
	for _, r := range rep.Raters {
		hasModel = hasModel || r.Model
	}
	cols := []col{x.text("Rater"), x.integer("Labels"), x.text("Reference")}
	if hasModel {
		cols = append(cols, x.text("Model rater"))
	}
	cols = append(cols,
		x.num("Precision"), x.num("Precision SD"), x.num("Precision 2.5%"), x.num("Precision 50%"), x.num("Precision 97.5%"),
		x.num("Variance"), x.num("Variance SD"), x.num("Variance 2.5%"), x.num("Variance 50%"), x.num("Variance 97.5%"))
	if hasSev {
		cols = append(cols, x.num("Severity"), x.num("Severity 2.5%"), x.num("Severity 97.5%"))
	}
	hasEps := hasEpsilon(rep)
	if hasEps {
		cols = append(cols, x.c("Error rate ε", x.st.num4, 4), x.integer("EM steps"))
	}
	hasConf := hasConfusionProbs(rep)
	if hasConf {
		cols = append(cols, x.percent("Accuracy"), x.percent("Accuracy 2.5%"), x.percent("Accuracy 97.5%"), x.num("Spam score"), x.text("Spammer"), x.integer("Community"))
	}
	cols = append(cols, x.percent("Agreement with consensus"))
	hasGold := false
	for _, r := range rep.Raters {
		hasGold = hasGold || r.Gold != nil
	}
	if hasGold {
		cols = append(cols, x.integer("Gold items"), x.integer("Gold labels"), x.integer("Gold correct"),
			x.percent("Gold accuracy"), x.percent("Gold accuracy 2.5%"), x.percent("Gold accuracy 97.5%"))
	}
	if rep.Agreement != nil && rep.Agreement.Kappa != nil {
		cols = append(cols, x.num("Mean kappa ("+rep.Agreement.Kappa.Weights+")"))
	}
	cols = append(cols, x.num("Mean log predictive"), x.integer("Flags"))
	aggs, aggScore := x.aggregatorColumns()
	for j, a := range aggs {
		if aggScore[j] {
			cols = append(cols, x.num("MAE vs "+aggregatorLabel(a)))
		} else {
			cols = append(cols, x.percent("Accuracy vs "+aggregatorLabel(a)))
		}
	}
	skills := x.skillColumns()
	for _, sk := range skills {
		cols = append(cols, x.num(sk.header))
	}
	for _, l := range rep.Levels {
		cols = append(cols, x.integer("Labels "+l.Code))
	}
	withKappa := rep.Agreement != nil && rep.Agreement.Kappa != nil
	b := &block{cols: cols, n: len(rep.Raters), filter: true, freeze: true, freezeCols: 1,
		row: func(i int, dst []any) []any {
			r := &rep.Raters[i]
			p, v := r.Precision, r.Variance
			dst = append(dst, r.ID, r.NLabels, yes(r.Reference))
			if hasModel {
				dst = append(dst, yes(r.Model))
			}
			dst = append(dst,
				float64(p.Mean), float64(p.SD), float64(p.Q025), float64(p.Q50), float64(p.Q975),
				float64(v.Mean), float64(v.SD), float64(v.Q025), float64(v.Q50), float64(v.Q975))
			if hasSev {
				if s := r.Severity; s != nil {
					dst = append(dst, float64(s.Mean), float64(s.Q025), float64(s.Q975))
				} else {
					dst = append(dst, nil, nil, nil)
				}
			}
			if hasEps {
				if e := r.Epsilon; e != nil {
					var steps any
					if e.Learnt {
						steps = e.Steps
					}
					dst = append(dst, float64(e.Value), steps)
				} else {
					dst = append(dst, nil, nil)
				}
			}
			if hasConf {
				dst = appendConfusionCells(dst, r)
			}
			dst = append(dst, float64(r.ConsensusAgreement))
			if hasGold {
				if g := r.Gold; g != nil {
					dst = append(dst, g.Items, g.Labels, g.Correct, float64(g.Accuracy), float64(g.Q025), float64(g.Q975))
				} else {
					dst = append(dst, nil, nil, nil, nil, nil, nil)
				}
			}
			if withKappa {
				dst = append(dst, float64(r.MeanKappa))
			}
			dst = append(dst, float64(r.MeanLogPred), r.Flags)
			dst = appendBaselineCells(dst, r, aggs, aggScore)
			dst = appendSkillCells(dst, r, skills)
			for c := range rep.Levels {
				if c < len(r.LevelCounts) {
					dst = append(dst, r.LevelCounts[c])
				} else {
					dst = append(dst, nil)
				}
			}
			return dst
		}}
	return b
}

// valueItemsBlock is the Items table of a report of values (bounded
// ratings): the consensus value on the rating scale with its 95%
// predictive interval, the latent score, the rank, the raters' mean and
// median, and each rater's rating.
func (x *xlsxWriter) valueItemsBlock() *block {
	rep := x.rep
	hasGold, hasScore, hasRank := false, false, false
	for i := range rep.Items {
		hasGold = hasGold || rep.Items[i].Gold != ""
		hasScore = hasScore || rep.Items[i].Score != nil
		hasRank = hasRank || rep.Items[i].Rank != nil
	}
	val := func(name string) col { return x.c(name, x.st.num2, 2) }
	cols := []col{x.integer("Rank"), x.text("Item"), val("Value"), val("Value 2.5%"), val("Value 97.5%"), val("Value SD")}
	if hasScore {
		cols = append(cols, x.num("Score"), x.num("Score SD"))
	}
	if hasRank {
		cols = append(cols, x.c("Mean rank", x.st.num2, 2), x.integer("Rank 2.5%"), x.integer("Rank 97.5%"))
	}
	cols = append(cols, val("Raters' mean"), val("Raters' median"), x.integer("Ratings"), x.integer("Flags"))
	if hasGold {
		cols = append(cols, col{header: "Gold", dec: -1})
	}
	for _, r := range rep.Raters {
		cols = append(cols, col{header: r.ID, dec: -1})
	}
	baseline := func(it *Item, name string) any {
		if b, ok := it.Baselines[name]; ok {
			return float64(b.Score)
		}
		return nil
	}
	return &block{cols: cols, n: len(rep.Items), filter: true, freeze: true, freezeCols: 2,
		row: func(i int, dst []any) []any {
			it := &rep.Items[i]
			dst = append(dst, it.Position, it.ID)
			dst = orBlank(dst, it.Value, 4, estimateCells)
			if hasScore {
				if s := it.Score; s != nil {
					dst = append(dst, float64(s.Mean), float64(s.SD))
				} else {
					dst = append(dst, nil, nil)
				}
			}
			if hasRank {
				dst = orBlank(dst, it.Rank, 3, rankCells)
			}
			dst = append(dst, baseline(it, "mean"), baseline(it, "median"), it.NLabels, it.Flags)
			if hasGold {
				dst = append(dst, x.labelValue(it.Gold, true))
			}
			for _, r := range rep.Raters {
				dst = append(dst, x.labelValue(it.Labels[r.ID], true))
			}
			return dst
		}}
}

// valueRatersBlock is the Raters table of a report of values: each
// rater's dispersion nu with its interval, bias, mean log predictive
// density and flags, and their distance from the raters' mean and median.
func (x *xlsxWriter) valueRatersBlock() *block {
	rep := x.rep
	hasBias := false
	for _, r := range rep.Raters {
		hasBias = hasBias || r.Bias != nil
	}
	cols := []col{x.text("Rater"), x.integer("Ratings"),
		x.num("Dispersion"), x.num("Dispersion SD"), x.num("Dispersion 2.5%"), x.num("Dispersion 50%"), x.num("Dispersion 97.5%")}
	if hasBias {
		cols = append(cols, x.num("Bias (probit scale)"))
	}
	withKappa := rep.Agreement != nil && rep.Agreement.Kappa != nil
	if withKappa {
		cols = append(cols, x.num("Mean kappa ("+rep.Agreement.Kappa.Weights+")"))
	}
	cols = append(cols, x.num("Mean log predictive density"), x.integer("Flags"))
	aggs, aggScore := x.aggregatorColumns()
	for j, a := range aggs {
		if aggScore[j] {
			cols = append(cols, x.c("MAE vs "+aggregatorLabel(a), x.st.num2, 2))
		} else {
			cols = append(cols, x.percent("Accuracy vs "+aggregatorLabel(a)))
		}
	}
	skills := x.skillColumns()
	for _, sk := range skills {
		cols = append(cols, x.num(sk.header))
	}
	return &block{cols: cols, n: len(rep.Raters), filter: true, freeze: true, freezeCols: 1,
		row: func(i int, dst []any) []any {
			r := &rep.Raters[i]
			dst = append(dst, r.ID, r.NLabels)
			d := r.Dispersion
			if d == nil {
				d = &r.Precision // documents that only repeat it there
			}
			dst = append(dst, float64(d.Mean), float64(d.SD), float64(d.Q025), float64(d.Q50), float64(d.Q975))
			if hasBias {
				if b := r.Bias; b != nil {
					dst = append(dst, float64(b.Mean))
				} else {
					dst = append(dst, nil)
				}
			}
			if withKappa {
				dst = append(dst, float64(r.MeanKappa))
			}
			dst = append(dst, float64(r.MeanLogPred), r.Flags)
			dst = appendBaselineCells(dst, r, aggs, aggScore)
			return appendSkillCells(dst, r, skills)
		}}
}

func (x *xlsxWriter) thresholds() error {
	rep := x.rep
	type row struct {
		rater string
		t     *Threshold
		sev   any
	}
	sev := map[string]any{}
	for _, r := range rep.Raters {
		if r.Severity != nil {
			sev[r.ID] = float64(r.Severity.Mean)
		}
	}
	var rows []row
	for i := range rep.Thresholds {
		rt := &rep.Thresholds[i]
		for j := range rt.Thresholds {
			rows = append(rows, row{rt.Rater, &rt.Thresholds[j], sev[rt.Rater]})
		}
	}
	b := &block{
		cols: []col{x.text("Rater"), x.integer("Threshold"), x.text("Between levels"), x.num("Mean"), x.num("SD"),
			x.num("2.5%"), x.num("50%"), x.num("97.5%"), x.text("Fixed"), x.num("Rater severity")},
		n: len(rows), filter: true, freeze: true, freezeCols: 1,
		row: func(i int, dst []any) []any {
			r := rows[i]
			t := r.t
			return append(dst, r.rater, t.Index, t.Between[0]+" | "+t.Between[1], float64(t.Mean), float64(t.SD),
				float64(t.Q025), float64(t.Q50), float64(t.Q975), yes(t.Fixed), r.sev)
		}}
	blocks := []*block{b}
	if len(rows) == 0 {
		blocks = append(blocks, noteBlock("No rater thresholds: the fit has none."))
	}
	return x.writeBlocks(SheetThresholds, blocks)
}

func noteBlock(lines ...string) *block {
	return &block{noHeader: true, spill: true, cols: []col{{dec: -1}}, n: len(lines), row: func(i int, dst []any) []any { return append(dst, lines[i]) }}
}

func (x *xlsxWriter) classes() error {
	rep := x.rep
	cl := rep.Classes
	if cl == nil {
		return x.writeBlocks(SheetClasses, []*block{noteBlock("No classes: the fit has no class distributions.")})
	}
	k := len(rep.Levels)
	blocks := []*block{{
		cols: []col{x.text("Class"), x.text("Name"), x.integer("Labels"), x.percent("Share of labels"), x.integer("Consensus items"),
			x.percent("Share of items"), x.num("Mean probability"), x.integer("Gold items")},
		n: len(cl.Counts), filter: true, freeze: true,
		row: func(i int, dst []any) []any {
			c := &cl.Counts[i]
			return append(dst, c.Class, c.Name, c.Labels, float64(c.LabelShare), c.Consensus, float64(c.ConsensusShare), float64(c.MeanProb), c.Gold)
		}}}
	for ci := range cl.Confusion {
		cf := &cl.Confusion[ci]
		cols := []col{x.text("Consensus \\ label")}
		for _, l := range rep.Levels {
			cols = append(cols, x.integer(l.Code))
		}
		cols = append(cols, x.integer("Total"))
		title := fmt.Sprintf("Rater %s: items by consensus class (rows) and the rater's label (columns)", cf.Rater)
		if cf.Agreement.Valid() {
			title += fmt.Sprintf("; agreement %.1f%%", 100*float64(cf.Agreement))
		}
		blocks = append(blocks, &block{title: title, cols: cols, n: k, firstColHeader: true,
			row: func(i int, dst []any) []any {
				dst = append(dst, rep.Levels[i].Code)
				tot := 0
				for j := 0; j < k; j++ {
					v := 0
					if i < len(cf.Counts) && j < len(cf.Counts[i]) {
						v = cf.Counts[i][j]
					}
					tot += v
					dst = append(dst, v)
				}
				return append(dst, tot)
			}})
	}
	return x.writeBlocks(SheetClasses, blocks)
}

// hasConfusionProbs reports whether the raters have confusion matrices
// (the confusion model).
func hasConfusionProbs(rep *Report) bool {
	for i := range rep.Raters {
		if len(rep.Raters[i].ConfusionProbs) > 0 {
			return true
		}
	}
	return false
}

// appendConfusionCells appends a rater's accuracy with its interval, spam
// score, spammer mark and community (the confusion model), blanks when it
// has none.
func appendConfusionCells(dst []any, r *Rater) []any {
	if a := r.Accuracy; a != nil {
		dst = append(dst, a.Mean, a.Q025, a.Q975)
	} else {
		dst = append(dst, nil, nil, nil)
	}
	if r.SpamScore != nil {
		dst = append(dst, *r.SpamScore, yes(r.Spammer))
	} else {
		dst = append(dst, nil, nil)
	}
	if r.Community > 0 {
		dst = append(dst, r.Community)
	} else {
		dst = append(dst, nil)
	}
	return dst
}

// confusionOrder returns the raters with confusion matrices, most labels
// first (ties by id).
func confusionOrder(rep *Report) []*Rater {
	var rs []*Rater
	for i := range rep.Raters {
		if len(rep.Raters[i].ConfusionProbs) > 0 {
			rs = append(rs, &rep.Raters[i])
		}
	}
	sort.SliceStable(rs, func(a, b int) bool {
		if rs[a].NLabels != rs[b].NLabels {
			return rs[a].NLabels > rs[b].NLabels
		}
		return rs[a].ID < rs[b].ID
	})
	return rs
}

// intervalText writes a probability with its 95% interval as
// "0.91 (0.85-0.95)".
func intervalText(v Interval) string {
	if !v.Mean.Valid() {
		return ""
	}
	return fmt.Sprintf("%.2f (%.2f-%.2f)", float64(v.Mean), float64(v.Q025), float64(v.Q975))
}

// confusionMatrices writes the Confusion matrices sheet (the confusion
// model): a table of the raters' accuracy, spam score and most confused
// classes, then one block per rater, most labels first, of the posterior
// mean probability of each label (columns) given the true class (rows),
// followed by the same cells as "mean (2.5%-97.5%)" text.
func (x *xlsxWriter) confusionMatrices() error {
	rep := x.rep
	rs := confusionOrder(rep)
	blocks := []*block{{
		title: "Raters' confusion matrices (the confusion model), most labels first; a spammer's rows are all alike",
		cols: []col{x.text("Rater"), x.integer("Labels"), x.percent("Accuracy"), x.percent("Accuracy 2.5%"), x.percent("Accuracy 97.5%"),
			x.num("Spam score"), x.text("Spammer"), x.integer("Community"), x.text("Most confused: true class"), x.text("Most confused: label"), x.num("Most confused: probability")},
		n: len(rs), filter: true, freeze: true, freezeCols: 1,
		row: func(i int, dst []any) []any {
			r := rs[i]
			dst = append(dst, r.ID, r.NLabels)
			dst = appendConfusionCells(dst, r)
			if m := r.MostConfused; m != nil {
				return append(dst, m.True, m.Label, m.Prob)
			}
			return append(dst, nil, nil, nil)
		}}}
	k := len(rep.Levels)
	for _, r := range rs {
		cols := []col{x.text("True class \\ label")}
		for _, l := range rep.Levels {
			cols = append(cols, x.num(l.Code))
		}
		for _, l := range rep.Levels {
			cols = append(cols, x.text(l.Code+" (95% interval)"))
		}
		title := fmt.Sprintf("Rater %s (%d labels): probability of each label given the true class", r.ID, r.NLabels)
		if a := r.Accuracy; a != nil {
			title += "; accuracy " + intervalText(*a)
		}
		if r.SpamScore != nil {
			title += fmt.Sprintf("; spam score %.3f", float64(*r.SpamScore))
			if r.Spammer {
				title += ", SPAMMER"
			}
		}
		blocks = append(blocks, &block{title: title, cols: cols, n: k, firstColHeader: true,
			row: func(i int, dst []any) []any {
				dst = append(dst, rep.Levels[i].Code)
				for j := 0; j < k; j++ {
					if i < len(r.ConfusionProbs) && j < len(r.ConfusionProbs[i]) {
						dst = append(dst, r.ConfusionProbs[i][j].Mean)
					} else {
						dst = append(dst, nil)
					}
				}
				for j := 0; j < k; j++ {
					if i < len(r.ConfusionProbs) && j < len(r.ConfusionProbs[i]) {
						dst = append(dst, intervalText(r.ConfusionProbs[i][j]))
					} else {
						dst = append(dst, nil)
					}
				}
				return dst
			}})
	}
	return x.writeBlocks(SheetConfusion, blocks)
}

// testsNote says which tests the Agreement sheet's z and p-values are.
func testsNote(a *Agreement) string {
	kind := "t tests on n - 1 degrees of freedom, as irrCAC (concord report --ci normal: statsmodels' and SAS's normal ones)"
	if a.CI == "normal" {
		kind = "normal (z) tests, as statsmodels and SAS (Cohen's kappa tested on its standard error under no agreement)"
	}
	s := "z and p-value test each coefficient against 0: " + kind + "; the p-values are two-sided."
	if a.Null != nil {
		s += " The vs columns test it against " + strconv.FormatFloat(float64(*a.Null), 'g', -1, 64) + " (--null), on its standard error."
	}
	return s
}

func (x *xlsxWriter) agreement() error {
	rep := x.rep
	a := rep.Agreement
	if a == nil {
		return x.writeBlocks(SheetAgreement, []*block{noteBlock(
			"No agreement analysis in this report: it was built without the labels' agreement coefficients.",
			"concord report computes them from the labels recorded in the fit result, from --labels or from --project.")})
	}
	qk, qv := QuoteCoefficient(a.Level)
	cols := []col{x.text("Coefficient"), x.text("Key"), x.text("Variant"), x.num("Value"), x.num("SE"),
		x.num("CI low"), x.num("CI high"), x.text("CI method"), x.num("z"), x.num("p-value")}
	if a.Null != nil {
		v := strconv.FormatFloat(float64(*a.Null), 'g', -1, 64)
		cols = append(cols, x.num("z (vs "+v+")"), x.num("p-value (vs "+v+")"))
	}
	cols = append(cols, x.text("Quote"), col{header: "What it is and how to read it", style: x.st.wrap, dec: -1})
	blocks := []*block{{
		cols: cols,
		n:    len(a.Coefficients), filter: true, freeze: true, freezeCols: 1,
		row: func(i int, dst []any) []any {
			c := &a.Coefficients[i]
			var quote any
			if c.Key == qk && c.Variant == qv {
				quote = "quote this one"
			}
			dst = append(dst, c.Label, c.Key, c.Variant, float64(c.Value), float64(c.SE), float64(c.CILow), float64(c.CIHigh), c.CIMethod, c.Z.float(), c.P.float())
			if a.Null != nil {
				dst = append(dst, c.ZNull.float(), c.PNull.float())
			}
			return append(dst, quote, coefficientHelp(c))
		}}}
	if a.CI != "" {
		blocks = append(blocks, noteBlock(testsNote(a)))
	}
	if a.Kappa != nil {
		blocks = append(blocks, noteBlock("The pairwise Cohen's kappas with the items each pair shares are on the "+SheetAgreementMatrix+" sheet; the agreement of each item and each rater on the "+SheetItemAgreement+" and "+SheetRaterAgreement+" sheets."))
	}
	if len(a.Aggregators) > 0 {
		blocks = append(blocks, &block{
			title: "Baseline aggregators beside the model",
			cols: []col{x.text("Aggregator"), x.integer("Items"), x.percent("Same consensus as the model"), x.num("Correlation with the model's score"),
				x.integer("Ties"), x.text("Converged"), x.integer("Iterations")},
			n: len(a.Aggregators),
			row: func(i int, dst []any) []any {
				g := &a.Aggregators[i]
				var conv, ties, iters any
				if g.Converged != nil {
					conv = "no"
					if *g.Converged {
						conv = "yes"
					}
					iters = g.Iterations
				}
				if g.Name == "majority" {
					ties = g.Ties
				}
				return append(dst, g.Label, g.Items, float64(g.AgreementWithModel), float64(g.ScoreCorrelation), ties, conv, iters)
			}})
	}
	about := []string{
		fmt.Sprintf("Level of measurement %s; %d items with labels, %d raters, %d labels.", a.Level, a.Items, a.Raters, a.Labels),
		fmt.Sprintf("Quote Krippendorff's alpha with the %s metric: it takes any number of raters and missing labels, and its metric is the scheme's level of measurement. Krippendorff's alpha with irrCAC's weights is another coefficient (the same for linear and quadratic weights as the linear and interval metrics; different for ordinal weights, which ignore the label frequencies). The Glossary sheet explains every coefficient.", qv),
		fmt.Sprintf("Intervals: %g%% confidence, %d bootstrap replicates over items (seed %d) unless the CI method says otherwise.", 100*a.ConfLevel, a.Bootstrap, a.Seed),
	}
	about = append(about, a.Notes...)
	nb := noteBlock(about...)
	nb.title = "About these coefficients"
	blocks = append(blocks, nb)
	return x.writeBlocks(SheetAgreement, blocks)
}

func (x *xlsxWriter) diagnostics() error {
	rep := x.rep
	d := &rep.Diagnostics
	ps := d.Parameters
	// The group summary and the verdict sit to the right of the parameter
	// table, in columns J onwards.
	var sides [][]any
	sides = append(sides, []any{
		excelize.Cell{StyleID: x.st.header, Value: "Group"}, excelize.Cell{StyleID: x.st.header, Value: "Parameters"},
		excelize.Cell{StyleID: x.st.header, Value: "Max R-hat"}, excelize.Cell{StyleID: x.st.header, Value: "Min bulk ESS"},
		excelize.Cell{StyleID: x.st.header, Value: "Min tail ESS"}, excelize.Cell{StyleID: x.st.header, Value: "Over R-hat limit"},
		excelize.Cell{StyleID: x.st.header, Value: "Under ESS limit"}})
	for _, g := range d.Groups {
		sides = append(sides, []any{g.Group, cell(g.Parameters, x.st.int), cell(g.MaxRhat, x.st.num4), cell(g.MinESSBulk, x.st.thous),
			cell(g.MinESSTail, x.st.thous), cell(g.OverRhat, x.st.int), cell(g.UnderESS, x.st.int)})
	}
	conv := "no"
	if d.Converged {
		conv = "yes"
	}
	sides = append(sides, nil,
		[]any{excelize.Cell{StyleID: x.st.bold, Value: "Converged"}, conv},
		[]any{excelize.Cell{StyleID: x.st.bold, Value: "R-hat limit"}, d.LimitRhat},
		[]any{excelize.Cell{StyleID: x.st.bold, Value: "ESS limit"}, d.LimitESS},
		[]any{excelize.Cell{StyleID: x.st.bold, Value: "Max R-hat"}, cell(d.MaxRhat, x.st.num4)},
		[]any{excelize.Cell{StyleID: x.st.bold, Value: "Min bulk ESS"}, cell(d.MinESSBulk, x.st.thous)},
		[]any{excelize.Cell{StyleID: x.st.bold, Value: "Min tail ESS"}, cell(d.MinESSTail, x.st.thous)},
		[]any{excelize.Cell{StyleID: x.st.bold, Value: "Kept draws"}, cell(d.Draws, x.st.int)},
		[]any{excelize.Cell{StyleID: x.st.bold, Value: "Fit time (s)"}, cell(d.Seconds, x.st.num2)},
		[]any{excelize.Cell{StyleID: x.st.bold, Value: "Sweeps per second"}, cell(d.SweepsPerSecond, x.st.thous)},
	)
	if d.ESSPerCPUSecond > 0 {
		sides = append(sides, []any{excelize.Cell{StyleID: x.st.bold, Value: "Min bulk ESS per CPU second"}, cell(d.ESSPerCPUSecond, x.st.num2)})
	}
	for _, k := range sortedKeys(d.Moves, nil) {
		sides = append(sides, []any{excelize.Cell{StyleID: x.st.bold, Value: k}, cell(d.Moves[k], x.st.num3)})
	}
	for _, n := range d.Notes {
		sides = append(sides, []any{excelize.Cell{StyleID: x.st.note, Value: n}})
	}
	const sideCol = 10 // J
	cols := []col{x.text("Parameter"), x.text("Group"), x.num("Mean"), x.num("SD"), x.c("R-hat", x.st.num4, 4),
		x.c("Bulk ESS", x.st.thous, 0), x.c("Tail ESS", x.st.thous, 0), x.text("Over the limits"), x.text("")}
	sideCols := []col{x.text("Group"), x.c("Parameters", x.st.int, 0), x.c("Max R-hat", x.st.num4, 4), x.c("Min bulk ESS", x.st.thous, 0),
		x.c("Min tail ESS", x.st.thous, 0), x.text("Over R-hat limit"), x.text("Under ESS limit")}
	n := max(len(ps), len(sides)-1)
	b := &block{cols: append(cols, sideCols...), n: n, filter: false, freeze: true, freezeCols: 1,
		row: func(i int, dst []any) []any {
			if i < len(ps) {
				p := &ps[i]
				var over any
				switch rh, es := !(float64(p.Rhat) < d.LimitRhat), !(float64(p.ESSBulk) >= d.LimitESS); {
				case rh && es:
					over = "R-hat, ESS"
				case rh:
					over = "R-hat"
				case es:
					over = "ESS"
				}
				dst = append(dst, p.Name, p.Group, float64(p.Mean), float64(p.SD), float64(p.Rhat), float64(p.ESSBulk), float64(p.ESSTail), over)
			} else {
				dst = append(dst, nil, nil, nil, nil, nil, nil, nil, nil)
			}
			dst = append(dst, nil)
			if i+1 < len(sides) {
				dst = append(dst, sides[i+1]...)
			}
			return dst
		}}
	// The side panel's cells carry their own styles (excelize.Cell values
	// are written as they are).
	last := len(ps) + 1
	b.after = func(hdr, first, lastRow int) error {
		if len(ps) > 0 {
			if err := x.f.AutoFilter(SheetDiagnostics, rangeRef(1, hdr, 8, last), nil); err != nil {
				return err
			}
			red := x.st.red
			if err := x.f.SetConditionalFormat(SheetDiagnostics, rangeRef(5, 2, 5, last), []excelize.ConditionalFormatOptions{{
				Type: "cell", Criteria: ">=", Value: strconv.FormatFloat(d.LimitRhat, 'g', -1, 64), Format: &red}}); err != nil {
				return err
			}
			if err := x.f.SetConditionalFormat(SheetDiagnostics, rangeRef(6, 2, 6, last), []excelize.ConditionalFormatOptions{{
				Type: "cell", Criteria: "<", Value: strconv.FormatFloat(d.LimitESS, 'g', -1, 64), Format: &red}}); err != nil {
				return err
			}
		}
		if len(d.Groups) > 0 {
			g1, g2 := 2, len(d.Groups)+1
			amber := x.st.amber
			if err := x.f.SetConditionalFormat(SheetDiagnostics, rangeRef(sideCol+2, g1, sideCol+2, g2), []excelize.ConditionalFormatOptions{{
				Type: "cell", Criteria: ">=", Value: strconv.FormatFloat(d.LimitRhat, 'g', -1, 64), Format: &amber}}); err != nil {
				return err
			}
			if err := x.f.SetConditionalFormat(SheetDiagnostics, rangeRef(sideCol+3, g1, sideCol+3, g2), []excelize.ConditionalFormatOptions{{
				Type: "cell", Criteria: "<", Value: strconv.FormatFloat(d.LimitESS, 'g', -1, 64), Format: &amber}}); err != nil {
				return err
			}
		}
		return nil
	}
	blocks := []*block{b}
	if mc := rep.ModelChoice; mc != nil {
		blocks = append(blocks, x.modelChoiceBlock(mc), noteBlock(modelChoiceNotes(mc)...))
	}
	return x.writeBlocks(SheetDiagnostics, blocks)
}

// modelChoiceBlock is the "Model choice" table of the Diagnostics sheet:
// one row per candidate model the fit chose among, with its scores, and
// the chosen one marked.
func (x *xlsxWriter) modelChoiceBlock(mc *ModelChoice) *block {
	cands := mc.Candidates
	return &block{title: "Model choice (" + string(mc.Family) + "): chosen " + mc.Chosen,
		cols: []col{x.text("Candidate"), x.text("Chosen"), x.num("Score"), x.num("Held-out"), x.c("Evidence", x.st.num2, 2),
			x.integer("Iterations"), x.c("Seconds", x.st.num2, 2), x.text("Note")},
		n: len(cands),
		row: func(i int, dst []any) []any {
			c := &cands[i]
			chosen := ""
			if c.Chosen {
				chosen = "CHOSEN"
			}
			note := c.Note
			if c.Failed != "" {
				note = "failed: " + c.Failed
			}
			var iters any
			if c.Iterations > 0 {
				iters = c.Iterations
			}
			return append(dst, c.Name, chosen, float64(c.Score), float64(c.HeldOut), float64(c.Evidence), iters, float64(c.Seconds), note)
		}}
}

// modelChoiceNotes are the lines under the Model choice table: why, and
// what its columns hold.
func modelChoiceNotes(mc *ModelChoice) []string {
	var lines []string
	if mc.Why != "" {
		lines = append(lines, "Why: "+mc.Why)
	}
	return append(lines, "Score: "+mc.ScoreIs, "Held-out: "+mc.HeldOutIs, "Evidence: "+mc.EvidenceIs,
		"Higher is better in every column; a failed candidate has no scores.")
}

// review writes the Review sheet: the labels to look at first (Review),
// with the item's text, consensus and observed agreement beside each.
func (x *xlsxWriter) review() error {
	rep := x.rep
	rows := Review(rep)
	values := rep.Kind == KindValues
	numeric := values || numericLevels(rep)
	hasText := false
	for i := range rows {
		hasText = hasText || rows[i].Text != ""
	}
	prob := "Probability"
	switch {
	case values:
		prob = "Tail probability"
	case len(rep.LabelErrors) > 0:
		prob = "P(right) = 1 - P(error)"
	}
	what := "Label"
	if values {
		what = "Rating"
	}
	cols := []col{x.integer("#"), x.text("Item")}
	if hasText {
		cols = append(cols, col{header: "Text", style: x.st.wrap, dec: -1})
	}
	cols = append(cols, x.text("Rater"), col{header: what, dec: -1}, x.c(prob, x.st.num4, 4), x.text("Flagged"), col{header: "Expected", dec: -1})
	if values {
		cols = append(cols, x.c("Item value", x.st.num2, 2), x.c("Item value 2.5%", x.st.num2, 2), x.c("Item value 97.5%", x.st.num2, 2))
	} else {
		cols = append(cols, col{header: "Item consensus", dec: -1}, x.num("P(consensus)"), x.percent("Majority share"))
	}
	cols = append(cols, x.integer("Raters"), x.integer("Item position"))
	probCol := indexOf(colHeaders(cols), prob) + 1
	b := &block{cols: cols, n: len(rows), filter: true, freeze: true, freezeCols: 2,
		row: func(i int, dst []any) []any {
			r := &rows[i]
			dst = append(dst, i+1, r.Item)
			if hasText {
				dst = append(dst, clipCell(r.Text))
			}
			flagged := "no"
			if r.Flagged {
				flagged = "yes"
			}
			dst = append(dst, r.Rater, x.labelValue(r.Label, numeric), float64(r.Prob), flagged, x.labelValue(r.Expected, numeric))
			if values {
				if v := r.ItemValue; v != nil {
					dst = append(dst, float64(v.Mean), float64(v.Q025), float64(v.Q975))
				} else {
					dst = append(dst, nil, nil, nil)
				}
			} else {
				dst = append(dst, x.labelValue(r.Consensus, numeric), float64(r.ConsensusProb), float64(r.MajorityShare))
			}
			return append(dst, r.NRaters, r.Position)
		}}
	if len(rows) > 0 {
		red := x.st.red
		b.after = func(hdr, first, last int) error {
			return x.f.SetConditionalFormat(SheetReview, rangeRef(probCol, first, probCol, last), []excelize.ConditionalFormatOptions{{
				Type: "cell", Criteria: "<", Value: strconv.FormatFloat(rep.Model.FlagThreshold, 'g', -1, 64), Format: &red}})
		}
	}
	return x.writeBlocks(SheetReview, []*block{b, noteBlock(reviewNote(rep, len(rows)))})
}

// reviewNote says what the Review sheet lists.
func reviewNote(rep *Report, n int) string {
	t := rep.Model.FlagThreshold
	switch {
	case rep.Kind == KindValues && n == 0:
		return fmt.Sprintf("No rating lies in a two-sided predictive tail below %g of its rater's predictive distribution; the fit keeps no probability of the other ratings, so there is nothing to review first.", t)
	case rep.Kind == KindValues:
		return fmt.Sprintf("The %d flagged ratings, least probable first: the two-sided tail probability of the rating under its rater's predictive distribution for the item is below %g.", n, t)
	case n == 0:
		return "The fit keeps no per-label probabilities: there is no review queue."
	}
	what := "posterior predictive probability (under the rater's predictive distribution for the item)"
	if len(rep.LabelErrors) > 0 {
		what = "probability of being right, 1 - P(error) (Kim & Ghahramani's robust classifier; every label is on the Label errors sheet)"
	}
	s := fmt.Sprintf("The labels to look at first: every flagged label (%s below %g, red) and the %d least probable labels, flagged or not, by increasing %s.", "probability", t, LowestLabels, what)
	if len(rep.Flags) == 0 {
		s = fmt.Sprintf("No label is flagged (%s below %g); these are the %d least probable labels, by increasing %s.", "probability", t, n, what)
	}
	return s + " Majority share is the share of the item's labels equal to its most common label (before any model; the Item agreement sheet's item agreement is the pairwise one); P(consensus) the model's probability of the item's consensus."
}

// colHeaders returns the columns' headers.
func colHeaders(cols []col) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.header
	}
	return out
}

func (x *xlsxWriter) flags() error {
	rep := x.rep
	if rep.Kind == KindValues {
		return x.valueFlags()
	}
	numeric := numericLevels(rep)
	rows := flagRows(rep)
	b := &block{
		cols: []col{x.text("Item"), x.text("Rater"), {header: "Label", dec: -1}, x.c("Probability", x.st.num4, 4), x.text("Flagged"),
			{header: "Expected", dec: -1}, {header: "Item consensus", dec: -1}, x.integer("Item position")},
		n: len(rows), filter: true, freeze: true,
		row: func(i int, dst []any) []any {
			f := &rows[i]
			flagged := "no"
			if f.Flagged {
				flagged = "yes"
			}
			return append(dst, f.Item, f.Rater, x.labelValue(f.Label, numeric), float64(f.Prob), flagged,
				x.labelValue(f.Expected, numeric), x.labelValue(f.Consensus, numeric), f.Position)
		}}
	if len(rows) > 0 {
		red := x.st.red
		b.after = func(hdr, first, last int) error {
			return x.f.SetConditionalFormat(SheetFlags, rangeRef(4, first, 4, last), []excelize.ConditionalFormatOptions{{
				Type: "cell", Criteria: "<", Value: strconv.FormatFloat(rep.Model.FlagThreshold, 'g', -1, 64), Format: &red}})
		}
	}
	var note string
	if len(rep.LabelErrors) > 0 {
		// The robust model: Probability is that of the label being right,
		// 1 - p_error.
		note = fmt.Sprintf("%d labels are flagged: the probability that the label is right (1 - p_error, given the other labels) is below %g; Expected is the other class. The Label errors sheet lists every label by p_error.", len(rep.Flags), rep.Model.FlagThreshold)
		if len(rep.Flags) == 0 {
			note = fmt.Sprintf("No label is right with a probability (1 - p_error) below %g. The Label errors sheet lists every label by p_error.", rep.Model.FlagThreshold)
		}
		return x.writeBlocks(SheetFlags, []*block{b, noteBlock(note)})
	}
	switch n := len(rep.Flags); {
	case n == 0 && len(rows) == 0:
		note = fmt.Sprintf("No label has a posterior predictive probability below %g.", rep.Model.FlagThreshold)
	case n == 0:
		note = fmt.Sprintf("No label has a posterior predictive probability below %g; the table shows the %d least probable labels.", rep.Model.FlagThreshold, len(rows))
	case len(rows) > n:
		note = fmt.Sprintf("%d labels are flagged (posterior predictive probability below %g); the table adds the least probable other labels (Flagged = no).", n, rep.Model.FlagThreshold)
	default:
		note = fmt.Sprintf("%d labels are flagged: their posterior predictive probability is below %g. They fit the model least.", n, rep.Model.FlagThreshold)
	}
	return x.writeBlocks(SheetFlags, []*block{b, noteBlock(note)})
}

// valueFlags writes the Flags sheet of a report of values: the ratings in
// a two-sided predictive tail of their rater, with the rater's expected
// rating and the item's consensus value and interval.
func (x *xlsxWriter) valueFlags() error {
	rep := x.rep
	rows := rep.Flags
	val := func(name string) col { return x.c(name, x.st.num2, 2) }
	b := &block{
		cols: []col{x.text("Item"), x.text("Rater"), {header: "Rating", dec: -1}, x.c("Tail probability", x.st.num4, 4),
			val("Rater's expected rating"), val("Item value"), val("Item value 2.5%"), val("Item value 97.5%"), x.integer("Item position")},
		n: len(rows), filter: true, freeze: true,
		row: func(i int, dst []any) []any {
			f := &rows[i]
			dst = append(dst, f.Item, f.Rater, x.labelValue(f.Label, true), float64(f.Prob), x.labelValue(f.Expected, true))
			if v := f.ItemValue; v != nil {
				dst = append(dst, float64(v.Mean), float64(v.Q025), float64(v.Q975))
			} else {
				dst = append(dst, nil, nil, nil)
			}
			return append(dst, f.Position)
		}}
	if len(rows) > 0 {
		red := x.st.red
		b.after = func(hdr, first, last int) error {
			return x.f.SetConditionalFormat(SheetFlags, rangeRef(4, first, 4, last), []excelize.ConditionalFormatOptions{{
				Type: "cell", Criteria: "<", Value: strconv.FormatFloat(rep.Model.FlagThreshold, 'g', -1, 64), Format: &red}})
		}
	}
	note := fmt.Sprintf("No rating lies in a two-sided predictive tail below %g of its rater's predictive distribution.", rep.Model.FlagThreshold)
	if n := len(rows); n > 0 {
		note = fmt.Sprintf("%d ratings are flagged: the two-sided tail probability 2 min(F(y), 1 - F(y)) of the rating under its rater's predictive distribution for the item is below %g. They fit the model least.", n, rep.Model.FlagThreshold)
	}
	return x.writeBlocks(SheetFlags, []*block{b, noteBlock(note)})
}

// glossary writes the Glossary sheet: what every number of the workbook
// is and how to read it (Glossary), after the coefficient to quote for the
// scheme.
func (x *xlsxWriter) glossary() error {
	g := Glossary()
	var intro []string
	if a := x.rep.Agreement; a != nil {
		_, v := QuoteCoefficient(a.Level)
		intro = append(intro, fmt.Sprintf("The agreement coefficient to quote for this scheme (%s, level of measurement %s): Krippendorff's alpha with the %s metric (Summary and Agreement sheets).", x.rep.Project.Scheme, a.Level, v))
	}
	intro = append(intro, "Every number of this workbook, where it appears, what it is and how to read it.")
	nb := noteBlock(intro...)
	nb.title = "Glossary"
	b := &block{cols: []col{x.text("Term"), x.text("Where"), {header: "What it is", style: x.st.wrap, dec: -1}, {header: "How to read it", style: x.st.wrap, dec: -1}},
		n: len(g), filter: true,
		row: func(i int, dst []any) []any {
			e := &g[i]
			return append(dst, e.Term, e.Where, e.Meaning, e.Reading)
		}}
	// The table first, so that its header row is the one repeated on
	// printed pages; the introduction below it.
	return x.writeBlocks(SheetGlossary, []*block{b, nb})
}

// chartDPI is the resolution of the pictures in the workbook.
const chartDPI = 96

func (x *xlsxWriter) charts() error {
	f := x.f
	const sh = SheetCharts
	if err := f.SetCellStr(sh, "A1", "Plots of the report (also written by concord report --format png|svg)"); err != nil {
		return err
	}
	f.SetCellStyle(sh, "A1", "A1", x.st.title)
	if err := x.printSetup(sh, 0, 1, 0); err != nil {
		return err
	}
	r := 3
	for i, p := range Plots(x.rep) {
		fig, err := x.rep.figure(p.Name)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := fig.renderDPI(&buf, PNG, chartDPI); err != nil {
			return fmt.Errorf("plot %s: %w", p.Name, err)
		}
		a, _ := excelize.CoordinatesToCellName(1, r)
		if i > 0 {
			// Each chart starts a printed page.
			if err := f.InsertPageBreak(sh, a); err != nil {
				return err
			}
		}
		f.SetCellStr(sh, a, p.Title)
		f.SetCellStyle(sh, a, a, x.st.bold)
		pic, _ := excelize.CoordinatesToCellName(1, r+1)
		scale := chartScale(float64(fig.w.Dots(chartDPI)), float64(fig.height().Dots(chartDPI)))
		if err := f.AddPictureFromBytes(sh, pic, &excelize.Picture{Extension: ".png", File: buf.Bytes(),
			Format: &excelize.GraphicOptions{AltText: p.Title, Name: p.Name, LockAspectRatio: true, ScaleX: scale, ScaleY: scale}}); err != nil {
			return fmt.Errorf("plot %s: %w", p.Name, err)
		}
		hpx := scale * float64(fig.height().Dots(chartDPI))
		r += int(math.Ceil(hpx/20)) + 3
	}
	return nil
}

// chartScale is the factor that fits a chart of w x h pixels (at 96 dpi)
// and its title row on one printed page (pageWidthPx x pageHeightPx); 1
// for charts that fit.
func chartScale(w, h float64) float64 {
	const titlePx = 2 * 20
	s := math.Min(pageWidthPx/w, (pageHeightPx-titlePx)/h)
	if !(s < 1) {
		return 1
	}
	return s
}

// modelDescription describes the model of a fit for the Summary sheet, by
// its output shape and engine (and the robust model by its likelihood).
func modelDescription(m multirater.ModelSettings) string {
	var model string
	switch {
	case m.Likelihood == robustLikelihood:
		model = "label-noise-robust Gaussian process classification (Kim & Ghahramani 2008): a probit likelihood mixed with a labelling-error rate per rater"
	default:
		model = shapeDescription(m)
		if model == "" {
			return m.Model
		}
	}
	switch m.Engine {
	case multirater.EngineGibbs, "": // documents without an engine were all made by Gibbs sampling
		return model + ", Gibbs sampling"
	}
	return model + ", " + m.Engine
}

// shapeDescription describes the model of a fit by its output shape; ""
// for an unknown shape.
func shapeDescription(m multirater.ModelSettings) string {
	var model string
	switch m.Shape() {
	case multirater.OutputScores:
		model = "ordinal multi-rater Gaussian process (Rogers, Girolami & Polajnar 2010, sec. 2.1-2.2)"
	case multirater.OutputClasses:
		model = "multi-rater Gaussian process classification, multinomial probit (Rogers et al. 2010, sec. 2.3)"
	case multirater.OutputRanking:
		model = "AUC scoring (Ridgway, Alquier, Chopin & Liang 2014): PAC-Bayesian pseudo-posterior of the scores on the AUC risk"
	case multirater.OutputValues:
		model = "multi-rater bounded Gaussian process regression (Jensen, Nielsen & Larsen 2013), " + m.Likelihood + " likelihood with a dispersion per rater"
	}
	return model
}

// skillColumn is one aggregator's own parameter of the raters (Wawa's
// weight, GLAD's ability, MACE's competence) as a column of the Raters
// sheet.
type skillColumn struct {
	agg, header string
}

// skillColumns returns the aggregators of the report's agreement that
// estimate a parameter of each rater, in the agreement's order.
func (x *xlsxWriter) skillColumns() []skillColumn {
	aggs, _ := x.aggregatorColumns()
	var out []skillColumn
	for _, a := range aggs {
		for i := range x.rep.Raters {
			if q, ok := x.rep.Raters[i].Baselines[a]; ok && q.Skill != nil && q.SkillKind != "" {
				name, _, _ := strings.Cut(aggregatorLabel(a), " (") // "Wawa", not "Wawa (weighted majority vote)"
				out = append(out, skillColumn{agg: a, header: name + " " + q.SkillKind})
				break
			}
		}
	}
	return out
}

// appendSkillCells appends rater r's parameter under each aggregator of
// skills, empty when the rater has none.
func appendSkillCells(dst []any, r *Rater, skills []skillColumn) []any {
	for _, sk := range skills {
		if q, ok := r.Baselines[sk.agg]; ok && q.Skill != nil {
			dst = append(dst, float64(*q.Skill))
		} else {
			dst = append(dst, nil)
		}
	}
	return dst
}

// appendBaselineCells appends rater r's agreement with each baseline
// aggregator of aggs: the MAE for the score aggregators (aggScore), the
// accuracy otherwise, empty when the rater has none.
func appendBaselineCells(dst []any, r *Rater, aggs []string, aggScore []bool) []any {
	return appendAggCells(dst, r.Baselines, aggs, aggScore,
		func(q RaterBaseline) any { return float64(q.MAE) }, func(q RaterBaseline) any { return float64(q.Accuracy) })
}

// appendAggCells appends a cell per baseline aggregator of aggs from its
// entry v in m: score(v) for the score aggregators (aggScore), other(v)
// for the others, empty when m has none.
func appendAggCells[V any](dst []any, m map[string]V, aggs []string, aggScore []bool, score, other func(V) any) []any {
	for j, a := range aggs {
		v, ok := m[a]
		switch {
		case !ok:
			dst = append(dst, nil)
		case aggScore[j]:
			dst = append(dst, score(v))
		default:
			dst = append(dst, other(v))
		}
	}
	return dst
}

// orBlank appends the cells that fill makes of *v, or n blank cells when v
// is nil.
func orBlank[T any](dst []any, v *T, n int, fill func(dst []any, v *T) []any) []any {
	if v == nil {
		for range n {
			dst = append(dst, nil)
		}
		return dst
	}
	return fill(dst, v)
}

// estimateCells are an estimate's mean, 95% interval and sd.
func estimateCells(dst []any, e *Estimate) []any {
	return append(dst, float64(e.Mean), float64(e.Q025), float64(e.Q975), float64(e.SD))
}

// rankCells are a rank's mean and 95% interval.
func rankCells(dst []any, r *RankSummary) []any {
	return append(dst, float64(r.Mean), float64(r.Q025), float64(r.Q975))
}
