package server

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"testing"

	"concord/annotations"
	"concord/internal/testutil"
)

// TestAgreementQueryRandomStart: random_start=crowdkit draws M-MSR's start
// as crowd-kit 1.4.1 does, from numpy's RandomState with crowd-kit's
// random_state 0 by default, in the project's label order (sorted by item
// and rater id). On crowd-kit's toy fixture imported as a project,
// M-MSR's skills equal crowd-kit's own run on the fixture's rows in that
// order (raters/testdata/reference_mmsr.csv, mmsr_toy_sorted) to 1e-8;
// the fit reports the start and seed. Bad values are a 400 naming the
// parameter.
func TestAgreementQueryRandomStart(t *testing.T) {
	recs := testutil.ReadCSV(t, "../raters/testdata/reference_mmsr.csv")
	want := map[string]float64{}
	for _, r := range recs[1:] {
		if r[0] == "mmsr_toy_sorted" && r[1] == "rater" && r[3] == "skill" {
			v, err := strconv.ParseFloat(r[4], 64)
			if err != nil {
				t.Fatal(err)
			}
			want[r[2]] = v
		}
	}
	e, id, key := crowdkitToyProject(t)
	base := fmt.Sprintf("/api/v1/projects/%d/agreement?bootstrap=0&only=aggregators&ties=first", id)
	mmsr := e.call("GET", base+"&random_start=crowdkit", key, nil, 200)["aggregators"].(map[string]any)["mmsr"].(map[string]any)
	rows := mmsr["raters"].([]any)
	if len(rows) != len(want) || len(want) != 5 {
		t.Fatalf("%d M-MSR raters, crowd-kit %d", len(rows), len(want))
	}
	for _, r := range rows {
		m := r.(map[string]any)
		if w, got := want[m["id"].(string)], m["skill"].(float64); !(math.Abs(got-w) < 1e-8) {
			t.Errorf("rater %v: skill %.12g, crowd-kit %.12g", m["id"], got, w)
		}
	}
	if fit := mmsr["fit"].(map[string]any); fit["start"] != "crowdkit" || fit["seed"] != 0.0 {
		t.Errorf("fit start %v, seed %v: want crowdkit, 0", fit["start"], fit["seed"])
	}
	fit := e.call("GET", base+"&random_start=crowdkit&seed=3", key, nil, 200)["aggregators"].(map[string]any)["mmsr"].(map[string]any)["fit"].(map[string]any)
	if fit["seed"] != 3.0 {
		t.Errorf("random_start=crowdkit&seed=3: seed %v", fit["seed"])
	}
	e.wantBadQueries(base+"&", key, map[string]string{
		"random_start=numpy":                    `query parameter random_start="numpy": expected concord or crowdkit`,
		"random_start=crowdkit&seed=4294967296": "query parameter seed=4294967296 is over 4294967295",
	})
	e.wantError("GET", base+"&random_start=x", key, nil, http.StatusBadRequest, annotations.EINVALID, "random_start")
}

// crowdkitToyProject is a server with crowd-kit's toy fixture
// (raters/testdata/crowdkit_toy.csv) imported as a nominal:no,yes
// project, its id and key.
func crowdkitToyProject(t *testing.T) (*testEnv, int64, string) {
	t.Helper()
	e := newEnv(t)
	id, key := e.project("toy", "nominal:no,yes")
	toy, err := os.ReadFile("../raters/testdata/crowdkit_toy.csv")
	if err != nil {
		t.Fatal(err)
	}
	if resp, b := e.upload(fmt.Sprintf("/api/v1/projects/%d/imports", id), key, map[string][2]string{"file": {"toy.csv", string(toy)}}, nil); resp.StatusCode != http.StatusCreated {
		t.Fatalf("import: status %d: %s", resp.StatusCode, b)
	}
	return e, id, key
}
