package annotations

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// jsonRecord is one element of a JSON array or one line of a JSON Lines file.
type jsonRecord struct {
	raw  []byte
	line int // 1-based line where the record starts
	row  int // 1-based index in a JSON array; 0 for JSON Lines
}

// lineCounter maps increasing byte offsets to 1-based line numbers.
type lineCounter struct {
	data []byte
	off  int
	line int
}

func (lc *lineCounter) lineAt(off int) int {
	if off < lc.off {
		lc.off, lc.line = 0, 1
	}
	if off > len(lc.data) {
		off = len(lc.data)
	}
	lc.line += bytes.Count(lc.data[lc.off:off], []byte{'\n'})
	lc.off = off
	return lc.line
}

// jsonRecords splits data into records: the elements of a top-level array,
// or the non-blank lines of a JSON Lines file. Syntax errors are recorded in
// c.
func jsonRecords(data []byte, kind contentKind, c *collector) []jsonRecord {
	var recs []jsonRecord
	if kind == kindJSONLines {
		line := 0
		for len(data) > 0 {
			line++
			var l []byte
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				l, data = data[:i], data[i+1:]
			} else {
				l, data = data, nil
			}
			l = bytes.TrimSpace(l)
			if len(l) == 0 {
				continue
			}
			if !utf8.Valid(l) {
				c.lineProblem(line, "", "invalid UTF-8 text (save the file as UTF-8)")
				continue
			}
			if !json.Valid(l) {
				var v any
				err := json.Unmarshal(l, &v)
				msg := "invalid JSON"
				if err != nil {
					msg += ": " + err.Error()
				}
				c.lineProblem(line, "", "%s (JSON Lines holds one complete JSON object per line)", msg)
				continue
			}
			recs = append(recs, jsonRecord{raw: l, line: line})
		}
		return recs
	}
	lc := &lineCounter{data: data, line: 1}
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		c.lineProblem(lc.lineAt(i), "", "invalid UTF-8 text (save the file as UTF-8)")
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	syntax := func(err error) {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			c.lineProblem(lc.lineAt(int(se.Offset)), "", "invalid JSON: %v", se)
			return
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			c.lineProblem(lc.lineAt(len(data)), "", "invalid JSON: the file ends before the array is closed")
			return
		}
		c.lineProblem(lc.lineAt(int(dec.InputOffset())), "", "invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != nil { // '['
		syntax(err)
		return nil
	}
	row := 0
	for dec.More() {
		off := int(dec.InputOffset())
		for off < len(data) && (data[off] == ',' || data[off] == ' ' || data[off] == '\t' || data[off] == '\r' || data[off] == '\n') {
			off++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			syntax(err)
			return recs
		}
		row++
		recs = append(recs, jsonRecord{raw: raw, line: lc.lineAt(off), row: row})
	}
	if _, err := dec.Token(); err != nil { // ']'
		syntax(err)
		return recs
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		c.lineProblem(lc.lineAt(int(dec.InputOffset())), "", "unexpected text after the closing ] of the JSON array")
	}
	return recs
}

// readJSONLabels reads every JSON-based format: plain records (JSON array or
// JSON Lines), Label Studio exports and doccano exports.
func readJSONLabels(br *bufio.Reader, opts ReadOptions, c *collector, kind contentKind, f Format) (*Parsed, error) {
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	switch {
	case f == FormatJSON && kind != kindJSONArray:
		c.add(Problem{Line: 1, Msg: "expected a JSON array of records; this looks like JSON Lines (use the jsonl format)"})
		return c.result()
	case f == FormatJSONL && kind != kindJSONLines:
		c.add(Problem{Line: 1, Msg: "expected JSON Lines (one object per line); this is a JSON array (use the json format)"})
		return c.result()
	}
	recs := jsonRecords(data, kind, c)
	if f == FormatAuto {
		f = FormatJSON
		if kind == kindJSONLines {
			f = FormatJSONL
		}
		if len(recs) > 0 {
			f = detectJSONFormat(recs[0].raw, f)
		}
	}
	c.parsed.Format = f
	if c.problems.Len() > 0 && len(recs) == 0 {
		return c.result()
	}
	if len(recs) == 0 {
		c.add(Problem{Line: 1, Msg: "no records (the JSON array is empty)"})
		return c.result()
	}
	switch f {
	case FormatLabelStudio:
		if keys, ok := flatKeys(recs[0].raw); ok && isLSFlat(keys) {
			readJSONFlat(recs, opts, c)
			break
		}
		readLabelStudio(recs, opts, c)
	case FormatDoccano:
		readDoccano(recs, opts, c)
	default:
		readJSONRecords(recs, opts, c)
	}
	return c.result()
}

