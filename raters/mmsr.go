package raters

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// MMSROptions control MMSR. The zero value gives crowd-kit 1.4.1's
// defaults.
type MMSROptions struct {
	// Values are the numeric values of the K classes, for the consensus
	// Score; nil means 1..K.
	Values []float64
	// Ties and TieOrder break ties of the weighted votes, as in
	// MVOptions (crowd-kit: TieFirst in sorted class order).
	Ties     TieRule
	TieOrder []int
	// Iterations bounds the M-MSR iterations (0: 10000, crowd-kit's
	// n_iter) and Tol stops them when the rank-one estimate moves by less
	// than Tol in Frobenius norm (0: 1e-10, crowd-kit's tol).
	Iterations int
	Tol        float64
	// Seed seeds the random start, rand.New(rand.NewPCG(Seed, 0x6d6d7372)):
	// one U(0, 1) draw per rater, used for both factors u and v as
	// crowd-kit does (it draws both with the same random_state).
	Seed uint64
	// RandomStart StartCrowdKit draws the start instead as crowd-kit
	// does, numpy's RandomState(Seed), one draw per rater in order of
	// the rater's first label in labels: pass the labels in crowd-kit's
	// data order (see StartCrowdKit).
	RandomStart RandomStart
	// Start, when not nil, is the start instead: one positive value per
	// rater (raters without labels are ignored).
	Start []float64
	// MaxPairs bounds the co-labellings, Σ over items of m(m-1)/2 for m
	// raters of the item, that bound the time and the rater pairs held
	// (0: 5,000,000; negative: no bound): past it MMSR returns an error
	// (3 items labelled by each of 3,000 raters already have 13.5
	// million).
	MaxPairs int
	// MinPartners, when > 0, makes MMSR return an error when a rater with
	// labels shares items with fewer than MinPartners other raters: below
	// 4 partners F is 0, nothing is trimmed, and the alternating means
	// need not converge (on 2,000 items with 5 labels each from 4,000
	// raters they run all 10,000 iterations). crowd-kit has no such check.
	MinPartners int
}

// mmsrStream is the second word of the start's PCG source ("mmsr").
const mmsrStream = 0x6d6d7372

