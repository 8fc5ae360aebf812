package annotations

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Column-name aliases, in order of preference. Header names are matched after
// normName: lower case, surrounding spaces dropped, inner spaces and hyphens
// turned into underscores ("Item ID" and "item-id" both read as "item_id").
var (
	// itemAliases name the item id column (crowd-kit calls it "task"; the
	// natural names of essay-grading and clinical spreadsheets follow).
	itemAliases = []string{"item_id", "item", "itemid", "task_id", "task", "id", "doc_id", "document_id",
		"document", "doc", "essay_id", "essay", "student_id", "student", "patient_id", "patient",
		"sentence_id", "question_id", "unit_id"}
	// raterAliases name the rater id column (crowd-kit: "worker").
	raterAliases = []string{"rater_id", "rater", "raterid", "worker_id", "worker", "annotator_id", "annotator",
		"user_id", "user", "username", "coder", "judge", "grader", "marker", "assessor", "reviewer",
		"evaluator", "examiner", "labeler", "labeller", "scorer"}
	// labelAliases name the label column.
	labelAliases = []string{"label", "value", "rating", "score", "response", "answer", "grade",
		"mark", "points", "class", "category", "judgment", "judgement"}
	// goldAliases name a reference-label column of an items file (or of a
	// wide-form label file).
	goldAliases = []string{"gold", "gold_label", "truth", "true_label"}
	// probAliases name a label's probability column (a model rater's
	// confidence in the label given).
	probAliases = []string{"prob", "probability", "confidence", "label_prob", "label_probability"}
	// kindAliases name the column that marks a label's rater as a model.
	kindAliases = []string{"is_model", "rater_kind", "rater_type"}
	// textAliases name the item text column.
	textAliases = []string{"text"}
)

// normName normalises a column or field name for alias matching.
func normName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.ContainsAny(s, " -") {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' }), "_")
	}
	return s
}

// aliasRank returns the position of name (normalised) in aliases, or -1.
func aliasRank(name string, aliases []string) int {
	n := normName(name)
	for i, a := range aliases {
		if a == n {
			return i
		}
	}
	return -1
}

// bestColumn returns the index of the column whose name is the most preferred
// alias, or -1 when none matches. skip excludes columns already taken.
func bestColumn(header []string, aliases []string, skip ...int) int {
	best, bestRank := -1, len(aliases)
outer:
	for i, h := range header {
		for _, s := range skip {
			if s == i {
				continue outer
			}
		}
		if r := aliasRank(h, aliases); r >= 0 && r < bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// collector gathers what a reader finds: the labels, items and unused columns
// of a Parsed, and the problems, each stamped with the file name.
type collector struct {
	name     string
	problems ProblemList
	parsed   *Parsed
	// size is the input's size in bytes when known (else -1), to size the
	// label slice up front.
	size int64
}

// inputSize returns the size of r when it says (bytes.Reader,
// strings.Reader, regular files), and -1 otherwise.
func inputSize(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len())
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	}
	return -1
}

// reserve sizes the label slice for an input whose first bytes, head, hold
// lines text lines of one label each.
func (c *collector) reserve(head []byte) {
	lines := bytes.Count(head, []byte{'\n'})
	if c.size <= 0 || lines < 2 || len(c.parsed.Labels) > 0 {
		return
	}
	est := float64(c.size) / float64(len(head)) * float64(lines) * 1.06
	est = min(est, 1<<25)
	c.parsed.Labels = make([]RawLabel, 0, int(est))
}

func newCollector(opts ReadOptions, f Format) *collector {
	return &collector{
		name:     opts.Name,
		problems: ProblemList{Max: opts.MaxProblems},
		parsed:   &Parsed{Format: f, Name: opts.Name},
	}
}

func (c *collector) add(p Problem) {
	p.File = c.name
	c.problems.Add(p)
}

// lineProblem records a problem at a text line (CSV, JSON Lines).
func (c *collector) lineProblem(line int, col, format string, args ...any) {
	c.add(Problem{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)})
}

// rowProblem records a problem at a spreadsheet row or JSON record.
func (c *collector) rowProblem(line, row int, col, format string, args ...any) {
	c.add(Problem{Line: line, Row: row, Column: col, Msg: fmt.Sprintf(format, args...)})
}

func (c *collector) label(item, rater, value string, line, row int, itemCol, raterCol, valueCol string) {
	c.parsed.Labels = append(c.parsed.Labels, RawLabel{
		Item: item, Rater: rater, Value: value,
		Line: line, Row: row,
		ItemCol: itemCol, RaterCol: raterCol, ValueCol: valueCol,
	})
}

