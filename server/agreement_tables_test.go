package server

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"concord/annotations"
)

// TestAgreementTablesAPI: the agreement document has the pairwise matrix
// and the per-item and per-rater tables; the table endpoints give them as
// JSON and CSV, the items lowest first, filtered (below) and paged on the
// server; bad parameters are 400s and unknown tables 404s.
func TestAgreementTablesAPI(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	base := fmt.Sprintf("/api/v1/projects/%d/agreement", id)

	doc := e.call("GET", base+"?bootstrap=0", key, nil, 200)
	m, ok := doc["pairwise_matrix"].(map[string]any)
	if !ok {
		t.Fatalf("no pairwise_matrix in the agreement document: keys %v", keys(doc))
	}
	rs := m["raters"].([]any)
	if len(rs) != 7 || m["weights"] != "quadratic" || m["coefficient"] != "cohen_kappa" {
		t.Errorf("matrix: %d raters, weights %v, coefficient %v", len(rs), m["weights"], m["coefficient"])
	}
	items := doc["item_agreement"].([]any)
	if len(items) != 135 || len(doc["rater_agreement"].([]any)) != 7 || doc["agreement_score"] == "" {
		t.Errorf("%d item rows, %d rater rows, score %v", len(items), len(doc["rater_agreement"].([]any)), doc["agreement_score"])
	}
	// The matrix agrees with cohen_kappa's pairs.
	ix := map[string]int{}
	for i, r := range rs {
		ix[r.(string)] = i
	}
	kappa, n := m["kappa"].([]any), m["n"].([]any)
	for _, p := range doc["cohen_kappa"].([]any) {
		pm := p.(map[string]any)
		a, b := ix[pm["a"].(string)], ix[pm["b"].(string)]
		want := pm["quadratic"].(map[string]any)["value"]
		if got := kappa[a].([]any)[b]; got != want || n[b].([]any)[a].(float64) != pm["n"].(float64) {
			t.Errorf("matrix %s-%s: %v (n %v), cohen_kappa %v (n %v)", pm["a"], pm["b"], got, n[b].([]any)[a], want, pm["n"])
		}
	}

	// The matrix endpoint.
	mt := e.call("GET", base+"/matrix?bootstrap=0", key, nil, 200)
	if len(mt["raters"].([]any)) != 7 || len(mt["kappa"].([]any)) != 7 || mt["weights"] != "quadratic" {
		t.Errorf("matrix table: %v", mt)
	}

	// Pairs: 7 raters, 21 pairs, paged.
	pg := e.call("GET", base+"/pairs?bootstrap=0&offset=5&limit=10", key, nil, 200)
	prs := pg["pairs"].([]any)
	if pg["total"].(float64) != 21 || pg["offset"].(float64) != 5 || len(prs) != 10 {
		t.Errorf("pairs page: total %v offset %v, %d rows", pg["total"], pg["offset"], len(prs))
	}
	allPairs := e.call("GET", base+"/pairs?bootstrap=0", key, nil, 200)["pairs"].([]any)
	if len(allPairs) != 21 || fmt.Sprint(allPairs[5]) != fmt.Sprint(prs[0]) || fmt.Sprint(allPairs[14]) != fmt.Sprint(prs[9]) {
		t.Errorf("pairs: %d rows; page rows %v and %v", len(allPairs), prs[0], prs[9])
	}
	resp, csvb := e.request("GET", base+"/pairs?bootstrap=0&format=csv&limit=3", key, nil)
	if resp.StatusCode != 200 || strings.Count(string(csvb), "\n") != 4 {
		t.Errorf("pairs CSV page: %d\n%s", resp.StatusCode, csvb)
	}

	// Items: lowest first, all 135 with 2+ labels or not.
	all := e.call("GET", base+"/items?bootstrap=0&limit=1000", key, nil, 200)
	rows := all["items"].([]any)
	if all["total"].(float64) != 135 || all["matching"].(float64) != 135 || len(rows) != 135 {
		t.Fatalf("items: total %v, matching %v, %d rows", all["total"], all["matching"], len(rows))
	}
	scored := int(all["scored"].(float64))
	prev := -1.0
	for i, r := range rows {
		rm := r.(map[string]any)
		v, ok := rm["agreement"].(float64)
		if i < scored {
			if !ok || v < prev {
				t.Fatalf("row %d: agreement %v after %v: not sorted ascending", i, rm["agreement"], prev)
			}
			prev = v
		} else if rm["agreement"] != nil {
			t.Errorf("row %d past the %d scored items has agreement %v", i, scored, rm["agreement"])
		}
		total := 0
		for _, c := range rm["counts"].(map[string]any) {
			total += int(c.(float64))
		}
		if total != int(rm["labels"].(float64)) {
			t.Errorf("item %v: counts %v for %v labels", rm["item"], rm["counts"], rm["labels"])
		}
	}
	// below=0.7: exactly the scored rows under 0.7, paged.
	want := 0
	for _, r := range rows[:scored] {
		if r.(map[string]any)["agreement"].(float64) < 0.7 {
			want++
		}
	}
	if want == 0 || want == scored {
		t.Fatalf("test data: %d of %d items below 0.7", want, scored)
	}
	low := e.call("GET", base+"/items?bootstrap=0&below=0.7&limit=5&offset=1", key, nil, 200)
	lr := low["items"].([]any)
	if int(low["matching"].(float64)) != want || len(lr) != min(5, want-1) || low["below"].(float64) != 0.7 {
		t.Errorf("below=0.7: matching %v (want %d), %d rows", low["matching"], want, len(lr))
	}
	if len(lr) > 0 && lr[0].(map[string]any)["item"] != rows[1].(map[string]any)["item"] {
		t.Errorf("offset 1: first row %v, want %v", lr[0], rows[1])
	}

	// CSV exports.
	get := func(path string) [][]string {
		t.Helper()
		resp, b := e.request("GET", path, key, nil)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") ||
			!strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("%s: status %d, type %q, disposition %q: %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"), clipText(string(b), 300))
		}
		recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return recs
	}
	if recs := get(base + "/items?bootstrap=0&format=csv&below=0.7"); len(recs) != want+1 || strings.Join(recs[0], ",") != "Item,Labels,Agreement" {
		t.Errorf("items CSV below 0.7: %d records (want %d), header %v", len(recs), want+1, recs[0])
	} else if v, err := strconv.ParseFloat(recs[1][2], 64); err != nil || v != rows[0].(map[string]any)["agreement"].(float64) {
		t.Errorf("items CSV first row %v, JSON %v", recs[1], rows[0])
	}
	if recs := get(base + "/items?bootstrap=0&format=csv"); len(recs) != 136 {
		t.Errorf("items CSV: %d records, want 136 (no paging by default)", len(recs))
	}
	if recs := get(base + "/matrix?bootstrap=0&format=csv"); len(recs) != 8 || len(recs[0]) != 8 || recs[1][1] != "" {
		t.Errorf("matrix CSV: %d records of %d fields, diagonal %q", len(recs), len(recs[0]), recs[1][1])
	}
	if recs := get(base + "/pairs?bootstrap=0&format=csv"); len(recs) != len(doc["cohen_kappa"].([]any))+1 || recs[0][2] != "Shared items" {
		t.Errorf("pairs CSV: %d records, header %v", len(recs), recs[0])
	}
	if recs := get(base + "/raters?bootstrap=0&format=csv"); len(recs) != 8 || strings.Join(recs[0], ",") != "Rater,Labels,Shared items,Partners,Pairs,Agreement,Mean pairwise kappa,Pooled kappa" {
		t.Errorf("raters CSV: %d records, header %v", len(recs), recs[0])
	}
	rt := e.call("GET", base+"/raters?bootstrap=0", key, nil, 200)
	if r0 := rt["raters"].([]any)[0].(map[string]any); r0["pooled_kappa"] == nil || r0["partners"].(float64) < 1 {
		t.Errorf("raters table row %v", r0)
	}
	pt := e.call("GET", base+"/pairs?bootstrap=0", key, nil, 200)
	if p0 := pt["pairs"].([]any)[0].(map[string]any); p0["kappa"].(map[string]any)["value"] == nil || pt["weights"] != "quadratic" {
		t.Errorf("pairs table row %v", p0)
	}

	// Errors.
	e.wantError("GET", base+"/nope", key, nil, http.StatusNotFound, annotations.ENOTFOUND, "expected one of matrix, pairs, items, raters")
	e.wantError("GET", base+"/items?below=x", key, nil, http.StatusBadRequest, annotations.EINVALID, "below=\"x\": expected a number")
	e.wantError("GET", base+"/items?format=xml", key, nil, http.StatusBadRequest, annotations.EINVALID, "expected json or csv")
	e.wantError("GET", base+"/raters?below=0.5", key, nil, http.StatusBadRequest, annotations.EINVALID, "unknown query parameter \"below\"")
	other, _ := e.project("other", "ordinal:0..3")
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d/agreement/items", other), key, nil, http.StatusNotFound, annotations.ENOTFOUND, "")
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
