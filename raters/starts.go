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
	// numpy requires; crowd-kit's default random_state is 0 for both, and
	// with seed 0, the raters numbered in order of their first label and
	// the labels in the file's order (as analysis.Table lays a dataset
	// out) concord starts where crowd-kit does.
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
// random_sample draws, one per rater with labels (nr[j] > 0) in rater
// order; raters without labels get 0 (they are ignored).
func crowdKitUniforms(nr []int, seed uint64) []float64 {
	rs := nprand.New(uint32(seed))
	u := make([]float64, len(nr))
	for j := range u {
		if nr[j] > 0 {
			u[j] = rs.RandomSample()
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

// crowdKitReliabilities is KOS's crowd-kit start for the labels of
// LabelsOf(r): one draw per label in the order the labels were added
// (crowd-kit's data order), laid out in LabelsOf's order.
func crowdKitReliabilities(r *Ratings, seed uint64) []float64 {
	draws := crowdKitNormals(r.Len(), seed)
	_, order := r.byItem()
	out := make([]float64, len(order))
	for y, x := range order {
		out[y] = draws[x]
	}
	return out
}
