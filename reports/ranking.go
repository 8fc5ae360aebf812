package reports

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"concord/multirater"
)

// KindRanking is the report kind of a ranking fit (multirater.OutputRanking,
// the AUC scoring model): a score per item with its sd, higher meaning more
// likely positive, the ROC curve, and the coefficients of linear scores.
const KindRanking = "ranking"

// PlotCoefficients is the forest plot of the coefficients of linear AUC
// scores.
const PlotCoefficients = "coefficients"

// Ranking is the AUC scoring model's part of a report (Report.Ranking).
type Ranking struct {
	// AUCScores are the positive class, the scores and their prior, and
	// the pseudo-posterior's temperature used.
	multirater.AUCScores
	// CV holds each gamma candidate's cross-validated AUC.
	CV []multirater.CVGamma `json:"cv,omitempty"`
	// KernelEvidence is each candidate kernel's log evidence (gp scores).
	KernelEvidence []multirater.KernelEvidence `json:"kernel_evidence,omitempty"`
	// TrainAUC is the AUC of the posterior mean scores on the fitted items
	// (the fit's ROC curve, ROCCurve); Fitted counts those items, Pairs
	// their (positive, negative) pairs.
	TrainAUC Number                `json:"train_auc"`
	Fitted   int                   `json:"fitted"`
	Pairs    int                   `json:"pairs"`
	ROCCurve []multirater.ROCPoint `json:"roc_curve"`
	// LogEvidence is log Z_gamma, with its Monte Carlo standard error
	// (engine smc).
	LogEvidence   Number  `json:"log_evidence"`
	LogEvidenceSE *Number `json:"log_evidence_se,omitempty"`
	// Coefficients are those of linear scores.
	Coefficients []multirater.Coefficient `json:"coefficients,omitempty"`
}

// ranking fills the report's ranking section from the fit.
func (b *builder) ranking() {
	f := b.fit
	a := f.AUC
	if a == nil {
		return
	}
	r := &Ranking{
		AUCScores: a.AUCScores, CV: a.CV, KernelEvidence: a.KernelEvidence,
		TrainAUC: nan, Fitted: a.Fitted, Pairs: a.Pairs, ROCCurve: f.ROC, LogEvidence: nan,
		Coefficients: f.Coefficients,
	}
	if r.ROCCurve == nil {
		r.ROCCurve = []multirater.ROCPoint{}
	}
	if f.TrainAUC != nil {
		r.TrainAUC = Number(*f.TrainAUC)
	}
	if le := f.Diagnostics.LogEvidence; le != nil {
		r.LogEvidence = Number(*le)
	}
	if se := f.Diagnostics.LogEvidenceSE; se != nil {
		v := Number(*se)
		r.LogEvidenceSE = &v
	}
	b.rep.Ranking = r
	how := fmt.Sprintf("gamma %g fixed", a.Gamma)
	if a.GammaByCV {
		how = fmt.Sprintf("gamma %g chosen by cross-validation", a.Gamma)
	}
	b.rep.Notes = append(b.rep.Notes, fmt.Sprintf("AUC scoring (%s scores, %s): items are ranked by their score, higher meaning more likely %q; an item's label is the majority of its labels; there are no rater parameters, thresholds or flags", a.Scores, how, a.Positive))
}

// coefficientPlot is the forest plot of the coefficients of linear AUC
// scores: posterior mean with mean +- 1.96 sd, and each covariate's
// inclusion probability in its label when it is below 1 (spike-and-slab).
func coefficientPlot(rep *Report) (*figure, error) {
	cs := rep.Ranking.Coefficients
	p := newPlot("Coefficients of the linear scores (mean, 95% interval)", "coefficient", "")
	var pts xErr
	names := make([]string, len(cs))
	lo, hi := 0.0, 0.0
	for y, c := range cs {
		names[y] = c.Name
		if c.Inclusion < 1 {
			names[y] = fmt.Sprintf("%s (incl. %.2f)", c.Name, c.Inclusion)
		}
		if !finite(c.Mean) || !finite(c.SD) {
			continue
		}
		h := 1.959963984540054 * c.SD
		pts.XYs = append(pts.XYs, plotter.XY{X: c.Mean, Y: float64(y)})
		pts.XErrors = append(pts.XErrors, struct{ Low, High float64 }{h, h})
		lo, hi = math.Min(lo, c.Mean-h), math.Max(hi, c.Mean+h)
	}
	if err := addIntervalDots(p, pts); err != nil {
		return nil, err
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.7}, {X: 0, Y: float64(len(cs)) - 0.3}})
	if err != nil {
		return nil, err
	}
	zero.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(zero, plotter.NewGrid())
	p.NominalY(names...)
	p.X.Min, p.X.Max = padRange(lo, hi)
	p.Y.Min, p.Y.Max = -0.7, float64(len(cs))-0.3
	h := vg.Length(len(cs))*vg.Points(15) + 3.2*vg.Centimeter
	return single(p, 17*vg.Centimeter, max(h, 7*vg.Centimeter)), nil
}

