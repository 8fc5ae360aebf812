package mcmctest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"concord/multirater"
	"concord/multirater/mcmc"
)

// CheckParts checks that a fit whose chains run apart, in the parts given
// ([lo, hi) each, covering chains 0..nc-1 in any order), and are then
// summarised from their outputs, gives the result the fit gives in one
// call, bit for bit apart from the timings. fit runs the family's fit of a
// fixed model, settings and seed with the context it is given. It also
// checks that the outputs cannot be summarised as a fit of another chain
// count, nor a corrupt output. clean, when set, removes from a result what
// differs between two runs of the same fit in one call (a note's timing).
func CheckParts(t *testing.T, fit func(ctx context.Context) (*multirater.FitResult, error), nc int, parts [][2]int, clean func(*multirater.FitResult)) {
	t.Helper()
	whole, err := fit(context.Background())
	if err != nil {
		t.Fatalf("the fit in one call: %v", err)
	}
	inputs := make([][]byte, nc)
	for _, pr := range parts {
		p := &mcmc.Part{Lo: pr[0], Hi: pr[1]}
		res, err := fit(mcmc.WithPart(context.Background(), p))
		if !errors.Is(err, mcmc.ErrPartRan) || res != nil {
			t.Fatalf("part %v: got result %v, error %v; want no result and ErrPartRan", pr, res != nil, err)
		}
		if len(p.Outputs) != pr[1]-pr[0] {
			t.Fatalf("part %v: %d outputs", pr, len(p.Outputs))
		}
		for i, o := range p.Outputs {
			if inputs[pr[0]+i] != nil {
				t.Fatalf("chain %d in two parts", pr[0]+i)
			}
			inputs[pr[0]+i] = o
		}
	}
	for c, in := range inputs {
		if in == nil {
			t.Fatalf("chain %d in no part", c)
		}
	}
	combined, err := fit(mcmc.WithPart(context.Background(), &mcmc.Part{Inputs: inputs}))
	if err != nil {
		t.Fatalf("summarising the parts: %v", err)
	}
	if clean != nil {
		clean(whole)
		clean(combined)
	}
	a, b := resultBytes(t, whole), resultBytes(t, combined)
	if string(a) != string(b) {
		n := 0
		for n < min(len(a), len(b)) && a[n] == b[n] {
			n++
		}
		t.Fatalf("the fit from parts %v differs from the fit in one call at byte %d: %q vs %q", parts, n,
			a[max(n-80, 0):min(n+80, len(a))], b[max(n-80, 0):min(n+80, len(b))])
	}
	// The outputs of the chains as those of a fit with one chain less.
	if nc > 1 {
		if _, err := fit(mcmc.WithPart(context.Background(), &mcmc.Part{Inputs: inputs[:nc-1]})); err == nil {
			t.Errorf("%d outputs summarised as a fit of %d chains", nc-1, nc)
		}
		swapped := append([][]byte{}, inputs...)
		swapped[0] = []byte("not an output")
		if _, err := fit(mcmc.WithPart(context.Background(), &mcmc.Part{Inputs: swapped})); err == nil {
			t.Errorf("a corrupt output was summarised")
		}
	}
}

// resultBytes is the result's JSON without its timings.
func resultBytes(t *testing.T, res *multirater.FitResult) []byte {
	t.Helper()
	r := *res
	r.Diagnostics.Seconds, r.Diagnostics.SamplingSeconds, r.Diagnostics.SweepsPerSecond, r.Diagnostics.ESSPerCPUSecond = 0, 0, 0, 0
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
