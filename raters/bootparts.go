package raters

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Replicates are the values of the bootstrap replicates [Lo, Hi) of an
// agreement analysis, computed apart so that the bootstrap of one
// analysis can be spread over processes (AnalyzeReplicates); joined
// (MergeReplicates) and handed back as Options.Replicates they give the
// intervals of the bootstrap run in one process.
//
// Replicate rep resamples the items with a generator of its own seeded by
// (Options.Seed, rep) only (booter.values), so that the values do not
// depend on how the replicates are split.
type Replicates struct {
	Lo, Hi int
	// Values[d][rep-Lo] is the d-th bootstrapped estimate's value in
	// replicate rep (the estimates in the analysis' order, NaN where one
	// is not defined).
	Values [][]float64
}

// AnalyzeReplicates computes the bootstrap replicates [lo, hi) of the
// analysis AnalyzeContext(ctx, r, o) would run (its o.Bootstrap replicates
// seeded by o.Seed): the coefficients' steps up to the bootstrap, then
// only those replicates. o.Progress counts the replicates of [lo, hi)
// done. An analysis with nothing to bootstrap (no coefficients, fewer
// than 2 items) has no values. A range outside [0, o.Bootstrap), or an
// analysis without a bootstrap, is a caller bug (panic).
func AnalyzeReplicates(ctx context.Context, r *Ratings, o Options, lo, hi int) (*Replicates, error) {
	B := o.bootstrap()
	if B <= 0 || lo < 0 || hi > B || lo >= hi {
		panic(fmt.Sprintf("raters: AnalyzeReplicates of replicates [%d, %d) of a bootstrap of %d", lo, hi, B))
	}
	if o.Replicates != nil {
		panic("raters: AnalyzeReplicates with Options.Replicates")
	}
	a, err := newAnalyzer(ctx, r, o)
	if err != nil {
		return nil, err
	}
	for _, step := range []func() error{a.alphaStep, a.familyStep, a.weightedStep, a.cohenStep} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	a.familySlots()
	out := &Replicates{Lo: lo, Hi: hi}
	if !a.coefs || len(a.b.slots) == 0 || a.t.n < minBootItems {
		return out, nil
	}
	out.Values, err = a.b.values(ctx, B, o.Seed, lo, hi, o.Progress)
	return out, err
}

// check says whether the replicates are [0, B) of d estimates.
func (p *Replicates) check(B, d int) error {
	if p.Lo != 0 || p.Hi != B || len(p.Values) != d {
		return fmt.Errorf("raters: the bootstrap replicates given are %d..%d of %d estimates; this analysis has %d replicates of %d", p.Lo, p.Hi, len(p.Values), B, d)
	}
	for _, v := range p.Values {
		if len(v) != B {
			return fmt.Errorf("raters: the bootstrap replicates given hold %d values of an estimate, want %d", len(v), B)
		}
	}
	return nil
}

// MergeReplicates joins ranges of replicates of one analysis that follow
// each other (in any order) into one.
func MergeReplicates(parts []*Replicates) (*Replicates, error) {
	if len(parts) == 0 {
		return nil, errors.New("raters: no bootstrap replicates to merge")
	}
	ps := append([]*Replicates(nil), parts...)
	sort.Slice(ps, func(x, y int) bool { return ps[x].Lo < ps[y].Lo })
	out := &Replicates{Lo: ps[0].Lo, Hi: ps[0].Lo, Values: make([][]float64, len(ps[0].Values))}
	for _, p := range ps {
		if p.Lo != out.Hi {
			return nil, fmt.Errorf("raters: bootstrap replicates %d..%d do not follow %d..%d", p.Lo, p.Hi, out.Lo, out.Hi)
		}
		if len(p.Values) != len(out.Values) {
			return nil, fmt.Errorf("raters: bootstrap replicates %d..%d hold %d estimates, others %d", p.Lo, p.Hi, len(p.Values), len(out.Values))
		}
		for d, v := range p.Values {
			if len(v) != p.Hi-p.Lo {
				return nil, fmt.Errorf("raters: bootstrap replicates %d..%d hold %d values of an estimate", p.Lo, p.Hi, len(v))
			}
			out.Values[d] = append(out.Values[d], v...)
		}
		out.Hi = p.Hi
	}
	return out, nil
}

// MarshalBinary encodes the replicates: Lo, Hi and the number of
// estimates as little-endian uint64s, then the values (float64 bits,
// NaNs kept) estimate by estimate.
func (p *Replicates) MarshalBinary() ([]byte, error) {
	n := p.Hi - p.Lo
	b := make([]byte, 0, 24+8*n*len(p.Values))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.Lo))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.Hi))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(p.Values)))
	for _, v := range p.Values {
		if len(v) != n {
			return nil, fmt.Errorf("raters: replicates %d..%d hold %d values of an estimate", p.Lo, p.Hi, len(v))
		}
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary encoded.
func (p *Replicates) UnmarshalBinary(b []byte) error {
	if len(b) < 24 {
		return errors.New("raters: bootstrap replicates: short header")
	}
	lo, hi, d := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])
	b = b[24:]
	size := uint64(len(b))
	if lo > hi || hi > math.MaxInt32 || (d == 0 && size != 0) || (d > 0 && (size%(8*d) != 0 || size/(8*d) != hi-lo)) {
		return fmt.Errorf("raters: bootstrap replicates %d..%d of %d estimates in %d bytes", lo, hi, d, len(b))
	}
	n := int(hi - lo)
	p.Lo, p.Hi, p.Values = int(lo), int(hi), make([][]float64, d)
	for x := range p.Values {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
		p.Values[x] = v
	}
	return nil
}
