package annotations

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Label Studio's JSON-MIN and CSV exports (label-studio-converter's
// convert_to_json_min and convert_to_csv) flatten each annotation into one
// record: the task data fields, the task "id", one field per labelling
// control named after it (its from_name), and the annotation's bookkeeping:
//
//	{"text": "...", "id": 266, "sentiment": "Positive", "annotator": 3,
//	 "annotation_id": 1000, "created_at": "...", "updated_at": "...",
//	 "lead_time": 4.2}
//
// A Choices control with one choice is written as the choice itself; other
// controls as the list of their result values ([{"rating": 4}],
// [{"choices": ["a", "b"]}]), which the CSV export writes as JSON text in the
// cell. The annotator is the user's e-mail or id.

// lsFlatMeta are the bookkeeping fields of a flattened export.
var lsFlatMeta = map[string]bool{"annotator": true, "annotation_id": true, "created_at": true,
	"updated_at": true, "lead_time": true, "agreement": true, "id": true, "drafts": true, "predictions": true}

// isLSFlat reports whether field names are those of a Label Studio JSON-MIN
// or CSV export: annotator and annotation_id are always written.
func isLSFlat(keys []string) bool {
	var ann, annID bool
	for _, k := range keys {
		switch k {
		case "annotator":
			ann = true
		case "annotation_id":
			annID = true
		}
	}
	return ann && annID
}

// flatRec is one record of a flattened export, its fields as JSON values
// (CSV cells as JSON strings, or as the JSON they hold when they hold a
// list or an object).
type flatRec struct {
	fields    map[string]json.RawMessage
	line, row int
}

