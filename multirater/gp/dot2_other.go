//go:build !amd64 || purego || cblas

package gp

// Without the assembly kernel (other architectures, -tags purego or cblas)
// haveAVX2FMA is false and SyrkUpperTrans and TrsmRightLowerTrans
// (syrktrsm.go) call gonum's (or, with cblas, OpenBLAS's) Dsyrk and Dtrsm;
// dot2x2 serves the tests only.

func dot2x2(a0, a1, b0, b1 []float64, n int) (d00, d01, d10, d11 float64) {
	return dot2x2Generic(a0, a1, b0, b1, n)
}
