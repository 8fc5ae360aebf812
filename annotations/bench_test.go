package annotations

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"testing"
)

var benchCSV sync.Map // n -> []byte

// longCSV returns a long-form CSV of n labels: items of 10 labels each by
// raters out of a pool of 1,000, labels 1..5.
func longCSV(n int) []byte {
	if b, ok := benchCSV.Load(n); ok {
		return b.([]byte)
	}
	var b bytes.Buffer
	b.Grow(n * 24)
	b.WriteString("item_id,rater_id,label\n")
	for i := 0; i < n; i++ {
		item, k := i/10, i%10
		b.WriteString("item")
		b.WriteString(strconv.Itoa(item))
		b.WriteString(",rater")
		b.WriteString(strconv.Itoa((item*7 + k*97) % 1000))
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(1 + (item+k)%5))
		b.WriteByte('\n')
	}
	benchCSV.Store(n, b.Bytes())
	return b.Bytes()
}

var benchSizes = []int{10_000, 100_000, 1_000_000}

// benchLongCSV runs one benchmark per size of benchSizes, each timing
// step on the long-form CSV of that many labels, and reports labels/s.
func benchLongCSV(b *testing.B, step func(b *testing.B, data []byte, n int)) {
	for _, n := range benchSizes {
		data := longCSV(n)
		b.Run(fmt.Sprintf("labels=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				step(b, data, n)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "labels/s")
		})
	}
}

// BenchmarkReadLabelsCSV parses long-form CSV (ReadLabels only).
func BenchmarkReadLabelsCSV(b *testing.B) {
	benchLongCSV(b, func(b *testing.B, data []byte, n int) {
		p, err := ReadLabels(bytes.NewReader(data), ReadOptions{})
		if err != nil || len(p.Labels) != n {
			b.Fatal(err)
		}
	})
}

// BenchmarkLoadCSV parses and validates (ReadLabels + BuildDataset): the
// part of an import that precedes the database.
func BenchmarkLoadCSV(b *testing.B) {
	s := MustParseScheme("ordinal:1..5")
	benchLongCSV(b, func(b *testing.B, data []byte, n int) {
		p, err := ReadLabels(bytes.NewReader(data), ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ds, err := BuildDataset(s, p, nil, ReadOptions{})
		if err != nil || len(ds.Labels) != n {
			b.Fatal(err)
		}
	})
}

// BenchmarkWriteCSVLong writes labels back out.
func BenchmarkWriteCSVLong(b *testing.B) {
	s := MustParseScheme("ordinal:1..5")
	for _, n := range benchSizes {
		p, err := ReadLabels(bytes.NewReader(longCSV(n)), ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ds, err := BuildDataset(s, p, nil, ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("labels=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := WriteCSVLong(&buf, ds); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "labels/s")
		})
	}
}
