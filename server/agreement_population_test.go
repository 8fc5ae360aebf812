package server

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"concord/annotations"
)

// TestAgreementPopulation: the population query parameter of the project
// agreement routes and the population field of POST /api/v1/agreement
// apply irrCAC's finite-population correction (SE times sqrt(1 - n/N); for
// the table, irrCAC's own kappa2.table with N:
// raters/testdata/reference_irrcac_population.csv), are part of the
// analysis's cache key, and bad or too small values are a 400 naming them.
func TestAgreementPopulation(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	base := fmt.Sprintf("/api/v1/projects/%d/agreement", id)
	se := func(doc map[string]any) float64 {
		fk, _ := doc["fleiss_kappa"].(map[string]any)
		v, _ := fk["se"].(float64)
		return v
	}
	inf := e.call("GET", base+"?bootstrap=0&only=coefficients", key, nil, 200)
	n := inf["items"].(float64)
	for _, pop := range []float64{n, 2*n + 3, 1000} {
		q := strconv.FormatFloat(pop, 'f', 0, 64)
		doc := e.call("GET", base+"?bootstrap=0&only=coefficients&population="+q, key, nil, 200)
		if want := se(inf) * math.Sqrt(1-n/pop); !(se(inf) > 0) || math.Abs(se(doc)-want) > 1e-12 || doc["population"] != pop {
			t.Errorf("population=%s: SE %v, want %v (infinite: %v); population %v", q, se(doc), want, se(inf), doc["population"])
		}
	}
	if again := e.call("GET", base+"?bootstrap=0&only=coefficients", key, nil, 200); se(again) != se(inf) || again["population"] != nil {
		t.Errorf("without population after population=: SE %v, want %v", se(again), se(inf))
	}
	small := strconv.FormatFloat(n-1, 'f', 0, 64)
	e.wantBadQueries(base+"?bootstrap=0&", key, map[string]string{
		"population=x":        "query parameter population=\"x\": expected a whole number",
		"population=-2":       "query parameter population=\"-2\": expected a whole number",
		"population=" + small: "population " + small + " (concord agreement --population; API: population) is smaller than the",
	})

	var want [3]float64 // SE, interval of Cohen's kappa at N = 203
	for _, line := range strings.Split(readFile(t, "../raters/testdata/reference_irrcac_population.csv"), "\n") {
		if strings.HasPrefix(line, "irrcac_cont3x3abstractors.csv,cohen_kappa,unweighted,203,") {
			f := strings.Split(line, ",")
			for k := range want {
				want[k], _ = strconv.ParseFloat(f[5+k], 64)
			}
		}
	}
	if want[0] == 0 {
		t.Fatal("no reference row for the table")
	}
	tab := [][]float64{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, "../raters/testdata/irrcac_cont3x3abstractors.csv")), "\n")[1:] {
		var row []float64
		for _, c := range strings.Split(line, ",")[1:] {
			v, err := strconv.ParseFloat(strings.TrimSpace(c), 64)
			if err != nil {
				t.Fatal(err)
			}
			row = append(row, v)
		}
		tab = append(tab, row)
	}
	doc := e.call("POST", "/api/v1/agreement", key, map[string]any{"table": tab, "population": 203}, 200)
	ck := doc["cohen_kappa"].([]any)[0].(map[string]any)["unweighted"].(map[string]any)
	for k, f := range []string{"se", "ci_low", "ci_high"} {
		if got, _ := ck[f].(float64); math.Abs(got-want[k]) > 1e-12 {
			t.Errorf("table, population 203: %s %v, irrCAC %v", f, got, want[k])
		}
	}
	for _, c := range []struct {
		body any
		want string
	}{
		{map[string]any{"table": tab, "population": -1}, "population -1: expected a whole number"},
		{map[string]any{"table": tab, "population": 99}, "population 99 (concord agreement --population; API: population) is smaller than the 100 subjects"},
		{map[string]any{"table": tab, "population": 1.5}, "population"},
	} {
		e.wantError("POST", "/api/v1/agreement", key, c.body, http.StatusBadRequest, annotations.EINVALID, c.want)
	}
}
