package mcmc

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"time"
)

// Chains run apart (the fan-out of a fit's chains over worker processes).
//
// A fit's chains are independent given the model: chain c is made by the
// family's newChain(c), seeded with NewChainRand(Seed, c), and touches no
// other chain until the summary. So the chains can run in different
// processes, each running a Part of them (Fit with WithPart: chains [Lo,
// Hi) only, their outputs encoded, no summary), and a last call summarises
// the outputs of all of them (Fit with a Part holding Inputs: no sampling).
// The result is the one the fit run in one process gives, bit for bit
// (apart from timings), whoever ran which chain.

// Portable is a Chain that can be run apart from the fit's others: it
// writes its output (what the family's summary reads of a finished chain:
// its kept draws, running sums and move statistics) and reads it into a
// fresh chain made by the same newChain(c).
type Portable interface {
	Chain
	// EncodeOutput writes the finished chain's output.
	EncodeOutput(enc *gob.Encoder) error
	// DecodeOutput reads into a fresh chain the output EncodeOutput wrote
	// of the same chain.
	DecodeOutput(dec *gob.Decoder) error
}

// Part selects part of a fit's work for a Fit call (see WithPart).
type Part struct {
	// Lo and Hi: run chains [Lo, Hi) only (0 <= Lo < Hi <= Chains), put
	// their encoded outputs in Outputs and return ErrPartRan instead of a
	// result.
	Lo, Hi int
	// Outputs are the encoded outputs of chains Lo..Hi-1, set by Fit.
	Outputs [][]byte
	// Sampling is how long the part's chains ran, set by Fit.
	Sampling time.Duration
	// SamplingCPU is the process CPU time while they ran (RunStats), set
	// by Fit.
	SamplingCPU time.Duration

	// Inputs, when set, are the encoded outputs of every chain of the fit
	// (Inputs[c] of chain c): Fit runs no chain, it summarises these.
	Inputs [][]byte
	// InputSampling is how long the chains ran (the longest part), for
	// the result's timings.
	InputSampling time.Duration
	// InputSamplingCPU is the CPU time the chains used (the sum over the
	// parts' SamplingCPU), for the result's ESS per CPU second; 0: not
	// known (none reported).
	InputSamplingCPU time.Duration
}

// ErrPartRan is what a Fit call running a Part of the chains returns: the
// chains ran and their outputs are in the Part; there is no result.
var ErrPartRan = errors.New("multirater: the chains of a part ran (no summary)")

type partKey struct{}

// WithPart returns a context that makes Fit run part p of the fit's work.
func WithPart(ctx context.Context, p *Part) context.Context {
	return context.WithValue(ctx, partKey{}, p)
}

// PartOf returns the Part ctx carries, nil for none.
func PartOf(ctx context.Context) *Part {
	p, _ := ctx.Value(partKey{}).(*Part)
	return p
}

// encodeOutput encodes chain ch's output.
func encodeOutput(ch Chain, c int) ([]byte, error) {
	pc, ok := ch.(Portable)
	if !ok {
		return nil, fmt.Errorf("multirater: chain %d (%T) cannot run apart from the others", c, ch)
	}
	var buf bytes.Buffer
	if err := pc.EncodeOutput(gob.NewEncoder(&buf)); err != nil {
		return nil, fmt.Errorf("multirater: encoding chain %d: %w", c, err)
	}
	return buf.Bytes(), nil
}

// decodeOutput reads chain c's output into the fresh chain ch.
func decodeOutput(ch Chain, c int, b []byte) error {
	pc, ok := ch.(Portable)
	if !ok {
		return fmt.Errorf("multirater: chain %d (%T) cannot run apart from the others", c, ch)
	}
	if err := pc.DecodeOutput(gob.NewDecoder(bytes.NewReader(b))); err != nil {
		return fmt.Errorf("multirater: decoding the output of chain %d: %w", c, err)
	}
	return nil
}

// Restore copies a decoded output src into the fresh chain's dst, refusing
// a length that differs (the output of another fit or other settings).
func Restore[T any](name string, dst, src []T) error {
	if len(src) != len(dst) {
		return fmt.Errorf("%s has %d values, the chain %d", name, len(src), len(dst))
	}
	copy(dst, src)
	return nil
}

// Restore2 is Restore for a slice of slices.
func Restore2[T any](name string, dst, src [][]T) error {
	if len(src) != len(dst) {
		return fmt.Errorf("%s has %d series, the chain %d", name, len(src), len(dst))
	}
	for i := range dst {
		if err := Restore(fmt.Sprintf("%s[%d]", name, i), dst[i], src[i]); err != nil {
			return err
		}
	}
	return nil
}
