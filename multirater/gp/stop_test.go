package gp

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"concord/internal/testutil"
)

// TestLowRankFeaturesStop: a Stop that answers nil leaves the randomized
// basis as it is without one (bit for bit) and is asked before each of its
// passes (the first product, each power iteration, the projection); one
// that answers an error from its k-th call on ends the build with it.
func TestLowRankFeaturesStop(t *testing.T) {
	x := synthFeatures(rand.New(rand.NewPCG(35, 1)), 300, 120)
	build := func(stop func() error) (*LowRank, error) {
		return NewLowRankFeatures(x, LowRankOptions{MaxRank: 40, Power: 2, Stop: stop}, rand.New(rand.NewPCG(7, 7)), 7)
	}
	want, err := build(nil)
	if err != nil {
		t.Fatal(err)
	}
	stop, calls := testutil.StopAfter(1 << 30)
	got, err := build(stop)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.g, want.g) || !reflect.DeepEqual(got.lam, want.lam) {
		t.Error("a Stop that answers nil changed the basis")
	}
	if *calls != 4 {
		t.Errorf("Stop asked %d times, want 4 (first product, 2 power iterations, projection)", *calls)
	}
	for _, a := range []int{0, 1, 3} {
		stop, _ := testutil.StopAfter(a)
		if lr, err := build(stop); !errors.Is(err, context.Canceled) || lr != nil {
			t.Errorf("stopped at call %d: got %v, %v; want context.Canceled", a+1, lr, err)
		}
	}
}
