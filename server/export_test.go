package server

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"concord/raters"
)

// lsFixture is a real Label Studio JSON export (annotations/testdata,
// README there): 4 RTE tasks with text and hypothesis, 10 annotators.
const lsFixture = "../annotations/testdata/labelstudio_rte.json"

// lsTask is a Label Studio task as its JSON import (annotations) and
// concord's export (predictions) write it, its data decoded as D.
type lsTask[D any] struct {
	ID          json.RawMessage `json:"id"`
	Data        D               `json:"data"`
	Annotations []struct {
		Result []lsResult `json:"result"`
	} `json:"annotations"`
	Predictions []struct {
		ModelVersion string     `json:"model_version"`
		Score        *float64   `json:"score"`
		Result       []lsResult `json:"result"`
	} `json:"predictions"`
}

// lsResult is a result of a Label Studio annotation or prediction.
type lsResult struct {
	ID       string                       `json:"id"`
	FromName string                       `json:"from_name"`
	ToName   string                       `json:"to_name"`
	Type     string                       `json:"type"`
	Value    map[string][]json.RawMessage `json:"value"`
}

// TestExportLabelStudio imports a Label Studio JSON export through the API,
// fits it, and downloads the consensus as Label Studio predictions: every
// task comes back with its own id and the data object of the export, field
// for field, and one prediction in Label Studio's documented format
// (https://labelstud.io/guide/predictions: model_version, score, result
// [{from_name, to_name, type, value: {choices: [...]}}]). The other formats
// come from the same route, and unknown ones are a 404.
func TestExportLabelStudio(t *testing.T) {
	e := newEnv(t)
	raw, err := os.ReadFile(lsFixture)
	if err != nil {
		t.Fatal(err)
	}
	var export []lsTask[map[string]any]
	if err := json.Unmarshal(raw, &export); err != nil {
		t.Fatal(err)
	}
	wantData := map[string]map[string]any{}
	for _, tk := range export {
		wantData[string(tk.ID)] = tk.Data
	}
	from, to := export[0].Annotations[0].Result[0].FromName, export[0].Annotations[0].Result[0].ToName

	id, key := e.project("ls-export", "nominal:entailment,no entailment")
	resp, b := e.upload(fmt.Sprintf("/api/v1/projects/%d/imports", id), key, map[string][2]string{"file": {"export.json", string(raw)}}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("import: status %d: %s", resp.StatusCode, b)
	}
	fid := e.doneSpec(id, key, map[string]any{"model": "confusion", "seed": 2})
	base := fmt.Sprintf("/api/v1/fits/%d/export/", fid)

	resp, b = e.request("GET", base+"labelstudio", key, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Disposition"), ".labelstudio.json") {
		t.Fatalf("labelstudio: status %d, disposition %q: %s", resp.StatusCode, resp.Header.Get("Content-Disposition"), b)
	}
	var tasks []lsTask[map[string]any]
	if err := json.Unmarshal(b, &tasks); err != nil {
		t.Fatalf("labelstudio: %v\n%s", err, b)
	}
	if len(tasks) != len(export) {
		t.Fatalf("%d tasks, want %d", len(tasks), len(export))
	}
	for _, tk := range tasks {
		want, ok := wantData[string(tk.ID)]
		if !ok {
			t.Errorf("task id %s is not one of the export's", tk.ID)
			continue
		}
		if !reflect.DeepEqual(tk.Data, want) {
			t.Errorf("task %s: data %v, want the export's %v", tk.ID, tk.Data, want)
		}
		if len(tk.Predictions) != 1 || len(tk.Predictions[0].Result) != 1 {
			t.Fatalf("task %s: predictions %+v", tk.ID, tk.Predictions)
		}
		p := tk.Predictions[0]
		r := p.Result[0]
		if r.FromName != from || r.ToName != to || r.Type != "choices" || len(r.Value["choices"]) != 1 || r.ID == "" {
			t.Errorf("task %s: result %+v", tk.ID, r)
		}
		if p.Score == nil || *p.Score < 0.5 || *p.Score > 1 || !strings.Contains(p.ModelVersion, fmt.Sprintf("fit %d confusion", fid)) {
			t.Errorf("task %s: score %v, model_version %q", tk.ID, p.Score, p.ModelVersion)
		}
	}

	// crowd-kit's table and the doccano lines have one row per item.
	resp, b = e.request("GET", base+"crowdkit", key, nil)
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if resp.StatusCode != http.StatusOK || err != nil || len(recs) != 1+len(export) || strings.Join(recs[0], ",") != "task,label,prob" {
		t.Errorf("crowdkit: status %d, %v:\n%s", resp.StatusCode, err, b)
	}
	resp, b = e.request("GET", base+"doccano", key, nil)
	if resp.StatusCode != http.StatusOK || strings.Count(strings.TrimSpace(string(b)), "\n")+1 != len(export) || !strings.Contains(string(b), `"text":`) {
		t.Errorf("doccano: status %d:\n%s", resp.StatusCode, b)
	}
	resp, b = e.request("GET", base+"csv", key, nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
		t.Errorf("csv: status %d %s:\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	e.wantError("GET", base+"pdf", key, nil, http.StatusNotFound, "not_found", "labelstudio, doccano, crowdkit, csv")
	e.wantError("GET", base+"crowdkit?from_name=x", key, nil, http.StatusBadRequest, "invalid", "parameters of the labelstudio export")
	e.wantError("GET", base+"labelstudio?type=polygon", key, nil, http.StatusBadRequest, "invalid", "choices, rating or number")

	// The control names given in the query override the import's.
	resp, b = e.request("GET", base+"labelstudio?from_name=label&to_name=doc", key, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"from_name": "label"`) || !strings.Contains(string(b), `"to_name": "doc"`) {
		t.Errorf("labelstudio with names: status %d:\n%.300s", resp.StatusCode, b)
	}
}

// A project imported from a CSV long file has no control names: the Label
// Studio export says which query parameters give them.
func TestExportLabelStudioNeedsNames(t *testing.T) {
	e, id, key := loadedEnv(t, "names")
	fid := e.doneFit(id, key)
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/export/labelstudio", fid), key, nil, http.StatusBadRequest, "invalid", "?from_name=NAME&to_name=NAME")
	// The refusal is an answer to read, not a file to save.
	resp, _ := e.request("GET", fmt.Sprintf("/api/v1/fits/%d/export/labelstudio", fid), key, nil)
	if cd := resp.Header.Get("Content-Disposition"); cd != "" {
		t.Errorf("a refused export has Content-Disposition %q", cd)
	}
	resp, b := e.request("GET", fmt.Sprintf("/api/v1/fits/%d/export/labelstudio?from_name=grade&to_name=essay", fid), key, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"type": "rating"`) {
		t.Errorf("status %d:\n%.400s", resp.StatusCode, b)
	}
}

// TestDashboardLabelStudioCSV is the coordinator's loop from the dashboard
// alone: a Label Studio CSV export imported by the form with its columns
// named, a fit started by the form, and the Label Studio predictions
// downloaded from the fit page's link (with the control names, which a CSV
// export does not hold), each task with its id and data fields.
func TestDashboardLabelStudioCSV(t *testing.T) {
	e := newEnv(t)
	id, key := e.project("ls-csv", "nominal:entailment,no entailment")
	b := newBrowser(t, e)
	b.login(key)
	_, page := b.get(fmt.Sprintf("/projects/%d", id))
	for _, want := range []string{`name="label_col"`, `name="item_col"`, `name="rater_col"`, `name="text_columns"`, `id="import-preview"`, `data-levels="entailment|no entailment"`} {
		if !strings.Contains(page, want) {
			t.Errorf("project page lacks %s", want)
		}
	}
	csrf := b.csrf(page)
	raw, err := os.ReadFile("../annotations/testdata/labelstudio_rte.csv")
	if err != nil {
		t.Fatal(err)
	}
	upload := func(fields map[string]string) (*http.Response, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("csrf", csrf)
		for k, v := range fields {
			mw.WriteField(k, v)
		}
		w, _ := mw.CreateFormFile("file", "project-3-at-2021.csv")
		w.Write(raw)
		mw.Close()
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/projects/%d/import", e.url, id), &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return b.do(req)
	}
	// A column the file does not have: the message names the form's field,
	// not a command-line flag.
	resp, page := upload(map[string]string{"label_col": "sentiment"})
	if resp.StatusCode != 400 || !strings.Contains(page, `the form&#39;s &#34;Label column&#34; field`) || strings.Contains(between(page, `class="problems"`, "</ul>"), "--label-col") {
		t.Errorf("unknown label column: %d %s", resp.StatusCode, between(page, "Import rejected", "</section>"))
	}
	resp, _ = upload(map[string]string{"label_col": "entailment", "item_col": "id", "rater_col": "annotator", "text_columns": "text,hypothesis"})
	if resp.StatusCode != 303 {
		t.Fatalf("import: %d", resp.StatusCode)
	}
	_, page = b.get(resp.Header.Get("Location"))
	if !strings.Contains(page, "40 labels added") {
		t.Errorf("import message: %s", between(page, "Imported", "</"))
	}
	resp, _ = b.post(fmt.Sprintf("/projects/%d/fits", id), url.Values{"csrf": {csrf}, "model": {"confusion"}, "seed": {"3"}})
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/fits/") {
		t.Fatalf("start fit: %d", resp.StatusCode)
	}
	var fid int64
	fmt.Sscanf(resp.Header.Get("Location"), "/fits/%d", &fid)
	if f := e.waitFit(fid, key, 60*time.Second); f["state"] != "done" {
		t.Fatalf("fit: %v", f)
	}
	_, page = b.get(fmt.Sprintf("/fits/%d", fid))
	link := fmt.Sprintf("/api/v1/fits/%d/export/labelstudio", fid)
	if !strings.Contains(page, `href="`+link+`"`) || !strings.Contains(page, `action="`+link+`"`) {
		t.Fatalf("fit page lacks the Label Studio download and its names form")
	}
	// The names form is filled in from the import: the CSV's annotation
	// column, and the task's text field as a guess of toName.
	if form := between(page, `id="ls-names"`, "</form>"); !strings.Contains(form, `name="from_name" size="12" maxlength="200" required value="entailment"`) || !strings.Contains(form, `value="text"`) {
		t.Errorf("names form not filled in:\n%s", form)
	}
	// The names form's GET, as the browser sends it.
	resp, body := b.get(link + "?from_name=entailment&to_name=text")
	if resp.StatusCode != 200 {
		t.Fatalf("download: %d %s", resp.StatusCode, body)
	}
	var tasks []lsTask[map[string]string]
	if err := json.Unmarshal([]byte(body), &tasks); err != nil || len(tasks) != 4 {
		t.Fatalf("download: %v, %d tasks", err, len(tasks))
	}
	for _, tk := range tasks {
		if tk.Data["text"] == "" || tk.Data["hypothesis"] == "" || len(tk.Data) != 2 || len(tk.Predictions) != 1 {
			t.Errorf("task %s: data %v, predictions %v", tk.ID, tk.Data, tk.Predictions)
		}
	}
}

// TestGoldOnFitPage: with gold labels on the items, report.json has every
// rater's record on the gold questions, equal to a direct count of the
// labels with its Wilson interval, and the fit page shows the table.
func TestGoldOnFitPage(t *testing.T) {
	e, id, key := binaryEnv(t, "rte-gold")
	fid := e.doneSpec(id, key, map[string]any{"model": "confusion", "seed": 5})

	gold := map[string]string{}
	items, err := csv.NewReader(strings.NewReader(readTestdata(t, "rte_40_items.csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range items[1:] {
		gold[r[0]] = r[1]
	}
	labels, err := csv.NewReader(strings.NewReader(readTestdata(t, "rte_40.csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	type count struct{ n, correct int }
	direct := map[string]count{}
	for _, r := range labels[1:] {
		c := direct[r[1]]
		c.n++
		if r[2] == gold[r[0]] {
			c.correct++
		}
		direct[r[1]] = c
	}
	rep := e.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), key, nil, 200)
	// Server-built reports carry the items' texts (the review queue's Text
	// column).
	for _, it := range rep["items"].([]any) {
		if m := it.(map[string]any); m["text"] == nil || m["text"] == "" {
			t.Errorf("report.json: item %v has no text", m["id"])
			break
		}
	}
	for _, r := range rep["raters"].([]any) {
		m := r.(map[string]any)
		g, _ := m["gold"].(map[string]any)
		want := direct[m["id"].(string)]
		if g == nil || int(g["labels"].(float64)) != want.n || int(g["correct"].(float64)) != want.correct {
			t.Errorf("rater %v: gold %v, want %d of %d", m["id"], g, want.correct, want.n)
			continue
		}
		p, lo, hi := raters.WilsonInterval(float64(want.correct), float64(want.n), 0.95)
		if g["accuracy"].(float64) != p || g["q025"].(float64) != lo || g["q975"].(float64) != hi {
			t.Errorf("rater %v: %v, want %v [%v, %v]", m["id"], g, p, lo, hi)
		}
	}
	b := newBrowser(t, e)
	b.login(key)
	_, page := b.get(fmt.Sprintf("/fits/%d", fid))
	if !strings.Contains(page, `id="gold-table"`) || !strings.Contains(page, "40 items have a gold label") {
		t.Errorf("fit page lacks the gold table")
	}
	if n := strings.Count(between(page, `id="gold-table"`, "</table>"), "<tr>"); n != len(direct)+1 {
		t.Errorf("gold table has %d rows, want %d raters and the header", n, len(direct))
	}
}

// TestNextItems: the API ranks a confusion fit's items by what one more
// label would tell (best first, as analysis.NextItems on the fit's result
// does), as JSON and as a CSV task list; the dashboard page lists them.
func TestNextItems(t *testing.T) {
	e, id, key := binaryEnv(t, "rte-next")
	fid := e.doneSpec(id, key, map[string]any{"model": "confusion", "seed": 5})
	base := fmt.Sprintf("/api/v1/fits/%d/next", fid)
	doc := e.call("GET", base+"?n=5", key, nil, 200)
	items := doc["items"].([]any)
	if doc["schema"] != "concord.next/v1" || len(items) != 5 || doc["total"].(float64) != 40 {
		t.Fatalf("next: %v", doc)
	}
	prev := math.Inf(1)
	for _, it := range items {
		m := it.(map[string]any)
		s := m["score"].(float64)
		if s > prev || m["why"] == "" || m["score"] != m["information"] {
			t.Errorf("item %v: score %v after %v", m["id"], s, prev)
		}
		prev = s
	}
	acc := e.call("GET", base+"?n=40&by=accuracy", key, nil, 200)
	for _, it := range acc["items"].([]any) {
		if m := it.(map[string]any); m["score"] != m["accuracy_gain"] {
			t.Errorf("by accuracy: %v", m)
		}
	}
	resp, b := e.request("GET", base+"?n=3&format=csv", key, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "id,score,consensus,prob,n_labels,why\n") || strings.Count(string(b), "\n") != 4 {
		t.Errorf("csv: %d\n%s", resp.StatusCode, b)
	}
	e.wantError("GET", base+"?pool=nobody", key, nil, 400, "invalid", `rater "nobody" has no labels`)
	e.wantError("GET", base+"?by=luck", key, nil, 400, "invalid", "information or accuracy")
	e.wantError("GET", base+"?n=0", key, nil, 400, "invalid", "n=")

	b2 := newBrowser(t, e)
	b2.login(key)
	b2.hasLink(fmt.Sprintf("/fits/%d", fid), fmt.Sprintf("/fits/%d/next", fid), "the items to label next")
	_, page := b2.get(fmt.Sprintf("/fits/%d/next?n=7", fid))
	if n := strings.Count(between(page, `id="next-table"`, "</table>"), "<tr>"); n != 8 {
		t.Errorf("next page: %d rows, want 7 and the header", n)
	}
	if !strings.Contains(page, "format=csv") {
		t.Errorf("next page lacks the CSV task list")
	}
}

// TestAgreementLabelBound: a project over Config.MaxAgreementLabels gets a
// 413 from the agreement routes naming the limit and the command that
// runs the analysis outside the server, and its fits' reports are made
// without the agreement section; one under it is analysed, 30,000 raters
// with 2 labels each included (issue 36 item 1: that request used to
// exhaust the server's memory).
func TestAgreementLabelBound(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxAgreementLabels = 50_000 })
	id, key := e.project("crowd", "nominal:a,b")
	var b strings.Builder
	b.WriteString("item_id,rater_id,label\n")
	for r := 0; r < 30000; r++ {
		fmt.Fprintf(&b, "i%d,r%d,%c\ni%d,r%d,%c\n", r%50, r, 'a'+byte(r%2), (r+7)%50, r, 'a'+byte(r/2%2))
	}
	resp, body := e.upload(fmt.Sprintf("/api/v1/projects/%d/imports", id), key, map[string][2]string{"file": {"crowd.csv", b.String()}}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("import: %d %s", resp.StatusCode, body)
	}
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=0", id), key, nil, http.StatusRequestEntityTooLarge, "too_large", "--max-agreement-labels")

	small := newEnv(t, func(c *Config) { c.MaxAgreementLabels = 100_000 })
	id, key = small.project("crowd", "nominal:a,b")
	resp, body = small.upload(fmt.Sprintf("/api/v1/projects/%d/imports", id), key, map[string][2]string{"file": {"crowd.csv", b.String()}}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("import: %d %s", resp.StatusCode, body)
	}
	doc := small.call("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=0", id), key, nil, http.StatusOK)
	if doc["fleiss_kappa"] == nil && doc["krippendorff_alpha"] == nil {
		t.Errorf("agreement of 30,000 raters: %v", clipText(fmt.Sprint(doc), 300))
	}
}
