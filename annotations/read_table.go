package annotations

import (
	"fmt"
	"strings"
)

// table turns the rows of a CSV file or a spreadsheet into labels, in long
// form (item, rater, label columns) or wide form (one column per rater).
// Positions are text lines for CSV (line > 0) and spreadsheet rows for XLSX
// (row > 0).
type table struct {
	sheet
	wide bool
	// long form
	item, rater, value int
	prob, kind         int // -1 when absent
	// wide form
	itemCol   int
	textCol   int
	goldCol   int
	raterCols []int
	itemIndex map[string]int // wide-form items with text or gold, index into parsed.Items

	where whereConds
	// echo is set when a wide table without an item-id header has a
	// header cell that occurs again as a value in its own column: the
	// header line was most likely a data row (a file without a header).
	echo struct {
		cell           string
		col, line, row int
	}
	rows    int // data rows seen
	matched int // data rows kept by where
}

// problem records a problem at a position of the table.
func (t *table) problem(line, row int, col, format string, args ...any) {
	t.c.rowProblem(line, row, col, format, args...)
}

// at describes a position for messages that point at another row.
func at(line, row int) string {
	if line > 0 {
		return fmt.Sprintf("line %d", line)
	}
	return fmt.Sprintf("row %d", row)
}

// setHeader reads the header row and decides the form: want is FormatAuto,
// FormatCSVLong or FormatCSVWide. It reports whether rows can follow.
func (t *table) setHeader(h []string, line, row int, want Format) bool {
	t.header = make([]string, len(h))
	for i, s := range h {
		t.header[i] = strings.Clone(s)
	}
	t.headerLine, t.headerRow = line, row
	ok := true
	allEmpty := true
	for i, s := range t.header {
		if !t.c.checkUTF8(line, row, fmt.Sprintf("#%d", i+1), s) {
			ok = false
		}
		if strings.TrimSpace(s) != "" {
			allEmpty = false
		}
	}
	if !ok {
		return false
	}
	if allEmpty {
		t.problem(line, row, "", "empty header (expected column names such as item_id,rater_id,label)")
		return false
	}
	if !t.namedColumns(line, row) {
		return false
	}
	named := t.opts.ItemCol != "" || t.opts.RaterCol != "" || t.opts.LabelCol != "" || t.opts.Rater != "" || t.opts.ProbCol != ""
	switch want {
	case FormatCSVWide:
		t.wide = true
	case FormatCSVLong:
		t.wide = false
	default:
		// A label or rater column (by alias or by name) means a long
		// table: a missing column is reported, never read as a wide
		// table with "score" as a rater.
		t.wide = !named && t.rater < 0 && t.value < 0
	}
	if !t.resolveWhere(line, row) {
		return false
	}
	if t.wide {
		if t.opts.ProbCol != "" {
			t.problem(line, row, t.opts.ProbCol, "a probability column (%s) needs a long table (item, rater, label and probability columns), not a wide one", flagHint(ProbColFlag, "prob_col", "COLUMN"))
			return false
		}
		t.prob, t.kind = -1, -1
		return t.wideHeader(line, row)
	}
	return t.longHeader(line, row, want)
}

// namedColumns finds the item, rater and label columns: those named by
// opts.ItemCol, opts.RaterCol and opts.LabelCol, the others by alias. A
// named column that is not in the header is a problem.
func (t *table) namedColumns(line, row int) bool {
	ok := true
	find := func(name, flag, field string) int {
		if i := columnIndex(t.header, name); i >= 0 {
			return i
		}
		t.problem(line, row, name, "no column %q, named with %s, in the header (columns: %s)", name, flagHint(flag, field, "COLUMN"), quoteList(t.header))
		ok = false
		return -1
	}
	t.item, t.rater, t.value = -1, -1, -1
	if n := t.opts.ItemCol; n != "" {
		t.item = find(n, ItemColFlag, "item_col")
	}
	if n := t.opts.RaterCol; n != "" {
		t.rater = find(n, RaterColFlag, "rater_col")
	}
	if n := t.opts.LabelCol; n != "" {
		t.value = find(n, LabelColFlag, "label_col")
	}
	t.prob, t.kind = -1, -1
	if n := t.opts.ProbCol; n != "" {
		t.prob = find(n, ProbColFlag, "prob_col")
	}
	if !ok {
		return false
	}
	if t.item < 0 && t.opts.ItemCol == "" {
		t.item = bestColumn(t.header, itemAliases, t.rater, t.value)
	}
	if t.rater < 0 && t.opts.RaterCol == "" && t.opts.Rater == "" {
		t.rater = bestColumn(t.header, raterAliases, t.item, t.value)
	}
	if t.value < 0 && t.opts.LabelCol == "" {
		t.value = bestColumn(t.header, labelAliases, t.item, t.rater)
	}
	if t.prob < 0 {
		t.prob = bestColumn(t.header, probAliases, t.item, t.rater, t.value)
	}
	t.kind = bestColumn(t.header, kindAliases, t.item, t.rater, t.value, t.prob)
	return true
}