// csvCellJSON turns a CSV cell of a flattened export into a JSON value.
func csvCellJSON(v string) json.RawMessage {
	t := strings.TrimSpace(v)
	if (strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{")) && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	if t == "" {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// lsFlatValue reads a control's value: a choice, a number, or the list of
// result values. typ is the control type it shows (choices, rating,
// number); empty reports a control the annotator left empty; msg a value
// that is not one label.
func lsFlatValue(raw json.RawMessage) (v, typ string, empty bool, msg string) {
	switch jsonKind(raw) {
	case 0, 'n':
		return "", "", true, ""
	case '"':
		s, _, _ := jsonScalar(raw)
		if strings.TrimSpace(s) == "" {
			return "", "", true, ""
		}
		return s, "choices", false, ""
	case '{':
		raw = append(append(json.RawMessage{'['}, raw...), ']')
	case '[':
	default:
		s, _, _ := jsonScalar(raw)
		return s, "number", false, ""
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return "", "", false, "expected a choice, a number or a list of result values such as [{\"rating\": 4}]"
	}
	if len(list) == 0 {
		return "", "", true, ""
	}
	if len(list) > 1 {
		return "", "", false, fmt.Sprintf("%d results in one annotation (expected one per rater and item)", len(list))
	}
	for _, key := range []string{"choices", "rating", "number"} {
		r, ok := list[0][key]
		if !ok {
			continue
		}
		if key != "choices" {
			s, present, ok := jsonScalar(r)
			if !ok || !present {
				return "", "", false, fmt.Sprintf("expected the %s as a number, found %s", key, jsonTypeName(r))
			}
			return s, key, false, ""
		}
		vals, m := doccanoLabels(r)
		if m != "" {
			return "", "", false, strings.Replace(m, "for one document", "in one annotation", 1)
		}
		if len(vals) == 0 {
			return "", "", true, ""
		}
		return vals[0], "choices", false, ""
	}
	return "", "", false, "not a choices, rating or number result (concord reads document labels)"
}

// readLabelStudioFlat reads the records of a JSON-MIN or CSV export; keys
// are the field names in order of first appearance.
func readLabelStudioFlat(recs []flatRec, keys []string, opts ReadOptions, c *collector) {
	c.parsed.Format = FormatLabelStudio
	f := &lsFlatReader{c: c, keys: keys, opts: opts}
	f.columns()
	if c.problems.Len() > 0 {
		return
	}
	if recs = f.filter(recs); recs == nil {
		return
	}
	if f.labelKey == "" && !f.guessLabelKey(recs) {
		return
	}
	if opts.TextColumns == nil {
		for _, k := range keys {
			if aliasRank(k, textAliases) >= 0 && k != f.labelKey {
				f.textKeys = []string{k}
				break
			}
		}
	}
	f.read(recs)
	for _, k := range keys {
		if k != f.itemKey && k != f.raterKey && k != f.labelKey && !slices.Contains(f.textKeys, k) && !lsFlatMeta[k] && !f.isWhere(k) {
			c.parsed.Unused = append(c.parsed.Unused, k)
		}
	}
}

// lsFlatReader reads a flattened Label Studio export (JSON-MIN or CSV):
// a record per annotation, the task's data and the controls as fields.
type lsFlatReader struct {
	c    *collector
	keys []string
	opts ReadOptions
	// The fields of the item (task) id, the annotator and the labelling
	// control; those joined into the item text (the first is the text's
	// field when writing back).
	itemKey, raterKey, labelKey string
	textKeys                    []string
	where                       whereConds
}

func (f *lsFlatReader) isWhere(k string) bool { return isWhereKey(k, sortedKeys(f.opts.Where)) }

// find returns the field named name with an option (flag, or field in a
// request), reporting a name that is none of the export's fields.
func (f *lsFlatReader) find(name, flag, field string) string {
	if i := columnIndex(f.keys, name); i >= 0 {
		return f.keys[i]
	}
	f.c.add(Problem{Column: name, Msg: fmt.Sprintf("no field %q, named with %s, in this Label Studio export (fields: %s)", name, flagHint(flag, field, "NAME"), quoteList(f.keys))})
	return ""
}

// columns resolves the fields the options name (or the export's own:
// the task id, the annotator) and the row filter's.
func (f *lsFlatReader) columns() {
	opts, has := f.opts, func(k string) bool { return slices.Contains(f.keys, k) }
	f.itemKey, f.raterKey = "id", "annotator"
	switch {
	case opts.ItemCol != "":
		f.itemKey = f.find(opts.ItemCol, ItemColFlag, "item_col")
	case has("item_id"):
		f.itemKey = "item_id" // data.item_id, as in the JSON export
	case !has("id"):
		f.c.add(Problem{Column: "id", Msg: fmt.Sprintf("Label Studio export without the task \"id\" (fields: %s); name the item id with %s", quoteList(f.keys), flagHint(ItemColFlag, "item_col", "NAME"))})
		f.itemKey = ""
	}
	if opts.RaterCol != "" {
		f.raterKey = f.find(opts.RaterCol, RaterColFlag, "rater_col")
	}
	if opts.LabelCol != "" {
		f.labelKey = f.find(opts.LabelCol, LabelColFlag, "label_col")
	}
	for _, name := range opts.TextColumns {
		if k := f.find(name, TextColsFlag, "text_columns"); k != "" {
			f.textKeys = append(f.textKeys, k)
		}
	}
	for _, w := range newWhereConds(opts) {
		if w.key = f.find(w.key, "--where", "where"); w.key != "" {
			f.where = append(f.where, w)
		}
	}
}

// filter returns the records the row filter keeps; nil, with the problem
// reported, when it keeps none.
func (f *lsFlatReader) filter(recs []flatRec) []flatRec {
	kept := recs[:0:0]
	for _, r := range recs {
		if f.where.keep(func(w *whereCond) string { v, _, _ := jsonScalar(r.fields[w.key]); return v }) {
			kept = append(kept, r)
		}
	}
	if len(f.where) > 0 && len(kept) == 0 {
		f.where.reportNone(f.c)
		return nil
	}
	return kept
}

func (f *lsFlatReader) taskOf(r flatRec) string {
	s, _, _ := jsonScalar(r.fields[f.itemKey])
	return s
}

// guessLabelKey finds the one field that looks like a labelling control;
// false, with the problem reported, when none or several do.
func (f *lsFlatReader) guessLabelKey(recs []flatRec) bool {
	var cands []string
	for _, k := range f.keys {
		if lsFlatMeta[k] || k == f.itemKey || k == f.raterKey || aliasRank(k, textAliases) >= 0 || f.isWhere(k) {
			continue
		}
		if lsFlatControl(recs, k, f.taskOf) {
			cands = append(cands, k)
		}
	}
	switch len(cands) {
	case 1:
		f.labelKey = cands[0]
		return true
	case 0:
		f.c.add(Problem{Msg: fmt.Sprintf("Label Studio export: no field holds labels (fields: %s; the task data holds one value per task); name the control with %s", quoteList(f.keys), flagHint(LabelColFlag, "label_col", "NAME"))})
	default:
		f.c.add(Problem{Msg: fmt.Sprintf("Label Studio export: %d fields could be the labelling control (%s); pick one with %s", len(cands), quoteList(cands), flagHint(LabelColFlag, "label_col", cands[0]))})
	}
	return false
}

// textKey is the field of the item text in a task's data: the first of
// textKeys, "" when none.
func (f *lsFlatReader) textKey() string {
	if len(f.textKeys) == 0 {
		return ""
	}
	return f.textKeys[0]
}

// read reads the records' items and labels, and keeps with each item what
// writing predictions back needs.
func (f *lsFlatReader) read(recs []flatRec) {
	c := f.c
	seen := map[string]int{}       // item -> index in c.parsed.Items
	var taskIDs []json.RawMessage  // by index in c.parsed.Items
	var taskData []json.RawMessage // by index in c.parsed.Items
	typ := ""
	for _, r := range recs {
		item, ok := jsonID(r.fields[f.itemKey])
		if !ok {
			c.rowProblem(r.line, r.row, f.itemKey, "expected the task id as a string or number, found %s", jsonTypeName(r.fields[f.itemKey]))
			continue
		}
		if _, ok := seen[item]; !ok {
			it := Item{ID: item}
			var parts []string
			for _, k := range f.textKeys {
				if s, present, ok := jsonScalar(r.fields[k]); ok && present && s != "" {
					parts = append(parts, s)
				}
			}
			it.Text = normText(strings.Join(parts, "\n"))
			seen[item] = len(c.parsed.Items)
			c.parsed.Items = append(c.parsed.Items, it)
			taskIDs = append(taskIDs, r.fields["id"])
			taskData = append(taskData, lsFlatData(r, f.keys, f.raterKey, f.labelKey))
		}
		v, t, empty, msg := lsFlatValue(r.fields[f.labelKey])
		if msg != "" {
			c.rowProblem(r.line, r.row, f.labelKey, "task %s, control %q: %s", item, f.labelKey, msg)
			continue
		}
		if empty {
			continue
		}
		if typ == "" || typ == "choices" && t != "choices" {
			typ = t
		}
		rater, ok := lsRater(r.fields[f.raterKey])
		if !ok {
			c.rowProblem(r.line, r.row, f.raterKey, "annotation has no annotator (expected the user's e-mail or id); a label with no rater cannot be used")
			continue
		}
		c.label(item, rater, v, r.line, r.row, f.itemKey, f.raterKey, f.labelKey)
	}
	for i := range c.parsed.Items {
		it := &c.parsed.Items[i]
		ref := LabelStudioRef{Task: bytes.TrimSpace(taskIDs[i]), FromName: f.labelKey, Type: typ, TextKey: f.textKey(), Data: taskData[i]}
		if jsonKind(ref.Task) == '"' {
			// A CSV cell: the task id is a number when it reads as one.
			if s, _, _ := jsonScalar(ref.Task); isJSONInt(s) {
				ref.Task = json.RawMessage(s)
			}
		}
		it.setLabelStudio(ref)
	}
}

// lsFlatData returns the task data fields of a flattened export's record as
// one JSON object (the fields that are neither bookkeeping, nor the
// annotator, nor the labelling control), in the order of keys; nil when
// there are none. A CSV export's fields are strings, as the CSV had them.
func lsFlatData(r flatRec, keys []string, raterKey, labelKey string) json.RawMessage {
	var b bytes.Buffer
	n := 0
	for _, k := range keys {
		if lsFlatMeta[k] || k == raterKey || k == labelKey {
			continue
		}
		v, ok := r.fields[k]
		if !ok || len(bytes.TrimSpace(v)) == 0 {
			continue
		}
		if n == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, v); err != nil {
			return nil
		}
		n++
	}
	if n == 0 {
		return nil
	}
	b.WriteByte('}')
	return b.Bytes()
}

// isJSONInt reports whether s is a plain integer literal.
func isJSONInt(s string) bool {
	_, ok := intID(s)
	return ok && (s == "0" || s[0] != '0') && !strings.HasPrefix(s, "-0")
}

// lsFlatControl reports whether field k of a flattened export looks like a
// labelling control rather than task data. Task data holds one value per
// task, different for every task (a text), or a media link; a control's
// values repeat across tasks or differ between the annotators of a task, or
// are lists of result values.
func lsFlatControl(recs []flatRec, k string, taskOf func(flatRec) string) bool {
	perTask := map[string]string{}
	distinct := map[string]bool{}
	constant, maxLen, any := true, 0, false
	for _, r := range recs {
		raw := r.fields[k]
		switch jsonKind(raw) {
		case 0, 'n':
			continue
		case '[', '{':
			_, _, _, msg := lsFlatValue(raw)
			return !strings.HasPrefix(msg, "not a choices") && !strings.HasPrefix(msg, "expected a choice")
		}
		s, _, _ := jsonScalar(raw)
		if strings.TrimSpace(s) == "" {
			continue
		}
		any = true
		if isMediaRef(s) {
			return false
		}
		maxLen = max(maxLen, len(s))
		t := taskOf(r)
		if prev, ok := perTask[t]; ok && prev != s {
			constant = false
		}
		perTask[t] = s
		distinct[s] = true
	}
	if !any {
		return false
	}
	data := constant && len(distinct) == len(perTask) && (len(perTask) >= 3 || maxLen > 30)
	return !data
}
