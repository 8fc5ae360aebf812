package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/annotations"
)

// readBody reads the request body up to limit bytes; a longer body is
// ETOOLARGE.
func readBody(c *gin.Context, limit int64) ([]byte, error) {
	if c.Request.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, annotations.Errorf(annotations.EINVALID, "reading the request body: %v", err)
	}
	return b, nil
}

func tooLarge(limit int64) error {
	return annotations.Errorf(annotations.ETOOLARGE, "request body exceeds the limit of %s", byteSize(limit))
}

// byteSize formats a byte count for messages.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// decodeJSON decodes the JSON request body into dst (a pointer to a struct)
// with precise errors: a wrong content type, malformed JSON (with the byte
// offset, line and column), a value of the wrong type (with the field), an
// unknown field, trailing data, or a body over the JSON size limit.
func (s *Server) decodeJSON(c *gin.Context, dst any) error {
	if err := jsonContentType(c); err != nil {
		return err
	}
	body, err := readBody(c, s.cfg.MaxJSONBytes)
	if err != nil {
		return err
	}
	return decodeJSONBytes(body, dst)
}

// jsonContentType rejects bodies that are declared as forms or files. Other
// declared types are read as JSON: clients such as curl -d send JSON as
// application/x-www-form-urlencoded.
func jsonContentType(c *gin.Context) error {
	ct := c.GetHeader("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "multipart/form-data" {
		return annotations.Errorf(annotations.EINVALID, "Content-Type %q: expected a JSON body (application/json)", ct)
	}
	return nil
}

func decodeJSONBytes(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return annotations.Errorf(annotations.EINVALID, "empty request body: expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(body, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return annotations.Errorf(annotations.EINVALID, "malformed JSON: unexpected data after the JSON object at byte %d", dec.InputOffset())
	}
	return nil
}

// rejectNulls returns an EINVALID error naming the first field of the JSON
// object body (or of an object inside it, as "text.stem") whose value is
// null: decoded into Go, null leaves a field at its zero value, which for a
// fit request silently means the default. A body that is not an object is
// left to the decoder to report.
func rejectNulls(body []byte) error {
	var walk func(prefix string, raw json.RawMessage) error
	walk = func(prefix string, raw json.RawMessage) error {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := bytes.TrimSpace(m[k])
			if string(v) == "null" {
				return annotations.Errorf(annotations.EINVALID, "field %q is null: give a value, or leave the field out for its default", prefix+k)
			}
			if len(v) > 0 && v[0] == '{' {
				if err := walk(prefix+k+".", v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk("", body)
}

// jsonError turns an encoding/json error into a precise EINVALID message.
func jsonError(body []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := lineCol(body, se.Offset)
		return annotations.Errorf(annotations.EINVALID, "malformed JSON at line %d, column %d (byte %d): %s", line, col, se.Offset, se.Error())
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return annotations.Errorf(annotations.EINVALID, "request body: expected %s, got %s", jsonType(te.Type.String()), te.Value)
		}
		return annotations.Errorf(annotations.EINVALID, "field %q: expected %s, got %s", field, jsonType(te.Type.String()), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return annotations.Errorf(annotations.EINVALID, "malformed JSON: the body ends in the middle of a value")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return annotations.Errorf(annotations.EINVALID, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	var ae *annotations.Error
	if errors.As(err, &ae) {
		return ae
	}
	return annotations.Errorf(annotations.EINVALID, "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonType names a Go type the way a JSON user thinks of it: the first
// kind whose test the type (a pointer: its element) passes, else an object.
func jsonType(goType string) string {
	t := strings.TrimPrefix(goType, "*")
	for _, k := range []struct {
		test       func(s, sub string) bool
		sub, named string
	}{
		{strings.HasPrefix, "uint", "a non-negative integer"}, {strings.HasPrefix, "int", "an integer"},
		{strings.Contains, "float", "a number"}, {strings.HasPrefix, "map[", "an object"},
		{strings.Contains, "string", "a string"}, {strings.Contains, "bool", "true or false"},
		{strings.HasPrefix, "[]", "an array"},
	} {
		if k.test(t, k.sub) {
			return k.named
		}
	}
	return "an object"
}

func lineCol(b []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(b)); i++ {
		if b[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// idParam parses a positive integer path parameter.
func idParam(c *gin.Context, name, what string) (int64, error) {
	v := c.Param(name)
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, annotations.Errorf(annotations.EINVALID, "%s id %q: expected a positive integer", what, v)
	}
	return id, nil
}

// query reads the query parameters of a request with precise errors. Unknown
// parameters are rejected, so that a misspelt filter never silently matches
// everything.
type query struct {
	c     *gin.Context
	known map[string]bool
	err   error
}

func newQuery(c *gin.Context, known ...string) *query {
	q := &query{c: c, known: map[string]bool{}}
	for _, k := range known {
		q.known[k] = true
	}
	for k, vs := range c.Request.URL.Query() {
		if !q.known[k] {
			q.fail("unknown query parameter %q (expected one of %s)", k, strings.Join(known, ", "))
			break
		}
		if len(vs) > 1 {
			q.fail("query parameter %q is given %d times (expected once)", k, len(vs))
			break
		}
	}
	return q
}

func (q *query) fail(format string, args ...any) {
	if q.err == nil {
		q.err = annotations.Errorf(annotations.EINVALID, format, args...)
	}
}

func (q *query) str(name string, maxLen int) string {
	v := q.c.Query(name)
	if len(v) > maxLen {
		q.fail("query parameter %q is %d bytes long (at most %d)", name, len(v), maxLen)
		return ""
	}
	return v
}

// intIn reads an integer parameter in [lo, hi] with a default.
func (q *query) intIn(name string, def, lo, hi int) int {
	v, ok := q.c.GetQuery(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		q.fail("query parameter %s=%q: expected an integer from %d to %d", name, v, lo, hi)
		return def
	}
	return n
}

// uint64Param reads a non-negative integer parameter with a default.
func (q *query) uint64Param(name string, def uint64) uint64 {
	v, ok := q.c.GetQuery(name)
	if !ok {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		q.fail("query parameter %s=%q: expected a non-negative integer", name, v)
		return def
	}
	return n
}

// boolPtr reads an optional true/false parameter.
func (q *query) boolPtr(name string) *bool {
	v, ok := q.c.GetQuery(name)
	if !ok {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		q.fail("query parameter %s=%q: expected true or false", name, v)
		return nil
	}
	return &b
}

// page reads offset and limit (default defLimit, at most maxLimit).
func (q *query) page(defLimit, maxLimit int) annotations.Page {
	return annotations.Page{
		Offset: q.intIn("offset", 0, 0, 1<<31-1),
		Limit:  q.intIn("limit", defLimit, 1, maxLimit),
	}
}

// commaList is the comma-separated list s (a query parameter or form
// field): its items trimmed, the empty ones left out; nil when none.
func commaList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
