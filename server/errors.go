package server

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"concord/annotations"
)

// httpStatuses maps the error vocabulary of package annotations to HTTP
// statuses; a code it does not name is an internal server error.
var httpStatuses = map[string]int{
	annotations.EINVALID:      http.StatusBadRequest,
	annotations.EUNAUTHORIZED: http.StatusUnauthorized,
	annotations.EFORBIDDEN:    http.StatusForbidden,
	annotations.ENOTFOUND:     http.StatusNotFound,
	annotations.ECONFLICT:     http.StatusConflict,
	annotations.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	annotations.ETOOMANY:      http.StatusTooManyRequests,
	annotations.EUNAVAILABLE:  http.StatusServiceUnavailable,
}

// httpStatus is the HTTP status of an error code (httpStatuses). It is the
// only place where that mapping is made.
func httpStatus(code string) int {
	if st, ok := httpStatuses[code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// errorBody is the one JSON error shape of the API:
//
//	{"error": {"code": "invalid", "message": "...", "problems": [...]}}
//
// problems (one per defect of a rejected file or bulk request: file, line or
// row, column and what was expected) and omitted (how many more there were)
// are present only for rejected inputs.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code      string                `json:"code"`
	Message   string                `json:"message"`
	Problems  []annotations.Problem `json:"problems,omitempty"`
	Omitted   int                   `json:"omitted,omitempty"`
	RequestID string                `json:"request_id,omitempty"`
}

// errorDetailOf renders err for a client: its code and user-facing message
// (internal errors become "internal error" without details).
func errorDetailOf(err error) errorDetail {
	d := errorDetail{Code: annotations.ErrorCode(err), Message: annotations.ErrorMessage(err)}
	var pl *annotations.ProblemList
	if errors.As(err, &pl) && d.Code == annotations.EINVALID {
		d.Problems, d.Omitted = pl.Problems, pl.Omitted
	}
	if d.Code != annotations.EINVALID && d.Code != annotations.EUNAUTHORIZED && d.Code != annotations.EFORBIDDEN &&
		d.Code != annotations.ENOTFOUND && d.Code != annotations.ECONFLICT && d.Code != annotations.ETOOLARGE &&
		d.Code != annotations.ETOOMANY && d.Code != annotations.EUNAVAILABLE {
		d.Code, d.Message = annotations.EINTERNAL, "internal error"
	}
	return d
}

// fail writes err as the JSON error response and aborts the request.
// Internal errors are logged with their details, which the client never
// sees.
func (s *Server) fail(c *gin.Context, err error) {
	d := errorDetailOf(err)
	status := httpStatus(d.Code)
	if status >= 500 {
		d.RequestID = requestID(c)
		if d.Code == annotations.EINTERNAL {
			d.Message = "internal error (request " + d.RequestID + "); the server log has the details"
		}
		reqLogger(c, s.log).ErrorContext(c.Request.Context(), "request failed", "err", err.Error(), "code", d.Code)
	}
	c.Header("Cache-Control", "no-store")
	c.Abort()
	c.PureJSON(status, errorBody{Error: d})
}

// orFail returns the value get resolves from the request c with access a
// (projectParam, fitParam); on failure it answers the error with fail (the
// API's or the dashboard's) and returns false.
func orFail[T any](fail func(*gin.Context, error), c *gin.Context, a access, get func(*gin.Context, access) (T, error)) (T, bool) {
	v, err := get(c, a)
	if err != nil {
		fail(c, err)
		return v, false
	}
	return v, true
}

// failf is fail with a new domain error.
func (s *Server) failf(c *gin.Context, code, format string, args ...any) {
	s.fail(c, annotations.Errorf(code, format, args...))
}

// routeError answers requests that match no route (404) or a route with
// another method (405) in the API's error shape.
func routeError(status int, code, message string) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.AbortWithStatusJSON(status, errorBody{Error: errorDetail{Code: code, Message: message + ": " + c.Request.Method + " " + c.Request.URL.Path}})
	}
}

// logPanic is the recovery handler: it logs the panic with its stack and
// answers 500 in the JSON error shape, without the stack.
func (s *Server) logPanic(c *gin.Context, rec any) {
	reqLogger(c, s.log).ErrorContext(c.Request.Context(), "panic while serving a request", "panic", rec, "stack", stack())
	s.metrics.panics.Inc()
	if c.Writer.Written() {
		c.Abort()
		return
	}
	s.fail(c, errors.New("panic"))
}
