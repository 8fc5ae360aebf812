package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"concord/annotations"
	"concord/multirater"
)

// Fit is a concord.fit/v1 document as the reports read it: the fields of
// multirater.FitResult, plus the per-item class distribution of the
// classification model (issue 4), read by its JSON name so that a result
// file or a FitResult that carries it is reported without a code change
// here. Fields a model does not fill are empty and the reports leave out
// what depends on them.
type Fit struct {
	Schema      string
	Model       multirater.ModelSettings
	Diagnostics multirater.Diagnostics
	Levels      []string
	Items       []FitItem
	Raters      []multirater.RaterResult
	Flags       []multirater.Flag
	// LabelErrors is every label with the probability that it is a
	// labelling error (the robust model), most probable first.
	LabelErrors []multirater.LabelError
	Traces      *multirater.Traces
	Draws       *multirater.Draws
	// The AUC scoring model (output ranking): the coefficients of linear
	// scores, the training ROC curve and AUC, gamma and the other settings.
	Coefficients []multirater.Coefficient
	ROC          []multirater.ROCPoint
	TrainAUC     *float64
	AUC          *multirater.AUCFit
}

// FitItem is one item of a fit: the ordinal fields of multirater.ItemResult
// and the classification model's class distribution.
type FitItem struct {
	multirater.ItemResult
	// ClassProbs is the posterior class distribution in the order of
	// Fit.Levels (JSON "class_probs", as an object keyed by class code or
	// an array in level order); nil for the ordinal model.
	ClassProbs []float64
	// Class is the consensus class (JSON "class"); "" when absent.
	Class string
}

// Classification reports whether the fit's output shape is classes
// (multirater.OutputClasses), or the fit carries class distributions.
func (f *Fit) Classification() bool {
	switch f.Model.Shape() {
	case multirater.OutputClasses:
		return true
	case multirater.OutputValues:
		return false
	}
	for i := range f.Items {
		if f.Items[i].ClassProbs != nil {
			return true
		}
	}
	return false
}

// FitFromResult wraps a fit result. Slices and maps are shared with res,
// not copied.
func FitFromResult(res *multirater.FitResult) *Fit {
	if res == nil {
		panic("reports: nil fit result")
	}
	f := &Fit{
		Schema: res.Schema, Model: res.Model, Diagnostics: res.Diagnostics, Levels: res.Levels,
		Raters: res.Raters, Flags: res.Flags, LabelErrors: res.LabelErrors, Traces: res.Traces, Draws: res.Draws,
		Items:        make([]FitItem, len(res.Items)),
		Coefficients: res.Coefficients, ROC: res.ROC, TrainAUC: res.TrainAUC, AUC: res.AUC,
	}
	for i := range res.Items {
		it := &f.Items[i]
		it.ItemResult = res.Items[i]
		it.ClassProbs = probsOf(res.Items[i].ClassProbs, res.Levels)
		it.Class = res.Items[i].Class
	}
	return f
}

// ReadFit reads a concord.fit/v1 document. Unknown fields are ignored, so
// that documents of later versions of the fit still read; a document of
// another schema is an error.
func ReadFit(r io.Reader) (*Fit, error) {
	var doc struct {
		Schema      string                   `json:"schema"`
		Model       multirater.ModelSettings `json:"model"`
		Diagnostics multirater.Diagnostics   `json:"diagnostics"`
		Levels      []string                 `json:"levels"`
		Items       []struct {
			multirater.ItemResult
			ClassProbs json.RawMessage `json:"class_probs"`
			Class      json.RawMessage `json:"class"`
		} `json:"items"`
		Raters      []multirater.RaterResult `json:"raters"`
		Flags       []multirater.Flag        `json:"flags"`
		LabelErrors []multirater.LabelError  `json:"label_errors"`
		Traces      *multirater.Traces       `json:"traces"`
		Draws       *multirater.Draws        `json:"draws"`
		// The AUC scoring model.
		Coefficients []multirater.Coefficient `json:"coefficients"`
		ROC          []multirater.ROCPoint    `json:"roc"`
		TrainAUC     *float64                 `json:"train_auc"`
		AUC          *multirater.AUCFit       `json:"auc"`
	}
	dec := json.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("reading the fit result: %w", err)
	}
	if doc.Schema != multirater.FitSchema {
		if doc.Schema == "" {
			return nil, fmt.Errorf("not a fit result: no \"schema\" field (expected %q, as written by concord fit)", multirater.FitSchema)
		}
		return nil, fmt.Errorf("fit result schema %q: expected %q", doc.Schema, multirater.FitSchema)
	}
	f := &Fit{
		Schema: doc.Schema, Model: doc.Model, Diagnostics: doc.Diagnostics, Levels: doc.Levels,
		Raters: doc.Raters, Flags: doc.Flags, LabelErrors: doc.LabelErrors, Traces: doc.Traces, Draws: doc.Draws,
		Items:        make([]FitItem, len(doc.Items)),
		Coefficients: doc.Coefficients, ROC: doc.ROC, TrainAUC: doc.TrainAUC, AUC: doc.AUC,
	}
	for i, it := range doc.Items {
		fi := &f.Items[i]
		fi.ItemResult = it.ItemResult
		if len(it.ClassProbs) > 0 {
			p, err := parseProbs(it.ClassProbs, doc.Levels)
			if err != nil {
				return nil, fmt.Errorf("fit result: item %q: class_probs: %w", it.ID, err)
			}
			fi.ClassProbs = p
		}
		if len(it.Class) > 0 && !bytes.Equal(it.Class, []byte("null")) {
			// The class is a code (string), or its index in levels.
			var s string
			var k int
			switch {
			case json.Unmarshal(it.Class, &s) == nil:
				fi.Class = s
			case json.Unmarshal(it.Class, &k) == nil && k >= 0 && k < len(doc.Levels):
				fi.Class = doc.Levels[k]
			default:
				return nil, fmt.Errorf("fit result: item %q: class %s is neither a level code nor a level index", it.ID, it.Class)
			}
		}
	}
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("fit result: %w", err)
	}
	return f, nil
}

