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

	"concord/internal/testutil"
)

// fixture is a real label file in testdata with what reading it must give.
type fixture struct {
	file      string
	opts      ReadOptions
	itemsFile string      // optional items file
	itemOp    ReadOptions // options for the items file
	scheme    string      // "" infers the scheme
	format    Format
	// counts after BuildDataset
	labels, raters, labelledItems, nItems int
	unused                                []string
	// one label that must be there, in canonical form
	want Label
	// the inferred scheme, when scheme is ""
	inferred string
}

var fixtures = []fixture{
	{file: "rte_long.csv", itemsFile: "rte_items.csv", format: FormatCSVLong, labels: 60, raters: 10, labelledItems: 6, nItems: 6,
		want: Label{"934", "amt004", "0", 0}, inferred: "binary:0,1,pos=1"},
	{file: "sirt_ratings.tsv", opts: ReadOptions{Where: map[string]string{"criterion": "k2"}}, format: FormatCSVLong,
		labels: 18, raters: 7, labelledItems: 12, want: Label{"100020106", "db54", "1", 0}, inferred: "ordinal:0..3"},
	{file: "sirt_k1_wide.csv", format: FormatCSVWide, scheme: "ordinal:0..3", labels: 46, raters: 7, labelledItems: 20,
		want: Label{"200010210", "db07", "3", 0}},
	{file: "dawid_skene_crowdkit.csv", opts: ReadOptions{Where: map[string]string{"Occasion": "1"}}, format: FormatCSVLong,
		labels: 50, raters: 5, labelledItems: 10, want: Label{"3", "4", "2", 0}, inferred: "ordinal:1..4"},
	{file: "dawid_skene.jsonl", format: FormatJSONL, labels: 75, raters: 5, labelledItems: 15,
		want: Label{"15", "5", "1", 0}, inferred: "ordinal:1..4"},
	{file: "fleiss_semicolon.csv", format: FormatCSVLong, scheme: "nominal:1=Depression,2=Personality Disorder,3=Schizophrenia,4=Neurosis,5=Other",
		labels: 60, raters: 6, labelledItems: 10, want: Label{"2", "4", "5", 0}},
	{file: "fleiss_wide.csv", format: FormatCSVWide, scheme: "nominal:1,2,3,4,5", labels: 180, raters: 6, labelledItems: 30,
		want: Label{"30", "6", "5", 0}},
	{file: "wordsim.json", format: FormatJSON, scheme: "bounded:0..10", labels: 50, raters: 10, labelledItems: 5,
		want: Label{"gem jewel", "amt027", "10", 0}},
	{file: "labelstudio_rte.json", format: FormatLabelStudio, scheme: "binary:no entailment,entailment,pos=entailment",
		labels: 40, raters: 10, labelledItems: 4, nItems: 4, want: Label{"934", "4", "no entailment", 0}},
	{file: "labelstudio_anaesthesia.json", format: FormatLabelStudio, labels: 30, raters: 5, labelledItems: 6, nItems: 6,
		want: Label{"patient-3", "anaesthetist2@hospital.example", "2", 0}, inferred: "ordinal:1..4"},
	{file: "doccano_rte.jsonl", format: FormatDoccano, scheme: "binary:pos=entailment", labels: 15, raters: 3,
		labelledItems: 5, nItems: 5, unused: []string{"Comments"}, want: Label{"961", "amt002", "no_entailment", 0}},
	{file: "doccano_v1_rte.jsonl", format: FormatDoccano, scheme: "nominal:1=entailment,2=no entailment", labels: 30, raters: 10,
		labelledItems: 3, nItems: 3, unused: []string{"annotation_approver", "meta"}, want: Label{"934", "6", "1", 0}},
	{file: "wordsim_fleiss.xlsx", format: FormatXLSX, labels: 50, raters: 10, labelledItems: 5, nItems: 5,
		itemsFile: "wordsim_fleiss.xlsx", itemOp: ReadOptions{Sheet: "items"}, want: Label{"lad wizard", "amt270", "8", 0}, inferred: "ordinal:0..10"},
	{file: "wordsim_fleiss.xlsx", opts: ReadOptions{Sheet: "fleiss_wide"}, format: FormatXLSX, scheme: "ordinal:1..5",
		labels: 60, raters: 6, labelledItems: 10, want: Label{"10", "3", "5", 0}},
}

