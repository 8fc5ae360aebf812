package ordinal

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"concord/multirater/numeric"
)

// maxOpenRank is the largest rank of a non-diagonal prior for which the
// default sampler makes the open-level move (its cost has an O(N r^2 + r^3)
// part); above it the move is left out.
const maxOpenRank = 128

// openRelTol is the relative eigenvalue of C below which eigendirections are
// left out of the open-level move.
const openRelTol = 1e-6

// openScratch is the per-chain workspace of stepOpen.
type openScratch struct {
	dc, ec []float64 // per item, bounded levels: sum alpha_l, sum alpha_l (y_nl - m_n)
	hc     []float64 // r×r: H_c, then its Cholesky factor L
	beta   []float64 // r
	vt     []float64 // r × len(openItems): L^{-1} G_open'
	c      []float64 // r: the coordinates drawn
	slack  []openSlack
}

func newOpenScratch(md *ordModel) *openScratch {
	n, r := md.n, md.openRank
	s := &openScratch{dc: make([]float64, n), ec: make([]float64, n)}
	if !md.f.Diag {
		s.hc = make([]float64, r*r)
		s.beta = make([]float64, r)
		no := len(md.openItems)
		s.vt = make([]float64, r*no)
		s.c = make([]float64, r)
		s.slack = make([]openSlack, no)
	}
	return s
}

// stepOpen is the open-level move, an interweaving step (Yu & Meng 2011)
// for the ratings in the unbounded bottom and top levels. Their latent
// values are nearly free given m (y - b_l,K-1 can be anything positive), so
// where many ratings are extreme the exact draw of m given y barely moves m:
// the many nearly free y hold it in place, and the chain of m crawls along
// the directions they pin (for the paper's toy data, the height of the
// consensus in its tails). This move translates m together with those
// latent values. For delta in R^r the maps
//
//	w -> w + delta (so m -> m + G delta),
//	y_nl -> y_nl + (G delta)_n for the ratings in an unbounded level,
//
// form a group with unit Jacobian and Lebesgue Haar measure (Liu & Sabatti
// 2000). The moved latent values keep their offsets from m, so only the
// prior, the bounded-level ratings and the indicators of the unbounded ones
// depend on delta:
//
//	log p(delta) = -|w + delta|^2/2 - sum_bounded alpha_l (y_nl - m_n - (G delta)_n)^2/2
//	subject to b_l,K-1 < y_nl + (G delta)_n (top), y_nl + (G delta)_n <= b_l1 (bottom):
//
// a normal distribution N(H_c^{-1}(G'E - w), H_c^{-1}), H_c = I + G' D_c G
// (D_c, E: precision and precision-weighted residual sums of the
// bounded-level ratings), truncated to a polyhedron. In the coordinates
// z = L' delta (H_c = L L') it is a standard normal with mean
// beta = L^{-1}(G'E - w), truncated; the move runs one Gibbs scan over the r
// coordinates from z = 0, each an exact draw from a normal truncated to an
// interval. Directions the bounded ratings do not pin (the tails) are then
// drawn nearly independently.
//
// For a diagonal C the coordinates are the items, O(N + M). Otherwise H_c is
// assembled from per-rater r×r matrices computed once and factorised by
// Cholesky, and L^{-1} G' costs O(N r^2): O(N r^2 + r^3 + r M_open) per sweep.
func (ch *ordChain) stepOpen() {
	md := ch.md
	s := ch.open
	for n := range s.dc {
		s.dc[n] = 0
		s.ec[n] = 0
	}
	for o, it := range md.obsItem {
		if md.obsShift[o] {
			continue
		}
		a := ch.alpha[md.obsRater[o]]
		s.dc[it] += a
		s.ec[it] += a * (ch.y[o] - ch.m[it])
	}
	if md.f.Diag {
		ch.openDiag()
		return
	}
	ch.openLowRank()
}