// detectJSONFormat tells a Label Studio task or a doccano document from a
// plain {item_id, rater_id, label} record by the keys of the first record.
func detectJSONFormat(first []byte, plain Format) Format {
	var m map[string]json.RawMessage
	if json.Unmarshal(first, &m) != nil {
		return plain
	}
	if d, ok := m["data"]; ok && jsonKind(d) == '{' {
		return FormatLabelStudio
	}
	if _, ok := m["annotation_id"]; ok {
		if _, ok := m["annotator"]; ok {
			return FormatLabelStudio // JSON-MIN
		}
	}
	for _, k := range []string{"annotations", "completions"} {
		if a, ok := m[k]; ok && jsonKind(a) == '[' {
			var anns []map[string]json.RawMessage
			if json.Unmarshal(a, &anns) == nil {
				for _, an := range anns {
					if _, ok := an["result"]; ok {
						return FormatLabelStudio
					}
				}
				if _, ok := m["text"]; ok {
					return FormatDoccano
				}
			}
		}
	}
	if isDoccanoShape(m) {
		return FormatDoccano
	}
	return plain
}

// isDoccanoShape reports whether a record has the shape of a doccano
// document: a "text" field and a "label" or "labels" field, the label a list
// (never a plain record's label) or a string or number with the item id and
// the rater, if the record names one, under fields doccano writes ("id",
// "item_id", "doc_id"; "annotator", "user", ...). A record that names its
// item "task" or its rater "rater_id" or "worker" is a plain record with a
// text field, read with the plain reader's aliases.
func isDoccanoShape(m map[string]json.RawMessage) bool {
	if _, ok := m["text"]; !ok {
		return false
	}
	hasLabel := false
	for _, k := range []string{"label", "labels"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		switch jsonKind(v) {
		case '[':
			return true
		case '{':
		default:
			hasLabel = true
		}
	}
	if !hasLabel {
		return false
	}
	for k := range m {
		if aliasRank(k, itemAliases) >= 0 && !isWhereKey(k, doccanoIDKeys) {
			return false
		}
		if aliasRank(k, raterAliases) >= 0 && !isWhereKey(k, doccanoUserKeys) {
			return false
		}
	}
	return true
}

// jsonKind returns the first significant byte of a JSON value: '{', '[',
// '"', 'n' (null), 't'/'f' (booleans), or a digit or '-' for numbers.
func jsonKind(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// jsonScalar returns the text of a string, number or boolean JSON value.
// Numbers keep their literal text ("3" stays "3", "3.0" stays "3.0"). null
// reads as missing. ok is false for objects and arrays.
func jsonScalar(raw []byte) (s string, present, ok bool) {
	raw = bytes.TrimSpace(raw)
	switch jsonKind(raw) {
	case 0, 'n':
		return "", false, true
	case '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", true, false
		}
		return s, true, true
	case '{', '[':
		return "", true, false
	case 't', 'f':
		return string(raw), true, true
	}
	return string(raw), true, true
}

