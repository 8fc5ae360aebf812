package server

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"concord/analysis"

	"github.com/getkin/kin-openapi/openapi3"
)

// apiRoutes returns the API's routes ("METHOD /path/{param}"): everything
// under /api/v1 plus the health and metrics endpoints; the dashboard's
// pages are not part of the API.
func apiRoutes(s *Server) map[string]bool {
	param := regexp.MustCompile(`[:*]([A-Za-z_]+)`)
	out := map[string]bool{}
	for _, r := range s.engine.Routes() {
		if !strings.HasPrefix(r.Path, "/api/") && r.Path != "/healthz" && r.Path != "/readyz" && r.Path != "/metrics" {
			continue
		}
		out[r.Method+" "+param.ReplaceAllString(r.Path, "{$1}")] = true
	}
	return out
}

type openAPIShape struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas   map[string]json.RawMessage `json:"schemas"`
		Responses map[string]json.RawMessage `json:"responses"`
	} `json:"components"`
}

type openAPIOp struct {
	Summary    string                     `json:"summary"`
	Responses  map[string]json.RawMessage `json:"responses"`
	Parameters []struct {
		Name     string `json:"name"`
		In       string `json:"in"`
		Required bool   `json:"required"`
	} `json:"parameters"`
}

// TestOpenAPIMatchesRoutes checks that every registered API route is in the
// OpenAPI document and every operation of the document is a route, that
// each operation declares its path parameters and responses, and that
// every reference resolves.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := newEnv(t)
	var doc openAPIShape
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	pathParam := regexp.MustCompile(`\{([A-Za-z_]+)\}`)
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			key := strings.ToUpper(method) + " " + path
			documented[key] = true
			var op openAPIOp
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			if op.Summary == "" || len(op.Responses) == 0 {
				t.Errorf("%s: no summary or responses", key)
			}
			declared := map[string]bool{}
			for _, p := range op.Parameters {
				if p.In == "path" {
					declared[p.Name] = p.Required
				}
			}
			for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
				if !declared[m[1]] {
					t.Errorf("%s: path parameter %q not declared as required", key, m[1])
				}
			}
		}
	}
	routes := apiRoutes(e.srv)
	var missing, extra []string
	for r := range routes {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !routes[d] {
			extra = append(extra, d)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes missing from openapi.json: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("openapi.json operations with no route: %v", extra)
	}
	if len(routes) < 25 {
		t.Errorf("only %d API routes found", len(routes))
	}
	// Every $ref resolves.
	refs := regexp.MustCompile(`"\$ref":\s*"#/components/(schemas|responses)/([^"]+)"`)
	for _, m := range refs.FindAllStringSubmatch(string(openAPIDocument), -1) {
		var ok bool
		if m[1] == "schemas" {
			_, ok = doc.Components.Schemas[m[2]]
		} else {
			_, ok = doc.Components.Responses[m[2]]
		}
		if !ok {
			t.Errorf("unresolved reference #/components/%s/%s", m[1], m[2])
		}
	}
	// The served document is this one.
	resp, b := e.request("GET", "/api/v1/openapi.json", "", nil)
	if resp.StatusCode != 200 || string(b) != string(openAPIDocument) {
		t.Errorf("served document differs (status %d)", resp.StatusCode)
	}
}

var updateOpenAPI = flag.Bool("update-openapi", false, "rewrite the FitRequest schema of openapi.json from the declared settings")

// TestOpenAPIFitRequest: the FitRequest schema of the served OpenAPI
// document is the one generated from the declared settings (with
// -update-openapi the test writes it into openapi.json first).
func TestOpenAPIFitRequest(t *testing.T) {
	gen, err := json.Marshal(fitRequestSchema())
	if err != nil {
		t.Fatal(err)
	}
	if *updateOpenAPI {
		b, err := os.ReadFile("openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		const head = "\n   \"FitRequest\": {"
		i := bytes.Index(b, []byte(head))
		if i < 0 {
			t.Fatal("no FitRequest in openapi.json")
		}
		end := bytes.Index(b[i+len(head):], []byte("\n   }"))
		var ind bytes.Buffer
		if err := json.Indent(&ind, gen, "   ", " "); err != nil {
			t.Fatal(err)
		}
		out := append(append(append([]byte{}, b[:i]...), "\n   \"FitRequest\": "+ind.String()...), b[i+len(head)+end+len("\n   }"):]...)
		if err := os.WriteFile("openapi.json", out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skip("openapi.json rewritten; the served document is embedded at build time: run the test again")
	}
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	var served, want any
	if err := json.Unmarshal(doc.Components.Schemas["FitRequest"], &served); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(gen, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(served, want) {
		t.Errorf("the served FitRequest schema differs from the declared settings (go test ./server -run TestOpenAPIFitRequest -update-openapi rewrites it):\nserved %s\n  want %s", clipText(string(doc.Components.Schemas["FitRequest"]), 2000), clipText(string(gen), 2000))
	}
	// The document names the same settings as the command line's help.
	props := served.(map[string]any)["properties"].(map[string]any)
	for name := range props {
		if strings.ContainsAny(name, "- ") {
			t.Errorf("property %q is not a JSON name", name)
		}
	}
}

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
	"POST /api/v1/fits/{id}/report.json":          "buildReport",
	"POST /api/v1/fits/{id}/report.xlsx":          "buildReportWorkbook",
	"DELETE /api/v1/fits/{id}/exports":            "cancelExports",
	"GET /api/v1/fits/{id}/tables/{table}":        "getReportTable",
	"GET /api/v1/fits/{id}/plots/{plot}":          "getReportPlot",
	"POST /api/v1/fits/{id}/predictions":          "predictItems",
	"GET /api/v1/jobs":                            "listJobs",
}

// The OpenAPI schema of a fit request states the declared ranges of
// analysis.Settings (the one table the API checks), so that a client sees
// the limits it will be held to.
func TestOpenAPIFitRanges(t *testing.T) {
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Minimum          *float64 `json:"minimum"`
					Maximum          *float64 `json:"maximum"`
					ExclusiveMaximum bool     `json:"exclusiveMaximum"`
					OneOf            []struct {
						Minimum *float64 `json:"minimum"`
						Maximum *float64 `json:"maximum"`
					} `json:"oneOf"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Components.Schemas["FitRequest"].Properties
	for _, st := range analysis.Settings() {
		p, ok := props[st.Field]
		if !ok {
			t.Errorf("%s: not in the FitRequest schema", st.Field)
			continue
		}
		lo, hi := p.Minimum, p.Maximum
		if st.Field == "gamma" && len(p.OneOf) > 0 {
			lo, hi = p.OneOf[0].Minimum, p.OneOf[0].Maximum
		} else if p.ExclusiveMaximum != st.MaxOpen {
			t.Errorf("%s: exclusiveMaximum %v, declared %v", st.Field, p.ExclusiveMaximum, st.MaxOpen)
		}
		if lo == nil || hi == nil || *lo != st.Min || *hi != st.Max {
			t.Errorf("%s: the schema says %v to %v, the declared range is %s", st.Field, deref(lo), deref(hi), st.Range())
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}
