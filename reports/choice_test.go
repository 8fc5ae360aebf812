package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"concord/analysis"
	"concord/annotations"
)

// liveChoiceReport fits spec to the labels file (a live fit through
// analysis.Fit, the fit the CLI and the server make) and builds its report
// without the agreement analysis.
func liveChoiceReport(t *testing.T, labels, scheme string, spec analysis.FitSpec) *Report {
	t.Helper()
	s := annotations.MustParseScheme(scheme)
	ld, err := annotations.LoadFiles(filepath.Join("testdata", labels), annotations.LoadOptions{Scheme: &s})
	if err != nil {
		t.Fatal(err)
	}
	res, err := analysis.Fit(context.Background(), ld.Dataset, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(annotations.Project{Name: labels, Scheme: s}, res, nil, ld.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestModelChoice checks that the report carries every candidate of a
// fit that chose its model by the evidence, the chosen one marked and the
// reason, for the families that choose: the crowd consensus (rater
// models, on the 40 RTE pairs of testdata/snow_rte40.csv), the bounded
// model (likelihoods and dispersions, on the 20 valence headlines of
// testdata/snow_valence20.csv) and the ordinal model by EP (noise models,
// on sirt's k1 ratings, testdata/sirt_k1_labels.csv); and that a forced
// model has no choice.
func TestModelChoice(t *testing.T) {
	sch := compileSchema(t)
	for _, tc := range []struct {
		name, labels, scheme string
		spec                 analysis.FitSpec
		family               ChoiceFamily
		candidates           []string // names that must be among the candidates
		why                  string   // a phrase of the reason
	}{
		{"confusion auto", "snow_rte40.csv", "binary:0,1,pos=1", analysis.FitSpec{Model: analysis.ModelConfusion, Seed: 7},
			ChoiceRaterModel, []string{"one-coin", "communities", "spammer"}, "chosen by the evidence"},
		{"bounded auto", "snow_valence20.csv", "bounded:-100..100", analysis.FitSpec{Model: analysis.ModelBounded, Seed: 7},
			ChoiceBounded, []string{"beta/per-rater/identity", "normal/shared/identity"}, "leave-one-out"},
		{"confusion forced", "snow_rte40.csv", "binary:0,1,pos=1", analysis.FitSpec{Model: analysis.ModelConfusion, RaterModel: "one-coin", Seed: 7},
			"", nil, ""},
		{"ordinal ep auto", "sirt_k1_labels.csv", "ordinal:0..3", analysis.FitSpec{Engine: "ep", Seed: 7},
			ChoiceNoise, []string{"per-rater/identity", "shared-thresholds/identity", "shared/identity"}, "penalised log evidence"},
		{"ordinal ep forced", "sirt_k1_labels.csv", "ordinal:0..3", analysis.FitSpec{Engine: "ep", Noise: "shared", Seed: 7},
			"", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := liveChoiceReport(t, tc.labels, tc.scheme, tc.spec)
			mc := rep.ModelChoice
			if tc.family == "" {
				if mc != nil {
					t.Fatalf("a forced model has a model choice: %+v", mc)
				}
				return
			}
			if mc == nil {
				t.Fatal("no model choice in the report")
			}
			if mc.Family != tc.family {
				t.Errorf("family %q, want %q", mc.Family, tc.family)
			}
			if !strings.Contains(mc.Why, tc.why) {
				t.Errorf("why %q does not say %q", mc.Why, tc.why)
			}
			names := map[string]bool{}
			chosen := 0
			for _, c := range mc.Candidates {
				names[c.Name] = true
				if c.Chosen {
					chosen++
					if c.Name != mc.Chosen {
						t.Errorf("candidate %s is marked chosen, the choice names %s", c.Name, mc.Chosen)
					}
				}
				if c.Failed == "" && (!c.Score.Valid() || !c.Evidence.Valid() || (!c.HeldOut.Valid() && tc.family != ChoiceNoise)) {
					t.Errorf("candidate %s has no scores: %+v", c.Name, c)
				}
			}
			if chosen != 1 {
				t.Errorf("%d candidates chosen, want 1", chosen)
			}
			for _, n := range tc.candidates {
				if !names[n] {
					t.Errorf("candidate %s missing; have %v", n, names)
				}
			}
			// The chosen candidate has the best score among those that
			// could be chosen (no failure, no exclusion note).
			for _, c := range mc.Candidates {
				if c.Failed == "" && !strings.HasPrefix(c.Note, "not chosen") && !c.Chosen {
					for _, w := range mc.Candidates {
						if w.Chosen && c.Score > w.Score {
							t.Errorf("%s scores %v above the chosen %s's %v", c.Name, c.Score, w.Name, w.Score)
						}
					}
				}
			}
			var buf bytes.Buffer
			if testing.Verbose() {
				b, _ := json.MarshalIndent(mc, "", " ")
				t.Logf("%s", b)
			}
			if err := WriteJSON(&buf, rep); err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, buf.Bytes()); err != nil {
				t.Errorf("the report does not validate:\n%v", err)
			}
			checkChoiceWorkbook(t, rep)
			var back Report
			if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			if back.ModelChoice == nil || len(back.ModelChoice.Candidates) != len(mc.Candidates) || back.ModelChoice.Chosen != mc.Chosen {
				t.Errorf("model choice lost in JSON: %+v", back.ModelChoice)
			}
		})
	}
}

// checkChoiceWorkbook checks the workbook's Model choice table (Diagnostics
// sheet, under the parameters): a row per candidate in the report's order,
// the chosen one marked, the reason under it; and the Summary's line.
func checkChoiceWorkbook(t *testing.T, rep *Report) {
	t.Helper()
	mc := rep.ModelChoice
	b := openBook(t, rep, XLSXOptions{NoCharts: true})
	rows := b.rows(SheetDiagnostics)
	title := -1
	for i, r := range rows {
		if strings.HasPrefix(at(r, 0), "Model choice") {
			title = i
		}
	}
	if title < 0 || title+2+len(mc.Candidates) > len(rows) {
		t.Fatalf("Diagnostics: no Model choice table of %d candidates", len(mc.Candidates))
	}
	b.headers(SheetDiagnostics, rows[title+1], "Candidate", "Chosen", "Score", "Held-out", "Evidence", "Iterations", "Seconds", "Note")
	for i, c := range mc.Candidates {
		r := rows[title+2+i]
		if at(r, 0) != c.Name {
			t.Errorf("Model choice row %d: %q, want %q", i+1, at(r, 0), c.Name)
		}
		if (at(r, 1) == "CHOSEN") != c.Chosen {
			t.Errorf("Model choice row %s: chosen %q, want %v", c.Name, at(r, 1), c.Chosen)
		}
		b.number("Model choice score of "+c.Name, at(r, 2), float64(c.Score))
	}
	rest := strings.Join(flatten(rows[title+2+len(mc.Candidates):]), "\n")
	if !strings.Contains(rest, "Why: "+mc.Why) {
		t.Errorf("Diagnostics: the reason is not under the Model choice table:\n%s", rest)
	}
	if !strings.Contains(strings.Join(flatten(b.rows(SheetSummary)), "\n"), "Model chosen by the evidence") {
		t.Error("Summary: no line on the model choice")
	}
}
