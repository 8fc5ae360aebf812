package multirater

// The shared blocks of the families' settings (see Fields): embedded in
// each family's Settings, with an engines tag on the embedding when the
// block is read by some of the family's engines only.

// GibbsSettings are the choices of the multi-rater Gibbs samplers of Rogers
// et al. (the ordinal and classification families): identifiability and
// the sampler.
type GibbsSettings struct {
	Identifiability string `json:"identifiability,omitempty" enum:"weak,strong,both" default:"weak" doc:"weak (priors), strong (fix a reference rater's precision and first threshold) or both"`
	RefRater        string `json:"ref_rater,omitempty" doc:"reference rater for strong/both (default: the rater with the most labels)"`
	Sampler         string `json:"sampler,omitempty" enum:"default,paper" default:"default" doc:"default (faster mixing) or paper (plain Gibbs of the paper)"`
}

// MCMCSettings are the work and convergence settings of a Gibbs engine.
// Burnin negative means no burn-in (0: the default).
type MCMCSettings struct {
	Chains  int `json:"chains,omitempty" range:"[1,64]" zero:"the default" default:"4" doc:"number of chains (run in parallel)"`
	Samples int `json:"samples,omitempty" range:"[1,1000000]" zero:"the default" default:"2000" doc:"draws kept per chain"`
	Burnin  int `json:"burnin,omitempty" range:"[0,1000000]" negative:"none" zero:"the default" default:"1000" doc:"burn-in sweeps per chain (0: none)"`
	Thin    int `json:"thin,omitempty" range:"[1,10000]" zero:"the default" default:"1" doc:"keep every THIN-th sweep"`
	// MaxRhat and MinESS define convergence.
	MaxRhat float64 `json:"max_rhat,omitempty" range:"[1.0000001,100]" zero:"the default" default:"1.01" doc:"convergence: max split R-hat"`
	MinESS  float64 `json:"min_ess,omitempty" range:"[1,1e9]" zero:"the default" default:"400" doc:"convergence: min bulk effective sample size"`
}

// PrecisionPrior is the Gamma(v, lambda) prior (shape, rate) of the rater
// precisions (Rogers et al. eq. 3): wide enough for vague priors (v =
// lambda = 0.001), narrow enough that the precisions stay in floating
// point.
type PrecisionPrior struct {
	V      float64 `json:"v,omitempty" range:"[1e-6,1e6]" zero:"the default" default:"1" doc:"shape of the Gamma prior on rater precisions"`
	Lambda float64 `json:"lambda,omitempty" range:"[1e-6,1e6]" zero:"the default" default:"1" doc:"rate of the Gamma prior on rater precisions (default 1; 0.1 with identifiability strong)"`
}

// OutputSettings say what a fit reports beyond the consensus: the flagged
// labels and the posterior draws kept.
type OutputSettings struct {
	FlagThreshold float64 `json:"flag_threshold,omitempty" range:"[1e-12,1)" zero:"the default" default:"0.05" alias:"flag" doc:"flag labels whose posterior predictive probability is below this"`
	KeepDraws     int     `json:"keep_draws,omitempty" range:"[1,10000]" zero:"the default" default:"500" doc:"posterior draws kept in the result for plots and prediction"`
}

// EvidenceSettings are those of the evidence maximisation of the
// deterministic engines (ep, laplace).
type EvidenceSettings struct {
	Restarts int `json:"restarts,omitempty" range:"[1,100]" zero:"the default" doc:"starting points of the evidence maximisation (default 3 with one rater, 1 with several)"`
}

// FinalSettings are those of the final run after the evidence
// maximisation of the deterministic engines (infer.FinalRun; the ordinal
// and bounded families' Data.Final).
type FinalSettings struct {
	// FinalRank is the rank of the prior of the final run (the
	// application's rule when 0).
	FinalRank int `json:"final_rank,omitempty" range:"[-1,8192]" zero:"the default" doc:"text and fixed covariate kernels held in low-rank form: after the rater parameters are learnt by maximising the evidence, one more EP run or Newton's method with them held fixed on a prior of this rank gives the consensus, the posterior and the evidence (0, the default: only with the default rank, when the rule kept its base rank and that prior leaves out more than 12% of the kernel's trace: the smallest rank leaving out at most 5%, within 10 ms per item and 40 CPU s for the run; -1: the exact dense N x N matrix; a positive number: that rank)"`
}
