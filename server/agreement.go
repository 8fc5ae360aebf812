package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

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
//   - Documents are cached (the last agreementCacheSize) by project, labels
//     version (annotations.LabelStore.LabelsVersion, moved on by every
//     write of the labels) and options, so that repeated reads cost one
//     small query; concurrent requests for one document share one
//     computation.
//   - Projects over Config.AgreementJobLabels labels are analysed as
//     jobs (agreement_jobs.go): a request stores the analysis and its job
//     (or finds it queued, running or done, in the database shared by
//     every process) and answers 202 with its state; once it is done the
//     routes answer the stored result (then from the cache). Any worker
//     process runs the jobs, at most Config.AgreementJobs at once each.
//   - One project runs one analysis at a time (other seeds or options
//     wait for it), so that a client asking for many seeds at once cannot
//     occupy more than one analysis' worth of work per project.
//   - An analysis within requests runs with a context that is cancelled
//     when every request waiting for it has gone (client disconnect): the
//     bootstrap and the EM stop within a replicate or an iteration. A
//     job runs until it is done or cancelled (DELETE); an internal
//     failure is answered to the next request and the one after starts
//     it again.

// DefaultAgreementJobLabels is the default of Config.AgreementJobLabels:
// projects with more labels have their agreement analysed in the
// background (1M labels take about half a minute of CPU).
const DefaultAgreementJobLabels = 200_000

// DefaultMaxAgreementLabels is the default of Config.MaxAgreementLabels:
// 4 million labels, about 2.6 GB at the peak of one analysis (1M labels
// of 2,000 raters: 0.66 GB), under a 6 GB server.
const DefaultMaxAgreementLabels = 4_000_000

// agreementTooLarge is the refusal of an agreement analysis of n labels
// over the server's limit.
func agreementTooLarge(n, max int) error {
	return annotations.Errorf(annotations.ETOOLARGE, "the project has %d labels; the server analyses the agreement of at most %d (concord serve --max-agreement-labels): run concord agreement --project NAME --db DSN on a machine with the memory for it", n, max)
}

// agreementJobsPerProject is the most background agreement analyses (of
// different options) one project may have queued or running at once, so
// that a client asking for many seeds cannot hold up other projects'.
const agreementJobsPerProject = 4

// agreementCacheSize is the number of agreement documents kept.
const agreementCacheSize = 64

// agreementResult is a computed agreement analysis: its JSON document and
// the tables the table endpoints page through.
type agreementResult struct {
	json   []byte
	tables *agreementTables
	// rep is the analysis the document was written from (reports build
	// from it; nil from a stored result of an earlier version: the
	// document is read instead).
	rep *raters.Report
}

// agreementTables are the agreement tables of an analysis (see
// raters.AgreementTables), the items sorted by agreement, lowest first.
type agreementTables struct {
	scheme, level, score, weights string
	matrix                        *raters.PairMatrix
	pairs                         []raters.CohenPair
	items                         []raters.ItemAgreement
	raters                        []raters.RaterAgreement
	// counts are the items' labels counted by value.
	counts *valueCounts
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
	// start is raters.Options.RandomStart (query parameter random_start,
	// concord or crowdkit; with crowdkit seed defaults to 0, crowd-kit's
	// random_state).
	start raters.RandomStart
	// ci, null and weights are raters.Options' CI, Null and Weights
	// (query parameters ci, null and weights).
	ci      raters.CIKind
	null    float64
	weights []raters.Weights
	// population is raters.Options.Population (query parameter
	// population; 0: infinite).
	population int
	// dsIter, dsTol and dsGold are Dawid-Skene's MaxIter, Tol and
	// raters.Options.DSGold (query parameters ds_iter, ds_tol, ds_gold).
	dsIter int
	dsTol  float64
	dsGold bool
	// dsInit is the CSV text of Dawid-Skene's initial error matrices
	// (header rater,true,label,value, as concord agreement --ds-init) and
	// dsInitAdd its strategy, addition rather than assign (query
	// parameters ds_init, ds_init_strategy; the project agreement route
	// only).
	dsInit    string
	dsInitAdd bool
	// weightsMatrix is the CSV text of custom agreement weights (query
	// parameter weights_matrix, the layout of concord agreement
	// --weights-file; the project agreement route only).
	weightsMatrix string
}

