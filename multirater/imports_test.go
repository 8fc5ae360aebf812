package multirater_test

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The import rules of docs/architecture.md, on the direct (non-test)
// imports of every package of the module. Inside multirater a fit is
// prior x likelihood x engine: families -> infer -> engines -> {gp, lik, design} ->
// {numeric, kernel, diag} -> root.
const module = "concord"

// layer of each multirater package; a package may import only packages of
// a lower layer, except where allowed says otherwise. Layer 1 (the leaves)
// imports nothing of concord, not even the root.
var layers = map[string]int{
	"multirater":         0,
	"multirater/numeric": 1,
	"multirater/diag":    1,
	"multirater/kernel":  1,
	"multirater/gp":      2,
	"multirater/lik":     2,
	"multirater/design":  2,
	"multirater/mcmc":    3,
	"multirater/ep":      3,
	"multirater/laplace": 3,
	// The deterministic driver runs either engine and maximises the evidence.
	"multirater/infer":     4,
	"multirater/ordinal":   5,
	"multirater/classify":  5,
	"multirater/bounded":   5,
	"multirater/robust":    5,
	"multirater/auc":       5,
	"multirater/confusion": 5,
	// Test helpers may use any engine (mcmctest: the MCMC engine's
	// samplers), never a family; the likelihood conformance kit sits on
	// lik.
	"multirater/mcmc/mcmctest": 4,
	"multirater/lik/liktest":   3,
	"multirater/gp/gptest":     3,
}

// violations returns the broken rules of the import graph deps (package
// path, module prefix removed -> its direct imports of the module).
func violations(deps map[string][]string) []string {
	var out []string
	bad := func(pkg, imp, why string) { out = append(out, pkg+" imports "+imp+": "+why) }
	for pkg, imps := range deps {
		inMR := pkg == "multirater" || strings.HasPrefix(pkg, "multirater/")
		for _, imp := range imps {
			impMR := imp == "multirater" || strings.HasPrefix(imp, "multirater/")
			switch {
			case inMR && !impMR:
				bad(pkg, imp, "the statistics import nothing outside multirater (no analysis, server, reports, db, cmd)")
			case inMR:
				lp, okp := layers[pkg]
				li, oki := layers[imp]
				if !okp {
					bad(pkg, imp, "package not in the layer table of the import rules (add it)")
					continue
				}
				if !oki {
					bad(pkg, imp, "imported package not in the layer table of the import rules (add it)")
					continue
				}
				if lp == 1 {
					bad(pkg, imp, "a leaf (numeric, diag, kernel) imports nothing of concord")
				} else if li >= lp {
					switch {
					case li == 5 && lp == 5:
						bad(pkg, imp, "model families do not import each other")
					case li == 5:
						bad(pkg, imp, "engines and shared packages import no model family")
					default:
						bad(pkg, imp, "imports go down the layers: families -> infer -> engines -> {gp, lik, design} -> {numeric, kernel, diag} -> root")
					}
				}
			case impMR && (pkg == "reports" || pkg == "server" || strings.HasPrefix(pkg, "cmd/")):
				if imp != "multirater" && imp != "multirater/diag" {
					bad(pkg, imp, "reports, server and cmd import the root (and at most multirater/diag), never an engine or a model family")
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestImportRules(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...")
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(outb)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(f[0], module+"/")
		deps[pkg] = nil
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module+"/") {
				deps[pkg] = append(deps[pkg], strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
	for _, want := range []string{"multirater", "multirater/gp", "multirater/ordinal", "multirater/classify", "reports", "server", "cmd/concord"} {
		if _, ok := deps[want]; !ok {
			t.Fatalf("go list did not list %s/%s", module, want)
		}
	}
	for _, v := range violations(deps) {
		t.Error(v)
	}
}

// TestImportRulesCatch checks that the rules catch each kind of violation.
func TestImportRulesCatch(t *testing.T) {
	cases := []struct {
		pkg, imp, want string
	}{
		{"multirater", "multirater/gp", "imports go down the layers"},
		{"multirater/kernel", "multirater", "a leaf"},
		{"multirater/gp", "multirater/mcmc", "imports go down the layers"},
		{"multirater/mcmc", "multirater/ordinal", "import no model family"},
		{"multirater/ep", "multirater/infer", "imports go down the layers"},
		{"multirater/infer", "multirater/ordinal", "import no model family"},
		{"multirater/ordinal", "multirater/classify", "do not import each other"},
		{"multirater/ordinal", "analysis", "nothing outside multirater"},
		{"multirater/newthing", "multirater", "not in the layer table"},
		{"server", "multirater/classify", "never an engine or a model family"},
		{"reports", "multirater/mcmc", "never an engine or a model family"},
		{"cmd/concord", "multirater/ordinal", "never an engine or a model family"},
	}
	for _, tc := range cases {
		got := violations(map[string][]string{tc.pkg: {tc.imp}})
		if len(got) != 1 || !strings.Contains(got[0], tc.want) {
			t.Errorf("%s -> %s: got %q, want one violation containing %q", tc.pkg, tc.imp, got, tc.want)
		}
	}
	ok := map[string][]string{
		"multirater/ordinal": {"multirater", "multirater/mcmc", "multirater/gp", "multirater/numeric", "multirater/design", "multirater/diag", "multirater/kernel"},
		"multirater/gp":      {"multirater", "multirater/numeric", "multirater/kernel"},
		"reports":            {"multirater", "multirater/diag", "raters"},
		"analysis":           {"multirater/ordinal", "multirater/classify", "multirater/mcmc"},
	}
	if got := violations(ok); len(got) != 0 {
		t.Errorf("allowed imports reported: %q", got)
	}
}