// Values reports whether the fit's output shape is values (bounded
// ratings: multirater.OutputValues): items have a value on the rating
// scale, raters a dispersion, and there are no levels.
func (f *Fit) Values() bool { return f.Model.Shape() == multirater.OutputValues }

// check verifies the references inside the document: unique ids, labels
// and flags naming known raters and levels, per-level arrays of the right
// length. A fit of values has no levels, and its labels are numbers.
func (f *Fit) check() error {
	ids := &fitIDs{values: f.Values()}
	for _, step := range []func(*Fit) error{ids.levels, ids.raters, ids.items, ids.labelRefs, checkDraws} {
		if err := step(f); err != nil {
			return err
		}
	}
	return nil
}

// fitIDs are the levels, raters and items of a fit document, each checked
// for duplicates as it is collected, for the checks of the references to
// them; a check collects its ids for the checks after it. values: the fit's output shape is values (no levels, numeric
// labels).
type fitIDs struct {
	values             bool
	level, rater, item map[string]bool
}

func (c *fitIDs) levels(f *Fit) error {
	k := len(f.Levels)
	switch {
	case c.values && k != 0:
		return fmt.Errorf("%d levels in a fit of bounded ratings (model.output \"values\" has none)", k)
	case !c.values && k < 2:
		return fmt.Errorf("%d levels (expected at least 2)", k)
	}
	c.level = make(map[string]bool, k)
	for _, l := range f.Levels {
		if c.level[l] {
			return fmt.Errorf("level %q appears twice", l)
		}
		c.level[l] = true
	}
	return nil
}

func (c *fitIDs) raters(f *Fit) error {
	k := len(f.Levels)
	c.rater = make(map[string]bool, len(f.Raters))
	for _, r := range f.Raters {
		switch {
		case c.rater[r.ID]:
			return fmt.Errorf("rater %q appears twice", r.ID)
		case r.LevelCounts != nil && len(r.LevelCounts) != k:
			return fmt.Errorf("rater %q: %d level counts for %d levels", r.ID, len(r.LevelCounts), k)
		case c.values && len(r.Thresholds) > 0:
			return fmt.Errorf("rater %q: thresholds in a fit of bounded ratings", r.ID)
		case !c.values && r.Thresholds != nil && len(r.Thresholds) != k-1:
			return fmt.Errorf("rater %q: %d thresholds for %d levels (expected %d)", r.ID, len(r.Thresholds), k, k-1)
		}
		c.rater[r.ID] = true
	}
	return nil
}

func (c *fitIDs) items(f *Fit) error {
	c.item = make(map[string]bool, len(f.Items))
	for i := range f.Items {
		it := &f.Items[i]
		if c.item[it.ID] {
			return fmt.Errorf("item %q appears twice", it.ID)
		}
		c.item[it.ID] = true
		if err := c.labels(it); err != nil {
			return err
		}
		if it.Grade != "" && !c.level[it.Grade] {
			return fmt.Errorf("item %q: grade %q is not a level", it.ID, it.Grade)
		}
		if it.Class != "" && !c.level[it.Class] {
			return fmt.Errorf("item %q: class %q is not a level", it.ID, it.Class)
		}
		for g := range it.GradeProbs {
			if !c.level[g] {
				return fmt.Errorf("item %q: grade_probs has unknown level %q", it.ID, g)
			}
		}
	}
	return nil
}

