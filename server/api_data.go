package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"concord/annotations"
)

// Listing limits: the default and the largest page.
const (
	defaultPage = 100
	maxPage     = 10000
	// maxFilterLen bounds filter values (ids are at most MaxNameLen bytes).
	maxFilterLen = 1000
)

// lister lists the rows of a project's paged listing: the page and the
// total.
type lister[T any] func(ctx context.Context, projectID int64) ([]T, int, error)

// listPage answers a paged listing of a project's rows: the project with
// read access; filter reads the listing's query parameters (params) and
// returns the page and the lister; the rows are answered under key name (an
// empty array for none) with the total and the page's offset and limit.
func listPage[T any](s *Server, c *gin.Context, name string, params []string, filter func(q *query) (annotations.Page, lister[T])) {
	p := s.project(c, read)
	if p == nil {
		return
	}
	q := newQuery(c, params...)
	pg, list := filter(q)
	if q.err != nil {
		s.fail(c, q.err)
		return
	}
	rows, total, err := list(c.Request.Context(), p.ID)
	if err != nil {
		s.fail(c, err)
		return
	}
	if rows == nil {
		rows = []T{}
	}
	c.JSON(http.StatusOK, gin.H{name: rows, "total": total, "offset": pg.Offset, "limit": pg.Limit})
}

// listProject answers a listing of the project of :id (read access, no
// query parameters): the rows list returns, each shown by view, under key
// name.
func listProject[T, J any](s *Server, c *gin.Context, name string, list func(ctx context.Context, projectID int64) ([]T, error), view func(T) J) {
	p := s.projectNoQuery(c, read)
	if p == nil {
		return
	}
	rows, err := list(c.Request.Context(), p.ID)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]J, len(rows))
	for i, r := range rows {
		out[i] = view(r)
	}
	c.JSON(http.StatusOK, gin.H{name: out})
}

// listItems: GET /api/v1/projects/{id}/items?offset&limit&q&labelled.
func (s *Server) listItems(c *gin.Context) {
	listPage(s, c, "items", []string{"offset", "limit", "q", "labelled"}, func(q *query) (annotations.Page, lister[annotations.ItemSummary]) {
		f := annotations.ItemFilter{Query: q.str("q", maxFilterLen), Labelled: q.boolPtr("labelled"), Page: q.page(defaultPage, maxPage)}
		return f.Page, func(ctx context.Context, id int64) ([]annotations.ItemSummary, int, error) {
			return s.store.ListItems(ctx, id, f)
		}
	})
}

// listRaters: GET /api/v1/projects/{id}/raters?offset&limit.
func (s *Server) listRaters(c *gin.Context) {
	listPage(s, c, "raters", []string{"offset", "limit"}, func(q *query) (annotations.Page, lister[annotations.RaterSummary]) {
		pg := q.page(defaultPage, maxPage)
		return pg, func(ctx context.Context, id int64) ([]annotations.RaterSummary, int, error) {
			return s.store.ListRaters(ctx, id, pg)
		}
	})
}

// labelFilter reads the item, rater and label filters.
func labelFilter(q *query) annotations.LabelFilter {
	return annotations.LabelFilter{Item: q.str("item", maxFilterLen), Rater: q.str("rater", maxFilterLen), Value: q.str("label", maxFilterLen)}
}

// listLabels: GET /api/v1/projects/{id}/labels?item&rater&label&offset&limit.
func (s *Server) listLabels(c *gin.Context) {
	listPage(s, c, "labels", []string{"item", "rater", "label", "offset", "limit"}, func(q *query) (annotations.Page, lister[annotations.Label]) {
		f := labelFilter(q)
		f.Page = q.page(1000, maxPage)
		return f.Page, func(ctx context.Context, id int64) ([]annotations.Label, int, error) {
			return s.store.ListLabels(ctx, id, f)
		}
	})
}

// deleteLabels: DELETE /api/v1/projects/{id}/labels?item&rater&label (or
// ?all=true) removes the matching labels.
func (s *Server) deleteLabels(c *gin.Context) {
	p := s.project(c, write)
	if p == nil {
		return
	}
	q := newQuery(c, "item", "rater", "label", "all")
	f := labelFilter(q)
	all := q.boolPtr("all")
	if q.err != nil {
		s.fail(c, q.err)
		return
	}
	if f.Item == "" && f.Rater == "" && f.Value == "" && (all == nil || !*all) {
		s.failf(c, annotations.EINVALID, "give at least one of the filters item, rater and label, or all=true to delete every label of the project")
		return
	}
	n, err := s.store.DeleteLabels(c.Request.Context(), p.ID, f)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"deleted": n})
}

