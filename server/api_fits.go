package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
	"concord/reports"
)

// fitRequest is the body of POST /projects/{id}/fits: the settings given,
// each a setting of analysis.AllFields (the declared settings of every
// model: those of `concord fit`), by JSON name. Omitted fields take the
// defaults of `concord fit`, except the model, which defaults to the one
// that suits the project's scheme and items (analysis.DefaultModelFor:
// ordinal for ordinal schemes; for nominal and binary ones confusion
// without item texts, classification with them); unlike FitSpec, an explicit
// 0 is taken literally where it means something (a burn-in of 0 is none)
// and rejected where it does not (0 chains). A null field is
// rejected, naming it (null would otherwise silently mean the default).
// Settings that the chosen model does not use are rejected rather than
// ignored (analysis.CheckGiven).
type fitRequest struct {
	// values holds each setting given: a pointer to its value (a list
	// or an object too, so that an empty one is given).
	values map[string]reflect.Value
	// defModel is the model of a request that names none ("":
	// analysis.DefaultModel of the scheme); startFit sets it from the
	// project's items (analysis.DefaultModelFor).
	defModel string
}

// requestType is the decoding type of a fit request: one pointer field per
// declared setting, named as in FitSpec, so that encoding/json rejects
// unknown fields and values of the wrong type, naming the field.
func requestType(fields []analysis.SpecField) reflect.Type {
	sfs := make([]reflect.StructField, len(fields))
	for i, f := range fields {
		sfs[i] = reflect.StructField{Name: "F" + strconv.Itoa(i), Type: reflect.PointerTo(f.Type), Tag: reflect.StructTag(`json:"` + f.Name + `"`)}
	}
	return reflect.StructOf(sfs)
}

// decodeFitRequest reads a fit request's JSON body (empty: the defaults).
func decodeFitRequest(body []byte) (*fitRequest, error) {
	r := &fitRequest{values: map[string]reflect.Value{}}
	if len(strings.TrimSpace(string(body))) == 0 {
		return r, nil
	}
	fields := analysis.AllFields()
	p := reflect.New(requestType(fields))
	if err := decodeJSONBytes(body, p.Interface()); err != nil {
		return nil, err
	}
	if err := rejectNulls(body); err != nil {
		return nil, err
	}
	for i, f := range fields {
		if v := p.Elem().Field(i); !v.IsNil() {
			r.values[f.Name] = v
		}
	}
	return r, nil
}

// set gives the setting f the value x (of f's type).
func (r *fitRequest) set(f analysis.SpecField, x reflect.Value) {
	p := reflect.New(f.Type)
	p.Elem().Set(x)
	r.values[f.Name] = p
}

// given reports whether the request gives the setting name.
func (r *fitRequest) given(name string) bool {
	_, ok := r.values[name]
	return ok
}

// modelKey, engineKey and kernelKey are the names of the common settings
// that the request, the form and the OpenAPI schema treat apart, found by
// their Go fields (a setting's name is spelled once, in its declaration).
func modelKey() string {
	return analysis.SettingOf(func(s *analysis.FitSpec) any { return &s.Model }).Name
}

func engineKey() string {
	return analysis.SettingOf(func(s *analysis.FitSpec) any { return &s.Engine }).Name
}

func kernelKey() string {
	return analysis.SettingOf(func(s *analysis.FitSpec) any { return &s.Kernel }).Name
}

// defaultSeed is the seed of a fit that names none, as in `concord fit`.
const defaultSeed = 1