// MMSR is crowd-kit's M-MSR aggregator (Ma & Olshevsky 2020, "Adversarial
// crowdsourcing through robust rank-one matrix completion", NeurIPS),
// computed on the labels' sparse design: memory is linear in the labels
// plus the rater pairs that label an item in common, with no items ×
// raters table and no dense rater-pair matrix.
//
// With M the classes that occur and n the labelled items, each pair of
// raters (j, l) that label common items (a rater's last label of an item
// counts, as in crowd-kit's observation matrix) has the covariance
//
//	C̃_jl = M/(M-1) · (share of their common items they agree on) - 1/(M-1),
//
// whose expectation is s_j s_l for raters of skill s (the probability of a
// correct label, rescaled to s = (M p - 1)/(M - 1)). The rank-one factors
// u and v start from the same U(0, 1) draws (Seed or Start) and each
// iteration sets every v_j to the mean of |C̃_jl|/u_l over j's partners l,
// after removing up to F of the values above v_j and F below it, then
// every u_j the same way from v (mean-subsequence reduction, F =
// ⌊min partners/2⌋ - 1, at least 0), until ‖u vᵀ - u' v'ᵀ‖_F < Tol. Per
// connected part of the co-labelling graph, |s| = u·sqrt(|v|/|u|). The
// signs, where every pair of the part's raters labels an item in common,
// are crowd-kit's: in the signed graph of the pairs a negative C̃_jl joins
// j and l, a positive one joins them through a new node, every rater has a
// self-loop (the diagonal -1/(M-1)), and the signs are those of the
// eigenvector of the smallest eigenvalue of the random-walk matrix,
// oriented so that most raters are positive. Elsewhere they are the signs
// of the leading eigenvector of the covariances weighted by the common
// items, n_jl C̃_jl (see orient). The skill is clipped to
// [1/√n - 1/(M-1), 1 - 1/√n], turned back into p and into the vote weight
// log((M-1) p/(1-p)) (Skill, kind "log-odds"); the consensus is the
// weighted vote of every label (crowd-kit's MajorityVote with skills: the
// class sums normalised by their total, which with negative weights are
// scores, not probabilities).
//
// Where crowd-kit differs: its sign graph is built from the dense rater ×
// rater matrix, in which pairs without common items have C̃ = -1/(M-1) and
// so count as negative edges; on sparse designs that makes good raters
// adversarial (on a design of 100 good raters, 300 items and 3 labels per
// item, crowd-kit 1.4.1 makes 31 raters adversarial and labels 75.3% of
// the items right; concord 7 and 85.7%, majority vote 89.7%: M-MSR is not
// for such designs). F < 0 (a rater with fewer than 2 partners), where
// crowd-kit's numpy slicing keeps only the largest value, is no trimming
// here; a partner whose factor is 0 (a rater at chance with everyone)
// gives no ratio, where crowd-kit divides by 0 and its NaNs spread; raters
// without partners get weight 0; a tie in the orientation goes to the sign
// of the rater with the largest |s| (crowd-kit would zero every weight).
//
// It returns an error without labels or when fewer than 2 classes occur.
func MMSR(labels []Label, items, raters, k int, o MMSROptions) (*Consensus, error) {
	d, err := newAggregatorData("M-MSR", labels, items, raters, k, o.Values)
	if err != nil {
		return nil, err
	}
	if o.Start != nil && len(o.Start) != raters {
		panic(fmt.Sprintf("raters: %d M-MSR start values for %d raters", len(o.Start), raters))
	}
	if o.Iterations < 0 || o.Tol < 0 || math.IsNaN(o.Tol) {
		panic("raters: negative M-MSR Iterations or Tol")
	}
	o.RandomStart.check(o.Seed)
	m := 0
	for _, t := range d.classTotals() {
		if t > 0 {
			m++
		}
	}
	if m < 2 {
		return nil, fmt.Errorf("raters: M-MSR needs at least 2 classes among the labels, %d occur", m)
	}
	maxPairs := o.MaxPairs
	if maxPairs == 0 {
		maxPairs = 5_000_000
	}
	if p := d.coLabellings(); maxPairs > 0 && p > maxPairs {
		return nil, fmt.Errorf("raters: M-MSR: %d rater pairs co-label items, over the bound of %d (items labelled by many raters; MMSROptions.MaxPairs)", p, maxPairs)
	}
	g := newCoGraph(d, m)
	if o.MinPartners > 0 {
		for j := 0; j < raters; j++ {
			if p := g.start[j+1] - g.start[j]; g.active[j] && p < o.MinPartners {
				return nil, fmt.Errorf("raters: M-MSR: a rater shares items with %d other raters, fewer than %d (too sparse a design for its trimmed means)", p, o.MinPartners)
			}
		}
	}
	u := make([]float64, raters)
	start := "given"
	switch {
	case o.Start != nil:
		copy(u, o.Start)
	case o.RandomStart == StartCrowdKit:
		start = "crowdkit"
		u = crowdKitUniforms(labels, raters, o.Seed)
	default:
		start = "random"
		rnd := rand.New(rand.NewPCG(o.Seed, mmsrStream))
		for j := range u {
			u[j] = rnd.Float64()
		}
	}
	iters := o.Iterations
	if iters == 0 {
		iters = 10000
	}
	tol := o.Tol
	if tol == 0 {
		tol = 1e-10
	}
	v := slices.Clone(u)
	n, conv := g.msr(u, v, iters, tol)
	s := g.signedSkills(u, v)
	skill := make([]float64, raters)
	lo, hi := 1/math.Sqrt(float64(g.tasks))-1/float64(m-1), 1-1/math.Sqrt(float64(g.tasks))
	for j := range skill {
		if d.nr[j] == 0 {
			skill[j] = math.NaN()
			continue
		}
		x := math.Max(math.Min(s[j], hi), lo)
		p := x*float64(m-1)/float64(m) + 1/float64(m)
		skill[j] = math.Log(p * float64(m-1) / (1 - p))
	}
	total := tiePriority(o.Ties, o.TieOrder, d.classTotals())
	c := d.skillConsensus("mmsr", "log-odds", d.weightedVote(skill), total, o.Values, skill)
	c.Fit = &EMDiagnostics{Iterations: n, Converged: conv, Start: start, Seed: o.Seed}
	return c, nil
}

