package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/raters"
)

// Agreement analyses as jobs (projects over Config.AgreementJobLabels
// labels): a request stores the analysis and its plan job
// (annotations.AgreementStore.StartAgreement), or finds it queued, running
// or done, keyed by project, labels version and options, so that any
// process sharing the database answers it; the jobs run on any worker
// (`concord worker`, or serve's own), the pool being the
// annotations.AgreementRunner:
//
//   - the plan job loads the labels and plans the bootstrap
//     (analysis.PlanBootstrap within the Config.MaxBootstrapWork of the
//     server that asked, stored with the options), in parts of
//     Config.AgreementPartReplicates replicates;
//   - each part job computes its range of replicates
//     (analysis.AgreementReplicates: replicate r resamples with a
//     generator seeded by the seed and r only, so the result does not
//     depend on which worker ran which range);
//   - the combine job runs the analysis with every part's replicates and
//     stores the document and the tables (gob), which the API nodes read
//     once and then keep in the memo.
//
// The pending answer (202) names the analysis' phase: queued, loading
// labels, analysing (with the replicates done over the parts and the
// workers running them) or writing the document.

// agreementSpec is an analysis' options as stored with its job (JSON of
// the Go field names), with the bound of its bootstrap (MaxWork: the
// Config.MaxBootstrapWork of the server asked, not the worker's).
type agreementSpec struct {
	MaxWork                     int64
	Boot, Population, DSIter    int
	Explicit, DSGold, DSInitAdd bool
	Seed                        uint64
	Only, DSInit, WeightsMatrix string
	Pairs                       raters.PairOptions
	Ties                        raters.TieRule
	Start                       raters.RandomStart
	CI                          raters.CIKind
	Null, DSTol                 float64
	Weights                     []raters.Weights
}

func specOf(o agreementOpts) agreementSpec {
	return agreementSpec{Boot: o.boot, Population: o.population, DSIter: o.dsIter, Explicit: o.explicit, DSGold: o.dsGold, DSInitAdd: o.dsInitAdd,
		Seed: o.seed, Only: o.only, DSInit: o.dsInit, WeightsMatrix: o.weightsMatrix, Pairs: o.pairs, Ties: o.ties, Start: o.start, CI: o.ci, Null: o.null, DSTol: o.dsTol, Weights: o.weights}
}

func (p agreementSpec) opts() agreementOpts {
	return agreementOpts{boot: p.Boot, population: p.Population, dsIter: p.DSIter, explicit: p.Explicit, dsGold: p.DSGold, dsInitAdd: p.DSInitAdd,
		seed: p.Seed, only: p.Only, dsInit: p.DSInit, weightsMatrix: p.WeightsMatrix, pairs: p.Pairs, ties: p.Ties, start: p.Start, ci: p.CI, null: p.Null, dsTol: p.DSTol, weights: p.Weights}
}

// DefaultAgreementPartReplicates is the default of
// Config.AgreementPartReplicates.
const DefaultAgreementPartReplicates = 250

// maxAgreementParts bounds the part jobs of one analysis.
const maxAgreementParts = 16

// agreementJob answers the agreement analysis of a large project from its
// job: the result once done (kept in the memo under key), or its state.
// The pending state says whether this request joined an analysis
// already queued or running (joined).
func (s *Server) agreementJob(ctx context.Context, project, version int64, n int, key string, o agreementOpts) (*agreementResult, *agreementPending, error) {
	if res, ok := s.agreements.cached(key); ok {
		return res, nil, nil
	}
	sp := specOf(o)
	sp.MaxWork = s.cfg.MaxBootstrapWork
	spec, err := json.Marshal(sp)
	if err != nil {
		return nil, nil, err
	}
	a := &annotations.AgreementJob{ProjectID: project, LabelsVersion: version, Key: jobKey(key, sp.MaxWork), Options: spec, Labels: n}
	created, err := s.store.StartAgreement(ctx, a, agreementJobsPerProject)
	if err != nil {
		return nil, nil, err
	}
	switch a.Status {
	case annotations.FitDone:
		res, err := decodeAgreementResult(a.Result)
		if err != nil {
			return nil, nil, err
		}
		res, err = s.agreements.get(ctx, key, func(context.Context) (*agreementResult, error) { return res, nil })
		return res, nil, err
	case annotations.FitRunning:
		return nil, &agreementPending{labels: n, started: a.CreatedAt, phase: a.Message, id: a.ID, joined: !created}, nil
	case annotations.FitCancelled:
		return nil, nil, annotations.Errorf(annotations.ECONFLICT, "the agreement analysis was cancelled; ask again to start it again")
	default:
		code := a.ErrorCode
		if code == "" {
			code = annotations.EINTERNAL
		}
		return nil, nil, &annotations.Error{Code: code, Message: a.Message}
	}
}

