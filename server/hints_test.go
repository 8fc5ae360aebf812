package server

import "testing"

// The start-fit form's placeholders come from the model table's defaults
// and read as they always did.
func TestDefaultHints(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  map[string]string
	}{
		{"ordinal", map[string]string{"v": "1", "lambda": "1 (0.1 under strong)", "sigma_b": "1 (10 under strong)", "flag_threshold": "0.05", "max_rhat": "1.01", "min_ess": "400", "keep_draws": "500"}},
		{"classification", map[string]string{"v": "1", "lambda": "1 (0.1 under strong)", "flag_threshold": "0.05", "max_rhat": "1.01", "min_ess": "400", "keep_draws": "500", "precisions": "inferred", "samples": "2000 (1500 with a kernel)", "burnin": "1000 (500 with a kernel)"}},
		{"bounded", map[string]string{"dispersion": "learnt", "likelihood": "auto", "restarts": "the default", "keep_draws": "500"}},
	} {
		got := settingHints(tc.model)
		for k, w := range tc.want {
			if got[k] != w {
				t.Errorf("%s: hint of %s %q, want %q", tc.model, k, got[k], w)
			}
		}
	}
}
