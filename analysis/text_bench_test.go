package analysis

import (
	"context"
	"fmt"
	"testing"

	"concord/annotations"
)

// Benchmarks read real essays from the shared data folder and skip when it
// is absent (the unit tests never need it).
const (
	asap7Dir = "../../shared/data/asap_essay_set7_two_raters/"
	asap8Dir = "../../shared/data/asap_essay_set8_two_raters/"
)

// BenchmarkFitText times one fit of the ordinal model with the text kernel
// (featurise, build the linear kernel, factorise it, sample, summarise) on
// N real essays: about 78% of them ASAP set-7 essays with both raters'
// grades, the rest set-8 essays without labels, which are part of the
// Gaussian process and predicted (N = 2,000 is every set-7 essay and 431 of
// set 8). 2 chains of 200 draws after 100 burn-in sweeps, as a quick fit.
// It reports the sampling time and the rest (featuriser, kernel, its
// eigendecomposition, summaries) separately.
func BenchmarkFitText(b *testing.B) {
	s7 := annotations.MustParseScheme("ordinal:0..12")
	ld7, err := annotations.LoadFiles(asap7Dir+"ratings.csv", annotations.LoadOptions{ItemsPath: asap7Dir + "items.csv", Scheme: &s7})
	if err != nil {
		b.Skipf("shared data not available: %v", err)
	}
	s8 := annotations.MustParseScheme("ordinal:0..30")
	ld8, err := annotations.LoadFiles(asap8Dir+"ratings.csv", annotations.LoadOptions{ItemsPath: asap8Dir + "items.csv", Scheme: &s8})
	if err != nil {
		b.Skipf("shared data not available: %v", err)
	}
	for _, n := range []int{250, 500, 1000, 2000} {
		nLab := min(len(ld7.Dataset.Items), n*785/1000)
		ds := &annotations.Dataset{Scheme: s7}
		ds.Items = append(ds.Items, ld7.Dataset.Items[:nLab]...)
		ds.Items = append(ds.Items, ld8.Dataset.Items[:n-nLab]...)
		in := map[string]bool{}
		for _, it := range ds.Items[:nLab] {
			in[it.ID] = true
		}
		for _, l := range ld7.Dataset.Labels {
			if in[l.Item] {
				ds.Labels = append(ds.Labels, l)
			}
		}
		spec := FitSpec{Kernel: "text", Engine: "gibbs", Chains: 2, Samples: 200, Burnin: 100, Seed: 1}
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var sampling, total float64
			for b.Loop() {
				res, err := Fit(context.Background(), ds, spec, nil)
				if err != nil {
					b.Fatal(err)
				}
				sampling += res.Diagnostics.SamplingSeconds
				total += res.Diagnostics.Seconds
			}
			b.ReportMetric(sampling/float64(b.N), "sampling-s/op")
			b.ReportMetric((total-sampling)/float64(b.N), "setup+summary-s/op")
		})
	}
}