// Sheets of a ranking report (the AUC scoring model).
const (
	SheetRanking      = "Ranking"
	SheetCoefficients = "Coefficients"
)

// rankingSheet writes the items by score: rank, id, score mean and sd,
// the 95% interval, the label (the majority of the item's labels, "" for
// items scored by prediction) and whether it is the positive class; then
// gamma's cross-validation and the ROC curve's points.
func (x *xlsxWriter) rankingSheet() error {
	rep := x.rep
	r := rep.Ranking
	items := rep.Items
	main := &block{
		cols: []col{x.integer("Rank"), x.text("Item"), x.num("Score mean"), x.num("Score SD"), x.num("2.5%"), x.num("97.5%"),
			x.text("Label (majority)"), x.text("Positive")},
		n: len(items), filter: true, freeze: true, freezeCols: 2,
		row: func(i int, dst []any) []any {
			it := &items[i]
			var m, sd, lo, hi any
			if s := it.Score; s != nil {
				m, sd, lo, hi = float64(s.Mean), float64(s.SD), float64(s.Q025), float64(s.Q975)
			}
			pos := any(nil)
			if it.Majority != "" && !it.MajorityTie && r != nil {
				pos = "no"
				if it.Majority == r.Positive {
					pos = "yes"
				}
			}
			return append(dst, it.Position, it.ID, m, sd, lo, hi, it.Majority, pos)
		}}
	blocks := []*block{main}
	if r == nil {
		return x.writeBlocks(SheetRanking, blocks)
	}
	head := []string{
		fmt.Sprintf("Scores: %s, prior %s with scale %g; gamma %g (%s); training AUC %.4f over %d fitted items (%d pairs); log evidence %.4f.",
			r.Scores, r.Prior, r.PriorScale, r.Gamma, map[bool]string{true: "chosen by cross-validation", false: "fixed"}[r.GammaByCV],
			float64(r.TrainAUC), r.Fitted, r.Pairs, float64(r.LogEvidence)),
	}
	blocks = append(blocks, noteBlock(head...))
	if len(r.CV) > 0 {
		cv := r.CV
		blocks = append(blocks, &block{title: "Cross-validation of gamma (mean held-out AUC over the folds)",
			cols: []col{x.num("Gamma"), x.c("CV AUC", x.st.num4, 4), x.c("SE", x.st.num4, 4), x.text("Chosen")}, n: len(cv),
			row: func(i int, dst []any) []any {
				return append(dst, cv[i].Gamma, cv[i].AUC, cv[i].SE, yes(cv[i].Gamma == r.Gamma))
			}})
	}
	if len(r.KernelEvidence) > 0 {
		ke := r.KernelEvidence
		blocks = append(blocks, &block{title: "Candidate kernels (log evidence at gamma)",
			cols: []col{x.text("Kernel"), x.num("Log evidence"), x.text("Used")}, n: len(ke),
			row: func(i int, dst []any) []any { return append(dst, ke[i].Kernel, ke[i].LogEvidence, yes(ke[i].Chosen)) }})
	}
	if len(r.ROCCurve) > 0 {
		pts := r.ROCCurve
		blocks = append(blocks, &block{title: "ROC curve of the posterior mean scores on the fitted items",
			cols: []col{x.num("Threshold"), x.num("False positive rate"), x.num("True positive rate")}, n: len(pts),
			row: func(i int, dst []any) []any { return append(dst, pts[i].Threshold, pts[i].FPR, pts[i].TPR) }})
	}
	return x.writeBlocks(SheetRanking, blocks)
}

// coefficientsSheet writes the coefficients of linear scores.
func (x *xlsxWriter) coefficientsSheet() error {
	cs := x.rep.Ranking.Coefficients
	b := &block{
		cols: []col{x.text("Covariate"), x.c("Mean", x.st.num4, 4), x.c("SD", x.st.num4, 4), x.c("2.5%", x.st.num4, 4), x.c("97.5%", x.st.num4, 4),
			x.num("Inclusion probability"), x.c("Mean MC SE", x.st.num4, 4), x.c("SD MC SE", x.st.num4, 4)},
		n: len(cs), filter: true, freeze: true, freezeCols: 1,
		row: func(i int, dst []any) []any {
			c := cs[i]
			const z = 1.959963984540054
			var mse, sse any
			if c.MeanSE > 0 || c.SDSE > 0 {
				mse, sse = c.MeanSE, c.SDSE
			}
			return append(dst, c.Name, c.Mean, c.SD, c.Mean-z*c.SD, c.Mean+z*c.SD, c.Inclusion, mse, sse)
		}}
	return x.writeBlocks(SheetCoefficients, []*block{b, noteBlock("Linear scores s = <theta, x> on the covariates (z-scored when the fit standardised them); the interval is mean ± 1.96 sd of the pseudo-posterior.")})
}