// readAgreementOpts reads the query parameters of the agreement routes:
// bootstrap, seed, random_start (concord or crowdkit), pairs (all or a
// number), min_shared, ties (frequent or first), ci (t or normal), null (a number), population (a whole number),
// weights (all or a list) and,
// where withOnly, only.
func readAgreementOpts(q *query, withOnly bool) agreementOpts {
	_, explicit := q.c.GetQuery("bootstrap")
	o := agreementOpts{explicit: explicit}
	o.boot = q.intIn("bootstrap", analysis.DefaultBootstrap, 0, 10000)
	if _, ci := q.c.GetQuery("ci"); ci && !explicit {
		o.boot = 0 // an explicit ci asks for its analytic intervals
	}
	_, seedGiven := q.c.GetQuery("seed")
	o.seed = q.uint64Param("seed", 1)
	var err error
	rs := q.str("random_start", 20)
	if o.start, err = analysis.ParseRandomStart(rs); err != nil {
		q.fail("query parameter random_start=%s", err)
	} else if o.seed, err = analysis.StartSeed(o.start, o.seed, seedGiven, o.seed); err != nil {
		q.fail("query parameter seed=%s", err)
	}
	if o.pairs, err = analysis.ParsePairs(q.str("pairs", 20)); err != nil {
		q.fail("query parameter pairs=%s", err)
	}
	o.pairs.MinShared = q.intIn("min_shared", 0, 0, 1_000_000)
	if t := q.str("ties", 20); t != "" {
		if o.ties, err = raters.ParseTieRule(t); err != nil {
			q.fail("query parameter ties=%q: expected frequent or first", t)
		}
	}
	if o.ci, err = analysis.ParseCI(q.str("ci", 20)); err != nil {
		q.fail("query parameter ci=%s", err)
	}
	if o.null, err = analysis.ParseNull(q.str("null", 40)); err != nil {
		q.fail("query parameter null=%s", err)
	}
	if o.population, err = analysis.ParsePopulation(q.str("population", 20)); err != nil {
		q.fail("query parameter population=%s", err)
	}
	if o.weights, err = analysis.ParseWeightsList(q.str("weights", 200)); err != nil {
		q.fail("query parameter weights=%s", err)
	}
	o.dsIter = q.intIn("ds_iter", 0, 0, 100_000)
	if v := q.str("ds_tol", 40); v != "" {
		if o.dsTol, err = strconv.ParseFloat(v, 64); err != nil || !(o.dsTol >= 0) || math.IsInf(o.dsTol, 0) {
			q.fail("query parameter ds_tol=%q: expected a number from 0 (Dawid-Skene's relative log-likelihood tolerance; 0: 1e-10)", v)
		}
	}
	if b := q.boolPtr("ds_gold"); b != nil {
		o.dsGold = *b
	}
	if withOnly {
		if o.only, err = analysis.ParseOnly(q.str("only", 20)); err != nil {
			q.fail("query parameter only=%s", err)
		}
		o.dsInit = q.str("ds_init", maxDSInit)
		o.weightsMatrix = q.str("weights_matrix", maxWeightsMatrix)
		switch v := q.str("ds_init_strategy", 20); v {
		case "", "assign":
		case "addition":
			o.dsInitAdd = true
		default:
			q.fail("query parameter ds_init_strategy=%q: expected assign or addition (how ds_init enters Dawid-Skene's first M-step, as crowd-kit's initial_error_strategy)", v)
		}
	}
	return o
}

