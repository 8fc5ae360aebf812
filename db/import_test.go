package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"concord/annotations"
)

func TestImportIdempotent(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "essays", "ordinal:1..5")
		ds := makeDataset(120, 9, 4)
		ds.Items = []annotations.Item{
			{ID: "extra", Text: "an item nobody labelled", Covariates: map[string]float64{"len": 4}},
			{ID: "i3", Text: "the third essay", Gold: "2", Attrs: map[string]string{"source": "web"}},
		}
		var calls, last int
		res, err := d.Import(ctx, p.ID, ds, annotations.ImportOptions{Progress: func(done, total int) {
			calls++
			if done < last || total != len(ds.Labels) {
				t.Errorf("progress(%d, %d) after %d", done, total, last)
			}
			last = done
		}})
		must(t, err)
		want := annotations.ImportResult{ItemsAdded: 121, RatersAdded: 9, LabelsAdded: 480}
		if res != want {
			t.Fatalf("first import: %+v, want %+v", res, want)
		}
		if calls < 2 || last != len(ds.Labels) {
			t.Errorf("progress called %d times, last done %d; want >= 2 calls ending at %d", calls, last, len(ds.Labels))
		}
		before := tableCounts(t, d, p.ID)
		// What the kernels read: 2 items with texts, 1 with covariates.
		if st, err := d.Stats(ctx, p.ID); err != nil || st.ItemsWithText != 2 || st.ItemsWithCovariates != 1 {
			t.Errorf("stats: %+v, %v; want 2 items with text, 1 with covariates", st, err)
		}

		res, err = d.Import(ctx, p.ID, ds, annotations.ImportOptions{})
		must(t, err)
		want = annotations.ImportResult{LabelsUnchanged: 480}
		if res != want {
			t.Fatalf("re-import: %+v, want %+v", res, want)
		}
		if after := tableCounts(t, d, p.ID); !sameCounts(before, after) {
			t.Fatalf("re-import changed counts: %v -> %v", before, after)
		}

		got, err := d.Dataset(ctx, p.ID)
		must(t, err)
		if !got.Scheme.Equal(p.Scheme) {
			t.Errorf("scheme %v, want %v", got.Scheme, p.Scheme)
		}
		if len(got.Items) != 121 || got.Items[0].ID != "extra" || got.Items[1].ID != "i3" || got.Items[2].ID != "i0" {
			t.Fatalf("items: %d, first %v", len(got.Items), got.Items[:3])
		}
		if !reflect.DeepEqual(got.Items[0], ds.Items[0]) || !reflect.DeepEqual(got.Items[1], ds.Items[1]) {
			t.Errorf("items-file entries read back as %+v, %+v; want %+v, %+v", got.Items[0], got.Items[1], ds.Items[0], ds.Items[1])
		}
		if !sameLabelSet(got.Labels, ds.Labels) {
			t.Errorf("labels differ after round trip")
		}
	})
}

// sameLabelSet compares labels regardless of order.
func sameLabelSet(a, b []annotations.Label) bool {
	if len(a) != len(b) {
		return false
	}
	m := make(map[annotations.Label]int, len(a))
	for _, l := range a {
		m[l]++
	}
	for _, l := range b {
		if m[l] == 0 {
			return false
		}
		m[l]--
	}
	return true
}