// openBounds narrows (lo, hi) to the steps c for which moving item n's
// latent value by c v keeps each of its unbounded-level latent values in
// its level.
func (ch *ordChain) openBounds(n int, v, lo, hi float64) (float64, float64) {
	md := ch.md
	if v == 0 {
		return lo, hi
	}
	k := md.nk
	for _, o := range md.itemObs[md.itemStart[n]:md.itemStart[n+1]] {
		op := md.obsOpen[o]
		if op == 0 {
			continue
		}
		l := int(md.obsRater[o])
		var bound float64
		if op > 0 {
			// y + c v > b_K-1.
			bound = (ch.b[md.bIdx(l, k-1)] - ch.y[o]) / v
			if v > 0 {
				lo = math.Max(lo, bound)
			} else {
				hi = math.Min(hi, bound)
			}
		} else {
			// y + c v <= b_1.
			bound = (ch.b[md.bIdx(l, 1)] - ch.y[o]) / v
			if v > 0 {
				hi = math.Min(hi, bound)
			} else {
				lo = math.Max(lo, bound)
			}
		}
	}
	return lo, hi
}

// shiftOpen adds d to item n's unbounded-level latent values.
func (ch *ordChain) shiftOpen(n int, d float64) {
	md := ch.md
	for _, o := range md.itemObs[md.itemStart[n]:md.itemStart[n+1]] {
		if md.obsOpen[o] != 0 {
			ch.y[o] += d
		}
	}
}

func (ch *ordChain) openDiag() {
	md := ch.md
	s := ch.open
	for n, sd := range md.f.SD {
		if sd == 0 || md.openIndex[n] < 0 {
			// Without unbounded ratings the move is the exact draw of
			// stepM again.
			continue
		}
		lo, hi := ch.openBounds(n, sd, math.Inf(-1), math.Inf(1))
		if !(lo < hi) {
			continue
		}
		prec := 1 + s.dc[n]*sd*sd
		mean := (sd*s.ec[n] - ch.w[n]) / prec
		c := numeric.TruncNormal(ch.rng, mean, 1/math.Sqrt(prec), lo, hi)
		ch.w[n] += c
		ch.m[n] += c * sd
		ch.shiftOpen(n, c*sd)
	}
}

