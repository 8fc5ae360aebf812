package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
	"concord/reports"
	"concord/textfeat"
)

// fitRequest is the body of POST /projects/{id}/fits: every setting of
// `concord fit` (every field of analysis.FitSpec; a test checks that none
// is missing). Omitted fields take the defaults of `concord fit`, except
// the model, which defaults to the one that suits the project's scheme
// (ordinal for ordinal schemes, classification for nominal and binary
// ones); unlike FitSpec, an explicit 0 is taken literally where it means
// something ("burnin": 0 is no burn-in) and rejected where it does not
// ("chains": 0). A null field is rejected, naming it (null would otherwise
// silently mean the default). Settings that the chosen model does not use
// are rejected rather than ignored.
type fitRequest struct {
	Model           string            `json:"model"`
	Kernel          string            `json:"kernel"`
	Covariates      string            `json:"covariates"`
	Categorical     []string          `json:"categorical"`
	Text            *textfeat.Options `json:"text"`
	Identifiability string            `json:"identifiability"`
	RefRater        string            `json:"ref_rater"`
	Sampler         string            `json:"sampler"`
	Chains          *int              `json:"chains"`
	Samples         *int              `json:"samples"`
	Burnin          *int              `json:"burnin"`
	Thin            *int              `json:"thin"`
	Seed            *uint64           `json:"seed"`
	V               *float64          `json:"v"`
	Lambda          *float64          `json:"lambda"`
	SigmaB          *float64          `json:"sigma_b"`
	FlagThreshold   *float64          `json:"flag_threshold"`
	MaxRhat         *float64          `json:"max_rhat"`
	MinESS          *float64          `json:"min_ess"`
	KeepDraws       *int              `json:"keep_draws"`
	Precisions      string            `json:"precisions"`
	Engine          string            `json:"engine"`
	Sigma           *float64          `json:"sigma"`
	Thresholds      []float64         `json:"thresholds"`
	Restarts        *int              `json:"restarts"`
	Rank            *int              `json:"rank"`
	Standardize     bool              `json:"standardize"`
	Likelihood      string            `json:"likelihood"`
	Dispersions     string            `json:"dispersions"`
	Dispersion      *float64          `json:"dispersion"`
	Bias            bool              `json:"bias"`
	Bounds          string            `json:"bounds"`
	// The robust model: Epsilon fixes every rater's labelling-error rate
	// (omitted: learnt by EM; 0 is the plain classifier), Select fits the
	// plain and the robust model and keeps the one with the larger
	// evidence, EM is the M-step of the error rates (tilted or paper).
	Epsilon *float64 `json:"epsilon"`
	Select  bool     `json:"select"`
	EM      string   `json:"em"`
	// The confusion model.
	Gold          bool     `json:"gold"`
	Hierarchy     string   `json:"hierarchy"`
	RaterModel    string   `json:"rater_model"`
	Communities   *int     `json:"communities"`
	Concentration *float64 `json:"concentration"`
	// MaxIter bounds the variational iterations (omitted: 1000).
	MaxIter *int `json:"max_iter"`
	// The auc model: Scores (linear or gp), Gamma (a positive number or
	// "cv"), Prior (gaussian or spike-slab) and PriorScale (V).
	Scores     string              `json:"scores"`
	Gamma      *analysis.GammaSpec `json:"gamma"`
	Prior      string              `json:"prior"`
	PriorScale *float64            `json:"prior_scale"`
}

// defaultSeed is the seed of a fit that names none, as in `concord fit`.
const defaultSeed = 1

