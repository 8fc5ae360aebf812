package reports

import (
	"fmt"
	"strings"

	"concord/multirater"
)

// ChoiceFamily is the kind of model choice a fit made (ModelChoice.Family):
// who chose among which candidates, by which score.
type ChoiceFamily string

// Model-choice families (ModelChoice.Family).
const (
	// ChoiceRaterModel is the crowd consensus (--model confusion) choosing
	// its rater model (one-coin, confusion, communities, spammer) by the
	// penalised evidence lower bound among the candidates that predict
	// held-out labels no worse than a simpler one
	// (model.confusion.rater_model_candidates of the fit document).
	ChoiceRaterModel ChoiceFamily = "rater model"
	// ChoiceBounded is the bounded model choosing its likelihood,
	// dispersion sharing and kernel by the leave-one-out predictive
	// probability of the ratings (diagnostics.model_candidates).
	ChoiceBounded ChoiceFamily = "bounded model"
	// ChoiceNoise is a fit choosing its raters' noise model (each
	// rater's own, shared thresholds with each rater's sd, one for every
	// rater) and kernel by the log evidence less 1/2 ln(n) per learnt
	// parameter (diagnostics.model_candidates with scores: the ordinal
	// model by EP or Laplace).
	ChoiceNoise ChoiceFamily = "noise model"
)

// ModelChoice is how a fit chose its model among candidates by the
// evidence: every candidate's scores, the chosen one and why, in one shape
// for every model family that chooses (the crowd consensus's rater models,
// the bounded model's likelihoods, dispersions and kernels). What the
// columns hold differs by family; ScoreIs, HeldOutIs and EvidenceIs say it
// in words, and every column is "higher is better".
type ModelChoice struct {
	// Family is ChoiceRaterModel, ChoiceBounded or ChoiceNoise.
	Family ChoiceFamily `json:"family"`
	// Chosen names the chosen candidate ("" when none is marked chosen).
	Chosen string `json:"chosen"`
	// Why is the fit's own account of the choice.
	Why string `json:"why"`
	// ScoreIs, HeldOutIs and EvidenceIs say what the candidates' Score,
	// HeldOut and Evidence are for this family.
	ScoreIs    string `json:"score_is"`
	HeldOutIs  string `json:"held_out_is"`
	EvidenceIs string `json:"evidence_is"`
	// Candidates are in the fit's order.
	Candidates []ChoiceCandidate `json:"candidates"`
}

// ChoiceCandidate is one candidate of a ModelChoice. A candidate whose fit
// failed has Failed and no scores (null).
type ChoiceCandidate struct {
	Name string `json:"name"`
	// Score is the number the choice ranks by (see ModelChoice.ScoreIs).
	Score Number `json:"score"`
	// HeldOut is the candidate's held-out predictive score
	// (ModelChoice.HeldOutIs); Evidence its evidence or evidence lower
	// bound (ModelChoice.EvidenceIs).
	HeldOut  Number `json:"held_out"`
	Evidence Number `json:"evidence"`
	// Iterations is the number of iterations of the candidate's fit, when
	// the family records it.
	Iterations int    `json:"iterations,omitempty"`
	Seconds    Number `json:"seconds"`
	Chosen     bool   `json:"chosen"`
	// Failed says why the candidate's fit failed numerically (it dropped
	// out of the choice).
	Failed string `json:"failed,omitempty"`
	// Note says why a candidate that did not fail could not be chosen,
	// and anything else about it (its number of communities, that its fit
	// did not converge).
	Note string `json:"note,omitempty"`
}

// ChoiceOf is Report.ModelChoice of a fit with these settings and
// diagnostics (the fit document's model and diagnostics), made from the
// fit's record of its choice: the confusion model's rater-model
// candidates or the bounded model's candidates; nil when the fit made no
// choice (a forced model, or a family that does not choose). The report
// builder sets it; the server's fit page shows the report's.
func ChoiceOf(m *multirater.ModelSettings, d *multirater.Diagnostics) *ModelChoice {
	if cp := m.Confusion; cp != nil && len(cp.RaterModelCandidates) > 0 {
		return raterModelChoice(cp)
	}
	if len(d.ModelCandidates) > 0 {
		for _, c := range d.ModelCandidates {
			if c.Score != nil {
				return noiseChoice(d)
			}
		}
		return boundedChoice(d)
	}
	return nil
}

