package confusion

import (
	"math/rand/v2"

	"concord/multirater"
)

// crowd describes a synthetic crowd: N items of K classes (class shares
// Shares, nil: equal), PerItem labels per item from L raters, a share of
// them spammers (uniform random labels, or one fixed class when Constant),
// a share adversaries (never the true class), the rest right with
// probability Acc (their errors uniform over the other classes). Raters
// are drawn with weights 1/(rank+1) (a few raters label most items, most
// label few) unless Uniform; Repeat is the chance that a label is given
// twice by its rater.
type crowd struct {
	N, L, K, PerItem  int
	Acc               float64
	Spam, Adversary   float64
	Constant, Uniform bool
	Shares            []float64
	Repeat            float64
	Seed              uint64
}

// kind of a synthetic rater.
const (
	good = iota
	spammer
	adversary
)

// make returns the data and the true classes.
func (c crowd) make() (*Data, []int) {
	rng := rand.New(rand.NewPCG(c.Seed, 7))
	d := &Data{ItemIDs: ids("i", c.N), RaterIDs: ids("r", c.L), Classes: ids("c", c.K), Repeats: c.Repeat > 0}
	kind := make([]int, c.L)
	fixed := make([]int, c.L)
	for l := range kind {
		u := rng.Float64()
		switch {
		case u < c.Spam:
			kind[l] = spammer
		case u < c.Spam+c.Adversary:
			kind[l] = adversary
		}
		fixed[l] = rng.IntN(c.K)
	}
	cum := make([]float64, c.L)
	tot := 0.0
	for l := range cum {
		w := 1.0
		if !c.Uniform {
			w = 1 / float64(l+1)
		}
		tot += w
		cum[l] = tot
	}
	pick := func() int {
		u := rng.Float64() * tot
		lo, hi := 0, c.L-1
		for lo < hi {
			m := (lo + hi) / 2
			if cum[m] < u {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo
	}
	truth := make([]int, c.N)
	for i := range truth {
		z := rng.IntN(c.K)
		if c.Shares != nil {
			u, s := rng.Float64(), 0.0
			for k, x := range c.Shares {
				s += x
				if u < s {
					z = k
					break
				}
			}
		}
		truth[i] = z
		used := map[int]bool{}
		for j := 0; j < c.PerItem; j++ {
			l := pick()
			for tries := 0; used[l] && tries < 20 && len(used) < c.L; tries++ {
				l = pick()
			}
			used[l] = true
			reps := 1
			if c.Repeat > 0 && rng.Float64() < c.Repeat {
				reps = 2
			}
			for ; reps > 0; reps-- {
				y := z
				switch kind[l] {
				case spammer:
					y = rng.IntN(c.K)
					if c.Constant {
						y = fixed[l]
					}
				case adversary:
					y = (z + 1 + rng.IntN(c.K-1)) % c.K
				default:
					if rng.Float64() > c.Acc {
						y = (z + 1 + rng.IntN(c.K-1)) % c.K
					}
				}
				d.Labels = append(d.Labels, multirater.Rating{Item: i, Rater: l, Level: y})
			}
		}
	}
	return d, truth
}

// consensusAccuracy is the share of items whose most probable class is
// the true one.
func consensusAccuracy(res *multirater.FitResult, d *Data, truth []int) float64 {
	idx := map[string]int{}
	for k, c := range d.Classes {
		idx[c] = k
	}
	ok := 0
	for i, it := range res.Items {
		if idx[it.Class] == truth[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(truth))
}

// majorityAccuracy is majority vote's accuracy, ties counted as the share
// of the tied classes that are right.
func majorityAccuracy(d *Data, truth []int) float64 {
	cnt := make([][]int, len(d.ItemIDs))
	for i := range cnt {
		cnt[i] = make([]int, len(d.Classes))
	}
	for _, r := range d.Labels {
		cnt[r.Item][r.Level]++
	}
	tot := 0.0
	for i, c := range cnt {
		mx, nt, right := 0, 0, false
		for k, x := range c {
			switch {
			case x > mx:
				mx, nt, right = x, 1, k == truth[i]
			case x == mx && x > 0:
				nt++
				right = right || k == truth[i]
			}
		}
		if right {
			tot += 1 / float64(nt)
		}
	}
	return tot / float64(len(truth))
}
