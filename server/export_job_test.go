package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/xuri/excelize/v2"

	"concord/annotations"
	"concord/raters"
	"concord/reports"
)

// checkExportPending checks a 202 answer of a report file built by a job:
// a Retry-After header and a body naming the job's state and the flag.
func checkExportPending(t testing.TB, path string, resp *http.Response, b []byte) exportJobBody {
	t.Helper()
	body := checkAccepted[exportJobBody](t, path, resp, b, "--export-job-labels")
	if body.ExportID == 0 || !strings.Contains(body.Message, "/exports") {
		t.Errorf("%s: 202 body %s", path, b)
	}
	return body
}

// pollExport asks for path (method) until it answers something other
// than 202 and returns that answer.
func pollExport(e *testEnv, method, path, key string) (*http.Response, []byte) {
	e.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, b := e.request(method, path, key, nil)
		if resp.StatusCode != http.StatusAccepted {
			return resp, b
		}
		checkExportPending(e.t, path, resp, b)
		if time.Now().After(deadline) {
			e.t.Fatalf("%s %s: still 202 after 3 minutes: %s", method, path, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sameFile reports whether report file f (got) is want: byte for byte,
// and a workbook cell for cell (its properties carry the time it was
// written), every sheet's values and formulas.
func sameFile(t *testing.T, f string, got []byte, want string) bool {
	t.Helper()
	if !strings.HasPrefix(f, "report.xlsx") {
		return string(got) == want
	}
	cells := func(b []byte) string {
		book, err := excelize.OpenReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		defer book.Close()
		var out strings.Builder
		for _, sh := range book.GetSheetList() {
			rows, err := book.GetRows(sh, excelize.Options{RawCellValue: true})
			if err != nil {
				t.Fatalf("%s: sheet %s: %v", f, sh, err)
			}
			fmt.Fprintf(&out, "sheet %s: %d rows\n", sh, len(rows))
			for i, r := range rows {
				for j, v := range r {
					cell, _ := excelize.CoordinatesToCellName(j+1, i+1)
					formula, _ := book.GetCellFormula(sh, cell)
					fmt.Fprintf(&out, "%s=%q %q\n", cell, v, formula)
				}
			}
		}
		return out.String()
	}
	g, w := cells(got), cells([]byte(want))
	if g != w {
		t.Logf("%s: cells differ:\n%s\nwant\n%s", f, clipText(g, 1000), clipText(w, 1000))
	}
	return g == w && len(g) > 1000
}

// TestExportJobs runs on SQLite and PostgreSQL: a fit's workbook and
// report document, with and without the report options ci and null, built
// by jobs: an API-only node (Workers -1) answers 202 and enqueues the job
// (the queue depth on /metrics), the same request again joins it (one
// job, told so), DELETE /fits/{id}/exports cancels the queued ones and a
// later request starts them again; a worker process sharing the database
// (queue export only) builds them, and the files are byte for byte those
// built within a request by a server with jobs off.
func TestExportJobs(t *testing.T) {
	forEachBackend(t, testExportJobs)
}

func testExportJobs(t *testing.T, dsn string) {
	// The reference: the files built within the request (it runs the fit
	// and then works no export job).
	ref := newEnvDSN(t, dsn, func(c *Config) { c.ExportJobLabels = -1; c.Queues = []string{"fits"} })
	pid, key := ref.loadedProject("k1")
	fid := ref.doneFit(pid, key)
	base := fmt.Sprintf("/api/v1/fits/%d/", fid)
	files := []string{"report.xlsx", "report.xlsx?ci=normal&null=0.5", "report.json?download=1", "report.json?ci=normal&null=0.3"}
	want := map[string]string{}
	for _, f := range files {
		resp, b := ref.request("GET", base+f, key, nil)
		if resp.StatusCode != 200 || len(b) == 0 {
			t.Fatalf("in the request %s: %d %s", f, resp.StatusCode, clipText(string(b), 300))
		}
		want[f] = string(b)
	}
	if want[files[0]] == want[files[1]] {
		t.Errorf("the workbook with ci=normal&null=0.5 is the default one")
	}
	// The options reach the report's agreement analysis.
	for f, w := range map[string]struct {
		ci        string
		null      float64
		bootstrap bool
	}{files[2]: {"t", 0, true}, files[3]: {"normal", 0.3, false}} {
		var doc struct {
			Agreement struct {
				CI        string   `json:"ci"`
				Null      *float64 `json:"null"`
				Bootstrap int      `json:"bootstrap"`
			} `json:"agreement"`
		}
		if err := json.Unmarshal([]byte(want[f]), &doc); err != nil {
			t.Fatal(err)
		}
		a := doc.Agreement
		if a.CI != w.ci || (a.Null == nil) != (w.null == 0) || (a.Null != nil && *a.Null != w.null) || (a.Bootstrap > 0) != w.bootstrap {
			t.Errorf("%s: agreement ci %q null %v bootstrap %d, want %+v", f, a.CI, a.Null, a.Bootstrap, w)
		}
	}

	// An API-only node: every fit's files are jobs.
	api := newEnvDSN(t, dsn, func(c *Config) { c.ExportJobLabels = 1; c.Workers = -1 })
	first := map[string]exportJobBody{}
	for i, joined := range []bool{false, true} {
		for _, f := range files[:2] {
			resp, b := api.request("GET", base+f, key, nil)
			body := checkExportPending(t, base+f, resp, b)
			if body.Joined != joined || body.Status != "queued" || (i == 1 && body.ExportID != first[f].ExportID) ||
				(joined && !strings.Contains(body.Message, "joined")) || body.Labels == 0 {
				t.Errorf("GET %s, request %d: %s", f, i+1, b)
			}
			first[f] = body
		}
	}
	if first[files[0]].ExportID == first[files[1]].ExportID {
		t.Errorf("the workbooks with and without options share export %d", first[files[0]].ExportID)
	}
	_, m := api.request("GET", "/metrics", "", nil)
	if !strings.Contains(string(m), `concord_jobs{queue="export",state="available"} 2`) {
		t.Errorf("/metrics lacks the 2 queued export jobs:\n%s", grepLines(string(m), "concord_jobs"))
	}
	// POST starts the document's; DELETE cancels the three queued.
	resp, b := api.request("POST", base+files[2], key, nil)
	checkExportPending(t, base+files[2], resp, b)
	if got := api.call("DELETE", base+"exports", key, nil, 200); got["cancelled"] != float64(3) {
		t.Errorf("DELETE exports: %v, want 3 cancelled", got)
	}
	if got := api.call("DELETE", base+"exports", key, nil, 200); got["cancelled"] != float64(0) {
		t.Errorf("DELETE exports again: %v, want 0 cancelled", got)
	}
	for _, f := range files {
		resp, b := api.request("POST", base+f, key, nil)
		if body := checkExportPending(t, base+f, resp, b); body.Joined || body.ExportID == first[f].ExportID {
			t.Errorf("after the cancel, POST %s: %s", f, b)
		}
	}

	// A worker process of the export queue builds them.
	newEnvDSN(t, dsn, func(c *Config) { c.Workers = 1; c.Queues = []string{"export"}; c.WorkerName = "exporter" })
	for _, f := range files {
		resp, b := pollExport(api, "GET", base+f, key)
		if resp.StatusCode != 200 || !sameFile(t, f, b, want[f]) {
			t.Errorf("GET %s built by the job: %d, %d bytes, not the %d bytes of the request", f, resp.StatusCode, len(b), len(want[f]))
		}
		if strings.HasPrefix(f, "report.xlsx") && (resp.Header.Get("Content-Type") != ctXLSX || !strings.Contains(resp.Header.Get("Content-Disposition"), ".xlsx")) {
			t.Errorf("GET %s: headers %v", f, resp.Header)
		}
	}
	// Stored: another API node serves them at once.
	api2 := newEnvDSN(t, dsn, func(c *Config) { c.ExportJobLabels = 1; c.Workers = -1 })
	for _, f := range files {
		if resp, b := api2.request("GET", base+f, key, nil); resp.StatusCode != 200 || !sameFile(t, f, b, want[f]) {
			t.Errorf("GET %s from another node: %d", f, resp.StatusCode)
		}
	}
	jobs, _, err := api.store.ListJobs(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	built := 0
	for _, j := range jobs {
		if j.Kind == "export" && j.State == "completed" {
			built++
			if len(j.AttemptedBy) == 0 || j.AttemptedBy[0] != "exporter" || j.FitID != fid {
				t.Errorf("export job %+v", j)
			}
		}
	}
	if built != len(files) {
		t.Errorf("%d export jobs completed, want %d", built, len(files))
	}
}

// TestReportReusesStoredAgreement: a fit's report on the project's labels
// takes the agreement analysis of the project's agreement job when one is
// stored (no bootstrap run again: concord_report_agreements_total counts it
// as stored), and its agreement section is the one a server computes.
func TestReportReusesStoredAgreement(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "concord.db")
	e := newEnvDSN(t, dsn, func(c *Config) { c.AgreementJobLabels = 10 })
	pid, key := e.loadedProject("k1")
	fid := e.doneFit(pid, key)
	// The agreement route's default options are the report's.
	resp, b, _ := pollAgreement(e, fmt.Sprintf("/api/v1/projects/%d/agreement", pid), key)
	if resp.StatusCode != 200 {
		t.Fatalf("agreement: %d %s", resp.StatusCode, clipText(string(b), 300))
	}
	path := fmt.Sprintf("/api/v1/fits/%d/report.json", fid)
	// A fresh process (nothing cached) reads the stored analysis.
	e2 := newEnvDSN(t, dsn, func(c *Config) { c.Workers = -1 })
	resp, stored := e2.request("GET", path, key, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("report: %d %s", resp.StatusCode, clipText(string(stored), 300))
	}
	_, m := e2.request("GET", "/metrics", "", nil)
	if !regexp.MustCompile(`concord_report_agreements_total\{source="stored"\} 1\b`).Match(m) {
		t.Errorf("/metrics: %s", grepLines(string(m), "concord_report_agreements_total"))
	}
	// Another database, the same labels and fit, without agreement jobs:
	// the report computes the analysis.
	e3 := newEnv(t, func(c *Config) { c.AgreementJobLabels = -1 })
	pid3, key3 := e3.loadedProject("k1")
	resp, computed := e3.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", e3.doneFit(pid3, key3)), key3, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("report: %d", resp.StatusCode)
	}
	_, m = e3.request("GET", "/metrics", "", nil)
	if !regexp.MustCompile(`concord_report_agreements_total\{source="computed"\} 1\b`).Match(m) {
		t.Errorf("/metrics: %s", grepLines(string(m), "concord_report_agreements_total"))
	}
	agreementOf := func(b []byte) string {
		var doc struct {
			Agreement json.RawMessage `json:"agreement"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || len(doc.Agreement) < 100 {
			t.Fatalf("report: %v %s", err, clipText(string(b), 300))
		}
		return string(doc.Agreement)
	}
	if a, c := agreementOf(stored), agreementOf(computed); a != c {
		t.Errorf("the stored analysis' agreement section differs from the computed one:\n%s\nwant\n%s", clipText(a, 500), clipText(c, 500))
	}

	// New labels: the fit's labels are no longer the project's, and its
	// report analyses the fit's own.
	e2.call("POST", fmt.Sprintf("/api/v1/projects/%d/labels", pid), key, map[string]any{"labels": []map[string]any{{"item_id": "new-item", "rater_id": "new-rater", "label": "1"}}}, 201)
	e4 := newEnvDSN(t, dsn, func(c *Config) { c.Workers = -1 })
	resp, own := e4.request("GET", path, key, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("report: %d", resp.StatusCode)
	}
	_, m = e4.request("GET", "/metrics", "", nil)
	if !regexp.MustCompile(`concord_report_agreements_total\{source="fit"\} 1\b`).Match(m) {
		t.Errorf("/metrics: %s", grepLines(string(m), "concord_report_agreements_total"))
	}
	if !strings.Contains(string(own), `"raters":`) {
		t.Errorf("report of the fit's own labels: %s", clipText(string(own), 300))
	}
}

// TestReportAgreementOfProjectIsFits: the report's agreement analysis
// taken from the project's (the agreement routes', stored or cached, read
// back from its JSON document) is the analysis of the fit's own labels
// that reports made before, value for value, for every kind of scheme:
// the project's labels in the store's order and the fit's in the fit's
// order give the same document.
func TestReportAgreementOfProjectIsFits(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s := e.srv
	cases := []struct {
		name    string
		project func(string) (int64, string)
		spec    map[string]any
	}{
		{"ordinal", e.loadedProject, quickFit},
		{"binary with gold", e.binaryProject, quickClassFit},
		{"nominal", e.nominalProject, quickClassFit},
		{"bounded", func(name string) (int64, string) { return e.boundedProject(name, 5) }, map[string]any{"likelihood": "beta"}},
	}
	for _, tc := range cases {
		pid, key := tc.project(strings.ReplaceAll(tc.name, " ", "-"))
		f, err := e.store.FindFitByID(ctx, e.doneSpec(pid, key, tc.spec))
		if err != nil {
			t.Fatal(err)
		}
		cf, err := s.result(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		in := reportInput{Project: cf.project, Fit: f, Result: cf.res, Raw: cf.raw}
		ds := reports.FitFromResult(in.Result).Dataset(in.Project.Scheme)
		cur, err := e.store.Dataset(ctx, pid)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ds.Items { // as reportWith: the project's gold labels
			for _, c := range cur.Items {
				if c.ID == ds.Items[i].ID {
					ds.Items[i].Gold = c.Gold
				}
			}
		}
		for _, ro := range []reportOpts{
			{Bootstrap: 200, MaxWork: s.cfg.MaxBootstrapWork},
			{CI: raters.CINormal, CIGiven: true, Null: 0.4, MaxWork: s.cfg.MaxBootstrapWork},
		} {
			o := agreementOpts{boot: ro.Bootstrap, seed: 1, ci: ro.CI, null: ro.Null}
			if ro.CIGiven {
				o.boot = 0
			}
			proj, err := s.reportAgreement(ctx, in, ds, cur, ro)
			if err != nil || proj == nil {
				t.Fatalf("%s %+v: %v", tc.name, ro, err)
			}
			own, err := s.fitAgreement(ctx, in, ds, o, ro)
			if err != nil || own == nil {
				t.Fatalf("%s %+v: %v", tc.name, ro, err)
			}
			a, _ := json.Marshal(proj)
			b, _ := json.Marshal(own)
			if string(a) != string(b) || len(a) < 1000 {
				i := 0
				for i < min(len(a), len(b)) && a[i] == b[i] {
					i++
				}
				lo := max(i-300, 0)
				t.Errorf("%s %+v: the project's analysis differs from the fit's labels' at byte %d of %d:\n%s\nwant\n%s", tc.name, ro, i, len(a), clipText(string(a[lo:]), 800), clipText(string(b[lo:]), 800))
			}
		}
	}
}

// TestBrowserExportJob: on the fit page of a fit whose workbook is built
// by a job, the download link says "preparing" with the job's phase while
// no worker has built it, and downloads the workbook once a worker of the
// export queue has (the page asks again after Retry-After). It skips as
// TestBrowserDashboard does.
func TestBrowserExportJob(t *testing.T) {
	cr := newChrome(t)
	dsn := filepath.Join(t.TempDir(), "concord.db")
	e := newEnvDSN(t, dsn, func(c *Config) { c.ExportJobLabels = 1; c.Queues = []string{"fits"} })
	pid, key := e.loadedProject("k1-export")
	fid := e.doneFit(pid, key)
	cr.login(e.url+"/login", key, chromedp.WaitVisible(chromedp.ID("agreement-table")))
	// The page's downloads are recorded (their blobs' sizes) instead of
	// saved.
	err := chromedp.Do(cr.ctx, chromedp.Navigate(fmt.Sprintf("%s/fits/%d", e.url, fid)), chromedp.WaitVisible(chromedp.ID("dl-xlsx")))
	if err != nil {
		t.Fatal(err)
	}
	cr.eval(`window.__downloads = []; URL.createObjectURL = (b) => { window.__downloads.push(b.size); return "data:application/octet-stream,"; }; ""`)
	cr.eval(`document.querySelector("#dl-xlsx").click(), ""`)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(cr.eval(`document.querySelector("#dl-status").textContent`), "Preparing"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("status while queued: %q", cr.eval(`document.querySelector("#dl-status").textContent`))
		}
	}
	if s := cr.eval(`document.querySelector("#dl-xlsx").textContent`); !strings.Contains(s, "preparing") {
		t.Errorf("link while queued: %q", s)
	}
	newEnvDSN(t, dsn, func(c *Config) { c.Workers = 1; c.Queues = []string{"export"} })
	for deadline := time.Now().Add(90 * time.Second); cr.count(`window.__downloads.length`) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no download; status %q", cr.eval(`document.querySelector("#dl-status").textContent`))
		}
	}
	resp, want := e.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.xlsx", fid), key, nil)
	if n := cr.count(`window.__downloads[0]`); resp.StatusCode != 200 || n != len(want) {
		t.Errorf("downloaded %d bytes, the route answers %d with %d", n, resp.StatusCode, len(want))
	}
	if s := cr.eval(`document.querySelector("#dl-xlsx").textContent + "|" + document.querySelector("#dl-status").textContent`); s != "Workbook (XLSX)|" {
		t.Errorf("link and status after the download: %q", s)
	}
}

// failingResults is a store whose fit results fail to read with err (nil:
// they read).
type failingResults struct {
	annotations.Store
	err *atomic.Pointer[error]
}

func (f failingResults) FitResult(ctx context.Context, id int64) ([]byte, error) {
	if err := f.err.Load(); err != nil {
		return nil, *err
	}
	return f.Store.FitResult(ctx, id)
}

// TestExportJobFails: an export whose build fails on the data is answered
// with its error, kept; one that fails inside (internal) is answered once
// and the next request builds it again.
func TestExportJobFails(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "concord.db")
	e := newEnvDSN(t, dsn, func(c *Config) { c.ExportJobLabels = 1; c.Queues = []string{"fits"} })
	pid, key := e.loadedProject("k1")
	fid := e.doneFit(pid, key)
	var fail atomic.Pointer[error]
	bad := error(annotations.Errorf(annotations.EINVALID, "the stored result is unreadable"))
	fail.Store(&bad)
	newEnvWrapped(t, dsn, func(st annotations.Store) annotations.Store { return failingResults{st, &fail} },
		func(c *Config) { c.Workers = 1; c.Queues = []string{"export"} })
	path := fmt.Sprintf("/api/v1/fits/%d/report.xlsx", fid)
	resp, b := pollExport(e, "GET", path, key)
	checkError(t, path, resp, b, http.StatusBadRequest, annotations.EINVALID, "the stored result is unreadable")
	resp, b = e.request("GET", path, key, nil)
	checkError(t, path+" again", resp, b, http.StatusBadRequest, annotations.EINVALID, "the stored result is unreadable")

	inside := errors.New("the disk is on fire")
	fail.Store(&inside)
	path = fmt.Sprintf("/api/v1/fits/%d/report.json", fid)
	if resp, b = pollExport(e, "GET", path, key); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("internal failure: %d %s", resp.StatusCode, b)
	}
	fail.Store(nil)
	resp, b = e.request("GET", path, key, nil)
	if body := checkExportPending(t, path, resp, b); body.Joined {
		t.Errorf("after an internal failure: %s", b)
	}
	if resp, b = pollExport(e, "GET", path, key); resp.StatusCode != 200 || !strings.Contains(string(b), `"agreement"`) {
		t.Errorf("built again: %d %s", resp.StatusCode, clipText(string(b), 300))
	}
}

// blockedDataset is a store whose project datasets wait for their
// context's end: an export that reads one runs until it is cancelled.
type blockedDataset struct {
	annotations.Store
	entered, left chan struct{}
}

func (b blockedDataset) Dataset(ctx context.Context, project int64) (*annotations.Dataset, error) {
	b.entered <- struct{}{}
	<-ctx.Done()
	b.left <- struct{}{}
	return nil, context.Cause(ctx)
}

// TestExportJobCancelRunning: DELETE /fits/{id}/exports reaches an export
// that a worker is building: its work stops (the worker's context is
// cancelled at its next progress write) and its job ends cancelled.
func TestExportJobCancelRunning(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "concord.db")
	e := newEnvDSN(t, dsn, func(c *Config) { c.ExportJobLabels = 1; c.Queues = []string{"fits"} })
	pid, key := e.loadedProject("k1")
	fid := e.doneFit(pid, key)
	bd := blockedDataset{entered: make(chan struct{}, 1), left: make(chan struct{}, 1)}
	newEnvWrapped(t, dsn, func(st annotations.Store) annotations.Store { bd.Store = st; return bd },
		func(c *Config) { c.Workers = 1; c.Queues = []string{"export"} })
	path := fmt.Sprintf("/api/v1/fits/%d/report.xlsx", fid)
	resp, b := e.request("GET", path, key, nil)
	checkExportPending(t, path, resp, b)
	select {
	case <-bd.entered:
	case <-time.After(time.Minute):
		t.Fatal("the worker did not start the export")
	}
	resp, b = e.request("GET", path, key, nil)
	if body := checkExportPending(t, path, resp, b); body.Status != "running" || !strings.Contains(body.Phase, "building") || !body.Joined {
		t.Errorf("while it builds: %s", b)
	}
	if got := e.call("DELETE", fmt.Sprintf("/api/v1/fits/%d/exports", fid), key, nil, 200); got["cancelled"] != float64(1) {
		t.Errorf("DELETE exports: %v, want 1 cancelled", got)
	}
	select {
	case <-bd.left:
	case <-time.After(time.Minute):
		t.Fatal("the running export did not stop")
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		jobs, _, err := e.store.ListJobs(context.Background(), 20)
		if err != nil {
			t.Fatal(err)
		}
		state := ""
		for _, j := range jobs {
			if j.Kind == "export" {
				state = j.State
			}
		}
		if state == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the export job is %q a minute after the cancel", state)
		}
	}
}
