package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"concord/analysis"
	"concord/annotations"
)

func TestHealthAndMetrics(t *testing.T) {
	e := newEnv(t)
	out := e.call("GET", "/healthz", "", nil, http.StatusOK)
	if out["status"] != "ok" {
		t.Errorf("healthz: %v", out)
	}
	out = e.call("GET", "/readyz", "", nil, http.StatusOK)
	if out["status"] != "ready" {
		t.Errorf("readyz: %v", out)
	}
	e.call("GET", "/api/v1/projects", testAdmin, nil, http.StatusOK)
	e.request("GET", "/api/v1/projects", "", nil)
	resp, b := e.request("GET", "/metrics", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("metrics: %d", resp.StatusCode)
	}
	for _, want := range []string{
		`concord_http_requests_total{method="GET",route="/api/v1/projects",status="200"} 1`,
		`concord_http_requests_total{method="GET",route="/api/v1/projects",status="401"} 1`,
		`concord_http_request_duration_seconds_bucket{method="GET",route="/api/v1/projects",status="200",le="0.1"}`,
		`concord_fits{state="queued"} 0`, `concord_fits{state="running"} 0`, `concord_fits{state="done"} 0`,
		`concord_fit_workers 2`, `concord_fit_sweeps_total`, `go_goroutines`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestReadyzDatabaseDown(t *testing.T) {
	e := newEnv(t)
	e.store.Close()
	e.wantError("GET", "/readyz", "", nil, http.StatusServiceUnavailable, "not_available", "database unavailable")
	e.call("GET", "/healthz", "", nil, http.StatusOK)
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	e.wantError("GET", "/api/v1/projects", "", nil, 401, "unauthorized", "missing credentials")
	e.wantError("GET", "/api/v1/projects", "wrong", nil, 401, "unauthorized", "invalid token")
	e.wantError("GET", "/api/v1/projects", "ck_aaaaaaaaaa_"+strings.Repeat("x", 43), nil, 401, "unauthorized", "unknown or revoked")
	resp, b := e.request("GET", "/api/v1/projects", "", nil, "Authorization", "Basic abc")
	checkError(t, "basic auth", resp, b, 401, "unauthorized", "Bearer")
	if resp.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	// The scheme name is case-insensitive.
	resp, _ = e.request("GET", "/api/v1/projects", "", nil, "Authorization", "bearer "+testAdmin)
	if resp.StatusCode != 200 {
		t.Errorf("lower-case bearer: %d", resp.StatusCode)
	}
	id, key := e.project("p", "ordinal:1..5")
	me := e.call("GET", "/api/v1/me", key, nil, 200)
	if me["project_id"].(float64) != float64(id) || me["read_only"] != false || me["role"] != "read-write key" {
		t.Errorf("me: %v", me)
	}
	me = e.call("GET", "/api/v1/me", testAdmin, nil, 200)
	if me["admin"] != true {
		t.Errorf("me (admin): %v", me)
	}
	// A revoked key stops working at once.
	kid, k2 := e.key(id, "temp", true)
	e.call("GET", "/api/v1/me", k2, nil, 200)
	e.call("DELETE", fmt.Sprintf("/api/v1/projects/%d/keys/%d", id, kid), testAdmin, nil, 204)
	e.wantError("GET", "/api/v1/me", k2, nil, 401, "unauthorized", "unknown or revoked")
}

func TestRouteErrors(t *testing.T) {
	e := newEnv(t)
	e.wantError("GET", "/api/v1/nothing", testAdmin, nil, 404, "not_found", "no such API route")
	e.wantError("PATCH", "/api/v1/projects", testAdmin, nil, 405, "method_not_allowed", "method not allowed")
	e.wantError("GET", "/api/v1/projects/abc", testAdmin, nil, 400, "invalid", `project id "abc": expected a positive integer`)
	e.wantError("GET", "/api/v1/projects/0", testAdmin, nil, 400, "invalid", "positive integer")
	e.wantError("GET", "/api/v1/fits/-3", testAdmin, nil, 400, "invalid", `fit id "-3"`)
	e.wantError("GET", "/api/v1/projects/99", testAdmin, nil, 404, "not_found", "project 99 not found")
	e.wantError("GET", "/api/v1/fits/99", testAdmin, nil, 404, "not_found", "fit 99 not found")
	resp, _ := e.request("GET", "/api/v1/openapi.json", "", nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Request-ID") == "" {
		t.Errorf("openapi.json: %d, request id %q", resp.StatusCode, resp.Header.Get("X-Request-ID"))
	}
	resp, _ = e.request("GET", "/healthz", "", nil, "X-Request-ID", "abc-123")
	if got := resp.Header.Get("X-Request-ID"); got != "abc-123" {
		t.Errorf("request id not echoed: %q", got)
	}
}

func TestProjects(t *testing.T) {
	e := newEnv(t)
	out := e.call("POST", "/api/v1/projects", testAdmin, map[string]any{"name": "essays", "scheme": "ordinal:1..5"}, 201)
	for _, k := range []string{"id", "name", "scheme", "api_key"} {
		if _, ok := out[k]; !ok {
			t.Errorf("create project: no %q in %v", k, out)
		}
	}
	if out["scheme"] != "ordinal:1..5" || !strings.HasPrefix(out["api_key"].(string), "ck_") {
		t.Errorf("create project: %v", out)
	}
	id := int64(out["id"].(float64))
	key := out["api_key"].(string)
	// The scheme may also be an object.
	e.call("POST", "/api/v1/projects", testAdmin, map[string]any{"name": "yn", "scheme": map[string]any{"kind": "nominal", "levels": []map[string]string{{"code": "yes"}, {"code": "no"}}}}, 201)

	bad := []struct {
		body           any
		status         int
		code, fragment string
	}{
		{`{"name": "x"}`, 400, "invalid", `"scheme" is required`},
		{`{"scheme": "ordinal:1..5"}`, 400, "invalid", `"name" is required`},
		{`{"name": "x", "scheme": "ordinal:5"}`, 400, "invalid", "scheme"},
		{`{"name": "x", "scheme": "weird:1"}`, 400, "invalid", `unknown kind "weird"`},
		{`{"name": "x", "scheme": "binary:pos=1"}`, 400, "invalid", "must name both classes"},
		{`{"name": " x", "scheme": "ordinal:1..5"}`, 400, "invalid", "leading or trailing spaces"},
		{`{"name": "x", "scheme": "ordinal:1..5", "extra": 1}`, 400, "invalid", `unknown field "extra"`},
		{`{"name": 5, "scheme": "ordinal:1..5"}`, 400, "invalid", `field "name": expected a string, got number`},
		{`{"name": "x", "scheme": "ordinal:1..5"`, 400, "invalid", "malformed JSON"},
		{`{"name": "x", "scheme": "ordinal:1..5"} {}`, 400, "invalid", "unexpected data after"},
		{`[1]`, 400, "invalid", "request body: expected an object, got array"}, // it said "a JSON an object" (issue 19 item 10)
		{`"x"`, 400, "invalid", "request body: expected an object, got string"},
		{``, 400, "invalid", "empty request body"},
		{`{"name": "essays", "scheme": "ordinal:1..5"}`, 409, "conflict", `project "essays" already exists`},
		{`{"name": "` + strings.Repeat("n", 300) + `", "scheme": "ordinal:1..5"}`, 400, "invalid", "at most 200"},
	}
	for _, b := range bad {
		e.wantError("POST", "/api/v1/projects", testAdmin, b.body, b.status, b.code, b.fragment)
	}
	e.wantError("POST", "/api/v1/projects", key, map[string]any{"name": "y", "scheme": "ordinal:1..5"}, 403, "forbidden", "admin token")

	list := e.call("GET", "/api/v1/projects", testAdmin, nil, 200)
	if n := len(list["projects"].([]any)); n != 2 {
		t.Errorf("admin sees %d projects, want 2", n)
	}
	list = e.call("GET", "/api/v1/projects", key, nil, 200)
	if ps := list["projects"].([]any); len(ps) != 1 || ps[0].(map[string]any)["name"] != "essays" {
		t.Errorf("key sees %v, want only its project", ps)
	}
	e.wantError("GET", "/api/v1/projects?x=1", key, nil, 400, "invalid", `unknown query parameter "x"`)

	got := e.call("GET", fmt.Sprintf("/api/v1/projects/%d", id), key, nil, 200)
	if got["name"] != "essays" || got["labels"].(float64) != 0 || got["stats"] == nil {
		t.Errorf("get project: %v", got)
	}
	e.wantError("DELETE", fmt.Sprintf("/api/v1/projects/%d", id), key, nil, 403, "forbidden", "admin token")
	e.call("DELETE", fmt.Sprintf("/api/v1/projects/%d", id), testAdmin, nil, 204)
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d", id), testAdmin, nil, 404, "not_found", "not found")
	e.wantError("DELETE", fmt.Sprintf("/api/v1/projects/%d", id), testAdmin, nil, 404, "not_found", "not found")
	// The project's keys went with it.
	e.wantError("GET", "/api/v1/me", key, nil, 401, "unauthorized", "unknown or revoked")
}

func TestImports(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxUploadBytes = 64 << 10 })
	id, key := e.project("k1", "ordinal:0..3")
	path := fmt.Sprintf("/api/v1/projects/%d/imports", id)
	data := sirtK1(t)

	resp, b := e.upload(path, key, map[string][2]string{"file": {"sirt_k1.csv", data}}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("import: %d %s", resp.StatusCode, b)
	}
	var res importResponse
	json.Unmarshal(b, &res)
	if res.LabelsAdded != 274 || res.ItemsAdded != 135 || res.RatersAdded != 7 || res.Format != "csv-long" {
		t.Errorf("import result %+v", res)
	}
	got := e.call("GET", fmt.Sprintf("/api/v1/projects/%d", id), key, nil, 200)
	if got["labels"].(float64) != 274 || got["items"].(float64) != 135 || got["raters"].(float64) != 7 {
		t.Errorf("counts after import: %v", got)
	}
	// Idempotent.
	resp, b = e.upload(path, key, map[string][2]string{"file": {"sirt_k1.csv", data}}, map[string]string{"format": "csv-long", "scheme": "ordinal:0..3"})
	json.Unmarshal(b, &res)
	if resp.StatusCode != 201 || res.LabelsAdded != 0 || res.LabelsUnchanged != 274 {
		t.Errorf("re-import: %d %+v", resp.StatusCode, res)
	}
	// An items file and a where filter.
	items := "item_id,text,length\n100020106,An essay,312\n"
	long := "item_id,rater_id,label,criterion\n100020106,db03,1,k1\nnew1,r9,2,k1\nnew1,r9,3,k2\n"
	resp, b = e.upload(path, key, map[string][2]string{"file": {"more.csv", long}, "items": {"items.csv", items}}, map[string]string{"where": "criterion=k1"})
	json.Unmarshal(b, &res)
	if resp.StatusCode != 201 || res.LabelsAdded != 1 || res.ItemsAdded != 1 || res.ItemsUpdated != 1 {
		t.Errorf("import with items and where: %d %s", resp.StatusCode, b)
	}

	before := e.call("GET", fmt.Sprintf("/api/v1/projects/%d", id), key, nil, 200)["labels"]
	cases := []struct {
		name           string
		files          map[string][2]string
		fields         map[string]string
		status         int
		code, fragment string
	}{
		{"bad level on one row", map[string][2]string{"file": {"bad.csv", "item_id,rater_id,label\na,r1,1\nb,r1,7\nc,r1,2\n"}}, nil, 400, "invalid", "1 problem"},
		{"no file", nil, map[string]string{"format": "csv-long"}, 400, "invalid", `"file" is required`},
		{"unknown format", map[string][2]string{"file": {"x.csv", "item_id,rater_id,label\na,r1,1\n"}}, map[string]string{"format": "pdf"}, 400, "invalid", `format "pdf"`},
		{"unknown field", map[string][2]string{"file": {"x.csv", "item_id,rater_id,label\na,r1,1\n"}}, map[string]string{"colour": "red"}, 400, "invalid", `unknown form field "colour"`},
		{"other scheme", map[string][2]string{"file": {"x.csv", "item_id,rater_id,label\na,r1,1\n"}}, map[string]string{"scheme": "ordinal:1..5"}, 400, "invalid", `has scheme ordinal:0..3`},
		{"bad where", map[string][2]string{"file": {"x.csv", "item_id,rater_id,label\na,r1,1\n"}}, map[string]string{"where": "criterion"}, 400, "invalid", "COLUMN=VALUE"},
		{"bad replace", map[string][2]string{"file": {"x.csv", "item_id,rater_id,label\na,r1,1\n"}}, map[string]string{"replace": "perhaps"}, 400, "invalid", `replace "perhaps"`},
		{"conflict", map[string][2]string{"file": {"x.csv", "item_id,rater_id,label\n100020106,db03,3\n"}}, nil, 409, "conflict", ""},
		{"too large", map[string][2]string{"file": {"big.csv", "item_id,rater_id,label\n" + strings.Repeat("a,r1,1\n", 20000)}}, nil, 413, "too_large", "64 KiB"},
		{"empty file", map[string][2]string{"file": {"empty.csv", ""}}, nil, 400, "invalid", "empty"},
		{"bad items file", map[string][2]string{"file": {"x.csv", "item_id,rater_id,label\na,r1,1\n"}, "items": {"i.csv", "item_id,text\n,x\n"}}, nil, 400, "invalid", "problem"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := e.upload(path, key, tc.files, tc.fields)
			checkError(t, tc.name, resp, b, tc.status, tc.code, tc.fragment)
		})
	}
	// Problems are itemised: file, line, column, what was expected.
	resp, b = e.upload(path, key, map[string][2]string{"file": {"bad.csv", "item_id,rater_id,label\na,r1,1\nb,r1,7\nc,,2\n"}}, nil)
	var eb errorBody
	json.Unmarshal(b, &eb)
	if resp.StatusCode != 400 || len(eb.Error.Problems) != 2 || eb.Error.Problems[0].File != "bad.csv" || eb.Error.Problems[0].Line != 3 || eb.Error.Problems[0].Column != "label" {
		t.Errorf("problems: %d %s", resp.StatusCode, b)
	}
	// A JSON body is not a multipart upload.
	e.wantError("POST", path, key, `{"file": "x"}`, 400, "invalid", "multipart/form-data")
	if after := e.call("GET", fmt.Sprintf("/api/v1/projects/%d", id), key, nil, 200)["labels"]; after != before {
		t.Errorf("rejected imports changed the labels: %v -> %v", before, after)
	}
	// Replace lets a conflicting label through.
	resp, b = e.upload(path, key, map[string][2]string{"file": {"x.csv", "item_id,rater_id,label\n100020106,db03,3\n"}}, map[string]string{"replace": "true"})
	json.Unmarshal(b, &res)
	if resp.StatusCode != 201 || res.LabelsReplaced != 1 {
		t.Errorf("replace: %d %s", resp.StatusCode, b)
	}
}

