package classify

import (
	"encoding/gob"

	"concord/multirater/mcmc"
)

// classOutput is what the summary reads of a finished chain
// (mcmc.Portable): its kept draws, the counts of the top class and the move
// statistics.
type classOutput struct {
	DrawAlpha, KeptAlpha              [][]float64
	Mon, KeptM                        [][]float32
	Top                               []int32
	Sweeps, CGIters, Slices           int
	SliceEvals                        int
	ScaleSum, ShiftSum, RaterScaleSum float64
}

// EncodeOutput writes the chain's output (mcmc.Portable).
func (ch *classChain) EncodeOutput(enc *gob.Encoder) error {
	return enc.Encode(classOutput{DrawAlpha: ch.drawAlpha, KeptAlpha: ch.keptAlpha, Mon: ch.mon, KeptM: ch.keptM, Top: ch.top,
		Sweeps: ch.sweeps, CGIters: ch.cgIters, Slices: ch.slices, SliceEvals: ch.sliceEvals,
		ScaleSum: ch.scaleSum, ShiftSum: ch.shiftSum, RaterScaleSum: ch.raterScaleSum})
}

// DecodeOutput reads the output of the same chain of the same fit into a
// fresh chain (mcmc.Portable).
func (ch *classChain) DecodeOutput(dec *gob.Decoder) error {
	var o classOutput
	if err := dec.Decode(&o); err != nil {
		return err
	}
	for _, err := range []error{
		mcmc.Restore2("precision draws", ch.drawAlpha, o.DrawAlpha),
		mcmc.Restore2("kept precisions", ch.keptAlpha, o.KeptAlpha),
		mcmc.Restore2("monitored draws", ch.mon, o.Mon),
		mcmc.Restore2("kept latent draws", ch.keptM, o.KeptM),
		mcmc.Restore("top-class counts", ch.top, o.Top),
	} {
		if err != nil {
			return err
		}
	}
	ch.sweeps, ch.cgIters, ch.slices, ch.sliceEvals = o.Sweeps, o.CGIters, o.Slices, o.SliceEvals
	ch.scaleSum, ch.shiftSum, ch.raterScaleSum = o.ScaleSum, o.ShiftSum, o.RaterScaleSum
	return nil
}