// coLabellings returns Σ over items of m(m-1)/2, m the item's labels.
func (d *dsData) coLabellings() int {
	n := 0
	for _, ls := range d.byItem {
		n += len(ls) * (len(ls) - 1) / 2
	}
	return n
}

// coGraph is the co-labelling graph of the raters: rater j's partners (the
// raters who labelled an item j labelled) are nbr[start[j]:start[j+1]],
// increasing, with the covariances c[...] (C̃ of MMSR).
type coGraph struct {
	r, m   int // raters, classes that occur
	tasks  int // labelled items
	start  []int
	nbr    []int32
	c      []float64
	n      []float64 // items in common
	active []bool    // raters with labels
}

// newCoGraph builds the graph in memory linear in the labels and the
// pairs, and time Σ_items (labels of the item)².
func newCoGraph(d *dsData, m int) *coGraph {
	g := &coGraph{r: d.r, m: m, active: make([]bool, d.r)}
	// One label per rater and item, the last (crowd-kit's observation
	// matrix), by item and by rater.
	type rc struct{ rater, class int32 }
	itemStart := make([]int, d.n+1)
	var obs []rc
	for i, ls := range d.byItem {
		first := len(obs)
		for _, l := range ls {
			dup := false
			for x := first; x < len(obs); x++ {
				if obs[x].rater == int32(l.Rater) {
					obs[x].class, dup = int32(l.Class), true
					break
				}
			}
			if !dup {
				obs = append(obs, rc{int32(l.Rater), int32(l.Class)})
			}
		}
		if len(obs) > first {
			g.tasks++
		}
		itemStart[i+1] = len(obs)
	}
	raterStart := make([]int, d.r+1)
	for _, x := range obs {
		raterStart[x.rater+1]++
		g.active[x.rater] = true
	}
	for j := 0; j < d.r; j++ {
		raterStart[j+1] += raterStart[j]
	}
	byRater := make([]int32, len(obs)) // item of each observation, by rater
	cls := make([]int32, len(obs))
	next := slices.Clone(raterStart[:d.r])
	for i := 0; i < d.n; i++ {
		for _, x := range obs[itemStart[i]:itemStart[i+1]] {
			byRater[next[x.rater]], cls[next[x.rater]] = int32(i), x.class
			next[x.rater]++
		}
	}
	common := make([]float64, d.r)
	agree := make([]float64, d.r)
	var touched []int32
	g.start = make([]int, d.r+1)
	scale, shift := float64(m)/float64(m-1), 1/float64(m-1)
	for j := 0; j < d.r; j++ {
		touched = touched[:0]
		for p := raterStart[j]; p < raterStart[j+1]; p++ {
			i, cj := byRater[p], cls[p]
			for _, x := range obs[itemStart[i]:itemStart[i+1]] {
				if x.rater == int32(j) {
					continue
				}
				if common[x.rater] == 0 {
					touched = append(touched, x.rater)
				}
				common[x.rater]++
				if x.class == cj {
					agree[x.rater]++
				}
			}
		}
		slices.Sort(touched)
		for _, l := range touched {
			g.nbr = append(g.nbr, l)
			g.c = append(g.c, agree[l]/common[l]*scale-shift)
			g.n = append(g.n, common[l])
			common[l], agree[l] = 0, 0
		}
		g.start[j+1] = len(g.nbr)
	}
	return g
}

