package db

import (
	"context"
	"reflect"
	"testing"

	"concord/annotations"
)

// listFixture is a small project: items a..e (e unlabelled, with text), raters
// r1..r3.
func listFixture(t *testing.T, d *DB) *annotations.Project {
	t.Helper()
	p := newProject(t, d, "lists", "ordinal:1..3")
	ds := &annotations.Dataset{
		Items: []annotations.Item{
			{ID: "a", Text: "Alpha 100% sure"},
			{ID: "e", Text: "the_unlabelled one"},
		},
		Labels: []annotations.Label{
			{Item: "a", Rater: "r1", Value: "1"}, {Item: "a", Rater: "r2", Value: "2"}, {Item: "a", Rater: "r3", Value: "2"},
			{Item: "b", Rater: "r1", Value: "3"}, {Item: "b", Rater: "r2", Value: "3"},
			{Item: "c", Rater: "r2", Value: "1"},
			{Item: "d", Rater: "r1", Value: "2"}, {Item: "d", Rater: "r3", Value: "2"},
		},
	}
	_, err := d.Import(context.Background(), p.ID, ds, annotations.ImportOptions{})
	must(t, err)
	return p
}

func TestListLabels(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := listFixture(t, d)
		l := func(item, rater, v string) annotations.Label {
			return annotations.Label{Item: item, Rater: rater, Value: v}
		}
		cases := []struct {
			name  string
			f     annotations.LabelFilter
			want  []annotations.Label
			total int
		}{
			{"all", annotations.LabelFilter{}, []annotations.Label{l("a", "r1", "1"), l("a", "r2", "2"), l("a", "r3", "2"), l("b", "r1", "3"), l("b", "r2", "3"), l("c", "r2", "1"), l("d", "r1", "2"), l("d", "r3", "2")}, 8},
			{"item", annotations.LabelFilter{Item: "b"}, []annotations.Label{l("b", "r1", "3"), l("b", "r2", "3")}, 2},
			{"rater", annotations.LabelFilter{Rater: "r3"}, []annotations.Label{l("a", "r3", "2"), l("d", "r3", "2")}, 2},
			{"value", annotations.LabelFilter{Value: "2"}, []annotations.Label{l("a", "r2", "2"), l("a", "r3", "2"), l("d", "r1", "2"), l("d", "r3", "2")}, 4},
			{"rater and value", annotations.LabelFilter{Rater: "r1", Value: "2"}, []annotations.Label{l("d", "r1", "2")}, 1},
			{"page", annotations.LabelFilter{Page: annotations.Page{Offset: 2, Limit: 3}}, []annotations.Label{l("a", "r3", "2"), l("b", "r1", "3"), l("b", "r2", "3")}, 8},
			{"offset only", annotations.LabelFilter{Page: annotations.Page{Offset: 6}}, []annotations.Label{l("d", "r1", "2"), l("d", "r3", "2")}, 8},
			{"past the end", annotations.LabelFilter{Page: annotations.Page{Offset: 20, Limit: 5}}, []annotations.Label{}, 8},
			{"no match", annotations.LabelFilter{Item: "zzz"}, []annotations.Label{}, 0},
		}
		for _, c := range cases {
			got, total, err := d.ListLabels(ctx, p.ID, c.f)
			must(t, err)
			if total != c.total || !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: got %v (total %d), want %v (total %d)", c.name, got, total, c.want, c.total)
			}
		}
		_, _, err := d.ListLabels(ctx, p.ID, annotations.LabelFilter{Page: annotations.Page{Limit: -1}})
		wantCode(t, err, annotations.EINVALID)
		_, _, err = d.ListLabels(ctx, p.ID+1, annotations.LabelFilter{})
		wantCode(t, err, annotations.ENOTFOUND)
	})
}

