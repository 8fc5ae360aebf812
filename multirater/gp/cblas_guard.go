//go:build cblas && !cgo

package gp

// The cblas build tag routes linear algebra to OpenBLAS and LAPACKE through
// cgo. Without cgo it must fail to compile rather than fall back silently to
// pure Go: the constant below is a deliberate type error whose message says
// what to do.
const _ = "the cblas build tag needs cgo: build with CGO_ENABLED=1 (and Debian libopenblas-dev and liblapacke-dev installed), or drop -tags cblas for the pure-Go build" + 1
