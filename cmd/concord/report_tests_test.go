package main

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestReportCommandTests: concord report --ci normal --null 0.5 puts the
// agreement tests of concord agreement --ci normal --null 0.5 (z and
// p-value against 0 and against 0.5) into the report's JSON and its
// workbook's Agreement sheet, whose "vs 0.5" columns are there only with
// --null; bad values name the flag.
func TestReportCommandTests(t *testing.T) {
	fit := fitForReport(t)
	ctx := context.Background()
	where := []string{"--labels", "testdata/agreement_sirt_k1.csv", "--where", "criterion=k1"}
	e, out, errb := testEnv()
	args := append(append([]string{"agreement", "--scheme", "ordinal:0..3"}, where...), "--bootstrap", "0", "--ci", "normal", "--null", "0.5", "--only", "coefficients", "--json")
	if code := run(ctx, e, args); code != 0 {
		t.Fatalf("agreement: exit %d: %s", code, errb)
	}
	var agr struct {
		Fleiss struct {
			Z     float64 `json:"z"`
			P     float64 `json:"p_value"`
			ZNull float64 `json:"z_null"`
			PNull float64 `json:"p_value_null"`
		} `json:"fleiss_kappa"`
	}
	if err := json.Unmarshal(out.Bytes(), &agr); err != nil || agr.Fleiss.PNull == 0 {
		t.Fatalf("agreement document: %v, fleiss_kappa %+v", err, agr.Fleiss)
	}
	want := []float64{agr.Fleiss.Z, agr.Fleiss.P, agr.Fleiss.ZNull, agr.Fleiss.PNull}
	near := func(what string, got []float64) {
		t.Helper()
		for i := range want {
			if !(math.Abs(got[i]-want[i]) <= 1e-12*math.Max(1, math.Abs(want[i]))) {
				t.Errorf("%s: z, p, z vs 0.5, p vs 0.5 = %v, concord agreement %v", what, got, want)
				return
			}
		}
	}

	dir := t.TempDir()
	rep := append(append([]string{"report", "--fit", fit}, where...), "--ci", "normal", "--null", "0.5")
	e, out, errb = testEnv()
	if code := run(ctx, e, append(append([]string{}, rep...), "--format", "json", "--out", "-")); code != 0 {
		t.Fatalf("report json: exit %d: %s", code, errb)
	}
	var doc struct {
		Agreement struct {
			CI           string  `json:"ci"`
			Null         float64 `json:"null"`
			Coefficients []struct {
				Key     string  `json:"key"`
				Variant string  `json:"variant"`
				Z       float64 `json:"z"`
				P       float64 `json:"p_value"`
				ZNull   float64 `json:"z_null"`
				PNull   float64 `json:"p_value_null"`
			} `json:"coefficients"`
		} `json:"agreement"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Agreement.CI != "normal" || doc.Agreement.Null != 0.5 {
		t.Errorf("report json: ci %q, null %v", doc.Agreement.CI, doc.Agreement.Null)
	}
	found := false
	for _, c := range doc.Agreement.Coefficients {
		if c.Key == "fleiss_kappa" && c.Variant == "" {
			found = true
			near("report json", []float64{c.Z, c.P, c.ZNull, c.PNull})
		}
	}
	if !found {
		t.Error("report json: no fleiss_kappa")
	}

	f, _ := reportBook(t, "report xlsx", filepath.Join(dir, "k1.xlsx"), rep...)
	rows, err := f.GetRows("Agreement")
	if err != nil || len(rows) < 2 {
		t.Fatalf("Agreement sheet: %v, %d rows", err, len(rows))
	}
	col := map[string]int{}
	for j, h := range rows[0] {
		col[h] = j
	}
	for _, h := range []string{"Key", "Variant", "z", "p-value", "z (vs 0.5)", "p-value (vs 0.5)"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("Agreement sheet: no column %q in %q", h, rows[0])
		}
	}
	found = false
	for i, r := range rows {
		if i == 0 || len(r) <= col["p-value (vs 0.5)"] || r[col["Key"]] != "fleiss_kappa" || r[col["Variant"]] != "" {
			continue
		}
		found = true
		// the cells' values, not their display rounded to the sheet's
		// number format
		var got []float64
		for _, h := range []string{"z", "p-value", "z (vs 0.5)", "p-value (vs 0.5)"} {
			cell, _ := excelize.CoordinatesToCellName(col[h]+1, i+1)
			s, _ := f.GetCellValue("Agreement", cell, excelize.Options{RawCellValue: true})
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("Agreement!%s (%s): %q", cell, h, s)
			}
			got = append(got, v)
		}
		near("workbook", got)
	}
	if !found {
		t.Error("Agreement sheet: no fleiss_kappa row")
	}

	// Without --null the vs columns are not there.
	plain := filepath.Join(dir, "plain.xlsx")
	g, _ := reportBook(t, "report xlsx", plain, "report", "--fit", fit, "--bootstrap", "0")
	head, _ := g.GetRows("Agreement")
	for _, h := range head[0] {
		if h == "z (vs 0.5)" || h == "p-value (vs 0)" {
			t.Errorf("without --null: column %q", h)
		}
	}
	runFails(t, []string{"report", "--fit", fit, "--out", plain, "--ci", "wald"}, `--ci "wald": expected t or normal`)
	runFails(t, []string{"report", "--fit", fit, "--out", plain, "--null", "half"}, "--null")
}