func TestImportConflictAndReplace(t *testing.T) {
	// small: the stored labels of the imported items are read by item; large
	// (more than smallImportItems stored items): the project's labels at once.
	for _, size := range []struct {
		name  string
		items int
	}{{"small", 50}, {"large", smallImportItems + 100}} {
		t.Run(size.name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
				p := newProject(t, d, "p", "ordinal:1..5")
				base := makeDataset(size.items, 6, 3)
				_, err := d.Import(ctx, p.ID, base, annotations.ImportOptions{})
				must(t, err)
				before := tableCounts(t, d, p.ID)

				// Three changed labels, one new label on a new item by a new
				// rater, and a changed item text.
				next := &annotations.Dataset{Labels: append([]annotations.Label(nil), base.Labels...)}
				changed := map[int]string{}
				for _, i := range []int{0, 7, len(next.Labels) - 1} {
					old := next.Labels[i].Value
					nv := "1"
					if old == "1" {
						nv = "5"
					}
					next.Labels[i].Value = nv
					changed[i] = old
				}
				next.Labels = append(next.Labels, annotations.Label{Item: "brand-new", Rater: "new-rater", Value: "3"})
				next.Items = []annotations.Item{{ID: "i1", Text: "changed text"}}

				_, err = d.Import(ctx, p.ID, next, annotations.ImportOptions{})
				wantCode(t, err, annotations.ECONFLICT)
				msg := annotations.ErrorMessage(err)
				l0 := next.Labels[0]
				for _, s := range []string{"3 labels differ", `item "` + l0.Item + `"`, `rater "` + l0.Rater + `"`, `stored "` + changed[0] + `"`, `new "` + l0.Value + `"`} {
					if !strings.Contains(msg, s) {
						t.Errorf("conflict message %q lacks %q", msg, s)
					}
				}
				if after := tableCounts(t, d, p.ID); !sameCounts(before, after) {
					t.Fatalf("rejected import changed counts: %v -> %v", before, after)
				}
				items, _, err := d.ListItems(ctx, p.ID, annotations.ItemFilter{Query: "i1"})
				must(t, err)
				for _, it := range items {
					if it.Text != "" {
						t.Errorf("rejected import updated item %q text to %q", it.ID, it.Text)
					}
				}

				res, err := d.Import(ctx, p.ID, next, annotations.ImportOptions{Replace: true})
				must(t, err)
				want := annotations.ImportResult{ItemsAdded: 1, ItemsUpdated: 1, RatersAdded: 1, LabelsAdded: 1, LabelsReplaced: 3, LabelsUnchanged: len(base.Labels) - 3}
				if res != want {
					t.Fatalf("replace: %+v, want %+v", res, want)
				}
				got, err := d.Dataset(ctx, p.ID)
				must(t, err)
				if !sameLabelSet(got.Labels, next.Labels) {
					t.Errorf("labels after replace differ from the import")
				}
				// Replacing again changes nothing.
				res, err = d.Import(ctx, p.ID, next, annotations.ImportOptions{Replace: true})
				must(t, err)
				if want := (annotations.ImportResult{LabelsUnchanged: len(next.Labels)}); res != want {
					t.Errorf("second replace: %+v, want %+v", res, want)
				}
			})
		})
	}
}

func TestImportRejectsBadInput(t *testing.T) {
	bad := func(mod func(ds *annotations.Dataset)) *annotations.Dataset {
		ds := makeDataset(200, 5, 3)
		mod(ds)
		return ds
	}
	cases := []struct {
		name string
		ds   *annotations.Dataset
		want []string // substrings of the error message
	}{
		{"unknown level mid-way", bad(func(ds *annotations.Dataset) { ds.Labels[299].Value = "6" }), []string{"label 300", `unknown level "6"`}},
		{"not canonical", bad(func(ds *annotations.Dataset) { ds.Labels[10].Value = " 3" }), []string{"label 11", "canonical"}},
		{"empty rater", bad(func(ds *annotations.Dataset) { ds.Labels[400].Rater = "" }), []string{"label 401", "empty rater id"}},
		{"duplicate pair", bad(func(ds *annotations.Dataset) { ds.Labels = append(ds.Labels, ds.Labels[5]) }), []string{"labelled twice", "label 6"}},
		{"duplicate item", bad(func(ds *annotations.Dataset) { ds.Items = []annotations.Item{{ID: "a"}, {ID: "a"}} }), []string{"listed twice"}},
		{"bad covariate", bad(func(ds *annotations.Dataset) {
			ds.Items = []annotations.Item{{ID: "a", Covariates: map[string]float64{"": 1}}}
		}), []string{"covariate"}},
		{"NUL in text", bad(func(ds *annotations.Dataset) { ds.Items = []annotations.Item{{ID: "a", Text: "x\x00y"}} }), []string{`item 1 ("a"): text contains a NUL byte`}},
	}
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "ordinal:1..5")
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := d.Import(ctx, p.ID, c.ds, annotations.ImportOptions{})
				wantCode(t, err, annotations.EINVALID)
				for _, s := range c.want {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				if n := tableCounts(t, d, p.ID); n["items"]+n["raters"]+n["labels"] != 0 {
					t.Errorf("rejected import wrote %v", n)
				}
			})
		}
		_, err := d.Import(ctx, p.ID+100, makeDataset(2, 2, 1), annotations.ImportOptions{})
		wantCode(t, err, annotations.ENOTFOUND)
		_, err = d.Import(ctx, p.ID, nil, annotations.ImportOptions{})
		wantCode(t, err, annotations.EINVALID)
	})
}

