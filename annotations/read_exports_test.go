package annotations

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"concord/internal/testutil"
)

// Real exports of annotation tools, as they ship (issue 20).

func readExport(t *testing.T, name string, opts ReadOptions) (*Parsed, *Dataset) {
	t.Helper()
	if opts.Name == "" {
		opts.Name = name
	}
	p, err := ReadLabels(bytes.NewReader(readFixture(t, name)), opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	values := make([]string, len(p.Labels))
	for i, l := range p.Labels {
		values[i] = l.Value
	}
	s, _, err := InferScheme(values)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := BuildDataset(s, p, nil, opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p, ds
}

func readProblems(t *testing.T, data string, opts ReadOptions) []Problem {
	t.Helper()
	_, err := ReadLabels(strings.NewReader(data), opts)
	var pl *ProblemList
	if !errors.As(err, &pl) {
		t.Fatalf("got %v, want problems", err)
	}
	return pl.Problems
}

func lsRef(t *testing.T, ds *Dataset, item string) LabelStudioRef {
	t.Helper()
	for i := range ds.Items {
		if ds.Items[i].ID == item {
			ref, ok := ds.Items[i].LabelStudio()
			if !ok {
				t.Fatalf("item %s has no Label Studio reference (attrs %v)", item, ds.Items[i].Attrs)
			}
			return ref
		}
	}
	t.Fatalf("no item %s", item)
	return LabelStudioRef{}
}

func TestLabelStudioKeepsTaskAndControl(t *testing.T) {
	_, ds := readExport(t, "labelstudio_anaesthesia.json", ReadOptions{})
	ref := lsRef(t, ds, "patient-3")
	if string(ref.Task) != "103" || ref.FromName != "fitness" || ref.ToName != "form" || ref.Type != "rating" {
		t.Errorf("patient-3: %+v (task %s)", ref, ref.Task)
	}
	_, ds = readExport(t, "labelstudio_rte.json", ReadOptions{})
	ref = lsRef(t, ds, "934")
	if string(ref.Task) != "934" || ref.FromName != "entailment" || ref.ToName != "text" || ref.Type != "choices" || ref.TextKey != "text" {
		t.Errorf("934: %+v", ref)
	}
	// The task's data object as the export had it (text and hypothesis).
	if got, want := lsData(t, ref.Data), lsExportData(t, "labelstudio_rte.json")["934"]; !reflect.DeepEqual(got, want) || len(want) != 2 {
		t.Errorf("934: data %v, want %v", got, want)
	}
}

// lsData decodes a kept data object.
func lsData(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("data %s: %v", raw, err)
	}
	return m
}

// lsExportData returns the data object of each task of a Label Studio JSON
// export, by task id.
func lsExportData(t *testing.T, name string) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var tasks []struct {
		ID   json.RawMessage `json:"id"`
		Data map[string]any  `json:"data"`
	}
	if err := json.Unmarshal(b, &tasks); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tk := range tasks {
		out[string(tk.ID)] = tk.Data
	}
	return out
}

// The JSON-MIN and CSV exports of the same project read to the labels of
// its JSON export.
func TestLabelStudioMinAndCSV(t *testing.T) {
	_, want := readExport(t, "labelstudio_rte.json", ReadOptions{})
	for _, name := range []string{"labelstudio_rte_min.json", "labelstudio_rte.csv"} {
		t.Run(name, func(t *testing.T) {
			p, ds := readExport(t, name, ReadOptions{})
			if p.Format != FormatLabelStudio {
				t.Errorf("format %q", p.Format)
			}
			if !slices.Equal(ds.Labels, want.Labels) {
				t.Errorf("labels differ from the JSON export's:\n got %v\nwant %v", ds.Labels, want.Labels)
			}
			if len(ds.Items) != 4 || ds.Items[0].Text != want.Items[0].Text {
				t.Errorf("items %+v", ds.Items)
			}
			ref := lsRef(t, ds, "1814")
			if string(ref.Task) != "1814" || ref.FromName != "entailment" || ref.Type != "choices" {
				t.Errorf("1814: %+v", ref)
			}
			// The flattened export's data fields are the task's data.
			if got, want := lsData(t, ref.Data), lsExportData(t, "labelstudio_rte.json")["1814"]; !reflect.DeepEqual(got, want) {
				t.Errorf("1814: data %v, want %v", got, want)
			}
			if !slices.Equal(p.Unused, []string{"hypothesis"}) {
				t.Errorf("unused %v", p.Unused)
			}
		})
	}
	p, ds := readExport(t, "labelstudio_anaesthesia_min.json", ReadOptions{})
	_, want = readExport(t, "labelstudio_anaesthesia.json", ReadOptions{})
	if !slices.Equal(ds.Labels, want.Labels) {
		t.Errorf("rating JSON-MIN: labels differ:\n got %v\nwant %v", ds.Labels, want.Labels)
	}
	if ref := lsRef(t, ds, "patient-2"); string(ref.Task) != "102" || ref.FromName != "fitness" || ref.Type != "rating" {
		t.Errorf("patient-2: %+v", ref)
	}
	if !slices.Equal(p.Unused, []string{"form"}) {
		t.Errorf("unused %v", p.Unused)
	}
}