// msr runs the mean-subsequence-reduced iterations on u and v in place and
// returns the iterations run and whether the change fell below tol.
func (g *coGraph) msr(u, v []float64, iters int, tol float64) (int, bool) {
	sparsity := math.MaxInt
	for j := 0; j < g.r; j++ {
		if g.active[j] {
			sparsity = min(sparsity, g.start[j+1]-g.start[j])
		}
	}
	f := max(sparsity/2-1, 0)
	rootN := math.Sqrt(float64(g.tasks))
	up, vp := make([]float64, g.r), make([]float64, g.r)
	var buf []float64
	update := func(dst, by []float64) {
		for j := 0; j < g.r; j++ {
			lo, hi := g.start[j], g.start[j+1]
			if lo == hi {
				continue
			}
			buf = buf[:0]
			for p := lo; p < hi; p++ {
				if b := by[g.nbr[p]]; b != 0 {
					buf = append(buf, math.Abs(g.c[p])/b)
				}
			}
			if y, ok := trimmedMean(buf, f, dst[j], rootN); ok {
				dst[j] = y
			}
		}
	}
	for it := 1; it <= iters; it++ {
		copy(up, u)
		copy(vp, v)
		update(v, u)
		update(u, v)
		// ‖u vᵀ - u' v'ᵀ‖²_F with du = u - u', dv = v - v':
		// ‖du vᵀ + u' dvᵀ‖² = |du|²|v|² + 2 (du·u')(v·dv) + |u'|²|dv|²,
		// accurate for small changes (no cancellation of large terms).
		var du2, v2, duu, vdv, u2, dv2 float64
		for j := 0; j < g.r; j++ {
			du, dv := u[j]-up[j], v[j]-vp[j]
			du2 += du * du
			v2 += v[j] * v[j]
			duu += du * up[j]
			vdv += v[j] * dv
			u2 += up[j] * up[j]
			dv2 += dv * dv
		}
		if loss := math.Sqrt(math.Max(du2*v2+2*duu*vdv+u2*dv2, 0)); loss < tol {
			return it, true
		}
	}
	return iters, false
}

// trimmedMean is crowd-kit's _remove_largest_and_smallest_F_value and the
// mean: x sorted, up to f values below a and up to f above it removed (all
// of them when fewer than f); a single 0 left counts as 1/√n. It reports
// false when nothing is left. For f ≤ 8 it selects the removed values in
// O(len(x)·f) instead of sorting (x is then left unsorted).
func trimmedMean(x []float64, f int, a, rootN float64) (float64, bool) {
	if f <= 8 {
		below, above := 0, 0
		total := 0.0
		for _, v := range x {
			total += v
			if v < a {
				below++
			} else if v > a {
				above++
			}
		}
		lo, hi := min(below, f), min(above, f)
		if left := len(x) - lo - hi; left != 1 {
			if left == 0 {
				return 0, false
			}
			return (total - extremeSum(x, lo, -1) - extremeSum(x, hi, 1)) / float64(left), true
		}
	}
	slices.Sort(x)
	below := 0
	for below < len(x) && x[below] < a {
		below++
	}
	x = x[min(below, f):]
	above := 0
	for above < len(x) && x[len(x)-1-above] > a {
		above++
	}
	x = x[:len(x)-min(above, f)]
	if len(x) == 0 {
		return 0, false
	}
	if len(x) == 1 && x[0] == 0 {
		return 1 / rootN, true
	}
	return sum(x) / float64(len(x)), true
}

// extremeSum returns the sum of the n smallest (dir -1) or largest (dir 1)
// values of x, n ≤ 8, by n scans.
func extremeSum(x []float64, n int, dir float64) float64 {
	var taken [8]int
	s := 0.0
	for t := 0; t < n; t++ {
		best := -1
		for i, v := range x {
			if slices.Contains(taken[:t], i) {
				continue
			}
			if best < 0 || dir*v > dir*x[best] {
				best = i
			}
		}
		taken[t] = best
		s += x[best]
	}
	return s
}

// signedSkills returns each rater's signed skill s_j: |s| from the factors
// per connected part of the graph, the sign by the part's signed graph.
func (g *coGraph) signedSkills(u, v []float64) []float64 {
	s := make([]float64, g.r)
	part := make([]int, g.r)
	for j := range part {
		part[j] = -1
	}
	var queue []int
	for root := 0; root < g.r; root++ {
		if part[root] >= 0 || !g.active[root] || g.start[root] == g.start[root+1] {
			continue
		}
		// The part of root, by breadth-first search.
		queue = append(queue[:0], root)
		part[root] = root
		for q := 0; q < len(queue); q++ {
			j := queue[q]
			for _, l := range g.nbr[g.start[j]:g.start[j+1]] {
				if part[l] < 0 {
					part[l] = root
					queue = append(queue, int(l))
				}
			}
		}
		var nu, nv float64
		for _, j := range queue {
			nu += u[j] * u[j]
			nv += v[j] * v[j]
		}
		k := math.Sqrt(math.Sqrt(nu) / math.Sqrt(nv))
		for _, j := range queue {
			s[j] = u[j] / k
		}
		g.orient(slices.Clone(queue), s)
	}
	return s
}

