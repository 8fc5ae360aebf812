package reports

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
)

//go:embed report-schema.json
var schemaJSON []byte

// SchemaJSON returns the JSON Schema (draft 2020-12) of the report
// document. It is the file reports/report-schema.json, published as
// docs/report-schema.json; the caller must not modify the slice.
func SchemaJSON() []byte { return schemaJSON }

// WriteJSON writes the report as its `concord.report/v1` JSON document,
// indented, followed by a newline. Undefined numbers are null.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("reports: writing the JSON report: %w", err)
	}
	return nil
}

// ReadReport reads a report document written by WriteJSON. The traces and
// draws of the fit are not part of the document, so a report read back
// draws every plot except the trace, R-hat evolution and variance density
// plots.
func ReadReport(r io.Reader) (*Report, error) {
	var rep Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("reading the report: %w", err)
	}
	if rep.Schema != Schema {
		return nil, fmt.Errorf("report schema %q: expected %q", rep.Schema, Schema)
	}
	if err := rep.check(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &rep, nil
}

// check verifies what the writers rely on in a report read from JSON: a
// known kind, at least two distinct levels (none for values), per-level
// arrays of the right length and a square kappa matrix.
func (rep *Report) check() error {
	for _, step := range []func() error{rep.checkKind, rep.checkLevels, rep.checkPerLevel, rep.checkClasses, rep.checkKappa} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// checkKind: a known kind, with the sections it has and without those it
// has not.
func (rep *Report) checkKind() error {
	switch {
	case rep.Kind != KindOrdinal && rep.Kind != KindClassification && rep.Kind != KindValues && rep.Kind != KindRanking:
		return fmt.Errorf("kind %q (expected ordinal, classification, values or ranking)", rep.Kind)
	case rep.Kind == KindRanking && rep.Ranking == nil:
		return fmt.Errorf("kind ranking without the ranking section")
	case rep.Kind == KindValues && len(rep.Levels) != 0:
		return fmt.Errorf("%d levels in a report of values (expected none)", len(rep.Levels))
	case rep.Kind != KindValues && len(rep.Levels) < 2:
		return fmt.Errorf("%d levels (expected at least 2)", len(rep.Levels))
	case rep.Kind == KindValues && (len(rep.Thresholds) > 0 || rep.Classes != nil):
		return fmt.Errorf("a report of values with thresholds or classes")
	}
	return nil
}

// checkLevels: distinct level codes.
func (rep *Report) checkLevels() error {
	seen := map[string]bool{}
	for _, l := range rep.Levels {
		if seen[l.Code] {
			return fmt.Errorf("level %q appears twice", l.Code)
		}
		seen[l.Code] = true
	}
	return nil
}

// checkPerLevel: the items' distributions, the raters' level counts and
// thresholds have one entry a level (a threshold between two).
func (rep *Report) checkPerLevel() error {
	k := len(rep.Levels)
	for i := range rep.Items {
		if n := len(rep.Items[i].Probs); n != 0 && n != k {
			return fmt.Errorf("item %q: %d probabilities for %d levels", rep.Items[i].ID, n, k)
		}
	}
	for _, r := range rep.Raters {
		if len(r.LevelCounts) != k {
			return fmt.Errorf("rater %q: %d level counts for %d levels", r.ID, len(r.LevelCounts), k)
		}
	}
	for _, rt := range rep.Thresholds {
		if len(rt.Thresholds) > k-1 {
			return fmt.Errorf("rater %q: %d thresholds for %d levels", rt.Rater, len(rt.Thresholds), k)
		}
	}
	return nil
}

// checkClasses: a count a class and square confusion tables.
func (rep *Report) checkClasses() error {
	c, k := rep.Classes, len(rep.Levels)
	if c == nil {
		return nil
	}
	if len(c.Counts) != k {
		return fmt.Errorf("classes: %d counts for %d levels", len(c.Counts), k)
	}
	for _, cf := range c.Confusion {
		if len(cf.Counts) != k {
			return fmt.Errorf("classes: confusion of %q has %d rows for %d levels", cf.Rater, len(cf.Counts), k)
		}
		for _, row := range cf.Counts {
			if len(row) != k {
				return fmt.Errorf("classes: confusion of %q has a row of %d for %d levels", cf.Rater, len(row), k)
			}
		}
	}
	return nil
}

// checkKappa: a square kappa matrix, a row a rater.
func (rep *Report) checkKappa() error {
	a := rep.Agreement
	if a == nil || a.Kappa == nil {
		return nil
	}
	n := len(a.Kappa.Raters)
	if len(a.Kappa.Values) != n || len(a.Kappa.N) != n {
		return fmt.Errorf("agreement: kappa matrix of %d rows for %d raters", len(a.Kappa.Values), n)
	}
	for i := range a.Kappa.Values {
		if len(a.Kappa.Values[i]) != n || len(a.Kappa.N[i]) != n {
			return fmt.Errorf("agreement: kappa matrix row %d is not of length %d", i+1, n)
		}
	}
	return nil
}
