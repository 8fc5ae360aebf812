package docs

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "concord"

// tableRow is a row of a Markdown table whose first cell is a package
// path in backquotes: "| `multirater/gp` | ...".
var tableRow = regexp.MustCompile("^\\| `([a-z0-9_/]+)` \\|")

// documented returns the packages that the table under the heading
// "## Packages" of an architecture page names, in order.
func documented(page string) []string {
	var out []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(page))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages"
			continue
		}
		if m := tableRow.FindStringSubmatch(line); in && m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// layerPackages returns the packages named in backquotes in the "packages"
// column of the layer table (rows "| N: ... | `a`, `b` | ... |") under
// "## Import rules", as paths under multirater ("multirater" for the
// root).
func layerPackages(page string) []string {
	var out []string
	in := false
	row := regexp.MustCompile(`^\| [0-9]: [^|]*\| ([^|]*) \|`)
	name := regexp.MustCompile("`([a-z0-9_/]+)`")
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = line == "## Import rules"
			continue
		}
		m := row.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			p := "multirater/" + n[1]
			if n[1] == "multirater" {
				p = "multirater"
			}
			out = append(out, p)
		}
	}
	return out
}

// differences returns the packages of the tree that the page misses and
// the packages the page names that the tree does not have (or names
// twice), each sorted.
func differences(tree, page []string) (missing, unknown []string) {
	seen := map[string]int{}
	for _, p := range page {
		seen[p]++
		if seen[p] == 2 || !slices.Contains(tree, p) {
			unknown = append(unknown, p)
		}
	}
	for _, p := range tree {
		if seen[p] == 0 {
			missing = append(missing, p)
		}
	}
	slices.Sort(missing)
	slices.Sort(unknown)
	return missing, unknown
}

// treePackages lists the module's packages, module prefix removed.
func treePackages(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(p, module+"/"))
	}
	return pkgs
}

// TestArchitecturePackages: architecture.md's package table names every
// package of the tree once and no other, and its layer table only
// packages under multirater that exist.
func TestArchitecturePackages(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	tree := treePackages(t)
	if !slices.Contains(tree, "multirater/gp") || !slices.Contains(tree, "docs") {
		t.Fatalf("go list %s/... did not list the tree: %v", module, tree)
	}
	missing, unknown := differences(tree, documented(page))
	for _, p := range missing {
		t.Errorf("docs/architecture.md: package %s is in the tree but not in the table under \"## Packages\"", p)
	}
	for _, p := range unknown {
		t.Errorf("docs/architecture.md: the table under \"## Packages\" names %s, which is not a package of the tree (or is named twice)", p)
	}
	layers := layerPackages(page)
	if len(layers) == 0 {
		t.Fatal(`docs/architecture.md: no layer table under "## Import rules"`)
	}
	for _, p := range layers {
		if !slices.Contains(tree, p) {
			t.Errorf("docs/architecture.md: the layer table names %s, which is not a package of the tree", p)
		}
	}
}

// TestArchitectureDifferences checks that the comparison catches each kind
// of drift, on a small page.
func TestArchitectureDifferences(t *testing.T) {
	const page = "# A\n\n## Packages\n\n| package | what |\n|---|---|\n| `a` | x |\n| `b/c` | y |\n\n" +
		"## Import rules\n\n| layer | packages | may import |\n|---|---|---|\n| 1: leaves | `gp`, `lik` | nothing |\n| 0: root | `multirater` | nothing |\n\n" +
		"## Other\n\n| `z` | not a package row of the table |\n"
	if got, want := documented(page), []string{"a", "b/c"}; !slices.Equal(got, want) {
		t.Fatalf("documented = %v, want %v", got, want)
	}
	if got, want := layerPackages(page), []string{"multirater/gp", "multirater/lik", "multirater"}; !slices.Equal(got, want) {
		t.Fatalf("layerPackages = %v, want %v", got, want)
	}
	cases := []struct {
		name             string
		tree, page       []string
		missing, unknown []string
	}{
		{"same", []string{"a", "b"}, []string{"b", "a"}, nil, nil},
		{"moved", []string{"a", "b/c"}, []string{"a", "b"}, []string{"b/c"}, []string{"b"}},
		{"new package", []string{"a", "b", "c"}, []string{"a", "b"}, []string{"c"}, nil},
		{"gone package", []string{"a"}, []string{"a", "b"}, nil, []string{"b"}},
		{"twice", []string{"a"}, []string{"a", "a"}, nil, []string{"a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			missing, unknown := differences(c.tree, c.page)
			if !slices.Equal(missing, c.missing) || !slices.Equal(unknown, c.unknown) {
				t.Errorf("differences = %v, %v; want %v, %v", missing, unknown, c.missing, c.unknown)
			}
		})
	}
}
