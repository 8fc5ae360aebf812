package annotations

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// doccano's text-classification export (https://doccano.github.io/doccano/,
// backend/data_export in github.com/doccano/doccano) is JSON Lines with one
// record per document:
//
//	{"id": 25, "text": "...", "label": ["yes"], "Comments": []}
//
// Current versions write one such file per annotator (named after the user,
// zipped together) unless the project is collaborative; older versions name
// the user in the record ("username", "user", "annotation_approver") or list
// every user's labels under "annotations": [{"label": 3, "user": 1}]. The
// annotator is read from, in this order: "annotator", "user", "username",
// "user_id", "annotator_id", "annotation_approver"; a record with a label and
// no annotator is a problem, since a label with no rater cannot be used (add
// "annotator": "NAME" to each line of a per-user file). The same records in a
// JSON array are read too.

var (
	doccanoIDKeys    = []string{"id", "item_id", "doc_id"}
	doccanoTextKeys  = []string{"text", "data"}
	doccanoLabelKeys = []string{"label", "labels", "cats"}
	doccanoUserKeys  = []string{"annotator", "user", "username", "user_id", "annotator_id", "annotation_approver"}
)

// doccanoLabels reads a label field: one string or number, or a list of
// them (each possibly wrapped in a one-element list). Span annotations
// ([start, end, label]) and several labels are problems.
func doccanoLabels(raw json.RawMessage) (vals []string, msg string) {
	switch jsonKind(raw) {
	case 0, 'n':
		return nil, ""
	case '{':
		return nil, "expected a label or a list of labels, found an object"
	case '[':
	default:
		v, _, _ := jsonScalar(raw)
		return []string{v}, ""
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, "expected a list of labels"
	}
	for _, el := range list {
		if jsonKind(el) == '[' {
			var inner []json.RawMessage
			if json.Unmarshal(el, &inner) != nil {
				return nil, "expected a list of labels"
			}
			if len(inner) != 1 {
				return nil, "found a span annotation [start, end, label]; concord reads document labels (text classification), not sequence labelling"
			}
			el = inner[0]
		}
		v, present, ok := jsonScalar(el)
		if !ok || !present {
			return nil, fmt.Sprintf("expected each label as a string or number, found %s", jsonTypeName(el))
		}
		vals = append(vals, v)
	}
	if len(vals) > 1 {
		return nil, fmt.Sprintf("%d labels (%s) for one document; concord takes one label per rater and item (multi-label classification is not supported)", len(vals), quoteList(vals))
	}
	return vals, ""
}

func readDoccano(recs []jsonRecord, opts ReadOptions, c *collector) {
	r := &doccanoReader{c: c, where: newWhereConds(opts), seenItems: map[string]bool{}}
	// A file in which no record names its annotator is one annotator's
	// file, as doccano exports them: the rater is opts.Rater, or the file
	// name.
	r.fileRater, r.fileRaterCol = opts.Rater, RaterFlag
	if r.fileRater == "" && !doccanoNamesUsers(recs) {
		r.fileRater, r.fileRaterCol = raterFromFileName(opts.Name), "file name"
	}
	allKeys, usedAll := map[string]bool{}, map[string]bool{}
	for ri, rec := range recs {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(rec.raw, &m); err != nil || m == nil {
			c.rowProblem(rec.line, rec.row, "", "expected a doccano record {\"id\": ..., \"text\": ..., \"label\": [...]}, found %s", jsonTypeName(rec.raw))
			continue
		}
		if ri == 0 && !r.where.checkFields(c, rec, slices.Sorted(maps.Keys(m)), func(k string) bool { _, ok := m[k]; return ok }) {
			return
		}
		used := r.record(rec, m)
		if used == nil {
			continue
		}
		for k := range m {
			allKeys[k] = true
			if used[k] {
				usedAll[k] = true
			}
		}
	}
	for _, k := range sortedKeys(allKeys) {
		if !usedAll[k] {
			c.parsed.Unused = append(c.parsed.Unused, k)
		}
	}
	if len(r.where) > 0 && r.matched == 0 && c.problems.Len() == 0 {
		r.where.reportNone(c)
	}
}

// doccanoReader reads the records of a doccano export into c.
type doccanoReader struct {
	c       *collector
	where   whereConds
	matched int
	// fileRater names the rater of records that name none (fileRaterCol
	// says where the name comes from).
	fileRater, fileRaterCol string
	seenItems               map[string]bool
}

// pickField returns the first of keys that the record has, not null, and
// its value ("", nil for none).
func pickField(m map[string]json.RawMessage, keys []string) (string, json.RawMessage) {
	for _, k := range keys {
		if v, ok := m[k]; ok && jsonKind(v) != 'n' {
			return k, v
		}
	}
	return "", nil
}

