package raters

import (
	"encoding/json"
	"math"
)

// num is a float64 that encodes NaN and ±Inf as JSON null.
type num float64

func (f num) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

func (f *num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = num(math.NaN())
		return nil
	}
	return unmarshalVia(b, f, func(v float64) num { return num(v) })
}

type estimateJSON struct {
	Value    num    `json:"value"`
	CILow    num    `json:"ci_low"`
	CIHigh   num    `json:"ci_high"`
	SE       *num   `json:"se,omitempty"`
	CIMethod string `json:"ci_method,omitempty"`
	Pa       *num   `json:"pa,omitempty"`
	Pe       *num   `json:"pe,omitempty"`
	SENull   *num   `json:"se_null,omitempty"`
	Z        *num   `json:"z,omitempty"`
	P        *num   `json:"p_value,omitempty"`
	ZNull    *num   `json:"z_null,omitempty"`
	PNull    *num   `json:"p_value_null,omitempty"`
}

func optNum(v float64) *num {
	if math.IsNaN(v) {
		return nil
	}
	n := num(v)
	return &n
}

func fromOpt(p *num) float64 {
	if p == nil {
		return math.NaN()
	}
	return float64(*p)
}

// MarshalJSON writes {"value", "ci_low", "ci_high"} and, where they exist,
// "se", "ci_method", "pa", "pe", "se_null", the tests against 0 ("z",
// "p_value") and against Options.Null ("z_null", "p_value_null");
// undefined numbers are null.
func (e Estimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(estimateJSON{
		Value: num(e.Value), CILow: num(e.CILow), CIHigh: num(e.CIHigh),
		SE: optNum(e.SE), CIMethod: e.CIMethod, Pa: optNum(e.Pa), Pe: optNum(e.Pe),
		SENull: optNum(e.SENull), Z: optNum(e.Z), P: optNum(e.P), ZNull: optNum(e.ZNull), PNull: optNum(e.PNull),
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Estimate) UnmarshalJSON(b []byte) error { return unmarshalVia(b, e, estimateJSON.value) }

// value is the estimate j writes.
func (j estimateJSON) value() Estimate {
	return Estimate{Value: float64(j.Value), CILow: float64(j.CILow), CIHigh: float64(j.CIHigh),
		SE: fromOpt(j.SE), CIMethod: j.CIMethod, Pa: fromOpt(j.Pa), Pe: fromOpt(j.Pe),
		SENull: fromOpt(j.SENull), Z: fromOpt(j.Z), P: fromOpt(j.P), ZNull: fromOpt(j.ZNull), PNull: fromOpt(j.PNull)}
}

// unmarshalVia decodes b as J, the JSON form of a T that MarshalJSON
// writes, and stores its value in *dst.
func unmarshalVia[J, T any](b []byte, dst *T, value func(J) T) error {
	var j J
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*dst = value(j)
	return nil
}

type itemJSON struct {
	ID    string `json:"id,omitempty"`
	Class *int   `json:"class"`
	Label string `json:"label,omitempty"`
	Score num    `json:"score"`
	Probs []num  `json:"probs,omitempty"`
	Tie   bool   `json:"tie,omitempty"`
	Tied  []int  `json:"tied,omitempty"`
	N     int    `json:"n"`
	// Easiness is written when positive (GLAD).
	Easiness float64 `json:"easiness,omitempty"`
}

// nums is v as JSON numbers (undefined ones null), floats the reverse.
func nums(v []float64) []num { return convertFloats[num](v) }

func floats(v []num) []float64 { return convertFloats[float64](v) }

// convertFloats converts each element of v (nil stays nil).
func convertFloats[To, From ~float64](v []From) []To {
	if v == nil {
		return nil
	}
	out := make([]To, len(v))
	for i, x := range v {
		out[i] = To(x)
	}
	return out
}

// MarshalJSON writes the item's consensus; a missing class and undefined
// numbers are null.
func (it ItemConsensus) MarshalJSON() ([]byte, error) {
	j := itemJSON{ID: it.ID, Label: it.Label, Score: num(it.Score), Probs: nums(it.Probs), Tie: it.Tie, Tied: it.Tied, N: it.N}
	if it.Easiness > 0 && !math.IsInf(it.Easiness, 0) {
		j.Easiness = it.Easiness
	}
	if it.Class >= 0 {
		c := it.Class
		j.Class = &c
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (it *ItemConsensus) UnmarshalJSON(b []byte) error { return unmarshalVia(b, it, itemJSON.value) }

// value is the item's consensus j writes.
func (j itemJSON) value() ItemConsensus {
	it := ItemConsensus{ID: j.ID, Class: -1, Label: j.Label, Score: float64(j.Score), Probs: floats(j.Probs), Tie: j.Tie, Tied: j.Tied, N: j.N, Easiness: j.Easiness}
	if j.Class != nil {
		it.Class = *j.Class
	}
	return it
}

type raterJSON struct {
	ID        string  `json:"id,omitempty"`
	N         int     `json:"n"`
	Accuracy  num     `json:"accuracy"`
	MAE       num     `json:"mae"`
	Bias      num     `json:"bias"`
	Confusion [][]num `json:"confusion,omitempty"`
	Skill     *num    `json:"skill,omitempty"`
	SkillKind string  `json:"skill_kind,omitempty"`
}

// MarshalJSON writes the rater's quality; undefined numbers are null.
func (q RaterQuality) MarshalJSON() ([]byte, error) {
	j := raterJSON{ID: q.ID, N: q.N, Accuracy: num(q.Accuracy), MAE: num(q.MAE), Bias: num(q.Bias)}
	if q.SkillKind != "" {
		s := num(q.Skill)
		j.Skill, j.SkillKind = &s, q.SkillKind
	}
	for _, row := range q.Confusion {
		j.Confusion = append(j.Confusion, nums(row))
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (q *RaterQuality) UnmarshalJSON(b []byte) error { return unmarshalVia(b, q, raterJSON.value) }

// value is the rater's quality j writes.
func (j raterJSON) value() RaterQuality {
	q := RaterQuality{ID: j.ID, N: j.N, Accuracy: float64(j.Accuracy), MAE: float64(j.MAE), Bias: float64(j.Bias), SkillKind: j.SkillKind}
	if j.Skill != nil {
		q.Skill = float64(*j.Skill)
	}
	for _, row := range j.Confusion {
		q.Confusion = append(q.Confusion, floats(row))
	}
	return q
}

// marshalFlat writes an estimate's fields together with extra fields.
func marshalFlat(e Estimate, extra map[string]any) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range extra {
		m[k] = v
	}
	return json.Marshal(m)
}