// TestImportRollsBackMidWrite cancels an import after its first label batch
// has been written: the transaction must leave nothing behind.
func TestImportRollsBackMidWrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		d := b.open(t)
		p := newProject(t, d, "p", "ordinal:1..5")
		ds := makeDataset(unnestRows, 10, 2) // two batches or more in either dialect
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		batches := 0
		_, err := d.Import(ctx, p.ID, ds, annotations.ImportOptions{Progress: func(done, total int) {
			if done > 0 && done < total {
				batches++
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("import cancelled mid-way returned %v, want context.Canceled", err)
		}
		if batches != 1 {
			t.Fatalf("cancelled after %d batches, want 1", batches)
		}
		if n := tableCounts(t, d, p.ID); n["items"]+n["raters"]+n["labels"] != 0 {
			t.Fatalf("cancelled import left %v", n)
		}
		// The database is usable afterwards.
		res, err := d.Import(context.Background(), p.ID, ds, annotations.ImportOptions{})
		must(t, err)
		if res.LabelsAdded != len(ds.Labels) {
			t.Fatalf("import after rollback added %d labels, want %d", res.LabelsAdded, len(ds.Labels))
		}
	})
}

func TestImportItemUpdates(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "nominal:a,b,c")
		steps := []struct {
			items []annotations.Item
			want  annotations.ImportResult
			text  string
			cov   map[string]float64
		}{
			{[]annotations.Item{{ID: "x", Text: "first", Covariates: map[string]float64{"a": 1}}}, annotations.ImportResult{ItemsAdded: 1}, "first", map[string]float64{"a": 1}},
			{[]annotations.Item{{ID: "x", Text: "first", Covariates: map[string]float64{"a": 1}}}, annotations.ImportResult{}, "first", map[string]float64{"a": 1}},
			{[]annotations.Item{{ID: "x", Text: "second"}}, annotations.ImportResult{ItemsUpdated: 1}, "second", map[string]float64{"a": 1}},
			{[]annotations.Item{{ID: "x"}}, annotations.ImportResult{}, "second", map[string]float64{"a": 1}},
			{[]annotations.Item{{ID: "x", Covariates: map[string]float64{"b": 2.5}}}, annotations.ImportResult{ItemsUpdated: 1}, "second", map[string]float64{"b": 2.5}},
		}
		for i, s := range steps {
			res, err := d.Import(ctx, p.ID, &annotations.Dataset{Items: s.items}, annotations.ImportOptions{})
			must(t, err)
			if res != s.want {
				t.Errorf("step %d: %+v, want %+v", i, res, s.want)
			}
			items, total, err := d.ListItems(ctx, p.ID, annotations.ItemFilter{})
			must(t, err)
			if total != 1 || items[0].Text != s.text || !reflect.DeepEqual(items[0].Covariates, s.cov) {
				t.Errorf("step %d: items %+v (total %d), want text %q covariates %v", i, items, total, s.text, s.cov)
			}
		}
	})
}

func TestDatasetOrder(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "binary:no,yes,pos=yes")
		ds := &annotations.Dataset{Labels: []annotations.Label{
			{Item: "b", Rater: "z", Value: "yes"},
			{Item: "a", Rater: "y", Value: "no"},
			{Item: "b", Rater: "y", Value: "no"},
			{Item: "a", Rater: "z", Value: "yes"},
			{Item: "c", Rater: "x", Value: "yes"},
		}}
		_, err := d.Import(ctx, p.ID, ds, annotations.ImportOptions{})
		must(t, err)
		// A second import adds a rater and labels to the first items.
		_, err = d.Import(ctx, p.ID, &annotations.Dataset{Labels: []annotations.Label{
			{Item: "a", Rater: "w", Value: "yes"},
			{Item: "d", Rater: "z", Value: "no"},
		}}, annotations.ImportOptions{})
		must(t, err)
		got, err := d.Dataset(ctx, p.ID)
		must(t, err)
		// Items in order of insertion (b, a, c, d); raters z, y, x, w.
		want := []annotations.Label{
			{Item: "b", Rater: "z", Value: "yes"},
			{Item: "b", Rater: "y", Value: "no"},
			{Item: "a", Rater: "z", Value: "yes"},
			{Item: "a", Rater: "y", Value: "no"},
			{Item: "a", Rater: "w", Value: "yes"},
			{Item: "c", Rater: "x", Value: "yes"},
			{Item: "d", Rater: "z", Value: "no"},
		}
		if !reflect.DeepEqual(got.Labels, want) {
			t.Errorf("labels\n got %v\nwant %v", got.Labels, want)
		}
		if ids := got.ItemIDs(); !reflect.DeepEqual(ids, []string{"b", "a", "c", "d"}) {
			t.Errorf("items %v", ids)
		}
	})
}

