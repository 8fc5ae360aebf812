package db

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"concord/annotations"
)

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
