package reports

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"concord/annotations"
)

// The consensus back into the annotation tools (issue 20): Label Studio
// predictions, doccano JSON Lines, and crowd-kit's task,label,prob table.

// ToolOptions are what the annotation-tool writers need besides the
// report.
type ToolOptions struct {
	// Items are the dataset's items: their texts, and what a Label Studio
	// import kept with them (task ids, control names; Item.LabelStudio).
	Items []annotations.Item
	// FromName and ToName name the Label Studio control and the object it
	// labels; they override the names kept by the import. Type is the
	// result type (choices, rating, number); "" takes the import's, else
	// rating for an ordinal fit of integer levels, number for values, and
	// choices otherwise.
	FromName, ToName, Type string
	// ModelVersion names the fit in each prediction.
	ModelVersion string
}

// ErrControlNames is returned by WriteLabelStudio when the control names
// are neither kept by a Label Studio import nor given.
var ErrControlNames = fmt.Errorf("reports: the Label Studio control names (from_name, to_name) are unknown")

// toolItem is one report item with what the dataset says about it.
type toolItem struct {
	*Item
	text string
	ref  annotations.LabelStudioRef
}

// toolItems returns the report's items in the dataset's order (then the
// others in consensus order), with their texts and Label Studio
// references.
func toolItems(rep *Report, items []annotations.Item) []toolItem {
	byID := make(map[string]*Item, len(rep.Items))
	for i := range rep.Items {
		byID[rep.Items[i].ID] = &rep.Items[i]
	}
	out := make([]toolItem, 0, len(rep.Items))
	done := map[string]bool{}
	for i := range items {
		it, ok := byID[items[i].ID]
		if !ok || done[it.ID] {
			continue
		}
		done[it.ID] = true
		ti := toolItem{Item: it, text: items[i].Text}
		ti.ref, _ = items[i].LabelStudio()
		out = append(out, ti)
	}
	for i := range rep.Items {
		if !done[rep.Items[i].ID] {
			out = append(out, toolItem{Item: &rep.Items[i]})
		}
	}
	return out
}

// consensusLabel returns an item's consensus as a label: the most probable
// grade (ordinal) or the consensus class, with its probability, or for
// values the predictive mean; ok is false when the item has none.
func consensusLabel(rep *Report, it *Item) (label string, prob float64, ok bool) {
	if rep.Kind == KindValues {
		if it.Value == nil || !it.Value.Mean.Valid() {
			return "", math.NaN(), false
		}
		return strconv.FormatFloat(float64(it.Value.Mean), 'g', -1, 64), math.NaN(), true
	}
	if rep.Kind == KindOrdinal && len(it.Probs) == len(rep.Levels) && len(it.Probs) > 0 {
		// The most probable grade with its probability (the report's
		// consensus grade is the posterior's central grade, which an
		// annotation tool's single choice would misstate as certain).
		best := -1
		for c, p := range it.Probs {
			if p.Valid() && (best < 0 || p > it.Probs[best]) {
				best = c
			}
		}
		if best >= 0 {
			return rep.Levels[best].Code, float64(it.Probs[best]), true
		}
	}
	if it.Consensus == "" {
		return "", math.NaN(), false
	}
	return it.Consensus, float64(it.Prob), true
}

// checkTool refuses to write a report in an annotation tool's format when
// no item would be written: a ranking (the auc model's scores, which are
// not labels) or a fit without any consensus. Silent empty exports are
// refused (issue 36 item 8).
func checkTool(rep *Report, format string) error {
	if rep.Kind == KindRanking {
		return fmt.Errorf("reports: the %s fit ranks items by a score and gives no item a label, which %s needs; write the scores with --format json, xlsx or csv", rep.Model.Model, format)
	}
	for i := range rep.Items {
		if _, _, ok := consensusLabel(rep, &rep.Items[i]); ok {
			return nil
		}
	}
	return fmt.Errorf("reports: none of the fit's %d items has a consensus, so %s would get nothing", len(rep.Items), format)
}

// jsonID writes an id as a JSON number when it is an integer, else as a
// string.
func jsonID(id string) json.RawMessage {
	if _, err := strconv.ParseInt(id, 10, 64); err == nil && (id == "0" || id[0] != '0' && id[0] != '-' && id[0] != '+') {
		return json.RawMessage(id)
	}
	b, _ := json.Marshal(id)
	return b
}

