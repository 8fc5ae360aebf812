package server

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"concord/annotations"
)

// TestTableAgreementWeightsMatrix checks weights_matrix of POST
// /api/v1/agreement against statsmodels' cohens_kappa with a toeplitz
// vector and a 2-D matrix on SAS's table10
// (raters/testdata/reference_statsmodels_weights.csv; agreement weights
// are 1 - statsmodels' disagreement weights), and its errors.
func TestTableAgreementWeightsMatrix(t *testing.T) {
	type key struct{ weights, stat string }
	ref := map[key]float64{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, "../raters/testdata/reference_statsmodels_weights.csv")), "\n") {
		if !strings.HasPrefix(line, "sas_table10,") {
			continue
		}
		// case,"input","weights",wt,stat,value: the weights are the
		// second quoted field.
		q := strings.Split(line, "\"")
		f := strings.Split(line, ",")
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		ref[key{q[3], f[len(f)-2]}] = v
	}
	e, _, apiKey := loadedEnv(t, "k1")
	tab := [][]float64{{0, 4, 1}, {0, 8, 0}, {0, 1, 5}}
	for _, c := range []struct {
		sm string      // statsmodels' weights as in the reference file
		w  [][]float64 // concord's agreement weights, 1 - d
	}{
		{"[0, 1, 2]", [][]float64{{1, 0, -1}}},
		{"[0, 1, 4]", [][]float64{{1, 0, -3}}},
		{"[[0, 0.5, 1], [0.5, 0, 0.3], [1, 0.3, 0]]", [][]float64{{1, 0.5, 0}, {0.5, 1, 0.7}, {0, 0.7, 1}}},
	} {
		doc := e.call("POST", "/api/v1/agreement", apiKey, map[string]any{"table": tab, "ci": "normal", "weights_matrix": c.w}, 200)
		est := doc["weighted"].(map[string]any)["custom"].(map[string]any)["cohen_kappa"].(map[string]any)
		n := 0
		for stat, field := range map[string]string{"kappa": "value", "std_kappa": "se", "std_kappa0": "se_null", "z_value": "z", "pvalue_two_sided": "p_value"} {
			want, ok := ref[key{c.sm, stat}]
			if !ok {
				t.Fatalf("no statsmodels %s for %s", stat, c.sm)
			}
			if got, _ := est[field].(float64); math.Abs(got-want) > 1e-9 {
				t.Errorf("%s %s: %v, statsmodels %v", c.sm, stat, got, want)
			}
			n++
		}
		if n != 5 {
			t.Errorf("%s: %d statistics", c.sm, n)
		}
	}
	for _, c := range []struct {
		w    [][]float64
		want string
	}{
		{[][]float64{{1, 0.5}}, "weights_matrix: row 1 has 2 weights; a toeplitz weights row has one per distance 0..2"},
		{[][]float64{{1, 0}, {0, 1}}, "weights_matrix: 2 rows of weights for 3 categories"},
		{[][]float64{{1, 0.5, 0}, {0.4, 1, 0}, {0, 0, 1}}, "weights_matrix: row 2, column 1: weight 0.4 differs from row 1, column 2: 0.5"},
		{[][]float64{{1, 0, 0}, {0, 2, 0}, {0, 0, 1}}, "weights_matrix: row 2, column 2: diagonal weight 2"},
	} {
		e.wantError("POST", "/api/v1/agreement", apiKey, map[string]any{"table": tab, "weights_matrix": c.w}, http.StatusBadRequest, annotations.EINVALID, c.want)
	}
}

// TestAgreementQueryWeightsMatrix: weights_matrix on a project's labels
// (the sirt k1 essays, ordinal 0..3): the quadratic weights written out
// as a matrix and as a toeplitz row give weighted.custom equal to
// weighted.quadratic (value and SE of every coefficient, the variances of
// irrCAC's raw-data functions); bad text is a 400 naming the parameter,
// the row and the column.
func TestAgreementQueryWeightsMatrix(t *testing.T) {
	e := newEnv(t)
	id, key := e.loadedProject("k1")
	base := "/api/v1/projects/" + strconv.FormatInt(id, 10) + "/agreement?bootstrap=0&only=coefficients&weights=quadratic&weights_matrix="
	// Quadratic weights on 0..3: 1 - (k-l)²/9.
	for _, text := range []string{
		"1,0.8888888888888888,0.5555555555555556,0\n0.8888888888888888,1,0.8888888888888888,0.5555555555555556\n0.5555555555555556,0.8888888888888888,1,0.8888888888888888\n0,0.5555555555555556,0.8888888888888888,1\n",
		"1,0.8888888888888888,0.5555555555555556,0",
	} {
		doc := e.call("GET", base+url.QueryEscape(text), key, nil, 200)
		w := doc["weighted"].(map[string]any)
		quad, custom := w["quadratic"].(map[string]any), w["custom"].(map[string]any)
		n := 0
		for _, coef := range []string{"percent_agreement", "fleiss_kappa", "conger_kappa", "gwet_ac2", "brennan_prediger", "krippendorff_alpha"} {
			q, c := quad[coef].(map[string]any), custom[coef].(map[string]any)
			for _, f := range []string{"value", "se"} {
				a, _ := q[f].(float64)
				b, ok := c[f].(float64)
				if !ok || math.Abs(a-b) > 1e-9 {
					t.Errorf("%q %s %s: custom %v, quadratic %v", text[:10], coef, f, c[f], q[f])
				}
				n++
			}
		}
		if n != 12 {
			t.Errorf("%d statistics", n)
		}
	}
	e.wantBadQueries(base, key, map[string]string{
		url.QueryEscape("1,0.5"):            "query parameter weights_matrix: row 1 has 2 weights; a toeplitz weights row has one per distance 0..3 (4 categories)",
		url.QueryEscape("1,0\n0,1"):         "query parameter weights_matrix: 2 rows of weights for 4 categories",
		url.QueryEscape("1,x,0,0"):          "query parameter weights_matrix: row 1, column 2: \"x\" is not a finite number",
		url.QueryEscape("2,0.5,0.25,0.125"): "query parameter weights_matrix: row 1, column 1: the weight of distance 0 is 2",
	})
}