// spec turns the request into a validated FitSpec for a project with
// scheme, with every default filled in, so that the stored spec says
// exactly what runs.
func (r *fitRequest) spec(scheme annotations.Scheme) (analysis.FitSpec, error) {
	bad := func(format string, args ...any) (analysis.FitSpec, error) {
		return analysis.FitSpec{}, annotations.Errorf(annotations.EINVALID, format, args...)
	}
	sp := analysis.FitSpec{
		Model: strings.ToLower(strings.TrimSpace(r.Model)), Kernel: strings.TrimSpace(r.Kernel), Covariates: strings.TrimSpace(r.Covariates), Categorical: r.Categorical,
		Identifiability: strings.ToLower(strings.TrimSpace(r.Identifiability)), RefRater: r.RefRater,
		Sampler: strings.ToLower(strings.TrimSpace(r.Sampler)), Seed: defaultSeed,
		Precisions: strings.ToLower(strings.TrimSpace(r.Precisions)),
		Engine:     strings.ToLower(strings.TrimSpace(r.Engine)), Thresholds: r.Thresholds, Standardize: r.Standardize,
		Likelihood: strings.ToLower(strings.TrimSpace(r.Likelihood)), Dispersions: strings.ToLower(strings.TrimSpace(r.Dispersions)), Bias: r.Bias, Bounds: strings.ToLower(strings.TrimSpace(r.Bounds)),
		Select: r.Select, EM: strings.ToLower(strings.TrimSpace(r.EM)),
		Gold: r.Gold, Hierarchy: strings.ToLower(strings.TrimSpace(r.Hierarchy)), RaterModel: strings.ToLower(strings.TrimSpace(r.RaterModel)),
		Scores: strings.ToLower(strings.TrimSpace(r.Scores)), Prior: strings.ToLower(strings.TrimSpace(r.Prior)),
	}
	if r.Gamma != nil {
		g := analysis.Clip(string(*r.Gamma))
		if _, err := strconv.ParseFloat(g, 64); err != nil {
			g = strconv.Quote(g) // a number is echoed as the number it is
		}
		v, cv, err := r.Gamma.Value()
		if err != nil || strings.TrimSpace(string(*r.Gamma)) == "" {
			gr := analysis.LookupSetting("gamma")
			return bad("field \"gamma\" = %s: expected a number %s (the pseudo-posterior's temperature, e.g. 30) or \"cv\" (chosen by cross-validation)", g, gr.Range())
		}
		if !cv {
			if err := analysis.LookupSetting("gamma").CheckField(v); err != nil {
				return analysis.FitSpec{}, err
			}
		}
		sp.Gamma = analysis.GammaSpec(strings.ToLower(strings.TrimSpace(string(*r.Gamma))))
	}
	if sp.Model == "" {
		sp.Model = analysis.DefaultModel(scheme)
	}
	if r.Seed != nil {
		sp.Seed = *r.Seed
	}
	if r.Text != nil {
		sp.Text = *r.Text
	}
	// The ranges are analysis's declared ones (analysis.Settings).
	ints := []struct {
		name string
		v    *int
		dst  *int
	}{
		{"chains", r.Chains, &sp.Chains},
		{"samples", r.Samples, &sp.Samples},
		{"thin", r.Thin, &sp.Thin},
		{"keep_draws", r.KeepDraws, &sp.KeepDraws},
		{"restarts", r.Restarts, &sp.Restarts},
		{"rank", r.Rank, &sp.Rank},
		{"communities", r.Communities, &sp.Communities},
		{"max_iter", r.MaxIter, &sp.MaxIter},
	}
	for _, f := range ints {
		if f.v == nil {
			continue
		}
		if err := analysis.LookupSetting(f.name).CheckField(float64(*f.v)); err != nil {
			return analysis.FitSpec{}, err
		}
		*f.dst = *f.v
	}
	if r.Burnin != nil {
		switch b := *r.Burnin; {
		case b < 0 || b > analysis.MaxBurnin:
			return bad("field \"burnin\" = %d: expected an integer from 0 (no burn-in) to %d", b, analysis.MaxBurnin)
		case b == 0:
			sp.Burnin = -1 // FitSpec: negative means none
		default:
			sp.Burnin = b
		}
	}
	floats := []struct {
		name string
		v    *float64
		dst  *float64
	}{
		{"v", r.V, &sp.V}, {"lambda", r.Lambda, &sp.Lambda}, {"sigma_b", r.SigmaB, &sp.SigmaB},
		{"flag_threshold", r.FlagThreshold, &sp.FlagThreshold}, {"max_rhat", r.MaxRhat, &sp.MaxRhat}, {"min_ess", r.MinESS, &sp.MinESS},
		{"sigma", r.Sigma, &sp.Sigma}, {"dispersion", r.Dispersion, &sp.Dispersion}, {"concentration", r.Concentration, &sp.Concentration},
		{"prior_scale", r.PriorScale, &sp.PriorScale},
	}
	for _, f := range floats {
		if f.v == nil {
			continue
		}
		if err := analysis.LookupSetting(f.name).CheckField(*f.v); err != nil {
			return analysis.FitSpec{}, err
		}
		*f.dst = *f.v
	}
	if r.Epsilon != nil {
		// 0 means something here (the plain classifier): not one of the
		// positive settings above.
		if e := *r.Epsilon; !(e >= 0 && e < 0.5) {
			return bad("field \"epsilon\" = %v: expected a labelling-error rate in [0, 0.5) (0: the plain classifier; leave it out to learn each rater's by EM)", e)
		}
		e := *r.Epsilon
		sp.Epsilon = &e
	}
	// Fixed thresholds are checked against the project's scheme now, not
	// when the fit runs.
	if n := len(r.Thresholds); n > 0 && scheme.Kind == annotations.Ordinal && n != scheme.K()-1 {
		return bad("field \"thresholds\": %d values; the scheme %s has %d levels, so expected %d increasing values", n, analysis.Clip(scheme.String()), scheme.K(), scheme.K()-1)
	}
	if err := sp.Validate(); err != nil {
		return analysis.FitSpec{}, err
	}
	if err := r.checkModelFields(sp); err != nil {
		return analysis.FitSpec{}, err
	}
	return completeSpec(sp), nil
}

