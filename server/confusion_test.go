package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestConfusionFitPage fits the confusion model through the API on the
// RTE subset and gets its per-rater results: report.json's confusion
// matrices, accuracy and spam scores, the workbook's Confusion matrices
// sheet, and the dashboard's raters table (accuracy, spam score,
// spammers marked) and each rater's model confusion matrix.
func TestConfusionFitPage(t *testing.T) {
	e, id, key := binaryEnv(t, "rte-confusion")
	fid := e.doneSpec(id, key, map[string]any{"model": "confusion", "seed": 5})
	base := fmt.Sprintf("/api/v1/fits/%d", fid)

	rep := e.call("GET", base+"/report.json", key, nil, 200)
	spammers := 0
	for _, r := range rep["raters"].([]any) {
		m := r.(map[string]any)
		if cp, _ := m["confusion_probs"].([]any); len(cp) != 2 || m["accuracy"] == nil || m["spam_score"] == nil {
			t.Errorf("report.json: rater %v: confusion %v, accuracy %v, spam score %v", m["id"], m["confusion_probs"], m["accuracy"], m["spam_score"])
		}
		if m["spammer"] == true {
			spammers++
		}
	}

	book := e.fitWorkbook(base, key)
	if got := strings.Join(book.GetSheetList(), ","); !strings.Contains(got, "Classes,Confusion matrices,") {
		t.Errorf("report.xlsx: sheets %s", got)
	}
	if rows, err := book.GetRows("Raters"); err != nil || !strings.Contains(strings.Join(rows[0], ","), "Accuracy,Accuracy 2.5%,Accuracy 97.5%,Spam score,Spammer") {
		t.Errorf("report.xlsx: Raters header %v (%v)", rows[0], err)
	}

	br := newBrowser(t, e)
	br.login(key)
	page := br.fitPage(fid, `id="accuracy-col"`, `id="spam-col"`, `id="confusion-line"`, `class="confusion-probs"`)
	if strings.Contains(page, `id="precision-chart"`) {
		t.Error("dashboard fit page: a precision chart for a confusion fit")
	}
	table := between(page, `id="raters-table"`, "</table>")
	if n := strings.Count(table, "<tr"); n != 18 {
		t.Errorf("dashboard: the raters table has %d rows, want 17 and the header", n)
	}
	if n := strings.Count(table, `class="flagged spammer"`); n != spammers {
		t.Errorf("dashboard: %d spammers marked, report.json has %d", n, spammers)
	}
	if n := strings.Count(between(page, `id="confusion"`, "</section>"), `<details class="confusion-probs"`); n != 17 {
		t.Errorf("dashboard: %d model confusion matrices, want 17", n)
	}
}
