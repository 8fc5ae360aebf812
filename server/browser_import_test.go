package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserImportPreview drives the import form in headless Chromium with
// a real Label Studio CSV export: choosing the file shows its first rows,
// offers its columns in the column fields and fills the label column with
// the one column whose values are the scheme's levels; the import then
// goes through with the columns named. It skips when Chromium is missing,
// unless CONCORD_REQUIRE_BROWSER=1 (CI).
func TestBrowserImportPreview(t *testing.T) {
	cr := newChrome(t)
	e := newEnv(t)
	_, key := e.project("ls-preview", "nominal:entailment,no entailment")
	file, err := filepath.Abs("../annotations/testdata/labelstudio_rte.csv")
	if err != nil {
		t.Fatal(err)
	}
	ctx := cr.ctx
	cr.login(e.url+"/", key,
		chromedp.WaitVisible(chromedp.ID("import-form")),
		chromedp.SetUploadFiles(chromedp.CSS(`#import-form input[name=file]`), []string{file}),
		chromedp.WaitVisible(chromedp.ID("import-preview")),
	)
	cr.shot("dashboard-import-preview.png")
	if n := cr.count(`document.querySelectorAll("#import-preview-table thead th").length`); n != 9 {
		t.Errorf("preview has %d columns, want the export's 9", n)
	}
	if n := cr.count(`document.querySelectorAll("#import-preview-table tbody tr").length`); n != 5 {
		t.Errorf("preview has %d rows, want 5", n)
	}
	if n := cr.count(`document.querySelectorAll("#import-cols option").length`); n != 9 {
		t.Errorf("column list has %d names", n)
	}
	if g := cr.eval(`document.getElementById("import-guess").textContent`); !strings.Contains(g, "label column looks like") || !strings.Contains(g, "entailment") {
		t.Errorf("guess: %q", g)
	}
	if v := cr.eval(`document.querySelector("#import-form input[name=label_col]").value`); v != "entailment" {
		t.Errorf("label column filled with %q, want entailment", v)
	}
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#import-form input[name=text_columns]`), "text,hypothesis"),
		chromedp.SetValue(chromedp.CSS(`#import-form input[name=rater_col]`), "annotator"),
		chromedp.Click(chromedp.CSS(`#import-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
	)
	if err != nil {
		t.Fatalf("importing: %v", err)
	}
	if body := cr.eval(`document.querySelector("p.flash").textContent`); !strings.Contains(body, "40 labels added") {
		t.Errorf("after the import: %.400s", body)
	}
}