// orient multiplies the skills of the raters of one part (nodes) by their
// signs, oriented so that most raters are positive (a tie goes to the
// sign of the rater with the largest |s|); raters whose covariances are
// all 0 get skill 0. Where every pair of the part's raters labels an item
// in common the signs are crowd-kit's (spectralSigns); otherwise those of
// the leading eigenvector of the pairs' covariances weighted by their
// common items (leadingEigvec).
func (g *coGraph) orient(nodes []int, s []float64) {
	slices.Sort(nodes)
	complete := true
	for _, j := range nodes {
		complete = complete && g.start[j+1]-g.start[j] == len(nodes)-1
	}
	var y []float64
	if complete {
		y = g.spectralSigns(nodes)
	} else {
		y = g.leadingEigvec(nodes)
	}
	vote, big := 0.0, -1
	for x, j := range nodes {
		vote += sign(y[x])
		if y[x] != 0 && (big < 0 || math.Abs(s[j]) > math.Abs(s[nodes[big]])) {
			big = x
		}
	}
	orient := math.Copysign(1, vote)
	if vote == 0 && big >= 0 {
		orient = sign(y[big])
	}
	for x, j := range nodes {
		s[j] *= orient * sign(y[x])
	}
}

// spectralSigns is crowd-kit's _sign_determination_valid: in the signed
// graph of the raters, a negative C̃_jl joins j and l, a positive one joins
// them through a new node (a path of even length) and every rater has a
// self-loop (C̃'s diagonal, -1/(M-1)); the signs are those of the
// eigenvector of the smallest eigenvalue of the random-walk matrix D⁻¹A,
// equivalently of N = D^-½ A D^-½, found by power iteration on I - N
// (eigenvalues in [0, 2]) from +√d on the raters and -√2 on the pair nodes
// (the answer when every pair is positive), matrix-free. It returns the
// raters' entries (0 for raters whose covariances are all 0; crowd-kit
// leaves out raters whose row of C̃ sums to 0, which also drops raters of
// skill 3/4 on two classes with two partners).
func (g *coGraph) spectralSigns(nodes []int) []float64 {
	k := len(nodes)
	local := localIndex(nodes)
	valid := make([]bool, k)
	deg := make([]float64, k)
	var pos [][2]int32 // positive pairs x < y (local indices)
	for x, j := range nodes {
		for p := g.start[j]; p < g.start[j+1]; p++ {
			valid[x] = valid[x] || g.c[p] != 0
		}
	}
	for x, j := range nodes {
		if !valid[x] {
			continue
		}
		deg[x] = 1 // the self-loop
		for p := g.start[j]; p < g.start[j+1]; p++ {
			y := local[g.nbr[p]]
			if !valid[y] || g.c[p] == 0 {
				continue
			}
			deg[x]++
			if g.c[p] > 0 && x < y {
				pos = append(pos, [2]int32{int32(x), int32(y)})
			}
		}
	}
	m := len(pos)
	y := make([]float64, k+m)
	z := make([]float64, k+m)
	isq := make([]float64, k+m) // D^-½
	for x := 0; x < k; x++ {
		if valid[x] {
			isq[x] = 1 / math.Sqrt(deg[x])
			y[x] = math.Sqrt(deg[x])
		}
	}
	for e := range pos {
		isq[k+e] = 1 / math.Sqrt2
		y[k+e] = -math.Sqrt2
	}
	normalise(y)
	const maxIter = 20000
	for it := 0; it < maxIter; it++ {
		// z = A D^-½ y, then (I - N) y = y - D^-½ z.
		clear(z)
		for x, j := range nodes {
			if !valid[x] {
				continue
			}
			a := y[x] * isq[x]
			for p := g.start[j]; p < g.start[j+1]; p++ {
				if w := local[g.nbr[p]]; g.c[p] < 0 && valid[w] {
					a += y[w] * isq[w]
				}
			}
			z[x] = a
		}
		for e, pr := range pos {
			a, b := int(pr[0]), int(pr[1])
			z[a] += y[k+e] * isq[k+e]
			z[b] += y[k+e] * isq[k+e]
			z[k+e] = y[a]*isq[a] + y[b]*isq[b]
		}
		for i := range z {
			z[i] = y[i] - isq[i]*z[i]
		}
		if powerStep(y, z) {
			break
		}
	}
	return y[:k]
}

