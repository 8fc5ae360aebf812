package db

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"concord/annotations"
)

// benchSizes is the ladder of label counts: 10 labels per item by 10 of 50
// raters, ordinal 1..5.
var benchSizes = []int{10_000, 100_000, 1_000_000}

// benchBackends is SQLite, and PostgreSQL when CONCORD_TEST_POSTGRES_DSN is
// set (benchmarks never require it).
func benchBackends() []backend {
	bs := []backend{sqliteBackend}
	if base := os.Getenv(postgresDSNEnv); base != "" {
		bs = append(bs, backend{name: "postgres", dsn: func(tb testing.TB) string { return postgresSchema(tb, base) }})
	}
	return bs
}

// benchLadder runs f as a sub-benchmark for each backend and each size of
// the ladder (n labels), with the size's dataset.
func benchLadder(b *testing.B, f func(b *testing.B, be backend, n int, ds *annotations.Dataset)) {
	for _, be := range benchBackends() {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/labels=%d", be.name, n), func(b *testing.B) { f(b, be, n, makeDataset(n/10, 50, 10)) })
		}
	}
}

// benchProject opens a database of be and imports ds into a new project.
func benchProject(ctx context.Context, b *testing.B, be backend, ds *annotations.Dataset) (*DB, *annotations.Project) {
	b.Helper()
	d := be.open(b)
	p := newProject(b, d, "bench", "ordinal:1..5")
	_, err := d.Import(ctx, p.ID, ds, annotations.ImportOptions{})
	must(b, err)
	return d, p
}

// BenchmarkImport imports a dataset into a fresh project of a fresh database
// (a new SQLite file per iteration); only Import is timed.
func BenchmarkImport(b *testing.B) {
	ctx := context.Background()
	benchLadder(b, func(b *testing.B, be backend, n int, ds *annotations.Dataset) {
		var cpu time.Duration
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			d := be.open(b)
			p := newProject(b, d, "bench", "ordinal:1..5")
			c0 := cpuTime()
			b.StartTimer()
			res, err := d.Import(ctx, p.ID, ds, annotations.ImportOptions{})
			b.StopTimer()
			cpu += cpuTime() - c0
			if err != nil || res.LabelsAdded != n {
				b.Fatalf("import: %+v, %v", res, err)
			}
			must(b, d.Close())
			b.StartTimer()
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "labels/s")
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	})
}

// cpuTime returns the CPU time (user and system) this process has used: on
// a shared machine a steadier measure than wall time (for SQLite it is the
// whole cost; PostgreSQL's server work is not included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReimport imports the same dataset again into a project that holds
// it already: the idempotent path (every label unchanged).
func BenchmarkReimport(b *testing.B) {
	ctx := context.Background()
	benchLadder(b, func(b *testing.B, be backend, n int, ds *annotations.Dataset) {
		d, p := benchProject(ctx, b, be, ds)
		b.ReportAllocs()
		c0 := cpuTime()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := d.Import(ctx, p.ID, ds, annotations.ImportOptions{})
			if err != nil || res.LabelsUnchanged != n {
				b.Fatalf("re-import: %+v, %v", res, err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "labels/s")
		b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op")
	})
}

// BenchmarkDataset reads a whole project back.
func BenchmarkDataset(b *testing.B) {
	ctx := context.Background()
	benchLadder(b, func(b *testing.B, be backend, n int, ds *annotations.Dataset) {
		d, p := benchProject(ctx, b, be, ds)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			ds, err := d.Dataset(ctx, p.ID)
			if err != nil || len(ds.Labels) != n {
				b.Fatalf("dataset: %d labels, %v", len(ds.Labels), err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "labels/s")
	})
}
