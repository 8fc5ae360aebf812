package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/annotations"
	"concord/reports"
)

// exportFormats are the formats of GET /fits/{id}/export/{format}: the
// consensus back into the annotation tools, and the items table.
var exportFormats = []string{"labelstudio", "doccano", "crowdkit", "csv"}

// exportFit: GET /api/v1/fits/{id}/export/{format} -> the consensus as a
// file for an annotation tool, what `concord report --format F` writes:
// Label Studio tasks with predictions (the tasks' ids and data as the Label
// Studio import kept them; ?from_name=&to_name=&type= name the control when
// the import did not keep it), doccano JSON Lines, crowd-kit's
// task,label,prob table, or the report's items table as CSV.
func (s *Server) exportFit(c *gin.Context) {
	in, cf, ok := s.doneFitOrFail(c, "from_name", "to_name", "type")
	if !ok {
		return
	}
	format := c.Param("format")
	if !slices.Contains(exportFormats, format) {
		s.failf(c, annotations.ENOTFOUND, "no export format %q: expected one of %s", format, strings.Join(exportFormats, ", "))
		return
	}
	q := newQuery(c, "from_name", "to_name", "type")
	to := reports.ToolOptions{FromName: q.str("from_name", 200), ToName: q.str("to_name", 200), Type: q.str("type", 20)}
	if q.err != nil {
		s.fail(c, q.err)
		return
	}
	if format != "labelstudio" && (to.FromName != "" || to.ToName != "" || to.Type != "") {
		s.failf(c, annotations.EINVALID, "from_name, to_name and type are parameters of the labelstudio export, not of %s", format)
		return
	}
	switch to.Type {
	case "", "choices", "rating", "number":
	default:
		s.failf(c, annotations.EINVALID, "query parameter type=%q: expected choices, rating or number", to.Type)
		return
	}
	ctx := c.Request.Context()
	m := in.Result.Model
	to.ModelVersion = fmt.Sprintf("concord fit %d %s", in.Fit.ID, m.Model)
	if m.Engine != "" {
		to.ModelVersion += "/" + m.Engine
	}
	to.ModelVersion += fmt.Sprintf(" seed %d", in.Fit.Seed)
	var write func(io.Writer, *reports.Report) error
	ct, ext := ctJSON, ".json"
	switch format {
	case "labelstudio":
		write = func(w io.Writer, rep *reports.Report) error { return reports.WriteLabelStudio(w, rep, to) }
	case "doccano":
		write = func(w io.Writer, rep *reports.Report) error { return reports.WriteDoccano(w, rep, to) }
		ct, ext = "application/x-ndjson", ".jsonl"
	case "crowdkit":
		write = func(w io.Writer, rep *reports.Report) error { return reports.WriteCrowdKit(w, rep, to) }
		ct, ext = ctCSV, ".csv"
	case "csv":
		write = reports.WriteItemsCSV
		ct, ext = ctCSV, ".csv"
	}
	// The tools' files carry the items' texts, task ids and data: those of
	// the project as stored now.
	key := "export-" + format
	if to.FromName != "" || to.ToName != "" || to.Type != "" {
		key += fmt.Sprintf("-%x", to.FromName+"\x00"+to.ToName+"\x00"+to.Type)
	}
	name := fileBase(in) + "." + format + ext
	if format == "csv" {
		name = fileBase(in) + ".consensus.csv"
	}
	s.serveArtefact(c, cf, key, ct, name, true, func() ([]byte, error) {
		if format != "csv" {
			ds, err := s.store.Dataset(ctx, in.Project.ID)
			if err != nil {
				return nil, err
			}
			to.Items = ds.Items
		}
		body, err := s.renderReport(ctx, in, cf, write)
		if errors.Is(err, reports.ErrControlNames) {
			return nil, annotations.Errorf(annotations.EINVALID, "the Label Studio control names of project %q are not known (they are kept by a Label Studio JSON import; JSON-MIN and CSV exports do not hold to_name): add ?from_name=NAME&to_name=NAME, the name and toName of the control in the labelling config (e.g. <Choices name=\"sentiment\" toName=\"text\">)", in.Project.Name)
		}
		if err != nil && annotations.ErrorCode(err) == annotations.EINTERNAL && strings.HasPrefix(err.Error(), "reports: ") {
			return nil, annotations.Errorf(annotations.EINVALID, "%s", strings.TrimPrefix(err.Error(), "reports: "))
		}
		return body, err
	})
}

// labelStudioNames returns the Label Studio control names a project's
// import kept, from its first item: known when a Label Studio JSON export
// gave both; from a CSV or JSON-MIN export the name alone (its annotation
// column), with toName guessed as the task's text field ("text" when
// none), which the fit page offers to check.
func (s *Server) labelStudioNames(ctx context.Context, projectID int64) (from, to string, known bool) {
	items, _, err := s.store.ListItems(ctx, projectID, annotations.ItemFilter{Page: annotations.Page{Limit: 1}})
	if err != nil || len(items) == 0 {
		return "", "", false
	}
	ref, ok := items[0].LabelStudio()
	if !ok {
		return "", "", false
	}
	if ref.FromName != "" && ref.ToName != "" {
		return ref.FromName, ref.ToName, true
	}
	to = ref.TextKey
	if to == "" {
		to = "text"
	}
	return ref.FromName, to, false
}
