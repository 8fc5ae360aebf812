package confusion

import (
	"encoding/gob"

	"concord/multirater/mcmc"
)

// chainOutput is what the summary reads of a finished chain
// (mcmc.Portable): its kept draws and running sums.
type chainOutput struct {
	DiagDraws, AccDraws [][]float32
	RhoDraws, YDraws    [][]float64
	SumProb, SumMean    []float64
	SumSq, SumY         []float64
	Kept, NYDraws       int
}

// EncodeOutput writes the chain's output (mcmc.Portable).
func (ch *chain) EncodeOutput(enc *gob.Encoder) error {
	return enc.Encode(chainOutput{DiagDraws: ch.diagDraws, AccDraws: ch.accDraws, RhoDraws: ch.rhoDraws, YDraws: ch.yDraws,
		SumProb: ch.sumProb, SumMean: ch.sumMean, SumSq: ch.sumSq, SumY: ch.sumY, Kept: ch.kept, NYDraws: ch.nyDraws})
}

// DecodeOutput reads the output of the same chain of the same fit into a
// fresh chain (mcmc.Portable).
func (ch *chain) DecodeOutput(dec *gob.Decoder) error {
	var o chainOutput
	if err := dec.Decode(&o); err != nil {
		return err
	}
	for _, err := range []error{
		mcmc.Restore2("diagonal draws", ch.diagDraws, o.DiagDraws),
		mcmc.Restore2("accuracy draws", ch.accDraws, o.AccDraws),
		mcmc.Restore2("class proportion draws", ch.rhoDraws, o.RhoDraws),
		mcmc.Restore2("target draws", ch.yDraws, o.YDraws),
		mcmc.Restore("class probability sums", ch.sumProb, o.SumProb),
		mcmc.Restore("confusion sums", ch.sumMean, o.SumMean),
		mcmc.Restore("confusion squares", ch.sumSq, o.SumSq),
		mcmc.Restore("target sums", ch.sumY, o.SumY),
	} {
		if err != nil {
			return err
		}
	}
	ch.kept, ch.nyDraws = o.Kept, o.NYDraws
	return nil
}
