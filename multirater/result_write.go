package multirater

import (
	"bytes"
	"encoding/json"
	"io"
)

// WriteIndented writes res as json.MarshalIndent(res, "", " ") followed by a
// newline, byte for byte, without holding the whole document in memory: the
// items and the rows of the joint draws (Draws.M, and Draws.MClass of a
// classification fit), which grow with the items (N x 500 draws of an EP
// fit), are encoded and written one at a time, the rest of the document
// around them at once. Memory is that of the largest item or draw row plus
// the small rest, instead of two or three copies of the document (272 MB of
// JSON for a labels-only ordinal fit of 16,000 items; the class draws of a
// labels-only classification fit of 32,000 items grew a 124 MB buffer).
// A value JSON cannot hold (NaN, an infinity) gives json.Marshal's error.
func WriteIndented(w io.Writer, res *FitResult) error {
	skel := *res
	if len(res.Items) > 0 {
		skel.Items = nil
	}
	var draws Draws
	var nM, nClass int
	if d := res.Draws; d != nil && (len(d.M) > 0 || len(d.MClass) > 0) {
		draws = *d
		if len(d.M) > 0 {
			nM, draws.M = len(d.M), nil
		}
		if len(d.MClass) > 0 {
			// One null row keeps the key (m_class is omitempty) as a
			// placeholder of known text.
			nClass, draws.MClass = len(d.MClass), []ClassDraw{{}}
		}
		skel.Draws = &draws
	}
	b, err := json.MarshalIndent(&skel, "", " ")
	if err != nil {
		return err
	}
	// The placeholders are unique: a raw newline occurs in the indented
	// document only between tokens (strings hold it escaped), and each key
	// sits at one depth of indentation.
	b, err = spliceArray(w, b, "\n \"items\": ", "null", len(res.Items), 2, func(i int) any { return &res.Items[i] })
	if err != nil {
		return err
	}
	if nM+nClass > 0 {
		// Keys of depth 2 are looked for inside the draws only.
		at := bytes.Index(b, []byte("\n \"draws\": {"))
		if at < 0 {
			panic("multirater: WriteIndented: draws not found")
		}
		if _, err := w.Write(b[:at]); err != nil {
			return err
		}
		b, err = spliceArray(w, b[at:], "\n  \"m\": ", "null", nM, 3, func(i int) any { return res.Draws.M[i] })
		if err != nil {
			return err
		}
		b, err = spliceArray(w, b, "\n  \"m_class\": ", "[\n   null\n  ]", nClass, 3, func(i int) any { return res.Draws.MClass[i] })
		if err != nil {
			return err
		}
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	_, err = w.Write([]byte{'\n'})
	return err
}

// spliceArray writes doc up to key (a newline, the indentation and the
// quoted key with its colon and space), then in place of the placeholder
// value that follows it the n elements elem(i) as MarshalIndent writes an
// array whose elements sit at depth (indentation of depth spaces), and
// returns the rest of doc after the placeholder. With n = 0 (a nil or empty
// slice) doc is returned as it is and nothing is written.
func spliceArray(w io.Writer, doc []byte, key, placeholder string, n, depth int, elem func(i int) any) ([]byte, error) {
	if n == 0 {
		return doc, nil
	}
	at := bytes.Index(doc, []byte(key+placeholder))
	if at < 0 {
		panic("multirater: WriteIndented: placeholder " + key + placeholder + " not found")
	}
	cut := at + len(key)
	if _, err := w.Write(doc[:cut]); err != nil {
		return nil, err
	}
	in := bytes.Repeat([]byte{' '}, depth)
	for i := 0; i < n; i++ {
		e, err := json.MarshalIndent(elem(i), string(in), " ")
		if err != nil {
			return nil, err
		}
		sep := ",\n"
		if i == 0 {
			sep = "[\n"
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return nil, err
		}
		if _, err := w.Write(in); err != nil {
			return nil, err
		}
		if _, err := w.Write(e); err != nil {
			return nil, err
		}
	}
	if _, err := w.Write(append([]byte{'\n'}, in[:depth-1]...)); err != nil {
		return nil, err
	}
	if _, err := w.Write([]byte{']'}); err != nil {
		return nil, err
	}
	return doc[cut+len(placeholder):], nil
}
