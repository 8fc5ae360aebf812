package analysis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"concord/annotations"
)

// Categorical covariates (FitSpec.Categorical). An items-file column named
// there is read as a category per item and one-hot encoded into the
// covariates "COLUMN=VALUE" (1 for the item's value, 0 for the others seen
// among the fitted items). Under the rbf and ard kernels the squared
// distance of two items in the column's indicators is then 2 (1 -
// delta(a_i, a_j)): Kim & Ghahramani's discrete-input distance (eq. 12) up
// to the factor 2, which the length-scale absorbs (ard learns one per
// indicator). The indicators are never standardised. A new item whose value
// was not seen among the fitted items gets all indicators 0: at distance 1
// (in the halved units) from every fitted item, as 1 - delta says. Numeric
// codes (a column of numbers such as 1, 2, 3) are categories too when
// named.

// oneHotName is the covariate of value v of categorical column col.
func oneHotName(col, v string) string { return col + "=" + v }

// categoryOf returns item it's value in column col: the verbatim text of a
// non-numeric column, or the number of a numeric one.
func categoryOf(it *annotations.Item, col string) (string, bool) {
	if v, ok := it.Attrs[col]; ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v), true
	}
	if v, ok := it.Covariates[col]; ok {
		return strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}

// withCategorical returns a copy of ds whose items carry the one-hot
// covariates of the categorical columns cols (and no longer the numeric
// column itself, for numeric codes). Every item of ids needs a value.
func withCategorical(ds *annotations.Dataset, ids []string, cols []string) (*annotations.Dataset, error) {
	if len(cols) == 0 {
		return ds, nil
	}
	out := *ds
	out.Items = make([]annotations.Item, len(ds.Items))
	byID := make(map[string]int, len(ds.Items))
	for i, it := range ds.Items {
		byID[it.ID] = i
		c := it
		c.Covariates = make(map[string]float64, len(it.Covariates))
		for k, v := range it.Covariates {
			c.Covariates[k] = v
		}
		out.Items[i] = c
	}
	for _, col := range cols {
		values := map[string]bool{}
		var missing []string
		for _, id := range ids {
			i, ok := byID[id]
			if !ok {
				missing = append(missing, fmt.Sprintf("item %q is not in the items file", id))
				continue
			}
			v, ok := categoryOf(&out.Items[i], col)
			if !ok {
				missing = append(missing, fmt.Sprintf("item %q has no value", id))
				continue
			}
			values[v] = true
		}
		if len(values) == 0 {
			return nil, annotations.Errorf(annotations.EINVALID, "categorical column %q: no item has a value there (%s)", col, textColumnsAvailable(ds))
		}
		if len(missing) > 0 {
			if len(missing) > 5 {
				missing = append(missing[:5], fmt.Sprintf("and %d more", len(missing)-5))
			}
			return nil, annotations.Errorf(annotations.EINVALID, "categorical column %q needs a value for every item: %s", col, strings.Join(missing, "; "))
		}
		vs := make([]string, 0, len(values))
		for v := range values {
			vs = append(vs, v)
		}
		sort.Strings(vs)
		for i := range out.Items {
			it := &out.Items[i]
			v, _ := categoryOf(it, col)
			delete(it.Covariates, col)
			for _, w := range vs {
				x := 0.0
				if v == w {
					x = 1
				}
				it.Covariates[oneHotName(col, w)] = x
			}
		}
	}
	return &out, nil
}

// isCategorical reports whether covariate name is an indicator of one of
// the categorical columns cols.
func isCategorical(name string, cols []string) bool {
	for _, c := range cols {
		if strings.HasPrefix(name, c+"=") {
			return true
		}
	}
	return false
}

// newItemIndicator returns the value of indicator covariate name (of one
// of cols) for a new item: 1 when the item's category is the indicator's,
// else 0; ok is false when the item has no value in that column.
func newItemIndicator(it *annotations.Item, name string, cols []string) (x float64, ok bool) {
	for _, c := range cols {
		if w, found := strings.CutPrefix(name, c+"="); found {
			v, has := categoryOf(it, c)
			if !has {
				return 0, false
			}
			if v == w {
				return 1, true
			}
			return 0, true
		}
	}
	return 0, false
}