func TestLabelStudioFlatControls(t *testing.T) {
	const two = `[{"text": "a", "id": 1, "sentiment": "pos", "topic": "news", "annotator": "x@y", "annotation_id": 1},
{"text": "b", "id": 2, "sentiment": "neg", "topic": "sport", "annotator": "x@y", "annotation_id": 2},
{"text": "b", "id": 2, "sentiment": "neg", "topic": "news", "annotator": "z@y", "annotation_id": 3}]`
	ps := readProblems(t, two, ReadOptions{Name: "min.json"})
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, `2 fields could be the labelling control ("sentiment", "topic"); pick one with --label-col sentiment`) {
		t.Errorf("problems %v", ps)
	}
	p, err := ReadLabels(strings.NewReader(two), ReadOptions{Name: "min.json", LabelCol: "topic"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Labels) != 3 || p.Labels[1].Value != "sport" || p.Labels[1].Rater != "x@y" || p.Labels[1].Item != "2" {
		t.Errorf("labels %+v", p.Labels)
	}
	ps = readProblems(t, two, ReadOptions{Name: "min.json", LabelCol: "mood"})
	if !strings.Contains(ps[0].Msg, `no field "mood", named with --label-col`) {
		t.Errorf("problems %v", ps)
	}
	// The CSV export, a Rating control: the list of result values as JSON
	// text in the cell.
	const csv = "id,text,quality,annotator,annotation_id,created_at,updated_at,lead_time\n" +
		"7,first,\"[{\"\"rating\"\": 4}]\",1,11,,,\n" +
		"7,first,\"[{\"\"rating\"\": 5}]\",2,12,,,\n" +
		"8,second,,1,13,,,\n"
	p, err = ReadLabels(strings.NewReader(csv), ReadOptions{Name: "ls.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Labels) != 2 || p.Labels[1].Value != "5" || p.Labels[1].Rater != "2" {
		t.Errorf("labels %+v", p.Labels)
	}
	if ref, _ := p.Items[1].LabelStudio(); string(ref.Task) != "8" || ref.Type != "rating" || ref.FromName != "quality" {
		t.Errorf("item 8: %+v", ref)
	}
}

// Several controls in a JSON export: the message names the flag that picks
// one and lists the controls; the flag picks it.
func TestLabelStudioLabelColPicksControl(t *testing.T) {
	const two = `[{"id": 1, "data": {"text": "a"}, "annotations": [{"completed_by": 1, "result": [
 {"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": ["pos"]}},
 {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": 3}}]}]}]`
	ps := readProblems(t, two, ReadOptions{Name: "ls.json"})
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, `labels come from 2 controls ("quality", "sentiment"); pick one with --label-col quality`) {
		t.Errorf("problems %v", ps)
	}
	p, err := ReadLabels(strings.NewReader(two), ReadOptions{Name: "ls.json", LabelCol: "sentiment"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Labels) != 1 || p.Labels[0].Value != "pos" {
		t.Errorf("labels %+v", p.Labels)
	}
	if ref, _ := p.Items[0].LabelStudio(); ref.FromName != "sentiment" || ref.ToName != "text" || ref.Type != "choices" {
		t.Errorf("ref %+v", ref)
	}
}

// doccano's export as it ships: a ZIP of one JSONL file per annotator,
// named after them, whose records name no annotator.
func TestDoccanoExportZip(t *testing.T) {
	p, ds := readExport(t, "doccano_rte_export.zip", ReadOptions{})
	if p.Format != FormatDoccano {
		t.Errorf("format %q", p.Format)
	}
	if got := ds.RaterIDs(); !slices.Equal(got, []string{"amt004", "amt005", "amt006"}) {
		t.Errorf("raters %v", got)
	}
	if len(ds.Labels) != 15 || len(ds.Items) != 5 || ds.Items[0].Text == "" {
		t.Errorf("%d labels, %d items", len(ds.Labels), len(ds.Items))
	}
	// One annotator's file alone: the rater from the file name, or --rater.
	one := testutil.ZipFixture(t, "testdata/doccano_rte_export.zip.d")
	zr, err := zip.NewReader(bytes.NewReader(one), int64(len(one)))
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := zr.File[0].Open()
	var buf bytes.Buffer
	buf.ReadFrom(rc)
	rc.Close()
	p, err = ReadLabels(bytes.NewReader(buf.Bytes()), ReadOptions{Name: "exports/amt004.jsonl"})
	if err != nil || p.Labels[0].Rater != "amt004" {
		t.Fatalf("rater from the file name: %v %+v", err, p)
	}
	p, err = ReadLabels(bytes.NewReader(buf.Bytes()), ReadOptions{Name: "amt004.jsonl", Rater: "alice"})
	if err != nil || p.Labels[0].Rater != "alice" {
		t.Fatalf("--rater: %v %+v", err, p)
	}
	ps := readProblems(t, buf.String(), ReadOptions{Format: FormatDoccano})
	if !strings.Contains(ps[0].Msg, "name the rater with --rater NAME") {
		t.Errorf("no name: %v", ps)
	}
	// A ZIP read as a workbook is still refused as one.
	ps = readProblems(t, string(one), ReadOptions{Name: "x.xlsx", Format: FormatXLSX})
	if !strings.Contains(ps[0].Msg, "a ZIP archive without xl/workbook.xml (it holds amt004.jsonl, amt005.jsonl, amt006.jsonl)") {
		t.Errorf("as xlsx: %v", ps)
	}
}

// Spreadsheets with natural headers read as long tables; a header with a
// label alias is never read as a wide table.
func TestNaturalHeaders(t *testing.T) {
	p, ds := readExport(t, "essays_graders.csv", ReadOptions{})
	if p.Format != FormatCSVLong || len(ds.Labels) != 18 || len(ds.RaterIDs()) < 2 {
		t.Errorf("format %q, %d labels, raters %v", p.Format, len(ds.Labels), ds.RaterIDs())
	}
	const sheet = "Essay,Person,Score\nE1,ann,3\nE1,bob,4\n"
	ps := readProblems(t, sheet, ReadOptions{Name: "s.csv"})
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, `no rater id column in the header "Essay", "Person", "Score"`) ||
		!strings.Contains(ps[0].Msg, "--rater-col COLUMN") || strings.Contains(ps[0].Msg, "wide") {
		t.Errorf("problems %v", ps)
	}
	p, err := ReadLabels(strings.NewReader(sheet), ReadOptions{Name: "s.csv", RaterCol: "person"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Labels) != 2 || p.Labels[1] != (RawLabel{Item: "E1", Rater: "bob", Value: "4", Line: 3, ItemCol: "Essay", RaterCol: "Person", ValueCol: "Score"}) {
		t.Errorf("labels %+v", p.Labels)
	}
	// Every column named outright.
	const odd = "Doc,Who,Verdict,Note\nd1,ann,yes,x\n"
	p, err = ReadLabels(strings.NewReader(odd), ReadOptions{Name: "o.csv", ItemCol: "Doc", RaterCol: "Who", LabelCol: "Verdict"})
	if err != nil || len(p.Labels) != 1 || p.Labels[0].Value != "yes" || !slices.Equal(p.Unused, []string{"Note"}) {
		t.Errorf("%v %+v", err, p)
	}
	ps = readProblems(t, odd, ReadOptions{Name: "o.csv", ItemCol: "Document"})
	if !strings.Contains(ps[0].Msg, `no column "Document", named with --item-col COLUMN`) {
		t.Errorf("problems %v", ps)
	}
	// One rater's sheet: --rater stands for the rater column.
	p, err = ReadLabels(strings.NewReader("Essay,Score\nE1,3\n"), ReadOptions{Name: "one.csv", Rater: "me"})
	if err != nil || p.Labels[0].Rater != "me" {
		t.Errorf("%v %+v", err, p)
	}
	// JSON records take the names too.
	p, err = ReadLabels(strings.NewReader(`[{"doc": "d1", "who": "ann", "verdict": "yes"}]`), ReadOptions{Name: "r.json", RaterCol: "who", LabelCol: "verdict"})
	if err != nil || p.Labels[0] != (RawLabel{Item: "d1", Rater: "ann", Value: "yes", Line: 1, Row: 1, ItemCol: "doc", RaterCol: "who", ValueCol: "verdict"}) {
		t.Errorf("%v %+v", err, p)
	}
}

// The text columns an import names are joined into the item text of a
// Label Studio export (JSON, JSON-MIN, CSV) and are not unused; a name the
// export lacks is a problem naming it.
func TestLabelStudioTextColumns(t *testing.T) {
	data := lsExportData(t, "labelstudio_rte.json")["1814"]
	want := data["text"].(string) + "\n" + data["hypothesis"].(string)
	opts := ReadOptions{TextColumns: []string{"text", "hypothesis"}}
	for _, name := range []string{"labelstudio_rte.json", "labelstudio_rte_min.json", "labelstudio_rte.csv"} {
		t.Run(name, func(t *testing.T) {
			p, ds := readExport(t, name, opts)
			if len(p.Unused) != 0 {
				t.Errorf("unused %v", p.Unused)
			}
			i := slices.IndexFunc(ds.Items, func(it Item) bool { return it.ID == "1814" })
			if i < 0 || ds.Items[i].Text != want {
				t.Fatalf("1814: items %+v, want text %q", ds.Items, want)
			}
			if ref := lsRef(t, ds, "1814"); ref.TextKey != "text" {
				t.Errorf("1814: text key %q", ref.TextKey)
			}
			_, err := ReadLabels(bytes.NewReader(readFixture(t, name)), ReadOptions{Name: name, TextColumns: []string{"text", "premise"}})
			if err == nil || !strings.Contains(err.Error(), `"premise"`) || !strings.Contains(err.Error(), TextColsFlag) {
				t.Errorf("missing text column: %v", err)
			}
		})
	}
}
