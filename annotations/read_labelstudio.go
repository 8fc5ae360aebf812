package annotations

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Label Studio's JSON export (https://labelstud.io/guide/export, task format
// https://labelstud.io/guide/task_format) is an array of tasks:
//
//	{"id": 25, "data": {"text": "..."},
//	 "annotations": [{"completed_by": 3, "was_cancelled": false,
//	                  "result": [{"from_name": "entails", "to_name": "text", "type": "choices",
//	                              "value": {"choices": ["yes"]}}]}],
//	 "predictions": [...]}
//
// Each non-cancelled annotation is one rater's labelling of the task; its
// completed_by is a user id, or (in some exports) an object with id and
// email. Results of type choices (one choice), rating and number become
// labels; predictions are ignored.
//
// What writing the consensus back as Label Studio predictions needs is kept
// with each item, as JSON in Item.Attrs[LabelStudioAttr] (one text
// attribute, so that an items-file export reads it back unchanged): the task
// id (the item id may come from data.item_id instead), the labelling
// control's from_name, to_name and type, and the data field that holds the
// text.

// LabelStudioAttr is the Item.Attrs key of a Label Studio import's
// LabelStudioRef.
const LabelStudioAttr = "labelstudio"

// LabelStudioRef is where an item came from in Label Studio.
type LabelStudioRef struct {
	// Task is the task id as it was in the export (a JSON number or
	// string).
	Task json.RawMessage `json:"task,omitempty"`
	// FromName, ToName and Type are the control's name, the name of the
	// object it labels, and the result type (choices, rating, number).
	FromName string `json:"from_name,omitempty"`
	ToName   string `json:"to_name,omitempty"`
	Type     string `json:"type,omitempty"`
	// TextKey is the task data field that holds the text.
	TextKey string `json:"text_key,omitempty"`
	// Data is the task's data object as the export had it (every field,
	// in its order and JSON types), so that predictions written back carry
	// the task's own data; nil when the export had none.
	Data json.RawMessage `json:"data,omitempty"`
}

// LabelStudio returns what a Label Studio import kept with the item.
func (it *Item) LabelStudio() (LabelStudioRef, bool) {
	var ref LabelStudioRef
	v, ok := it.Attrs[LabelStudioAttr]
	if !ok || json.Unmarshal([]byte(v), &ref) != nil {
		return LabelStudioRef{}, false
	}
	return ref, true
}

// setLabelStudio stores ref with the item.
func (it *Item) setLabelStudio(ref LabelStudioRef) {
	b, err := json.Marshal(ref)
	if err != nil {
		panic("annotations: " + err.Error())
	}
	if it.Attrs == nil {
		it.Attrs = map[string]string{}
	}
	it.Attrs[LabelStudioAttr] = string(b)
}

type lsTask struct {
	ID          json.RawMessage   `json:"id"`
	Data        json.RawMessage   `json:"data"`
	Annotations []json.RawMessage `json:"annotations"`
	Completions []json.RawMessage `json:"completions"` // Label Studio before 1.0
}

type lsAnnotation struct {
	CompletedBy  json.RawMessage   `json:"completed_by"`
	WasCancelled json.RawMessage   `json:"was_cancelled"`
	Result       []json.RawMessage `json:"result"`
}

type lsResult struct {
	Type     string                     `json:"type"`
	FromName string                     `json:"from_name"`
	ToName   string                     `json:"to_name"`
	Value    map[string]json.RawMessage `json:"value"`
}

// lsKinds are the Label Studio result types read as labels, with the key of
// the value in the result's "value" object.
var lsKinds = map[string]string{"choices": "choices", "rating": "rating", "number": "number"}

// jsonField is one field of a JSON object, in document order.
type jsonField struct {
	key string
	raw json.RawMessage
}