// result returns the Parsed, or the problems when there are any. An input
// that yields no label at all is a problem too.
func (c *collector) result() (*Parsed, error) {
	if c.problems.Len() == 0 && len(c.parsed.Labels) == 0 {
		c.add(Problem{Msg: "no labels found"})
	}
	if err := c.problems.Err(); err != nil {
		return nil, err
	}
	return c.parsed, nil
}

// ReadLabels reads a label file in any supported format. With opts.Format ""
// or FormatAuto the format is detected from the content:
//
//   - a ZIP archive is an XLSX workbook (long or wide form, first sheet or
//     opts.Sheet);
//   - a JSON array is a Label Studio export when its first element is a task
//     (with "data" or "annotations[].result"), a doccano export when it is a
//     doccano document, and otherwise an array of {item_id, rater_id, label}
//     records;
//   - a JSON object on the first line means JSON Lines: doccano when the
//     first record is a doccano document, otherwise one {item_id, rater_id,
//     label} record per line. A doccano document has "text" and "label" or
//     "labels": a list, or a string or number with the id and the annotator
//     (if any) under doccano's names ("id", "item_id", "doc_id"; "annotator",
//     "user", "username", "user_id", "annotator_id", "annotation_approver");
//   - anything else is CSV or TSV (the delimiter, comma, tab or semicolon, is
//     sniffed from the header line): long form when the header names an item,
//     a rater and a label column, wide form (one row per item, one column per
//     rater) otherwise.
//
// FormatCSVLong and FormatCSVWide fix the layout of a table, CSV or XLSX;
// FormatXLSX and FormatAuto detect it from the header.
//
// Long-form column names are matched case-insensitively, with aliases:
//
//	item:  item_id, item, itemid, task_id, task, id, doc_id, document_id,
//	       document, doc, essay_id, essay, student_id, student, patient_id,
//	       patient, sentence_id, question_id, unit_id
//	rater: rater_id, rater, raterid, worker_id, worker, annotator_id, annotator,
//	       user_id, user, username, coder, judge, grader, marker, assessor,
//	       reviewer, evaluator, examiner, labeler, labeller, scorer
//	label: label, value, rating, score, response, answer, grade, mark,
//	       points, class, category, judgment, judgement
//
// so that crowd-kit's task,worker,label, item,annotator,value and a
// spreadsheet's Essay,Grader,Score all read. opts.ItemCol, opts.RaterCol and
// opts.LabelCol name the columns outright (any table, and JSON records);
// naming one, or a header with a label or rater alias, makes a table long
// form, and a missing column is reported by name, never read as a wide
// table. opts.Rater stands for a missing rater column.
// Label Studio's JSON-MIN and CSV exports (one record or row per
// annotation: the task data, the task "id", one field per labelling control
// named after it, "annotator", "annotation_id", "created_at", "updated_at",
// "lead_time") are recognised by their annotator and annotation_id fields;
// the label is the control's field: opts.LabelCol, else the one field that
// is neither bookkeeping nor task data (task data holds one value per task,
// different for every task, or a media link).
//
// A ZIP archive that is not a workbook is a set of label files (doccano's
// export: one JSONL file per annotator, named after them): each is read as
// above with the rater of records that name none taken from opts.Rater or
// the file's name.
//
// In wide form the item column is the one named like an item id (or the
// first), columns named text or gold (gold_label, truth, true_label) are item
// attributes, and every other column is a rater; an empty cell is "not rated".
//
// opts.Where keeps only the rows whose named column equals the value (for
// Label Studio exports the one column is from_name, the control's name).
// Columns present but not used are listed in Parsed.Unused.
//
// A rejected input returns a *ProblemList with one Problem per defect (up to
// opts.MaxProblems), each naming the file, line or row, column and what was
// expected; no partial result is returned. ReadLabels does not check ids or
// values against a scheme: BuildDataset does.
func ReadLabels(r io.Reader, opts ReadOptions) (*Parsed, error) {
	br := bufio.NewReaderSize(r, sniffSize)
	c := newCollector(opts, opts.Format)
	c.size = inputSize(r)
	kind, err := sniff(br, c)
	if err != nil {
		return nil, err
	}
	if kind == kindBad {
		return c.result()
	}
	f := opts.Format
	if f == "" {
		f = FormatAuto
	}
	switch f {
	case FormatAuto:
		switch kind {
		case kindZip:
			return readZipLabels(br, opts, c, FormatAuto)
		case kindJSONArray, kindJSONLines:
			return readJSONLabels(br, opts, c, kind, FormatAuto)
		case kindEmpty:
			c.add(Problem{Msg: "file is empty (expected a header line such as item_id,rater_id,label)"})
			return c.result()
		default:
			return readCSVLabels(br, opts, c, FormatAuto)
		}
	case FormatCSVLong, FormatCSVWide:
		switch kind {
		case kindZip:
			// A workbook in the named layout.
			return readXLSXLabels(br, opts, c, f)
		case kindEmpty:
			c.add(Problem{Msg: "file is empty (expected a header line)"})
			return c.result()
		}
		return readCSVLabels(br, opts, c, f)
	case FormatXLSX:
		if kind != kindZip {
			c.add(Problem{Msg: "file is not an XLSX workbook (expected a ZIP archive as written by Excel or LibreOffice)"})
			return c.result()
		}
		return readXLSXLabels(br, opts, c, FormatXLSX)
	case FormatJSON, FormatJSONL, FormatLabelStudio, FormatDoccano:
		switch kind {
		case kindZip:
			return readZipLabels(br, opts, c, f)
		case kindText:
			if f == FormatLabelStudio {
				return readCSVLabels(br, opts, c, f) // a CSV export
			}
		case kindJSONArray, kindJSONLines:
			return readJSONLabels(br, opts, c, kind, f)
		case kindEmpty:
			c.add(Problem{Msg: "file is empty"})
			return c.result()
		}
		c.add(Problem{Line: 1, Msg: fmt.Sprintf("expected %s: a JSON array or JSON objects, one per line", f)})
		return c.result()
	}
	c.add(Problem{Msg: fmt.Sprintf("unknown format %q (expected auto, csv-long, csv-wide, xlsx, json, jsonl, labelstudio or doccano)", opts.Format)})
	return c.result()
}

