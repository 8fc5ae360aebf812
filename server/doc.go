// Package server is concord's HTTP service (gin): the REST API under /api/v1,
// background fit jobs with progress, access control by API keys, the
// server-rendered dashboard, health checks and Prometheus metrics. Handlers are
// thin: they validate input, call the stores and the analysis packages, and map
// the one error vocabulary of package annotations to HTTP statuses.
package server
