package robust

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// crowdData is n items labelled 4 times each by raters drawn from nl (the
// shared ladder's design: labels only, many raters): a latent class per
// item from N(0, 1), each rater with a flip rate from 0 to 0.3 and a
// latent noise of 0.5 on top of the item's value.
func crowdData(n, nl int) *Data {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(nl)))
	d := &Data{Classes: [2]string{"0", "1"}}
	flip := make([]float64, nl)
	for l := range flip {
		d.RaterIDs = append(d.RaterIDs, fmt.Sprintf("r%d", l))
		flip[l] = 0.3 * float64(l%4) / 3
	}
	for i := 0; i < n; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprintf("i%d", i))
		f := rng.NormFloat64()
		for _, l := range rng.Perm(nl)[:4] {
			y := 1.0
			if f+0.5*rng.NormFloat64() < 0 {
				y = -1
			}
			if rng.Float64() < flip[l] {
				y = -y
			}
			d.Labels = append(d.Labels, Label{Item: i, Rater: l, Y: y})
		}
	}
	return d
}

// BenchmarkFitCrowd: the default fit (error rates by EM, each rater's
// latent noise by the evidence, identity kernel) of labels alone from many
// raters, the shape of the ladder's robust-ep row, whose cost grew faster
// than the labels (issue 35: 0.77, 3.1 and 71 CPU s at 1,000, 4,000 and
// 16,000 items with 10, 20 and 40 raters).
func BenchmarkFitCrowd(b *testing.B) {
	for _, c := range []struct{ n, nl int }{{1000, 10}, {4000, 40}} {
		d := crowdData(c.n, c.nl)
		b.Run(fmt.Sprintf("N=%d/raters=%d", c.n, c.nl), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fit(context.Background(), d, Options{Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