// checkModelFields rejects settings that the fit would not use: a
// reference rater without strong identifiability, and what the model's
// entry in analysis's model table rejects (analysis.Model.CheckGiven: a
// model's own settings given for another model, precision settings when
// the precisions are fixed).
func (r *fitRequest) checkModelFields(sp analysis.FitSpec) error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	ident := sp.Identifiability
	if ident == "" {
		ident = "weak"
	}
	if sp.RefRater != "" && ident == "weak" {
		return bad("field \"ref_rater\" names the reference rater of identifiability strong or both; with identifiability weak no rater is fixed (set \"identifiability\": \"strong\", or leave ref_rater out)")
	}
	m, err := analysis.LookupModel(sp.Model)
	if err != nil {
		return err
	}
	given := map[string]bool{"chains": r.Chains != nil, "samples": r.Samples != nil, "burnin": r.Burnin != nil, "thin": r.Thin != nil,
		"seed": r.Seed != nil, "v": r.V != nil, "lambda": r.Lambda != nil, "sigma_b": r.SigmaB != nil, "flag_threshold": r.FlagThreshold != nil,
		"max_rhat": r.MaxRhat != nil, "min_ess": r.MinESS != nil, "keep_draws": r.KeepDraws != nil, "text": r.Text != nil}
	return m.CheckGiven(sp, func(field string) bool { return given[field] })
}

// completeSpec fills in every default of a valid spec, except an omitted
// kernel: it depends on the data when the fit runs (analysis.DefaultKernelFor:
// text when items have texts, except for a classification fit whose items
// all have labels; else identity), and the result records the kernel used. Settings
// the model does not use (the threshold prior of a classification fit) are
// left out.
func completeSpec(sp analysis.FitSpec) analysis.FitSpec {
	full := sp.WithDefaults()
	full.Kernel = sp.Kernel
	return full
}

// fitJSON is a fit in API responses: its state and progress, and when done
// a summary of the result and the links to its reports.
type fitJSON struct {
	annotations.Fit
	Summary *reports.FitSummary `json:"summary,omitempty"`
	Links   map[string]string   `json:"links"`
}

