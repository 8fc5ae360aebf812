package annotations

import (
	"bytes"
	"errors"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Fuzz targets for every parser. Their seed corpora (the fixtures and the
// small inputs below) run with `go test`; `go test -fuzz FuzzReadLabelsCSV`
// and so on explore further. Each target checks that a parser never panics,
// that a rejection is a *ProblemList whose problems name the file, and that
// whatever is accepted survives validation and a round trip through every
// writer unchanged.

// checkProblems checks the shape of a rejection.
func checkProblems(t *testing.T, err error) {
	t.Helper()
	var pl *ProblemList
	if !errors.As(err, &pl) {
		t.Fatalf("error is not a problem list: %v", err)
	}
	if pl.Len() == 0 || len(pl.Problems) == 0 {
		t.Fatalf("empty problem list")
	}
	for _, p := range pl.Problems {
		if p.File != "fuzz" || p.Msg == "" || p.Line < 0 || p.Row < 0 {
			t.Fatalf("malformed problem %+v", p)
		}
	}
}

// fuzzLabels reads data in format f and checks the properties above.
func fuzzLabels(t *testing.T, data []byte, f Format) {
	opts := ReadOptions{Format: f, Name: "fuzz", MaxProblems: 20}
	p, err := ReadLabels(bytes.NewReader(data), opts)
	if err != nil {
		checkProblems(t, err)
		return
	}
	if len(p.Labels) == 0 {
		t.Fatal("accepted a file without labels")
	}
	values := make([]string, len(p.Labels))
	for i, l := range p.Labels {
		values[i] = l.Value
	}
	s, _, err := InferScheme(values)
	if err != nil {
		return
	}
	ds, err := BuildDataset(s, p, nil, opts)
	if err != nil {
		checkProblems(t, err)
		return
	}
	for _, l := range ds.Labels {
		if err := l.Validate(ds.Scheme); err != nil {
			t.Fatalf("dataset holds an invalid label %+v: %v", l, err)
		}
	}
	// Workbooks are slow to write and read: text formats round-trip
	// through XLSX for a deterministic eighth of the inputs and for those
	// with non-ASCII text, where XML's character rules matter.
	withXLSX := f == FormatXLSX || crc32.ChecksumIEEE(data)%8 == 0 || !isASCII(data)
	for _, w := range writers {
		if strings.HasPrefix(w.name, "xlsx") && !withXLSX {
			continue
		}
		got, err := roundTripErr(ds, w)
		if ErrorCode(err) == EINVALID {
			continue // e.g. a rater named "text" has no wide layout
		}
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if !reflect.DeepEqual(got, ds) {
			t.Fatalf("%s: round trip changed the dataset:\n got %+v\nwant %+v", w.name, got, ds)
		}
	}
}

// roundTripErr is roundTrip reporting failures as errors.
func roundTripErr(ds *Dataset, w writer) (*Dataset, error) {
	var buf bytes.Buffer
	if err := w.write(&buf, ds); err != nil {
		return nil, err
	}
	ro := w.read
	ro.Name = "export"
	p, err := ReadLabels(bytes.NewReader(buf.Bytes()), ro)
	if err != nil {
		return nil, errors.New("reading the export back: " + err.Error() + "\n" + buf.String())
	}
	var items []Item
	if len(ds.Items) > 0 {
		var ib bytes.Buffer
		if err := WriteItemsCSV(&ib, ds.Items); err != nil {
			return nil, err
		}
		if items, err = ReadItems(bytes.NewReader(ib.Bytes()), ReadOptions{}); err != nil {
			return nil, errors.New("reading the items back: " + err.Error() + "\n" + ib.String())
		}
	}
	return BuildDataset(ds.Scheme, p, items, ro)
}

func addFixtures(f *testing.F, names ...string) {
	for _, n := range names {
		f.Add(readFixture(f, n))
	}
}

// fuzzFormat fuzzes the reader of format from the fixture files and the
// seeds given.
func fuzzFormat(f *testing.F, format Format, fixtures []string, seeds ...string) {
	addFixtures(f, fixtures...)
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzLabels(t, data, format) })
}

func FuzzReadLabelsCSV(f *testing.F) {
	fuzzFormat(f, FormatAuto, []string{"rte_long.csv", "sirt_ratings.tsv", "sirt_k1_wide.csv", "dawid_skene_crowdkit.csv",
		"fleiss_semicolon.csv", "fleiss_wide.csv"},
		"item_id,rater_id,label\n1,a,1\n1,b,2\n",
		"task\tworker\tlabel\n\"t 1\"\tw\t\"x\"\"y\"\n",
		"id;r1;r2\n1;3;\n2;;4\n",
		"item_id,text,gold,r1\n1,\"multi\nline\",a,b\n",
		"\xef\xbb\xbfitem,annotator,value\n1,x,0.5\n2,x,1e3\n",
		"item_id,rater_id,label\n1,a\n",
		"item_id,rater_id,label\r\n1,a,\"b\r\nc\"\r\n",
		"item_id,rater_id,label,prob,is_model\n1,a,1,0.8,true\n1,b,0,,false\n2,a,0,1,yes\n",
		"item,rater,label,confidence,rater_kind\n1,a,1,1.5,model\n1,a,0,x,human\n",
	)
}