// choiceColumns says, for each family that chooses, what its candidates'
// columns hold (ModelChoice.ScoreIs, HeldOutIs and EvidenceIs).
var choiceColumns = map[ChoiceFamily][3]string{
	ChoiceNoise: {
		"log evidence less 1/2 ln(n) per learnt parameter, n the ratings that inform it (nats); the largest wins",
		"not computed for this choice",
		"log evidence at the learnt rater parameters (nats)"},
	ChoiceRaterModel: {
		"evidence lower bound less 1/2 ln(raters) per learnt prior parameter (nats); the largest wins among the candidates not excluded",
		"leave-one-label-out log predictive probability of the labels, summed (nats); a candidate that predicts worse than a simpler one is excluded",
		"evidence lower bound of the variational fit (nats)"},
	ChoiceBounded: {
		"mean over the ratings of the leave-one-out log predictive probability of a new rater's rating (the consensus's predictive); the largest wins",
		"the same under each rating's own rater's likelihood, for comparison (not used by the choice)",
		"log evidence (plus the rater parameters' log prior); comparable only among candidates of one likelihood"},
}

// newChoice is the ModelChoice of family with the fit's account why, its
// columns said in words (choiceColumns) and no candidates yet.
func newChoice(family ChoiceFamily, why string) *ModelChoice {
	cols := choiceColumns[family]
	return &ModelChoice{Family: family, Why: why, ScoreIs: cols[0], HeldOutIs: cols[1], EvidenceIs: cols[2]}
}

func noiseChoice(d *multirater.Diagnostics) *ModelChoice {
	return withCandidates(newChoice(ChoiceNoise, d.Choice), d.ModelCandidates, func(c multirater.ModelCandidate) ChoiceCandidate {
		cc := ChoiceCandidate{Name: c.Name, Score: numOr(c.Score), HeldOut: nan, Evidence: numOr(c.LogEvidence),
			Seconds: Number(c.Seconds), Chosen: c.Chosen, Failed: c.Error}
		if c.Error == "" {
			cc.Note = fmt.Sprintf("%d learnt parameters, penalty %.1f", c.Parameters, c.Penalty)
		}
		return cc
	})
}

func raterModelChoice(cp *multirater.ConfusionPrior) *ModelChoice {
	mc := withCandidates(newChoice(ChoiceRaterModel, cp.RaterModelChoice), cp.RaterModelCandidates, func(c multirater.RaterModelCandidate) ChoiceCandidate {
		cc := ChoiceCandidate{Name: c.Model, Score: Number(c.Score), HeldOut: Number(c.HeldOut), Evidence: Number(c.ELBO),
			Iterations: c.Iterations, Seconds: Number(c.Seconds), Chosen: c.Chosen, Failed: c.Failed}
		var notes []string
		if c.Failed != "" {
			cc.Score, cc.HeldOut, cc.Evidence = nan, nan, nan
		} else {
			if c.Excluded != "" {
				notes = append(notes, "not chosen: "+c.Excluded)
			}
			switch {
			case c.Hyperparameters == 1:
				notes = append(notes, fmt.Sprintf("1 learnt prior parameter, penalty %.1f", c.Penalty))
			case c.Hyperparameters > 1:
				notes = append(notes, fmt.Sprintf("%d learnt prior parameters, penalty %.1f", c.Hyperparameters, c.Penalty))
			}
			if !c.Converged {
				notes = append(notes, fmt.Sprintf("not converged in %d iterations", c.Iterations))
			}
		}
		if c.Communities > 1 {
			notes = append(notes, fmt.Sprintf("%d communities", c.Communities))
		}
		cc.Note = strings.Join(notes, "; ")
		return cc
	})
	if mc.Chosen == "" {
		mc.Chosen = cp.RaterModel
	}
	return mc
}

func boundedChoice(d *multirater.Diagnostics) *ModelChoice {
	return withCandidates(newChoice(ChoiceBounded, d.Choice), d.ModelCandidates, func(c multirater.ModelCandidate) ChoiceCandidate {
		return ChoiceCandidate{Name: c.Name, Score: numOr(c.LOO), HeldOut: numOr(c.LOOOwn), Evidence: numOr(c.LogEvidence),
			Seconds: Number(c.Seconds), Chosen: c.Chosen, Failed: c.Error}
	})
}

// withCandidates sets mc's candidates, in the fit's order, to the rows
// that row makes of the fit's cands, and mc.Chosen to the chosen one's
// name.
func withCandidates[C any](mc *ModelChoice, cands []C, row func(C) ChoiceCandidate) *ModelChoice {
	mc.Candidates = make([]ChoiceCandidate, len(cands))
	for i, c := range cands {
		cc := row(c)
		if cc.Chosen {
			mc.Chosen = cc.Name
		}
		mc.Candidates[i] = cc
	}
	return mc
}

// numOr is *p, or NaN (JSON null) when p is nil.
func numOr(p *float64) Number {
	if p == nil {
		return nan
	}
	return Number(*p)
}
