package annotations

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Label probabilities and model raters: read from a column or named, checked
// with precise problems, and kept by the long-form exports.
func TestModelRatersAndProbs(t *testing.T) {
	s := MustParseScheme("nominal:0,1")
	for _, tc := range []struct {
		name   string
		file   string
		opts   ReadOptions
		models []string
		probs  []float64 // per label in dataset order
		col    string    // problem column, when rejected
		line   int
		msg    string
	}{
		{name: "prob and is_model columns", file: "item_id,rater_id,label,prob,is_model\n1,h,0,,false\n1,m,1,0.75,true\n2,m,0,1,true\n",
			models: []string{"m"}, probs: []float64{0, 0.75, 1}},
		{name: "confidence alias, rater_kind", file: "item,rater,label,confidence,rater_kind\n1,h,0,,human\n1,gpt,1,0.6,model\n",
			models: []string{"gpt"}, probs: []float64{0.6, 0}},
		{name: "named prob column and model raters", file: "item_id,rater_id,label,p_llm\n1,h,0,\n1,m,1,0.9\n",
			opts: ReadOptions{ProbCol: "p_llm", ModelRaters: []string{"m"}}, models: []string{"m"}, probs: []float64{0, 0.9}},
		{name: "no probabilities", file: "item_id,rater_id,label\n1,h,0\n1,m,1\n", opts: ReadOptions{ModelRaters: []string{"m", "h"}},
			models: []string{"h", "m"}, probs: []float64{0, 0}},
		{name: "probability out of range", file: "item_id,rater_id,label,prob\n1,m,1,1.5\n", col: "prob", line: 2, msg: `probability "1.5" is not a number in (0, 1]`},
		{name: "probability zero", file: "item_id,rater_id,label,prob\n1,m,1,0\n", col: "prob", line: 2, msg: `probability "0" is not a number in (0, 1]`},
		{name: "probability not a number", file: "item_id,rater_id,label,prob\n1,m,1,high\n", col: "prob", line: 2, msg: `probability "high"`},
		{name: "rater kind unknown", file: "item_id,rater_id,label,is_model\n1,m,1,maybe\n", col: "is_model", line: 2, msg: `rater kind "maybe"`},
		{name: "rater kind changes", file: "item_id,rater_id,label,is_model\n1,m,1,true\n2,m,1,false\n", col: "is_model", line: 3, msg: `rater "m" is marked human here and model at line 2`},
		{name: "named model rater absent", file: "item_id,rater_id,label\n1,h,1\n", opts: ReadOptions{ModelRaters: []string{"gpt"}}, col: ModelsFlag, msg: `model rater "gpt"`},
		{name: "named prob column absent", file: "item_id,rater_id,label\n1,h,1\n", opts: ReadOptions{ProbCol: "conf"}, col: "conf", line: 1, msg: `no column "conf"`},
		{name: "json records", file: `[{"item_id": 1, "rater_id": "m", "label": 1, "prob": 0.8, "is_model": true}, {"item_id": 1, "rater_id": "h", "label": 0}]`,
			models: []string{"m"}, probs: []float64{0, 0.8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Name = "f"
			ds, err := func() (*Dataset, error) {
				p, err := ReadLabels(strings.NewReader(tc.file), opts)
				if err != nil {
					return nil, err
				}
				return BuildDataset(s, p, nil, opts)
			}()
			if tc.msg != "" {
				var pl *ProblemList
				if !errors.As(err, &pl) || len(pl.Problems) != 1 {
					t.Fatalf("got %v, want one problem %q", err, tc.msg)
				}
				p := pl.Problems[0]
				if p.File != "f" || p.Column != tc.col || p.Line != tc.line || !strings.Contains(p.Msg, tc.msg) {
					t.Fatalf("got %+v, want column %q line %d message %q", p, tc.col, tc.line, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ds.ModelRaters, tc.models) {
				t.Errorf("model raters %v, want %v", ds.ModelRaters, tc.models)
			}
			var probs []float64
			for _, l := range ds.Labels {
				probs = append(probs, l.Prob)
			}
			if !slices.Equal(probs, tc.probs) {
				t.Errorf("probabilities %v, want %v", probs, tc.probs)
			}
			for _, w := range writers {
				got, err := roundTripErr(ds, w)
				if strings.HasSuffix(w.name, "wide") {
					if ErrorCode(err) != EINVALID {
						t.Errorf("%s: got %v, want a refusal", w.name, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", w.name, err)
				}
				if !reflect.DeepEqual(got, ds) {
					t.Errorf("%s: round trip changed the dataset:\n got %+v\nwant %+v", w.name, got, ds)
				}
			}
		})
	}
}

// A file without probabilities or model raters is exported as before.
func TestLongHeaderUnchanged(t *testing.T) {
	ds := &Dataset{Scheme: MustParseScheme("nominal:0,1"), Labels: []Label{{Item: "1", Rater: "a", Value: "0"}}}
	var b bytes.Buffer
	if err := WriteCSVLong(&b, ds); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "item_id,rater_id,label\n1,a,0\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// LoadFileList reports its reading progress: increasing byte counts that
// end at the files' total size.
func TestLoadProgress(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("item_id,rater_id,label\n")
	for i := 0; i < 20000; i++ {
		b.WriteString("item" + strings.Repeat("x", i%7) + ",r" + string(rune('a'+i%5)) + ",1\n")
	}
	a := filepath.Join(dir, "a.csv")
	c := filepath.Join(dir, "b.csv")
	if err := os.WriteFile(a, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c, []byte("item_id,rater_id,label\nz,q,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls []int64
	var totals []int64
	_, err := LoadFileList([]string{a, c}, LoadOptions{ReadOptions: ReadOptions{Duplicates: DuplicatesFirst}, Progress: func(done, total int64) {
		calls = append(calls, done)
		totals = append(totals, total)
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := int64(b.Len() + len("item_id,rater_id,label\nz,q,0\n"))
	if len(calls) < 2 || calls[len(calls)-1] != want || !slices.IsSorted(calls) || totals[0] != want {
		t.Errorf("progress %v of %v, want increasing to %d", calls, totals[:1], want)
	}
}