func FuzzReadLabelsJSON(f *testing.F) {
	fuzzFormat(f, FormatJSON, []string{"wordsim.json"},
		`[{"item_id": 1, "rater_id": "a", "label": 3}, {"item": "x", "worker": 2, "score": 1.5}]`,
		`[{"item_id": "a\u0000", "rater_id": "b", "label": "c"}]`,
		`[{"item_id": 1, "rater_id": "a", "label": {"x": 1}}]`,
		`[1, "two", null]`,
		`[{"item_id": 1, "rater_id": "a", "label": true}] trailing`,
		`[{"item_id": 1, "rater_id": "a", "label": 1, "prob": 0.7, "is_model": true}, {"item_id": 1, "rater_id": "b", "label": 0, "prob": null}]`,
	)
}

func FuzzReadLabelsJSONL(f *testing.F) {
	fuzzFormat(f, FormatJSONL, []string{"dawid_skene.jsonl"},
		"{\"item_id\": 1, \"rater_id\": 2, \"label\": 3}\n{\"task\": \"t\", \"user\": \"u\", \"answer\": \"yes\"}\n",
		"{\"item_id\": 1, \"rater_id\": 2, \"label\": 3, \"occasion\": 1}\n\n  \n{\"item_id\": 1\n",
		"{}\n",
	)
}

func FuzzReadLabelsLabelStudio(f *testing.F) {
	fuzzFormat(f, FormatLabelStudio, []string{"labelstudio_rte.json", "labelstudio_anaesthesia.json"},
		`[{"id": 1, "data": {"text": "t"}, "annotations": [{"completed_by": 2, "result": [{"type": "choices", "from_name": "c", "value": {"choices": ["a"]}}]}]}]`,
		`[{"id": 1, "data": {"img": "https://x/y.png", "item_id": 5}, "annotations": [{"completed_by": {"id": 3}, "result": [{"type": "rating", "from_name": "r", "value": {"rating": 2}}]}, {"was_cancelled": true}]}]`,
		`[{"id": 2, "completions": [{"completed_by": "x", "result": [{"type": "number", "from_name": "n", "value": {"number": -1.5}}]}]}]`,
		`[{"id": 3, "data": {"text": "t"}, "annotations": [{"result": [{"type": "choices", "from_name": "c", "value": {"choices": ["a", "b"]}}]}]}]`,
	)
}

func FuzzReadLabelsDoccano(f *testing.F) {
	fuzzFormat(f, FormatDoccano, []string{"doccano_rte.jsonl", "doccano_v1_rte.jsonl"},
		"{\"id\": 1, \"text\": \"t\", \"label\": [\"a\"], \"annotator\": \"x\"}\n{\"id\": 2, \"text\": \"u\", \"label\": [], \"user\": 3}\n",
		"{\"id\": 1, \"text\": \"t\", \"label\": [[0, 1, \"PER\"]], \"annotator\": \"x\"}\n",
		"[{\"id\": 1, \"text\": \"t\", \"labels\": [\"a\", \"b\"], \"username\": \"x\"}]",
		"{\"id\": 1, \"text\": \"t\", \"label\": \"a\"}\n",
	)
}

func FuzzReadLabelsXLSX(f *testing.F) {
	addFixtures(f, "wordsim_fleiss.xlsx")
	f.Add(xlsxBytes(f, "s", [][]string{{"item_id", "rater_id", "label"}, {"1", "a", "2"}, {"2", "b", "3"}}))
	f.Add(xlsxBytes(f, "wide", [][]string{{"item", "r1", "r2"}, {"1", "", "2"}, {"2", "x", ""}}))
	f.Add(xlsxNumbers(f, []float64{0.1 + 0.2, 3, 1e21}))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzLabels(t, data, FormatXLSX) })
}

func FuzzReadItems(f *testing.F) {
	addFixtures(f, "rte_items.csv", "wordsim_fleiss.xlsx")
	for _, s := range []string{
		"item_id,text,len,kind\n1,hello,3,a\n2,\"a, b\",4.5,\n",
		"id\tgold\tnote\n1\tyes\t\n2\tno\tx\n",
		"item_id,len\n1,\n",
		"item_id,text\n1,a\n1,b\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := ReadItems(bytes.NewReader(data), ReadOptions{Name: "fuzz", MaxProblems: 20})
		if err != nil {
			checkProblems(t, err)
			return
		}
		if len(items) == 0 {
			t.Fatal("accepted an items file without items")
		}
		for _, it := range items {
			if err := it.Validate(); err != nil {
				t.Fatalf("invalid item %+v: %v", it, err)
			}
		}
		var buf bytes.Buffer
		if err := WriteItemsCSV(&buf, items); err != nil {
			if ErrorCode(err) == EINVALID {
				return // e.g. an attribute column named like the id column
			}
			t.Fatal(err)
		}
		got, err := ReadItems(bytes.NewReader(buf.Bytes()), ReadOptions{})
		if err != nil {
			t.Fatalf("reading the items back: %v\n%q", err, buf.String())
		}
		if !reflect.DeepEqual(got, items) {
			t.Fatalf("round trip changed the items:\n got %+v\nwant %+v", got, items)
		}
	})
}
