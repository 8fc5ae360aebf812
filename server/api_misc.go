package server

import (
	"context"
	_ "embed"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"concord/annotations"
)

// healthz: GET /healthz answers 200 while the process runs (liveness).
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok", "version": s.cfg.Version})
}

// pinger is implemented by stores that can check their connection.
type pinger interface {
	Ping(ctx context.Context) error
}

// readyz: GET /readyz answers 200 when the database answers, 503 otherwise
// (readiness).
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	var err error
	if p, ok := s.store.(pinger); ok {
		err = p.Ping(ctx)
	} else {
		_, err = s.store.ListProjects(ctx)
	}
	if err != nil {
		s.fail(c, annotations.Errorf(annotations.EUNAVAILABLE, "database unavailable"))
		s.log.Warn("readiness check failed", "err", err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "workers": max(s.cfg.Workers, 0), "running": len(s.pool.running())})
}

//go:embed openapi.json
var openAPIDocument []byte

// openAPI: GET /api/v1/openapi.json serves the API's OpenAPI 3 document.
func (s *Server) openAPI(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json", openAPIDocument)
}