type upsertItemsRequest struct {
	Items []annotations.Item `json:"items"`
}

// upsertItems: POST /api/v1/projects/{id}/items {"items": [...]} creates
// items or updates their text, gold label, covariates and attributes (empty
// fields keep what is stored), in one transaction.
func (s *Server) upsertItems(c *gin.Context) {
	p, req := projectBody[upsertItemsRequest](s, c, write)
	if req == nil || !nonEmpty(s, c, req.Items, "items", `{"id", "text", "gold", "covariates", "attrs"}`) {
		return
	}
	s.importAnswer(c, p, &annotations.Dataset{Scheme: p.Scheme, Items: req.Items}, annotations.ImportOptions{})
}

// nonEmpty answers EINVALID when list, the request's field, is empty
// (its elements hold elem) and reports whether it is not.
func nonEmpty[T any](s *Server, c *gin.Context, list []T, field, elem string) bool {
	if len(list) == 0 {
		s.failf(c, annotations.EINVALID, "field %q: expected a non-empty array of %s", field, elem)
		return false
	}
	return true
}

// importAnswer imports ds into project p and answers the import's result
// (201) or its error.
func (s *Server) importAnswer(c *gin.Context, p *annotations.Project, ds *annotations.Dataset, o annotations.ImportOptions) {
	res, err := s.store.Import(c.Request.Context(), p.ID, ds, o)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, res)
}

// labelIn is one label of a bulk request; the label may be a JSON string or
// number.
type labelIn struct {
	Item  string          `json:"item_id"`
	Rater string          `json:"rater_id"`
	Label json.RawMessage `json:"label"`
	Prob  *float64        `json:"prob"`
}

type createLabelsRequest struct {
	Labels  []labelIn          `json:"labels"`
	Items   []annotations.Item `json:"items"`
	Replace bool               `json:"replace"`
	// Duplicates: "keep", "first" or "error" (default) for repeated labels
	// of one rater for one item (the CLI's --duplicates).
	Duplicates string `json:"duplicates"`
	// ModelRaters marks raters of the labels as models (the CLI's
	// --model-raters).
	ModelRaters []string `json:"model_raters"`
}

// createLabels: POST /api/v1/projects/{id}/labels {"labels": [{"item_id",
// "rater_id", "label"}], "items": [...], "replace": false} adds labels (and
// items, raters) in one transaction. A label that differs from the stored
// one for the same (item, rater) is a conflict unless replace is true;
// re-sending the same labels changes nothing. "duplicates" ("keep", "first",
// "error"; the CLI's --duplicates) says what to do with repeated labels of
// one rater for one item. A label's optional "prob" is the rater's
// probability of it, in (0, 1]; "model_raters" names the raters that are
// models. Problems name the label by its 1-based position in the array
// ("row").
func (s *Server) createLabels(c *gin.Context) {
	p, req := projectBody[createLabelsRequest](s, c, write)
	if req == nil || !nonEmpty(s, c, req.Labels, "labels", `{"item_id", "rater_id", "label"}`) {
		return
	}
	dups, err := annotations.ParseDuplicates(req.Duplicates)
	if err != nil {
		s.failf(c, annotations.EINVALID, "field \"duplicates\": %s", annotations.ErrorMessage(err))
		return
	}
	parsed := &annotations.Parsed{Format: annotations.FormatJSON, Name: "request body", Labels: make([]annotations.RawLabel, len(req.Labels))}
	var pl annotations.ProblemList
	for i, l := range req.Labels {
		v, ok := scalarText(l.Label)
		if !ok {
			pl.Add(annotations.Problem{File: "request body", Row: i + 1, Column: "label", Msg: "expected the label as a string or a number, got " + clipText(string(l.Label), 40)})
		}
		parsed.Labels[i] = annotations.RawLabel{Item: l.Item, Rater: l.Rater, Value: v, Row: i + 1, ItemCol: "item_id", RaterCol: "rater_id", ValueCol: "label"}
		if l.Prob != nil {
			parsed.Labels[i].Prob, parsed.Labels[i].ProbCol = strconv.FormatFloat(*l.Prob, 'g', -1, 64), "prob"
		}
	}
	if err := pl.Err(); err != nil {
		s.fail(c, err)
		return
	}
	ds, err := annotations.BuildDataset(p.Scheme, parsed, req.Items, annotations.ReadOptions{Name: "request body", Duplicates: dups, ModelRaters: req.ModelRaters})
	if err != nil {
		s.fail(c, err)
		return
	}
	s.importAnswer(c, p, ds, annotations.ImportOptions{Replace: req.Replace, Duplicates: dups})
}

