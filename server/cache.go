package server

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
	"concord/reports"
)

// resultCache keeps the parsed results and rendered reports of recently
// read fits, so that repeated report reads cost a lookup. A done fit's
// result never changes, so entries need no invalidation except when a fit
// is deleted (and every read first checks that the fit still exists and is
// visible to the caller).
type resultCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *cachedFit, most recent first
	byID  map[int64]*list.Element
}

// cachedFit is one fit's cached artefacts. mu serialises their lazy
// rendering, so that concurrent first reads render once.
type cachedFit struct {
	id int64

	mu      sync.Mutex
	raw     []byte
	res     *multirater.FitResult
	project *annotations.Project
	// fit is the done fit as last read from the store, at checked.
	fit      *annotations.Fit
	checked  time.Time
	rendered map[string]*rendered

	sumOnce sync.Once // makes the summary once
	sum     *reports.FitSummary

	predMu    sync.Mutex // builds the predictor once
	predictor *analysis.Predictor
	predErr   error

	// The reports, built once per report options (repMu: building one
	// takes a while and other artefacts wait for it under mu).
	repMu sync.Mutex
	reps  map[string]builtReport
}

// builtReport is a report built with some options, or why it cannot be.
type builtReport struct {
	rep *reports.Report
	err error
}

type rendered struct {
	once sync.Once
	body []byte
	err  error
	// ready is set once body and err are.
	ready atomic.Bool
}

func newResultCache(n int) *resultCache {
	return &resultCache{max: n, order: list.New(), byID: map[int64]*list.Element{}}
}

// entry returns the cache entry of fit id, creating it (and evicting the
// least recently used one) if needed.
func (rc *resultCache) entry(id int64) *cachedFit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if el, ok := rc.byID[id]; ok {
		rc.order.MoveToFront(el)
		return el.Value.(*cachedFit)
	}
	cf := &cachedFit{id: id, rendered: map[string]*rendered{}}
	rc.byID[id] = rc.order.PushFront(cf)
	for rc.order.Len() > rc.max {
		last := rc.order.Back()
		rc.order.Remove(last)
		delete(rc.byID, last.Value.(*cachedFit).id)
	}
	return cf
}

// forget drops fit id (deleted).
func (rc *resultCache) forget(id int64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if el, ok := rc.byID[id]; ok {
		rc.order.Remove(el)
		delete(rc.byID, id)
	}
}

// result returns the fit's result document, raw and parsed, and its
// project, loading them from the store on first use. (A project's name and
// scheme never change, and deleting it deletes the fit, which every read
// checks first.)
func (s *Server) result(ctx context.Context, f *annotations.Fit) (*cachedFit, error) {
	cf := s.cache.entry(f.ID)
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if f.Status == annotations.FitDone {
		cf.fit, cf.checked = f, time.Now()
	}
	if cf.res != nil && cf.project != nil {
		return cf, nil
	}
	p, err := s.store.FindProjectByID(ctx, f.ProjectID)
	if err != nil {
		return nil, err
	}
	raw, err := s.store.FitResult(ctx, f.ID)
	if err != nil {
		return nil, err
	}
	var res multirater.FitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decode result of fit %d: %w", f.ID, err)
	}
	cf.raw, cf.res, cf.project = raw, &res, p
	return cf, nil
}

// summary returns the fit's summary, made on first use (the result and
// project are loaded).
func (cf *cachedFit) summary() *reports.FitSummary {
	cf.sumOnce.Do(func() { cf.sum = reports.SummariseFit(cf.res, cf.project.Scheme) })
	return cf.sum
}

// recentDone returns a done fit (and its cache entry) that was read from
// the store less than ttl ago, or nil.
func (rc *resultCache) recentDone(id int64, ttl time.Duration) (*annotations.Fit, *cachedFit) {
	if ttl <= 0 {
		return nil, nil
	}
	rc.mu.Lock()
	el, ok := rc.byID[id]
	rc.mu.Unlock()
	if !ok {
		return nil, nil
	}
	cf := el.Value.(*cachedFit)
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if cf.fit == nil || cf.res == nil || time.Since(cf.checked) >= ttl {
		return nil, nil
	}
	return cf.fit, cf
}

// forgetProject drops the fits of a deleted project.
func (rc *resultCache) forgetProject(projectID int64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for id, el := range rc.byID {
		cf := el.Value.(*cachedFit)
		cf.mu.Lock()
		p := cf.project
		cf.mu.Unlock()
		if p != nil && p.ID == projectID {
			rc.order.Remove(el)
			delete(rc.byID, id)
		}
	}
}

// renderedBody returns the artefact named key when it is rendered.
func (cf *cachedFit) renderedBody(key string) ([]byte, bool) {
	cf.mu.Lock()
	r, ok := cf.rendered[key]
	cf.mu.Unlock()
	if !ok {
		return nil, false
	}
	if !r.ready.Load() {
		return nil, false
	}
	return r.body, r.err == nil
}

// render returns the artefact named key of a cached fit, rendering it with
// fn on first use; concurrent first reads of one artefact render it once,
// and other artefacts are not held up meanwhile. Domain errors are kept
// too (rendering is deterministic); internal failures are not.
func (cf *cachedFit) render(key string, fn func() ([]byte, error)) ([]byte, error) {
	cf.mu.Lock()
	r, ok := cf.rendered[key]
	if !ok {
		r = &rendered{}
		cf.rendered[key] = r
	}
	cf.mu.Unlock()
	r.once.Do(func() {
		r.body, r.err = fn()
		r.ready.Store(true)
	})
	if r.err != nil && annotations.ErrorCode(r.err) == annotations.EINTERNAL {
		cf.mu.Lock()
		if cf.rendered[key] == r {
			delete(cf.rendered, key)
		}
		cf.mu.Unlock()
	}
	return r.body, r.err
}