// TestImportNewKilled: a process killed in the middle of ImportNew (after
// part of the labels were written) leaves no project: the project row is
// in the labels' transaction (issue 19 item 2: kill -9 during `concord
// import` into a new project left an empty project). The child process
// exits from the progress callback inside the transaction.
func TestImportNewKilled(t *testing.T) {
	if dsn := os.Getenv("CONCORD_TEST_KILLED_IMPORT"); dsn != "" {
		d, err := Open(context.Background(), dsn, Options{})
		if err != nil {
			os.Exit(2)
		}
		p := &annotations.Project{Name: "killed", Scheme: annotations.MustParseScheme("ordinal:1..5")}
		// The first report of written labels comes from inside the
		// transaction (the last one, after the commit, repeats the total).
		_, err = d.ImportNew(context.Background(), p, makeDataset(3000, 20, 5), annotations.ImportOptions{Progress: func(done, total int) {
			if done > 0 {
				os.Exit(3) // as kill -9: no rollback, no cleanup
			}
		}})
		fmt.Fprintln(os.Stderr, "ImportNew returned:", err)
		os.Exit(4) // the import finished without reporting progress in between
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		dsn := b.dsn(t)
		openDSN(t, dsn).Close() // migrate first
		cmd := exec.Command(os.Args[0], "-test.run", "^TestImportNewKilled$")
		cmd.Env = append(os.Environ(), "CONCORD_TEST_KILLED_IMPORT="+dsn)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("child: %v (want exit 3, killed mid-import): %s", err, out)
		}
		d := openDSN(t, dsn)
		ps, err := d.ListProjects(context.Background())
		must(t, err)
		if len(ps) != 0 {
			t.Fatalf("after a killed import into a new project: %d projects (%v), want none", len(ps), ps[0].Name)
		}
		// A completed ImportNew creates the project with its labels.
		p := &annotations.Project{Name: "whole", Scheme: annotations.MustParseScheme("ordinal:1..5")}
		res, err := d.ImportNew(context.Background(), p, makeDataset(50, 4, 2), annotations.ImportOptions{})
		must(t, err)
		if p.ID == 0 || res.LabelsAdded != 100 {
			t.Fatalf("ImportNew: project %d, %+v", p.ID, res)
		}
		_, err = d.ImportNew(context.Background(), &annotations.Project{Name: "whole", Scheme: p.Scheme}, makeDataset(5, 2, 1), annotations.ImportOptions{})
		wantCode(t, err, annotations.ECONFLICT)
	})
}