func (s *Server) fitView(ctx context.Context, f *annotations.Fit) fitJSON {
	base := "/api/v1/fits/" + itoa(f.ID)
	out := fitJSON{Fit: *f, Links: map[string]string{"self": base, "project": "/api/v1/projects/" + itoa(f.ProjectID), "dashboard": "/fits/" + itoa(f.ID)}}
	if f.Status != annotations.FitDone {
		return out
	}
	for _, k := range []string{"result", "report.json", "report.xlsx", "predictions"} {
		out.Links[k] = base + "/" + k
	}
	cf, err := s.result(ctx, f)
	if err != nil {
		s.log.WarnContext(ctx, "reading a fit result for its summary", "fit", f.ID, "err", err)
		return out
	}
	if rh := cf.res.Diagnostics.MaxRhat; !math.IsNaN(rh) && !math.IsInf(rh, 0) {
		out.MaxRhat = rh // NaN: not available (too few draws), left out
	}
	out.Summary = cf.summary()
	return out
}

// fitParam resolves :id to a fit the caller may see (ENOTFOUND otherwise,
// with the store's message) and may act on as asked.
func (s *Server) fitParam(c *gin.Context, a access) (*annotations.Fit, error) {
	id, err := idParam(c, "id", "fit")
	if err != nil {
		return nil, err
	}
	f, err := s.store.FindFitByID(c.Request.Context(), id)
	if err != nil {
		return nil, err
	}
	if !who(c).canSee(f.ProjectID) {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "fit %d not found", id)
	}
	if err := checkProject(c, f.ProjectID, a); err != nil {
		return nil, err
	}
	c.Set(ctxFit, id)
	return f, nil
}

// createFit: POST /api/v1/projects/{id}/fits {"model", "kernel", "chains",
// "samples", "burnin", "seed", ...} -> 202 {"id", "state": "queued", ...}.
// The fit runs in the background; GET /fits/{id} shows its progress.
func (s *Server) createFit(c *gin.Context) {
	p, err := s.projectParam(c, write)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req fitRequest
	err = jsonContentType(c)
	var body []byte
	if err == nil {
		body, err = readBody(c, s.cfg.MaxJSONBytes)
	}
	if err == nil && len(strings.TrimSpace(string(body))) > 0 {
		// An empty body asks for the defaults; a null field is refused
		// rather than read as its default.
		err = decodeJSONBytes(body, &req)
		if err == nil {
			err = rejectNulls(body)
		}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	f, err := s.startFit(c.Request.Context(), p, &req)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Set(ctxFit, f.ID)
	c.Header("Location", "/api/v1/fits/"+itoa(f.ID))
	c.JSON(http.StatusAccepted, s.fitView(c.Request.Context(), f))
}

// startFit validates a fit request against the project and queues it.
func (s *Server) startFit(ctx context.Context, p *annotations.Project, req *fitRequest) (*annotations.Fit, error) {
	sp, err := req.spec(p.Scheme)
	if err != nil {
		return nil, err
	}
	return s.queueFit(ctx, p, sp)
}

// StartFit queues a fit of project projectID with spec, with the checks of
// POST /api/v1/projects/{id}/fits that concern the project (a spec without
// a model gets the one that suits the project's scheme); a running
// Server's workers then run it. (`concord demo` queues its fits with it.)
func (s *Server) StartFit(ctx context.Context, projectID int64, spec analysis.FitSpec) (*annotations.Fit, error) {
	p, err := s.store.FindProjectByID(ctx, projectID)
	if err != nil {
		return nil, err
	}
	spec.Model = strings.ToLower(strings.TrimSpace(spec.Model))
	if spec.Model == "" {
		spec.Model = analysis.DefaultModel(p.Scheme)
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return s.queueFit(ctx, p, completeSpec(spec))
}

// queueFit checks a complete spec against the project and queues the fit.
func (s *Server) queueFit(ctx context.Context, p *annotations.Project, sp analysis.FitSpec) (*annotations.Fit, error) {
	if err := analysis.CheckScheme(sp.Model, p.Scheme); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "project %q: %s", p.Name, annotations.ErrorMessage(err))
	}
	st, err := s.store.Stats(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	if st.Labels == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "project %q has no labels to fit: import labels first", p.Name)
	}
	if err := analysis.CheckKernelData(sp.Kernel, st); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "project %q: %s", p.Name, annotations.ErrorMessage(err))
	}
	if err := analysis.CheckModelData(sp, st); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "project %q: %s", p.Name, annotations.ErrorMessage(err))
	}
	if err := analysis.CheckWork(sp, st.Labels, st.Items, s.cfg.MaxFitWork, "the server's, concord serve --max-fit-work"); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "project %q: %s", p.Name, annotations.ErrorMessage(err))
	}
	if sp.RefRater != "" && sp.Identifiability != "weak" && st.PerRater[sp.RefRater] == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "field \"ref_rater\": rater %q has no labels in project %q", sp.RefRater, p.Name)
	}
	spec, err := json.Marshal(sp)
	if err != nil {
		return nil, fmt.Errorf("encode fit spec: %w", err)
	}
	f := &annotations.Fit{ProjectID: p.ID, Model: sp.Model, Spec: spec, Seed: sp.Seed}
	if err := s.store.CreateFitWithin(ctx, f, max(s.cfg.MaxProjectFits, 0)); err != nil {
		return nil, err
	}
	s.log.InfoContext(ctx, "fit queued", "fit", f.ID, "project", p.ID, "model", sp.Model, "seed", sp.Seed)
	s.pool.wake()
	return f, nil
}