// WriteLabelStudio writes the consensus as Label Studio tasks with
// predictions (https://labelstud.io/guide/predictions), one per item:
//
//	{"id": TASK, "data": {"text": ...},
//	 "predictions": [{"model_version": ..., "score": P(consensus),
//	   "result": [{"from_name": ..., "to_name": ..., "type": "choices",
//	               "value": {"choices": [CONSENSUS]}}]}]}
//
// The task id, its data object (every field the export had, so that the
// file imports into Label Studio as the same tasks), the control names and
// the type are those a Label Studio import kept with the item (o.Items),
// unless o says otherwise; an item without a task id is written with its
// item id, and one without kept data with {TEXT_KEY: text}. Items without a
// consensus are left out.
func WriteLabelStudio(w io.Writer, rep *Report, o ToolOptions) error {
	type result struct {
		ID       string         `json:"id"`
		FromName string         `json:"from_name"`
		ToName   string         `json:"to_name"`
		Type     string         `json:"type"`
		Value    map[string]any `json:"value"`
	}
	type prediction struct {
		ModelVersion string   `json:"model_version"`
		Score        *float64 `json:"score,omitempty"`
		Result       []result `json:"result"`
	}
	type task struct {
		ID          json.RawMessage `json:"id"`
		Data        json.RawMessage `json:"data,omitempty"`
		Predictions []prediction    `json:"predictions"`
	}
	if err := checkTool(rep, "Label Studio"); err != nil {
		return err
	}
	intLevels := len(rep.Levels) > 0
	for _, l := range rep.Levels {
		if _, err := strconv.Atoi(l.Code); err != nil {
			intLevels = false
		}
	}
	tasks := []task{}
	for n, ti := range toolItems(rep, o.Items) {
		label, prob, ok := consensusLabel(rep, ti.Item)
		if !ok {
			continue
		}
		from, to, typ := ti.ref.FromName, ti.ref.ToName, ti.ref.Type
		if o.FromName != "" {
			from = o.FromName
		}
		if o.ToName != "" {
			to = o.ToName
		}
		if from == "" || to == "" {
			return fmt.Errorf("%w for item %q", ErrControlNames, ti.ID)
		}
		if o.Type != "" {
			typ = o.Type
		}
		if typ == "" {
			switch {
			case rep.Kind == KindValues:
				typ = "number"
			case rep.Kind == KindOrdinal && intLevels:
				typ = "rating"
			default:
				typ = "choices"
			}
		}
		var value map[string]any
		switch typ {
		case "choices":
			value = map[string]any{"choices": []string{label}}
		case "rating", "number":
			v, err := strconv.ParseFloat(label, 64)
			if err != nil {
				return fmt.Errorf("reports: item %q: the consensus %q is not a number, as a %s result needs", ti.ID, label, typ)
			}
			value = map[string]any{typ: json.Number(strconv.FormatFloat(v, 'g', -1, 64))}
		default:
			return fmt.Errorf("reports: Label Studio result type %q: expected choices, rating or number", typ)
		}
		t := task{ID: jsonID(ti.ID)}
		if len(ti.ref.Task) > 0 {
			t.ID = ti.ref.Task
		}
		switch {
		case len(ti.ref.Data) > 0:
			// The task's own data, every field as the export had it.
			t.Data = ti.ref.Data
		case ti.text != "":
			key := ti.ref.TextKey
			if key == "" {
				key = "text"
			}
			t.Data, _ = json.Marshal(map[string]string{key: ti.text})
		}
		p := prediction{ModelVersion: o.ModelVersion, Result: []result{{
			ID: fmt.Sprintf("concord-%d", n+1), FromName: from, ToName: to, Type: typ, Value: value,
		}}}
		if !math.IsNaN(prob) {
			p.Score = &prob
		}
		t.Predictions = []prediction{p}
		tasks = append(tasks, t)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(tasks)
}

// WriteDoccano writes the consensus as doccano's text-classification JSON
// Lines, one document per item: {"id": ..., "text": ..., "label":
// [CONSENSUS], "score": P(consensus)} (doccano keeps the fields it does not
// know as metadata). Items without a consensus are left out.
func WriteDoccano(w io.Writer, rep *Report, o ToolOptions) error {
	type doc struct {
		ID    json.RawMessage `json:"id"`
		Text  string          `json:"text"`
		Label []string        `json:"label"`
		Score *float64        `json:"score,omitempty"`
	}
	if err := checkTool(rep, "doccano"); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, ti := range toolItems(rep, o.Items) {
		label, prob, ok := consensusLabel(rep, ti.Item)
		if !ok {
			continue
		}
		d := doc{ID: jsonID(ti.ID), Text: ti.text, Label: []string{label}}
		if !math.IsNaN(prob) {
			d.Score = &prob
		}
		if err := enc.Encode(d); err != nil {
			return err
		}
	}
	return nil
}

// WriteCrowdKit writes the consensus as crowd-kit's aggregation result,
// one row per item: task,label,prob (prob, the probability of the
// consensus label); for values (a bounded fit), which have no probability
// of a label, task,label,sd: the predictive mean and its sd. Items without
// a consensus are left out.
func WriteCrowdKit(w io.Writer, rep *Report, o ToolOptions) error {
	if err := checkTool(rep, "crowd-kit"); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	head := []string{"task", "label", "prob"}
	if rep.Kind == KindValues {
		head[2] = "sd"
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, ti := range toolItems(rep, o.Items) {
		label, prob, ok := consensusLabel(rep, ti.Item)
		if !ok {
			continue
		}
		p := ""
		if !math.IsNaN(prob) {
			p = strconv.FormatFloat(prob, 'g', 6, 64)
		}
		if rep.Kind == KindValues && ti.Value != nil && ti.Value.SD.Valid() {
			p = strconv.FormatFloat(float64(ti.Value.SD), 'g', 6, 64)
		}
		if err := cw.Write([]string{ti.ID, label, p}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