func TestItemsRatersLabels(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxJSONBytes = 4096 })
	id, key := e.loadedProject("k1")
	base := fmt.Sprintf("/api/v1/projects/%d", id)

	items := e.call("GET", base+"/items?limit=10&offset=5", key, nil, 200)
	if items["total"].(float64) != 135 || len(items["items"].([]any)) != 10 || items["offset"].(float64) != 5 {
		t.Errorf("items page: total %v, %d items", items["total"], len(items["items"].([]any)))
	}
	first := items["items"].([]any)[0].(map[string]any)
	if first["id"] == "" || first["labels"].(float64) < 1 {
		t.Errorf("item summary: %v", first)
	}
	q := e.call("GET", base+"/items?q=100020106", key, nil, 200)
	if q["total"].(float64) != 1 {
		t.Errorf("items?q: %v", q["total"])
	}
	unl := e.call("GET", base+"/items?labelled=false", key, nil, 200)
	if unl["total"].(float64) != 0 {
		t.Errorf("unlabelled items: %v", unl["total"])
	}
	for _, p := range []string{"/items?limit=0", "/items?limit=100000", "/items?offset=-1", "/items?labelled=maybe", "/items?limit=a", "/items?page=2", "/items?limit=1&limit=2"} {
		e.wantError("GET", base+p, key, nil, 400, "invalid", "query parameter")
	}

	raters := e.call("GET", base+"/raters", key, nil, 200)
	if raters["total"].(float64) != 7 || len(raters["raters"].([]any)) != 7 {
		t.Errorf("raters: %v", raters)
	}
	e.wantError("GET", base+"/raters?limit=x", key, nil, 400, "invalid", "limit")

	labels := e.call("GET", base+"/labels?rater=db03", key, nil, 200)
	if labels["total"].(float64) != 37 {
		t.Errorf("labels of db03: %v", labels["total"])
	}
	l0 := labels["labels"].([]any)[0].(map[string]any)
	if l0["rater_id"] != "db03" || l0["item_id"] == "" || l0["label"] == "" {
		t.Errorf("label: %v", l0)
	}
	labels = e.call("GET", base+"/labels?limit=5", key, nil, 200)
	if labels["total"].(float64) != 274 || len(labels["labels"].([]any)) != 5 {
		t.Errorf("labels page: %v", labels["total"])
	}
	if n := e.call("GET", base+"/labels?item=100020106&rater=db03&label=1", key, nil, 200)["total"]; n.(float64) != 1 {
		t.Errorf("label filters: %v", n)
	}
	e.wantError("GET", base+"/labels?rater="+strings.Repeat("r", 2000), key, nil, 400, "invalid", "at most 1000")

	// Bulk labels: create, idempotent, conflict, replace.
	body := map[string]any{"labels": []map[string]any{{"item_id": "e1", "rater_id": "db03", "label": 2}, {"item_id": "e1", "rater_id": "z9", "label": "3"}},
		"items": []map[string]any{{"id": "e1", "text": "An essay"}}}
	res := e.call("POST", base+"/labels", key, body, 201)
	if res["labels_added"].(float64) != 2 || res["items_added"].(float64) != 1 || res["raters_added"].(float64) != 1 {
		t.Errorf("bulk labels: %v", res)
	}
	res = e.call("POST", base+"/labels", key, body, 201)
	if res["labels_unchanged"].(float64) != 2 {
		t.Errorf("bulk labels again: %v", res)
	}
	conflict := map[string]any{"labels": []map[string]any{{"item_id": "e1", "rater_id": "db03", "label": "0"}}}
	e.wantError("POST", base+"/labels", key, conflict, 409, "conflict", "")
	conflict["replace"] = true
	if res = e.call("POST", base+"/labels", key, conflict, 201); res["labels_replaced"].(float64) != 1 {
		t.Errorf("replace: %v", res)
	}
	badLabels := []struct {
		body     string
		status   int
		code     string
		fragment string
	}{
		{`{"labels": []}`, 400, "invalid", "non-empty array"},
		{`{"labels": [{"item_id": "a", "rater_id": "r", "label": "9"}]}`, 400, "invalid", "1 problem"},
		{`{"labels": [{"item_id": "a", "rater_id": "r", "label": true}]}`, 400, "invalid", "string or a number"},
		{`{"labels": [{"item_id": "", "rater_id": "r", "label": "1"}]}`, 400, "invalid", "problem"},
		{`{"labels": [{"item_id": "a", "rater_id": "r", "label": "1"}, {"item_id": "a", "rater_id": "r", "label": "2"}]}`, 400, "invalid", "problem"},
		{`{"labels": [{"item": "a"}]}`, 400, "invalid", `unknown field "item"`},
		{`{"labels": {}}`, 400, "invalid", `field "labels": expected an array`},
		{`{"labels": [{"item_id": "a", "rater_id": "r", "label": "1"}], "replace": "yes"}`, 400, "invalid", `field "replace": expected true or false`},
		{`{"labels": [` + strings.Repeat(`{"item_id": "a", "rater_id": "r", "label": "1"},`, 100) + `{}]}`, 413, "too_large", "4 KiB"},
	}
	for _, b := range badLabels {
		e.wantError("POST", base+"/labels", key, b.body, b.status, b.code, b.fragment)
	}
	// Problems of a bulk request name the position.
	resp, b := e.request("POST", base+"/labels", key, `{"labels": [{"item_id": "a", "rater_id": "r", "label": "1"}, {"item_id": "b", "rater_id": "r", "label": "x"}]}`)
	var eb errorBody
	json.Unmarshal(b, &eb)
	if resp.StatusCode != 400 || len(eb.Error.Problems) != 1 || eb.Error.Problems[0].Row != 2 || eb.Error.Problems[0].Column != "label" {
		t.Errorf("bulk problems: %s", b)
	}

	// Items: upsert.
	res = e.call("POST", base+"/items", key, map[string]any{"items": []map[string]any{{"id": "e1", "text": "Revised", "covariates": map[string]float64{"len": 3}}, {"id": "e2"}}}, 201)
	if res["items_added"].(float64) != 1 || res["items_updated"].(float64) != 1 {
		t.Errorf("upsert items: %v", res)
	}
	it := e.call("GET", base+"/items?q=Revised", key, nil, 200)["items"].([]any)
	if len(it) != 1 || it[0].(map[string]any)["covariates"].(map[string]any)["len"].(float64) != 3 {
		t.Errorf("upserted item: %v", it)
	}
	e.wantError("POST", base+"/items", key, `{"items": []}`, 400, "invalid", "non-empty array")
	e.wantError("POST", base+"/items", key, `{"items": [{"id": "x", "covariates": {"a": "b"}}]}`, 400, "invalid", "expected a number")
	e.wantError("POST", base+"/items", key, `{"items": [{"id": ""}]}`, 400, "invalid", "empty item id")

	// Delete labels.
	e.wantError("DELETE", base+"/labels", key, nil, 400, "invalid", "all=true")
	del := e.call("DELETE", base+"/labels?rater=z9", key, nil, 200)
	if del["deleted"].(float64) != 1 {
		t.Errorf("delete labels: %v", del)
	}
	if n := e.call("GET", base+"/labels?rater=z9", key, nil, 200)["total"]; n.(float64) != 0 {
		t.Errorf("labels left: %v", n)
	}
	e.wantError("DELETE", base+"/labels?bogus=1", key, nil, 400, "invalid", "unknown query parameter")
}

