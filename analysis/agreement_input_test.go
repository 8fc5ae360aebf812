package analysis

import (
	"context"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"concord/annotations"
	"concord/raters"
)

// readerCase is an input of a counts reader and what it gives.
type readerCase struct {
	name, in string
	want     *CountsInput
	err      string
}

// checkReader runs a counts reader on the cases: a want, or an EINVALID
// error containing err.
func checkReader(t *testing.T, file string, read func(string, io.Reader) (*CountsInput, error), cases []readerCase) {
	t.Helper()
	for _, c := range cases {
		got, err := read(file, strings.NewReader(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || annotations.ErrorCode(err) != annotations.EINVALID {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestReadContingencyTable(t *testing.T) {
	cases := []readerCase{
		{"header", "Type,Ectopic,AIU,NIU\nEctopic,13,0,0\nAIU,0,20,7\nNIU,0,4,56\n",
			&CountsInput{Categories: []string{"Ectopic", "AIU", "NIU"}, Rows: [][]float64{{13, 0, 0}, {0, 20, 7}, {0, 4, 56}}}, ""},
		{"corner empty, spaces", ",a, b\na,1,2\n b ,3,4.5\n",
			&CountsInput{Categories: []string{"a", "b"}, Rows: [][]float64{{1, 2}, {3, 4.5}}}, ""},
		{"numbers only", "1,2\n3,4\n", &CountsInput{Categories: []string{"1", "2"}, Rows: [][]float64{{1, 2}, {3, 4}}}, ""},
		{"negative", ",a,b\na,1,-2\nb,3,4\n", nil, "t.csv: row 2, column 3: \"-2\" is not a count (expected a non-negative number)"},
		{"text count", "1,2\nx,4\n", nil, "t.csv: row 2, column 1: \"x\" is not a count"},
		{"not square", ",a,b\na,1,2\n", nil, "t.csv: 1 rows of counts for 2 categories; a contingency table is square"},
		{"row order", ",a,b\nb,1,2\na,3,4\n", nil, "t.csv: row 2, column 1: category \"b\" where the header's category 1, \"a\", is expected"},
		{"short row", ",a,b\na,1,2\nb,3\n", nil, "t.csv: row 3 has 2 cells; expected 3"},
		{"repeated category", ",a,a\na,1,2\na,3,4\n", nil, "t.csv: row 1, column 3: category \"a\" repeats column 2"},
		{"empty", "", nil, "t.csv: empty file"},
		{"header only", ",a,b\n", nil, "t.csv: a header and no rows of counts"},
		{"one category", ",a\na,1\n", nil, "t.csv: row 1: the header has 2 cells"},
		{"bad quote", ",a,b\na,\"1,2\nb,3,4\n", nil, "t.csv: row 2, column"},
		{"infinite", "1,2\n3,Inf\n", nil, "t.csv: row 2, column 2: \"Inf\" is not a count"},
	}
	checkReader(t, "t.csv", ReadContingencyTable, cases)
}

func TestReadCounts(t *testing.T) {
	cases := []readerCase{
		{"subject column", "Subject,a,b,c\n1,0,6,0\n2,3,0,3\n",
			&CountsInput{Categories: []string{"a", "b", "c"}, Items: []string{"1", "2"}, Rows: [][]float64{{0, 6, 0}, {3, 0, 3}}}, ""},
		{"group ids", "Group,a,b\nA,3,0\nB,2,1\n",
			&CountsInput{Categories: []string{"a", "b"}, Items: []string{"A", "B"}, Rows: [][]float64{{3, 0}, {2, 1}}}, ""},
		{"header without ids", "yes,no\n3,0\n2,1\n",
			&CountsInput{Categories: []string{"yes", "no"}, Rows: [][]float64{{3, 0}, {2, 1}}}, ""},
		{"ids without header", "x1,3,0\nx2,2.5,0.5\n",
			&CountsInput{Categories: []string{"1", "2"}, Items: []string{"x1", "x2"}, Rows: [][]float64{{3, 0}, {2.5, 0.5}}}, ""},
		{"numbers only", "3,0\n2,1\n", &CountsInput{Categories: []string{"1", "2"}, Rows: [][]float64{{3, 0}, {2, 1}}}, ""},
		{"negative", "item,a,b\ni1,3,0\ni2,-1,1\n", nil, "c.csv: row 3, column 2: \"-1\" is not a count (expected a non-negative number)"},
		{"text", "a,b\n3,x\n", nil, "c.csv: row 2, column 2: \"x\" is not a count"},
		{"short row", "item,a,b\ni1,3,0\ni2,1\n", nil, "c.csv: row 3 has 2 cells; expected 3 (an item id and 2 categories)"},
		{"one category", "item,a\ni1,3\n", nil, "c.csv: 1 categories"},
		{"empty", "", nil, "c.csv: empty file"},
		{"header only", "a,b\n", nil, "c.csv: a header and no rows of counts"},
		{"empty category", "item,a,\ni1,1,2\n", nil, "c.csv: row 1, column 3: empty category name"},
	}
	checkReader(t, "c.csv", ReadCounts, cases)
}

// TestTableAgreementIrrCAC reads irrCAC's example files with the readers
// and checks two of irrCAC's numbers (raters/testdata/
// reference_irrcac_tables.csv, made by make_reference_irrcac_tables.R from
// irrCAC 1.0's kappa2.table and fleiss.kappa.dist), so that the readers
// hand raters the table irrCAC read.
func TestTableAgreementIrrCAC(t *testing.T) {
	cases := []struct {
		kind, file string
		pick       func(*raters.Report) float64
		want       float64
	}{
		{"table", "irrcac_cont3x3abstractors.csv", func(r *raters.Report) float64 { return r.CohenKappa[0].Unweighted.Value }, 0.796409402183972},
		{"counts", "irrcac_distrib.6raters.csv", func(r *raters.Report) float64 { return r.FleissKappa.Value }, 0.413926499032882},
		{"counts", "irrcac_cac.dist4cat.csv", func(r *raters.Report) float64 { return r.FleissKappa.Value }, 0.346186085498743},
	}
	for _, c := range cases {
		f, err := os.Open("../raters/testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		read := ReadCounts
		if c.kind == "table" {
			read = ReadContingencyTable
		}
		in, err := read(c.file, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		rep, err := TableAgreement(context.Background(), c.kind, in, raters.TableOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.pick(rep.Report); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %.15g, irrCAC %.15g", c.file, got, c.want)
		}
	}
}

func TestParseAgreementOptions(t *testing.T) {
	ws, err := ParseWeightsList("radical, circular,bipolar,radical")
	if err != nil || !reflect.DeepEqual(ws, []raters.Weights{raters.RadicalWeights, raters.CircularWeights, raters.BipolarWeights}) {
		t.Errorf("weights: %v %v", ws, err)
	}
	if ws, err := ParseWeightsList("all"); err != nil || len(ws) != 7 {
		t.Errorf("all: %v %v", ws, err)
	}
	if _, err := ParseWeightsList("linear,cubic"); err == nil || !strings.Contains(err.Error(), `"cubic": expected all or`) {
		t.Errorf("cubic: %v", err)
	}
	if v, err := ParseNull(" 0.5"); err != nil || v != 0.5 {
		t.Errorf("null: %v %v", v, err)
	}
	for _, bad := range []string{"NaN", "x", "Inf"} {
		if _, err := ParseNull(bad); err == nil {
			t.Errorf("null %q accepted", bad)
		}
	}
	if k, err := ParseCI("normal"); err != nil || k != raters.CINormal {
		t.Errorf("ci: %v %v", k, err)
	}
	if _, err := ParseCI("z"); err == nil || err.Error() != `"z": expected t or normal` {
		t.Errorf("ci z: %v", err)
	}
}

// FuzzReadContingencyTable: any input gives a square table of
// non-negative finite counts with named categories, or an EINVALID error.
func FuzzReadContingencyTable(f *testing.F) {
	seeds := []string{"Type,Ectopic,AIU,NIU\nEctopic,13,0,0\nAIU,0,20,7\nNIU,0,4,56\n", "1,2\n3,4\n", ",a,b\na,1,-2\nb,3,4\n", "\"", ",a\n"}
	fuzzCounts(f, "table", "t.csv", seeds, ReadContingencyTable, func(t *testing.T, in *CountsInput) {
		if k := len(in.Categories); k < 2 || len(in.Rows) != k {
			t.Fatalf("%d categories, %d rows", k, len(in.Rows))
		}
	})
}

// FuzzReadCounts: any input gives rows of non-negative finite counts, one
// per item, or an EINVALID error; the analysis then answers or refuses
// with EINVALID.
func FuzzReadCounts(f *testing.F) {
	seeds := []string{"Subject,a,b,c\n1,0,6,0\n2,3,0,3\n", "3,0\n2,1\n", "x1,3,0\nx2,2.5,0.5\n", "a,b\n", "item,a,\n"}
	fuzzCounts(f, "counts", "c.csv", seeds, ReadCounts, func(t *testing.T, in *CountsInput) {
		if q := len(in.Categories); q < 2 || len(in.Rows) == 0 || (in.Items != nil && len(in.Items) != len(in.Rows)) {
			t.Fatalf("%d categories, %d rows, %d ids", q, len(in.Rows), len(in.Items))
		}
	})
}

// fuzzCounts fuzzes a reader of counts (read, of the file name, from the
// seeds): any input is refused with an EINVALID error that names the file,
// or gives counts of the shape that shape checks, every row with a
// non-negative finite count per category, which TableAgreement of the
// kind answers or refuses with EINVALID.
func fuzzCounts(f *testing.F, kind, name string, seeds []string, read func(string, io.Reader) (*CountsInput, error), shape func(*testing.T, *CountsInput)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, err := read(name, strings.NewReader(s))
		if err != nil {
			if annotations.ErrorCode(err) != annotations.EINVALID || !strings.HasPrefix(err.Error(), name+": ") {
				t.Fatalf("error %v", err)
			}
			return
		}
		shape(t, in)
		q := len(in.Categories)
		for _, row := range in.Rows {
			if len(row) != q {
				t.Fatalf("row of %d for %d categories", len(row), q)
			}
			for _, v := range row {
				if !(v >= 0) || math.IsInf(v, 0) {
					t.Fatalf("count %v", v)
				}
			}
		}
		if _, err := TableAgreement(context.Background(), kind, in, raters.TableOptions{}); err != nil && annotations.ErrorCode(err) != annotations.EINVALID {
			t.Fatalf("analysis: %v", err)
		}
	})
}

func TestReadErrorMatrices(t *testing.T) {
	raterIDs, cats := []string{"w1", "w2"}, []string{"no", "yes"}
	got, err := ReadErrorMatrices("i.csv", strings.NewReader("rater,true,label,value\nw2,yes,yes,99\nw2,yes,no,1\n"), raterIDs, cats)
	if err != nil || got[0] != nil || !reflect.DeepEqual(got[1], []float64{0, 0, 1, 99}) {
		t.Errorf("got %v, %v", got, err)
	}
	for in, want := range map[string]string{
		"rater,true,label\n":                    "i.csv: row 1: the header has 3 cells",
		"rater,truth,label,value\n":             "i.csv: row 1, column 2: header \"truth\"; expected \"true\"",
		"rater,true,label,value\nw9,no,no,1\n":  "i.csv: row 2, column 1: rater \"w9\" has no labels in the data",
		"rater,true,label,value\nw1,no,x,1\n":   "i.csv: row 2, column 3: \"x\" is not a category of the scheme",
		"rater,true,label,value\nw1,no,no,-1\n": "i.csv: row 2, column 4: \"-1\" is not a count",
		"rater,true,label,value\nw1,no,no\n":    "i.csv: row 2 has 3 cells; expected 4",
		"":                                      "i.csv: empty file",
	} {
		if _, err := ReadErrorMatrices("i.csv", strings.NewReader(in), raterIDs, cats); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// FuzzReadErrorMatrices: any input gives one k×k matrix of non-negative
// counts per rater (or none), or an EINVALID error naming the file.
func FuzzReadErrorMatrices(f *testing.F) {
	for _, s := range []string{"rater,true,label,value\nw2,yes,yes,99\nw2,yes,no,1\n", "rater,true,label,value\nw9,no,no,1\n", "x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ReadErrorMatrices("i.csv", strings.NewReader(s), []string{"w1", "w2"}, []string{"no", "yes"})
		if err != nil {
			if annotations.ErrorCode(err) != annotations.EINVALID || !strings.HasPrefix(err.Error(), "i.csv: ") {
				t.Fatalf("error %v", err)
			}
			return
		}
		if len(m) != 2 {
			t.Fatalf("%d matrices", len(m))
		}
		for _, x := range m {
			if x != nil && len(x) != 4 {
				t.Fatalf("matrix of %d", len(x))
			}
			for _, v := range x {
				if !(v >= 0) || math.IsInf(v, 0) {
					t.Fatalf("cell %v", v)
				}
			}
		}
	})
}
