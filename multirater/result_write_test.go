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
			MClass: []ClassDraw{{K: 2, V: []float64{1, 2, 3, 4, 5, 6}}}}}},
		{name: "two draws of classes, thresholds, traces", res: FitResult{Items: items, Traces: &Traces{Every: 2, Alpha: map[string][][]float64{"r0": {{1, 2}}}},
			Draws: &Draws{N: 2, Alpha: [][]float64{{1}, {2}}, Thresholds: [][][]float64{{{-1, 1}}, {{-2, 2}}},
				MClass: []ClassDraw{{K: 2, V: []float64{1, 2, 3, 4, 5, 6}}, {K: 2, V: []float64{-1, 0, 1e-300, 2, 0.5, 7}}}}, Flags: []Flag{{Item: "c", Rater: "r0"}}}},
		{name: "draws of classes, no items", res: FitResult{Draws: &Draws{N: 1, MClass: []ClassDraw{{K: 3, V: []float64{1, 2, 3}}}}}},
		{name: "empty class draws", res: FitResult{Items: items, Draws: &Draws{N: 0, MClass: []ClassDraw{}}}},
		{name: "latent and class draws", res: FitResult{Draws: &Draws{N: 1, M: [][]float64{{1, 2}}, MClass: []ClassDraw{{K: 1, V: []float64{1, 2}}}}}},
		{name: "one draw of one item", res: FitResult{Items: items[:1], Draws: &Draws{N: 1, M: [][]float64{{1}}}}},
		{name: "NaN in an item", res: FitResult{Items: []ItemResult{{ID: "x", Score: est(math.NaN())}}}, wantErr: true},
		{name: "NaN in a class draw", res: FitResult{Items: items, Draws: &Draws{N: 1, MClass: []ClassDraw{{K: 2, V: []float64{1, 2, math.NaN(), 0, 0, 0}}}}}, wantErr: true},
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

// maxWriter records the longest single Write.
type maxWriter struct{ n, max int }

func (w *maxWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	w.max = max(w.max, len(p))
	return len(p), nil
}

// TestWriteIndentedStreams checks that no write holds more than one draw
// row or item: the document of many items and draws is never built whole.
func TestWriteIndentedStreams(t *testing.T) {
	const n, draws = 2000, 4
	for _, class := range []bool{false, true} {
		res := FitResult{Schema: "s", Items: make([]ItemResult, n), Draws: &Draws{N: draws, Alpha: make([][]float64, draws)}}
		for i := range res.Items {
			res.Items[i] = ItemResult{ID: "item", NLabels: 1}
		}
		for s := 0; s < draws; s++ {
			res.Draws.Alpha[s] = []float64{1, 2}
			if class {
				m := NewClassDraw(n, 2)
				for i := 0; i < n; i++ {
					copy(m.Row(i), []float64{float64(i), -float64(s)})
				}
				res.Draws.MClass = append(res.Draws.MClass, m)
			} else {
				m := make([]float64, n)
				for i := range m {
					m[i] = float64(i * s)
				}
				res.Draws.M = append(res.Draws.M, m)
			}
		}
		var w maxWriter
		if err := WriteIndented(&w, &res); err != nil {
			t.Fatal(err)
		}
		if limit := w.n / draws; w.max > limit {
			t.Errorf("class draws %v: a write of %d bytes of a %d-byte document: more than one draw row (%d bytes)", class, w.max, w.n, limit)
		}
	}
}