func TestListItemsAndRaters(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := listFixture(t, d)
		yes, no := true, false
		cases := []struct {
			name  string
			f     annotations.ItemFilter
			want  []string
			total int
		}{
			{"all", annotations.ItemFilter{}, []string{"a:3", "e:0", "b:2", "c:1", "d:2"}, 5},
			{"labelled", annotations.ItemFilter{Labelled: &yes}, []string{"a:3", "b:2", "c:1", "d:2"}, 4},
			{"unlabelled", annotations.ItemFilter{Labelled: &no}, []string{"e:0"}, 1},
			{"query text, any case", annotations.ItemFilter{Query: "ALPHA"}, []string{"a:3"}, 1},
			{"query is no pattern: %", annotations.ItemFilter{Query: "100%"}, []string{"a:3"}, 1},
			{"query is no pattern: _", annotations.ItemFilter{Query: "e_u"}, []string{"e:0"}, 1},
			{"query id", annotations.ItemFilter{Query: "c"}, []string{"c:1"}, 1},
			{"page", annotations.ItemFilter{Page: annotations.Page{Offset: 1, Limit: 2}}, []string{"e:0", "b:2"}, 5},
		}
		for _, c := range cases {
			items, total, err := d.ListItems(ctx, p.ID, c.f)
			must(t, err)
			var got []string
			for _, it := range items {
				got = append(got, it.ID+":"+string(rune('0'+it.Labels)))
			}
			if total != c.total || !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: got %v (total %d), want %v (total %d)", c.name, got, total, c.want, c.total)
			}
		}
		items, _, err := d.ListItems(ctx, p.ID, annotations.ItemFilter{Query: "alpha"})
		must(t, err)
		if items[0].Text != "Alpha 100% sure" {
			t.Errorf("item text %q", items[0].Text)
		}

		raters, total, err := d.ListRaters(ctx, p.ID, annotations.Page{})
		must(t, err)
		want := []annotations.RaterSummary{{Rater: annotations.Rater{ID: "r1"}, Labels: 3}, {Rater: annotations.Rater{ID: "r2"}, Labels: 3}, {Rater: annotations.Rater{ID: "r3"}, Labels: 2}}
		if total != 3 || !reflect.DeepEqual(raters, want) {
			t.Errorf("raters %v (total %d), want %v", raters, total, want)
		}
		raters, total, err = d.ListRaters(ctx, p.ID, annotations.Page{Offset: 1, Limit: 1})
		must(t, err)
		if total != 3 || len(raters) != 1 || raters[0].ID != "r2" {
			t.Errorf("raters page %v (total %d)", raters, total)
		}
	})
}

func TestStatsAndDeleteLabels(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := listFixture(t, d)
		wantStats := func(what string, want *annotations.Stats) {
			t.Helper()
			st, err := d.Stats(ctx, p.ID)
			must(t, err)
			if !reflect.DeepEqual(st, want) {
				t.Errorf("%s %+v, want %+v", what, st, want)
			}
		}
		wantStats("stats", &annotations.Stats{
			Items: 5, LabelledItems: 4, Raters: 3, Labels: 8, LabelsPerItem: 2,
			PerRater:      map[string]int{"r1": 3, "r2": 3, "r3": 2},
			Distribution:  map[string]int{"1": 2, "2": 4, "3": 2},
			ItemsWithText: 2,
		})

		n, err := d.DeleteLabels(ctx, p.ID, annotations.LabelFilter{Rater: "r2", Page: annotations.Page{Limit: 1}})
		must(t, err)
		if n != 3 {
			t.Errorf("deleted %d labels of r2, want 3 (paging ignored)", n)
		}
		n, err = d.DeleteLabels(ctx, p.ID, annotations.LabelFilter{Item: "d", Value: "2"})
		must(t, err)
		if n != 2 {
			t.Errorf("deleted %d labels of d, want 2", n)
		}
		wantStats("stats after delete", &annotations.Stats{
			Items: 5, LabelledItems: 2, Raters: 3, Labels: 3, LabelsPerItem: 1.5,
			PerRater:      map[string]int{"r1": 2, "r2": 0, "r3": 1},
			Distribution:  map[string]int{"1": 1, "2": 1, "3": 1},
			ItemsWithText: 2,
		})
		_, err = d.Stats(ctx, p.ID+1)
		wantCode(t, err, annotations.ENOTFOUND)
		_, err = d.DeleteLabels(ctx, p.ID+1, annotations.LabelFilter{})
		wantCode(t, err, annotations.ENOTFOUND)
	})
}

