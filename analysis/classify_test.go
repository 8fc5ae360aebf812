package analysis

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

// smallNominal is a small nominal dataset: 13 items (the last in the items
// file only, unlabelled), 3 raters, classes cat, dog, fox; item covariates
// a, b, c, the largest one marking the item's true class.
func smallNominal() *annotations.Dataset {
	classes := []string{"cat", "dog", "fox"}
	return smallDataset("nominal:cat,dog,fox", 13, func(i int) map[string]float64 {
		cov := map[string]float64{"a": 0.1, "b": 0.1, "c": 0.1}
		cov[[]string{"a", "b", "c"}[i%3]] = 1
		return cov
	}, func(i, r int) string {
		c := i % 3
		if i == 12 {
			return ""
		}
		if r == 2 && i%4 == 0 {
			c = (c + 1) % 3 // rater2 is sometimes wrong
		}
		return classes[c]
	})
}

func TestFitClassification(t *testing.T) {
	ds := smallNominal()
	for _, kernel := range []string{"identity", "linear"} {
		spec := quick
		spec.Model = ModelClassification
		spec.Kernel = kernel
		res, err := Fit(context.Background(), ds, spec, nil)
		if err != nil {
			t.Fatalf("%s: %v", kernel, err)
		}
		if res.Model.Model != "classification" || res.Model.Scheme != "nominal:cat,dog,fox" || res.Model.Kernel != kernel ||
			res.Model.Precisions != "inferred" || res.Model.Seed != 3 {
			t.Errorf("%s: model %+v", kernel, res.Model)
		}
		if fmt.Sprint(res.Levels) != "[cat dog fox]" || len(res.Items) != 13 || len(res.Raters) != 3 {
			t.Fatalf("%s: levels %v, %d items, %d raters", kernel, res.Levels, len(res.Items), len(res.Raters))
		}
		for i, it := range res.Items[:12] {
			if want := []string{"cat", "dog", "fox"}[i%3]; it.Class != want {
				t.Errorf("%s: item %s class %s, want %s (%v)", kernel, it.ID, it.Class, want, it.ClassProbs)
			}
		}
		last := res.Items[12]
		if last.ID != "item12" || last.NLabels != 0 || len(last.ClassProbs) != 3 {
			t.Errorf("%s: unlabelled item %+v", kernel, last)
		}
		if kernel == "linear" && last.Class != "cat" {
			// item12 has the covariates of the cat items.
			t.Errorf("linear: unlabelled item predicted %s (%v)", last.Class, last.ClassProbs)
		}
		if res.Items[0].Labels["rater2"] != "dog" {
			t.Errorf("labels %v", res.Items[0].Labels)
		}
	}
	// Binary scheme, fixed precisions.
	bin := &annotations.Dataset{Scheme: annotations.MustParseScheme("binary:no,yes,pos=yes")}
	for i := 0; i < 10; i++ {
		for r := 0; r < 4; r++ {
			v := "no"
			if (i+r/3)%2 == 0 {
				v = "yes"
			}
			bin.Labels = append(bin.Labels, annotations.Label{Item: fmt.Sprint("b", i), Rater: fmt.Sprint("r", r), Value: v})
		}
	}
	spec := quick
	spec.Model, spec.Precisions = ModelClassification, PrecisionsFixed
	res, err := Fit(context.Background(), bin, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model.Precisions != "fixed" || res.Raters[0].Precision.Mean != 1 || fmt.Sprint(res.Levels) != "[no yes]" || res.Items[0].Class != "yes" {
		t.Errorf("binary fixed: model %+v, rater %+v, item %+v", res.Model, res.Raters[0], res.Items[0])
	}
}

func TestFitClassificationErrors(t *testing.T) {
	ds := smallNominal()
	bad := *ds
	bad.Labels = append(append([]annotations.Label(nil), ds.Labels...), annotations.Label{Item: "item00", Rater: "rater9", Value: "wolf"})
	cls := FitSpec{Model: ModelClassification, Chains: 1, Samples: 20, Burnin: 10}
	for _, tc := range []struct {
		name string
		ds   *annotations.Dataset
		spec FitSpec
		msg  string
	}{
		{"ordinal labels", smallOrdinal(), cls, "needs a nominal or binary scheme"},
		{"unknown class", &bad, cls, `"wolf" of rater "rater9" for item "item00" is not a class`},
		{"unknown reference", ds, FitSpec{Model: ModelClassification, Identifiability: "both", RefRater: "nobody"}, `reference rater "nobody"`},
		{"ordinal model on classes", ds, quick, "needs an ordinal scheme"},
	} {
		_, err := Fit(context.Background(), tc.ds, tc.spec, nil)
		if err == nil || annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want EINVALID mentioning %q", tc.name, err, tc.msg)
		}
	}
	if got := (FitSpec{Model: ModelClassification}).WithDefaults().Precisions; got != PrecisionsInferred {
		t.Errorf("default precisions %q", got)
	}
	if got := (FitSpec{}).WithDefaults().Precisions; got != "" {
		t.Errorf("ordinal spec got precisions %q", got)
	}
	data, err := ClassData(ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(data.ItemIDs) != 13 || len(data.Labels) != 36 || fmt.Sprint(data.Classes) != "[cat dog fox]" || data.Labels[0] != (multirater.Rating{Item: 0, Rater: 0, Level: 0}) {
		t.Errorf("ClassData: %d items, %d labels, classes %v, first %+v", len(data.ItemIDs), len(data.Labels), data.Classes, data.Labels[0])
	}
}