// readFixture returns the bytes of testdata/name. A workbook is kept as the
// text of its parts, testdata/NAME.d (unzipped from the file openpyxl
// wrote; ORDER lists the parts in the original archive's order), and zipped

// oneProblem returns the one problem of err, a *ProblemList; any other
// error (or none) fails the test.
func oneProblem(t testing.TB, err error) Problem {
	t.Helper()
	var pl *ProblemList
	if !errors.As(err, &pl) || pl.Len() != 1 {
		t.Fatalf("got %v, want one problem", err)
	}
	return pl.Problems[0]
}

// triples returns the labels of p as "item|rater|value".
func triples(p *Parsed) []string {
	got := []string{}
	for _, l := range p.Labels {
		got = append(got, l.Item+"|"+l.Rater+"|"+l.Value)
	}
	return got
}

// here, so that no binary file is committed.
func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	dir := filepath.Join("testdata", name+".d")
	if _, err := os.Stat(dir); err == nil {
		return testutil.ZipFixture(t, dir)
	}
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// load reads a fixture and builds its dataset.
func (f fixture) load(t testing.TB) (*Dataset, *Parsed) {
	t.Helper()
	opts := f.opts
	opts.Name = f.file
	p, err := ReadLabels(bytes.NewReader(readFixture(t, f.file)), opts)
	if err != nil {
		t.Fatalf("%s: ReadLabels: %v", f.file, err)
	}
	var items []Item
	if f.itemsFile != "" {
		io := f.itemOp
		io.Name = f.itemsFile
		if items, err = ReadItems(bytes.NewReader(readFixture(t, f.itemsFile)), io); err != nil {
			t.Fatalf("%s: ReadItems: %v", f.itemsFile, err)
		}
	}
	var s Scheme
	if f.scheme != "" {
		s = MustParseScheme(f.scheme)
	} else {
		vals := make([]string, len(p.Labels))
		for i, l := range p.Labels {
			vals[i] = l.Value
		}
		if s, _, err = InferScheme(vals); err != nil {
			t.Fatalf("%s: InferScheme: %v", f.file, err)
		}
		if s.String() != f.inferred {
			t.Errorf("%s: inferred scheme %s, want %s", f.file, s, f.inferred)
		}
	}
	ds, err := BuildDataset(s, p, items, opts)
	if err != nil {
		t.Fatalf("%s: BuildDataset: %v", f.file, err)
	}
	return ds, p
}

func TestReadFixtures(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.file+f.opts.Sheet, func(t *testing.T) {
			ds, p := f.load(t)
			if p.Format != f.format {
				t.Errorf("format %q, want %q", p.Format, f.format)
			}
			if p.Name != f.file {
				t.Errorf("Parsed.Name %q, want %q", p.Name, f.file)
			}
			if len(ds.Labels) != f.labels {
				t.Errorf("%d labels, want %d", len(ds.Labels), f.labels)
			}
			if n := len(ds.RaterIDs()); n != f.raters {
				t.Errorf("%d raters, want %d", n, f.raters)
			}
			labelled := map[string]bool{}
			for _, l := range ds.Labels {
				labelled[l.Item] = true
			}
			if len(labelled) != f.labelledItems {
				t.Errorf("%d labelled items, want %d", len(labelled), f.labelledItems)
			}
			if len(ds.Items) != f.nItems {
				t.Errorf("%d items, want %d", len(ds.Items), f.nItems)
			}
			if !slices.Contains(ds.Labels, f.want) {
				t.Errorf("label %+v missing", f.want)
			}
			if !slices.Equal(p.Unused, f.unused) && !(len(p.Unused) == 0 && len(f.unused) == 0) {
				t.Errorf("unused %q, want %q", p.Unused, f.unused)
			}
			// Labels come sorted by item, then rater (CompareIDs).
			for i := 1; i < len(ds.Labels); i++ {
				a, b := ds.Labels[i-1], ds.Labels[i]
				if c := CompareIDs(a.Item, b.Item); c > 0 || c == 0 && CompareIDs(a.Rater, b.Rater) >= 0 {
					t.Fatalf("labels %d and %d out of order: %+v, %+v", i-1, i, a, b)
				}
			}
		})
	}
}