// maxWeightsMatrix bounds the weights_matrix query parameter (bytes): a
// 100 x 100 matrix of weights written with 6 digits.
const maxWeightsMatrix = 100_000

// maxDSInit bounds the ds_init query parameter (bytes): the error matrices
// of 100 raters of 10 classes, about 40 bytes a cell.
const maxDSInit = 400_000

// agreementParams are the query parameters readAgreementOpts reads.
var agreementParams = []string{"bootstrap", "seed", "random_start", "pairs", "min_shared", "ties", "ci", "null", "population", "weights", "ds_iter", "ds_tol", "ds_gold"}

// agreementRouteParams are the query parameters of the project agreement
// route: agreementParams and the document's own (only, and the CSV texts
// ds_init and weights_matrix with ds_init_strategy).
func agreementRouteParams() []string {
	return append(agreementParams[:len(agreementParams):len(agreementParams)], "only", "ds_init", "ds_init_strategy", "weights_matrix")
}

// agreementPageParams are the agreement parameters the project page's
// options form offers besides ties, ci, null and weights (which it reads
// apart): the rest of the route's but only (the page shows the whole
// document).
func agreementPageParams() []string {
	var ps []string
	for _, p := range agreementRouteParams() {
		switch p {
		case "ties", "ci", "null", "weights", "only":
		default:
			ps = append(ps, p)
		}
	}
	return ps
}

// agreementParamOK says whether the project agreement route accepts the
// query parameter name=value alone (readAgreementOpts's checks, no
// others: the CSV texts ds_init and weights_matrix are read against the
// project's labels by the analysis, whose error the page shows).
func agreementParamOK(name, value string) bool {
	u := &url.URL{RawQuery: url.Values{name: {value}}.Encode()}
	q := newQuery(&gin.Context{Request: &http.Request{URL: u}}, agreementRouteParams()...)
	readAgreementOpts(q, true)
	return q.err == nil
}

// agreementPending is the state of an agreement analysis running in the
// background (a project over Config.AgreementJobLabels).
type agreementPending struct {
	labels  int
	started time.Time
	phase   string
	// id is the analysis' job (annotations.AgreementJob); joined says
	// that the request found it queued or running.
	id     int64
	joined bool
}

// projectAgreement returns the agreement analysis of the project's stored
// labels with a query's options (bootstrap 0: none). The analyses of
// projects with more than Config.AgreementJobLabels labels run in the
// background: until one is done projectAgreement returns its state
// (pending) instead, having started it if needed.
//
// Analyses are keyed by the project's labels version (the store's
// LabelsVersion, read before the labels), so that a cached document costs
// one small query and any change of the labels makes a new key.
func (s *Server) projectAgreement(ctx context.Context, project int64, o agreementOpts) (*agreementResult, *agreementPending, error) {
	version, n, err := s.store.LabelsVersion(ctx, project)
	if err != nil {
		return nil, nil, err
	}
	if max := s.cfg.MaxAgreementLabels; max > 0 && n > max {
		return nil, nil, agreementTooLarge(n, max)
	}
	key := agreementKey(project, version, o)
	if jl := s.cfg.AgreementJobLabels; jl < 0 || n <= jl {
		res, err := s.agreements.get(ctx, key, func(ctx context.Context) (*agreementResult, error) { return s.computeAgreement(ctx, project, o) })
		return res, nil, err
	}
	return s.agreementJob(ctx, project, version, n, key, o)
}

// agreementKey is the key of the analysis of a project's labels at version
// with options o (the memo's; the job's is jobKey of it).
func agreementKey(project, version int64, o agreementOpts) string {
	return fmt.Sprintf("%d/v%d/%d/%t/%d/%d/%s/%+v/%d/%d/%g/%d/%v/%d/%g/%t/%x/%t/%x", project, version, o.boot, o.explicit, o.seed, o.start, o.only, o.pairs, o.ties, o.ci, o.null, o.population, o.weights, o.dsIter, o.dsTol, o.dsGold, sha256.Sum256([]byte(o.dsInit)), o.dsInitAdd, sha256.Sum256([]byte(o.weightsMatrix)))
}

