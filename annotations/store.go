package annotations

import (
	"context"
	"encoding/json"
	"time"
)

// ProjectStore keeps projects. Lookups of a missing project return an *Error
// with code ENOTFOUND; creating a project whose name is taken returns
// ECONFLICT.
type ProjectStore interface {
	CreateProject(ctx context.Context, p *Project) error
	FindProjectByID(ctx context.Context, id int64) (*Project, error)
	FindProjectByName(ctx context.Context, name string) (*Project, error)
	ListProjects(ctx context.Context) ([]ProjectSummary, error)
	// DeleteProject removes the project with its items, raters, labels,
	// fits and keys.
	DeleteProject(ctx context.Context, id int64) error
}

// ImportOptions control LabelStore.Import.
type ImportOptions struct {
	// Replace lets a label that differs from the stored label of the same
	// (item, rater) replace it; without it such a label is a conflict and
	// nothing is written.
	Replace bool
	// Duplicates says what to do with repeated labels of one rater for one
	// item in the dataset: refuse them ("" or DuplicatesError), import the
	// first (DuplicatesFirst) or store them all (DuplicatesKeep).
	Duplicates Duplicates
	// Progress, when set, is called with the number of labels written so far
	// and the total.
	Progress func(done, total int)
}

// ImportResult counts what an import changed.
type ImportResult struct {
	ItemsAdded      int `json:"items_added"`
	ItemsUpdated    int `json:"items_updated"`
	RatersAdded     int `json:"raters_added"`
	LabelsAdded     int `json:"labels_added"`
	LabelsReplaced  int `json:"labels_replaced"`
	LabelsUnchanged int `json:"labels_unchanged"`
	// DuplicatesDropped counts the repeated labels left out under
	// DuplicatesFirst: by the import, and by BuildDataset before it
	// (Dataset.Dropped).
	DuplicatesDropped int `json:"duplicates_dropped,omitempty"`
	// ModelsMarked counts the stored raters the import marked as models
	// (Dataset.ModelRaters; new raters come with their kind). A rater once
	// marked stays a model.
	ModelsMarked int `json:"models_marked,omitempty"`
}

// Page selects a window of a listing; Limit 0 means no limit.
type Page struct {
	Offset int
	Limit  int
}

// LabelFilter selects labels; empty fields match everything.
type LabelFilter struct {
	Item  string
	Rater string
	Value string
	Page
}

// ItemFilter selects items; empty fields match everything.
type ItemFilter struct {
	// Labelled selects items with (true) or without (false) labels when set.
	Labelled *bool
	// Query matches a substring of the id or text.
	Query string
	Page
}

// RaterSummary is a rater with their label count.
type RaterSummary struct {
	Rater
	Labels int `json:"labels"`
}

// ItemSummary is an item with its label count.
type ItemSummary struct {
	Item
	Labels int `json:"labels"`
}

// Stats summarises a project's labels.
type Stats struct {
	Items         int            `json:"items"`
	LabelledItems int            `json:"labelled_items"`
	Raters        int            `json:"raters"`
	Labels        int            `json:"labels"`
	LabelsPerItem float64        `json:"labels_per_item"`
	PerRater      map[string]int `json:"per_rater"`
	Distribution  map[string]int `json:"distribution"`
	// ItemsWithText and ItemsWithCovariates count the items that have a
	// text, and numeric covariates (what the text and covariate kernels
	// need).
	ItemsWithText       int `json:"items_with_text"`
	ItemsWithCovariates int `json:"items_with_covariates"`
}