// scalarText returns the text of a JSON string or number.
func scalarText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return "", false
		}
		return n.String(), true
	}
	return "", false
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// importResponse is the answer to an import.
type importResponse struct {
	annotations.ImportResult
	Format string `json:"format"`
	File   string `json:"file"`
	Labels int    `json:"labels"`
	Items  int    `json:"items"`
	// Unused lists columns of the file that were not used.
	Unused []string `json:"unused_columns,omitempty"`
}

// importFile: POST /api/v1/projects/{id}/imports, multipart/form-data with
// the label file in field "file" and optional fields "items" (an items
// file), "format" (auto, csv-long, csv-wide, xlsx, json, jsonl,
// labelstudio, doccano), "where" (COLUMN=VALUE, repeatable), "sheet",
// "text_columns" (comma-separated), "item_col", "rater_col", "label_col",
// "rater", "prob_col" and "model_raters" (comma-separated; as the CLI's
// --item-col, ..., --prob-col, --model-raters), "replace" (true/false) and "duplicates"
// (keep, first or error: repeated labels of one rater for one item). The import is
// one transaction: a file with any bad row writes nothing, and the answer
// names every problem (file, line or row, column, what was expected).
func (s *Server) importFile(c *gin.Context) {
	p := s.project(c, write)
	if p == nil {
		return
	}
	form, err := s.multipartForm(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.importForm(c, p, form)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, res)
}

// multipartForm parses a multipart/form-data body within the upload limit.
func (s *Server) multipartForm(c *gin.Context) (*multipart.Form, error) {
	if c.Request.MultipartForm != nil {
		return c.Request.MultipartForm, nil // parsed already (dashboard CSRF check)
	}
	ct := c.GetHeader("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" {
		return nil, annotations.Errorf(annotations.EINVALID, "Content-Type %q: expected multipart/form-data with the label file in field \"file\"", ct)
	}
	limit := s.cfg.MaxUploadBytes
	if c.Request.ContentLength > limit {
		return nil, annotations.Errorf(annotations.ETOOLARGE, "upload exceeds the limit of %s", byteSize(limit))
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, annotations.Errorf(annotations.ETOOLARGE, "upload exceeds the limit of %s", byteSize(limit))
		}
		return nil, annotations.Errorf(annotations.EINVALID, "malformed multipart body: %v", err)
	}
	return c.Request.MultipartForm, nil
}

// importForm reads, validates and imports the files of an import form.
func (s *Server) importForm(c *gin.Context, p *annotations.Project, form *multipart.Form) (*importResponse, error) {
	if err := checkImportFields(form); err != nil {
		return nil, err
	}
	f := importValues{form}
	if err := f.checkScheme(p); err != nil {
		return nil, err
	}
	opts, err := f.readOptions()
	if err != nil {
		return nil, err
	}
	replace, err := f.replace()
	if err != nil {
		return nil, err
	}
	files := form.File["file"]
	if len(files) == 0 || files[0].Filename == "" && files[0].Size == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "multipart field \"file\" is required: the label file to import")
	}
	opts.Name = uploadName(files[0])
	lf, err := files[0].Open()
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "reading the uploaded file: %v", err)
	}
	defer lf.Close()
	parsed, lerr := annotations.ReadLabels(lf, opts)
	var items []annotations.Item
	var ierr error
	if ifs := form.File["items"]; len(ifs) > 0 && !(ifs[0].Filename == "" && ifs[0].Size == 0) {
		iopts := annotations.ReadOptions{Name: uploadName(ifs[0]), TextColumns: opts.TextColumns}
		f, err := ifs[0].Open()
		if err != nil {
			return nil, annotations.Errorf(annotations.EINVALID, "reading the uploaded items file: %v", err)
		}
		defer f.Close()
		items, ierr = annotations.ReadItems(f, iopts)
	}
	if err := annotations.JoinProblems(0, lerr, ierr); err != nil {
		return nil, err
	}
	ds, err := annotations.BuildDataset(p.Scheme, parsed, items, opts)
	if err != nil {
		return nil, err
	}
	res, err := s.store.Import(c.Request.Context(), p.ID, ds, annotations.ImportOptions{Replace: replace, Duplicates: opts.Duplicates})
	if err != nil {
		return nil, err
	}
	return &importResponse{ImportResult: res, Format: string(parsed.Format), File: opts.Name, Labels: len(ds.Labels), Items: len(ds.Items), Unused: parsed.Unused}, nil
}

