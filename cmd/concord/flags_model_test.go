package main

import (
	"encoding/json"
	"strings"
	"testing"

	"concord/analysis"
	"concord/server"
)

// TestFitHelpNamesTheOpenAPISettings: concord fit --help and the OpenAPI
// FitRequest schema name the same settings (JSON a_b is flag --a-b; the
// common part's text settings are the text flags), each model's group
// lists its settings, and --model NAME --help shows that model's group
// alone.
func TestFitHelpNamesTheOpenAPISettings(t *testing.T) {
	code, out, _ := runCmd(t, "fit", "--help")
	if code != 0 {
		t.Fatalf("fit --help: exit %d", code)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(server.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Components.Schemas["FitRequest"].Properties
	if len(props) == 0 {
		t.Fatal("no FitRequest properties")
	}
	for name := range props {
		flag := "-" + strings.ReplaceAll(name, "_", "-")
		if name == "text" {
			flag = "-weighting" // the featuriser's flags
		}
		if !strings.Contains(out, flag+" ") && !strings.Contains(out, flag+"\n") && !strings.Contains(out, flag+",") {
			t.Errorf("the OpenAPI setting %s has no flag %s in concord fit --help", name, flag)
		}
	}
	for _, m := range analysis.Models() {
		if !strings.Contains(out, "Settings of the "+m.Name+" model") {
			t.Errorf("fit --help has no group of the %s model", m.Name)
		}
	}
	_, conf, _ := runCmd(t, "fit", "--model", "confusion", "--help")
	if !strings.Contains(conf, "Settings of the confusion model") || strings.Contains(conf, "Settings of the ordinal model") ||
		!strings.Contains(conf, "--rater-model") || !strings.Contains(conf, "--samples [gibbs]\n    \tdraws kept per chain; from 1 to 1000000 (default 1000)") {
		t.Errorf("fit --model confusion --help:\n%s", conf)
	}
}

// TestSettingFlagsRefuse: a flag outside its setting's range, a setting of
// another model and a malformed value are refused with one message naming
// the setting.
func TestSettingFlagsRefuse(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--chains", "0"}, "--chains = 0: expected an integer from 1 to 64"},
		{[]string{"--burnin", "-2"}, "--burnin = -2: expected an integer from 0 to 1000000"},
		{[]string{"--flag", "1"}, "--flag-threshold = 1: expected a number from 1e-12 up to (not including) 1"},
		{[]string{"--model", "bounded", "--chains", "2"}, "chains is not a setting of the bounded model fitted by ep"},
		{[]string{"--model", "confusion", "--restarts", "2"}, "restarts is not a setting of the confusion model fitted by vb (leave it out): its settings are flag_threshold, rater_model, gold, hierarchy, communities, concentration, max_iter and spam_threshold"},
	} {
		args := append([]string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--scheme", "ordinal:1..5", "--out", "-"}, c.args...)
		code, _, errb := runCmd(t, args...)
		if code == 0 || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, code, errb, c.want)
		}
	}
}