// record reads one record, m its fields, and returns the fields it used;
// nil for a record filtered out or with a problem (reported).
func (r *doccanoReader) record(rec jsonRecord, m map[string]json.RawMessage) map[string]bool {
	c := r.c
	used := map[string]bool{}
	for _, w := range r.where {
		used[w.key] = true
	}
	if !r.where.keep(func(w *whereCond) string { v, _, _ := jsonScalar(m[w.key]); return v }) {
		return nil
	}
	r.matched++
	idKey, idRaw := pickField(m, doccanoIDKeys)
	item, ok := jsonID(idRaw)
	if !ok {
		if idKey == "" {
			c.rowProblem(rec.line, rec.row, "id", "record has no id (expected \"id\" as a string or number)")
		} else {
			c.rowProblem(rec.line, rec.row, idKey, "expected the id as a string or number, found %s", jsonTypeName(idRaw))
		}
		return nil
	}
	used[idKey] = true
	if tk, traw := pickField(m, doccanoTextKeys); tk != "" {
		used[tk] = true
		if jsonKind(traw) == '"' && !r.seenItems[item] {
			text, _, _ := jsonScalar(traw)
			r.seenItems[item] = true
			c.parsed.Items = append(c.parsed.Items, Item{ID: item, Text: normText(text)})
		}
	}
	userKey, userRaw := pickField(m, doccanoUserKeys)
	user := ""
	if userKey != "" {
		var ok bool
		if user, ok = jsonID(userRaw); !ok {
			c.rowProblem(rec.line, rec.row, userKey, "expected the annotator as a string or number, found %s", jsonTypeName(userRaw))
			return nil
		}
	}
	if a, ok := m["annotations"]; ok && jsonKind(a) == '[' {
		used["annotations"] = true
		if !r.annotations(rec, item, idKey, a) {
			return nil
		}
	}
	if lk, lraw := pickField(m, doccanoLabelKeys); lk != "" {
		used[lk] = true
		byUser, ok := r.label(rec, item, idKey, user, userKey, lk, lraw)
		if !ok {
			return nil
		}
		if byUser {
			used[userKey] = true
		}
	}
	return used
}

// annotations reads doccano 1.x's list of every user's labels of one
// record; false when it is not a list of objects (reported).
func (r *doccanoReader) annotations(rec jsonRecord, item, idKey string, a json.RawMessage) bool {
	c := r.c
	var anns []map[string]json.RawMessage
	if err := json.Unmarshal(a, &anns); err != nil {
		c.rowProblem(rec.line, rec.row, "annotations", "expected a list of {\"label\": ..., \"user\": ...} objects")
		return false
	}
	for i, an := range anns {
		path := fmt.Sprintf("annotations[%d]", i)
		lv, lok := an["label"]
		vals, msg := doccanoLabels(lv)
		if !lok || msg != "" {
			if msg == "" {
				msg = "annotation has no label"
			}
			c.rowProblem(rec.line, rec.row, path+".label", "%s", msg)
			continue
		}
		if len(vals) == 0 {
			continue
		}
		u, uok := jsonID(an["user"])
		if !uok || u == "" {
			c.rowProblem(rec.line, rec.row, path+".user", "annotation has no user (expected the annotator's user id); a label with no rater cannot be used")
			continue
		}
		c.label(item, u, vals[0], rec.line, rec.row, idKey, path+".user", path+".label")
	}
	return true
}

// label reads the record's own label (field lk), by the record's user or
// else the file's rater; byUser when the user field named its rater, ok
// false when the label field has a problem (reported).
func (r *doccanoReader) label(rec jsonRecord, item, idKey, user, userKey, lk string, lraw json.RawMessage) (byUser, ok bool) {
	c := r.c
	vals, msg := doccanoLabels(lraw)
	switch {
	case msg != "":
		c.rowProblem(rec.line, rec.row, lk, "%s", msg)
		return false, false
	case len(vals) == 0:
		// An unlabelled document: the item is kept (with its text),
		// there is no label.
	case user == "" && r.fileRater != "":
		c.label(item, r.fileRater, vals[0], rec.line, rec.row, idKey, r.fileRaterCol, lk)
	case user == "":
		c.rowProblem(rec.line, rec.row, "annotator", "record has a label but no annotator (doccano writes one file per annotator without naming them: name the rater with %s, or add \"annotator\": \"NAME\" to each record); a label with no rater cannot be used", flagHint(RaterFlag, "rater", "NAME"))
	default:
		c.label(item, user, vals[0], rec.line, rec.row, idKey, userKey, lk)
		return true, true
	}
	return false, true
}

// doccanoNamesUsers reports whether any record names its annotator (or
// lists users' annotations).
func doccanoNamesUsers(recs []jsonRecord) bool {
	for _, rec := range recs {
		var m map[string]json.RawMessage
		if json.Unmarshal(rec.raw, &m) != nil {
			continue
		}
		for _, k := range append(doccanoUserKeys, "annotations") {
			if v, ok := m[k]; ok && jsonKind(v) != 'n' {
				return true
			}
		}
	}
	return false
}

// raterFromFileName returns the rater a per-annotator export file is named
// after: its base name without extension ("admin.jsonl" -> "admin"), or ""
// when there is no usable name.
func raterFromFileName(name string) string {
	base := path.Base(filepath.ToSlash(name))
	for _, ext := range []string{".jsonl", ".json", ".txt"} {
		if strings.HasSuffix(strings.ToLower(base), ext) {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	base = strings.TrimSpace(base)
	if base == "" || base == "." || base == "/" || base == "-" || validateID("rater id", base) != nil {
		return ""
	}
	return base
}
