package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
)

// Config configures a Server. The zero value of every field but AdminToken
// means the documented default.
type Config struct {
	// Addr is the listen address (default ":8080"; "127.0.0.1:0" picks a
	// free port, see Server.URL).
	Addr string
	// AdminToken is the admin credential (required).
	AdminToken string
	// Workers is the number of fits run at once by this process (default
	// runtime.NumCPU()); negative runs no fits (API only: another process
	// sharing the database runs them).
	Workers int
	// MaxJSONBytes limits JSON request bodies (default 8 MiB) and
	// MaxUploadBytes file uploads (default 64 MiB).
	MaxJSONBytes   int64
	MaxUploadBytes int64
	// PollInterval is how often idle workers look for queued fits
	// (default 1 s).
	PollInterval time.Duration
	// ProgressInterval is how often a running fit writes its progress and
	// checks for a cancel request (default 500 ms).
	ProgressInterval time.Duration
	// StaleAfter is how long a worker process may go without recording
	// that it is alive before the fits it runs count as abandoned and are
	// retried by other workers (default 30 s). Workers record that they
	// are alive, and look for abandoned fits, every StaleAfter/4.
	StaleAfter time.Duration
	// MaxProjectFits is the most fits one project may have queued or
	// running at once (default 8; negative: no limit). A submission beyond
	// it is refused with ETOOMANY (HTTP 429) naming the limit, so that one
	// key cannot fill the queue; the workers take queued fits fairly
	// across projects (see package db).
	MaxProjectFits int
	// MaxAttempts is the retry budget of a fit whose worker died: after
	// this many attempts it fails with a reason (default 3).
	MaxAttempts int
	// ShutdownGrace is how long a graceful shutdown waits for running fits
	// to finish before it stops them and puts them back in the queue
	// (default 10 s).
	ShutdownGrace time.Duration
	// HTTP server timeouts: ReadHeaderTimeout (default 10 s), ReadTimeout
	// (default 5 min: uploads), WriteTimeout (default 5 min: workbooks) and
	// IdleTimeout (default 2 min).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// ReportCache is the number of fits whose parsed results and rendered
	// reports are kept in memory (default 32).
	ReportCache int
	// FitCommand, when set, runs each fit in a child process: the command
	// and its arguments, a program that calls RunFitWorker (`concord serve`
	// uses "nice -n 10 concord fit-worker"). Empty runs fits in this
	// process.
	FitCommand []string
	// FanOutChains makes the Gibbs fits whose jobs this process takes run
	// their chains as jobs of their own, which any worker process sharing
	// the database may take, and a job that combines them (see package
	// db); and the EP and Laplace fits the later starts of their first
	// evidence maximisation with several starts (chains.go). The result
	// is the same, bit for bit. concord serve, worker and demo set it
	// unless --fan-out=false.
	FanOutChains bool
	// MaxBootstrapWork bounds the bootstrap of one agreement analysis (the
	// agreement endpoint and the agreement section of reports), in
	// resampled labels and rater pairs: replicates × (labels + rater pairs
	// sharing an item) (default analysis.DefaultMaxBootstrapWork, 2e8, a
	// few CPU seconds; negative: no bound). An explicit bootstrap beyond it
	// is refused naming the limit; the default is reduced to fit.
	MaxBootstrapWork int64
	// MaxAgreementLabels bounds the labels of a project whose agreement
	// analysis the server runs (the agreement routes, the dashboard's
	// agreement page, the agreement section of reports), so that no
	// request can hold more memory than about a gigabyte per million
	// labels allows (default DefaultMaxAgreementLabels; negative: no
	// limit). Above it the routes answer 413 naming the limit and the
	// command that runs the analysis outside the server.
	MaxAgreementLabels int
	// AgreementJobLabels is the size above which a project's agreement
	// analysis runs as a background job (default
	// DefaultAgreementJobLabels; negative: never): the first request
	// starts it and answers 202 with its state and a Retry-After, later
	// ones answer 202 until it is done and then the cached document.
	// Smaller projects are analysed within the request.
	AgreementJobLabels int
	// ExportJobLabels is the size (the labels of a fit) above which a
	// fit's report document and workbook are built by a background job
	// (default DefaultExportJobLabels; negative: never): their routes
	// answer 202 with its state and a Retry-After until it is built, then
	// the file. Smaller fits' are built within the request.
	ExportJobLabels int
	// AgreementJobs is the most agreement jobs (a plan, a part of the
	// bootstrap, a combine) this process runs at once (default 1: one
	// 4M-label analysis takes about 2.6 GB); others wait.
	AgreementJobs int
	// AgreementPartReplicates is the number of bootstrap replicates of
	// one part job of an agreement analysis run as jobs (default
	// DefaultAgreementPartReplicates; at most 16 parts).
	AgreementPartReplicates int
	// MaxFitWork bounds one fit's projected Gibbs work
	// (analysis.CheckWork): a fit projected to take longer on one core is
	// refused when it is submitted, naming the budget and the projection
	// (default analysis.DefaultMaxFitWork, one hour; negative: no limit).
	MaxFitWork time.Duration
	// ReportBootstrap is the number of bootstrap replicates of the
	// agreement coefficients in reports (default 1000, as concord report;
	// negative: analytic intervals only).
	ReportBootstrap int
	// KeyCacheTTL is how long this process trusts what it read about API
	// keys and done fits without asking the store again (default 2 s;
	// negative: always ask). Deletions through this process take effect
	// at once; deletions by other processes sharing the database within
	// the TTL.
	KeyCacheTTL time.Duration
	// WorkerName names this process in the jobs it works (default
	// hostname-pid); it must be unique among the processes sharing the
	// database.
	WorkerName string
	// Queues are the job queues this process works (default: all).
	Queues []string
	// Version is reported by /healthz.
	Version string
}

