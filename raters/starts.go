package raters

import (
	"fmt"
	"math"

	"concord/raters/internal/nprand"
)

// RandomStart says how M-MSR and KOS draw their random starts from the
// seed (Options.Seed, MMSROptions.Seed, SkillOptions.Seed).
type RandomStart int

const (
	// StartConcord draws them from concord's seeded PCG generator
	// (math/rand/v2), the default.
	StartConcord RandomStart = iota
	// StartCrowdKit draws them as crowd-kit 1.4.1 does, from numpy's
	// legacy generator numpy.random.RandomState(seed) (MT19937; package
	// raters/internal/nprand): M-MSR's one U(0, 1) per rater with labels,
	// in rater order (scipy.stats.uniform.rvs(random_state=seed), the
	// same draws for both factors), KOS's one N(1, 1) per label in the
	// order the labels were added (np.random.seed(seed);
	// np.random.normal(1, 1, size)). The seed must be below 2^32, as
	// numpy requires. Both draw in the order of the user's data (the
	// labels given to MMSR and KOS; Options.DataOrder in Analyze):
	// crowd-kit's default random_state is 0 for both, and with seed 0 and
	// the labels in the order of crowd-kit's DataFrame concord starts
	// where crowd-kit does.
	StartCrowdKit
)

var startNames = [...]string{"concord", "crowdkit"}

// RandomStarts lists the names ParseRandomStart knows.
var RandomStarts = startNames[:]

func (s RandomStart) String() string {
	if s < 0 || int(s) >= len(startNames) {
		return "RandomStart(?)"
	}
	return startNames[s]
}

// ParseRandomStart parses "concord" or "crowdkit".
func ParseRandomStart(s string) (RandomStart, error) {
	for k, n := range startNames {
		if s == n {
			return RandomStart(k), nil
		}
	}
	return 0, fmt.Errorf("unknown random start %q (concord or crowdkit)", s)
}

// CrowdKitSeed is the seed of crowd-kit's M-MSR and KOS when the user
// leaves random_state alone.
const CrowdKitSeed = 0

// MaxNumPySeed is the largest seed numpy's RandomState takes.
const MaxNumPySeed = math.MaxUint32

// check panics on a start that is a caller bug: an unknown one, or
// StartCrowdKit with a seed numpy refuses.
func (s RandomStart) check(seed uint64) {
	switch {
	case s != StartConcord && s != StartCrowdKit:
		panic(fmt.Sprintf("raters: unknown RandomStart %d", s))
	case s == StartCrowdKit && seed > MaxNumPySeed:
		panic(fmt.Sprintf("raters: crowd-kit's random start takes a seed from 0 to %d (numpy's RandomState), got %d", uint64(MaxNumPySeed), seed))
	}
}

// crowdKitUniforms are M-MSR's crowd-kit start: numpy's RandomState(seed)
// random_sample draws, one per rater in order of the rater's first label
// in labels (crowd-kit numbers its workers by pd.unique, in data order);
// raters without labels get 0 (they are ignored).
func crowdKitUniforms(labels []Label, raters int, seed uint64) []float64 {
	rs := nprand.New(uint32(seed))
	u := make([]float64, raters)
	seen := make([]bool, raters)
	for _, l := range labels {
		if !seen[l.Rater] {
			seen[l.Rater] = true
			u[l.Rater] = rs.RandomSample()
		}
	}
	return u
}

// crowdKitNormals are n draws of numpy's N(1, 1) after
// np.random.seed(seed), KOS's crowd-kit start for n labels.
func crowdKitNormals(n int, seed uint64) []float64 {
	rs := nprand.New(uint32(seed))
	out := make([]float64, n)
	for e := range out {
		out[e] = rs.Normal(1, 1)
	}
	return out
}

// labelsInDataOrder returns r's labels in the order of the user's data:
// label x (in the order added) at position order[x] (a permutation of
// 0..r.Len()-1; nil: the order added), what crowd-kit's random starts
// follow.
func labelsInDataOrder(r *Ratings, order []int32) []Label {
	out := make([]Label, r.Len())
	if order != nil && len(order) != len(out) {
		panic(fmt.Sprintf("raters: Options.DataOrder has %d positions for %d labels", len(order), len(out)))
	}
	var seen []bool
	if order != nil {
		seen = make([]bool, len(out))
	}
	for x := range out {
		y := x
		if order != nil {
			if y = int(order[x]); y < 0 || y >= len(out) || seen[y] {
				panic(fmt.Sprintf("raters: Options.DataOrder is not a permutation (position %d)", y))
			}
			seen[y] = true
		}
		out[y] = Label{Item: int(r.item[x]), Rater: int(r.rater[x]), Class: int(r.val[x])}
	}
	return out
}
