package db

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"concord/annotations"
)

// crowdLabels has repeated labels: rater a gave item 1 a "yes" twice, rater
// b gave item 2 "no" then "yes", in that order.
func crowdLabels() []annotations.Label {
	return []annotations.Label{
		{Item: "1", Rater: "a", Value: "yes"}, {Item: "1", Rater: "a", Value: "yes"}, {Item: "1", Rater: "b", Value: "no"},
		{Item: "2", Rater: "a", Value: "no"}, {Item: "2", Rater: "b", Value: "no"}, {Item: "2", Rater: "b", Value: "yes"},
	}
}

// TestImportDuplicates imports repeated labels under each setting on every
// backend: error refuses them naming the flag and writes nothing; first
// stores the first of each pair and counts the rest; keep stores them all,
// reads them back in order, re-imports as unchanged, conflicts by
// position, and survives a long-CSV export and re-import.
func TestImportDuplicates(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		scheme := "nominal:yes,no"

		p := newProject(t, d, "refuse", scheme)
		for _, mode := range []annotations.Duplicates{"", annotations.DuplicatesError} {
			_, err := d.Import(ctx, p.ID, &annotations.Dataset{Labels: crowdLabels()}, annotations.ImportOptions{Duplicates: mode})
			wantCode(t, err, annotations.EINVALID)
			if msg := annotations.ErrorMessage(err); !strings.Contains(msg, `item "1", rater "a" is labelled twice`) || !strings.Contains(msg, "--duplicates keep|first") {
				t.Errorf("mode %q: %s", mode, msg)
			}
		}
		if c := tableCounts(t, d, p.ID); c["labels"] != 0 || c["items"] != 0 {
			t.Errorf("a refused import wrote %v", c)
		}

		p = newProject(t, d, "first", scheme)
		res, err := d.Import(ctx, p.ID, &annotations.Dataset{Labels: crowdLabels()}, annotations.ImportOptions{Duplicates: annotations.DuplicatesFirst})
		must(t, err)
		if res.LabelsAdded != 4 || res.DuplicatesDropped != 2 {
			t.Errorf("first: %+v, want 4 added and 2 dropped", res)
		}
		ds, err := d.Dataset(ctx, p.ID)
		must(t, err)
		want := []annotations.Label{{Item: "1", Rater: "a", Value: "yes"}, {Item: "1", Rater: "b", Value: "no"}, {Item: "2", Rater: "a", Value: "no"}, {Item: "2", Rater: "b", Value: "no"}}
		if !reflect.DeepEqual(ds.Labels, want) {
			t.Errorf("first: stored %v, want %v", ds.Labels, want)
		}

		p = newProject(t, d, "keep", scheme)
		keep := annotations.ImportOptions{Duplicates: annotations.DuplicatesKeep}
		res, err = d.Import(ctx, p.ID, &annotations.Dataset{Labels: crowdLabels()}, keep)
		must(t, err)
		if res.LabelsAdded != 6 || res.DuplicatesDropped != 0 {
			t.Errorf("keep: %+v, want 6 added", res)
		}
		ds, err = d.Dataset(ctx, p.ID)
		must(t, err)
		if !reflect.DeepEqual(ds.Labels, crowdLabels()) || ds.Repeats() != 2 {
			t.Fatalf("keep: stored %v, want %v", ds.Labels, crowdLabels())
		}
		if st, err := d.Stats(ctx, p.ID); err != nil || st.Labels != 6 {
			t.Errorf("keep: stats %+v, %v", st, err)
		}
		// Re-importing the same labels changes nothing.
		res, err = d.Import(ctx, p.ID, &annotations.Dataset{Labels: crowdLabels()}, keep)
		must(t, err)
		if res.LabelsUnchanged != 6 || res.LabelsAdded != 0 {
			t.Errorf("keep again: %+v, want 6 unchanged", res)
		}
		// The second label of (2, b) differs by position: a conflict,
		// replaced on request.
		changed := crowdLabels()
		changed[5].Value = "no"
		_, err = d.Import(ctx, p.ID, &annotations.Dataset{Labels: changed}, keep)
		wantCode(t, err, annotations.ECONFLICT)
		keep.Replace = true
		res, err = d.Import(ctx, p.ID, &annotations.Dataset{Labels: changed}, keep)
		must(t, err)
		if res.LabelsReplaced != 1 || res.LabelsUnchanged != 5 {
			t.Errorf("keep, replace: %+v", res)
		}
		ds, err = d.Dataset(ctx, p.ID)
		must(t, err)
		if !reflect.DeepEqual(ds.Labels, changed) {
			t.Errorf("after replace: %v, want %v", ds.Labels, changed)
		}

		// Export as long CSV, re-import into a new project with keep: the
		// same labels.
		var buf bytes.Buffer
		must(t, annotations.WriteCSVLong(&buf, ds))
		parsed, err := annotations.ReadLabels(&buf, annotations.ReadOptions{Name: "export.csv"})
		must(t, err)
		back, err := annotations.BuildDataset(p.Scheme, parsed, nil, annotations.ReadOptions{Duplicates: annotations.DuplicatesKeep})
		must(t, err)
		q := &annotations.Project{Name: "round trip", Scheme: p.Scheme}
		_, err = d.ImportNew(ctx, q, back, annotations.ImportOptions{Duplicates: annotations.DuplicatesKeep})
		must(t, err)
		again, err := d.Dataset(ctx, q.ID)
		must(t, err)
		if !reflect.DeepEqual(again.Labels, ds.Labels) {
			t.Errorf("round trip: %v, want %v", again.Labels, ds.Labels)
		}
		// Listing shows the repeats in order.
		ls, total, err := d.ListLabels(ctx, q.ID, annotations.LabelFilter{Rater: "b"})
		must(t, err)
		if total != 3 || len(ls) != 3 || ls[1].Value != "no" || ls[2].Value != "no" {
			t.Errorf("labels of rater b: %v (%d)", ls, total)
		}
	})
}