func (c Config) withDefaults() Config {
	c.Addr = cmp.Or(c.Addr, ":8080")
	c.Workers = cmp.Or(c.Workers, runtime.NumCPU())
	positive(&c.MaxJSONBytes, 8<<20)
	positive(&c.MaxUploadBytes, 64<<20)
	positive(&c.PollInterval, time.Second)
	positive(&c.ProgressInterval, 500*time.Millisecond)
	positive(&c.StaleAfter, 30*time.Second)
	positive(&c.ShutdownGrace, 10*time.Second)
	positive(&c.ReadHeaderTimeout, 10*time.Second)
	positive(&c.ReadTimeout, 5*time.Minute)
	positive(&c.WriteTimeout, 5*time.Minute)
	positive(&c.IdleTimeout, 2*time.Minute)
	c.MaxProjectFits = cmp.Or(c.MaxProjectFits, 8)
	positive(&c.MaxAttempts, 3)
	positive(&c.ReportCache, 32)
	c.MaxBootstrapWork = cmp.Or(c.MaxBootstrapWork, analysis.DefaultMaxBootstrapWork)
	c.MaxAgreementLabels = cmp.Or(c.MaxAgreementLabels, DefaultMaxAgreementLabels)
	c.AgreementJobLabels = cmp.Or(c.AgreementJobLabels, DefaultAgreementJobLabels)
	c.ExportJobLabels = cmp.Or(c.ExportJobLabels, DefaultExportJobLabels)
	positive(&c.AgreementJobs, 1)
	positive(&c.AgreementPartReplicates, DefaultAgreementPartReplicates)
	c.MaxFitWork = cmp.Or(c.MaxFitWork, analysis.DefaultMaxFitWork)
	if c.ReportBootstrap == 0 {
		c.ReportBootstrap = 1000
	} else if c.ReportBootstrap < 0 {
		c.ReportBootstrap = 0
	}
	c.KeyCacheTTL = cmp.Or(c.KeyCacheTTL, 2*time.Second)
	if c.WorkerName == "" {
		host, _ := os.Hostname()
		if host == "" {
			host = "concord"
		}
		c.WorkerName = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	c.Version = cmp.Or(c.Version, "dev")
	return c
}

// Server is concord's HTTP service: the REST API, the dashboard, health
// checks and metrics, and the pool of workers that run queued fits.
type Server struct {
	cfg       Config
	store     annotations.Store
	log       *slog.Logger
	engine    *gin.Engine
	adminHash []byte
	csrfKey   []byte
	metrics   *metrics
	keys      *keyCache
	logins    *loginCodes
	cache     *resultCache
	// agreements keeps agreement analyses by project, options and labels
	// version; agreementRuns lets one analysis per project run at a time
	// and agreementSlots Config.AgreementJobs background ones in all.
	agreements     *memo[*agreementResult]
	agreementRuns  *projectGate
	agreementSlots chan struct{}
	// stopJobs ends the background agreement analyses (shutdown).
	stopJobs context.CancelFunc
	pool     *pool
	dash     *dashboard

	mu       sync.Mutex
	listener net.Listener
	url      string
}

// New builds a server on store. The logger receives structured request and
// job logs; nil discards them.
func New(cfg Config, store annotations.Store, logger *slog.Logger) (*Server, error) {
	if store == nil {
		panic("server: New with a nil store")
	}
	if cfg.AdminToken == "" {
		return nil, annotations.Errorf(annotations.EINVALID, "server: no admin token configured")
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:       cfg,
		store:     store,
		log:       logger,
		adminHash: hashToken(cfg.AdminToken),
		logins:    &loginCodes{m: map[string]time.Time{}},
	}
	ck := sha256.Sum256([]byte("concord csrf\x00" + cfg.AdminToken))
	s.csrfKey = ck[:]
	s.keys = &keyCache{s: s, ttl: max(cfg.KeyCacheTTL, 0), m: map[string]keyEntry{}}
	s.cache = newResultCache(cfg.ReportCache)
	var jobs context.Context
	jobs, s.stopJobs = context.WithCancel(context.Background())
	s.agreements = newMemo[*agreementResult](jobs, agreementCacheSize)
	s.agreementRuns = newProjectGate()
	s.agreementSlots = make(chan struct{}, cfg.AgreementJobs)
	s.metrics = newMetrics(s)
	s.pool = newPool(s)
	dash, err := newDashboard(s)
	if err != nil {
		return nil, err
	}
	s.dash = dash
	if gin.Mode() == gin.DebugMode {
		// gin's debug mode prints every route on start-up.
		gin.SetMode(gin.ReleaseMode)
	}
	s.engine = s.routes()
	return s, nil
}

// Handler returns the HTTP handler of the API, dashboard, health checks and
// metrics (without the fit workers: Serve runs those).
func (s *Server) Handler() http.Handler { return s.engine }

// Listen binds the configured address; URL then returns the server's base
// URL. Serve calls it when it has not been called.
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener != nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return annotations.Errorf(annotations.EUNAVAILABLE, "cannot listen on %s: %v", s.cfg.Addr, err)
	}
	s.listener = ln
	s.url = baseURL(ln.Addr())
	return nil
}