// listFits: GET /api/v1/projects/{id}/fits, newest first.
func (s *Server) listFits(c *gin.Context) {
	p, err := s.projectParam(c, read)
	if err == nil {
		err = newQuery(c).err
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	fits, err := s.store.ListFits(c.Request.Context(), p.ID)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]fitJSON, len(fits))
	for i := range fits {
		out[i] = fitJSON{Fit: fits[i], Links: map[string]string{"self": "/api/v1/fits/" + itoa(fits[i].ID)}}
	}
	c.JSON(http.StatusOK, gin.H{"fits": out})
}

// getFit: GET /api/v1/fits/{id} -> {"id", "state", "progress",
// "eta_seconds", "max_rhat", ...}.
func (s *Server) getFit(c *gin.Context) {
	f, err := s.fitParam(c, read)
	if err == nil {
		err = newQuery(c).err
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, s.fitView(c.Request.Context(), f))
}

// cancelFit: POST /api/v1/fits/{id}/cancel cancels a queued fit at once and
// stops a running one (at once in this process; at its next heartbeat in
// another) -> 202 with the fit.
func (s *Server) cancelFit(c *gin.Context) {
	f, err := s.fitParam(c, write)
	if err != nil {
		s.fail(c, err)
		return
	}
	if f.Status.Terminal() {
		s.failf(c, annotations.ECONFLICT, "fit %d is already %s", f.ID, f.Status)
		return
	}
	f, err = s.store.RequestCancel(c.Request.Context(), f.ID)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.pool.cancelLocal(f.ID)
	c.JSON(http.StatusAccepted, s.fitView(c.Request.Context(), f))
}

// deleteFit: DELETE /api/v1/fits/{id} removes a fit that is not running.
func (s *Server) deleteFit(c *gin.Context) {
	f, err := s.fitParam(c, write)
	if err != nil {
		s.fail(c, err)
		return
	}
	if f.Status == annotations.FitRunning {
		s.failf(c, annotations.ECONFLICT, "fit %d is running; cancel it (POST /api/v1/fits/%d/cancel) before deleting it", f.ID, f.ID)
		return
	}
	if err := s.store.DeleteFit(c.Request.Context(), f.ID); err != nil {
		s.fail(c, err)
		return
	}
	s.cache.forget(f.ID)
	c.Status(http.StatusNoContent)
}