// jobKey is the key of an analysis run as jobs (AgreementJob.Key): the
// memo's key and the bound of its bootstrap.
func jobKey(key string, maxWork int64) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", key, maxWork))
	return hex.EncodeToString(h[:])
}

// agreementStored is the result of an analysis run as jobs: its document
// and its tables.
type agreementStored struct {
	JSON                          []byte
	Scheme, Level, Score, Weights string
	Matrix                        *raters.PairMatrix
	Pairs                         []raters.CohenPair
	Items                         []raters.ItemAgreement
	Raters                        []raters.RaterAgreement
	Index                         map[string]int32
	Start, Vals, Cnts             []int32
	Values                        []string
	// Report is the analysis (reports build from it without reading the
	// document back); nil in results stored by earlier versions.
	Report *raters.Report
}

func encodeAgreementResult(res *agreementResult) ([]byte, error) {
	tb := res.tables
	st := agreementStored{JSON: res.json, Scheme: tb.scheme, Level: tb.level, Score: tb.score, Weights: tb.weights,
		Matrix: tb.matrix, Pairs: tb.pairs, Items: tb.items, Raters: tb.raters, Report: res.rep}
	if c := tb.counts; c != nil {
		st.Index, st.Start, st.Vals, st.Cnts, st.Values = c.index, c.start, c.vals, c.cnts, c.values
	}
	return gobBytes(st)
}

func decodeAgreementResult(b []byte) (*agreementResult, error) {
	var st agreementStored
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&st); err != nil {
		return nil, fmt.Errorf("decoding the agreement analysis' result: %w", err)
	}
	return &agreementResult{json: st.JSON, rep: st.Report, tables: &agreementTables{scheme: st.Scheme, level: st.Level, score: st.Score, weights: st.Weights,
		matrix: st.Matrix, pairs: st.Pairs, items: st.Items, raters: st.Raters,
		counts: &valueCounts{index: st.Index, start: st.Start, vals: st.Vals, cnts: st.Cnts, values: st.Values}}}, nil
}

// agreementJobInput reads the stored options of analysis a and loads its
// input, in one of the Config.AgreementJobs slots of this process.
func (p *pool) agreementJobInput(ctx context.Context, a *annotations.AgreementJob) (*agreementIn, func(), error) {
	var spec agreementSpec
	if err := json.Unmarshal(a.Options, &spec); err != nil {
		return nil, nil, annotations.Errorf(annotations.EINVALID, "the stored agreement options cannot be read: %v", err)
	}
	select {
	case p.s.agreementSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("%w: %w", context.Cause(ctx), annotations.ErrRetry)
	}
	release := func() { <-p.s.agreementSlots }
	in, err := p.s.agreementInput(ctx, a.ProjectID, spec.opts(), spec.MaxWork)
	if err == nil {
		// The labels read must be those of the analysis' key.
		var v int64
		if v, _, err = p.s.store.LabelsVersion(ctx, a.ProjectID); err == nil && v != a.LabelsVersion {
			err = annotations.Errorf(annotations.EUNAVAILABLE, "the project's labels changed during the agreement analysis: ask again for the analysis of the new labels")
		}
	}
	if err != nil {
		release()
		return nil, nil, err
	}
	return in, release, nil
}

