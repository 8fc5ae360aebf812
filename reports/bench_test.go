package reports

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"time"

	"concord/annotations"
	"concord/multirater"
)

// bigFit is a SYNTHETIC ordinal fit result of n items, 10 raters and 5
// levels with 3 labels per item, shaped like FitOrdinal's (scores, ranks,
// grade distributions, diagnostics of every parameter, 1% flags), for the
// size tests. The numbers are random.
func bigFit(n int) *Fit {
	const nl, k = 10, 5
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	levels := []string{"1", "2", "3", "4", "5"}
	fit := &Fit{Schema: multirater.FitSchema, Levels: levels,
		Model: multirater.ModelSettings{Model: "ordinal", Scheme: "ordinal:1..5", Kernel: "identity", Identifiability: "weak", Sampler: "default",
			Chains: 4, Samples: 1000, Burnin: 500, Thin: 1, Seed: 5, V: 1, Lambda: 1, SigmaB: 1, FlagThreshold: 0.05, MaxRhat: 1.01, MinESS: 400, KeepDraws: 0, Backend: "gonum"},
		Diagnostics: multirater.Diagnostics{MaxRhat: 1.004, MinESSBulk: 800, MinESSTail: 900, Converged: true, Verdict: "converged", Seconds: 100, Draws: 4000},
	}
	for l := 0; l < nl; l++ {
		r := multirater.RaterResult{ID: fmt.Sprintf("rater%02d", l), LevelCounts: make([]int, k),
			Precision: multirater.Estimate{Mean: 1 + float64(l), SD: 0.2, Q025: 0.8 + float64(l), Q50: 1 + float64(l), Q975: 1.3 + float64(l)},
			Variance:  multirater.Estimate{Mean: 1 / (1 + float64(l)), SD: 0.05, Q025: 0.8 / (1 + float64(l)), Q50: 1 / (1 + float64(l)), Q975: 1.2 / (1 + float64(l))}}
		for j := 1; j < k; j++ {
			r.Thresholds = append(r.Thresholds, multirater.Threshold{Estimate: multirater.Estimate{Mean: float64(j) - 2.5, SD: 0.1, Q025: float64(j) - 2.7, Q50: float64(j) - 2.5, Q975: float64(j) - 2.3}, Between: [2]string{levels[j-1], levels[j]}})
		}
		fit.Raters = append(fit.Raters, r)
		fit.Diagnostics.Parameters = append(fit.Diagnostics.Parameters, multirater.ParamDiag{Name: "alpha[" + r.ID + "]", Mean: r.Precision.Mean, SD: 0.2, Rhat: 1.002, ESSBulk: 900, ESSTail: 1000})
	}
	fit.Items = make([]FitItem, n)
	for i := range fit.Items {
		m := rng.NormFloat64()
		id := "item" + strconv.Itoa(i)
		it := &fit.Items[i]
		it.ID, it.NLabels = id, 3
		it.Score = &multirater.Estimate{Mean: m, SD: 0.3, Q025: m - 0.6, Q50: m, Q975: m + 0.6}
		it.Rank = &multirater.RankSummary{Mean: float64(i + 1), Q025: math.Max(1, float64(i-50)), Q50: float64(i + 1), Q975: float64(i + 50)}
		it.Labels = map[string]string{}
		it.GradeProbs = map[string]float64{}
		for c, l := range levels {
			it.GradeProbs[l] = 0.2 + 0.01*float64(c)
		}
		it.Grade = levels[rng.IntN(k)]
		for _, l := range rng.Perm(nl)[:3] {
			v := rng.IntN(k)
			it.Labels[fit.Raters[l].ID] = levels[v]
			fit.Raters[l].NLabels++
			fit.Raters[l].LevelCounts[v]++
			if rng.IntN(300) == 0 {
				fit.Flags = append(fit.Flags, multirater.Flag{Item: id, Rater: fit.Raters[l].ID, Label: levels[v], Prob: rng.Float64() * 0.05, Expected: it.Grade})
			}
		}
		fit.Diagnostics.Parameters = append(fit.Diagnostics.Parameters, multirater.ParamDiag{Name: "m[" + id + "]", Mean: m, SD: 0.3, Rhat: 1 + rng.Float64()*0.012, ESSBulk: 300 + rng.Float64()*2000, ESSTail: 1000})
	}
	return fit
}

func bigReport(tb testing.TB, n int) *Report {
	rep, err := BuildFit(annotations.Project{Name: "big"}, bigFit(n), nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}

// peakHeap runs f and returns the largest growth of the live heap over
// its run (sampled every 10 ms, after a GC before the start). The heap
// includes garbage not yet collected: run with a low GOGC for the live set.
func peakHeap(f func()) (peak uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak = 0
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > base && m.HeapAlloc-base > peak {
					peak = m.HeapAlloc - base
				}
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return peak
}

// BenchmarkXLSXMemory writes the workbooks (charts included) of 10,000 and
// 100,000 items with GOGC 10, so that the heap is close to the live set,
// and reports the peak heap growth while writing (peak-MB) against the
// workbook's size (workbook-MB). The tables are streamed (excelize keeps at
// most a 16 MB chunk of a sheet in memory and spills the rest to a
// temporary file), so the growth is the compressed workbook, which
// excelize assembles in a bytes.Buffer before writing it out (up to 4
// times its size while the buffer grows by doubling), plus a working set of
// about 48 MB (a 16 MB stream chunk in a buffer of up to 32 MB, the
// pictures); the sheets' XML (about 150 MB for 100,000 items) is never in
// memory at once. A heap bound is a measurement that depends on the GC's
// timing under load, so it is reported here, not asserted by a test
// (measured on this project's 2-core machine: 100,000 items, a 21 MB
// workbook, peak growth 103 MB quiet, 135 MB seen under load).
func BenchmarkXLSXMemory(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			rep := bigReport(b, n)
			runtime.GC()
			var peak, size uint64
			for b.Loop() {
				p := peakHeap(func() {
					cw := &countWriter{}
					if err := WriteXLSX(cw, rep, XLSXOptions{}); err != nil {
						b.Fatal(err)
					}
					size = cw.n
				})
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
			b.ReportMetric(float64(size)/1e6, "workbook-MB")
			runtime.KeepAlive(rep)
		})
	}
}

type countWriter struct{ n uint64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += uint64(len(p)); return len(p), nil }

// BenchmarkWriteXLSX writes the workbook of a synthetic ordinal report
// (10 raters, 3 labels per item) for a ladder of sizes; peak-MB is the
// largest heap growth seen while writing.
func BenchmarkWriteXLSX(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 20_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			rep := bigReport(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			var peak uint64
			for i := 0; i < b.N; i++ {
				p := peakHeap(func() {
					if err := WriteXLSX(io.Discard, rep, XLSXOptions{NoCharts: true}); err != nil {
						b.Fatal(err)
					}
				})
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
		})
	}
}

// BenchmarkBuild builds the report of a synthetic fit result.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 20_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			fit := bigFit(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := BuildFit(annotations.Project{Name: "big"}, fit, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