func TestAgreement(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	doc := e.call("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=50&seed=2", id), key, nil, 200)
	ka := doc["krippendorff_alpha"].(map[string]any)
	if _, ok := ka["ordinal"]; !ok {
		t.Errorf("no ordinal alpha: %v", ka)
	}
	if doc["bootstrap"].(float64) != 50 || doc["raters"].(float64) != 7 {
		t.Errorf("agreement: bootstrap %v raters %v", doc["bootstrap"], doc["raters"])
	}
	e.call("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=0", id), key, nil, 200)
	// Kept for the same labels; recomputed when they change.
	path := fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=50&seed=2", id)
	_, b1 := e.request("GET", path, key, nil)
	_, b2 := e.request("GET", path, key, nil)
	if string(b1) != string(b2) {
		t.Error("agreement differs between two reads of the same labels")
	}
	e.call("POST", fmt.Sprintf("/api/v1/projects/%d/labels", id), key, map[string]any{"labels": []map[string]any{{"item_id": "extra", "rater_id": "db01", "label": "2"}, {"item_id": "extra", "rater_id": "db02", "label": "2"}}}, 201)
	if doc := e.call("GET", path, key, nil, 200); doc["labels"].(float64) != 276 {
		t.Errorf("agreement after new labels counts %v labels, want 276", doc["labels"])
	}
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=100000", id), key, nil, 400, "invalid", "bootstrap")
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?seed=-1", id), key, nil, 400, "invalid", "seed")
	empty, k2 := e.project("empty", "ordinal:0..3")
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d/agreement", empty), k2, nil, 400, "invalid", "at least 2 raters")
}

