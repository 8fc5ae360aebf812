package multirater

import (
	"encoding/json"
	"fmt"
)

// ClassDraw is one joint posterior draw of every item's class latent
// values (Draws.MClass): item n's value of class k is V[n*K+k]. It is held
// flat, one slice per draw, because a row slice per item costs more than
// its values (24 bytes of slice header for two float64s: 128 MB for the 50
// draws of a labels-only fit of 64,000 items, 51 MB flat). In the document
// it is the array of the items' rows, [[m_n1, ..., m_nK], ...], exactly as
// json.Marshal writes the [][]float64 it stands for; the zero ClassDraw is
// null.
type ClassDraw struct {
	K int
	V []float64
}

// NewClassDraw returns the draw of n items and k classes, all values 0.
func NewClassDraw(n, k int) ClassDraw {
	if n < 0 || k < 1 {
		panic(fmt.Sprintf("multirater: NewClassDraw of %d items and %d classes", n, k))
	}
	return ClassDraw{K: k, V: make([]float64, n*k)}
}

// Items returns the number of items of the draw.
func (d ClassDraw) Items() int {
	if d.K == 0 {
		return 0
	}
	return len(d.V) / d.K
}

// Row returns item n's K values; they alias the draw's.
func (d ClassDraw) Row(n int) []float64 {
	return d.V[n*d.K : (n+1)*d.K : (n+1)*d.K]
}

// MarshalJSON writes the draw as encoding/json writes its rows (views of
// V, no copy), null for the zero draw; NaN or an infinity is json.Marshal's
// error.
func (d ClassDraw) MarshalJSON() ([]byte, error) {
	if d.V == nil {
		return []byte("null"), nil
	}
	if len(d.V) > 0 && (d.K < 1 || len(d.V)%d.K != 0) {
		panic(fmt.Sprintf("multirater: ClassDraw of %d values in rows of %d", len(d.V), d.K))
	}
	rows := make([][]float64, d.Items())
	for n := range rows {
		rows[n] = d.Row(n)
	}
	return json.Marshal(rows)
}

// UnmarshalJSON reads the array of rows MarshalJSON writes; every row must
// have the same, positive number of values.
func (d *ClassDraw) UnmarshalJSON(b []byte) error {
	var rows [][]float64
	if err := json.Unmarshal(b, &rows); err != nil {
		return err
	}
	if rows == nil {
		*d = ClassDraw{}
		return nil
	}
	k := 0
	if len(rows) > 0 {
		k = len(rows[0])
	}
	out := ClassDraw{K: k, V: make([]float64, 0, len(rows)*k)}
	for n, row := range rows {
		if len(row) == 0 || len(row) != k {
			return fmt.Errorf("class draw: item %d has %d values, item 0 has %d (want the same, at least 1)", n, len(row), k)
		}
		out.V = append(out.V, row...)
	}
	*d = out
	return nil
}
