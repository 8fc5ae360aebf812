package analysis

import (
	"context"
	"fmt"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

// TestRestartsApart: an EP or Laplace fit whose evidence maximisation's
// restarts run apart (PlanRestarts runs start 1, FitRestart each later
// start, in reverse order, CombineRestarts the rest) gives the document Fit
// gives, bit for bit apart from timings, for the ordinal, bounded and
// robust models: with a fixed kernel (the later starts begin with the first
// start's factor) and a learnt one, one noise model and the noise model
// chosen (the later candidates' maximisations run in the combine). A fit
// without a maximisation of several starts is whole after the plan.
func TestRestartsApart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ds    *annotations.Dataset
		spec  FitSpec
		parts int // 0: the plan is the whole fit
	}{
		{"ordinal ep fixed rbf", smallOrdinal(), FitSpec{Model: ModelOrdinal, Engine: multirater.EngineEP, Kernel: "rbf:gamma=1", Noise: "per-rater", Restarts: 4, Seed: 5}, 3},
		{"ordinal laplace learnt rbf, noise chosen", smallOrdinal(), FitSpec{Model: ModelOrdinal, Engine: multirater.EngineLaplace, Kernel: "rbf", Restarts: 3, Seed: 2}, 2},
		{"bounded ep", boundedConst(14, func(i, r int) string { return fmt.Sprint(float64((i*7+r*3)%10+1) / 12) }),
			FitSpec{Model: ModelBounded, Engine: multirater.EngineEP, Restarts: 3, Seed: 4}, 2},
		{"robust", smallBinary(), FitSpec{Model: ModelRobust, Restarts: 3, Seed: 6}, 2},
		{"ordinal ep default restarts", smallOrdinal(), FitSpec{Model: ModelOrdinal, Engine: multirater.EngineEP, Noise: "shared", Seed: 5}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if !RestartsApart(tc.spec) {
				t.Fatalf("RestartsApart(%+v) = false", tc.spec)
			}
			whole, err := Fit(ctx, tc.ds, tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, plan, err := PlanRestarts(ctx, tc.ds, tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.parts == 0 {
				if plan != nil || res == nil || docBytes(t, res) != docBytes(t, whole) {
					t.Fatalf("plan %d bytes, result %v: want the whole fit", len(plan), res != nil)
				}
				return
			}
			if res != nil || plan == nil {
				t.Fatalf("plan %d bytes, result %v: want a plan", len(plan), res != nil)
			}
			n, err := RestartParts(plan)
			if err != nil || n != tc.parts {
				t.Fatalf("RestartParts = %d, %v; want %d", n, err, tc.parts)
			}
			outputs := make([][]byte, n+1)
			outputs[0] = plan
			for i := n - 1; i >= 0; i-- {
				var last float64
				out, err := FitRestart(ctx, tc.ds, tc.spec, plan, i, func(p multirater.Progress) {
					if p.Fraction < last || p.Fraction > 1 {
						t.Errorf("part %d: progress %v after %v", i, p.Fraction, last)
					}
					last = p.Fraction
				})
				if err != nil {
					t.Fatalf("part %d: %v", i, err)
				}
				if last != 1 {
					t.Errorf("part %d: last progress %v, want 1", i, last)
				}
				outputs[i+1] = out
			}
			combined, err := CombineRestarts(ctx, tc.ds, tc.spec, outputs, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []*multirater.FitResult{whole, combined} {
				for i := range r.Diagnostics.ModelCandidates {
					r.Diagnostics.ModelCandidates[i].Seconds = 0
				}
			}
			if a, b := docBytes(t, whole), docBytes(t, combined); a != b {
				t.Errorf("the combined restarts differ from the fit in one process:\n%s\n%s", a, b)
			}
			if _, err := CombineRestarts(ctx, tc.ds, tc.spec, outputs[:n], nil); err == nil {
				t.Errorf("combined %d outcomes of %d starts", n, n+1)
			}
			if _, err := FitRestart(ctx, tc.ds, tc.spec, plan, n, nil); err == nil {
				t.Errorf("ran part %d of %d", n, n)
			}
		})
	}
	for _, tc := range []struct {
		spec FitSpec
		want bool
	}{
		{FitSpec{}, true}, // EP, the default
		{FitSpec{Restarts: 1}, false},
		{FitSpec{Engine: multirater.EngineGibbs, Restarts: 3}, false},
		{FitSpec{Model: ModelBounded, Engine: multirater.EngineLaplace, Restarts: 2}, true},
		{FitSpec{Model: ModelConfusion}, false}, // VB
	} {
		if got := RestartsApart(tc.spec); got != tc.want {
			t.Errorf("RestartsApart(%+v) = %v, want %v", tc.spec, got, tc.want)
		}
	}
}

// smallBinary is a binary dataset: 16 items, 3 raters who agree with the
// items' order (yes from item 8 on) but for a few labels each.
func smallBinary() *annotations.Dataset {
	return smallDataset("binary:no,yes,pos=yes", 16, nil, func(i, r int) string {
		if (i >= 8) != ((i+3*r)%7 == 0) {
			return "yes"
		}
		return "no"
	})
}