// agreementOrAnswer returns the project's agreement analysis with options
// o, or nil when it has answered the request itself (an error, or 202
// while a background analysis runs).
func (s *Server) agreementOrAnswer(c *gin.Context, project int64, o agreementOpts) *agreementResult {
	res, pend, err := s.projectAgreement(c.Request.Context(), project, o)
	if err != nil {
		s.fail(c, err)
		return nil
	}
	if pend != nil {
		s.answerPending(c, pend)
		return nil
	}
	return res
}

// computeAgreement loads the project's labels and analyses their
// agreement with options o within requests (projects up to
// Config.AgreementJobLabels labels), one analysis per project at a time.
func (s *Server) computeAgreement(ctx context.Context, project int64, o agreementOpts) (*agreementResult, error) {
	return s.computeAgreementWithin(ctx, project, o, s.cfg.MaxBootstrapWork)
}

// computeAgreementWithin is computeAgreement with the bootstrap bounded by
// maxWork (the Config.MaxBootstrapWork of the server asked).
func (s *Server) computeAgreementWithin(ctx context.Context, project int64, o agreementOpts, maxWork int64) (*agreementResult, error) {
	release, err := s.agreementRuns.acquire(ctx, project)
	if err != nil {
		return nil, err
	}
	defer release()
	in, err := s.agreementInput(ctx, project, o, maxWork)
	if err != nil {
		return nil, err
	}
	s.metrics.agreementRunning.Inc()
	defer s.metrics.agreementRunning.Dec()
	res, err := in.analyse(ctx)
	if err != nil && ctx.Err() != nil {
		s.metrics.agreementCancelled.Inc()
		s.log.InfoContext(ctx, "agreement analysis stopped: no client waits for it", "project", project, "bootstrap", in.opts.Bootstrap, "seed", in.opts.Seed)
	}
	return res, err
}

// agreementIn is what an agreement analysis reads: the project's labels,
// the options of raters' analysis and the note of PlanBootstrap.
type agreementIn struct {
	ds   *annotations.Dataset
	opts raters.Options
	note string
}

// agreementInput loads the project's labels and reads the options o
// against them (the ds_init and weights_matrix texts, the bootstrap
// planned within maxWork resampled cells: Config.MaxBootstrapWork of the
// server asked).
func (s *Server) agreementInput(ctx context.Context, project int64, o agreementOpts, maxWork int64) (*agreementIn, error) {
	ds, err := s.store.Dataset(ctx, project)
	if err != nil {
		return nil, err
	}
	init, err := dsInitOf(ds, o.dsInit)
	if err != nil {
		return nil, err
	}
	var wm [][]float64
	if o.weightsMatrix != "" {
		if wm, err = analysis.ReadLabelWeightMatrix("query parameter weights_matrix", strings.NewReader(o.weightsMatrix), ds); err != nil {
			return nil, err
		}
	}
	if o.boot == 0 {
		o.boot = -1 // raters.Options: negative means none
	}
	boot, note, err := analysis.PlanBootstrap(ds, o.boot, o.explicit, max(maxWork, 0))
	if err != nil {
		return nil, err
	}
	return &agreementIn{ds: ds, note: note, opts: raters.Options{Bootstrap: boot, Seed: o.seed, RandomStart: o.start, Only: o.only, Pairs: o.pairs, Ties: o.ties,
		CI: o.ci, Null: o.null, Population: o.population, Weights: o.weights, WeightMatrix: wm, DS: raters.DSOptions{MaxIter: o.dsIter, Tol: o.dsTol, InitialError: init, InitialErrorAdd: o.dsInitAdd}, DSGold: o.dsGold,
		MaxItemRows: raters.DefaultMaxItemRows}}, nil
}

