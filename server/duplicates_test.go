package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestImportDuplicates: the "duplicates" field of the file import and of
// the bulk labels request keeps, drops or refuses repeated labels of one
// rater for one item, and the refusal names the setting.
func TestImportDuplicates(t *testing.T) {
	e := newEnv(t)
	file := "item_id,rater_id,label\n1,w1,G\n1,w1,X\n1,w2,G\n2,w1,P\n2,w2,P\n2,w2,P\n"
	for _, tc := range []struct {
		mode            string
		status          int
		added, dropped  float64
		stored          float64
		messageFragment string
	}{
		{"", 400, 0, 0, 0, "--duplicates keep|first"},
		{"error", 400, 0, 0, 0, `duplicate label for item "1" by rater "w1"`},
		{"first", 201, 4, 2, 4, ""},
		{"keep", 201, 6, 0, 6, ""},
		{"all", 400, 0, 0, 0, "expected keep, first or error"},
	} {
		id, key := e.project("crowd-"+tc.mode, "nominal:G,P,R,X")
		path := fmt.Sprintf("/api/v1/projects/%d/imports", id)
		fields := map[string]string{}
		if tc.mode != "" {
			fields["duplicates"] = tc.mode
		}
		resp, b := e.upload(path, key, map[string][2]string{"file": {"crowd.csv", file}}, fields)
		if tc.status != 201 {
			checkError(t, "import duplicates="+tc.mode, resp, b, tc.status, "invalid", tc.messageFragment)
			continue
		}
		if resp.StatusCode != 201 {
			t.Fatalf("import duplicates=%s: %d %s", tc.mode, resp.StatusCode, b)
		}
		var res map[string]any
		json.Unmarshal(b, &res)
		dropped, _ := res["duplicates_dropped"].(float64)
		if res["labels_added"].(float64) != tc.added || dropped != tc.dropped {
			t.Errorf("import duplicates=%s: %s", tc.mode, b)
		}
		got := e.call("GET", fmt.Sprintf("/api/v1/projects/%d", id), key, nil, 200)
		if got["labels"].(float64) != tc.stored {
			t.Errorf("duplicates=%s: %v labels stored, want %v", tc.mode, got["labels"], tc.stored)
		}
	}

	// The bulk labels request.
	id, key := e.project("crowd-bulk", "nominal:G,P,R,X")
	base := fmt.Sprintf("/api/v1/projects/%d", id)
	labels := []map[string]any{{"item_id": "1", "rater_id": "w1", "label": "G"}, {"item_id": "1", "rater_id": "w1", "label": "X"}}
	e.wantError("POST", base+"/labels", key, map[string]any{"labels": labels}, 400, "invalid", "--duplicates keep|first")
	e.wantError("POST", base+"/labels", key, map[string]any{"labels": labels, "duplicates": "maybe"}, 400, "invalid", `field "duplicates"`)
	res := e.call("POST", base+"/labels", key, map[string]any{"labels": labels, "duplicates": "keep"}, 201)
	if res["labels_added"].(float64) != 2 {
		t.Errorf("bulk keep: %v", res)
	}
	list := e.call("GET", base+"/labels?rater=w1", key, nil, 200)
	b, _ := json.Marshal(list["labels"])
	if list["total"].(float64) != 2 || !strings.Contains(string(b), `"label":"G"`) || strings.Index(string(b), `"label":"G"`) > strings.Index(string(b), `"label":"X"`) {
		t.Errorf("labels after bulk keep: %s", b)
	}
	res = e.call("POST", base+"/labels", key, map[string]any{"labels": labels, "duplicates": "keep"}, 201)
	if res["labels_unchanged"].(float64) != 2 {
		t.Errorf("bulk keep again: %v", res)
	}
}