// Model raters and label probabilities are stored, read back by Dataset,
// ListLabels and ListRaters; a changed probability is a conflict like a
// changed value; a later import can mark a stored rater as a model (never
// back); bad input changes nothing.
func TestImportModelRaters(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "judges", "nominal:0,1")
		ds := &annotations.Dataset{
			Labels: []annotations.Label{
				{Item: "a", Rater: "h1", Value: "1"}, {Item: "a", Rater: "m", Value: "1", Prob: 0.75},
				{Item: "b", Rater: "h1", Value: "0"}, {Item: "b", Rater: "m", Value: "0", Prob: 1},
				{Item: "b", Rater: "h2", Value: "0"},
			},
			ModelRaters: []string{"m"},
		}
		res, err := d.Import(ctx, p.ID, ds, annotations.ImportOptions{})
		must(t, err)
		if res.LabelsAdded != 5 || res.RatersAdded != 3 || res.ModelsMarked != 0 {
			t.Fatalf("first import: %+v", res)
		}
		got, err := d.Dataset(ctx, p.ID)
		must(t, err)
		if !reflect.DeepEqual(got.ModelRaters, []string{"m"}) {
			t.Errorf("model raters %v", got.ModelRaters)
		}
		probs := map[string]float64{}
		for _, l := range got.Labels {
			probs[l.Item+"/"+l.Rater] = l.Prob
		}
		if want := map[string]float64{"a/h1": 0, "a/m": 0.75, "b/h1": 0, "b/m": 1, "b/h2": 0}; !reflect.DeepEqual(probs, want) {
			t.Errorf("probabilities %v, want %v", probs, want)
		}
		ls, _, err := d.ListLabels(ctx, p.ID, annotations.LabelFilter{Rater: "m"})
		must(t, err)
		if len(ls) != 2 || ls[0].Prob != 0.75 || ls[1].Prob != 1 {
			t.Errorf("ListLabels %+v", ls)
		}
		rs, _, err := d.ListRaters(ctx, p.ID, annotations.Page{})
		must(t, err)
		kinds := map[string]string{}
		for _, r := range rs {
			kinds[r.ID] = r.Kind
		}
		if want := map[string]string{"h1": "", "h2": "", "m": "model"}; !reflect.DeepEqual(kinds, want) {
			t.Errorf("rater kinds %v, want %v", kinds, want)
		}

		// The same import again changes nothing.
		res, err = d.Import(ctx, p.ID, ds, annotations.ImportOptions{})
		must(t, err)
		if res.LabelsUnchanged != 5 || res.LabelsAdded+res.LabelsReplaced+res.ModelsMarked != 0 {
			t.Fatalf("repeated import: %+v", res)
		}
		// Another probability is a conflict, named with both.
		changed := &annotations.Dataset{Labels: []annotations.Label{{Item: "a", Rater: "m", Value: "1", Prob: 0.6}}, ModelRaters: []string{"h2"}}
		changed.Labels = append(changed.Labels, annotations.Label{Item: "a", Rater: "h2", Value: "1"})
		_, err = d.Import(ctx, p.ID, changed, annotations.ImportOptions{})
		if annotations.ErrorCode(err) != annotations.ECONFLICT || !strings.Contains(err.Error(), `stored "1" (p 0.75), new "1" (p 0.6)`) {
			t.Fatalf("conflict: %v", err)
		}
		if got, _ := d.Dataset(ctx, p.ID); !reflect.DeepEqual(got.ModelRaters, []string{"m"}) {
			t.Fatalf("a refused import changed the raters: %v", got.ModelRaters)
		}
		res, err = d.Import(ctx, p.ID, changed, annotations.ImportOptions{Replace: true})
		must(t, err)
		if res.LabelsReplaced != 1 || res.LabelsAdded != 1 || res.ModelsMarked != 1 {
			t.Fatalf("replacing import: %+v", res)
		}
		got, err = d.Dataset(ctx, p.ID)
		must(t, err)
		if !reflect.DeepEqual(got.ModelRaters, []string{"h2", "m"}) {
			t.Errorf("model raters after marking h2: %v", got.ModelRaters)
		}
		for _, l := range got.Labels {
			if l.Item == "a" && l.Rater == "m" && l.Prob != 0.6 {
				t.Errorf("replaced probability %v", l.Prob)
			}
		}
		// Bad input: a probability outside (0, 1], a model rater without labels.
		for _, bad := range []*annotations.Dataset{
			{Labels: []annotations.Label{{Item: "c", Rater: "m", Value: "1", Prob: 1.5}}},
			{Labels: []annotations.Label{{Item: "c", Rater: "h1", Value: "1"}}, ModelRaters: []string{"x"}},
		} {
			if _, err := d.Import(ctx, p.ID, bad, annotations.ImportOptions{}); annotations.ErrorCode(err) != annotations.EINVALID {
				t.Errorf("bad import %+v: %v", bad, err)
			}
		}
		if got, _ := d.Dataset(ctx, p.ID); len(got.Labels) != 6 {
			t.Errorf("bad imports changed the labels: %d", len(got.Labels))
		}
	})
}