// labels checks an item's labels: known raters, and levels (numbers for
// values).
func (c *fitIDs) labels(it *FitItem) error {
	for r, v := range it.Labels {
		if !c.rater[r] {
			return fmt.Errorf("item %q: label of unknown rater %q", it.ID, r)
		}
		if c.values {
			if _, ok := ratingValue(v); !ok {
				return fmt.Errorf("item %q: rater %q's rating %q is not a number", it.ID, r, v)
			}
		} else if !c.level[v] {
			return fmt.Errorf("item %q: rater %q's label %q is not a level", it.ID, r, v)
		}
	}
	return nil
}

// labelRefs checks the flags and label errors: known items and raters,
// levels and probabilities.
func (c *fitIDs) labelRefs(f *Fit) error {
	for _, fl := range f.Flags {
		if !c.item[fl.Item] || !c.rater[fl.Rater] {
			return fmt.Errorf("flag (%q, %q) names an unknown item or rater", fl.Item, fl.Rater)
		}
	}
	for _, le := range f.LabelErrors {
		switch {
		case !c.item[le.Item] || !c.rater[le.Rater]:
			return fmt.Errorf("label error (%q, %q) names an unknown item or rater", le.Item, le.Rater)
		case !c.values && !c.level[le.Label]:
			return fmt.Errorf("label error (%q, %q): label %q is not a level", le.Item, le.Rater, le.Label)
		case !(le.PError >= 0 && le.PError <= 1):
			return fmt.Errorf("label error (%q, %q): p_error %v is not a probability", le.Item, le.Rater, le.PError)
		}
	}
	return nil
}

// checkDraws checks the kept draws' shapes against the raters and items.
func checkDraws(f *Fit) error {
	d := f.Draws
	if d == nil {
		return nil
	}
	if len(d.Alpha) != d.N || (d.M != nil && len(d.M) != d.N) {
		return fmt.Errorf("draws: n = %d but %d alpha and %d m draws", d.N, len(d.Alpha), len(d.M))
	}
	for s := range d.Alpha {
		if len(d.Alpha[s]) != len(f.Raters) {
			return fmt.Errorf("draws: draw %d has %d precisions for %d raters", s, len(d.Alpha[s]), len(f.Raters))
		}
	}
	for s := range d.M {
		if len(d.M[s]) != len(f.Items) {
			return fmt.Errorf("draws: draw %d has %d scores for %d items", s, len(d.M[s]), len(f.Items))
		}
	}
	return nil
}

// parseProbs reads a class distribution given as an object keyed by level
// code or as an array in level order.
func parseProbs(b []byte, levels []string) ([]float64, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return nil, nil
	}
	if b[0] == '[' {
		var p []float64
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		if len(p) != len(levels) {
			return nil, fmt.Errorf("%d probabilities for %d levels", len(p), len(levels))
		}
		return p, nil
	}
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	p := make([]float64, len(levels))
	for i, l := range levels {
		p[i] = m[l]
	}
	for c := range m {
		if indexOf(levels, c) < 0 {
			return nil, fmt.Errorf("unknown level %q", c)
		}
	}
	return p, nil
}

// probsOf is a result's class distribution (by class code) in the order of
// levels, as parseProbs reads it from the document: nil when it is empty,
// names an unknown level or holds a value JSON cannot carry (NaN, ±Inf).
func probsOf(m map[string]float64, levels []string) []float64 {
	if len(m) == 0 {
		return nil
	}
	for c, v := range m {
		if indexOf(levels, c) < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
	}
	p := make([]float64, len(levels))
	for i, l := range levels {
		p[i] = m[l]
	}
	return p
}

// ratingValue parses a bounded rating as the fit writes it: a finite
// decimal number.
func ratingValue(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// Dataset returns the labels recorded in the fit (each item's "labels") as
// a dataset of scheme s: items in the fit's order, raters in the fit's
// order as far as the label order allows. It is what the agreement
// analysis needs when the label files are not at hand. Items without
// labels are kept (with no labels), so that the dataset's item order is
// the fit's. It returns nil when the fit records no labels.
func (f *Fit) Dataset(s annotations.Scheme) *annotations.Dataset {
	ds := &annotations.Dataset{Scheme: s, Items: make([]annotations.Item, len(f.Items))}
	n := 0
	for i := range f.Items {
		ds.Items[i].ID = f.Items[i].ID
		n += len(f.Items[i].Labels)
	}
	if n == 0 {
		return nil
	}
	ds.Labels = make([]annotations.Label, 0, n)
	// Raters in the fit's order: a rater's first label comes before the
	// next rater's when the items allow; the agreement analysis only needs
	// the ids.
	for _, r := range f.Raters {
		for i := range f.Items {
			if v, ok := f.Items[i].Labels[r.ID]; ok {
				ds.Labels = append(ds.Labels, annotations.Label{Item: f.Items[i].ID, Rater: r.ID, Value: v})
			}
		}
	}
	return ds
}
