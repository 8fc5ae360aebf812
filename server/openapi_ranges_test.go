package server

import (
	"encoding/json"
	"os"
	"testing"

	"concord/analysis"
)

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