// PlanAgreement plans the bootstrap of analysis a
// (annotations.AgreementRunner).
func (p *pool) PlanAgreement(ctx context.Context, a *annotations.AgreementJob) (int, int, error) {
	in, release, err := p.agreementJobInput(ctx, a)
	if err != nil {
		return 0, 0, p.agreementJobErr(ctx, err)
	}
	release()
	if err := analysis.CheckAgreement(in.ds, in.opts); err != nil {
		return 0, 0, err
	}
	B := in.opts.Bootstrap
	if B <= 0 {
		return B, 0, nil
	}
	per := p.s.cfg.AgreementPartReplicates
	return B, min((B+per-1)/per, maxAgreementParts, B), nil
}

// agreementJobErr is an agreement job's error for the job engine: this
// worker's shutdown is retried.
func (p *pool) agreementJobErr(jobsCtx context.Context, err error) error {
	if err != nil && jobsCtx.Err() != nil {
		return fmt.Errorf("%s: %w", errShutdown.Error(), annotations.ErrRetry)
	}
	return err
}

// RunAgreementPart computes bootstrap replicates [lo, hi) of analysis a
// (annotations.AgreementRunner), reporting its progress every
// Config.ProgressInterval.
func (p *pool) RunAgreementPart(jobsCtx context.Context, a *annotations.AgreementJob, lo, hi int, report func(float64) error) ([]byte, error) {
	s := p.s
	ctx, cancel := context.WithCancelCause(jobsCtx)
	defer cancel(nil)
	in, release, err := p.agreementJobInput(ctx, a)
	if err != nil {
		return nil, p.agreementJobErr(jobsCtx, err)
	}
	defer release()
	s.metrics.agreementRunning.Inc()
	defer s.metrics.agreementRunning.Dec()
	var done atomic.Int64
	in.opts.Progress = func(d, _ int) { done.Store(int64(d)) }
	stop := every(ctx, s.cfg.ProgressInterval, cancel, func() error { return report(float64(done.Load()) / float64(hi-lo)) })
	reps, err := analysis.AgreementReplicates(ctx, in.ds, in.opts, lo, hi)
	stop()
	if cause := context.Cause(ctx); err != nil && cause != nil && jobsCtx.Err() == nil {
		return nil, cause // report's error: the analysis ended, or the part was taken over
	}
	if err != nil {
		return nil, p.agreementJobErr(jobsCtx, err)
	}
	return reps.MarshalBinary()
}

// CombineAgreement runs analysis a with the replicates of its parts and
// returns its result (annotations.AgreementRunner).
func (p *pool) CombineAgreement(ctx context.Context, a *annotations.AgreementJob, outputs [][]byte, report func(string) error) ([]byte, error) {
	s := p.s
	if err := report("loading labels"); err != nil {
		return nil, err
	}
	in, release, err := p.agreementJobInput(ctx, a)
	if err != nil {
		return nil, p.agreementJobErr(ctx, err)
	}
	defer release()
	if len(outputs) > 0 {
		parts := make([]*raters.Replicates, len(outputs))
		for i, o := range outputs {
			parts[i] = new(raters.Replicates)
			if err := parts[i].UnmarshalBinary(o); err != nil {
				return nil, fmt.Errorf("part %d: %w", i, err)
			}
		}
		if in.opts.Replicates, err = raters.MergeReplicates(parts); err != nil {
			return nil, err
		}
	}
	if err := report("analysing"); err != nil {
		return nil, err
	}
	s.metrics.agreementRunning.Inc()
	defer s.metrics.agreementRunning.Dec()
	t0 := time.Now()
	res, err := in.analyse(ctx)
	if err != nil {
		return nil, p.agreementJobErr(ctx, err)
	}
	if err := report("writing the document"); err != nil {
		return nil, err
	}
	s.log.Info("agreement analysis combined", "agreement", a.ID, "project", a.ProjectID, "parts", len(outputs), "seconds", time.Since(t0).Seconds())
	return encodeAgreementResult(res)
}