// orderedFields returns the fields of a JSON object in document order.
func orderedFields(raw []byte) ([]jsonField, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not an object")
	}
	var fields []jsonField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields = append(fields, jsonField{key, v})
	}
	return fields, nil
}

// compactJSON returns raw without insignificant white space (raw is valid
// JSON).
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

// isMediaRef reports whether a task data string points at media rather than
// holding text.
func isMediaRef(s string) bool {
	for _, p := range []string{"http://", "https://", "s3://", "gs://", "azure-blob://", "/data/"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func readLabelStudio(recs []jsonRecord, opts ReadOptions, c *collector) {
	r := &lsReader{c: c, controls: map[string]int{}, controlInfo: map[string]lsControl{},
		otherControls: map[string]string{}, supported: map[string]bool{}, seenItems: map[string]bool{},
		textCols: opts.TextColumns, textSeen: map[string]bool{}}
	r.filter(opts)
	if c.problems.Len() > 0 {
		return
	}
	for _, rec := range recs {
		r.task(rec)
	}
	for _, name := range r.textCols {
		if !r.textSeen[name] {
			c.add(Problem{Column: name, Msg: fmt.Sprintf("no task has a data field %q, named by %s for the item text", name, flagHint(TextColsFlag, "text_columns", "NAMES"))})
		}
	}
	r.finish()
}

// lsReader reads the tasks of a Label Studio JSON export into c: the items
// (a task each), the labels of the chosen control, and what writing the
// consensus back needs.
type lsReader struct {
	c *collector
	// fromFilter is the control to read (filtered: named by the label
	// column or the row filter).
	fromFilter string
	filtered   bool
	// controls counts the labels read per control (from_name);
	// controlInfo is each control's first result's to_name and type;
	// supported holds every control of a choices, rating or number
	// result; otherControls the other controls, with their type.
	controls      map[string]int
	controlInfo   map[string]lsControl
	supported     map[string]bool
	otherControls map[string]string
	tasks         []lsItem
	seenItems     map[string]bool
	// textCols are the data fields ReadOptions.TextColumns names (nil:
	// data.text or the first text field); textSeen which of them a task had.
	textCols []string
	textSeen map[string]bool
}

type lsControl struct{ toName, typ string }

// lsItem is a task read as an item.
type lsItem struct {
	task    json.RawMessage
	textKey string
	data    json.RawMessage // the task's data object
	index   int             // in c.parsed.Items, or -1
}

// lsHit is a label of one control in an annotation, and where it is.
type lsHit struct{ value, col string }

// filter reads the control to take the labels of: the label column, or
// the row filter from_name (the only key a Label Studio export is filtered
// by).
func (r *lsReader) filter(opts ReadOptions) {
	r.fromFilter, r.filtered = strings.TrimSpace(opts.LabelCol), opts.LabelCol != ""
	for _, k := range sortedKeys(opts.Where) {
		if normName(k) != "from_name" {
			r.c.add(Problem{Column: k, Msg: fmt.Sprintf("unknown column %q in the row filter: Label Studio exports can be filtered by from_name (the name of the labelling control)", k)})
			continue
		}
		if w := strings.TrimSpace(opts.Where[k]); r.filtered && w != r.fromFilter {
			r.c.add(Problem{Column: "from_name", Msg: fmt.Sprintf("the control is named twice: %q by %s and %q by the row filter", r.fromFilter, LabelColFlag, w)})
		} else {
			r.fromFilter, r.filtered = w, true
		}
	}
}

// task reads one task: its item and text, then its annotations.
func (r *lsReader) task(rec jsonRecord) {
	c := r.c
	var task lsTask
	if err := json.Unmarshal(rec.raw, &task); err != nil {
		c.rowProblem(rec.line, rec.row, "", "expected a Label Studio task (an object with id, data and annotations): %s", jsonErrText(err))
		return
	}
	anns, annKey := task.Annotations, "annotations"
	if anns == nil && task.Completions != nil {
		anns, annKey = task.Completions, "completions"
	}
	var data []jsonField
	if len(task.Data) > 0 && jsonKind(task.Data) != 'n' {
		var err error
		if data, err = orderedFields(task.Data); err != nil {
			c.rowProblem(rec.line, rec.row, "data", "expected the task data as an object, found %s", jsonTypeName(task.Data))
			return
		}
	}
	item, itemCol, ok := lsTaskItem(&task, data)
	if !ok {
		c.rowProblem(rec.line, rec.row, "id", "task has no id (expected \"id\" or data.item_id as a string or number)")
		return
	}
	text, textKey, haveText := r.taskText(data, itemCol)
	var taskID json.RawMessage
	if _, ok := jsonID(task.ID); ok {
		taskID = bytes.TrimSpace(task.ID)
	}
	labelsBefore := len(c.parsed.Labels)
	newItem := !r.seenItems[item]
	if newItem {
		r.seenItems[item] = true
		// Every task is an item with its task id; one without text
		// is kept only if it has labels (below).
		var taskData json.RawMessage
		if len(data) > 0 {
			taskData = compactJSON(task.Data)
		}
		r.tasks = append(r.tasks, lsItem{task: taskID, textKey: textKey, data: taskData, index: len(c.parsed.Items)})
		c.parsed.Items = append(c.parsed.Items, Item{ID: item, Text: normText(text)})
	}
	for ai, araw := range anns {
		r.annotation(rec, item, itemCol, fmt.Sprintf("%s[%d]", annKey, ai), araw)
	}
	if newItem && !haveText && len(c.parsed.Labels) == labelsBefore {
		r.tasks[len(r.tasks)-1].index = -1 // no text, no labels: not an item
	}
}

// lsTaskItem returns a task's item id and where it is: data.item_id,
// data.id (the first that is not empty), or the task id; ok is false when
// there is none.
func lsTaskItem(task *lsTask, data []jsonField) (item, col string, ok bool) {
	for _, k := range []string{"item_id", "id"} {
		for _, f := range data {
			if f.key != k {
				continue
			}
			if v, ok := jsonID(f.raw); ok && v != "" {
				return v, "data." + k, true
			}
		}
	}
	v, ok := jsonID(task.ID)
	return v, "id", ok
}

// taskText returns a task's text and its data field: the fields
// ReadOptions.TextColumns names, joined by a newline (the first of them
// is the text's field), else lsTaskText's.
func (r *lsReader) taskText(data []jsonField, itemCol string) (text, key string, ok bool) {
	if r.textCols == nil {
		return lsTaskText(data, itemCol)
	}
	var parts []string
	for _, name := range r.textCols {
		for _, f := range data {
			if normName(f.key) != normName(name) {
				continue
			}
			r.textSeen[name] = true
			if s, present, _ := jsonScalar(f.raw); present && s != "" {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n"), r.textCols[0], len(parts) > 0
}

// lsTaskText returns a task's text and its data field: data.text, or the
// first string field that is not the item id or a media link.
func lsTaskText(data []jsonField, itemCol string) (text, key string, ok bool) {
	for _, f := range data {
		if f.key == "text" && jsonKind(f.raw) == '"' {
			text, _, _ = jsonScalar(f.raw)
			key, ok = f.key, true
		}
	}
	if ok {
		return text, key, true
	}
	for _, f := range data {
		if "data."+f.key == itemCol || jsonKind(f.raw) != '"' {
			continue
		}
		if s, _, _ := jsonScalar(f.raw); !isMediaRef(s) {
			return s, f.key, true
		}
	}
	return "", "", false
}

// annotation reads one annotation of a task: a rater's labels, one per
// control.
func (r *lsReader) annotation(rec jsonRecord, item, itemCol, path string, araw json.RawMessage) {
	c := r.c
	var ann lsAnnotation
	if err := json.Unmarshal(araw, &ann); err != nil {
		c.rowProblem(rec.line, rec.row, path, "expected an annotation object: %s", jsonErrText(err))
		return
	}
	if s, _, _ := jsonScalar(ann.WasCancelled); s == "true" {
		return
	}
	byControl := map[string][]lsHit{}
	var order []string
	for ri, rraw := range ann.Result {
		from, hit, ok := r.result(rec, item, fmt.Sprintf("%s.result[%d]", path, ri), rraw)
		if !ok {
			continue
		}
		if _, seen := byControl[from]; !seen {
			order = append(order, from)
		}
		byControl[from] = append(byControl[from], hit)
	}
	if len(order) == 0 {
		return
	}
	rater, ok := lsRater(ann.CompletedBy)
	if !ok {
		c.rowProblem(rec.line, rec.row, path+".completed_by", "annotation has no completed_by (expected the annotator's user id, or an object with id or email); a label with no rater cannot be used")
		return
	}
	for _, ctl := range order {
		hits := byControl[ctl]
		if len(hits) > 1 {
			c.rowProblem(rec.line, rec.row, hits[1].col, "control %q has %d results in one annotation (expected one per rater and item)", ctl, len(hits))
			continue
		}
		r.controls[ctl]++
		c.label(item, rater, hits[0].value, rec.line, rec.row, itemCol, path+".completed_by", hits[0].col)
	}
}

// result reads one result of an annotation: the control it belongs to and
// its label; ok is false for a result that gives no label (another type,
// another control, an empty choice, or a problem, reported).
func (r *lsReader) result(rec jsonRecord, item, rpath string, rraw json.RawMessage) (from string, hit lsHit, ok bool) {
	c := r.c
	var res lsResult
	if err := json.Unmarshal(rraw, &res); err != nil {
		c.rowProblem(rec.line, rec.row, rpath, "expected a result object: %s", jsonErrText(err))
		return "", lsHit{}, false
	}
	key, ok := lsKinds[res.Type]
	if !ok {
		if res.FromName != "" {
			r.otherControls[res.FromName] = res.Type
		}
		return "", lsHit{}, false
	}
	r.supported[res.FromName] = true
	if _, ok := r.controlInfo[res.FromName]; !ok {
		r.controlInfo[res.FromName] = lsControl{res.ToName, res.Type}
	}
	if r.filtered && res.FromName != r.fromFilter {
		return "", lsHit{}, false
	}
	raw, present := res.Value[key]
	vpath := rpath + ".value." + key
	if empty := lsEmptyValue(raw, present, key); empty != "" {
		c.rowProblem(rec.line, rec.row, vpath, "task %s, control %q (%s): empty value (%s); expected %s", item, res.FromName, res.Type, empty, lsExpected(res.Type))
		return "", lsHit{}, false
	}
	if res.Type != "choices" {
		v, _, ok := jsonScalar(raw)
		if !ok {
			c.rowProblem(rec.line, rec.row, vpath, "task %s, control %q (%s): expected %s, found %s", item, res.FromName, res.Type, lsExpected(res.Type), jsonTypeName(raw))
		}
		return res.FromName, lsHit{v, vpath}, ok
	}
	var choices []json.RawMessage
	if json.Unmarshal(raw, &choices) != nil {
		c.rowProblem(rec.line, rec.row, vpath, "task %s, control %q (%s): expected %s, found %s", item, res.FromName, res.Type, lsExpected(res.Type), jsonTypeName(raw))
		return "", lsHit{}, false
	}
	if len(choices) == 0 {
		return "", lsHit{}, false
	}
	vals := make([]string, len(choices))
	for i, ch := range choices {
		vals[i], _, _ = jsonScalar(ch)
	}
	if len(choices) > 1 {
		c.rowProblem(rec.line, rec.row, vpath, "%d choices (%s) in one annotation; concord takes one label per rater and item (multiple-choice controls are not supported)", len(choices), quoteList(vals))
		return "", lsHit{}, false
	}
	if _, _, ok := jsonScalar(choices[0]); !ok {
		c.rowProblem(rec.line, rec.row, vpath, "expected a choice as a string, found %s", jsonTypeName(choices[0]))
		return "", lsHit{}, false
	}
	return res.FromName, lsHit{vals[0], vpath}, true
}

// finish keeps the items (with what writing predictions back needs) and
// reports labels of several controls, or none of the one asked for.
func (r *lsReader) finish() {
	c := r.c
	ctl := r.fromFilter
	if !r.filtered && len(r.controls) == 1 {
		for k := range r.controls {
			ctl = k
		}
	}
	items := c.parsed.Items[:0]
	for _, t := range r.tasks {
		if t.index < 0 {
			continue
		}
		it := c.parsed.Items[t.index]
		ref := LabelStudioRef{TextKey: t.textKey, Data: t.data}
		if len(t.task) > 0 {
			ref.Task = t.task
		}
		if info, ok := r.controlInfo[ctl]; ok && ctl != "" {
			ref.FromName, ref.ToName, ref.Type = ctl, info.toName, info.typ
		}
		it.setLabelStudio(ref)
		items = append(items, it)
	}
	c.parsed.Items = items
	if len(r.controls) > 1 {
		names := make([]string, 0, len(r.controls))
		for k := range r.controls {
			names = append(names, k)
		}
		sort.Strings(names)
		c.add(Problem{Column: "from_name", Msg: fmt.Sprintf("labels come from %d controls (%s); pick one with %s or the row filter from_name=%s", len(names), quoteList(names), flagHint(LabelColFlag, "label_col", names[0]), names[0])})
	}
	if r.filtered && len(r.controls) == 0 && c.problems.Len() == 0 {
		c.add(Problem{Column: "from_name", Msg: fmt.Sprintf("no choices, rating or number result has from_name = %q (controls found: %s)", r.fromFilter, quoteList(sortedKeys(r.supported)))})
	}
	for _, k := range sortedKeys(r.otherControls) {
		c.parsed.Unused = append(c.parsed.Unused, k+" ("+r.otherControls[k]+")")
	}
}

// lsEmptyValue says how a result's value is empty: its key missing from
// "value", null, or an empty string. It returns "" for a value that is there.
func lsEmptyValue(raw json.RawMessage, present bool, key string) string {
	if !present {
		return fmt.Sprintf("no %q in the result's value", key)
	}
	switch jsonKind(raw) {
	case 0, 'n':
		return key + " is null"
	case '"':
		if s, _, _ := jsonScalar(raw); strings.TrimSpace(s) == "" {
			return key + " is an empty string"
		}
	}
	return ""
}

// lsExpected names what a result type's value holds, for messages.
func lsExpected(typ string) string {
	if typ == "choices" {
		return "a list with one choice"
	}
	return "the " + typ + " as a number"
}

// lsRater reads completed_by: a user id (number or string), or an object
// whose email (preferred) or id names the user.
func lsRater(raw json.RawMessage) (string, bool) {
	switch jsonKind(raw) {
	case 0, 'n':
		return "", false
	case '{':
		var u map[string]json.RawMessage
		if json.Unmarshal(raw, &u) != nil {
			return "", false
		}
		if s, ok := jsonID(u["email"]); ok && strings.TrimSpace(s) != "" {
			return s, true
		}
		if s, ok := jsonID(u["id"]); ok && s != "" {
			return s, true
		}
		return "", false
	}
	s, ok := jsonID(raw)
	return s, ok && s != ""
}

// jsonErrText turns a decoding error into a message without Go type names.
func jsonErrText(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		field := te.Field
		if field == "" {
			return "found " + te.Value
		}
		return fmt.Sprintf("field %s has the wrong type (found %s)", field, te.Value)
	}
	return err.Error()
}
