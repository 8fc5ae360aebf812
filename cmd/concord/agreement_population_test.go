package main

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"concord/internal/testutil"
)

// TestAgreementCommandPopulation: --population N applies irrCAC's
// finite-population correction to --table, --counts and labels, as
// irrCAC's functions with their argument N do
// (raters/testdata/reference_irrcac_population.csv, made by
// make_reference_irrcac_population.R), is in the JSON, and is refused,
// naming the flag, when it is not a count or is below the sample size.
func TestAgreementCommandPopulation(t *testing.T) {
	ref := map[string][4]float64{} // input/coefficient/weights/N -> value, se, lcb, ucb
	for _, r := range testutil.ReadCSV(t, "../../raters/testdata/reference_irrcac_population.csv")[1:] {
		var v [4]float64
		for k := range v {
			v[k], _ = strconv.ParseFloat(r[4+k], 64)
		}
		ref[strings.Join(r[:4], "/")] = v
	}
	for _, c := range []struct {
		flag, file, pop, key string
		pick                 func(doc map[string]any) any
	}{
		{"--table", "irrcac_cont3x3abstractors.csv", "203", "cohen_kappa/unweighted", func(d map[string]any) any {
			return d["cohen_kappa"].([]any)[0].(map[string]any)["unweighted"]
		}},
		{"--counts", "irrcac_distrib.6raters.csv", "33", "fleiss_kappa/unweighted", func(d map[string]any) any { return d["fleiss_kappa"] }},
		{"--counts", "irrcac_cac.dist4cat.csv", "1000", "krippendorff_alpha/unweighted", func(d map[string]any) any {
			return d["krippendorff_alpha"].(map[string]any)["nominal"]
		}},
	} {
		label := c.file + " " + c.key + " N=" + c.pop
		e, out, errb := testEnv()
		if code := run(context.Background(), e, []string{"agreement", c.flag, "../../raters/testdata/" + c.file, "--population", c.pop, "--json"}); code != 0 {
			t.Fatalf("%s: exit %d: %s", label, code, errb)
		}
		var doc map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		want, ok := ref[c.file+"/"+c.key+"/"+c.pop]
		if !ok {
			t.Fatalf("%s: no reference row", label)
		}
		m := c.pick(doc).(map[string]any)
		got := [4]float64{}
		for k, f := range []string{"value", "se", "ci_low", "ci_high"} {
			got[k], _ = m[f].(float64)
		}
		for k := range got {
			if math.Abs(got[k]-want[k]) > 1e-12 {
				t.Errorf("%s: value, SE, interval %v, irrCAC %v", label, got, want)
				break
			}
		}
		if doc["population"] != populationFloat(c.pop) {
			t.Errorf("%s: population %v in the JSON", label, doc["population"])
		}
	}

	runFailsAll(t, []string{"agreement"}, []failCase{
		{[]string{"--table", "../../raters/testdata/irrcac_cont3x3abstractors.csv", "--population", "x"}, "--population \"x\": expected a whole number"},
		{[]string{"--table", "../../raters/testdata/irrcac_cont3x3abstractors.csv", "--population", "-3"}, "--population \"-3\": expected a whole number"},
		{[]string{"--table", "../../raters/testdata/irrcac_cont3x3abstractors.csv", "--population", "99"}, "population 99 (concord agreement --population; API: population) is smaller than the 100 subjects"},
		{[]string{"--labels", "testdata/agreement_sirt_k1.csv", "--scheme", "ordinal:0..3", "--bootstrap", "0", "--population", "5"}, "population 5 (concord agreement --population; API: population) is smaller than the"},
	})
}

func populationFloat(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
