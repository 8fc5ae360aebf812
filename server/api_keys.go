package server

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"concord/annotations"
)

// makeKey creates a project API key and returns the secret (to be shown
// once) with the stored key.
func (s *Server) makeKey(ctx context.Context, projectID int64, name string, readOnly bool) (string, *annotations.APIKey, error) {
	secret, prefix, hash := newAPIKey()
	k := &annotations.APIKey{ProjectID: projectID, Name: name, Prefix: prefix, Hash: hash, ReadOnly: readOnly}
	if err := s.store.CreateAPIKey(ctx, k); err != nil {
		return "", nil, err
	}
	return secret, k, nil
}

type createKeyRequest struct {
	Name     string `json:"name"`
	ReadOnly bool   `json:"read_only"`
}

// keyJSON is a key in responses: never its hash; the secret only when it
// is made.
type keyJSON struct {
	annotations.APIKey
	Key string `json:"key,omitempty"`
}

// listKeys: GET /api/v1/projects/{id}/keys lists the project's keys (names,
// prefixes, permissions; never secrets).
func (s *Server) listKeys(c *gin.Context) {
	listProject(s, c, "keys", s.store.ListAPIKeys, func(k annotations.APIKey) keyJSON { return keyJSON{APIKey: k} })
}

// createKey: POST /api/v1/projects/{id}/keys (admin) {"name", "read_only"}
// -> 201 with the key's secret, shown this once.
func (s *Server) createKey(c *gin.Context) {
	p, req := projectBody[createKeyRequest](s, c, admin)
	if req == nil {
		return
	}
	if req.Name == "" {
		s.failf(c, annotations.EINVALID, "field \"name\" is required (a label for the key, unique in the project)")
		return
	}
	secret, k, err := s.makeKey(c.Request.Context(), p.ID, req.Name, req.ReadOnly)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, keyJSON{APIKey: *k, Key: secret})
}

// deleteKey: DELETE /api/v1/projects/{id}/keys/{key} (admin) revokes a key.
func (s *Server) deleteKey(c *gin.Context) {
	p := s.project(c, admin)
	if p == nil {
		return
	}
	kid, err := idParam(c, "key", "API key")
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.store.DeleteAPIKey(c.Request.Context(), p.ID, kid); err != nil {
		s.fail(c, err)
		return
	}
	s.keys.forget()
	c.Status(http.StatusNoContent)
}
