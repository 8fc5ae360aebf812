package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"concord/annotations"
)

// projectJSON is a project in API responses.
type projectJSON struct {
	ID           int64              `json:"id"`
	Name         string             `json:"name"`
	Scheme       string             `json:"scheme"`
	SchemeDetail annotations.Scheme `json:"scheme_detail"`
	CreatedAt    time.Time          `json:"created_at"`
	Items        int                `json:"items"`
	Raters       int                `json:"raters"`
	Labels       int                `json:"labels"`
	// Stats (GET /projects/{id} only) summarises the labels.
	Stats *annotations.Stats `json:"stats,omitempty"`
	// Fits counts the project's fits by state (GET /projects/{id} only).
	Fits map[annotations.FitStatus]int `json:"fits,omitempty"`
	// APIKey is the new project's read-write key, shown once (POST
	// /projects only).
	APIKey   string `json:"api_key,omitempty"`
	APIKeyID int64  `json:"api_key_id,omitempty"`
}

func newProjectJSON(p *annotations.Project) projectJSON {
	return projectJSON{ID: p.ID, Name: p.Name, Scheme: p.Scheme.String(), SchemeDetail: p.Scheme, CreatedAt: p.CreatedAt}
}

type createProjectRequest struct {
	Name   string          `json:"name"`
	Scheme json.RawMessage `json:"scheme"`
}

// parseSchemeJSON reads a scheme given as its textual form ("ordinal:1..5")
// or as an object ({"kind": "ordinal", "levels": [...]}).
func parseSchemeJSON(raw json.RawMessage) (annotations.Scheme, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return annotations.Scheme{}, annotations.Errorf(annotations.EINVALID, "field \"scheme\" is required, e.g. \"ordinal:1..5\", \"nominal:yes,no,maybe\", \"binary:0,1,pos=1\" or \"bounded:0..100\"")
	}
	if raw[0] == '"' {
		var spec string
		if err := json.Unmarshal(raw, &spec); err != nil {
			return annotations.Scheme{}, annotations.Errorf(annotations.EINVALID, "field \"scheme\": %v", err)
		}
		return annotations.ParseScheme(spec)
	}
	var s annotations.Scheme
	if err := decodeJSONBytes(raw, &s); err != nil {
		return s, annotations.Errorf(annotations.EINVALID, "field \"scheme\": %s", annotations.ErrorMessage(err))
	}
	if err := s.Validate(); err != nil {
		return s, annotations.Errorf(annotations.EINVALID, "field \"scheme\": %s", annotations.ErrorMessage(err))
	}
	return s, nil
}

// createProject: POST /api/v1/projects (admin) {"name", "scheme"} -> 201
// with the project and its first API key (read-write, named "default").
func (s *Server) createProject(c *gin.Context) {
	if err := requireAdmin(c, "creating a project"); err != nil {
		s.fail(c, err)
		return
	}
	req := bodyOf[createProjectRequest](s, c)
	if req == nil {
		return
	}
	if req.Name == "" {
		s.failf(c, annotations.EINVALID, "field \"name\" is required")
		return
	}
	scheme, err := parseSchemeJSON(req.Scheme)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	p := &annotations.Project{Name: req.Name, Scheme: scheme}
	if err := s.store.CreateProject(ctx, p); err != nil {
		s.fail(c, err)
		return
	}
	c.Set(ctxProject, p.ID)
	key, k, err := s.makeKey(ctx, p.ID, "default", false)
	if err != nil {
		// Without its key the project would be unusable by a project
		// client: take it back.
		if derr := s.store.DeleteProject(context.WithoutCancel(ctx), p.ID); derr != nil {
			reqLogger(c, s.log).Error("removing a project whose key could not be made", "err", derr)
		}
		s.fail(c, err)
		return
	}
	out := newProjectJSON(p)
	out.APIKey, out.APIKeyID = key, k.ID
	c.Header("Location", "/api/v1/projects/"+itoa(p.ID))
	c.JSON(http.StatusCreated, out)
}