func TestKeys(t *testing.T) {
	e := newEnv(t)
	id, key := e.project("p", "ordinal:1..5")
	base := fmt.Sprintf("/api/v1/projects/%d/keys", id)
	out := e.call("POST", base, testAdmin, map[string]any{"name": "viewer", "read_only": true}, 201)
	if out["read_only"] != true || !strings.HasPrefix(out["key"].(string), "ck_") || out["prefix"] == "" {
		t.Errorf("create key: %v", out)
	}
	ro := out["key"].(string)
	list := e.call("GET", base, key, nil, 200)["keys"].([]any)
	if len(list) != 2 {
		t.Fatalf("keys: %v", list)
	}
	for _, k := range list {
		m := k.(map[string]any)
		if _, has := m["key"]; has {
			t.Errorf("listed key shows its secret: %v", m)
		}
		if _, has := m["hash"]; has {
			t.Errorf("listed key shows its hash: %v", m)
		}
	}
	e.wantError("POST", base, testAdmin, map[string]any{"name": "viewer"}, 409, "conflict", "already has an API key")
	e.wantError("POST", base, testAdmin, map[string]any{}, 400, "invalid", `"name" is required`)
	e.wantError("POST", base, key, map[string]any{"name": "x"}, 403, "forbidden", "admin token")
	e.wantError("POST", base, ro, map[string]any{"name": "x"}, 403, "forbidden", "")
	e.wantError("DELETE", base+"/999", testAdmin, nil, 404, "not_found", "")
	e.wantError("DELETE", base+"/abc", testAdmin, nil, 400, "invalid", "API key id")
	e.wantError("DELETE", base+"/1", key, nil, 403, "forbidden", "admin token")
	// Read-only keys read but do not write.
	e.call("GET", fmt.Sprintf("/api/v1/projects/%d", id), ro, nil, 200)
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/labels", id), ro, map[string]any{"labels": []map[string]any{{"item_id": "a", "rater_id": "r", "label": "1"}}}, 403, "forbidden", "read-only")
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", id), ro, map[string]any{}, 403, "forbidden", "read-only")
}