// powerStep moves y to z normalised (z = T y) and reports whether y was an
// eigenvector of T to 1e-10 relative.
func powerStep(y, z []float64) bool {
	theta := dot(y, z)
	res := 0.0
	for i := range z {
		d := z[i] - theta*y[i]
		res += d * d
	}
	copy(y, z)
	normalise(y)
	return math.Sqrt(res) <= 1e-10*math.Abs(theta)
}

func normalise(w []float64) {
	if n := math.Sqrt(dot(w, w)); n > 0 {
		for i := range w {
			w[i] /= n
		}
	}
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// localIndex maps each rater of a part (nodes) to its place in nodes.
func localIndex(nodes []int) map[int32]int {
	local := make(map[int32]int, len(nodes))
	for x, j := range nodes {
		local[int32(j)] = x
	}
	return local
}

// leadingEigvec returns the eigenvector of the largest eigenvalue of B
// over the part's raters (nodes, increasing), by Lanczos (lanczosTop) from
// the all-positive vector; matrix-free, memory linear in the raters.
func (g *coGraph) leadingEigvec(nodes []int) []float64 {
	k := len(nodes)
	local := localIndex(nodes)
	start := make([]float64, k)
	for x := range start {
		start[x] = 1
	}
	return lanczosTop(k, func(dst, y []float64) {
		for x, j := range nodes {
			a := 0.0
			for p := g.start[j]; p < g.start[j+1]; p++ {
				a += g.n[p] * g.c[p] * y[local[g.nbr[p]]]
			}
			dst[x] = a
		}
	}, start)
}

// lanczosTop returns the eigenvector of the largest eigenvalue of the
// symmetric operator op of dimension k (op(dst, x) sets dst = A x), by
// Lanczos with full reorthogonalisation, restarted from the Ritz vector
// every 30 steps until the residual is below 1e-10 of the largest Ritz
// value's magnitude (at most 100 restarts); memory 31 vectors of length k.
func lanczosTop(k int, op func(dst, x []float64), start []float64) []float64 {
	const steps = 30
	x := slices.Clone(start)
	normalise(x)
	basis := make([][]float64, steps+1)
	for i := range basis {
		basis[i] = make([]float64, k)
	}
	alpha, beta := make([]float64, steps), make([]float64, steps)
	for restart := 0; restart < 100; restart++ {
		copy(basis[0], x)
		m := 0
		for j := 0; j < steps; j++ {
			w := basis[j+1]
			op(w, basis[j])
			alpha[j] = dot(w, basis[j])
			for pass := 0; pass < 2; pass++ {
				for i := 0; i <= j; i++ {
					c := dot(w, basis[i])
					for t := range w {
						w[t] -= c * basis[i][t]
					}
				}
			}
			beta[j] = math.Sqrt(dot(w, w))
			m = j + 1
			if beta[j] <= 1e-14*(math.Abs(alpha[j])+1e-300) || m == k {
				break
			}
			for t := range w {
				w[t] /= beta[j]
			}
		}
		tri := mat.NewSymDense(m, nil)
		for j := 0; j < m; j++ {
			tri.SetSym(j, j, alpha[j])
			if j+1 < m {
				tri.SetSym(j, j+1, beta[j])
			}
		}
		var es mat.EigenSym
		if !es.Factorize(tri, true) {
			return x
		}
		vals := es.Values(nil)
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		top := m - 1 // gonum orders the eigenvalues ascending
		clear(x)
		for j := 0; j < m; j++ {
			c := vecs.At(j, top)
			for t := range x {
				x[t] += c * basis[j][t]
			}
		}
		normalise(x)
		if beta[m-1]*math.Abs(vecs.At(m-1, top)) <= 1e-10*math.Max(math.Abs(vals[top]), 1e-300) || m < steps {
			return x
		}
	}
	return x
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// mmsrAggregator is the report's M-MSR entry: designs where a rater shares
// items with fewer than 4 others are left out with a note.
func mmsrAggregator() aggregatorRun {
	return aggregatorRun{"mmsr", "M-MSR", func(_ context.Context, in *aggInput) (*Consensus, error) {
		return MMSR(in.startLabels(), in.r.Items, in.r.Raters, in.r.K, MMSROptions{Values: in.vals, Ties: in.o.Ties, TieOrder: in.o.TieOrder, Seed: in.o.Seed, RandomStart: in.o.RandomStart, MinPartners: 4})
	}}
}
