package multirater

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// rowsOf returns the [][]float64 that d stands for.
func rowsOf(d ClassDraw) [][]float64 {
	if d.V == nil {
		return nil
	}
	rows := make([][]float64, d.Items())
	for n := range rows {
		rows[n] = slices.Clone(d.Row(n))
	}
	return rows
}

// TestClassDrawJSON checks that a ClassDraw is written byte for byte as
// encoding/json writes the [][]float64 it stands for, and read back.
func TestClassDrawJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99999e-7, 1e-7, -1.5e-9, 1e20, 1e21, -2.5e22,
		5e-324, math.MaxFloat64, -math.SmallestNonzeroFloat64, 123456789, 0.1234567, 1e-300, 3.0000001e-5}
	random := make([]float64, 3000)
	for i := range random {
		random[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
	}
	for _, tc := range []struct {
		name string
		d    ClassDraw
	}{
		{"zero", ClassDraw{}},
		{"no items", ClassDraw{K: 2, V: []float64{}}},
		{"one item", ClassDraw{K: 3, V: []float64{1, -2, 3.5}}},
		{"one class", ClassDraw{K: 1, V: []float64{1, 2}}},
		{"special values", ClassDraw{K: 1, V: special}},
		{"special values in pairs", ClassDraw{K: 2, V: special[:18]}},
		{"random", ClassDraw{K: 4, V: random}},
	} {
		got, err := json.Marshal(tc.d)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		want, _ := json.Marshal(rowsOf(tc.d))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: wrote\n%s\nencoding/json writes\n%s", tc.name, got, want)
		}
		var back ClassDraw
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("%s: reading back: %v", tc.name, err)
			continue
		}
		same := slices.EqualFunc(back.V, tc.d.V, func(a, b float64) bool { return a == b && math.Signbit(a) == math.Signbit(b) })
		if !same || (back.V == nil) != (tc.d.V == nil) || len(tc.d.V) > 0 && back.K != tc.d.K {
			t.Errorf("%s: read back %+v, wrote %+v", tc.name, back, tc.d)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := json.Marshal(ClassDraw{K: 1, V: []float64{0, v}})
		_, want := json.Marshal([][]float64{{0}, {v}})
		if err == nil || want == nil {
			t.Errorf("%v: error %v, encoding/json's %v", v, err, want)
		}
	}
	for _, bad := range []string{`[[1,2],[3]]`, `[[]]`, `[[1],[]]`, `{"a":1}`, `[1,2]`, `[["x"]]`} {
		var d ClassDraw
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s read as %+v, want an error", bad, d)
		}
	}
}

// FuzzClassDrawJSON checks that whatever a ClassDraw reads, it writes as
// encoding/json writes the rows, and reads back the same.
func FuzzClassDrawJSON(f *testing.F) {
	for _, s := range []string{`null`, `[]`, `[[1,2],[3,4]]`, `[[1e-7],[1e21],[-0]]`, `[[0.1,0.2,0.3]]`, `[[1],[]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d ClassDraw
		if err := json.Unmarshal(b, &d); err != nil {
			return
		}
		got, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("%s: read, but not written: %v", b, err)
		}
		want, _ := json.Marshal(rowsOf(d))
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: wrote %s, encoding/json writes %s", b, got, want)
		}
		var back ClassDraw
		if err := json.Unmarshal(got, &back); err != nil || back.K != d.K || !slices.Equal(back.V, d.V) {
			t.Fatalf("%s: wrote %s, read back %+v (%v), want %+v", b, got, back, err, d)
		}
	})
}
