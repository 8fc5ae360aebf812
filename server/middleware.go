package server

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

const ctxRequestID = "concord.request_id"

// requestContext gives every request an id (the client's X-Request-ID when
// it is short and plain, else a fresh one), echoed in the response.
func (s *Server) requestContext(c *gin.Context) {
	id := c.GetHeader("X-Request-ID")
	if !plainID(id) {
		var b [8]byte
		rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	c.Set(ctxRequestID, id)
	c.Header("X-Request-ID", id)
	c.Header("X-Content-Type-Options", "nosniff")
	c.Next()
}

func plainID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// reqLogger returns the logger with the request's id, and its project and
// fit when the handler has named them.
func reqLogger(c *gin.Context, log *slog.Logger) *slog.Logger {
	attrs := []any{"request_id", requestID(c)}
	if v, ok := c.Get(ctxProject); ok {
		attrs = append(attrs, "project", v)
	}
	if v, ok := c.Get(ctxFit); ok {
		attrs = append(attrs, "fit", v)
	}
	return log.With(attrs...)
}

// accessLog logs every request and records its metrics by route and
// status.
func (s *Server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	d := time.Since(start)
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	s.metrics.observe(c.Request.Method, route, status, d)
	level := slog.LevelInfo
	switch {
	case status >= 500:
		level = slog.LevelError
	case route == "/healthz" || route == "/readyz" || route == "/metrics" || route == "/static/*file":
		level = slog.LevelDebug
	}
	ctx := c.Request.Context()
	log := reqLogger(c, s.log)
	if !log.Enabled(ctx, level) {
		return
	}
	attrs := []any{
		"method", c.Request.Method, "route", route, "path", c.Request.URL.Path,
		"status", status, "duration_ms", float64(d.Microseconds()) / 1000,
		"bytes", c.Writer.Size(), "remote", c.ClientIP(),
	}
	if v, ok := c.Get(ctxPrincipal); ok {
		if p, ok := v.(*principal); ok {
			attrs = append(attrs, "auth", p.Role())
			if p.KeyID != 0 {
				attrs = append(attrs, "key", p.KeyID)
			}
		}
	}
	log.Log(ctx, level, "request", attrs...)
}

// stack returns the current goroutine's stack for panic logs.
func stack() string { return string(debug.Stack()) }

func statusLabel(code int) string { return strconv.Itoa(code) }