func TestFitsAPI(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	fitsPath := fmt.Sprintf("/api/v1/projects/%d/fits", id)

	out := e.call("POST", fitsPath, key, quickFit, 202)
	if out["state"] != "queued" && out["state"] != "running" {
		t.Errorf("new fit state %v", out["state"])
	}
	fid := int64(out["id"].(float64))
	spec := out["spec"].(map[string]any)
	if spec["chains"].(float64) != 2 || spec["seed"].(float64) != 7 || spec["kernel"] != nil || spec["sampler"] != "default" || spec["samples"].(float64) != 200 {
		t.Errorf("stored spec: %v", spec)
	}
	f := e.waitFit(fid, key, 60*time.Second)
	if f["state"] != "done" || f["progress"].(float64) != 1 {
		t.Fatalf("fit: %v", f)
	}
	sum := f["summary"].(map[string]any)
	if sum["items"].(float64) != 135 || sum["raters"].(float64) != 7 || f["max_rhat"].(float64) <= 0 {
		t.Errorf("summary: %v", f)
	}
	if f["links"].(map[string]any)["report.xlsx"] == nil {
		t.Errorf("links: %v", f["links"])
	}
	list := e.call("GET", fitsPath, key, nil, 200)["fits"].([]any)
	if len(list) != 1 {
		t.Errorf("fits: %v", list)
	}

	// Results.
	resp, b := e.request("GET", fmt.Sprintf("/api/v1/fits/%d/result", fid), key, nil)
	var doc map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(b, &doc) != nil || doc["schema"] != "concord.fit/v1" {
		t.Errorf("result: %d %s", resp.StatusCode, clipText(string(b), 200))
	}
	resp, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), key, nil)
	var rep map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(b, &rep) != nil || rep["schema"] != "concord.report/v1" || rep["agreement"] == nil {
		t.Errorf("report.json: %d %s", resp.StatusCode, clipText(string(b), 200))
	}
	// Cached, compressed and revalidated downloads.
	resp, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), key, nil, "Accept-Encoding", "gzip")
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || etag == "" || len(b) < 100 || b[0] != 0x1f {
		t.Errorf("gzip report: %d %v", resp.StatusCode, resp.Header)
	}
	resp, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), key, nil, "Accept-Encoding", "gzip;q=0", "If-None-Match", etag)
	if resp.StatusCode != 304 || len(b) != 0 {
		t.Errorf("If-None-Match: %d", resp.StatusCode)
	}
	resp, _ = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), key, nil, "Accept-Encoding", "identity")
	if resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("identity: %v", resp.Header)
	}
	resp, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.xlsx", fid), key, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ctXLSX || !strings.Contains(resp.Header.Get("Content-Disposition"), "k1-fit-") {
		t.Errorf("report.xlsx: %d %v", resp.StatusCode, resp.Header)
	}
	checkWorkbook(t, b, 135)
	for table, header := range map[string]string{"items": "item", "raters": "rater"} {
		resp, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/tables/%s.csv", fid, table), key, nil)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") || !strings.Contains(strings.ToLower(lines[0]), header) {
			t.Errorf("%s.csv: %d %q", table, resp.StatusCode, clipText(string(b), 200))
		}
		if want := map[string]int{"items": 136, "raters": 8}[table]; len(lines) != want {
			t.Errorf("%s.csv: %d lines, want %d", table, len(lines), want)
		}
	}
	resp, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/plots/precision.svg", fid), key, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ctSVG || !strings.Contains(string(b), "<svg") {
		t.Errorf("precision.svg: %d", resp.StatusCode)
	}
	resp, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/plots/thresholds.png", fid), key, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ctPNG || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("thresholds.png: %d", resp.StatusCode)
	}
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/plots/roc.svg", fid), key, nil, 404, "not_found", "")
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/tables/nope.csv", fid), key, nil, 404, "not_found", "no table")
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/plots/nope.gif", fid), key, nil, 404, "not_found", "no plot")
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/report.json?x=1", fid), key, nil, 400, "invalid", "unknown query parameter")

	// Settings are validated field by field.
	badSpecs := []struct{ body, fragment string }{
		{`{"chains": 0}`, `"chains" = 0: expected an integer from 1 to 64`},
		{`{"samples": -5}`, `"samples" = -5`},
		{`{"burnin": -1}`, `"burnin" = -1`},
		{`{"thin": 100000}`, `"thin"`},
		{`{"seed": -1}`, `field "seed": expected a non-negative integer`},
		{`{"seed": "x"}`, `field "seed"`},
		{`{"model": "probit"}`, `unknown model "probit"`},
		{`{"kernel": "cubic"}`, "cubic"},
		{`{"identifiability": "medium"}`, "medium"},
		{`{"sampler": "nuts"}`, "nuts"},
		{`{"v": 0}`, `"v" = 0: expected a number from 1e-06 to 1e+06; leave it out for the default`},
		{`{"flag_threshold": 1.5}`, "flag_threshold"},
		{`{"max_rhat": 0.9}`, "max_rhat"},
		{`{"chians": 2}`, `unknown field "chians"`},
		{`{"chains": 2.5}`, `field "chains": expected an integer`},
		{`{"text": {"weighting": "magic"}}`, "magic"},
		{`{"text": {"colour": 1}}`, `unknown field "colour"`},
		{`{"kernel": "text+rbf:gamma=1", "covariates": "a,,b"}`, "covariates"},
	}
	for _, bs := range badSpecs {
		e.wantError("POST", fitsPath, key, bs.body, 400, "invalid", bs.fragment)
	}
	// The project must suit the model and have labels.
	nom, nk := e.project("nominal", "nominal:a,b,c")
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", nom), nk, `{"model": "ordinal"}`, 400, "invalid", "needs an ordinal scheme")
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", nom), nk, `{}`, 400, "invalid", `project "nominal" has no labels to fit`)
	e.wantError("POST", fitsPath, key, `{"model": "classification"}`, 400, "invalid", "needs a nominal or binary scheme")
	emp, ek := e.project("empty", "ordinal:1..3")
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", emp), ek, nil, 400, "invalid", "no labels to fit")
	// A kernel that reads covariates the items lack is refused when the fit
	// is submitted.
	e.wantError("POST", fitsPath, key, `{"kernel": "linear"}`, 400, "invalid", "reads numeric item covariates")
	// A fit that fails when it runs says why (a text column the items
	// lack is found only then).
	kid := e.startFit(id, key, map[string]any{"engine": "gibbs", "kernel": "text:nosuchcolumn", "chains": 1, "samples": 10, "burnin": 1})
	failed := e.waitFit(kid, key, 30*time.Second)
	if failed["state"] != "failed" || !strings.Contains(failed["message"].(string), "nosuchcolumn") {
		t.Errorf("failed fit: %v", failed)
	}
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", kid), key, nil, 409, "conflict", "failed")
	e.wantError("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", kid), key, nil, 409, "conflict", "already failed")

	// Delete.
	e.call("DELETE", fmt.Sprintf("/api/v1/fits/%d", kid), key, nil, 204)
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d", kid), key, nil, 404, "not_found", "not found")
	e.wantError("DELETE", fmt.Sprintf("/api/v1/fits/%d", kid), key, nil, 404, "not_found", "not found")
}

