// Package testutil holds what the tests of several packages share: reading
// the reference tables (CSV files) that testdata folders and the shared data
// folder hold, JSON round trips, zipped fixtures, random test inputs and a
// fresh PostgreSQL schema per test. Only test files and the reference
// scripts of docs/scripts import it.
package testutil

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Records returns every record of the CSV file at path, the header
// included.
func Records(path string) ([][]string, error) {
	return records(path, 0)
}

func records(path string, comment rune) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = comment
	return r.ReadAll()
}

// ReadCSV returns every record of the CSV file at path, the header
// included; a file that cannot be opened or parsed fails the test.
func ReadCSV(tb testing.TB, path string) [][]string {
	tb.Helper()
	recs, err := Records(path)
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

// ReadCommentedCSV is ReadCSV for a file whose lines that begin with '#'
// are comments (CmdStan's output, reference tables that say how they were
// made).
func ReadCommentedCSV(tb testing.TB, path string) [][]string {
	tb.Helper()
	recs, err := records(path, '#')
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

// SharedCSV is ReadCSV for a file of the shared data folder, which a
// checkout need not have: when the file is absent the test or benchmark is
// skipped.
func SharedCSV(tb testing.TB, path string) [][]string {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("shared data not available: %v", err)
	}
	return ReadCSV(tb, path)
}

// Floats parses every field of rec as a number, "NA" (R's missing value)
// as NaN; a field that is not a number fails the test, naming what (the
// file and row) and the column.
func Floats(tb testing.TB, what string, rec []string) []float64 {
	tb.Helper()
	v := make([]float64, len(rec))
	for j, s := range rec {
		if s == "NA" {
			v[j] = math.NaN()
			continue
		}
		var err error
		if v[j], err = strconv.ParseFloat(s, 64); err != nil {
			tb.Fatalf("%s column %d: %v", what, j+1, err)
		}
	}
	return v
}

// Panics fails the test (what names the case) unless f panics with a
// string that begins with prefix: a caller bug's "pkg: ..." message.
func Panics(tb testing.TB, what, prefix string, f func()) {
	tb.Helper()
	defer func() {
		r := recover()
		if msg, ok := r.(string); !ok || !strings.HasPrefix(msg, prefix) {
			tb.Errorf("%s: panic %v, want a message beginning %q", what, r, prefix)
		}
	}()
	f()
}

// Keyed returns the records after the header as maps from the header's
// column names to the record's fields.
func Keyed(recs [][]string) []map[string]string {
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out
}

// MannWhitney is the AUC of scores s for labels y by its definition: the
// share of (positive, negative) pairs that the scores order correctly, ties
// counting one half. It is O(n+ n-), a check independent of the models' own
// AUC.
func MannWhitney(s []float64, y []bool) float64 {
	var sum, pairs float64
	for i := range s {
		for j := range s {
			if !y[i] || y[j] {
				continue
			}
			pairs++
			switch {
			case s[i] > s[j]:
				sum++
			case s[i] == s[j]:
				sum += 0.5
			}
		}
	}
	return sum / pairs
}

// ReadJSON decodes the JSON file at path into v; a file that cannot be
// read or decoded fails the test.
func ReadJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

// JSONRoundTrip returns v encoded as JSON and decoded again (a document as
// it is stored or sent); a value that cannot be encoded or decoded fails
// the test.
func JSONRoundTrip[T any](tb testing.TB, v T) T {
	tb.Helper()
	return jsonAs[T](tb, v)
}

// jsonAs returns v encoded as JSON and decoded as a T.
func jsonAs[T any](tb testing.TB, v any) T {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		tb.Fatal(err)
	}
	return back
}

// JSONDocument returns v encoded as JSON and decoded as a generic document
// (the map a client of the JSON reads); a value that cannot be encoded
// fails the test.
func JSONDocument(tb testing.TB, v any) map[string]any {
	tb.Helper()
	return jsonAs[map[string]any](tb, v)
}

// JSONFields returns v encoded as JSON and decoded as an object's fields,
// each left encoded; a value that cannot be encoded as an object fails
// the test.
func JSONFields(tb testing.TB, v any) map[string]json.RawMessage {
	tb.Helper()
	return jsonAs[map[string]json.RawMessage](tb, v)
}

// ZipFixture returns the zip archive of the files of dir named in
// dir/ORDER (slash-separated paths), in that order: a fixture kept
// unzipped in testdata. A file that cannot be read fails the test.
func ZipFixture(t testing.TB, dir string) []byte {
	t.Helper()
	order, err := os.ReadFile(filepath.Join(dir, "ORDER"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, part := range strings.Fields(string(order)) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(part)))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(part)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// NormalMatrix returns an n x d matrix of standard normal draws from rng,
// drawn row by row (test inputs of the kernels).
func NormalMatrix(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	return x
}

// Classified splits the records of a table of numeric covariates and a
// class in its last column (recs holds the header, as Records returns it):
// the covariates, whether each row's class is positive, and the covariates'
// names. A field that is not a number is an error naming its row and
// column.
func Classified(recs [][]string, positive string) (x *mat.Dense, y []bool, names []string, err error) {
	d := len(recs[0]) - 1
	x = mat.NewDense(len(recs)-1, d, nil)
	y = make([]bool, len(recs)-1)
	for i, rec := range recs[1:] {
		for k := 0; k < d; k++ {
			v, err := strconv.ParseFloat(rec[k], 64)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("row %d column %d: %w", i+2, k+1, err)
			}
			x.Set(i, k, v)
		}
		y[i] = rec[d] == positive
	}
	return x, y, recs[0][:d], nil
}

// IndexOf returns the index of id in *ids, which index maps (an id's index
// by its first sight): a new id is appended to *ids and index.
func IndexOf(index map[string]int, ids *[]string, id string) int {
	i, ok := index[id]
	if !ok {
		i = len(*ids)
		index[id] = i
		*ids = append(*ids, id)
	}
	return i
}

// Golden compares got with the golden file at path, and with update set
// first writes got there (making its folder): the file's content, and
// whether it equals got. A file that cannot be written or read fails the
// test.
func Golden(tb testing.TB, path string, got []byte, update bool) (want []byte, same bool) {
	tb.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return want, bytes.Equal(got, want)
}
