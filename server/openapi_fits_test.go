package server

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

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
