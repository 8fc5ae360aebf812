package multirater

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
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

// MarshalJSON writes the draw as the array of its rows, or null for the
// zero draw; NaN or an infinity is an error, as json.Marshal's.
func (d ClassDraw) MarshalJSON() ([]byte, error) {
	if d.V == nil {
		return []byte("null"), nil
	}
	if len(d.V) > 0 && (d.K < 1 || len(d.V)%d.K != 0) {
		panic(fmt.Sprintf("multirater: ClassDraw of %d values in rows of %d", len(d.V), d.K))
	}
	b := make([]byte, 0, 2+len(d.V)*12)
	b = append(b, '[')
	for i, v := range d.V {
		c := i % d.K
		switch {
		case c == 0 && i > 0:
			b = append(b, "],["...)
		case c == 0:
			b = append(b, '[')
		default:
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSONFloat(b, v); err != nil {
			return nil, err
		}
	}
	if len(d.V) > 0 {
		b = append(b, ']')
	}
	return append(b, ']'), nil
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
	out := ClassDraw{V: []float64{}}
	for n, row := range rows {
		if n == 0 {
			out.K = len(row)
			out.V = make([]float64, 0, len(rows)*len(row))
		}
		if len(row) == 0 || len(row) != out.K {
			return fmt.Errorf("class draw: item %d has %d values, item 0 has %d (want the same, at least 1)", n, len(row), out.K)
		}
		out.V = append(out.V, row...)
	}
	*d = out
	return nil
}

// appendJSONFloat appends v as encoding/json writes a float64 (the
// shortest representation that round-trips; exponent form below 1e-6 and
// from 1e21 on, with at least one exponent digit), or returns
// json.Marshal's error for NaN and the infinities.
func appendJSONFloat(b []byte, v float64) ([]byte, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return b, &json.UnsupportedValueError{Str: strconv.FormatFloat(v, 'g', -1, 64)}
	}
	format := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		// e-07 -> e-7, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