// checkImportFields refuses the unknown fields of an import form and
// file fields given more than once.
func checkImportFields(form *multipart.Form) error {
	known := map[string]bool{"file": true, "items": true, "format": true, "where": true, "sheet": true, "text_columns": true, "replace": true, "duplicates": true, "scheme": true,
		"item_col": true, "rater_col": true, "label_col": true, "rater": true, "prob_col": true, "model_raters": true, csrfField: true}
	for k := range form.Value {
		if !known[k] {
			return annotations.Errorf(annotations.EINVALID, "unknown form field %q (expected file, items, format, where, sheet, text_columns, item_col, rater_col, label_col, rater, prob_col, model_raters, replace, duplicates, scheme)", k)
		}
	}
	for k, fs := range form.File {
		if k != "file" && k != "items" {
			return annotations.Errorf(annotations.EINVALID, "unknown file field %q (expected file and optionally items)", k)
		}
		if len(fs) > 1 {
			return annotations.Errorf(annotations.EINVALID, "form field %q holds %d files (expected one)", k, len(fs))
		}
	}
	return nil
}

// importValues are the value fields of an import form.
type importValues struct{ form *multipart.Form }

// one returns the value of a field given at most once ("" when absent).
func (f importValues) one(name string) (string, error) {
	vs := f.form.Value[name]
	if len(vs) > 1 {
		return "", annotations.Errorf(annotations.EINVALID, "form field %q is given %d times (expected once)", name, len(vs))
	}
	if len(vs) == 0 {
		return "", nil
	}
	return strings.TrimSpace(vs[0]), nil
}

// checkScheme: the scheme is the project's; a scheme given with the file
// must be it.
func (f importValues) checkScheme(p *annotations.Project) error {
	spec, err := f.one("scheme")
	if err != nil || spec == "" {
		return err
	}
	sc, err := annotations.ParseScheme(spec)
	if err != nil {
		return err
	}
	if !sc.Open() && !sc.Equal(p.Scheme) || sc.Open() && (sc.Kind != p.Scheme.Kind || sc.Positive != p.Scheme.Positive) {
		return annotations.Errorf(annotations.EINVALID, "scheme %s: project %q has scheme %s (leave the scheme out to use the project's)", sc, p.Name, p.Scheme)
	}
	return nil
}

// readOptions reads the reading options of the label file: its format,
// sheet, columns, text columns, row filter and duplicates rule.
func (f importValues) readOptions() (annotations.ReadOptions, error) {
	opts := annotations.ReadOptions{}
	format, err := f.one("format")
	if err != nil {
		return opts, err
	}
	switch ff := annotations.Format(format); ff {
	case "", annotations.FormatAuto, annotations.FormatCSVLong, annotations.FormatCSVWide, annotations.FormatXLSX,
		annotations.FormatJSON, annotations.FormatJSONL, annotations.FormatLabelStudio, annotations.FormatDoccano:
		opts.Format = ff
	default:
		return opts, annotations.Errorf(annotations.EINVALID, "format %q: expected auto, csv-long, csv-wide, xlsx, json, jsonl, labelstudio or doccano", format)
	}
	for _, fl := range []struct {
		name string
		dst  *string
	}{{"sheet", &opts.Sheet}, {"item_col", &opts.ItemCol}, {"rater_col", &opts.RaterCol}, {"label_col", &opts.LabelCol}, {"rater", &opts.Rater}, {"prob_col", &opts.ProbCol}} {
		if *fl.dst, err = f.one(fl.name); err != nil {
			return opts, err
		}
	}
	models, err := f.one("model_raters")
	if err != nil {
		return opts, err
	}
	opts.ModelRaters = commaList(models)
	tc, err := f.one("text_columns")
	if err != nil {
		return opts, err
	}
	opts.TextColumns = commaList(tc)
	if opts.Where, err = f.where(); err != nil {
		return opts, err
	}
	dv, err := f.one("duplicates")
	if err != nil {
		return opts, err
	}
	opts.Duplicates, err = annotations.ParseDuplicates(dv)
	return opts, err
}