func (t *table) resolveWhere(line, row int) bool {
	ok := true
	for _, k := range sortedKeys(t.opts.Where) {
		col := columnIndex(t.header, k)
		if col < 0 {
			t.problem(line, row, k, "unknown column %q in the row filter (columns: %s)", k, quoteList(t.header))
			ok = false
			continue
		}
		t.where = append(t.where, whereCond{key: k, col: col, value: strings.TrimSpace(t.opts.Where[k])})
	}
	return ok
}

func (t *table) isWhere(col int) bool {
	for _, w := range t.where {
		if w.col == col {
			return true
		}
	}
	return false
}

func (t *table) longHeader(line, row int, want Format) bool {
	ok := true
	missing := func(role string, aliases []string, flag, field string) {
		hint := ""
		if want != FormatCSVLong && t.value < 0 && t.opts.LabelCol == "" {
			hint = "; for a wide table (one column per rater) use the csv-wide format"
		}
		t.problem(line, row, "", "no %s column in the header %s (expected one of %s, or name it with %s)%s",
			role, quoteList(t.header), strings.Join(aliases, ", "), flagHint(flag, field, "COLUMN"), hint)
		ok = false
	}
	if t.item < 0 {
		missing("item id", itemAliases, ItemColFlag, "item_col")
	}
	if t.rater < 0 && t.opts.Rater == "" {
		missing("rater id", raterAliases, RaterColFlag, "rater_col")
	}
	if t.value < 0 {
		missing("label", labelAliases, LabelColFlag, "label_col")
	}
	if !ok {
		return false
	}
	// Two columns with the same name would make the choice arbitrary.
	for _, c := range []int{t.item, t.rater, t.value, t.prob, t.kind} {
		if c < 0 {
			continue
		}
		for i, h := range t.header {
			if i != c && normName(h) == normName(t.header[c]) {
				t.problem(line, row, h, "columns %d and %d are both named %q", c+1, i+1, h)
				ok = false
			}
		}
	}
	for i, h := range t.header {
		if i == t.item || i == t.rater || i == t.value || i == t.prob || i == t.kind || t.isWhere(i) || strings.TrimSpace(h) == "" {
			continue
		}
		t.c.parsed.Unused = append(t.c.parsed.Unused, h)
	}
	return ok
}

// reservedWide reports whether a wide-form column name is an item attribute
// rather than a rater.
func reservedWide(name string) bool {
	return aliasRank(name, textAliases) >= 0 || aliasRank(name, goldAliases) >= 0
}

func (t *table) wideHeader(line, row int) bool {
	t.itemCol = t.item
	if t.itemCol < 0 || t.isWhere(t.itemCol) {
		t.itemCol = 0
	}
	t.textCol = bestColumn(t.header, textAliases, t.itemCol)
	t.goldCol = bestColumn(t.header, goldAliases, t.itemCol)
	ok := true
	seen := map[string]int{}
	for i, h := range t.header {
		if i == t.itemCol || i == t.textCol || i == t.goldCol || t.isWhere(i) {
			continue
		}
		if reservedWide(h) {
			t.c.parsed.Unused = append(t.c.parsed.Unused, h)
			continue
		}
		if strings.TrimSpace(h) == "" {
			t.problem(line, row, fmt.Sprintf("#%d", i+1), "column %d has no name (expected a rater id in each column after the item id)", i+1)
			ok = false
			continue
		}
		if j, dup := seen[h]; dup {
			t.problem(line, row, h, "columns %d and %d are both named %q (each rater needs one column)", j+1, i+1, h)
			ok = false
			continue
		}
		seen[h] = i
		t.raterCols = append(t.raterCols, i)
	}
	if ok && len(t.raterCols) == 0 {
		t.problem(line, row, "", "no rater columns in the header %s (a wide table has the item id, then one column per rater; a long table needs item_id, rater_id and label columns)", quoteList(t.header))
		ok = false
	}
	return ok
}

// addRow reads one data row.
func (t *table) addRow(rec []string, line, row int) {
	t.rows++
	rec, ok := t.row(rec, line, row)
	if !ok {
		return
	}
	cell := func(i int) string {
		if i < len(rec) {
			return rec[i]
		}
		return ""
	}
	if !t.where.keep(func(w *whereCond) string { return cell(w.col) }) {
		return
	}
	t.matched++
	if t.wide {
		t.addWideRow(cell, line, row)
		return
	}
	rater, raterCol := t.opts.Rater, RaterFlag
	if t.rater >= 0 {
		rater, raterCol = cell(t.rater), t.header[t.rater]
	}
	t.c.label(cell(t.item), rater, cell(t.value), line, row, t.header[t.item], raterCol, t.header[t.value])
	t.probKind(cell)
}

