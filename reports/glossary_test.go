package reports

import (
	"strings"
	"testing"
)

// TestGlossary checks the explanations: unique keys, every entry with a
// meaning and a reading, and the Glossary sheet listing them all; the
// Agreement sheet explains each coefficient and marks the one to quote,
// and no two coefficients share a label (Krippendorff's alpha with the
// ordinal metric and with irrCAC's ordinal weights are told apart).
func TestGlossary(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range Glossary() {
		if seen[g.Key] || g.Term == "" || g.Meaning == "" || g.Reading == "" || g.Where == "" {
			t.Errorf("glossary entry %+v: duplicate or incomplete", g)
		}
		seen[g.Key] = true
	}
	for _, k := range []string{"severity", "variance", "mean_log_pred", "rank", "dispersion", "error_rate", "krippendorff_alpha", "fleiss_kappa", "gwet_ac1", "icc", "majority_share", "item_agreement"} {
		if Gloss(k) == "" {
			t.Errorf("no gloss of %s", k)
		}
	}
	if Gloss("no-such-number") != "" {
		t.Error("a gloss of an unknown key")
	}
	for _, tc := range []struct {
		c     reportCase
		quote string // the label of the coefficient to quote
	}{
		{ordinalCase(t), "Krippendorff's alpha (ordinal metric)"},
		{nominalCase(t), "Krippendorff's alpha (nominal metric)"},
		{boundedCase(t), "Krippendorff's alpha (interval metric)"},
	} {
		t.Run(tc.c.name, func(t *testing.T) {
			rep := tc.c.rep
			labels := map[string]bool{}
			for _, c := range rep.Agreement.Coefficients {
				if labels[c.Label] {
					t.Errorf("two coefficients labelled %q", c.Label)
				}
				labels[c.Label] = true
			}
			if rep.Summary.Alpha == nil || rep.Summary.Alpha.Label != tc.quote {
				t.Errorf("summary alpha %+v, want %s", rep.Summary.Alpha, tc.quote)
			}
			f := openBook(t, rep, XLSXOptions{NoCharts: true}).f
			rows, err := f.GetRows(SheetGlossary)
			if err != nil {
				t.Fatal(err)
			}
			terms := map[string]bool{}
			for _, r := range rows {
				if len(r) > 0 {
					terms[r[0]] = true
				}
			}
			for _, g := range Glossary() {
				if !terms[g.Term] {
					t.Errorf("Glossary sheet lacks %q", g.Term)
				}
			}
			if !strings.Contains(strings.Join(rows[len(rows)-2], " "), tc.quote[:len("Krippendorff's alpha")]) {
				t.Errorf("Glossary sheet does not name the coefficient to quote: %q", rows[len(rows)-2])
			}
			ag, err := f.GetRows(SheetAgreement)
			if err != nil {
				t.Fatal(err)
			}
			quoted := 0
			for _, r := range ag[1 : len(rep.Agreement.Coefficients)+1] {
				if len(r) < 12 || r[11] == "" {
					t.Errorf("Agreement row %q has no explanation", r[0])
					continue
				}
				if r[10] != "" {
					quoted++
					if r[0] != tc.quote {
						t.Errorf("Agreement: %q marked to quote, want %q", r[0], tc.quote)
					}
				}
			}
			if quoted != 1 {
				t.Errorf("Agreement: %d coefficients marked to quote", quoted)
			}
			if tc.c.name == "ordinal" {
				w := "Krippendorff's alpha (irrCAC ordinal weights, not the ordinal metric)"
				if !labels[w] {
					t.Errorf("no coefficient %q", w)
				}
			}
		})
	}
}
