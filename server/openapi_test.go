package server

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"
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