func TestCancelAndConflicts(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Workers = 1 })
	id, key := e.loadedProject("k1")
	long := map[string]any{"engine": "gibbs", "chains": 2, "samples": 1000000, "burnin": 10, "seed": 1}
	running := e.startFit(id, key, long)
	queued := e.startFit(id, key, seeded(long, 2)) // the same spec would be the same fit
	// Wait until the first runs.
	deadline := time.Now().Add(hangTimeout)
	for e.call("GET", fmt.Sprintf("/api/v1/fits/%d", running), key, nil, 200)["state"] != "running" {
		if time.Now().After(deadline) {
			t.Fatal("fit did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/report.xlsx", running), key, nil, 409, "conflict", "is running")
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", queued), key, nil, 409, "conflict", "is queued")
	e.wantError("DELETE", fmt.Sprintf("/api/v1/fits/%d", running), key, nil, 409, "conflict", "cancel it")
	// A queued fit is cancelled at once.
	out := e.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", queued), key, nil, 202)
	if out["state"] != "cancelled" {
		t.Errorf("cancelled queued fit: %v", out["state"])
	}
	// A running fit stops (within a second on an idle machine; the fit
	// would otherwise run for minutes, so the wait below only bounds a
	// cancellation that does not work, not the machine's speed).
	start := time.Now()
	e.call("POST", fmt.Sprintf("/api/v1/fits/%d/cancel", running), key, nil, 202)
	f := e.waitFit(running, key, 60*time.Second)
	if f["state"] != "cancelled" || f["message"] != "cancelled by request" {
		t.Errorf("cancelled running fit: %v", f)
	}
	t.Logf("running fit cancelled in %s", time.Since(start))
	e.call("DELETE", fmt.Sprintf("/api/v1/fits/%d", running), key, nil, 204)
}