// LabelStore keeps a project's items, raters and labels.
type LabelStore interface {
	// Import writes a validated dataset (labels in canonical form, items
	// upserted) into the project in one transaction: either everything is
	// written or nothing. Re-importing the same data changes nothing. A
	// label that differs from the stored one for the same (item, rater) is an
	// ECONFLICT error unless opts.Replace is set.
	Import(ctx context.Context, projectID int64, ds *Dataset, opts ImportOptions) (ImportResult, error)
	// ImportNew creates the project p (setting its ID and CreatedAt) and
	// imports ds into it in the same transaction: an import that fails or
	// is killed leaves no project behind. A taken name is ECONFLICT.
	ImportNew(ctx context.Context, p *Project, ds *Dataset, opts ImportOptions) (ImportResult, error)
	// Dataset returns all of a project's items and labels.
	Dataset(ctx context.Context, projectID int64) (*Dataset, error)
	ListLabels(ctx context.Context, projectID int64, f LabelFilter) ([]Label, int, error)
	ListItems(ctx context.Context, projectID int64, f ItemFilter) ([]ItemSummary, int, error)
	ListRaters(ctx context.Context, projectID int64, p Page) ([]RaterSummary, int, error)
	// DeleteLabels removes the selected labels (paging ignored) and returns
	// how many went.
	DeleteLabels(ctx context.Context, projectID int64, f LabelFilter) (int, error)
	Stats(ctx context.Context, projectID int64) (*Stats, error)
	// LabelsVersion returns a number that changes whenever the project's
	// items or labels change (every import that changes something, every
	// deletion of labels) and the number of its labels, read together,
	// without reading the labels: caches of analyses of a project's
	// labels key on it.
	LabelsVersion(ctx context.Context, projectID int64) (version int64, labels int, err error)
}

// FitStore keeps fit jobs and their results. A queued fit is also a job
// of the store's job engine (JobEngine), enqueued in the transaction that
// stores the fit.
type FitStore interface {
	// CreateFit stores a new fit in state queued, enqueues its job and sets
	// its ID and CreatedAt (as CreateFitWithin without a quota).
	CreateFit(ctx context.Context, f *Fit) error
	// CreateFitWithin stores a new fit in state queued and enqueues its job
	// in one transaction. When the project already has a queued or running
	// fit of the same model and spec on the same labels, it stores nothing,
	// sets *f to that fit and reports duplicate. Otherwise, when maxActive >
	// 0 and the project already has maxActive fits queued or running, it
	// stores nothing and returns ETOOMANY naming the limit (atomically:
	// concurrent submissions never exceed it).
	CreateFitWithin(ctx context.Context, f *Fit, maxActive int) (duplicate bool, err error)
	FindFitByID(ctx context.Context, id int64) (*Fit, error)
	ListFits(ctx context.Context, projectID int64) ([]Fit, error)
	// UpdateFitProgress records the progress of a running fit and reports
	// whether a cancel was requested.
	UpdateFitProgress(ctx context.Context, id int64, p FitProgress) (cancel bool, err error)
	// FinishFit moves a fit to a terminal state, with the result document
	// (for done) or the reason (for failed and cancelled).
	FinishFit(ctx context.Context, id int64, status FitStatus, message string, result []byte) error
	// RequestCancel cancels a queued fit (and its job) at once and asks a
	// running one to stop; it is a no-op on finished fits.
	RequestCancel(ctx context.Context, id int64) (*Fit, error)
	DeleteFit(ctx context.Context, id int64) error
	FitResult(ctx context.Context, id int64) ([]byte, error)
}

// JobEngine runs the store's background jobs (fits) in worker processes
// that share the database.
type JobEngine interface {
	// RunWorkers works queued fit jobs with run until ctx is done, then
	// stops gracefully (running fits get opts.ShutdownGrace to finish and
	// are then put back in the queue). Jobs of workers that died are
	// retried by the others.
	RunWorkers(ctx context.Context, opts WorkerOptions, run FitRunner) error
	// JobCounts counts the engine's jobs by queue and state (queued,
	// running, retrying, done, failed, cancelled).
	JobCounts(ctx context.Context) ([]JobCount, error)
	// ListJobs returns the most recent jobs (newest first, at most limit)
	// with the workers that attempted them, and the live workers.
	ListJobs(ctx context.Context, limit int) ([]JobInfo, []WorkerInfo, error)
}

