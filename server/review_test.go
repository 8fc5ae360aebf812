package server

import (
	"fmt"
	"html"
	"strings"
	"testing"

	"concord/reports"
)

// TestFitPageExplained checks what the fit page explains and what it
// puts first, for an ordinal, a classification and a robust fit: the
// review queue (the least probable labels even where none is flagged),
// the items' observed agreement in the consensus table, the headline
// numbers of the report (Krippendorff's alpha to quote; with gold labels
// the gold accuracy beside the majority vote's; the ROC AUC of a binary
// scheme), column tooltips from the glossary and the glossary itself.
func TestFitPageExplained(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name    string
		project func() (int64, string)
		spec    map[string]any
		table   string   // the consensus table
		want    []string // also on the page
	}{
		{"ordinal", func() (int64, string) { return e.loadedProject("essays-k1") }, nil, "ranking-table",
			[]string{"Krippendorff&#39;s alpha (ordinal metric)", gloss("severity"), gloss("variance"), gloss("mean_log_pred"), gloss("rank")}},
		{"classification", func() (int64, string) { return e.binaryProject("rte-class") },
			map[string]any{"engine": "gibbs", "model": "classification", "kernel": "identity", "chains": 2, "samples": 100, "burnin": 50, "seed": 3}, "consensus-table",
			[]string{"Krippendorff&#39;s alpha (nominal metric)", `id="gold-accuracy"`, `id="majority-gold"`, `class="auc"`, "ROC AUC, model vs gold", gloss("precision")}},
		{"robust", func() (int64, string) { return e.binaryProject("rte-robust") },
			map[string]any{"model": "robust", "kernel": "identity", "seed": 5}, "consensus-table",
			[]string{`id="gold-accuracy"`, `id="majority-gold"`, `class="auc"`, gloss("error_rate"), gloss("p_error")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, key := tc.project()
			var fid int64
			if tc.spec == nil {
				fid = e.doneFit(id, key)
			} else {
				fid = e.doneSpec(id, key, tc.spec)
			}
			br := newBrowser(t, e)
			br.login(key)
			resp, page := br.get(fmt.Sprintf("/fits/%d", fid))
			if resp.StatusCode != 200 {
				t.Fatalf("fit page: %d", resp.StatusCode)
			}
			for _, want := range append([]string{`id="review-table"`, "Review queue", `id="headline"`, `id="alpha"`, `id="glossary"`,
				gloss("majority_share"), gloss("label_prob"), `id="gloss-krippendorff_alpha"`}, tc.want...) {
				if !strings.Contains(page, want) {
					t.Errorf("fit page lacks %q", clipText(want, 80))
				}
			}
			review := between(page, `id="review-table"`, "</table>")
			if n := strings.Count(review, "<tr"); n < min(reports.LowestLabels, 10)+1 {
				t.Errorf("review queue: %d rows", n-1)
			}
			cons := between(page, `id="`+tc.table+`"`, "</table>")
			head := between(cons, "<thead>", "</thead>")
			if !strings.Contains(head, ">Majority share</th>") || !strings.Contains(head, ">Raters</th>") {
				t.Errorf("%s: no majority share and raters columns: %s", tc.table, head)
			}
			if !strings.Contains(cons, "%</td>") {
				t.Errorf("%s: no majority share in the rows", tc.table)
			}
		})
	}
}

// gloss is a glossary entry as the page escapes it in an attribute.
func gloss(key string) string {
	g := reports.Gloss(key)
	if g == "" {
		panic("no gloss " + key)
	}
	return html.EscapeString(g)
}
