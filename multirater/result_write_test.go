package multirater

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestWriteIndented(t *testing.T) {
	est := func(m float64) *Estimate { return &Estimate{Mean: m, SD: 0.5, Q025: m - 1, Q50: m, Q975: m + 1} }
	items := []ItemResult{
		{ID: "a<&>\n\"b\"", NLabels: 2, Labels: map[string]string{"r1": "1", "r0": "2"}, Score: est(0.25)},
		{ID: "c", NLabels: 0, Score: est(-1)},
		{ID: "d", NLabels: 1, Labels: map[string]string{"r0": "0"}, Score: est(3)},
	}
	for _, tc := range []struct {
		name    string
		res     FitResult
		wantErr bool
	}{
		{name: "empty", res: FitResult{Schema: "s"}},
		{name: "empty items and draws", res: FitResult{Schema: "s", Items: []ItemResult{}, Draws: &Draws{M: [][]float64{}}}},
		{name: "items", res: FitResult{Schema: "s", Levels: []string{"1", "2"}, Items: items}},
		{name: "one item", res: FitResult{Items: items[:1], Raters: []RaterResult{{ID: "r0"}}}},
		{name: "items and draws", res: FitResult{Items: items, Draws: &Draws{N: 2, Alpha: [][]float64{{1, 2}, {3, 4}},
			M: [][]float64{{0.5, -1e-300, 7}, {1, 2, 3}}}, Gaussian: &GaussianSites{}}},
		{name: "draws of classes", res: FitResult{Items: items, Draws: &Draws{N: 1, Alpha: [][]float64{{1}},
			MClass: [][][]float64{{{1, 2}, {3, 4}, {5, 6}}}}}},
		{name: "one draw of one item", res: FitResult{Items: items[:1], Draws: &Draws{N: 1, M: [][]float64{{1}}}}},
		{name: "NaN in an item", res: FitResult{Items: []ItemResult{{ID: "x", Score: est(math.NaN())}}}, wantErr: true},
		{name: "infinity in a draw", res: FitResult{Items: items, Draws: &Draws{N: 1, M: [][]float64{{1, math.Inf(1), 0}}}}, wantErr: true},
	} {
		want, wantErr := json.MarshalIndent(&tc.res, "", " ")
		var got bytes.Buffer
		err := WriteIndented(&got, &tc.res)
		if (err != nil) != tc.wantErr || (wantErr != nil) != tc.wantErr {
			t.Errorf("%s: error %v (MarshalIndent: %v), want error %v", tc.name, err, wantErr, tc.wantErr)
			continue
		}
		if tc.wantErr {
			if err.Error() != wantErr.Error() {
				t.Errorf("%s: error %q, MarshalIndent's %q", tc.name, err, wantErr)
			}
			continue
		}
		if !bytes.Equal(got.Bytes(), append(want, '\n')) {
			t.Errorf("%s: WriteIndented differs from MarshalIndent:\n%s\nwant\n%s", tc.name, got.Bytes(), want)
		}
	}
}
