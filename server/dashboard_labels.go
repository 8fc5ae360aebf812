package server

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/annotations"
)

// belowParam is the project page's low-agreement filter, ?below=X: a short
// number, or "" (the API answers a bad one with a message on the page).
func belowParam(c *gin.Context) string {
	return clipText(strings.TrimSpace(c.Query("below")), 24)
}

// labelsPage lists one item's labels (the per-item agreement table links
// here): GET /projects/{id}/labels?item=ID.
type labelsPage struct {
	basePage
	Project *annotations.Project
	Item    string
	Text    string
	Labels  []labelRow
	Total   int
	Counts  []levelCount
}

type labelRow struct {
	Rater, Value, Name string
}

// maxItemLabels is the most labels of one item the page lists.
const maxItemLabels = 1000

func (d *dashboard) labelsPage(c *gin.Context) {
	p, ok := d.projectParam(c, read)
	if !ok {
		return
	}
	item := c.Query("item")
	if item == "" || len(item) > 1000 {
		d.fail(c, annotations.Errorf(annotations.EINVALID, "query parameter item: expected the id of an item of project %q", p.Name))
		return
	}
	ctx := c.Request.Context()
	ls, total, err := d.s.store.ListLabels(ctx, p.ID, annotations.LabelFilter{Item: item, Page: annotations.Page{Limit: maxItemLabels}})
	if err != nil {
		d.fail(c, err)
		return
	}
	page := labelsPage{basePage: d.base(c, item+" · "+p.Name), Project: p, Item: item, Total: total}
	items, _, err := d.s.store.ListItems(ctx, p.ID, annotations.ItemFilter{Query: item, Page: annotations.Page{Limit: 50}})
	if err != nil {
		d.fail(c, err)
		return
	}
	found := total > 0
	for _, it := range items {
		if it.ID == item {
			page.Text, found = it.Text, true
		}
	}
	if !found {
		d.fail(c, annotations.Errorf(annotations.ENOTFOUND, "project %q has no item %q", p.Name, item))
		return
	}
	names := map[string]string{}
	for _, l := range p.Scheme.Levels {
		names[l.Code] = l.Name
	}
	counts := map[string]int{}
	for _, l := range ls {
		page.Labels = append(page.Labels, labelRow{Rater: l.Rater, Value: l.Value, Name: names[l.Value]})
		counts[l.Value]++
	}
	if p.Scheme.Categorical() {
		for _, l := range p.Scheme.Levels {
			if n := counts[l.Code]; n > 0 {
				page.Counts = append(page.Counts, levelCount{l.Code, l.Name, n, 100 * float64(n) / float64(len(ls))})
			}
		}
	}
	d.render(c, http.StatusOK, "labels", page)
}