// whereCond is one opts.Where condition resolved to a column.
type whereCond struct {
	key   string // as given by the user
	col   int
	value string
	// seen collects a few distinct values of the column, for the problem
	// that reports an empty selection.
	seen map[string]bool
}

// note remembers a value of the column for a later "no row matched" problem.
func (w *whereCond) note(v string) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if len(w.seen) < 20 {
		w.seen[v] = true
	}
}

func (w *whereCond) describeSeen() string {
	if len(w.seen) == 0 {
		return "no values"
	}
	vals := sortedKeys(w.seen)
	for i, v := range vals {
		vals[i] = strconv.Quote(v)
	}
	s := strings.Join(vals, ", ")
	if len(w.seen) >= 20 {
		s += ", ..."
	}
	return "values found: " + s
}

// columnIndex returns the index of the first of names (a header's
// columns, a record's fields) that is name up to case and separators
// (normName), or -1.
func columnIndex(names []string, name string) int {
	n := normName(name)
	return slices.IndexFunc(names, func(h string) bool { return normName(h) == n })
}

// whereConds is a record reader's row filter (ReadOptions.Where): a
// condition a field, a record kept when every condition holds.
type whereConds []whereCond

// newWhereConds returns the row filter of opts, its keys as given.
func newWhereConds(opts ReadOptions) whereConds {
	var ws whereConds
	for _, k := range sortedKeys(opts.Where) {
		ws = append(ws, whereCond{key: k, value: strings.TrimSpace(opts.Where[k])})
	}
	return ws
}

// keep reports whether a record in which condition w's field has the
// value value(w) passes the filter, noting each value read for reportNone;
// the conditions after the first that fails are not read.
func (ws whereConds) keep(value func(w *whereCond) string) bool {
	for i := range ws {
		w := &ws[i]
		v := strings.TrimSpace(value(w))
		w.note(v)
		if v != w.value {
			return false
		}
	}
	return true
}

// reportNone reports that no record passed the filter, with the values
// each condition's field had.
func (ws whereConds) reportNone(c *collector) {
	for _, w := range ws {
		c.add(Problem{Column: w.key, Msg: fmt.Sprintf("no record has %s = %q (%s)", w.key, w.value, w.describeSeen())})
	}
}

// checkFields reports, against the first record, each condition whose
// field is none of the record's fields (keys, sorted; has says whether a
// condition's key names one); false when there is one.
func (ws whereConds) checkFields(c *collector, rec jsonRecord, keys []string, has func(key string) bool) bool {
	ok := true
	for _, w := range ws {
		if !has(w.key) {
			c.rowProblem(rec.line, rec.row, w.key, "unknown field %q in the row filter (fields: %s)", w.key, quoteList(keys))
			ok = false
		}
	}
	return ok
}

// checkUTF8 reports a field that is not valid UTF-8.
func (c *collector) checkUTF8(line, row int, col, v string) bool {
	if utf8.ValidString(v) {
		return true
	}
	c.rowProblem(line, row, col, "invalid UTF-8 text (save the file as UTF-8)")
	return false
}

// quoteList quotes and joins names for messages.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
