package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"concord/analysis"
)

// sweepsTotal reads concord_fit_sweeps_total from the test server's
// /metrics.
func (e *testEnv) sweepsTotal() float64 {
	e.t.Helper()
	_, b := e.request("GET", "/metrics", "", nil)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "concord_fit_sweeps_total "); ok {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				e.t.Fatalf("metrics: %q: %v", line, err)
			}
			return x
		}
	}
	e.t.Fatalf("metrics lack concord_fit_sweeps_total")
	return 0
}

// TestSweepsMetric: concord_fit_sweeps_total counts the sweeps a Gibbs fit
// ran, with the chain lengths of the kernel the data chose (the RTE items'
// texts: 500 + 1,500 per chain, where the settings without a kernel say
// 1,000 + 2,000), the sweeps of a fit whose settings fix them, and none for
// an EP fit (the ordinal default), whose settings carry the Gibbs chain
// lengths all the same.
func TestSweepsMetric(t *testing.T) {
	e := newEnv(t)
	// The RTE subset and one item more, with texts and no label: the
	// classification model's default kernel is then the text kernel.
	bin, binKey := e.project("rte", "binary:0,1,pos=1")
	items := readTestdata(t, "rte_40_items.csv") + "unlabelled,,A cat sat on the mat.,A cat sat.\n"
	resp, b := e.upload(fmt.Sprintf("/api/v1/projects/%d/imports", bin), binKey,
		map[string][2]string{"file": {"rte_40.csv", readTestdata(t, "rte_40.csv")}, "items": {"items.csv", items}},
		map[string]string{"text_columns": "text,hypothesis"})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("import: status %d: %s", resp.StatusCode, b)
	}
	if got := e.sweepsTotal(); got != 0 {
		t.Fatalf("sweeps before any fit: %v", got)
	}
	id := e.doneSpec(bin, binKey, map[string]any{"model": "classification", "engine": "gibbs", "chains": 1, "seed": 5})
	var res struct {
		Model struct {
			Kernel                        string `json:"kernel"`
			Chains, Samples, Burnin, Thin int
		} `json:"model"`
	}
	_, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/result", id), binKey, nil)
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	m := res.Model
	if m.Kernel != "text" || m.Chains != 1 || m.Samples != 1500 || m.Burnin != 500 || m.Thin != 1 {
		t.Fatalf("fit settings %+v: want the text kernel's defaults, 1 chain of 500 + 1,500", m)
	}
	if got := e.sweepsTotal(); got != 2000 {
		t.Errorf("sweeps after the text-kernel fit: %v, want 2000", got)
	}

	ord, ordKey := e.loadedProject("ordinal")
	e.doneSpec(ord, ordKey, map[string]any{"seed": 1})
	if got := e.sweepsTotal(); got != 2000 {
		t.Errorf("sweeps after an ordinal EP fit: %v, want 2000 (no sweep)", got)
	}
	e.doneSpec(ord, ordKey, map[string]any{"engine": "gibbs", "chains": 2, "samples": 200, "burnin": 100, "thin": 2, "seed": 7})
	if got := e.sweepsTotal(); math.Abs(got-(2000+2*(100+200*2))) > 1e-6 {
		t.Errorf("sweeps after a fixed-length Gibbs fit: %v, want 3000", got)
	}
}

// TestGibbsSweeps: the sweeps a fit's stored settings fix before it runs:
// none for EP, Laplace and variational Bayes fits (whose settings, filled
// in with defaults, carry the Gibbs chain lengths all the same: an ordinal
// fit 4 x 3,000) and none known while the chain lengths wait for the
// kernel that the data choose.
func TestGibbsSweeps(t *testing.T) {
	for _, c := range []struct {
		spec analysis.FitSpec
		want float64
	}{
		{analysis.FitSpec{Model: "ordinal"}, 0},
		{analysis.FitSpec{Model: "bounded"}, 0},
		{analysis.FitSpec{Model: "confusion"}, 0},
		{analysis.FitSpec{Model: "classification", Engine: "vb"}, 0},
		{analysis.FitSpec{Model: "classification"}, 0},
		{analysis.FitSpec{Model: "classification", Kernel: "text"}, 4 * (500 + 1500)},
		{analysis.FitSpec{Model: "classification", Kernel: "identity"}, 4 * (1000 + 2000)},
		{analysis.FitSpec{Model: "ordinal", Engine: "gibbs", Chains: 2, Samples: 10, Burnin: -1, Thin: 3}, 2 * 30},
	} {
		if got := gibbsSweeps(c.spec.WithDefaultsExceptKernel()); got != c.want {
			t.Errorf("%+v: %v sweeps, want %v", c.spec, got, c.want)
		}
	}
}
