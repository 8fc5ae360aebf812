// Command cost compares analysis.ExpectedCost with the CPU seconds that the
// shared ladder measured: it reads the ladder's results.jsonl files (the
// arguments) and prints, for each run, the estimate, the measured CPU
// seconds, their ratio and whether they are within a factor of two.
//
//	go run ./docs/scripts/cost /tmp/cost-ladder/a/results.jsonl ...
//
// See README.md for the ladder commands and the calibration table.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"concord/analysis"
)

// family is the spec that the ladder's family fits (its flags, and the
// kernel its data's defaults give). The ladder's "ordinal-gibbs" rows fit
// the ordinal model's default, whose engine is now EP.
var family = map[string]analysis.FitSpec{
	"ordinal-gibbs":             {Model: "ordinal", Engine: "ep", Kernel: "identity"},
	"ordinal-gibbs-text":        {Model: "ordinal", Engine: "ep", Kernel: "text"},
	"ordinal-gibbs-rbf":         {Model: "ordinal", Engine: "ep", Kernel: "rbf:gamma=0.125"},
	"ordinal-ep":                {Model: "ordinal", Engine: "ep", Kernel: "identity"},
	"ordinal-ep-text":           {Model: "ordinal", Engine: "ep", Kernel: "text"},
	"ordinal-laplace-text":      {Model: "ordinal", Engine: "laplace", Kernel: "text"},
	"classification-gibbs":      {Model: "classification", Engine: "gibbs", Kernel: "identity"},
	"classification-gibbs-text": {Model: "classification", Engine: "gibbs", Kernel: "text"},
	"confusion-vb":              {Model: "confusion", Engine: "vb", Kernel: "identity"},
	"confusion-vb-text":         {Model: "confusion", Engine: "vb", Kernel: "text"},
	"bounded-ep":                {Model: "bounded", Engine: "ep", Kernel: "identity"},
	"bounded-ep-text":           {Model: "bounded", Engine: "ep", Kernel: "text"},
	"robust-ep":                 {Model: "robust", Engine: "ep", Kernel: "identity"},
	"robust-ep-rbf":             {Model: "robust", Engine: "ep", Kernel: "rbf"},
	"auc-ep":                    {Model: "auc", Engine: "ep"},
	"auc-ep-gp":                 {Model: "auc", Engine: "ep", Scores: "gp"},
}

type run struct {
	Family string  `json:"family"`
	N      int     `json:"n"`
	Labels int     `json:"labels"`
	CPU    float64 `json:"cpu"`
	Status string  `json:"status"`
}

func main() {
	fmt.Printf("%-26s %6s %7s %9s %9s %6s %s\n", "family", "items", "labels", "est CPU s", "CPU s", "ratio", "within 2x")
	for _, path := range os.Args[1:] {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var r run
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			spec, ok := family[r.Family]
			if !ok {
				continue
			}
			est := analysis.ExpectedCost(spec.WithDefaults(), r.Labels, r.N).CPU.Seconds()
			ratio := est / r.CPU
			within := "yes"
			if ratio > 2 || ratio < 0.5 {
				within = "no"
			}
			status := ""
			if r.Status != "ok" {
				// Stopped at a limit: the CPU seconds are a lower bound,
				// the ratio an upper one.
				status = " (" + r.Status + ": CPU s at least)"
				if ratio >= 0.5 {
					within = "unknown"
				}
			}
			fmt.Printf("%-26s %6d %7d %9.2f %9.2f %6.2f %s%s\n", r.Family, r.N, r.Labels, est, r.CPU, ratio, within, status)
		}
		f.Close()
	}
}
