// Package nprand is numpy's legacy random generator, numpy.random.RandomState
// (numpy 1.17 to 2.x: the Mersenne Twister MT19937 of Matsumoto & Nishimura
// 1998 seeded by its init_genrand, random_sample's 53-bit doubles and
// legacy_gauss's polar Box-Muller normals with the second value of a pair
// kept for the next call), so that concord can start an algorithm from the
// very draws a Python tool makes: crowd-kit 1.4.1 draws M-MSR's start with
// scipy.stats.uniform.rvs(random_state=0) (RandomState(0).uniform) and
// KOS's with np.random.seed(0); np.random.normal(1, 1).
//
// The uniform draws are numpy's bit for bit; the normals go through log and
// sqrt, and Go's math.Log may differ from the C library's numpy calls in the
// last place (testdata/reference.csv, numpy's own output, agrees to 2 ulp).
package nprand

import "math"

// n and m are MT19937's state length and shift (32-bit words).
const (
	n         = 624
	m         = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// RandomState is numpy.random.RandomState seeded with an integer: its
// MT19937 state and legacy_gauss's cached second normal. The zero value is
// not usable; New returns one.
type RandomState struct {
	mt       [n]uint32
	pos      int
	hasGauss bool
	gauss    float64
}

// New returns numpy.random.RandomState(seed) (numpy accepts the seeds 0 to
// 2^32 - 1, which is all of uint32).
func New(seed uint32) *RandomState {
	r := &RandomState{}
	r.Seed(seed)
	return r
}

// Seed reseeds r as RandomState.seed(seed) and np.random.seed(seed) do
// (numpy's mt19937_seed, Matsumoto & Nishimura's init_genrand: mt[0] =
// seed, mt[i] = 1812433253 (mt[i-1] xor mt[i-1] >> 30) + i), dropping a
// cached normal.
func (r *RandomState) Seed(seed uint32) {
	r.mt[0] = seed
	for i := 1; i < n; i++ {
		p := r.mt[i-1]
		r.mt[i] = 1812433253*(p^(p>>30)) + uint32(i)
	}
	r.pos = n
	r.hasGauss, r.gauss = false, 0
}

// generate refills the state (numpy's mt19937_gen).
func (r *RandomState) generate() {
	mag := func(y uint32) uint32 { return (y >> 1) ^ (-(y & 1) & matrixA) }
	i := 0
	for ; i < n-m; i++ {
		y := r.mt[i]&upperMask | r.mt[i+1]&lowerMask
		r.mt[i] = r.mt[i+m] ^ mag(y)
	}
	for ; i < n-1; i++ {
		y := r.mt[i]&upperMask | r.mt[i+1]&lowerMask
		r.mt[i] = r.mt[i+m-n] ^ mag(y)
	}
	y := r.mt[n-1]&upperMask | r.mt[0]&lowerMask
	r.mt[n-1] = r.mt[m-1] ^ mag(y)
	r.pos = 0
}

// Uint32 returns the next tempered 32-bit word (numpy's mt19937_next32).
func (r *RandomState) Uint32() uint32 {
	if r.pos == n {
		r.generate()
	}
	y := r.mt[r.pos]
	r.pos++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// RandomSample returns RandomState.random_sample(): a double in [0, 1)
// from two words, (a>>5 · 2^26 + b>>6) / 2^53 (numpy's
// mt19937_next_double).
func (r *RandomState) RandomSample() float64 {
	a, b := r.Uint32()>>5, r.Uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}

// Uniform returns RandomState.uniform(lo, hi): lo + (hi - lo) ·
// random_sample(). scipy.stats.uniform.rvs(loc, scale, random_state=r)
// is Uniform(0, 1) · scale + loc.
func (r *RandomState) Uniform(lo, hi float64) float64 {
	return lo + (hi-lo)*r.RandomSample()
}

// StandardNormal returns RandomState.standard_normal() (numpy's
// legacy_gauss): a cached value if the previous call left one, otherwise
// the polar method of Marsaglia & Bray (1964) on x1, x2 = 2 u - 1 until 0 <
// r² = x1² + x2² < 1, returning x2 · f and keeping x1 · f, f = sqrt(-2 log
// r² / r²).
func (r *RandomState) StandardNormal() float64 {
	if r.hasGauss {
		g := r.gauss
		r.hasGauss, r.gauss = false, 0
		return g
	}
	var x1, x2, r2 float64
	for {
		x1 = 2*r.RandomSample() - 1
		x2 = 2*r.RandomSample() - 1
		r2 = x1*x1 + x2*x2
		if r2 < 1 && r2 != 0 {
			break
		}
	}
	f := math.Sqrt(-2 * math.Log(r2) / r2)
	r.gauss, r.hasGauss = f*x1, true
	return f * x2
}

// Normal returns RandomState.normal(loc, scale): loc + scale ·
// StandardNormal() (numpy's legacy_normal).
func (r *RandomState) Normal(loc, scale float64) float64 {
	return loc + scale*r.StandardNormal()
}