// listProjects: GET /api/v1/projects: every project for the admin, the
// key's own project for a project key.
func (s *Server) listProjects(c *gin.Context) {
	if err := newQuery(c).err; err != nil {
		s.fail(c, err)
		return
	}
	ps, err := s.store.ListProjects(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	p := who(c)
	out := []projectJSON{}
	for i := range ps {
		if !p.canSee(ps[i].ID) {
			continue
		}
		pj := newProjectJSON(&ps[i].Project)
		pj.Items, pj.Raters, pj.Labels = ps[i].Items, ps[i].Raters, ps[i].Labels
		out = append(out, pj)
	}
	c.JSON(http.StatusOK, gin.H{"projects": out})
}

// projectNoQuery is projectParam for a request that takes no query
// parameters (it refuses any); on a failure it answers the request itself
// and returns nil.
func (s *Server) projectNoQuery(c *gin.Context, a access) *annotations.Project {
	p, err := s.projectParam(c, a)
	if err == nil {
		err = newQuery(c).err
	}
	if err != nil {
		s.fail(c, err)
		return nil
	}
	return p
}

// project is projectParam for a handler: on failure it answers the error
// and returns nil.
func (s *Server) project(c *gin.Context, a access) *annotations.Project {
	p, _ := orFail(s.fail, c, a, s.projectParam)
	return p
}

// projectBody is project followed by decoding the JSON body (decodeJSON)
// into a new T: on failure it answers the error and returns a nil body.
func projectBody[T any](s *Server, c *gin.Context, a access) (*annotations.Project, *T) {
	p := s.project(c, a)
	if p == nil {
		return nil, nil
	}
	return p, bodyOf[T](s, c)
}

// bodyOf decodes the JSON body of c (decodeJSON) into a new T: on failure
// it answers the error and returns nil.
func bodyOf[T any](s *Server, c *gin.Context) *T {
	req := new(T)
	if err := s.decodeJSON(c, req); err != nil {
		s.fail(c, err)
		return nil
	}
	return req
}

// projectParam resolves :id with the access rules and loads the project.
func (s *Server) projectParam(c *gin.Context, a access) (*annotations.Project, error) {
	id, err := idParam(c, "id", "project")
	if err != nil {
		return nil, err
	}
	if err := checkProject(c, id, a); err != nil {
		return nil, err
	}
	return s.store.FindProjectByID(c.Request.Context(), id)
}

// projectDetail is a project with its counts, label statistics and fits by
// state.
func (s *Server) projectDetail(ctx context.Context, p *annotations.Project) (projectJSON, error) {
	out := newProjectJSON(p)
	st, err := s.store.Stats(ctx, p.ID)
	if err != nil {
		return out, err
	}
	out.Items, out.Raters, out.Labels, out.Stats = st.Items, st.Raters, st.Labels, st
	fits, err := s.store.ListFits(ctx, p.ID)
	if err != nil {
		return out, err
	}
	out.Fits = map[annotations.FitStatus]int{}
	for _, f := range fits {
		out.Fits[f.Status]++
	}
	return out, nil
}

// getProject: GET /api/v1/projects/{id} -> the project with counts and
// label statistics.
func (s *Server) getProject(c *gin.Context) {
	p := s.projectNoQuery(c, read)
	if p == nil {
		return
	}
	out, err := s.projectDetail(c.Request.Context(), p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// deleteProject: DELETE /api/v1/projects/{id} (admin) removes the project
// with its items, raters, labels, fits and keys. Its fits running in this
// process stop.
func (s *Server) deleteProject(c *gin.Context) {
	p := s.project(c, admin)
	if p == nil {
		return
	}
	s.pool.stopProject(p.ID)
	if err := s.store.DeleteProject(c.Request.Context(), p.ID); err != nil {
		s.fail(c, err)
		return
	}
	s.keys.forget()
	s.cache.forgetProject(p.ID)
	s.agreementRuns.forget(p.ID)
	c.Status(http.StatusNoContent)
}

// me: GET /api/v1/me says who the credentials belong to.
func (s *Server) me(c *gin.Context) {
	p := who(c)
	out := gin.H{"role": p.Role(), "admin": p.Admin}
	if !p.Admin {
		out["project_id"] = p.ProjectID
		out["read_only"] = p.ReadOnly
		out["key_id"] = p.KeyID
		out["key_name"] = p.KeyName
	}
	c.JSON(http.StatusOK, out)
}