func TestPredictions(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	fid := e.doneFit(id, key)
	path := fmt.Sprintf("/api/v1/fits/%d/predictions", fid)
	out := e.call("POST", path, key, map[string]any{"items": []map[string]any{{"id": "new-essay", "text": "some text"}, {"id": "other"}}}, 200)
	items := out["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("predictions: %v", out)
	}
	p0 := items[0].(map[string]any)
	probs := p0["grade_probs"].(map[string]any)
	sum := 0.0
	for _, v := range probs {
		sum += v.(float64)
	}
	if p0["id"] != "new-essay" || len(probs) != 4 || sum < 0.999 || sum > 1.001 || p0["grade"] == "" {
		t.Errorf("prediction: %v (sum %v)", p0, sum)
	}
	if len(p0["rater_grade_probs"].(map[string]any)) != 7 {
		t.Errorf("per-rater predictions: %v", p0["rater_grade_probs"])
	}
	if out["schema"] != "concord.predictions/v1" || out["kernel"] != "identity" {
		t.Errorf("predictions document: %v", out)
	}
	if notes := out["notes"].([]any); len(notes) < 2 {
		t.Errorf("notes: %v", notes)
	}
	e.wantError("POST", path, key, `{"items": []}`, 400, "invalid", "non-empty")
	e.wantError("POST", path, key, `{"items": [{"id": "a"}, {"id": "a"}]}`, 400, "invalid", `item "a" is given twice`)
	e.wantError("POST", path, key, `{"items": [{"id": ""}]}`, 400, "invalid", "empty item id")
	e.wantError("POST", path, key, `{"items": [{"name": "a"}]}`, 400, "invalid", `unknown field "name"`)
}

func TestPredictionsWithCovariates(t *testing.T) {
	e := newEnv(t)
	id, key := e.project("cov", "ordinal:1..3")
	// Items with a covariate that drives the grades.
	var labels []map[string]any
	var items []map[string]any
	for i := 0; i < 30; i++ {
		x := float64(i) / 10
		items = append(items, map[string]any{"id": fmt.Sprintf("i%d", i), "covariates": map[string]float64{"x": x, "y": 1}})
		for r, shift := range []int{0, 1, 2} {
			g := 1 + (i+shift*3)/12
			labels = append(labels, map[string]any{"item_id": fmt.Sprintf("i%d", i), "rater_id": fmt.Sprintf("r%d", r), "label": fmt.Sprint(min(g, 3))})
		}
	}
	e.call("POST", fmt.Sprintf("/api/v1/projects/%d/labels", id), key, map[string]any{"labels": labels, "items": items}, 201)
	fid := e.startFit(id, key, map[string]any{"engine": "gibbs", "kernel": "rbf:gamma=1", "chains": 2, "samples": 200, "burnin": 100})
	if f := e.waitFit(fid, key, 60*time.Second); f["state"] != "done" {
		t.Fatalf("fit: %v", f)
	}
	path := fmt.Sprintf("/api/v1/fits/%d/predictions", fid)
	out := e.call("POST", path, key, map[string]any{"items": []map[string]any{{"id": "low", "covariates": map[string]float64{"x": 0, "y": 1}}, {"id": "high", "covariates": map[string]float64{"x": 2.9, "y": 1}}}}, 200)
	its := out["items"].([]any)
	lo := its[0].(map[string]any)["score"].(map[string]any)["mean"].(float64)
	hi := its[1].(map[string]any)["score"].(map[string]any)["mean"].(float64)
	if !(hi > lo) {
		t.Errorf("prediction ignores the covariate: low %v, high %v", lo, hi)
	}
	e.wantError("POST", path, key, `{"items": [{"id": "a", "covariates": {"x": 1}}]}`, 400, "invalid", `no value for covariate "y"`)
	extra := e.call("POST", path, key, map[string]any{"items": []map[string]any{{"id": "a", "covariates": map[string]float64{"x": 1, "y": 1, "z": 2}}}}, 200)
	if !strings.Contains(fmt.Sprint(extra["notes"]), "z") {
		t.Errorf("unused covariate not noted: %v", extra["notes"])
	}
	// The project's items may change after the fit: the fit keeps what it
	// needs.
	e.call("POST", fmt.Sprintf("/api/v1/projects/%d/items", id), key, map[string]any{"items": []map[string]any{{"id": "late", "covariates": map[string]float64{"w": 5}}}}, 201)
	e.call("POST", path, key, map[string]any{"items": []map[string]any{{"id": "b", "covariates": map[string]float64{"x": 1, "y": 1}}}}, 200)
}