// baseURL is the URL a local browser reaches a listener at.
func baseURL(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String()
	}
	host := ta.IP.String()
	if ta.IP == nil || ta.IP.IsUnspecified() {
		host = "localhost"
	} else if ta.IP.To4() == nil {
		host = "[" + host + "]"
	}
	return fmt.Sprintf("http://%s:%d", host, ta.Port)
}

// URL returns the base URL of the bound server ("" before Listen).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// LoginURL returns a dashboard URL with a single-use code that logs the
// browser in as admin, valid for 24 hours ("" before Listen).
func (s *Server) LoginURL() string {
	u := s.URL()
	if u == "" {
		return ""
	}
	return u + "/login?code=" + s.logins.issue(24*time.Hour)
}

// Run is Listen and Serve.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	return s.Serve(ctx)
}

// Serve serves HTTP on the bound listener and runs the fit workers until
// ctx is done, then shuts down gracefully: it stops accepting requests and
// claiming fits, lets in-flight requests finish, waits up to
// Config.ShutdownGrace for running fits to finish and puts the others back
// in the queue, so that no fit is left "running".
func (s *Server) Serve(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           s.engine,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	poolCtx, stopPool := context.WithCancel(ctx)
	defer stopPool()
	poolDone := make(chan struct{})
	var poolErr error
	go func() {
		defer close(poolDone)
		poolErr = s.pool.run(poolCtx)
	}()
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(s.listener) }()
	s.log.InfoContext(ctx, "concord serving", "url", s.URL(), "workers", max(s.cfg.Workers, 0), "worker_name", s.cfg.WorkerName)

	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
	case <-poolDone:
		// The workers could not start (or stopped): so does the server.
		s.log.Error("fit workers stopped", "err", poolErr)
	}
	s.log.Info("concord shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownGrace+5*time.Second)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	stopPool()
	<-poolDone
	if err == nil && poolErr != nil {
		err = poolErr
	}
	s.stopJobs()
	s.log.Info("concord stopped")
	return err
}

