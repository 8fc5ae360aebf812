package server

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIValid loads the document that concord serve serves with
// kin-openapi and validates it as the version it declares (a 3.0 document
// may not use 3.1's type arrays or numeric exclusive bounds), and checks
// that every operation has an operationId, unique and in the form
// lowerCamelCase, so that generated clients get stable method names.
func TestOpenAPIValid(t *testing.T) {
	e := newEnv(t)
	resp, served := e.request("GET", "/api/v1/openapi.json", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /api/v1/openapi.json: status %d", resp.StatusCode)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(served)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if !doc.IsOpenAPI30() {
		t.Errorf("openapi %q: expected a 3.0 document", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Errorf("the document is not a valid OpenAPI %s document: %v", doc.OpenAPI, err)
	}
	ids := map[string]string{}
	form := regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)
	var missing []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			switch id := op.OperationID; {
			case id == "":
				missing = append(missing, key)
			case !form.MatchString(id):
				t.Errorf("%s: operationId %q is not lowerCamelCase", key, id)
			case ids[id] != "":
				t.Errorf("%s: operationId %q is also that of %s", key, id, ids[id])
			default:
				ids[id] = key
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d operations without an operationId:\n%s", len(missing), strings.Join(missing, "\n"))
	}
	// Clients generated from the document name their methods after the
	// operationIds: once published, an operation keeps its id.
	for op, want := range publishedOperationIDs {
		method, path, _ := strings.Cut(op, " ")
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("%s (operationId %s) is no longer in the document", op, want)
			continue
		}
		if got := item.GetOperation(method).OperationID; got != want {
			t.Errorf("%s: operationId %q, published as %q (clients call it by that name)", op, got, want)
		}
	}
}

// publishedOperationIDs are the operationIds the document has published.
// New operations add theirs here.
var publishedOperationIDs = map[string]string{
	"GET /healthz":                                "getHealth",
	"GET /readyz":                                 "getReadiness",
	"GET /metrics":                                "getMetrics",
	"GET /api/v1/openapi.json":                    "getOpenAPIDocument",
	"GET /api/v1/me":                              "getMe",
	"POST /api/v1/projects":                       "createProject",
	"GET /api/v1/projects":                        "listProjects",
	"GET /api/v1/projects/{id}":                   "getProject",
	"DELETE /api/v1/projects/{id}":                "deleteProject",
	"GET /api/v1/projects/{id}/items":             "listItems",
	"POST /api/v1/projects/{id}/items":            "putItems",
	"GET /api/v1/projects/{id}/raters":            "listRaters",
	"GET /api/v1/projects/{id}/labels":            "listLabels",
	"POST /api/v1/projects/{id}/labels":           "addLabels",
	"DELETE /api/v1/projects/{id}/labels":         "deleteLabels",
	"POST /api/v1/projects/{id}/imports":          "importLabels",
	"GET /api/v1/projects/{id}/agreement":         "getAgreement",
	"GET /api/v1/projects/{id}/agreement/{table}": "getAgreementTable",
	"GET /api/v1/projects/{id}/keys":              "listAPIKeys",
	"POST /api/v1/projects/{id}/keys":             "createAPIKey",
	"DELETE /api/v1/projects/{id}/keys/{key}":     "revokeAPIKey",
	"GET /api/v1/projects/{id}/fits":              "listFits",
	"POST /api/v1/projects/{id}/fits":             "startFit",
	"GET /api/v1/fits/{id}":                       "getFit",
	"DELETE /api/v1/fits/{id}":                    "deleteFit",
	"POST /api/v1/fits/{id}/cancel":               "cancelFit",
	"GET /api/v1/fits/{id}/result":                "getFitResult",
	"GET /api/v1/fits/{id}/report.json":           "getReport",
	"GET /api/v1/fits/{id}/report.xlsx":           "getReportWorkbook",
	"GET /api/v1/fits/{id}/tables/{table}":        "getReportTable",
	"GET /api/v1/fits/{id}/plots/{plot}":          "getReportPlot",
	"POST /api/v1/fits/{id}/predictions":          "predictItems",
	"GET /api/v1/jobs":                            "listJobs",
}