func TestProjects(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
		if d.Dialect() != b.name {
			t.Errorf("Dialect() = %q, want %q", d.Dialect(), b.name)
		}
		must(t, d.Ping(ctx))
		p := newProject(t, d, "rte", "binary:0,1,pos=1")
		if p.ID == 0 || p.CreatedAt.IsZero() {
			t.Fatalf("created project %+v", p)
		}
		q := newProject(t, d, "essays", "ordinal:poor,fair,good")

		err := d.CreateProject(ctx, &annotations.Project{Name: "rte", Scheme: annotations.MustParseScheme("ordinal:1..3")})
		wantCode(t, err, annotations.ECONFLICT)
		err = d.CreateProject(ctx, &annotations.Project{Name: "", Scheme: annotations.MustParseScheme("ordinal:1..3")})
		wantCode(t, err, annotations.EINVALID)
		err = d.CreateProject(ctx, &annotations.Project{Name: "x", Scheme: annotations.Scheme{Kind: annotations.Ordinal}})
		wantCode(t, err, annotations.EINVALID)

		got, err := d.FindProjectByID(ctx, p.ID)
		must(t, err)
		if got.Name != "rte" || !got.Scheme.Equal(p.Scheme) || !got.CreatedAt.Equal(p.CreatedAt) {
			t.Errorf("FindProjectByID = %+v, want %+v", got, p)
		}
		got, err = d.FindProjectByName(ctx, "essays")
		must(t, err)
		if got.ID != q.ID || !got.Scheme.Equal(q.Scheme) {
			t.Errorf("FindProjectByName = %+v, want %+v", got, q)
		}
		_, err = d.FindProjectByID(ctx, q.ID+10)
		wantCode(t, err, annotations.ENOTFOUND)
		_, err = d.FindProjectByName(ctx, "nope")
		wantCode(t, err, annotations.ENOTFOUND)

		_, err = d.Import(ctx, q.ID, &annotations.Dataset{Labels: []annotations.Label{
			{Item: "e1", Rater: "ann", Value: "good"}, {Item: "e1", Rater: "bob", Value: "poor"}, {Item: "e2", Rater: "ann", Value: "fair"},
		}}, annotations.ImportOptions{})
		must(t, err)
		list, err := d.ListProjects(ctx)
		must(t, err)
		if len(list) != 2 || list[0].Name != "essays" || list[0].Items != 2 || list[0].Raters != 2 || list[0].Labels != 3 ||
			list[1].Name != "rte" || list[1].Labels != 0 || !list[0].Scheme.Equal(q.Scheme) {
			t.Errorf("ListProjects = %+v", list)
		}

		must(t, d.DeleteProject(ctx, q.ID))
		wantCode(t, d.DeleteProject(ctx, q.ID), annotations.ENOTFOUND)
		list, err = d.ListProjects(ctx)
		must(t, err)
		if len(list) != 1 || list[0].ID != p.ID {
			t.Errorf("after delete: %+v", list)
		}
	})
}

