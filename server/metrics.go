package server

import (
	"context"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"concord/annotations"
)

// metrics are the server's Prometheus metrics, in a registry of its own (no
// global state):
//
//	concord_http_requests_total{method,route,status}
//	concord_http_request_duration_seconds{method,route,status}
//	concord_http_panics_total
//	concord_fits{state}                 fits in the database by state (all processes)
//	concord_fit_workers                 this process's worker slots
//	concord_fit_workers_busy            fits running in this process
//	concord_fits_finished_total{state}  fits this process finished, by final state
//	concord_fit_duration_seconds        wall time of this process's finished fits
//	concord_fit_sweeps_total            Gibbs sweeps of this process's fits (rate() is the throughput)
//	concord_fit_sweeps_per_second       sweeps per second per chain of the last finished Gibbs fit
//	concord_jobs{queue,state}           background jobs (River) in the database by queue and state (all processes):
//	                                    available+scheduled+retryable is the queue depth, discarded and cancelled the failures
//	concord_fit_queue_wait_seconds      from a fit's submission to the start of each attempt in this process (job latency)
//	concord_fit_attempts_failed_total{reason}  attempts of this process that ended for a reason outside the fit (killed, shutdown); retried
//	concord_agreement_running           agreement analyses computing in this process
//	concord_agreement_cancelled_total   agreement analyses stopped because every client waiting for them left
//	concord_exports_running             report files (exports) this process is building as jobs (queue export)
//	concord_report_agreements_total{source}  the agreement analyses of fit reports: stored (an agreement job's), cached, computed, fit
//
// plus the Go runtime and process collectors.
type metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	panics       prometheus.Counter
	workers      prometheus.Gauge
	busy         prometheus.Gauge
	finished     *prometheus.CounterVec
	fitSeconds   prometheus.Histogram
	sweeps       prometheus.Counter
	sweepRate    prometheus.Gauge
	fitsByStatus *fitStates
	jobs         *jobStates
	queueWait    prometheus.Histogram
	retried      *prometheus.CounterVec

	agreementRunning   prometheus.Gauge
	agreementCancelled prometheus.Counter
	exportsRunning     prometheus.Gauge
	reportAgreements   *prometheus.CounterVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "concord_http_requests_total", Help: "HTTP requests by method, route and status.",
	}, []string{"method", "route", "status"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "concord_http_request_duration_seconds",
		Help:    "HTTP request latency by method, route and status.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"method", "route", "status"})
	m.panics = prometheus.NewCounter(prometheus.CounterOpts{Name: "concord_http_panics_total", Help: "Panics recovered while serving requests."})
	m.workers = prometheus.NewGauge(prometheus.GaugeOpts{Name: "concord_fit_workers", Help: "Fit worker slots of this process."})
	m.busy = prometheus.NewGauge(prometheus.GaugeOpts{Name: "concord_fit_workers_busy", Help: "Fits running in this process."})
	m.finished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "concord_fits_finished_total", Help: "Fits this process finished, by final state (requeued: put back in the queue at shutdown).",
	}, []string{"state"})
	m.fitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "concord_fit_duration_seconds", Help: "Wall time of the fits this process finished.",
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 16),
	})
	m.sweeps = prometheus.NewCounter(prometheus.CounterOpts{Name: "concord_fit_sweeps_total", Help: "Gibbs sweeps (over all chains) run by this process; rate() is the sweep throughput."})
	m.sweepRate = prometheus.NewGauge(prometheus.GaugeOpts{Name: "concord_fit_sweeps_per_second", Help: "Sweeps per second per chain of the last Gibbs fit this process finished."})
	m.fitsByStatus = &fitStates{s: s, desc: prometheus.NewDesc("concord_fits", "Fits in the database by state (all processes).", []string{"state"}, nil)}
	m.jobs = &jobStates{s: s, desc: prometheus.NewDesc("concord_jobs", "Background jobs (River) in the database by queue and state (all processes).", []string{"queue", "state"}, nil)}
	m.queueWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "concord_fit_queue_wait_seconds", Help: "Time from a fit's submission to the start of each of its attempts in this process.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 18),
	})
	m.retried = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "concord_fit_attempts_failed_total", Help: "Fit attempts of this process that ended for a reason outside the fit (killed: its fit worker process died; shutdown), to be retried.",
	}, []string{"reason"})
	m.agreementRunning = prometheus.NewGauge(prometheus.GaugeOpts{Name: "concord_agreement_running", Help: "Agreement analyses computing in this process."})
	m.agreementCancelled = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "concord_agreement_cancelled_total", Help: "Agreement analyses stopped because every client waiting for them left.",
	})
	m.exportsRunning = prometheus.NewGauge(prometheus.GaugeOpts{Name: "concord_exports_running", Help: "Report files (exports of fits) this process is building as jobs."})
	m.reportAgreements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "concord_report_agreements_total", Help: "Agreement analyses of fit reports built by this process, by source: stored (the project's agreement job's result), cached, computed (the project's labels, then cached), fit (the fit's labels, no longer the project's).",
	}, []string{"source"})
	m.workers.Set(float64(max(s.cfg.Workers, 0)))
	m.reg.MustRegister(m.requests, m.latency, m.panics, m.workers, m.busy, m.finished, m.fitSeconds, m.sweeps, m.sweepRate, m.fitsByStatus,
		m.jobs, m.queueWait, m.retried, m.agreementRunning, m.agreementCancelled, m.exportsRunning, m.reportAgreements,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(method, route string, status int, d time.Duration) {
	st := statusLabel(status)
	m.requests.WithLabelValues(method, route, st).Inc()
	m.latency.WithLabelValues(method, route, st).Observe(d.Seconds())
}

func (m *metrics) handler() gin.HandlerFunc {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: nil, Registry: m.reg})
	return gin.WrapH(h)
}

