package server

import (
	"reflect"
	"testing"
)

// The start-fit form's placeholders come from the model table's defaults
// and read as they always did.
func TestDefaultHints(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  map[string]string
	}{
		{"ordinal", map[string]string{"v": "1", "lambda": "1 (0.1 under strong)", "sigma_b": "1 (10 under strong)", "flag_threshold": "0.05", "max_rhat": "1.01", "min_ess": "400", "keep_draws": "500"}},
		{"classification", map[string]string{"v": "1", "lambda": "1 (0.1 under strong)", "sigma_b": "0", "flag_threshold": "0.05", "max_rhat": "1.01", "min_ess": "400", "keep_draws": "500"}},
	} {
		if got := defaultHints(tc.model); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: hints %v, want %v", tc.model, got, tc.want)
		}
	}
}