func (ch *ordChain) openLowRank() {
	md := ch.md
	s := ch.open
	f := md.f
	r := md.openRank
	no := len(md.openItems)
	if no == 0 || r == 0 {
		// Nothing is unbounded: the exact draw of m given y is enough.
		return
	}
	// H_c = I + sum_l alpha_l closedGram[l] (lower triangle).
	for i := range s.hc {
		s.hc[i] = 0
	}
	for l, gm := range md.closedGram {
		a := ch.alpha[l]
		for i := 0; i < r; i++ {
			row := s.hc[i*r : i*r+i+1]
			for j, v := range gm[i*r : i*r+i+1] {
				row[j] += a * v
			}
		}
	}
	for i := 0; i < r; i++ {
		s.hc[i*r+i]++
	}
	chol, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: r, Stride: r, Data: s.hc})
	if !ok {
		// Cannot happen (H_c >= I); skip the move.
		return
	}
	// beta = L^{-1}(G'E - w) over the leading r directions.
	blas64.Gemv(blas.Trans, 1, blas64.General{Rows: md.n, Cols: r, Stride: f.R, Data: f.G},
		blas64.Vector{N: md.n, Inc: 1, Data: s.ec}, 0, blas64.Vector{N: r, Inc: 1, Data: s.beta})
	for k := range s.beta {
		s.beta[k] -= ch.w[k]
	}
	blas64.Trsv(blas.NoTrans, chol, blas64.Vector{N: r, Inc: 1, Data: s.beta})
	// vt = L^{-1} G_open' (r × items with unbounded ratings): row j holds
	// G L^{-T} e_j, the item-space image of coordinate j, at those items.
	copy(s.vt, md.gTOpen)
	blas64.Trsm(blas.Left, blas.NoTrans, 1, chol, blas64.General{Rows: r, Cols: no, Stride: no, Data: s.vt})
	// Per item with an unbounded-level rating, the smallest slack of those
	// latent values: top y - b_l,K-1 > 0 and bottom b_l1 - y >= 0. A move of
	// the item's latent values by d keeps them in their levels iff
	// d > -top and d <= bot.
	sl := s.slack[:no]
	ch.openSlacks(sl)
	for j := 0; j < r; j++ {
		v := s.vt[j*no : (j+1)*no]
		// Try an unconstrained draw first (rejection from the normal, exact);
		// compute the interval only when it falls outside.
		c := s.beta[j] + ch.rng.NormFloat64()
		feasible := true
		for i, vn := range v {
			d := c * vn
			if !(d > -sl[i].top && d <= sl[i].bot) {
				feasible = false
				break
			}
		}
		if !feasible {
			lo, hi := openInterval(v, sl)
			s.c[j] = 0
			if !(lo < hi) {
				continue
			}
			c = numeric.TruncNormal(ch.rng, s.beta[j], 1, lo, hi)
		}
		s.c[j] = c
		for i, vn := range v {
			d := c * vn
			sl[i].shift += d
			sl[i].top += d
			sl[i].bot -= d
		}
	}
	// delta = L^{-T} c; w += delta, m += G delta.
	blas64.Trsv(blas.Trans, chol, blas64.Vector{N: r, Inc: 1, Data: s.c})
	for i, d := range s.c {
		ch.w[i] += d
	}
	if ch.e == nil {
		blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: md.n, Cols: r, Stride: f.R, Data: f.G},
			blas64.Vector{N: r, Inc: 1, Data: s.c}, 1, blas64.Vector{N: md.n, Inc: 1, Data: ch.m})
	} else {
		// m = G w + e: G delta (into dc, free until the next move) goes to
		// both m and gw = G w.
		blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: md.n, Cols: r, Stride: f.R, Data: f.G},
			blas64.Vector{N: r, Inc: 1, Data: s.c}, 0, blas64.Vector{N: md.n, Inc: 1, Data: s.dc})
		for i, v := range s.dc {
			ch.m[i] += v
			ch.gw[i] += v
		}
	}
	for _, o := range md.openObs {
		ch.y[o] += sl[md.openIndex[md.obsItem[o]]].shift
	}
}

// openSlacks sets sl, per item with an unbounded-level rating, to the
// smallest slack of those latent values: top y - b_l,K-1 > 0 and bottom
// b_l1 - y >= 0 (shift 0).
func (ch *ordChain) openSlacks(sl []openSlack) {
	md := ch.md
	k := md.nk
	inf := math.Inf(1)
	for i := range sl {
		sl[i] = openSlack{top: inf, bot: inf}
	}
	for _, o := range md.openObs {
		e := &sl[md.openIndex[md.obsItem[o]]]
		l := int(md.obsRater[o])
		if md.obsOpen[o] > 0 {
			if v := ch.y[o] - ch.b[md.bIdx(l, k-1)]; v < e.top {
				e.top = v
			}
		} else if v := ch.b[md.bIdx(l, 1)] - ch.y[o]; v < e.bot {
			e.bot = v
		}
	}
}

// openInterval returns the interval (lo, hi] of the coefficients c of a
// move c v of the items' latent values that keeps every item's values in
// their levels: c v_i > -top_i and c v_i <= bot_i.
func openInterval(v []float64, sl []openSlack) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	for i, vn := range v {
		switch {
		case vn > 0:
			iv := 1 / vn
			if b := -sl[i].top * iv; b > lo {
				lo = b
			}
			if b := sl[i].bot * iv; b < hi {
				hi = b
			}
		case vn < 0:
			iv := 1 / vn
			if b := -sl[i].top * iv; b < hi {
				hi = b
			}
			if b := sl[i].bot * iv; b > lo {
				lo = b
			}
		}
	}
	return lo, hi
}

// openSlack is the state of one item in openLowRank.
type openSlack struct {
	top, bot, shift float64
}
