package server

import (
	"html"
	"strings"
	"testing"

	"concord/analysis"
)

// TestFormOffersEverySetting: the start-fit form built for every model
// offers every setting of every family (the confusion model's included),
// each once, with its doc as help text, the model:engine pairs that read
// it, a select of its words when it has words, and its declared range on
// a number input.
func TestFormOffersEverySetting(t *testing.T) {
	groups, more := formSettings(analysis.Models(), map[string]string{}, settingHints(analysis.ModelOrdinal))
	offered := map[string]formField{}
	for _, g := range groups {
		if g.For == "" || g.Legend == "" {
			t.Errorf("group %s: legend %q, pairs %q", g.Name, g.Legend, g.For)
		}
		for _, f := range g.Fields {
			offered[f.Name] = f
		}
	}
	for _, f := range more {
		offered[f.Name] = f
	}
	n := 0
	for _, f := range analysis.AllFields() {
		if f.Common() {
			continue
		}
		n++
		ff, ok := offered[f.Name]
		switch {
		case !ok:
			t.Errorf("%s: not on the form", f.Name)
			continue
		case ff.Doc != f.Doc || ff.Doc == "":
			t.Errorf("%s: help %q, declared doc %q", f.Name, ff.Doc, f.Doc)
		case ff.For == "":
			t.Errorf("%s: no pairs", f.Name)
		case f.Enum != nil && !f.HasRange && (ff.Input != "select" || strings.Join(ff.Options, ",") != strings.Join(f.Enum, ",")):
			t.Errorf("%s: input %s %v, want a select of %v", f.Name, ff.Input, ff.Options, f.Enum)
		case ff.Input == "number" && ff.Min == "":
			t.Errorf("%s: a number without its range", f.Name)
		}
		for _, fam := range f.Families {
			if !strings.Contains(ff.For, fam+":") {
				t.Errorf("%s: pairs %q lack the %s model", f.Name, ff.For, fam)
			}
		}
	}
	if len(offered) != n {
		t.Errorf("%d fields offered, %d declared", len(offered), n)
	}
	// The page renders each with its help.
	e := newEnv(t)
	nom, _ := e.nominalProject("anaesthesia")
	b := newBrowser(t, e)
	b.login(testAdmin)
	_, page := b.get("/projects/" + itoa(nom))
	form := between(page, `id="fit-form"`, "</form>")
	for _, name := range []string{"rater_model", "hierarchy", "communities", "concentration", "max_iter", "gold"} {
		f := offered[name]
		if !strings.Contains(form, `name="`+name+`"`) || !strings.Contains(form, `<small class="help">`+html.EscapeString(f.Doc)+`</small>`) {
			t.Errorf("the confusion model's %s is not on the page with its help", name)
		}
	}
}
