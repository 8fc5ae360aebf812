package annotations

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"sort"
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
	allKeys, usedAll := map[string]bool{}, map[string]bool{}
	wk := whereKeys(opts.Where)
	var where []whereCond
	for _, k := range wk {
		where = append(where, whereCond{key: k, value: strings.TrimSpace(opts.Where[k])})
	}
	matched := 0
	seenItems := map[string]bool{}
	// A file in which no record names its annotator is one annotator's
	// file, as doccano exports them: the rater is opts.Rater, or the file
	// name.
	fileRater, fileRaterCol := opts.Rater, RaterFlag
	if fileRater == "" && !doccanoNamesUsers(recs) {
		fileRater, fileRaterCol = raterFromFileName(opts.Name), "file name"
	}
	for ri, rec := range recs {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(rec.raw, &m); err != nil || m == nil {
			c.rowProblem(rec.line, rec.row, "", "expected a doccano record {\"id\": ..., \"text\": ..., \"label\": [...]}, found %s", jsonTypeName(rec.raw))
			continue
		}
		pick := func(keys []string) (string, json.RawMessage) {
			for _, k := range keys {
				if v, ok := m[k]; ok && jsonKind(v) != 'n' {
					return k, v
				}
			}
			return "", nil
		}
		used := map[string]bool{}
		if ri == 0 {
			bad := false
			for _, w := range where {
				if _, ok := m[w.key]; !ok {
					keys := make([]string, 0, len(m))
					for k := range m {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					c.rowProblem(rec.line, rec.row, w.key, "unknown field %q in the row filter (fields: %s)", w.key, quoteList(keys))
					bad = true
				}
			}
			if bad {
				return
			}
		}
		keep := true
		for i := range where {
			w := &where[i]
			v, _, _ := jsonScalar(m[w.key])
			used[w.key] = true
			v = strings.TrimSpace(v)
			w.note(v)
			if v != w.value {
				keep = false
			}
		}
		if !keep {
			continue
		}
		matched++
		idKey, idRaw := pick(doccanoIDKeys)
		item, ok := jsonID(idRaw)
		if !ok {
			if idKey == "" {
				c.rowProblem(rec.line, rec.row, "id", "record has no id (expected \"id\" as a string or number)")
			} else {
				c.rowProblem(rec.line, rec.row, idKey, "expected the id as a string or number, found %s", jsonTypeName(idRaw))
			}
			continue
		}
		used[idKey] = true
		if tk, traw := pick(doccanoTextKeys); tk != "" {
			used[tk] = true
			if jsonKind(traw) == '"' {
				text, _, _ := jsonScalar(traw)
				if !seenItems[item] {
					seenItems[item] = true
					c.parsed.Items = append(c.parsed.Items, Item{ID: item, Text: normText(text)})
				}
			}
		}
		userKey, userRaw := pick(doccanoUserKeys)
		user := ""
		if userKey != "" {
			var ok bool
			if user, ok = jsonID(userRaw); !ok {
				c.rowProblem(rec.line, rec.row, userKey, "expected the annotator as a string or number, found %s", jsonTypeName(userRaw))
				continue
			}
		}
		if a, ok := m["annotations"]; ok && jsonKind(a) == '[' {
			// doccano 1.x: every user's labels in one record.
			used["annotations"] = true
			var anns []map[string]json.RawMessage
			if err := json.Unmarshal(a, &anns); err != nil {
				c.rowProblem(rec.line, rec.row, "annotations", "expected a list of {\"label\": ..., \"user\": ...} objects")
				continue
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
		}
		if lk, lraw := pick(doccanoLabelKeys); lk != "" {
			used[lk] = true
			vals, msg := doccanoLabels(lraw)
			if msg != "" {
				c.rowProblem(rec.line, rec.row, lk, "%s", msg)
				continue
			}
			if len(vals) == 0 {
				// An unlabelled document: the item is kept (with its
				// text), there is no label.
			} else if user == "" && fileRater != "" {
				c.label(item, fileRater, vals[0], rec.line, rec.row, idKey, fileRaterCol, lk)
			} else if user == "" {
				c.rowProblem(rec.line, rec.row, "annotator", "record has a label but no annotator (doccano writes one file per annotator without naming them: name the rater with %s, or add \"annotator\": \"NAME\" to each record); a label with no rater cannot be used", flagHint(RaterFlag, "rater", "NAME"))
			} else {
				used[userKey] = true
				c.label(item, user, vals[0], rec.line, rec.row, idKey, userKey, lk)
			}
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
	if len(where) > 0 && matched == 0 && c.problems.Len() == 0 {
		for _, w := range where {
			c.add(Problem{Column: w.key, Msg: fmt.Sprintf("no record has %s = %q (%s)", w.key, w.value, w.describeSeen())})
		}
	}
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