// jsonTypeName names the type of a JSON value for messages.
func jsonTypeName(raw []byte) string {
	switch jsonKind(raw) {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// readJSONRecords reads {item_id, rater_id, label} records, with the same
// name aliases as long-form CSV.
func readJSONRecords(recs []jsonRecord, opts ReadOptions, c *collector) {
	unused := map[string]bool{}
	used := map[string]bool{}
	where := newWhereConds(opts)
	matched := 0
	for ri, rec := range recs {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(rec.raw, &m); err != nil || m == nil {
			c.rowProblem(rec.line, rec.row, "", "expected a JSON object {\"item_id\": ..., \"rater_id\": ..., \"label\": ...}, found %s", jsonTypeName(rec.raw))
			continue
		}
		jr := newJSONRecord(rec, m, opts)
		// An unknown filter field is reported once, against the first
		// record.
		if ri == 0 && !where.checkFields(c, rec, jr.keys, func(k string) bool { return jr.find(k) >= 0 }) {
			return
		}
		if !where.keep(func(w *whereCond) string { return jr.value(w.key) }) {
			continue
		}
		matched++
		jr.read(c, used, unused)
	}
	for _, k := range sortedKeys(unused) {
		if !used[k] && !isWhereKey(k, sortedKeys(opts.Where)) {
			c.parsed.Unused = append(c.parsed.Unused, k)
		}
	}
	if len(where) > 0 && matched == 0 && c.problems.Len() == 0 {
		where.reportNone(c)
	}
}

// jsonFlatRecord is one record of a JSON records file: its fields (keys
// sorted) and which of them hold the item, the rater and the label (an
// index in keys; -1 for none, -2 for a field named by the options that the
// record lacks).
type jsonFlatRecord struct {
	rec        jsonRecord
	m          map[string]json.RawMessage
	keys       []string
	opts       ReadOptions
	ik, rk, vk int
	pk, kk     int // probability and rater-kind fields, -1 when absent (pk -2: named but absent)
}

func newJSONRecord(rec jsonRecord, m map[string]json.RawMessage, opts ReadOptions) *jsonFlatRecord {
	jr := &jsonFlatRecord{rec: rec, m: m, keys: slices.Sorted(maps.Keys(m)), opts: opts}
	named := func(name string) int {
		if name == "" {
			return -1
		}
		if i := jr.find(name); i >= 0 {
			return i
		}
		return -2 // named but absent
	}
	jr.ik, jr.rk, jr.vk = named(opts.ItemCol), named(opts.RaterCol), named(opts.LabelCol)
	if jr.ik == -1 {
		jr.ik = bestColumn(jr.keys, itemAliases, jr.rk, jr.vk)
	}
	if jr.rk == -1 && opts.Rater == "" {
		jr.rk = bestColumn(jr.keys, raterAliases, jr.ik, jr.vk)
	}
	if jr.vk == -1 {
		jr.vk = bestColumn(jr.keys, labelAliases, jr.ik, jr.rk)
	}
	jr.pk = named(opts.ProbCol)
	if jr.pk == -1 {
		jr.pk = bestColumn(jr.keys, probAliases, jr.ik, jr.rk, jr.vk)
	}
	jr.kk = bestColumn(jr.keys, kindAliases, jr.ik, jr.rk, jr.vk, jr.pk)
	return jr
}

// find returns the index of the first field named name (up to case and
// separators), or -1.
func (jr *jsonFlatRecord) find(name string) int {
	return columnIndex(jr.keys, name)
}

// value is the text of the (last) field named name, "" when there is none.
func (jr *jsonFlatRecord) value(name string) string {
	v := ""
	for _, k := range jr.keys {
		if normName(k) == normName(name) {
			v, _, _ = jsonScalar(jr.m[k])
		}
	}
	return v
}

// field reads the field at index k, the record's role (item id, rater id,
// label) named as given with the option flag or guessed from aliases.
func (jr *jsonFlatRecord) field(c *collector, role string, k int, aliases []string, given, flag, option string) (string, string, bool) {
	rec := jr.rec
	if k == -2 {
		c.rowProblem(rec.line, rec.row, given, "no field %q, named with %s (fields: %s)", given, flagHint(flag, option, "FIELD"), quoteList(jr.keys))
		return "", "", false
	}
	if k < 0 {
		c.rowProblem(rec.line, rec.row, aliases[0], "missing %s (expected a field named one of %s, or name it with %s)", role, strings.Join(aliases, ", "), flagHint(flag, option, "FIELD"))
		return "", "", false
	}
	name := jr.keys[k]
	v, _, ok := jsonScalar(jr.m[name])
	if !ok {
		c.rowProblem(rec.line, rec.row, name, "expected a string or number, found %s", jsonTypeName(jr.m[name]))
		return "", name, false
	}
	return v, name, true
}

// read reads the record's label, marking the fields it used and the others.
func (jr *jsonFlatRecord) read(c *collector, used, unused map[string]bool) {
	opts := jr.opts
	item, icol, ok1 := jr.field(c, "item id", jr.ik, itemAliases, opts.ItemCol, ItemColFlag, "item_col")
	rater, rcol, ok2 := opts.Rater, RaterFlag, true
	if jr.rk != -1 || opts.Rater == "" {
		rater, rcol, ok2 = jr.field(c, "rater id", jr.rk, raterAliases, opts.RaterCol, RaterColFlag, "rater_col")
	}
	value, vcol, ok3 := jr.field(c, "label", jr.vk, labelAliases, opts.LabelCol, LabelColFlag, "label_col")
	prob, pcol, ok4 := jr.prob(c)
	kind, kcol := "", ""
	if jr.kk >= 0 {
		kcol = jr.keys[jr.kk]
		kind, _, _ = jsonScalar(jr.m[kcol])
	}
	for i, k := range jr.keys {
		if i == jr.ik || i == jr.rk || i == jr.vk || i == jr.pk || i == jr.kk {
			used[k] = true
		} else {
			unused[k] = true
		}
	}
	if ok1 && ok2 && ok3 && ok4 {
		c.label(item, rater, value, jr.rec.line, jr.rec.row, icol, rcol, vcol)
		if pcol != "" || kcol != "" {
			rl := &c.parsed.Labels[len(c.parsed.Labels)-1]
			rl.Prob, rl.ProbCol = strings.TrimSpace(prob), pcol
			rl.Kind, rl.KindCol = strings.TrimSpace(kind), kcol
		}
	}
}

// prob reads the record's probability field, "" when it has none (or it
// is null).
func (jr *jsonFlatRecord) prob(c *collector) (string, string, bool) {
	opts := jr.opts
	if jr.pk == -2 {
		c.rowProblem(jr.rec.line, jr.rec.row, opts.ProbCol, "no field %q, named with %s (fields: %s)", opts.ProbCol, flagHint(ProbColFlag, "prob_col", "FIELD"), quoteList(jr.keys))
		return "", "", false
	}
	if jr.pk >= 0 && jr.m[jr.keys[jr.pk]] != nil {
		return jr.field(c, "probability", jr.pk, probAliases, opts.ProbCol, ProbColFlag, "prob_col")
	}
	return "", "", true
}

func isWhereKey(k string, keys []string) bool {
	for _, w := range keys {
		if normName(w) == normName(k) {
			return true
		}
	}
	return false
}

// jsonID reads an id given as a JSON string or number.
func jsonID(raw []byte) (string, bool) {
	s, present, ok := jsonScalar(raw)
	if !ok || !present {
		return "", false
	}
	return s, true
}

// flatKeys returns the field names of a JSON object in document order.
func flatKeys(raw []byte) ([]string, bool) {
	fields, err := orderedFields(raw)
	if err != nil {
		return nil, false
	}
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return keys, true
}

// readJSONFlat reads a Label Studio JSON-MIN export.
func readJSONFlat(recs []jsonRecord, opts ReadOptions, c *collector) {
	var keys []string
	seen := map[string]bool{}
	flat := make([]flatRec, 0, len(recs))
	for _, rec := range recs {
		fields, err := orderedFields(rec.raw)
		if err != nil {
			c.rowProblem(rec.line, rec.row, "", "expected a Label Studio JSON-MIN record (an object), found %s", jsonTypeName(rec.raw))
			continue
		}
		m := make(map[string]json.RawMessage, len(fields))
		for _, f := range fields {
			m[f.key] = f.raw
			if !seen[f.key] {
				seen[f.key] = true
				keys = append(keys, f.key)
			}
		}
		flat = append(flat, flatRec{fields: m, line: rec.line, row: rec.row})
	}
	if c.problems.Len() > 0 {
		return
	}
	readLabelStudioFlat(flat, keys, opts, c)
}
