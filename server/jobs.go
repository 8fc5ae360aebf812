package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"concord/annotations"
)

// The job engine as the admin sees it: GET /api/v1/jobs and the dashboard
// page /jobs (admin token only) list the jobs by queue and state, the most
// recent jobs with the workers that attempted them and their errors, and the
// worker processes that recorded themselves alive.

// jobsView is the answer of GET /api/v1/jobs.
type jobsView struct {
	Counts  []annotations.JobCount   `json:"counts"`
	Jobs    []annotations.JobInfo    `json:"jobs"`
	Workers []annotations.WorkerInfo `json:"workers"`
}

func (s *Server) jobsView(c *gin.Context, limit int) (*jobsView, error) {
	if err := requireAdmin(c, "the job list"); err != nil {
		return nil, err
	}
	ctx := c.Request.Context()
	counts, err := s.store.JobCounts(ctx)
	if err != nil {
		return nil, err
	}
	jobs, workers, err := s.store.ListJobs(ctx, limit)
	if err != nil {
		return nil, err
	}
	v := &jobsView{Counts: counts, Jobs: jobs, Workers: workers}
	if v.Counts == nil {
		v.Counts = []annotations.JobCount{}
	}
	if v.Jobs == nil {
		v.Jobs = []annotations.JobInfo{}
	}
	if v.Workers == nil {
		v.Workers = []annotations.WorkerInfo{}
	}
	return v, nil
}

// listJobs: GET /api/v1/jobs?limit=N (admin).
func (s *Server) listJobs(c *gin.Context) {
	q := newQuery(c, "limit")
	limit := q.intIn("limit", 100, 1, 1000)
	if q.err != nil {
		s.fail(c, q.err)
		return
	}
	v, err := s.jobsView(c, limit)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, v)
}

// jobsPage: GET /jobs, the dashboard's page of the job engine (admin).
func (d *dashboard) jobsPage(c *gin.Context) {
	v, err := d.s.jobsView(c, 200)
	if err != nil {
		d.fail(c, err)
		return
	}
	d.render(c, http.StatusOK, "jobs", struct {
		basePage
		*jobsView
	}{d.base(c, "Background jobs"), v})
}