// TestCascadeDelete checks that deleting a project removes everything it
// owns, through DeleteProject and through the schema's ON DELETE CASCADE, and
// leaves other projects alone.
func TestCascadeDelete(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		fill := func(name string) *annotations.Project {
			p := newProject(t, d, name, "ordinal:1..5")
			ds := makeDataset(30, 4, 2)
			ds.Items = []annotations.Item{{ID: "solo", Text: "unlabelled"}}
			_, err := d.Import(ctx, p.ID, ds, annotations.ImportOptions{})
			must(t, err)
			must(t, d.CreateFit(ctx, &annotations.Fit{ProjectID: p.ID, Model: "ordinal-gp"}))
			f := claimAs(t, d, "w")
			must(t, d.FinishFit(ctx, f.ID, annotations.FitDone, "", []byte(`{"ok":true}`)))
			g := &annotations.Fit{ProjectID: p.ID, Model: "ordinal-gp", Spec: []byte(`{"seed":2}`)}
			must(t, d.CreateFit(ctx, g))
			_, err = d.RequestCancel(ctx, g.ID) // leave the queue empty for the next claim
			must(t, err)
			must(t, d.CreateAPIKey(ctx, &annotations.APIKey{ProjectID: p.ID, Name: "k", Prefix: name, Hash: []byte{1, 2}}))
			return p
		}
		keep, viaStore, viaSQL := fill("keep"), fill("store"), fill("sql")
		want := tableCounts(t, d, keep.ID)
		if want["labels"] != 60 || want["fit_results"] != 1 || want["api_keys"] != 1 || want["items"] != 31 {
			t.Fatalf("fixture counts %v", want)
		}

		must(t, d.DeleteProject(ctx, viaStore.ID))
		must(t, d.w.Exec("DELETE FROM projects WHERE id = ?", viaSQL.ID).Error)
		for _, p := range []*annotations.Project{viaStore, viaSQL} {
			for table, n := range tableCounts(t, d, p.ID) {
				if n != 0 {
					t.Errorf("project %s: %d rows left in %s", p.Name, n, table)
				}
			}
		}
		var orphans int
		must(t, d.r.Raw("SELECT COUNT(*) FROM fit_results WHERE fit_id NOT IN (SELECT id FROM fits)").Scan(&orphans).Error)
		if orphans != 0 {
			t.Errorf("%d orphaned fit results", orphans)
		}
		if got := tableCounts(t, d, keep.ID); !sameCounts(got, want) {
			t.Errorf("other project changed: %v -> %v", want, got)
		}
	})
}

// TestLabelsVersion: the labels version moves on with every write that
// changes the project's items or labels, and only then.
func TestLabelsVersion(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "versions", "ordinal:1..3")
		other := newProject(t, d, "other", "ordinal:1..3")
		imp := func(replace bool, labels ...annotations.Label) func() error {
			return func() error {
				_, err := d.Import(ctx, p.ID, &annotations.Dataset{Labels: labels}, annotations.ImportOptions{Replace: replace})
				return err
			}
		}
		steps := []struct {
			name    string
			write   func() error
			changed bool
			labels  int
		}{
			{"empty", func() error { return nil }, false, 0},
			{"first import", imp(false, annotations.Label{Item: "a", Rater: "r1", Value: "1"}, annotations.Label{Item: "b", Rater: "r1", Value: "2"}), true, 2},
			{"same import again", imp(false, annotations.Label{Item: "a", Rater: "r1", Value: "1"}), false, 2},
			{"conflict refused", imp(false, annotations.Label{Item: "a", Rater: "r1", Value: "3"}), false, 2},
			{"replaced value", imp(true, annotations.Label{Item: "a", Rater: "r1", Value: "3"}), true, 2},
			{"deleted nothing", func() error {
				_, err := d.DeleteLabels(ctx, p.ID, annotations.LabelFilter{Rater: "nobody"})
				return err
			}, false, 2},
			{"deleted the last label", func() error {
				_, err := d.DeleteLabels(ctx, p.ID, annotations.LabelFilter{Item: "b"})
				return err
			}, true, 1},
			{"another label in its place", imp(false, annotations.Label{Item: "c", Rater: "r1", Value: "2"}), true, 2},
			{"another project's import", func() error {
				_, err := d.Import(ctx, other.ID, &annotations.Dataset{Labels: []annotations.Label{{Item: "a", Rater: "r1", Value: "1"}}}, annotations.ImportOptions{})
				return err
			}, false, 2},
		}
		prev, _, err := d.LabelsVersion(ctx, p.ID)
		must(t, err)
		for _, st := range steps {
			_ = st.write() // the refused conflict fails on purpose
			v, n, err := d.LabelsVersion(ctx, p.ID)
			must(t, err)
			if (v != prev) != st.changed || n != st.labels {
				t.Errorf("%s: version %d -> %d (changed %v, want %v), %d labels (want %d)", st.name, prev, v, v != prev, st.changed, n, st.labels)
			}
			prev = v
		}
		_, _, err = d.LabelsVersion(ctx, other.ID+1)
		wantCode(t, err, annotations.ENOTFOUND)
	})
}
