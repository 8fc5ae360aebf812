package textfeat

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelFor calls f(i) for i = 0..n-1 in parallel (see parallelForWith).
func parallelFor(n int, f func(i int)) {
	parallelForWith(n, func() struct{} { return struct{}{} }, func(_ struct{}, i int) { f(i) })
}

// parallelForWith calls f(w, i) for i = 0..n-1 on min(GOMAXPROCS, n)
// goroutines, handing out indices one at a time so that calls of unequal
// cost balance. Each goroutine gets its own w from newWorker.
func parallelForWith[W any](n int, newWorker func() W, f func(w W, i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			w := newWorker()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(w, i)
			}
		})
	}
	wg.Wait()
}
