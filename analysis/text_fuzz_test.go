package analysis

import (
	"context"
	"encoding/json"
	"testing"

	"concord/annotations"
)

// FuzzParseCovariateList: accepted lists have distinct, non-empty names.
func FuzzParseCovariateList(f *testing.F) {
	for _, s := range []string{"", "all", "NONE", "a,b", "a,,b", "a,a", " x , y "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCovariateList(s)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, n := range c.names {
			if n == "" || seen[n] {
				t.Fatalf("%q: names %q", s, c.names)
			}
			seen[n] = true
		}
	})
}

// FuzzPredictFeatures feeds altered "features" sections of a real fit
// result to NewPredictor and Predict (concord predict reads them from a
// file): they must be refused with an error or predict, never panic.
func FuzzPredictFeatures(f *testing.F) {
	train, test := splitSample(f)
	train.Items, train.Labels = train.Items[:30], nil
	in := map[string]bool{}
	for _, it := range train.Items {
		in[it.ID] = true
	}
	for _, l := range asapSample(f).Labels {
		if in[l.Item] {
			train.Labels = append(train.Labels, l)
		}
	}
	spec := FitSpec{Kernel: "text+linear", Covariates: "resolved_score", Engine: "gibbs", Chains: 1, Samples: 20, Burnin: 10, KeepDraws: 10, Seed: 1}
	res, err := Fit(context.Background(), train, spec, nil)
	if err != nil {
		f.Fatal(err)
	}
	good, err := json.Marshal(res.Features)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, "text+linear")
	f.Add([]byte(`{"covariates":["resolved_score"],"x":[[1]],"text":{},"terms":[{"i":[0],"n":[1]}]}`), "text+linear")
	f.Add([]byte(`{"terms":[{"i":[1,0],"n":[1,1]}]}`), "text")
	f.Add([]byte(`{"x":[[1e308,-1e308]]}`), "linear")
	f.Add([]byte(`null`), "identity")
	items := test[:3]
	f.Fuzz(func(t *testing.T, feats []byte, kernel string) {
		r := *res
		r.Model.Kernel = kernel
		r.Features = nil
		if err := json.Unmarshal(feats, &r.Features); err != nil {
			return
		}
		p, err := NewPredictor(&r)
		if err != nil {
			if annotations.ErrorCode(err) != annotations.EINVALID {
				t.Fatalf("error %v is not EINVALID", err)
			}
			return
		}
		out, err := p.Predict(items)
		if err != nil {
			return
		}
		if len(out.Items) != len(items) {
			t.Fatalf("%d predictions for %d items", len(out.Items), len(items))
		}
	})
}