// analyse runs the analysis and makes its document and tables.
func (in *agreementIn) analyse(ctx context.Context) (*agreementResult, error) {
	rep, err := analysis.Agreement(ctx, in.ds, in.opts)
	if err != nil {
		return nil, err
	}
	if in.note != "" {
		rep.Notes = append(rep.Notes, in.note)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	tb := &agreementTables{scheme: rep.Scheme, level: rep.Level, score: rep.AgreementScore, matrix: rep.PairwiseMatrix,
		pairs: rep.CohenKappa, items: slices.Clone(rep.ItemAgreement), raters: rep.RaterAgreement, weights: "unweighted"}
	if rep.Level != raters.Nominal.String() {
		tb.weights = "quadratic"
	}
	raters.SortItemAgreement(tb.items)
	tb.counts = countValues(in.ds, tb.items)
	return &agreementResult{json: b, tables: tb, rep: rep.Report}, nil
}

// dsInitOf reads the ds_init query parameter's error matrices for the
// dataset's raters and categories (nil without it).
func dsInitOf(ds *annotations.Dataset, text string) ([][]float64, error) {
	if text == "" {
		return nil, nil
	}
	const given = "query parameter ds_init"
	rs, cats, err := analysis.ErrorMatricesTable(ds, given)
	if err != nil {
		return nil, err
	}
	return analysis.ReadErrorMatrices(given, strings.NewReader(text), rs, cats)
}

// agreementJobBody is the 202 answer of the agreement routes while a
// background analysis runs.
type agreementJobBody struct {
	// Status is queued (waiting for another analysis to end) or running.
	Status string `json:"status"`
	// Phase is what it does now: queued, loading labels, analysing (with
	// the bootstrap's replicates done, "analysing: bootstrap 340 of 1000
	// replicates") or writing the document.
	Phase          string    `json:"phase"`
	Labels         int       `json:"labels"`
	StartedAt      time.Time `json:"started_at"`
	ElapsedSeconds float64   `json:"elapsed_seconds"`
	// RetryAfterSeconds is the Retry-After header: when to ask again.
	RetryAfterSeconds int `json:"retry_after_seconds"`
	// AgreementID is the analysis' job; Joined says that this request
	// found it already queued or running (the same labels and options:
	// one job).
	AgreementID int64  `json:"agreement_id"`
	Joined      bool   `json:"joined"`
	Message     string `json:"message"`
}

// answerPending answers 202 with the state of a background analysis and a
// Retry-After header: a fifth of the time it has taken so far, 1 to 10 s.
func (s *Server) answerPending(c *gin.Context, pend *agreementPending) {
	elapsed := time.Since(pend.started)
	retry := min(max(int(elapsed.Seconds()/5), 1), 10)
	status := "running"
	if strings.HasPrefix(pend.phase, "queued") {
		status = "queued"
	}
	joined := ""
	if pend.joined {
		joined = "an analysis of the same labels with the same options was already asked for: this request joined it; "
	}
	c.Header("Retry-After", strconv.Itoa(retry))
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusAccepted, agreementJobBody{
		Status: status, Phase: pend.phase, Labels: pend.labels,
		StartedAt: pend.started.UTC().Truncate(time.Millisecond), ElapsedSeconds: math.Round(elapsed.Seconds()*10) / 10,
		RetryAfterSeconds: retry, AgreementID: pend.id, Joined: pend.joined,
		Message: fmt.Sprintf("%sthe agreement analysis of the project's %d labels runs in the background (projects over %d labels: concord serve --agreement-job-labels); ask again in %d s: this route answers 200 with the result once it is done (DELETE cancels it)",
			joined, pend.labels, s.cfg.AgreementJobLabels, retry),
	})
}

// valueCounts are the labels of some items counted by value, so that the
// items table needs no labels: item i's counts are vals[start[i]:start[i+1]]
// (indices into values) and cnts[...].
type valueCounts struct {
	index  map[string]int32
	start  []int32
	vals   []int32
	cnts   []int32
	values []string
}