// where reads the row filter: fields COLUMN=VALUE (nil: none).
func (f importValues) where() (map[string]string, error) {
	var out map[string]string
	for _, w := range f.form.Value["where"] {
		if strings.TrimSpace(w) == "" {
			continue
		}
		k, v, ok := strings.Cut(w, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, annotations.Errorf(annotations.EINVALID, "where %q: expected COLUMN=VALUE, e.g. criterion=k1", w)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// replace reads the replace field: true or false (an HTML checkbox's on).
func (f importValues) replace() (bool, error) {
	rv, err := f.one("replace")
	if err != nil || rv == "" {
		return false, err
	}
	replace, err := strconv.ParseBool(rv)
	if err != nil {
		if rv != "on" {
			return false, annotations.Errorf(annotations.EINVALID, "replace %q: expected true or false", rv)
		}
		replace = true
	}
	return replace, nil
}

// uploadName is the base name of an uploaded file, for problem reports.
func uploadName(fh *multipart.FileHeader) string {
	name := filepath.Base(strings.ReplaceAll(fh.Filename, "\\", "/"))
	if name == "." || name == "/" || name == "" {
		name = "upload"
	}
	return clipText(strings.ToValidUTF8(name, "?"), 100)
}

// agreement: GET /api/v1/projects/{id}/agreement?bootstrap&seed&only&pairs&
// min_shared&ties -> the agreement coefficients (with intervals), baseline
// aggregators and rater profiles of the project's labels (the document of
// `concord agreement --json`). bootstrap=0 gives analytic intervals only;
// only=coefficients|aggregators|items|raters computes one part; pairs=all
// (or a number) and min_shared choose the rater pairs of the pairwise
// statistics (raters.PairOptions: bounded by default); ties=frequent|first
// is the majority-vote and Wawa tie rule.
//
// The work is bounded and shared (see agreementDoc): the bootstrap may
// resample at most Config.MaxBootstrapWork labels and rater pairs; an
// explicit bootstrap beyond it is a 400 naming the limit, the default
// (1000 replicates) is reduced to fit with a note in the document's
// notes. Documents are cached by the project's label content and the
// options (bootstrap, seed); one project runs one analysis at a time, and
// an analysis stops when every client waiting for it has gone. Projects
// over Config.AgreementJobLabels labels are analysed in the background:
// 202 with the job's state and a Retry-After until it is done, then 200.
// cancelAgreement: DELETE /api/v1/projects/{id}/agreement -> stops the
// project's agreement analyses running in the background (projects over
// Config.AgreementJobLabels) and answers how many: {"cancelled": N}. A
// later GET starts the analysis again.
func (s *Server) cancelAgreement(c *gin.Context) {
	p := s.project(c, write)
	if p == nil {
		return
	}
	s.answerCancelled(c, func(ctx context.Context) (int, error) { return s.store.CancelAgreements(ctx, p.ID) })
}

// answerCancelled answers a DELETE that cancels background jobs
// (cancelAgreement, cancelExports): a query parameter is refused (the
// routes take none), else cancel's count is {"cancelled": N}.
func (s *Server) answerCancelled(c *gin.Context, cancel func(context.Context) (int, error)) {
	if q := newQuery(c); q.err != nil {
		s.fail(c, q.err)
		return
	}
	n, err := cancel(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"cancelled": n})
}

func (s *Server) agreement(c *gin.Context) {
	p := s.project(c, read)
	if p == nil {
		return
	}
	q := newQuery(c, agreementRouteParams()...)
	o := readAgreementOpts(q, true)
	if q.err != nil {
		s.fail(c, q.err)
		return
	}
	if res := s.agreementOrAnswer(c, p.ID, o); res != nil {
		c.Data(http.StatusOK, "application/json; charset=utf-8", res.json)
	}
}
