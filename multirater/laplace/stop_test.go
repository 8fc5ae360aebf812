package laplace

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"concord/internal/testutil"
)

// TestRunStop: a Stop that answers nil changes nothing (the same mode and
// evidence, bit for bit, in as many steps) and is asked before every
// Newton step; one that answers an error ends the run with that error.
func TestRunStop(t *testing.T) {
	fac, sites := pyrimidines(t)
	want, err := Run(fac, sites, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stop, calls := testutil.StopAfter(1 << 30)
	got, err := Run(fac, sites, Options{Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Mean, want.Mean) || !reflect.DeepEqual(got.Var, want.Var) || got.LogZ != want.LogZ || got.Iterations != want.Iterations {
		t.Errorf("with a Stop that answers nil: log Z %v in %d steps, want %v in %d, or other marginals", got.LogZ, got.Iterations, want.LogZ, want.Iterations)
	}
	if *calls != want.Iterations {
		t.Errorf("Stop asked %d times in %d Newton steps", *calls, want.Iterations)
	}
	for _, a := range []int{0, 1, want.Iterations - 1} {
		stop, _ := testutil.StopAfter(a)
		res, err := Run(fac, sites, Options{Stop: stop})
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("stopped at call %d: got %v, %v; want no result and context.Canceled", a+1, res, err)
		}
	}
}