// WorkerOptions configure JobEngine.RunWorkers. Zero values mean the
// documented defaults.
type WorkerOptions struct {
	// Name identifies this worker process in job records (default
	// hostname-pid). It must be unique among the processes sharing the
	// database.
	Name string
	// Queues are the queues worked (default: all, that is "fits").
	Queues []string
	// Concurrency is the most jobs run at once by this process (default
	// 1).
	Concurrency int
	// MaxAttempts is the retry budget of a fit whose attempt ended for a
	// reason outside the fit (default 3).
	MaxAttempts int
	// StaleAfter is how long a worker may go unseen before the jobs it
	// runs are retried by others (default 30 s). Every worker process
	// records that it is alive every StaleAfter/4.
	StaleAfter time.Duration
	// PollInterval is how often idle workers look for queued jobs
	// (default 1 s).
	PollInterval time.Duration
	// ShutdownGrace is how long running jobs may finish on shutdown
	// (default 10 s).
	ShutdownGrace time.Duration
}

// FitRunner runs one attempt of a fit job.
type FitRunner interface {
	// RunFit runs the fit f (the store moved it to running; f.Attempts is
	// this attempt's number) and records how it ended (FinishFit: done,
	// failed on its data, cancelled), then returns nil. An attempt that
	// ended for a reason outside the fit (its process was killed, the
	// worker shut down) records nothing and returns an error wrapping
	// ErrRetry: the job engine puts the fit back in the queue with the
	// error's message and retries it with backoff, or fails it once its
	// attempts are spent.
	RunFit(ctx context.Context, f *Fit) error
}

// ChainRunner is a FitRunner whose Gibbs fits may fan out: the job engine
// runs such a fit's chains as jobs of their own, which any worker may take
// (RunChains, one chain each), and the job of the chain that completes
// last enqueues the job that combines them (CombineChains). Each chain is
// seeded from the fit's seed as in one process, so the result does not
// depend on which worker ran what.
type ChainRunner interface {
	FitRunner
	// ChainJobs returns the number of chain jobs fit f fans out into; 0:
	// it runs as one job (RunFit).
	ChainJobs(f *Fit) int
	// RunChains runs chains [lo, hi) of the running fit f and returns
	// their outputs (encoded) and how long they sampled (wall and CPU). It calls report
	// with its progress (about every progress interval) and stops as soon
	// as report returns an error (the fit was cancelled, failed or
	// deleted), returning that error. An error wrapping ErrRetry: the
	// attempt ended for a reason outside the fit (retried); any other
	// error: the fit fails on it (its message is for users).
	RunChains(ctx context.Context, f *Fit, lo, hi int, report func(FitProgress) error) ([][]byte, SamplingTime, error)
	// CombineChains summarises the outputs of every chain of the running
	// fit f (outputs[c] of chain c; sampling: the longest time a chain
	// job sampled and the CPU time of all) and records the fit's end as
	// RunFit does.
	CombineChains(ctx context.Context, f *Fit, outputs [][]byte, sampling SamplingTime) error
}

// RestartRunner is a ChainRunner whose EP and Laplace fits may run the
// restarts of their evidence maximisation as jobs of their own, the
// chains' jobs (RunRestart in place of RunChains): the fit's job runs the
// fit up to its first evidence maximisation with several starts and start 1
// there (PlanFit), each later start is a job any worker may take, and the
// job of the start that completes last enqueues the combine
// (CombineChains, with the plan as outputs[0] and part i's output as
// outputs[i+1]), which re-runs the winning start to recover its state.
// Every start is drawn from the fit's seed, so the result does not depend
// on which worker ran what.
type RestartRunner interface {
	ChainRunner
	// RestartsApart reports whether fit f runs by PlanFit instead of
	// RunFit.
	RestartsApart(f *Fit) bool
	// PlanFit runs one attempt of fit f as RunFit does, except that a fit
	// that reaches an evidence maximisation with several starts stops
	// after start 1 and returns the plan (encoded) and the number of part
	// jobs (1 or more) that run the other starts; parts = 0: the fit ran
	// whole and its end is recorded, as by RunFit. Errors as RunFit's.
	PlanFit(ctx context.Context, f *Fit) (plan []byte, parts int, err error)
	// RunRestart runs part i of the restarts that plan planned for the
	// running fit f and returns its output (encoded). Progress and errors
	// as RunChains'.
	RunRestart(ctx context.Context, f *Fit, plan []byte, i int, report func(FitProgress) error) ([]byte, error)
}

