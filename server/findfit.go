package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// FindOrStartFit returns a fit of project projectID with spec: a done one
// made earlier with the same settings (spec and the stored specs compared
// with their defaults filled in), else a queued or running one with them,
// else a new one queued by StartFit. Failed and cancelled fits are never
// reused. (`concord demo` reuses its fits with it.)
func (s *Server) FindOrStartFit(ctx context.Context, projectID int64, spec analysis.FitSpec) (*annotations.Fit, error) {
	want, err := json.Marshal(spec.WithDefaults())
	if err != nil {
		return nil, err
	}
	fits, err := s.store.ListFits(ctx, projectID)
	if err != nil {
		return nil, err
	}
	var f *annotations.Fit
	for i := range fits {
		var got analysis.FitSpec
		if json.Unmarshal(fits[i].Spec, &got) != nil {
			continue
		}
		b, _ := json.Marshal(got.WithDefaults())
		if !bytes.Equal(b, want) || fits[i].Status == annotations.FitFailed || fits[i].Status == annotations.FitCancelled {
			continue
		}
		if f == nil || fits[i].Status == annotations.FitDone {
			f = &fits[i]
		}
		if f.Status == annotations.FitDone {
			break
		}
	}
	if f != nil {
		return f, nil
	}
	return s.StartFit(ctx, projectID, spec)
}

// WaitFit follows fit f until it ends, reading it from the store every
// interval and passing each state read to progress (when not nil). It
// returns the done fit, or an error when the fit failed or was cancelled,
// or ctx ended.
func (s *Server) WaitFit(ctx context.Context, f *annotations.Fit, every time.Duration, progress func(*annotations.Fit)) (*annotations.Fit, error) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for !f.Status.Terminal() {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		var err error
		if f, err = s.store.FindFitByID(ctx, f.ID); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(f)
		}
	}
	if f.Status != annotations.FitDone {
		return nil, fmt.Errorf("fit %d %s: %s", f.ID, f.Status, f.Message)
	}
	return f, nil
}

// ReadFitResult reads the result document of done fit id.
func (s *Server) ReadFitResult(ctx context.Context, id int64) (*multirater.FitResult, error) {
	raw, err := s.store.FitResult(ctx, id)
	if err != nil {
		return nil, err
	}
	var res multirater.FitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("fit %d: reading the result: %w", id, err)
	}
	return &res, nil
}
