package analysis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// otherUses are the settings' names that are also words of other things
// in cmd/, server/ and analysis/, at most five (issue 31), each with where
// else it is used.
var otherUses = map[string]string{
	"seed":       "the seeds of the agreement bootstrap and of the report (flags, API fields)",
	"text":       "the items' texts (items files, the predict request, the dashboard's inputs)",
	"rank":       "the rank of an item in the consensus ranking (the reports' glossary)",
	"covariates": "the items' covariates in the predict request and the auc evaluation document",
	"epsilon":    "the judge test's cost-benefit allowance (concord judge --epsilon, the judge API)",
}

// printers are the functions whose string arguments are words printed
// (table headings, log keys), not names that a program reads.
var printers = []string{"Printf", "Fprintf", "Sprintf", "Errorf", "Println", "Fprintln", "Print", "Fprint",
	"Info", "Warn", "Error", "Debug", "InfoContext", "WarnContext", "ErrorContext", "DebugContext"}

// TestSettingSpelledOnce: every setting's JSON name (and its flag's
// spelling, JSON a_b as a-b) is spelled in at most one non-test,
// non-generated Go file of cmd/, server/ and analysis/ together (as a
// string literal or a json tag): its declaration's, analysis/spec.go for
// the common part, none for a family's (declared in its settings.go). Code
// that needs a setting names it by its Go field (SettingOf) or its
// declaration. The names in otherUses are exempt.
func TestSettingSpelledOnce(t *testing.T) {
	if len(otherUses) > 5 {
		t.Fatalf("%d names exempt, at most 5", len(otherUses))
	}
	spellings := map[string]string{} // spelling -> setting
	for _, f := range AllFields() {
		spellings[f.Name] = f.Name
		spellings[f.Flag()] = f.Name
		for _, p := range f.Parts() {
			spellings[p.Name] = f.Name + "." + p.Name
			spellings[PartFlag(p)] = f.Name + "." + p.Name
		}
	}
	files := map[string]map[string]bool{} // setting -> files
	for _, root := range []string{"../cmd", "../server", "."} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if ast.IsGenerated(f) {
				return nil
			}
			for _, name := range spelledIn(f, spellings) {
				if files[name] == nil {
					files[name] = map[string]bool{}
				}
				files[name][filepath.ToSlash(path)] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, in := range files {
		top, _, _ := strings.Cut(name, ".")
		if _, ok := otherUses[top]; ok || len(in) <= 1 {
			continue
		}
		var paths []string
		for p := range in {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		t.Errorf("setting %s is spelled in %d files: %s", name, len(paths), strings.Join(paths, ", "))
	}
}

// spelledIn returns the settings whose spellings are string literals or
// json tags of f, leaving out the arguments of printers.
func spelledIn(f *ast.File, spellings map[string]string) []string {
	var out []string
	printed := map[*ast.BasicLit]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && slices.Contains(printers, sel.Sel.Name) {
				for _, a := range n.Args {
					if bl, ok := a.(*ast.BasicLit); ok {
						printed[bl] = true
					}
				}
			}
		case *ast.Field:
			if n.Tag != nil {
				tag, _ := strconv.Unquote(n.Tag.Value)
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if s, ok := spellings[name]; ok {
					out = append(out, s)
				}
				printed[n.Tag] = true // read as a tag, not as a literal
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING && !printed[n] {
				v, _ := strconv.Unquote(n.Value)
				if s, ok := spellings[v]; ok {
					out = append(out, s)
				}
			}
		}
		return true
	})
	return out
}
