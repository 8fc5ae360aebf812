package mcmc

import (
	"context"
	"errors"
	"testing"
	"time"

	"concord/multirater"
)

// TestFitCancelled: a fit whose context is cancelled before it starts, or
// by a progress report (the first one, or the "summarising" one that ends
// the sampling), returns the context's error without summarising.
func TestFitCancelled(t *testing.T) {
	s := Settings{Chains: 2, Samples: 20, Burnin: 10, Thin: 1}
	for _, at := range []string{"before", "first report", "summarising"} {
		t.Run(at, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if at == "before" {
				cancel()
			}
			reports := 0
			progress := func(p multirater.Progress) {
				reports++
				if at == "first report" || p.Phase == at {
					cancel()
				}
			}
			summarised := false
			res, err := Fit(ctx, s, progress, time.Now(), 0.9, func(int) *busyChain { return &busyChain{} },
				func([]*busyChain) *multirater.FitResult { summarised = true; return &multirater.FitResult{} })
			if !errors.Is(err, context.Canceled) || res != nil || summarised {
				t.Errorf("got %v, %v (summarised %t); want context.Canceled and no summary", res, err, summarised)
			}
			if at != "before" && reports == 0 {
				t.Error("no progress report")
			}
		})
	}
}