// writer is one export format with the read options that read it back.
type writer struct {
	name  string
	write func(*bytes.Buffer, *Dataset) error
	read  ReadOptions
}

var writers = []writer{
	{"csv-long", func(b *bytes.Buffer, ds *Dataset) error { return WriteCSVLong(b, ds) }, ReadOptions{}},
	{"csv-wide", func(b *bytes.Buffer, ds *Dataset) error { return WriteCSVWide(b, ds) }, ReadOptions{Format: FormatCSVWide}},
	{"xlsx-long", func(b *bytes.Buffer, ds *Dataset) error { return WriteXLSX(b, ds, false) }, ReadOptions{}},
	{"xlsx-wide", func(b *bytes.Buffer, ds *Dataset) error { return WriteXLSX(b, ds, true) }, ReadOptions{Format: FormatCSVWide}},
}

// roundTrip writes ds with w (and its items with WriteItemsCSV), reads both
// back and builds the dataset again.
func roundTrip(t testing.TB, ds *Dataset, w writer) (*Dataset, error) {
	t.Helper()
	var buf bytes.Buffer
	if err := w.write(&buf, ds); err != nil {
		return nil, err
	}
	ro := w.read
	ro.Name = "export." + w.name
	p, err := ReadLabels(bytes.NewReader(buf.Bytes()), ro)
	if err != nil {
		t.Fatalf("%s: reading the export back: %v\n%q", w.name, err, buf.String())
	}
	var items []Item
	if len(ds.Items) > 0 {
		var ib bytes.Buffer
		if err := WriteItemsCSV(&ib, ds.Items); err != nil {
			return nil, err
		}
		if items, err = ReadItems(bytes.NewReader(ib.Bytes()), ReadOptions{Name: "items.csv"}); err != nil {
			t.Fatalf("%s: reading the items back: %v\n%q", w.name, err, ib.String())
		}
	}
	return BuildDataset(ds.Scheme, p, items, ro)
}

// TestRoundTrip reads every fixture, writes it with every writer, reads the
// export back and requires the identical dataset.
func TestRoundTrip(t *testing.T) {
	for _, f := range fixtures {
		ds, _ := f.load(t)
		for _, w := range writers {
			t.Run(f.file+f.opts.Sheet+"/"+w.name, func(t *testing.T) {
				got, err := roundTrip(t, ds, w)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, ds) {
					t.Errorf("round trip changed the dataset:\n got %+v\nwant %+v", got, ds)
				}
			})
		}
	}
}

