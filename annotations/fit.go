package annotations

import (
	"encoding/json"
	"errors"
	"time"
)

// FitStatus is the state of a fit job.
type FitStatus string

// Fit states. A fit moves queued -> running -> done | failed | cancelled; a
// running fit whose worker died is re-queued or failed on start-up.
const (
	FitQueued    FitStatus = "queued"
	FitRunning   FitStatus = "running"
	FitDone      FitStatus = "done"
	FitFailed    FitStatus = "failed"
	FitCancelled FitStatus = "cancelled"
)

// Terminal reports whether the state is final.
func (s FitStatus) Terminal() bool {
	return s == FitDone || s == FitFailed || s == FitCancelled
}

// Fit is one model fit of a project: the settings it was asked for (Spec, as
// JSON, including the seed), its progress and, when done, its result (stored
// so that reports can be re-rendered without refitting).
type Fit struct {
	ID        int64           `json:"id"`
	ProjectID int64           `json:"project_id"`
	Model     string          `json:"model"`
	Spec      json.RawMessage `json:"spec"`
	Seed      uint64          `json:"seed"`
	Status    FitStatus       `json:"state"`
	// Progress is the fraction done, 0..1.
	Progress float64 `json:"progress"`
	// ETASeconds estimates the time left while running.
	ETASeconds float64 `json:"eta_seconds,omitempty"`
	// MaxRhat is the current maximum split R-hat, when known.
	MaxRhat float64 `json:"max_rhat,omitempty"`
	// Message says why a fit failed, or what it is doing.
	Message string `json:"message,omitempty"`
	// CancelRequested is set when a cancel was asked for a running fit.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	// Attempts counts how many times a worker claimed the fit.
	Attempts int `json:"attempts"`
	// Worker names the worker that holds a running fit.
	Worker      string     `json:"worker,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	HeartbeatAt *time.Time `json:"heartbeat_at,omitempty"`
	// Chains are the fit's chains when they run as jobs of their own (a
	// Gibbs fit fanned out over the workers): which worker ran which
	// chain, in how many attempts.
	Chains []FitChain `json:"chains,omitempty"`
	// Duplicate is set on the answer to a submission that found this fit
	// queued or running with the same model and spec on the same labels:
	// no second job was made.
	Duplicate bool `json:"duplicate,omitempty"`
}

// FitChain is one chain of a fit that runs as a job of its own.
type FitChain struct {
	Chain int `json:"chain"`
	// State is queued, running or done.
	State string `json:"state"`
	// Worker names the worker that runs or ran the chain (its last
	// attempt).
	Worker string `json:"worker,omitempty"`
	// Attempts counts the attempts at the chain (a chain whose worker
	// died is retried by another).
	Attempts   int        `json:"attempts"`
	JobID      int64      `json:"job_id"`
	Progress   float64    `json:"progress"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// FitProgress is a running fit's progress report.
type FitProgress struct {
	Progress   float64
	ETASeconds float64
	MaxRhat    float64
	Message    string
}

// ErrRetry marks the end of a fit attempt for a reason outside the fit
// (see FitRunner): the fit is retried.
var ErrRetry = errors.New("retry")
