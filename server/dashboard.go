package server

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

type dashboard struct{ s *Server }

func newDashboard(s *Server) (*dashboard, error) { return &dashboard{s: s}, nil }

func (d *dashboard) routes(r *gin.Engine) {}

func (d *dashboard) notFound(c *gin.Context) { c.String(http.StatusNotFound, "not found") }