// probKind sets the probability and rater kind of the label just read,
// from their columns where the table has them.
func (t *table) probKind(cell func(int) string) {
	if t.prob < 0 && t.kind < 0 {
		return
	}
	rl := &t.c.parsed.Labels[len(t.c.parsed.Labels)-1]
	if t.prob >= 0 {
		rl.Prob, rl.ProbCol = strings.TrimSpace(cell(t.prob)), t.header[t.prob]
	}
	if t.kind >= 0 {
		rl.Kind, rl.KindCol = strings.TrimSpace(cell(t.kind)), t.header[t.kind]
	}
}

// sheet is what every table of a file (labels, items) holds: the
// collector of its problems, the read options and the header row.
type sheet struct {
	c    *collector
	opts ReadOptions
	// padShort lets rows be shorter than the header (spreadsheets drop
	// trailing empty cells); otherwise a row of another width is ragged.
	padShort bool

	header     []string
	headerLine int
	headerRow  int
}

// row returns the fields of a data row fitted to the header (fit) after
// checking that they are UTF-8; ok is false, the problem recorded, for a
// row of another width or with a field that is not.
func (t *sheet) row(rec []string, line, row int) ([]string, bool) {
	rec, ok := t.fit(rec)
	if !ok {
		t.c.rowProblem(line, row, "", "%d fields, expected %d as in the header (%s)", len(rec), len(t.header), at(t.headerLine, t.headerRow))
		return rec, false
	}
	for i := range rec {
		if !t.c.checkUTF8(line, row, t.header[i], rec[i]) {
			return rec, false
		}
	}
	return rec, true
}

// fit returns a row's fields as many as the header's: a short row padded
// (when allowed), a long one cut when its extra fields are empty (and
// padding is allowed); ok is false (rec as given) when neither applies.
func (t *sheet) fit(rec []string) ([]string, bool) {
	switch {
	case len(rec) == len(t.header):
		return rec, true
	case !t.padShort:
		return rec, false
	case len(rec) < len(t.header):
		return rec, true // cells past the end read as empty
	}
	for _, v := range rec[len(t.header):] {
		if strings.TrimSpace(v) != "" {
			return rec, false
		}
	}
	return rec[:len(t.header)], true
}

// addWideRow reads a row of a wide table: an item, a label per rater
// column, the item's text and gold label.
func (t *table) addWideRow(cell func(int) string, line, row int) {
	id := cell(t.itemCol)
	if t.item < 0 && t.echo.cell == "" {
		for _, j := range append([]int{t.itemCol}, t.raterCols...) {
			if h := strings.TrimSpace(t.header[j]); h != "" && strings.TrimSpace(cell(j)) == h {
				t.echo.cell, t.echo.col, t.echo.line, t.echo.row = h, j, line, row
				break
			}
		}
	}
	empty := true
	for _, j := range t.raterCols {
		v := cell(j)
		if strings.TrimSpace(v) == "" {
			continue
		}
		empty = false
		t.c.label(id, t.header[j], v, line, row, t.header[t.itemCol], t.header[j], t.header[j])
	}
	text, gold := "", ""
	if t.textCol >= 0 {
		text = normText(cell(t.textCol))
	}
	if t.goldCol >= 0 {
		gold = strings.TrimSpace(cell(t.goldCol))
	}
	if text == "" && gold == "" {
		if empty && strings.TrimSpace(id) == "" {
			t.matched-- // an empty row
		}
		return
	}
	if t.itemIndex == nil {
		t.itemIndex = map[string]int{}
	}
	if j, dup := t.itemIndex[id]; dup {
		prev := t.c.parsed.Items[j]
		if prev.Text != text || prev.Gold != gold {
			t.problem(line, row, t.header[t.itemCol], "item %q appears again with another text or gold label", id)
		}
		return
	}
	t.itemIndex[id] = len(t.c.parsed.Items)
	t.c.parsed.Items = append(t.c.parsed.Items, Item{ID: strings.Clone(id), Text: text, Gold: strings.Clone(gold)})
}

// finish reports a table without data rows, or whose filter kept none.
func (t *table) finish() {
	if t.header == nil {
		return
	}
	if t.rows == 0 {
		t.problem(t.headerLine, t.headerRow, "", "the file has a header but no data rows")
		return
	}
	if t.echo.cell != "" {
		t.problem(t.headerLine, t.headerRow, "", "this line (%s) was read as the header and looks like data: %q, the name of column %d, is also a value of that column (%s); a label file needs a header line naming its columns, e.g. item_id,rater_id,label (long form) or item_id,RATER1,RATER2,... (wide form)",
			quoteList(t.header), t.echo.cell, t.echo.col+1, at(t.echo.line, t.echo.row))
		return
	}
	if t.matched > 0 || len(t.where) == 0 {
		return
	}
	reported := false
	for _, w := range t.where {
		if !w.seen[w.value] {
			t.problem(0, 0, w.key, "no row has %s = %q (%s)", w.key, w.value, w.describeSeen())
			reported = true
		}
	}
	if !reported {
		t.problem(0, 0, "", "no row matches every condition of the row filter %s", describeWhere(t.opts.Where))
	}
}

func describeWhere(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}
