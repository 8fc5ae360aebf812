package auc

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"concord/multirater"
)

// Settings are the auc family's whole input for its engines (ep, smc),
// declared once (see multirater.Fields). The zero value means the
// defaults.
type Settings struct {
	Scores string `json:"scores,omitempty" enum:"linear,gp" default:"linear" doc:"linear (default: s = <theta, x> on the covariates, theta ~ N(0, prior_scale I)) or gp (s ~ N(0, prior_scale K) with K the kernel, default rbf with its width chosen by the evidence)"`
	// Gamma is the pseudo-posterior's temperature (Ridgway et al.).
	Gamma Gamma `json:"gamma,omitempty" range:"[1e-3,1e4]" enum:"cv" zero:"cv" default:"cv" doc:"the pseudo-posterior's temperature: a positive number, or cv (default) for cross-validation of the held-out AUC (gamma_folds folds)"`
	// GammaFolds is the number of folds of gamma's cross-validation
	// (Options.Folds): each needs items of both classes, so a small data
	// set with a rare class takes fewer.
	GammaFolds int    `json:"gamma_folds,omitempty" range:"[2,20]" zero:"the default, 5" doc:"the folds (stratified by label) of gamma's cross-validation (gamma cv; a fixed gamma has none): fewer when a class has few items, more for a steadier choice (default 5)"`
	Prior      string `json:"prior,omitempty" enum:"gaussian,spike-slab" default:"gaussian" doc:"the linear scores' coefficient prior, gaussian (default) or spike-slab (feature inclusion)"`
	// MaxPairs is Options.Pairs.
	MaxPairs   int     `json:"max_pairs,omitempty" range:"[-1,100000000]" zero:"the default, max(65536, 40 N)" engines:"ep" doc:"EP's pair sites: every (positive, negative) pair up to this many, beyond it a seeded stratified sample of about this many (each item in about as many pairs as the others); default max(65536, 40 N) for N fitted items, -1 every pair"`
	PriorScale float64 `json:"prior_scale,omitempty" range:"[1e-4,1e4]" zero:"the default, 1" default:"1" doc:"the prior's scale V"`
}

// WithDefaults returns s with zero fields set to the family's defaults.
func (s Settings) WithDefaults() Settings { return multirater.WithDefaults(s) }

// Validate checks every setting against its declaration, then that the
// spike-and-slab prior comes with linear scores, and returns a
// *multirater.FieldError for the first that fails.
func (s Settings) Validate() error {
	p, _ := ParsePrior(strings.ToLower(s.Prior))
	return multirater.CheckSettings(s, multirater.Rule{Broken: p == SpikeSlab && strings.EqualFold(s.Scores, "gp"),
		FieldError: multirater.FieldError{Field: "prior", Value: `"spike-slab" with scores gp`, Want: "gaussian: spike-slab is a prior of linear scores' coefficients"}})
}

// GammaCV is Gamma's word for cross-validation.
const GammaCV = "cv"

// Gamma is Settings.Gamma: "" (the default, "cv"), "cv" or a positive
// number. In JSON it is a number or the string "cv".
type Gamma string

// MarshalJSON writes a number as a JSON number, "cv" as a string.
func (g Gamma) MarshalJSON() ([]byte, error) {
	if v, err := strconv.ParseFloat(string(g), 64); err == nil {
		return json.Marshal(v)
	}
	return json.Marshal(string(g))
}

// UnmarshalJSON reads a JSON number or string.
func (g *Gamma) UnmarshalJSON(b []byte) error {
	var v float64
	if err := json.Unmarshal(b, &v); err == nil {
		*g = Gamma(strconv.FormatFloat(v, 'g', -1, 64))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("gamma: expected a positive number or \"cv\", got %s", b)
	}
	*g = Gamma(s)
	return nil
}

// Value parses g: cv is true for cross-validation, else v is the fixed
// gamma.
func (g Gamma) Value() (v float64, cv bool, err error) {
	s := strings.ToLower(strings.TrimSpace(string(g)))
	if s == "" || s == GammaCV {
		return 0, true, nil
	}
	v, err = strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, false, fmt.Errorf("gamma %q: expected a positive number (the pseudo-posterior's temperature, e.g. 30) or cv (chosen by cross-validation)", string(g))
	}
	return v, false, nil
}