// routes builds the router.
func (s *Server) routes() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.ContextWithFallback = true
	// Behind no proxy by default: X-Forwarded-For is not trusted for the
	// client address in the logs.
	_ = r.SetTrustedProxies(nil)
	r.Use(s.requestContext, s.accessLog, gin.CustomRecoveryWithWriter(io.Discard, s.logPanic))
	r.NoRoute(s.noRoute)
	r.NoMethod(routeError(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed"))

	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	r.GET("/metrics", s.metrics.handler())

	v1 := r.Group("/api/v1")
	v1.GET("/openapi.json", s.openAPI)
	a := v1.Group("", s.authenticate)
	a.GET("/me", s.me)

	a.POST("/projects", s.createProject)
	a.GET("/projects", s.listProjects)
	a.GET("/projects/:id", s.getProject)
	a.DELETE("/projects/:id", s.deleteProject)

	a.GET("/projects/:id/items", s.listItems)
	a.POST("/projects/:id/items", s.upsertItems)
	a.GET("/projects/:id/raters", s.listRaters)
	a.GET("/projects/:id/labels", s.listLabels)
	a.POST("/projects/:id/labels", s.createLabels)
	a.DELETE("/projects/:id/labels", s.deleteLabels)
	a.POST("/projects/:id/imports", s.importFile)
	a.GET("/projects/:id/agreement", s.agreement)
	a.GET("/projects/:id/judge", s.judgeReport)
	a.DELETE("/projects/:id/agreement", s.cancelAgreement)
	a.GET("/projects/:id/agreement/:table", s.agreementTable)
	a.POST("/agreement", s.tableAgreement)

	a.GET("/projects/:id/keys", s.listKeys)
	a.POST("/projects/:id/keys", s.createKey)
	a.DELETE("/projects/:id/keys/:key", s.deleteKey)

	a.GET("/projects/:id/fits", s.listFits)
	a.POST("/projects/:id/fits", s.createFit)
	a.GET("/fits/:id", s.getFit)
	a.DELETE("/fits/:id", s.deleteFit)
	a.POST("/fits/:id/cancel", s.cancelFit)
	a.GET("/fits/:id/result", s.fitResult)
	reportJSON, reportXLSX := s.reportFile("json", "download"), s.reportFile("xlsx")
	a.GET("/fits/:id/report.json", reportJSON)
	a.POST("/fits/:id/report.json", reportJSON)
	a.GET("/fits/:id/report.xlsx", reportXLSX)
	a.POST("/fits/:id/report.xlsx", reportXLSX)
	a.DELETE("/fits/:id/exports", s.cancelExports)
	a.GET("/fits/:id/tables/:table", s.reportTable)
	a.GET("/fits/:id/plots/:plot", s.reportPlot)
	a.GET("/fits/:id/export/:format", s.exportFit)
	a.GET("/fits/:id/next", s.nextItems)
	a.GET("/fits/:id/judge", s.fitJudgeReport)
	a.POST("/fits/:id/predictions", s.predict)

	a.GET("/jobs", s.listJobs)

	s.dash.routes(r)
	return r
}

// noRoute answers unknown paths: JSON under /api, the dashboard's page
// otherwise.
func (s *Server) noRoute(c *gin.Context) {
	if strings.HasPrefix(c.Request.URL.Path, "/api/") || c.Request.URL.Path == "/api" {
		routeError(http.StatusNotFound, annotations.ENOTFOUND, "no such API route")(c)
		return
	}
	s.dash.notFound(c)
}

// ctx keys of per-request values.
const (
	ctxProject = "concord.project"
	ctxFit     = "concord.fit"
)

// positive sets *p to v unless it is positive (a setting whose zero or
// negative value means the default).
func positive[T ~int | ~int64 | ~float64](p *T, v T) {
	if *p <= 0 {
		*p = v
	}
}
