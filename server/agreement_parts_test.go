package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"concord/annotations"
)

// TestAgreementParts runs on SQLite and PostgreSQL: an API-only node
// (Workers -1) answers the agreement of a large project by storing the
// analysis and its plan job (202, the queue depth on /metrics), the same
// request again joins it (one job, told so), DELETE cancels a queued one;
// two worker processes sharing the database run its bootstrap as 6 part
// jobs and the combine, and every route then answers the document and
// tables of the analysis within a request, byte for byte.
func TestAgreementParts(t *testing.T) {
	forEachBackend(t, testAgreementParts)
}

func testAgreementParts(t *testing.T, dsn string) {
	const opts = "bootstrap=40&seed=5"
	paths := []string{"", "/matrix", "/pairs", "/items?limit=7", "/raters", "/items?format=csv&below=0.5"}
	want := syncAgreement(t, opts, paths)

	parts := func(c *Config) { c.AgreementJobLabels = 10; c.AgreementPartReplicates = 7 }
	api := newEnvDSN(t, dsn, parts, func(c *Config) { c.Workers = -1 })
	id, key := api.loadedProject("k1")
	base := fmt.Sprintf("/api/v1/projects/%d/agreement", id)
	var first agreementJobBody
	for i, joined := range []bool{false, true} {
		resp, b := api.request("GET", base+"?"+opts, key, nil)
		body := checkPending(t, base, resp, b)
		if body.Joined != joined || body.Status != "queued" || (i == 1 && body.AgreementID != first.AgreementID) ||
			(joined && !strings.Contains(body.Message, "joined")) {
			t.Errorf("request %d: %s", i+1, b)
		}
		first = body
	}
	_, m := api.request("GET", "/metrics", "", nil)
	if !strings.Contains(string(m), `concord_jobs{queue="agreement",state="available"} 1`) {
		t.Errorf("/metrics lacks the queued agreement job:\n%s", grepLines(string(m), "concord_jobs"))
	}
	// Another seed, cancelled while queued; asked again, a new analysis.
	resp, b := api.request("GET", base+"?bootstrap=40&seed=6", key, nil)
	other := checkPending(t, base, resp, b)
	if got := api.call("DELETE", base, key, nil, 200); got["cancelled"] != float64(2) {
		t.Errorf("DELETE: %v, want 2 cancelled", got)
	}
	ctx := context.Background()
	if a, err := api.store.FindAgreement(ctx, other.AgreementID); err != nil || a.Status != annotations.FitCancelled {
		t.Errorf("the cancelled analysis: %+v %v", a, err)
	}
	cancelled := first.AgreementID
	for i, joined := range []bool{false, true} {
		resp, b = api.request("GET", base+"?"+opts, key, nil)
		body := checkPending(t, base, resp, b)
		if body.AgreementID == cancelled || body.Joined != joined || (i == 1 && body.AgreementID != first.AgreementID) {
			t.Errorf("after the cancel, request %d: %s", i+1, b)
		}
		first = body
	}

	// Two worker processes.
	for _, name := range []string{"worker-a", "worker-b"} {
		newEnvDSN(t, dsn, parts, func(c *Config) { c.Workers = 1; c.WorkerName = name })
	}
	wantAgreement(api, base, key, opts, want)
	a, err := api.store.FindAgreement(ctx, first.AgreementID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != annotations.FitDone || a.Replicates != 40 || len(a.Parts) != 6 {
		t.Fatalf("the analysis: %+v", a)
	}
	by := map[string][]string{}
	for _, p := range a.Parts {
		if p.State != "done" || p.Hi <= p.Lo {
			t.Errorf("part %+v", p)
		}
		by[p.Worker] = append(by[p.Worker], fmt.Sprintf("%d..%d", p.Lo, p.Hi-1))
	}
	js, _ := json.Marshal(by)
	t.Logf("replicates by worker: %s", js)
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