// checkWorkbook opens an XLSX download and checks its sheets and the
// number of item rows.
func checkWorkbook(t *testing.T, b []byte, items int) {
	t.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("workbook: %v", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	for _, want := range []string{"Summary", "Items", "Raters", "Thresholds", "Agreement", "Diagnostics", "Flags"} {
		if !slices.Contains(sheets, want) {
			t.Errorf("workbook lacks sheet %s (has %v)", want, sheets)
		}
	}
	rows, err := f.GetRows("Items")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < items+1 {
		t.Errorf("Items sheet has %d rows, want a header and %d items", len(rows), items)
	}
}

// TestDoneFitCache: a done fit's reports are served from memory within the
// cache TTL; a deletion through this process takes effect at once, one by
// another process (directly in the store) within the TTL.
func TestDoneFitCache(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.KeyCacheTTL = 300 * time.Millisecond })
	id, key := e.loadedProject("k1")
	a, b := e.doneFit(id, key), e.doneFit(id, key)
	for _, f := range []int64{a, b} {
		e.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", f), key, nil, 200)
	}
	e.call("DELETE", fmt.Sprintf("/api/v1/fits/%d", a), key, nil, 204)
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", a), key, nil, 404, "not_found", "not found")
	if err := e.store.DeleteFit(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	time.Sleep(350 * time.Millisecond)
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", b), key, nil, 404, "not_found", "not found")
	// Another project's key never gets a cached fit.
	_, other := e.project("other", "ordinal:1..3")
	c := e.doneFit(id, key)
	e.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", c), key, nil, 200)
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", c), other, nil, 404, "not_found", "not found")
	// Deleting the project forgets its fits at once.
	e.call("DELETE", fmt.Sprintf("/api/v1/projects/%d", id), testAdmin, nil, 204)
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", c), testAdmin, nil, 404, "not_found", "not found")
}

// TestTextKernelFit: with item texts, a fit that names no kernel uses the
// text kernel (the data's default), and the result says so.
func TestTextKernelFit(t *testing.T) {
	e := newEnv(t)
	id, key := e.project("texts", "ordinal:1..3")
	words := []string{"excellent clear argument", "weak unclear argument", "average essay with some points", "brilliant clear essay", "poor essay"}
	var labels []map[string]any
	var items []map[string]any
	for i := 0; i < 20; i++ {
		w := words[i%len(words)]
		items = append(items, map[string]any{"id": fmt.Sprintf("e%d", i), "text": fmt.Sprintf("%s number %d", w, i)})
		for r := 0; r < 3; r++ {
			g := 1 + (i+r)%3
			labels = append(labels, map[string]any{"item_id": fmt.Sprintf("e%d", i), "rater_id": fmt.Sprintf("r%d", r), "label": fmt.Sprint(g)})
		}
	}
	e.call("POST", fmt.Sprintf("/api/v1/projects/%d/labels", id), key, map[string]any{"labels": labels, "items": items}, 201)
	fid := e.startFit(id, key, map[string]any{"engine": "gibbs", "chains": 2, "samples": 100, "burnin": 50, "text": map[string]any{"stem": true}})
	f := e.waitFit(fid, key, 60*time.Second)
	if f["state"] != "done" {
		t.Fatalf("text fit: %v", f)
	}
	res := e.call("GET", fmt.Sprintf("/api/v1/fits/%d/result", fid), key, nil, 200)
	if k := res["model"].(map[string]any)["kernel"]; !strings.Contains(fmt.Sprint(k), "text") {
		t.Errorf("kernel of the fit: %v", k)
	}
	// New texts are predicted through the fit's featuriser.
	pred := e.call("POST", fmt.Sprintf("/api/v1/fits/%d/predictions", fid), key, map[string]any{"items": []map[string]any{
		{"id": "n1", "text": "a brilliant clear essay"}, {"id": "n2", "text": "zzz qqq"}}}, 200)
	if its := pred["items"].([]any); len(its) != 2 || !strings.Contains(fmt.Sprint(pred["kernel"]), "text") {
		t.Errorf("text predictions: %v", pred)
	}
	if !strings.Contains(fmt.Sprint(pred["notes"]), "no term of the fit's vocabulary") {
		t.Errorf("notes: %v", pred["notes"])
	}
}

// TestStartFit: fits queued in Go (as concord demo does) run like API fits.
func TestStartFit(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	f, err := e.srv.StartFit(t.Context(), id, analysis.FitSpec{Engine: "gibbs", Chains: 2, Samples: 100, Burnin: 50, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.waitFit(f.ID, key, 60*time.Second); got["state"] != "done" || got["seed"].(float64) != 3 {
		t.Errorf("fit: %v", got)
	}
	if _, err := e.srv.StartFit(t.Context(), id, analysis.FitSpec{Chains: -1}); annotations.ErrorCode(err) != annotations.EINVALID {
		t.Errorf("bad spec: %v", err)
	}
	if _, err := e.srv.StartFit(t.Context(), 999, analysis.FitSpec{}); annotations.ErrorCode(err) != annotations.ENOTFOUND {
		t.Errorf("missing project: %v", err)
	}
}
