package main

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"concord/internal/testutil"
)

// TestAgreementCommandRandomStart runs crowd-kit's toy fixture (M-MSR) and
// its boolean-label fixture (KOS) with --random-start crowdkit and
// compares with crowd-kit 1.4.1's own results
// (raters/testdata/reference_mmsr.csv, reference_crowdkit_options.csv):
// M-MSR's skills to 1e-8 and KOS's classes; M-MSR's fit reports the
// crowdkit start and crowd-kit's random_state 0. With concord's own start
// (the default) M-MSR on toy ends at another fixed point, so the option
// is what makes them agree. Bad values name the flag.
func TestAgreementCommandRandomStart(t *testing.T) {
	td := "../../raters/testdata/"
	ref := map[string]string{} // case/kind/id/field -> value
	for _, f := range []string{"reference_mmsr.csv", "reference_crowdkit_options.csv"} {
		for _, r := range testutil.ReadCSV(t, td+f)[1:] {
			ref[r[0]+"/"+r[1]+"/"+r[2]+"/"+r[3]] = r[4]
		}
	}
	type agg struct {
		Items []struct {
			ID    string `json:"id"`
			Label string `json:"label"`
		} `json:"items"`
		Raters []struct {
			ID    string  `json:"id"`
			Skill float64 `json:"skill"`
		} `json:"raters"`
		Fit *struct {
			Start string `json:"start"`
			Seed  uint64 `json:"seed"`
		} `json:"fit"`
	}
	run1 := func(file, scheme string, extra ...string) map[string]agg {
		t.Helper()
		args := append([]string{"agreement", "--labels", td + file, "--scheme", scheme, "--ties", "first", "--only", "aggregators", "--json"}, extra...)
		e, out, errb := testEnv()
		if code := run(context.Background(), e, args); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errb)
		}
		var doc struct {
			Aggregators map[string]agg `json:"aggregators"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Aggregators
	}
	// skillsOff is the largest distance of M-MSR's skills from crowd-kit's.
	skillsOff := func(a agg) float64 {
		off := 0.0
		for _, q := range a.Raters {
			want, err := strconv.ParseFloat(ref["mmsr_toy/rater/"+q.ID+"/skill"], 64)
			if err != nil {
				t.Fatalf("rater %s: no crowd-kit skill", q.ID)
			}
			off = math.Max(off, math.Abs(q.Skill-want))
		}
		return off
	}
	ck := run1("crowdkit_toy.csv", "nominal:no,yes", "--random-start", "crowdkit")["mmsr"]
	if off := skillsOff(ck); !(off < 1e-8) || len(ck.Raters) != 5 {
		t.Errorf("--random-start crowdkit: M-MSR's skills %g from crowd-kit's (%d raters)", off, len(ck.Raters))
	}
	if ck.Fit == nil || ck.Fit.Start != "crowdkit" || ck.Fit.Seed != 0 {
		t.Errorf("--random-start crowdkit: M-MSR's fit %+v, want start crowdkit, seed 0", ck.Fit)
	}
	for _, it := range ck.Items {
		if want := ref["mmsr_toy/item/"+it.ID+"/label"]; it.Label != want {
			t.Errorf("M-MSR item %s: %s, crowd-kit %s", it.ID, it.Label, want)
		}
	}
	if off := skillsOff(run1("crowdkit_toy.csv", "nominal:no,yes")["mmsr"]); !(off > 0.1) {
		t.Errorf("concord's own start: M-MSR's skills %g from crowd-kit's; the toy data were to end at another fixed point", off)
	}
	kos := run1("crowdkit_bool.csv", "nominal:False,True", "--random-start", "crowdkit")["kos"]
	if len(kos.Items) != 2 {
		t.Fatalf("KOS: %d items", len(kos.Items))
	}
	for _, it := range kos.Items {
		if want := ref["kos_bool/item/"+it.ID+"/label"]; it.Label != want {
			t.Errorf("KOS item %s: %s, crowd-kit %s", it.ID, it.Label, want)
		}
	}

	base := []string{"agreement", "--labels", td + "crowdkit_toy.csv", "--scheme", "nominal:no,yes", "--bootstrap", "0"}
	runFailsAll(t, base, []failCase{
		{[]string{"--random-start", "numpy"}, `--random-start "numpy": expected concord or crowdkit`},
		{[]string{"--random-start", "crowdkit", "--seed", "4294967296"}, "--seed 4294967296 is over 4294967295, the largest seed numpy's RandomState takes"},
	})
	runFails(t, []string{"agreement", "--table", "testdata/nonexistent.csv", "--random-start", "crowdkit"}, "--random-start goes with labels")
}
