package robust

import (
	"context"
	"reflect"
	"testing"

	"concord/multirater"
)

// TestSettingsRecorded checks that the fit document's model.robust says how
// the error rates and the latent noise were obtained.
func TestSettingsRecorded(t *testing.T) {
	data := ionosphere40(t)
	eps := 0.1
	zero := 0.0
	for _, tc := range []struct {
		name string
		opts Options
		want multirater.RobustSettings
	}{
		{"learnt", Options{Seed: 1}, multirater.RobustSettings{EM: "tilted", StartEpsilon: 0.05, MaxEM: 50, EMTol: 1e-4, Restarts: 1}},
		{"paper EM, noise fixed", Options{Seed: 1, PaperEM: true, Noise: 0.5, MaxEM: 5},
			multirater.RobustSettings{EM: "paper", StartEpsilon: 0.05, MaxEM: 5, EMTol: 1e-4, Noise: 0.5, Restarts: 1}},
		{"fixed", Options{Seed: 1, FixEpsilon: true, Epsilon: eps, Noise: 1}, multirater.RobustSettings{Epsilon: &eps, Noise: 1, Restarts: 1}},
		{"plain", Options{Seed: 1, FixEpsilon: true, Noise: 1}, multirater.RobustSettings{Epsilon: &zero, Noise: 1, Restarts: 1}},
		{"select", Options{Seed: 1, Select: true, Noise: 1}, multirater.RobustSettings{EM: "tilted", StartEpsilon: 0.05, MaxEM: 50, EMTol: 1e-4, Noise: 1, Select: true, Restarts: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Fit(context.Background(), data, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Model.Robust
			if got == nil {
				t.Fatal("model.robust missing")
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("model.robust = %+v, want %+v", *got, tc.want)
			}
		})
	}
}