func TestReadItems(t *testing.T) {
	rte := []string{"266", "934", "961", "1814", "134", "294"}
	tests := []struct {
		name string
		file string
		opts ReadOptions
		// checks on the item with id
		id        string
		wantText  string // prefix
		wantGold  string
		wantAttrs map[string]string
		wantCovs  map[string]float64
		ids       []string
	}{
		{name: "rte text column", file: "rte_items.csv", id: "934",
			wantText: "The government announced last week that it plans to raise oil prices.", wantGold: "0",
			wantAttrs: map[string]string{"rte1_value": "FALSE", "rte1_task": "IR", "hypothesis": "Oil prices drop"}, ids: rte},
		{name: "rte text and hypothesis", file: "rte_items.csv", opts: ReadOptions{TextColumns: []string{"Text", "hypothesis"}}, id: "934",
			wantText: "The government announced last week that it plans to raise oil prices.\nOil prices drop", wantGold: "0",
			wantAttrs: map[string]string{"rte1_value": "FALSE", "rte1_task": "IR"}, ids: rte},
		// amt_mean is stored as 9.800000000000001 and 8.199999999999999
		// by openpyxl; gold "4.00" is text and stays as typed.
		{name: "xlsx items sheet", file: "wordsim_fleiss.xlsx", opts: ReadOptions{Sheet: "items"}, id: "tool implement",
			wantGold: "2.48", wantCovs: map[string]float64{"amt_mean": 8.2},
			ids: []string{"boy lad", "tool implement", "gem jewel", "brother monk", "lad wizard"}},
		{name: "xlsx items boy lad", file: "wordsim_fleiss.xlsx", opts: ReadOptions{Sheet: "items"}, id: "boy lad",
			wantGold: "3.62", wantCovs: map[string]float64{"amt_mean": 9.8},
			ids: []string{"boy lad", "tool implement", "gem jewel", "brother monk", "lad wizard"}},
		{name: "xlsx items gem jewel", file: "wordsim_fleiss.xlsx", opts: ReadOptions{Sheet: "items"}, id: "gem jewel",
			wantGold: "4.00", wantCovs: map[string]float64{"amt_mean": 9.4},
			ids: []string{"boy lad", "tool implement", "gem jewel", "brother monk", "lad wizard"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Name = tt.file
			items, err := ReadItems(bytes.NewReader(readFixture(t, tt.file)), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			var it *Item
			for i := range items {
				ids = append(ids, items[i].ID)
				if items[i].ID == tt.id {
					it = &items[i]
				}
			}
			if !slices.Equal(ids, tt.ids) {
				t.Errorf("ids %q, want %q", ids, tt.ids)
			}
			if it == nil {
				t.Fatalf("no item %q", tt.id)
			}
			if it.Text != tt.wantText {
				t.Errorf("text %q, want %q", it.Text, tt.wantText)
			}
			if it.Gold != tt.wantGold {
				t.Errorf("gold %q, want %q", it.Gold, tt.wantGold)
			}
			if !reflect.DeepEqual(it.Attrs, tt.wantAttrs) {
				t.Errorf("attrs %v, want %v", it.Attrs, tt.wantAttrs)
			}
			if !reflect.DeepEqual(it.Covariates, tt.wantCovs) {
				t.Errorf("covariates %v, want %v", it.Covariates, tt.wantCovs)
			}
		})
	}
}

func TestCleanNumber(t *testing.T) {
	tests := []struct{ in, want string }{
		{"3", "3"},
		{"2.9999999999999996", "3"},
		{"0.30000000000000004", "0.3"},
		{"9.800000000000001", "9.8"},
		{"3.0000001", "3.0000001"},
		{"12345678901234567890", "12345678901234567890"}, // integers stay exact
		{"1E+21", "1e+21"},
		{"-0.1", "-0.1"},
		{"abc", "abc"},
		{"1.5", "1.5"},
	}
	for _, tt := range tests {
		if got, _ := cleanNumber(tt.in); got != tt.want {
			t.Errorf("cleanNumber(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestXLSXCell(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"3", 3.0}, {"2.5", 2.5}, {"-1", -1.0}, {"100020106", 100020106.0},
		{"007", "007"}, {"3.0", "3.0"}, {"1e5", "1e5"}, {"1.", "1."}, {"-0", "-0"},
		{"0.30000000000000004", "0.30000000000000004"}, {"1234567890123456", "1234567890123456"},
		{"amt001", "amt001"}, {"", ""}, {".5", ".5"}, {"boy lad", "boy lad"},
	}
	for _, tt := range tests {
		if got := xlsxCell(tt.in); got != tt.want {
			t.Errorf("xlsxCell(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

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
