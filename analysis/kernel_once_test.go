package analysis

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"concord/multirater"
	"concord/multirater/kernel"
)

// TestKernelParsedOncePerFit: one fit of every model parses its kernel
// once (counted through the spec's injected parser): validation, the
// data's defaults, the model's defaults, the covariance, the terms to
// learn and the model's own checks read the one parse. A kernel whose
// text a step changes is parsed once more: the default kernel of a spec
// without one (not parsed while blank) and the kernel learnt by EP before
// Gibbs sampling.
func TestKernelParsedOncePerFit(t *testing.T) {
	for _, tc := range []struct {
		model, engine, kernel string
		scores                string
		want                  int
	}{
		{ModelOrdinal, multirater.EngineGibbs, "rbf:gamma=1", "", 1},
		{ModelOrdinal, multirater.EngineGibbs, "", "", 1}, // the default: identity
		{ModelOrdinal, multirater.EngineGibbs, "rbf", "", 2},
		{ModelOrdinal, multirater.EngineEP, "rbf", "", 1},
		{ModelOrdinal, multirater.EngineLaplace, "linear+rbf:gamma=0.5", "", 1},
		{ModelClassification, multirater.EngineGibbs, "rbf:gamma=1", "", 1},
		{ModelBounded, multirater.EngineEP, "rbf:gamma=1", "", 1},
		{ModelRobust, multirater.EngineEP, "rbf:gamma=1", "", 1},
		{ModelConfusion, multirater.EngineVB, "rbf:gamma=1", "", 1},
		{ModelAUC, multirater.EngineEP, "rbf:gamma=1", ScoresGP, 1},
	} {
		spec := FitSpec{Model: tc.model, Engine: tc.engine, Kernel: tc.kernel, Scores: tc.scores, Seed: 1}
		switch {
		case tc.model == ModelAUC:
			spec.Gamma = "3"
		case tc.engine == multirater.EngineGibbs:
			spec.Chains, spec.Samples, spec.Burnin = 2, 20, -1
		case tc.model != ModelConfusion:
			spec.Restarts = 1
		}
		var parsed []string
		spec.parser = func(s string) (kernel.Spec, error) {
			parsed = append(parsed, s)
			return kernel.ParseSpec(s)
		}
		if _, err := Fit(context.Background(), rangesData(t, tc.model), spec, nil); err != nil {
			t.Fatalf("%s/%s %q: %v", tc.model, tc.engine, tc.kernel, err)
		}
		if len(parsed) != tc.want {
			t.Errorf("%s/%s kernel %q: parsed %d times (%q), want %d", tc.model, tc.engine, tc.kernel, len(parsed), parsed, tc.want)
		}
	}
}

// kernelParsers are the non-test files of analysis that may parse a kernel
// text themselves, not through a spec's parse (FitSpec.kernelSpec), and
// how many calls each has, with why.
var kernelParsers = map[string]int{
	"spec.go":    2, // FitSpec's one parse (and a blank kernel's error)
	"fit.go":     1, // CheckKernelData: a spec's kernel against the project's items, before a fit is queued
	"models.go":  2, // a kernel term learnt by EP (a new text), a robust data's kernel without a Covariance's parse
	"predict.go": 1, // a fit result's kernel, to predict new items
	"eval.go":    1, // a fold's fit result's learnt kernel
	"auc.go":     1, // the auc fit result's kernel, to refit it for predictions
}

// TestKernelParseCalls: no other code of analysis parses a kernel text
// (kernel.ParseSpec, kernel.ParseKernel) than kernelParsers lists: code on
// a fit's path reads the spec's parse.
func TestKernelParseCalls(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "kernel" && (sel.Sel.Name == "ParseSpec" || sel.Sel.Name == "ParseKernel") {
					got[path]++
				}
			}
			return true
		})
	}
	for path, n := range got {
		if n != kernelParsers[path] {
			t.Errorf("%s parses a kernel text %d times, %d expected: read the spec's parse (FitSpec.kernelSpec) on a fit's path", path, n, kernelParsers[path])
		}
	}
	for path, n := range kernelParsers {
		if got[path] != n {
			t.Errorf("%s: %d parses listed, %d found", path, n, got[path])
		}
	}
}