// countValues counts the labels of the items of rows by value.
func countValues(ds *annotations.Dataset, rows []raters.ItemAgreement) *valueCounts {
	vc := &valueCounts{index: make(map[string]int32, len(rows))}
	for i, r := range rows {
		vc.index[r.Item] = int32(i)
	}
	valueIndex := map[string]int32{}
	// Per item, its (value, count) pairs (few per item).
	type vcount struct{ val, n int32 }
	per := make([][]vcount, len(rows))
	for _, l := range ds.Labels {
		i, ok := vc.index[l.Item]
		if !ok {
			continue
		}
		v, ok := valueIndex[l.Value]
		if !ok {
			v = int32(len(vc.values))
			valueIndex[l.Value] = v
			vc.values = append(vc.values, l.Value)
		}
		found := false
		for k := range per[i] {
			if per[i][k].val == v {
				per[i][k].n++
				found = true
				break
			}
		}
		if !found {
			per[i] = append(per[i], vcount{v, 1})
		}
	}
	vc.start = make([]int32, len(rows)+1)
	for i, p := range per {
		for _, x := range p {
			vc.vals = append(vc.vals, x.val)
			vc.cnts = append(vc.cnts, x.n)
		}
		vc.start[i+1] = int32(len(vc.vals))
	}
	return vc
}

// of returns an item's labels counted by value.
func (vc *valueCounts) of(item string) map[string]int {
	m := map[string]int{}
	if vc == nil {
		return m
	}
	i, ok := vc.index[item]
	if !ok {
		return m
	}
	for k := vc.start[i]; k < vc.start[i+1]; k++ {
		m[vc.values[vc.vals[k]]] = int(vc.cnts[k])
	}
	return m
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
// when every request waiting for it has gone (or base is done), and then
// forgotten. Errors other than internal ones and cancellations are kept
// too.
type memo[V any] struct {
	mu      sync.Mutex
	max     int
	order   []string
	entries map[string]*memoEntry[V]
	// base ends the computations (the server's shutdown).
	base context.Context
}

type memoEntry[V any] struct {
	done    chan struct{} // closed when val and err are set
	val     V
	err     error
	waiters int
	cancel  context.CancelFunc
}

func newMemo[V any](base context.Context, max int) *memo[V] {
	return &memo[V]{max: max, entries: map[string]*memoEntry[V]{}, base: base}
}

// cached returns the value of key when it is computed without error.
func (m *memo[V]) cached(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var zero V
	e, ok := m.entries[key]
	if !ok {
		return zero, false
	}
	select {
	case <-e.done:
		return e.val, e.err == nil
	default:
		return zero, false
	}
}

// newEntryLocked adds the entry of key and starts its computation.
func (m *memo[V]) newEntryLocked(ctx context.Context, key string, fn func(ctx context.Context) (V, error)) *memoEntry[V] {
	// The computation keeps the request's values (logging) but not its
	// cancellation: it ends when its last waiter leaves or when base is
	// done.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(m.base, cancel)
	e := &memoEntry[V]{done: make(chan struct{}), cancel: func() { stop(); cancel() }}
	m.entries[key] = e
	m.order = append(m.order, key)
	if len(m.order) > m.max {
		delete(m.entries, m.order[0])
		m.order = m.order[1:]
	}
	go m.compute(cctx, key, e, fn)
	return e
}

// get returns the value of key, computing it with fn unless it is cached
// or being computed. When ctx is done first, get returns its error, and
// the computation is cancelled if no other request waits for it.
func (m *memo[V]) get(ctx context.Context, key string, fn func(ctx context.Context) (V, error)) (V, error) {
	m.mu.Lock()
	e, ok := m.entries[key]
	if !ok {
		e = m.newEntryLocked(ctx, key, fn)
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
