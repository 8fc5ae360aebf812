package textfeat

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelForWith calls f(s, i) for i = 0..n-1 on min(GOMAXPROCS, n) goroutines,
// handing out indices one at a time so that calls of unequal cost balance.
// newWorker, if not nil, is called once per goroutine and its result passed
// to every f of that goroutine.
func parallelForWith[S any](n int, newWorker func() S, f func(s S, i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var s S
			if newWorker != nil {
				s = newWorker()
			}
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(s, i)
			}
		})
	}
	wg.Wait()
}

// parallelFor calls f(i) for i = 0..n-1 in parallel (see parallelForWith).
func parallelFor(n int, f func(i int)) {
	parallelForWith[struct{}](n, nil, func(_ struct{}, i int) { f(i) })
}

// parallelRows calls row(x, i) for i = 0..n-1 in parallel. Each goroutine
// owns a zeroed scratch slice x of length d, which row must leave zeroed.
func parallelRows(n, d int, row func(x []float64, i int)) {
	parallelForWith(n, func() []float64 { return make([]float64, d) }, row)
}
