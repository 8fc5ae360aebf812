package ordinal

import (
	"encoding/gob"

	"concord/multirater/mcmc"
)

// ordOutput is what the summary reads of a finished chain (mcmc.Portable):
// its kept draws and move statistics.
type ordOutput struct {
	DrawAlpha, DrawB   [][]float64
	DrawM              [][]float32
	Sweeps, CGIters    int
	SliceEvals, Slices int
	ScaleSum, LocSum   float64
}

// EncodeOutput writes the chain's output (mcmc.Portable).
func (ch *ordChain) EncodeOutput(enc *gob.Encoder) error {
	return enc.Encode(ordOutput{DrawAlpha: ch.drawAlpha, DrawB: ch.drawB, DrawM: ch.drawM,
		Sweeps: ch.sweeps, CGIters: ch.cgIters, SliceEvals: ch.sliceEvals, Slices: ch.slices,
		ScaleSum: ch.scaleSum, LocSum: ch.locSum})
}

// DecodeOutput reads the output of the same chain of the same fit into a
// fresh chain (mcmc.Portable).
func (ch *ordChain) DecodeOutput(dec *gob.Decoder) error {
	var o ordOutput
	if err := dec.Decode(&o); err != nil {
		return err
	}
	if err := mcmc.Restore2("alpha draws", ch.drawAlpha, o.DrawAlpha); err != nil {
		return err
	}
	if err := mcmc.Restore2("threshold draws", ch.drawB, o.DrawB); err != nil {
		return err
	}
	if err := mcmc.Restore2("consensus draws", ch.drawM, o.DrawM); err != nil {
		return err
	}
	ch.sweeps, ch.cgIters, ch.sliceEvals, ch.slices = o.Sweeps, o.CGIters, o.SliceEvals, o.Slices
	ch.scaleSum, ch.locSum = o.ScaleSum, o.LocSum
	return nil
}
