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
	return &rep, nil
}
