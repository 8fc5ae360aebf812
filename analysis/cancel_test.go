package analysis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

// cancelDatasets are the ladder-shaped items of ladderDataset (texts, 8
// covariates) with their ordinal labels, the same labels as binary ones
// (level > 3) and as bounded values ((level - 1) * 25 on 0..100).
func cancelDatasets(n int) map[annotations.Kind]*annotations.Dataset {
	ord, _ := ladderDataset(n, 200, 7)
	bin := &annotations.Dataset{Scheme: annotations.MustParseScheme("binary:0,1,pos=1"), Items: ord.Items}
	bnd := &annotations.Dataset{Scheme: annotations.MustParseScheme("bounded:0..100"), Items: ord.Items}
	for _, l := range ord.Labels {
		k, _ := strconv.Atoi(l.Value)
		b := l
		b.Value = strconv.Itoa(min(max(k-3, 0), 1))
		bin.Labels = append(bin.Labels, b)
		b.Value = strconv.Itoa((k - 1) * 25)
		bnd.Labels = append(bnd.Labels, b)
	}
	return map[annotations.Kind]*annotations.Dataset{annotations.Ordinal: ord, annotations.Binary: bin, annotations.Bounded: bnd}
}

// TestFitCancelledEveryModel: every model of the table by every engine,
// with the labels alone and with a kernel, fitted by the family (the
// model's fit, without Fit's own check after it) on a context cancelled
// before the fit starts or by the first progress report, ends with an
// error that is the context's (errors.Is context.Canceled): the CLI says
// so and exits nonzero, the server records the fit as cancelled, and no
// result is written.
func TestFitCancelledEveryModel(t *testing.T) {
	ds := cancelDatasets(80)
	gibbs := FitSpec{Chains: 2, Samples: 100, Burnin: 50}
	for _, m := range Models() {
		kind := m.Schemes[0]
		if kind == annotations.Nominal {
			kind = annotations.Binary
		}
		d := ds[kind]
		kernels := []string{"identity", "text"}
		switch m.Name {
		case ModelAUC:
			kernels = []string{"", "rbf"}
		case ModelRobust:
			kernels = []string{"identity", "rbf"}
		}
		for _, engine := range m.Engines {
			for _, kern := range kernels {
				spec := FitSpec{Model: m.Name, Engine: engine, Kernel: kern, Seed: 3}
				if engine == multirater.EngineGibbs {
					spec.Chains, spec.Samples, spec.Burnin = gibbs.Chains, gibbs.Samples, gibbs.Burnin
				}
				if m.Name == ModelAUC && kern != "" {
					spec.Scores = "gp"
				}
				if kern == "rbf" {
					spec.Covariates = "x1,x2,x3"
				}
				for _, at := range []string{"before", "first report"} {
					t.Run(fmt.Sprintf("%s/%s/%s/%s", m.Name, engine, kern, at), func(t *testing.T) {
						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						var once sync.Once
						reports := 0
						progress := func(multirater.Progress) {
							once.Do(func() {
								reports++
								if at == "first report" {
									cancel()
								}
							})
						}
						if at == "before" {
							cancel()
						}
						s := spec.withKernel()
						if err := s.Validate(); err != nil {
							t.Fatal(err)
						}
						s = s.ForData(d).WithDefaults().withKernel()
						res, err := m.fit(ctx, d, nil, s, progress)
						if !errors.Is(err, context.Canceled) || res != nil {
							t.Fatalf("got a result %t and error %v; want no result and context.Canceled", res != nil, err)
						}
						if at == "first report" && reports == 0 {
							t.Errorf("no progress report")
						}
					})
				}
			}
		}
	}
}

// TestFitCancelledAtTheEnd: a fit cancelled by its last progress report
// (fraction 1, "done"), when the family has nothing left to check, is
// still cancelled: Fit drops the result and returns the context's error,
// so that a fit stopped as it ends leaves nothing behind.
func TestFitCancelledAtTheEnd(t *testing.T) {
	ds := cancelDatasets(60)
	for _, spec := range []FitSpec{
		{Model: ModelOrdinal, Engine: multirater.EngineEP},
		{Model: ModelRobust},
		{Model: ModelBounded},
		{Model: ModelConfusion},
		{Model: ModelAUC, Gamma: "10"},
	} {
		t.Run(spec.Model, func(t *testing.T) {
			m, err := LookupModel(spec.Model)
			if err != nil {
				t.Fatal(err)
			}
			kind := m.Schemes[0]
			if kind == annotations.Nominal {
				kind = annotations.Binary
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := false
			res, err := Fit(ctx, ds[kind], spec, func(p multirater.Progress) {
				if p.Fraction >= 1 {
					done = true
					cancel()
				}
			})
			if !done {
				t.Fatal("no report of the fit done")
			}
			if !errors.Is(err, context.Canceled) || res != nil {
				t.Errorf("got a result %t and error %v; want no result and context.Canceled", res != nil, err)
			}
		})
	}
}
