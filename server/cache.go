package server

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"sync"

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

	mu        sync.Mutex
	raw       []byte
	res       *multirater.FitResult
	project   *annotations.Project
	rendered  map[string]rendered
	predictor *predictor

	// The report, built once (repMu: building it takes a while and other
	// artefacts wait for it under mu).
	repMu  sync.Mutex
	rep    *reports.Report
	repErr error
}

type rendered struct {
	body []byte
	err  error
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
	cf := &cachedFit{id: id, rendered: map[string]rendered{}}
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

// render returns the artefact named key of a cached fit, rendering it with
// fn on first use. Domain errors are cached too (rendering is
// deterministic); internal failures are not.
func (cf *cachedFit) render(key string, fn func() ([]byte, error)) ([]byte, error) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if r, ok := cf.rendered[key]; ok {
		return r.body, r.err
	}
	b, err := fn()
	if err == nil || annotations.ErrorCode(err) != annotations.EINTERNAL {
		cf.rendered[key] = rendered{b, err}
	}
	return b, err
}
