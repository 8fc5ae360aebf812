package annotations

import (
	"context"
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

// FitStore keeps fit jobs and their results.
type FitStore interface {
	// CreateFit stores a new fit in state queued and sets its ID and
	// CreatedAt.
	CreateFit(ctx context.Context, f *Fit) error
	// CreateFitWithin is CreateFit with a quota: when maxActive > 0 and
	// the project already has maxActive fits queued or running, it stores
	// nothing and returns ETOOMANY naming the limit (atomically: concurrent
	// submissions never exceed it).
	CreateFitWithin(ctx context.Context, f *Fit, maxActive int) error
	FindFitByID(ctx context.Context, id int64) (*Fit, error)
	ListFits(ctx context.Context, projectID int64) ([]Fit, error)
	// ClaimFit atomically moves the next queued fit to running on behalf
	// of worker and returns it, or returns nil, nil when none is queued. The
	// next fit is chosen fairly across projects (a project's backlog never
	// starves another project's fits); within a project the oldest comes
	// first. Two workers never claim the same fit, even from different
	// processes sharing one database.
	ClaimFit(ctx context.Context, worker string) (*Fit, error)
	// UpdateFitProgress records progress and a heartbeat for a running fit
	// and reports whether a cancel was requested.
	UpdateFitProgress(ctx context.Context, id int64, p FitProgress) (cancel bool, err error)
	// FinishFit moves a fit to a terminal state, with the result document
	// (for done) or the reason (for failed and cancelled).
	FinishFit(ctx context.Context, id int64, status FitStatus, message string, result []byte) error
	// RequestCancel cancels a queued fit at once and asks a running one to
	// stop; it is a no-op on finished fits.
	RequestCancel(ctx context.Context, id int64) (*Fit, error)
	// Requeue puts a running fit back in the queue (graceful shutdown).
	Requeue(ctx context.Context, id int64, message string) error
	DeleteFit(ctx context.Context, id int64) error
	FitResult(ctx context.Context, id int64) ([]byte, error)
	// RecoverStale re-queues running fits whose heartbeat is older than
	// staleAfter (their worker died), or fails them with a reason once they
	// have been attempted maxAttempts times.
	RecoverStale(ctx context.Context, staleAfter time.Duration, maxAttempts int) (requeued, failed int, err error)
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
	APIKeyStore
	Close() error
}
