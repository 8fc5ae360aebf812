package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The import form takes the read options of the CLI's --item-col,
// --rater-col, --label-col and --rater (issue 20).
func TestImportColumnFields(t *testing.T) {
	e := newEnv(t, func(*Config) {})
	id, key := e.project("essays", "ordinal:0..3")
	path := fmt.Sprintf("/api/v1/projects/%d/imports", id)
	sheet := "Essay,Teacher,Score\nE1,ann,3\nE1,bob,2\n"
	resp, b := e.upload(path, key, map[string][2]string{"file": {"grades.csv", sheet}}, nil)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "no rater id column") || !strings.Contains(string(b), `\"rater_col\" in the API`) {
		t.Errorf("no rater column: %d %s", resp.StatusCode, b)
	}
	resp, b = e.upload(path, key, map[string][2]string{"file": {"grades.csv", sheet}}, map[string]string{"rater_col": "Teacher"})
	var res importResponse
	json.Unmarshal(b, &res)
	if resp.StatusCode != 201 || res.LabelsAdded != 2 || res.RatersAdded != 2 {
		t.Errorf("rater_col: %d %s", resp.StatusCode, b)
	}
	// doccano's per-annotator file: the rater from the upload's name, or
	// from the rater field.
	doc := `{"id": 7, "text": "an essay", "label": ["1"]}` + "\n"
	resp, b = e.upload(path, key, map[string][2]string{"file": {"carol.jsonl", doc}}, nil)
	json.Unmarshal(b, &res)
	if resp.StatusCode != 201 || res.LabelsAdded != 1 || res.RatersAdded != 1 {
		t.Errorf("doccano file: %d %s", resp.StatusCode, b)
	}
	resp, b = e.upload(path, key, map[string][2]string{"file": {"export.jsonl", doc}}, map[string]string{"rater": "dave"})
	json.Unmarshal(b, &res)
	if resp.StatusCode != 201 || res.LabelsAdded != 1 || res.RatersAdded != 1 {
		t.Errorf("rater field: %d %s", resp.StatusCode, b)
	}
}