// fitStates collects the number of fits by state from the database at
// scrape time (cached for a second).
type fitStates struct {
	s    *Server
	desc *prometheus.Desc
	mu   sync.Mutex
	at   time.Time
	last map[annotations.FitStatus]int
}

func (f *fitStates) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }

func (f *fitStates) Collect(ch chan<- prometheus.Metric) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last == nil || time.Since(f.at) > time.Second {
		counts, err := f.count()
		if err != nil {
			f.s.log.Warn("metrics: counting fits", "err", err)
			ch <- prometheus.NewInvalidMetric(f.desc, err)
			return
		}
		f.last, f.at = counts, time.Now()
	}
	for _, st := range []annotations.FitStatus{annotations.FitQueued, annotations.FitRunning, annotations.FitDone, annotations.FitFailed, annotations.FitCancelled} {
		ch <- prometheus.MustNewConstMetric(f.desc, prometheus.GaugeValue, float64(f.last[st]), string(st))
	}
}

func (f *fitStates) count() (map[annotations.FitStatus]int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ps, err := f.s.store.ListProjects(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[annotations.FitStatus]int{}
	for _, p := range ps {
		fits, err := f.s.store.ListFits(ctx, p.ID)
		if annotations.ErrorCode(err) == annotations.ENOTFOUND {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		for _, ft := range fits {
			counts[ft.Status]++
		}
	}
	return counts, nil
}

// jobStates collects the number of jobs by queue and state from the
// database at scrape time (cached for a second).
type jobStates struct {
	s    *Server
	desc *prometheus.Desc
	mu   sync.Mutex
	at   time.Time
	last []annotations.JobCount
}

func (j *jobStates) Describe(ch chan<- *prometheus.Desc) { ch <- j.desc }

func (j *jobStates) Collect(ch chan<- prometheus.Metric) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.last == nil || time.Since(j.at) > time.Second {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		counts, err := j.s.store.JobCounts(ctx)
		cancel()
		if err != nil {
			j.s.log.Warn("metrics: counting jobs", "err", err)
			ch <- prometheus.NewInvalidMetric(j.desc, err)
			return
		}
		if counts == nil {
			counts = []annotations.JobCount{}
		}
		j.last, j.at = counts, time.Now()
	}
	for _, c := range j.last {
		ch <- prometheus.MustNewConstMetric(j.desc, prometheus.GaugeValue, float64(c.Count), c.Queue, c.State)
	}
}
