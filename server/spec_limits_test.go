package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Issue 36 items 6, 9 and 10, retried through the API: every list and
// string of a fit request is bounded and checked at submission, a refusal
// does not echo a huge value, settings outside their declared range are
// refused naming the field (and not suggesting a 0 the API refuses), and
// Gibbs work past the budget is refused naming the budget and the
// projected time. The server answers every one and is alive after.
func TestFitSpecLimits(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Workers = -1; c.MaxFitWork = time.Hour })
	id, key := e.loadedProject("k1") // ordinal:0..3, 4 levels
	path := fmt.Sprintf("/api/v1/projects/%d/fits", id)
	huge := strings.Repeat("rbf+", 1_200_000) // 4.8 MB
	many := make([]float64, 1_000_000)
	names := make([]string, 500_000)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
	}
	for _, tc := range []struct {
		name     string
		body     any
		fragment string
	}{
		{"thresholds of the wrong length", map[string]any{"engine": "ep", "thresholds": []float64{-1, 1}}, `field "thresholds": 2 values; the scheme ordinal:0..3 has 4 levels, so expected 3`},
		{"a million thresholds", map[string]any{"engine": "ep", "thresholds": many}, `field "thresholds": 1000000 values; the scheme ordinal:0..3 has 4 levels`},
		{"500000 categorical names", map[string]any{"categorical": names}, "categorical: 500000 columns named; at most 200"},
		{"a 4.8 MB kernel", map[string]any{"kernel": huge}, "kernel: a specification of 4800000 bytes; at most 4000"},
		{"a 4.8 MB gamma", map[string]any{"model": "auc", "gamma": huge}, `field "gamma" = "rbf+rbf+`},
		{"gamma 0 is a number", map[string]any{"model": "auc", "gamma": 0}, `field "gamma" = 0: expected a number from 0.001 to 10000`},
		{"v 0", map[string]any{"v": 0}, `field "v" = 0: expected a number from 1e-06 to 1e+06; leave it out for the default`},
		{"sigma_b 1e308", map[string]any{"sigma_b": 1e308}, `field "sigma_b" = 1e+308: expected a number from 0.001 to 1000`},
		{"sigma 1e-320", map[string]any{"engine": "ep", "sigma": 1e-320}, `field "sigma" = 1e-320: expected a number from 0.001 to 1000; leave it out for learnt`},
		{"concentration 1e-320", map[string]any{"model": "confusion", "concentration": 1e-320}, `field "concentration" = 1e-320: expected a number from 0.001 to 10000`},
		{"issue 36 item 9: confusion gibbs 64 x 1e6 x 1e6", map[string]any{"model": "confusion", "engine": "gibbs", "chains": 64, "samples": 1000000, "burnin": 1000000},
			"over the budget of 1h0m0s (the server's, concord serve --max-fit-work): lower chains, samples, burnin or thin"},
		{"ordinal gibbs 64 x 1e6", map[string]any{"engine": "gibbs", "chains": 64, "samples": 1000000}, "of one core (64 chains x (1000 burn-in + 1000000 samples x thin 1)"},
	} {
		resp, b := e.request("POST", path, key, tc.body)
		checkError(t, tc.name, resp, b, http.StatusBadRequest, "invalid", tc.fragment)
		if len(b) > 2000 {
			t.Errorf("%s: a %d-byte answer; a refusal must not echo the request", tc.name, len(b))
		}
	}
	// Issue 36 item 2 through the API: it said 202 and the fit ended
	// "internal error" (a panic in gonum's Incbet).
	bid, bkey := e.project("sliders", "bounded:0..1")
	resp, b := e.request("POST", fmt.Sprintf("/api/v1/projects/%d/fits", bid), bkey, map[string]any{"dispersion": 1e-320})
	checkError(t, "dispersion 1e-320", resp, b, http.StatusBadRequest, "invalid", `field "dispersion" = 1e-320: expected a number from 0.001 to 10000; leave it out for learnt`)
	// The defaults are within the budget, and the server is alive.
	e.startFit(id, key, map[string]any{})
	e.call("GET", "/healthz", "", nil, http.StatusOK)
}
