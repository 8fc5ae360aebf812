package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"concord/analysis"
	"concord/annotations"
	"concord/raters"
)

// Agreement analyses.
//
// An agreement analysis costs O(labels) for the coefficients and the
// crowd aggregators (Dawid-Skene, GLAD, MACE, ...) and O(replicates × (labels + rater pairs sharing
// an item)) for the bootstrap, so that a large project can keep the cores
// busy for minutes. Any key that can read a project can ask for one, so
// the server bounds and shares the work:
//
//   - The bootstrap resamples at most Config.MaxBootstrapWork labels and
//     rater pairs per analysis (analysis.PlanBootstrap): an explicit
//     bootstrap beyond it is refused (400, naming the limit and the most
//     that fits), the default is reduced to fit, with a note.
//   - Documents are cached (the last agreementCacheSize) by project, label
//     content (a digest of every label) and options (replicates, seed), so
//     repeated reads cost the digest; concurrent requests for one document
//     share one computation.
//   - One project runs one analysis at a time (other seeds or options
//     wait for it), so that a client asking for many seeds at once cannot
//     occupy more than one analysis' worth of work per project.
//   - An analysis runs with a context that is cancelled when every request
//     waiting for it has gone (client disconnect): the bootstrap and the
//     EM stop within a replicate or an iteration.

// DefaultMaxAgreementLabels is the default of Config.MaxAgreementLabels:
// 4 million labels, about 2.6 GB at the peak of one analysis (1M labels
// of 2,000 raters: 0.66 GB), under a 6 GB server.
const DefaultMaxAgreementLabels = 4_000_000

// agreementTooLarge is the refusal of an agreement analysis of n labels
// over the server's limit.
func agreementTooLarge(n, max int) error {
	return annotations.Errorf(annotations.ETOOLARGE, "the project has %d labels; the server analyses the agreement of at most %d (concord serve --max-agreement-labels): run concord agreement --project NAME --db DSN on a machine with the memory for it", n, max)
}

// agreementCacheSize is the number of agreement documents kept.
const agreementCacheSize = 64

// agreementResult is a computed agreement analysis: its JSON document and
// the tables the table endpoints page through.
type agreementResult struct {
	json   []byte
	tables *agreementTables
}

// agreementTables are the agreement tables of an analysis (see
// raters.AgreementTables), the items sorted by agreement, lowest first.
type agreementTables struct {
	scheme, level, score, weights string
	matrix                        *raters.PairMatrix
	pairs                         []raters.CohenPair
	items                         []raters.ItemAgreement
	raters                        []raters.RaterAgreement
}

// agreementOpts are the options of an agreement analysis a request asks
// for.
type agreementOpts struct {
	// boot is the number of bootstrap replicates (0: none), explicit
	// whether the request gave it.
	boot     int
	explicit bool
	seed     uint64
	// only, pairs and ties are raters.Options' Only, Pairs and Ties
	// (query parameters only, pairs and min_shared, ties).
	only  string
	pairs raters.PairOptions
	ties  raters.TieRule
}

// readAgreementOpts reads the query parameters of the agreement routes:
// bootstrap, seed, pairs (all or a number), min_shared, ties (frequent or
// first) and, where withOnly, only.
func readAgreementOpts(q *query, withOnly bool) agreementOpts {
	_, explicit := q.c.GetQuery("bootstrap")
	o := agreementOpts{explicit: explicit}
	o.boot = q.intIn("bootstrap", analysis.DefaultBootstrap, 0, 10000)
	o.seed = q.uint64Param("seed", 1)
	var err error
	if o.pairs, err = analysis.ParsePairs(q.str("pairs", 20)); err != nil {
		q.fail("query parameter pairs=%s", err)
	}
	o.pairs.MinShared = q.intIn("min_shared", 0, 0, 1_000_000)
	if t := q.str("ties", 20); t != "" {
		if o.ties, err = raters.ParseTieRule(t); err != nil {
			q.fail("query parameter ties=%q: expected frequent or first", t)
		}
	}
	if withOnly {
		if o.only, err = analysis.ParseOnly(q.str("only", 20)); err != nil {
			q.fail("query parameter only=%s", err)
		}
	}
	return o
}

// agreementParams are the query parameters readAgreementOpts reads.
var agreementParams = []string{"bootstrap", "seed", "pairs", "min_shared", "ties"}

// projectAgreement is agreementDoc on the project's stored labels (also
// returned), with a query's options (bootstrap 0: none).
func (s *Server) projectAgreement(ctx context.Context, project int64, o agreementOpts) (*annotations.Dataset, *agreementResult, error) {
	if o.boot == 0 {
		o.boot = -1 // raters.Options: negative means none
	}
	if max := s.cfg.MaxAgreementLabels; max > 0 {
		st, err := s.store.Stats(ctx, project)
		if err != nil {
			return nil, nil, err
		}
		if st.Labels > max {
			return nil, nil, agreementTooLarge(st.Labels, max)
		}
	}
	ds, err := s.store.Dataset(ctx, project)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.agreementDoc(ctx, project, ds, o)
	return ds, res, err
}