// spec turns the request into a validated FitSpec for a project with
// scheme, with every default filled in, so that the stored spec says
// exactly what runs. Strings are trimmed, and the model, the engine and
// every setting with a list of words lowercased; a number given is checked
// against its declared range with 0 a value like any other.
func (r *fitRequest) spec(scheme annotations.Scheme) (analysis.FitSpec, error) {
	sp := analysis.FitSpec{Seed: defaultSeed}
	for _, f := range analysis.AllFields() {
		v, ok := r.values[f.Name]
		if !ok {
			continue
		}
		if err := f.SetGiven(&sp, v.Elem(), fmt.Sprintf("field %q", f.Name)); err != nil {
			return analysis.FitSpec{}, err
		}
	}
	if sp.Model == "" {
		sp.Model = r.defModel
	}
	if sp.Model == "" {
		sp.Model = analysis.DefaultModel(scheme)
	}
	// Fixed thresholds are checked against the project's scheme now, not
	// when the fit runs.
	if n := len(sp.Thresholds); n > 0 && scheme.Kind == annotations.Ordinal && n != scheme.K()-1 {
		return analysis.FitSpec{}, annotations.Errorf(annotations.EINVALID, "field \"thresholds\": %d values; the scheme %s has %d levels, so expected %d increasing values", n, analysis.Clip(scheme.String()), scheme.K(), scheme.K()-1)
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
// setting the model and engine do not read, precision settings when the
// precisions are fixed).
func (r *fitRequest) checkModelFields(sp analysis.FitSpec) error {
	ident := sp.Identifiability
	if ident == "" {
		ident = "weak"
	}
	if sp.RefRater != "" && ident == "weak" {
		return annotations.Errorf(annotations.EINVALID, "field \"ref_rater\" names the reference rater of identifiability strong or both; with identifiability weak no rater is fixed (set \"identifiability\": \"strong\", or leave ref_rater out)")
	}
	m, err := analysis.LookupModel(sp.Model)
	if err != nil {
		return err
	}
	return m.CheckGiven(sp, r.given)
}

// completeSpec fills in every default of a valid spec, except an omitted
// kernel: it depends on the data when the fit runs (analysis.DefaultKernelFor:
// text when items have texts, except for a classification fit whose items
// all have labels; else identity), and the result records the kernel used;
// so do the defaults that depend on it (the classification chains' lengths:
// analysis.FitSpec.WithDefaultsExceptKernel). Settings the model does not
// use (the threshold prior of a classification fit) are left out.
func completeSpec(sp analysis.FitSpec) analysis.FitSpec {
	return sp.WithDefaultsExceptKernel()
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

// fitOrFail is fitParam for a handler: on failure it answers the error and
// returns nil.
func (s *Server) fitOrFail(c *gin.Context, a access) *annotations.Fit {
	f, _ := orFail(s.fail, c, a, s.fitParam)
	return f
}

// createFit: POST /api/v1/projects/{id}/fits {"model", "kernel", "seed",
// and the model's settings} -> 202 {"id", "state": "queued", ...}.
// The fit runs in the background; GET /fits/{id} shows its progress.
func (s *Server) createFit(c *gin.Context) {
	p := s.project(c, write)
	if p == nil {
		return
	}
	err := jsonContentType(c)
	var body []byte
	if err == nil {
		body, err = readBody(c, s.cfg.MaxJSONBytes)
	}
	// An empty body asks for the defaults; a null field is refused rather
	// than read as its default.
	var req *fitRequest
	if err == nil {
		req, err = decodeFitRequest(body)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	f, err := s.startFit(c.Request.Context(), p, req)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Set(ctxFit, f.ID)
	c.Header("Location", "/api/v1/fits/"+itoa(f.ID))
	if f.Duplicate {
		// The same fit is queued or running: one job, and the client is
		// told so (200, "duplicate": true, the header).
		c.Header("X-Concord-Duplicate-Of", itoa(f.ID))
		c.JSON(http.StatusOK, s.fitView(c.Request.Context(), f))
		return
	}
	c.JSON(http.StatusAccepted, s.fitView(c.Request.Context(), f))
}

// startFit validates a fit request against the project and queues it.
func (s *Server) startFit(ctx context.Context, p *annotations.Project, req *fitRequest) (*annotations.Fit, error) {
	if !req.given(modelKey()) {
		m, err := s.defaultModel(ctx, p)
		if err != nil {
			return nil, err
		}
		req.defModel = m
	}
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
		if spec.Model, err = s.defaultModel(ctx, p); err != nil {
			return nil, err
		}
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return s.queueFit(ctx, p, completeSpec(spec))
}

// defaultModel is the model of a fit of project p that names none:
// analysis.DefaultModelFor the project's scheme and items.
func (s *Server) defaultModel(ctx context.Context, p *annotations.Project) (string, error) {
	st, err := s.store.Stats(ctx, p.ID)
	if err != nil {
		return "", err
	}
	return analysis.DefaultModelFor(p.Scheme, st.ItemsWithText), nil
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
	dup, err := s.store.CreateFitWithin(ctx, f, max(s.cfg.MaxProjectFits, 0))
	if err != nil {
		return nil, err
	}
	if dup {
		s.log.InfoContext(ctx, "fit already queued or running", "fit", f.ID, "project", p.ID, "model", sp.Model, "seed", sp.Seed)
		return f, nil
	}
	s.log.InfoContext(ctx, "fit queued", "fit", f.ID, "project", p.ID, "model", sp.Model, "seed", sp.Seed)
	return f, nil
}

// listFits: GET /api/v1/projects/{id}/fits, newest first.
func (s *Server) listFits(c *gin.Context) {
	listProject(s, c, "fits", s.store.ListFits, func(f annotations.Fit) fitJSON {
		return fitJSON{Fit: f, Links: map[string]string{"self": "/api/v1/fits/" + itoa(f.ID)}}
	})
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
// stops a running one (at once in this process; at its next progress write in
// another) -> 202 with the fit.
func (s *Server) cancelFit(c *gin.Context) {
	f := s.fitOrFail(c, write)
	if f == nil {
		return
	}
	if f.Status.Terminal() {
		s.failf(c, annotations.ECONFLICT, "fit %d is already %s", f.ID, f.Status)
		return
	}
	f, err := s.store.RequestCancel(c.Request.Context(), f.ID)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.pool.cancelLocal(f.ID)
	c.JSON(http.StatusAccepted, s.fitView(c.Request.Context(), f))
}

// deleteFit: DELETE /api/v1/fits/{id} removes a fit that is not running.
func (s *Server) deleteFit(c *gin.Context) {
	f := s.fitOrFail(c, write)
	if f == nil {
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