// SamplingTime is how long chains sampled: Wall, the elapsed time (of
// chains run apart, the longest part's), and CPU, the CPU time they used
// (of chains run apart, the sum over the parts; 0: not known).
type SamplingTime struct {
	Wall time.Duration
	CPU  time.Duration
}

// JobCount is the number of jobs of a queue in a state.
type JobCount struct {
	Queue string `json:"queue"`
	State string `json:"state"`
	Count int64  `json:"count"`
}

// JobInfo is one job of the job engine, as the admin sees it.
type JobInfo struct {
	ID          int64    `json:"id"`
	Kind        string   `json:"kind"`
	Queue       string   `json:"queue"`
	State       string   `json:"state"`
	Priority    int      `json:"priority"`
	Attempt     int      `json:"attempt"`
	MaxAttempts int      `json:"max_attempts"`
	AttemptedBy []string `json:"attempted_by"`
	FitID       int64    `json:"fit_id,omitempty"`
	// Chain is the chain a fit's chain job runs.
	Chain *int `json:"chain,omitempty"`
	// AgreementID is the agreement analysis of an agreement job, and
	// Replicates the range of bootstrap replicates a part job runs
	// ("0..249").
	AgreementID int64      `json:"agreement_id,omitempty"`
	Replicates  string     `json:"replicates,omitempty"`
	ProjectID   int64      `json:"project_id,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	AttemptedAt *time.Time `json:"attempted_at,omitempty"`
	FinalizedAt *time.Time `json:"finalized_at,omitempty"`
	Errors      []string   `json:"errors,omitempty"`
}

// WorkerInfo is a worker process that recorded itself alive.
type WorkerInfo struct {
	Name        string    `json:"name"`
	Queues      string    `json:"queues"`
	Concurrency int       `json:"concurrency"`
	StartedAt   time.Time `json:"started_at"`
	SeenAt      time.Time `json:"seen_at"`
}

// APIKey is a project's access key. Only a hash of the secret is stored; the
// secret itself is shown once, when the key is made.
type APIKey struct {
	ID        int64     `json:"id"`
	ProjectID int64     `json:"project_id"`
	Name      string    `json:"name"`
	Prefix    string    `json:"prefix"`
	Hash      []byte    `json:"-"`
	ReadOnly  bool      `json:"read_only"`
	CreatedAt time.Time `json:"created_at"`
}

// APIKeyStore keeps project API keys.
type APIKeyStore interface {
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// FindAPIKeyByPrefix returns the keys whose public prefix matches, for a
	// constant-time comparison of the hash by the caller.
	FindAPIKeyByPrefix(ctx context.Context, prefix string) ([]APIKey, error)
	ListAPIKeys(ctx context.Context, projectID int64) ([]APIKey, error)
	DeleteAPIKey(ctx context.Context, projectID, id int64) error
}

// Store is everything concord keeps.
type Store interface {
	ProjectStore
	LabelStore
	FitStore
	JobEngine
	EvalStore
	AgreementStore
	ExportStore
	APIKeyStore
	Close() error
}

// Eval is an evaluation (cross-validation) of a project whose folds run as
// jobs of the store's job engine, one job per fold, which any worker may
// take; the fold that completes last enqueues the job that combines them.
type Eval struct {
	ID        int64           `json:"id"`
	ProjectID int64           `json:"project_id"`
	Spec      json.RawMessage `json:"spec"`
	Folds     int             `json:"folds"`
	// Status is running, done, failed or cancelled.
	Status   FitStatus `json:"state"`
	Progress float64   `json:"progress"`
	Message  string    `json:"message,omitempty"`
	// Result is the combined result (the runner's encoding) when done.
	Result     []byte     `json:"-"`
	FoldJobs   []EvalFold `json:"fold_jobs,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// EvalFold is one fold of an evaluation run as a job.
type EvalFold struct {
	Fold     int     `json:"fold"`
	State    string  `json:"state"` // queued, running, done
	Worker   string  `json:"worker,omitempty"`
	Attempts int     `json:"attempts"`
	JobID    int64   `json:"job_id"`
	Progress float64 `json:"progress"`
}

// EvalStore keeps evaluations whose folds are jobs.
type EvalStore interface {
	// CreateEval stores a running evaluation of e.ProjectID with e.Folds
	// folds and enqueues one job per fold, in one transaction; it sets
	// e.ID and e.CreatedAt.
	CreateEval(ctx context.Context, e *Eval) error
	// FindEval returns an evaluation with its folds (and its result when
	// done).
	FindEval(ctx context.Context, id int64) (*Eval, error)
	// CancelEval cancels a running evaluation and its jobs.
	CancelEval(ctx context.Context, id int64) error
}

// EvalRunner runs the jobs of evaluations: one fold, and the combine of
// every fold's output. Errors as ChainRunner.RunChains's.
type EvalRunner interface {
	RunEvalFold(ctx context.Context, e *Eval, fold int, report func(progress float64) error) ([]byte, error)
	CombineEval(ctx context.Context, e *Eval, outputs [][]byte) ([]byte, error)
}

// AgreementJob is the agreement analysis of a project run as jobs of the
// store's job engine (projects too large to analyse within a request): a
// plan job reads the labels and plans the bootstrap, the bootstrap's
// replicates run as part jobs of ranges of replicates that any worker may
// take, and the part that completes last enqueues the job that combines
// them into the document. One analysis per project and Key (the labels'
// version and the options): asking twice joins the first.
type AgreementJob struct {
	ID            int64 `json:"id"`
	ProjectID     int64 `json:"project_id"`
	LabelsVersion int64 `json:"labels_version"`
	// Key identifies the analysis among the project's (the runner's
	// encoding of the labels' version and the options).
	Key string `json:"-"`
	// Options are the analysis' options (the runner's encoding).
	Options json.RawMessage `json:"-"`
	// Labels is the number of the project's labels when it was asked for.
	Labels int `json:"labels"`
	// Status is running, done, failed or cancelled.
	Status FitStatus `json:"state"`
	// Progress is the fraction done; Message what it does now (its phase).
	Progress float64 `json:"progress"`
	Message  string  `json:"message,omitempty"`
	// ErrorCode is the code of a failure on the data (kept while the labels
	// do not change); "" for a failure that the next request retries.
	ErrorCode string `json:"error_code,omitempty"`
	// Replicates is the bootstrap's replicates once planned.
	Replicates int `json:"replicates"`
	// Parts are its part jobs (ranges of replicates) once planned.
	Parts []AgreementPart `json:"parts,omitempty"`
	// Result is the runner's encoding of the analysis when done.
	Result     []byte     `json:"-"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// AgreementPart is one part job of an agreement analysis: bootstrap
// replicates [Lo, Hi).
type AgreementPart struct {
	Part     int     `json:"part"`
	Lo       int     `json:"lo"`
	Hi       int     `json:"hi"`
	State    string  `json:"state"` // queued, running, done
	Worker   string  `json:"worker,omitempty"`
	Attempts int     `json:"attempts"`
	JobID    int64   `json:"job_id"`
	Progress float64 `json:"progress"`
}

// AgreementStore keeps agreement analyses run as jobs.
type AgreementStore interface {
	// StartAgreement finds the analysis of a.ProjectID and a.Key and sets
	// *a to it (joined), or stores a new running one and enqueues its plan
	// job in one transaction (created). An analysis that was cancelled or
	// failed without an error code is replaced by a new one. When limit >
	// 0 and the project already has limit analyses running, it stores
	// nothing and returns ETOOMANY. Older analyses of the project's
	// earlier labels that are not running are deleted.
	StartAgreement(ctx context.Context, a *AgreementJob, limit int) (created bool, err error)
	// FindAgreement returns an analysis with its parts and its result.
	FindAgreement(ctx context.Context, id int64) (*AgreementJob, error)
	// CancelAgreements cancels the project's running analyses and their
	// jobs, and returns how many there were.
	CancelAgreements(ctx context.Context, projectID int64) (int, error)
	// DoneAgreement returns the result of the project's analysis of Key
	// (as StartAgreement keys it) when it is done, else nil: it starts
	// nothing.
	DoneAgreement(ctx context.Context, projectID int64, key string) ([]byte, error)
}

// ExportJob is a file of a done fit (its report document, its workbook)
// built by a job of the store's job engine, keyed by the fit and Key (the
// format and the options), so that any process sharing the database serves
// it once it is built: asking twice joins the first.
type ExportJob struct {
	ID        int64 `json:"id"`
	FitID     int64 `json:"fit_id"`
	ProjectID int64 `json:"project_id"`
	// Key identifies the export among the fit's (the runner's encoding of
	// the format and options).
	Key string `json:"-"`
	// Options are the export's format and options (the runner's encoding).
	Options json.RawMessage `json:"-"`
	// Status is running, done, failed or cancelled.
	Status FitStatus `json:"state"`
	// Progress is the fraction done; Message what it does now (its phase).
	Progress float64 `json:"progress"`
	Message  string  `json:"message,omitempty"`
	// ErrorCode is the code of a failure on the data (kept); "" for a
	// failure that the next request retries.
	ErrorCode string `json:"error_code,omitempty"`
	// Result is the file when done.
	Result     []byte     `json:"-"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// ExportStore keeps the exports of fits built as jobs.
type ExportStore interface {
	// StartExport finds the export of e.FitID and e.Key and sets *e to it
	// (with its file when done), or stores a new running one and enqueues
	// its job in one transaction (created). An export that was cancelled
	// or failed without an error code is replaced by a new one.
	StartExport(ctx context.Context, e *ExportJob) (created bool, err error)
	// CancelExports cancels the fit's running exports and their jobs, and
	// returns how many there were.
	CancelExports(ctx context.Context, fitID int64) (int, error)
}

// ExportRunner builds the files of export jobs. Errors as
// ChainRunner.RunChains's.
type ExportRunner interface {
	// RunExport builds the file of e, calling report with its progress
	// and phase (stopping as soon as it returns an error).
	RunExport(ctx context.Context, e *ExportJob, report func(progress float64, phase string) error) ([]byte, error)
}

// AgreementRunner runs the jobs of agreement analyses. Errors as
// ChainRunner.RunChains's.
type AgreementRunner interface {
	// PlanAgreement reads the labels of a and plans the analysis: the
	// bootstrap's replicates and the number of part jobs they run in
	// (part i: replicates [i·replicates/parts, (i+1)·replicates/parts));
	// 0 parts: the combine runs the whole analysis.
	PlanAgreement(ctx context.Context, a *AgreementJob) (replicates, parts int, err error)
	// RunAgreementPart computes bootstrap replicates [lo, hi) of a,
	// calling report with its progress (stopping as soon as it returns an
	// error), and returns them encoded.
	RunAgreementPart(ctx context.Context, a *AgreementJob, lo, hi int, report func(progress float64) error) ([]byte, error)
	// CombineAgreement runs the analysis of a with the replicates of every
	// part (outputs, by part) and returns its result encoded; report tells
	// its phase.
	CombineAgreement(ctx context.Context, a *AgreementJob, outputs [][]byte, report func(phase string) error) ([]byte, error)
}