// agreementDoc returns the agreement analysis of ds, project's labels, with
// o.boot bootstrap replicates (negative: none; explicit: asked for by the
// user), seed and the other options.
func (s *Server) agreementDoc(ctx context.Context, project int64, ds *annotations.Dataset, o agreementOpts) (*agreementResult, error) {
	boot, note, err := analysis.PlanBootstrap(ds, o.boot, o.explicit, max(s.cfg.MaxBootstrapWork, 0))
	if err != nil {
		return nil, err
	}
	seed := o.seed
	return s.agreements.get(ctx, agreementKey(project, boot, seed, fmt.Sprintf("%s/%+v/%d", o.only, o.pairs, o.ties), ds), func(ctx context.Context) (*agreementResult, error) {
		release, err := s.agreementRuns.acquire(ctx, project)
		if err != nil {
			return nil, err
		}
		defer release()
		s.metrics.agreementRunning.Inc()
		defer s.metrics.agreementRunning.Dec()
		rep, err := analysis.Agreement(ctx, ds, raters.Options{Bootstrap: boot, Seed: seed, Only: o.only, Pairs: o.pairs, Ties: o.ties, MaxItemRows: raters.DefaultMaxItemRows})
		if err != nil {
			if ctx.Err() != nil {
				s.metrics.agreementCancelled.Inc()
				s.log.InfoContext(ctx, "agreement analysis stopped: no client waits for it", "project", project, "bootstrap", boot, "seed", seed)
			}
			return nil, err
		}
		if note != "" {
			rep.Notes = append(rep.Notes, note)
		}
		b, err := json.Marshal(rep)
		if err != nil {
			return nil, err
		}
		tb := &agreementTables{scheme: rep.Scheme, level: rep.Level, score: rep.AgreementScore, matrix: rep.PairwiseMatrix,
			pairs: rep.CohenKappa, items: rep.ItemAgreement, raters: rep.RaterAgreement, weights: "unweighted"}
		if rep.Level != raters.Nominal.String() {
			tb.weights = "quadratic"
		}
		raters.SortItemAgreement(tb.items)
		return &agreementResult{json: b, tables: tb}, nil
	})
}

// agreementKey identifies an agreement analysis: the project, the options
// and a digest of the labels, so that any change of the labels makes a new
// key.
func agreementKey(project int64, boot int, seed uint64, opts string, ds *annotations.Dataset) string {
	h := sha256.New()
	var buf []byte
	for _, l := range ds.Labels {
		buf = buf[:0]
		buf = append(buf, l.Item...)
		buf = append(buf, 0)
		buf = append(buf, l.Rater...)
		buf = append(buf, 0)
		buf = append(buf, l.Value...)
		buf = append(buf, 0)
		h.Write(buf)
	}
	return fmt.Sprintf("%d/%d/%d/%s/%x", project, boot, seed, opts, h.Sum(nil))
}

// projectGate lets one holder per project at a time through.
type projectGate struct {
	mu    sync.Mutex
	slots map[int64]chan struct{}
}

func newProjectGate() *projectGate { return &projectGate{slots: map[int64]chan struct{}{}} }

// acquire waits for the project's turn (or for ctx) and returns the
// function that ends it.
func (g *projectGate) acquire(ctx context.Context, project int64) (release func(), err error) {
	g.mu.Lock()
	slot, ok := g.slots[project]
	if !ok {
		slot = make(chan struct{}, 1)
		g.slots[project] = slot
	}
	g.mu.Unlock()
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// forget drops the gate of a deleted project.
func (g *projectGate) forget(project int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.slots, project)
}

// memo keeps the results of expensive, deterministic computations by key
// (at most max, the oldest dropped first). Concurrent requests for one key
// share one computation, which runs with its own context: it is cancelled
// when every request waiting for it has gone, and then forgotten. Errors
// other than internal ones and cancellations are kept too.
type memo[V any] struct {
	mu      sync.Mutex
	max     int
	order   []string
	entries map[string]*memoEntry[V]
}

type memoEntry[V any] struct {
	done    chan struct{} // closed when val and err are set
	val     V
	err     error
	waiters int
	cancel  context.CancelFunc
}

func newMemo[V any](max int) *memo[V] {
	return &memo[V]{max: max, entries: map[string]*memoEntry[V]{}}
}

// get returns the value of key, computing it with fn unless it is cached
// or being computed. When ctx is done first, get returns its error, and
// the computation is cancelled if no other request waits for it.
func (m *memo[V]) get(ctx context.Context, key string, fn func(ctx context.Context) (V, error)) (V, error) {
	m.mu.Lock()
	e, ok := m.entries[key]
	if !ok {
		// The computation keeps the request's values (logging) but not its
		// cancellation: it ends when its last waiter leaves.
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		e = &memoEntry[V]{done: make(chan struct{}), cancel: cancel}
		m.entries[key] = e
		m.order = append(m.order, key)
		if len(m.order) > m.max {
			delete(m.entries, m.order[0])
			m.order = m.order[1:]
		}
		go m.compute(cctx, key, e, fn)
	}
	e.waiters++
	m.mu.Unlock()

	select {
	case <-e.done:
		m.mu.Lock()
		e.waiters--
		m.mu.Unlock()
		return e.val, e.err
	case <-ctx.Done():
		m.mu.Lock()
		e.waiters--
		if e.waiters == 0 {
			select {
			case <-e.done:
			default:
				e.cancel()
				m.dropLocked(key, e)
			}
		}
		m.mu.Unlock()
		var zero V
		return zero, context.Cause(ctx)
	}
}

func (m *memo[V]) compute(ctx context.Context, key string, e *memoEntry[V], fn func(ctx context.Context) (V, error)) {
	defer e.cancel()
	val, err := fn(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	e.val, e.err = val, err
	close(e.done)
	if err != nil && (annotations.ErrorCode(err) == annotations.EINTERNAL || errors.Is(err, context.Canceled) || ctx.Err() != nil) {
		m.dropLocked(key, e)
	}
}

// dropLocked forgets entry e of key (if it is still the entry of key).
func (m *memo[V]) dropLocked(key string, e *memoEntry[V]) {
	if m.entries[key] != e {
		return
	}
	delete(m.entries, key)
	for i, k := range m.order {
		if k == key {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
}
