//go:build amd64 && !purego && !cblas

#include "textflag.h"

// func dot2x2AVX2(a0, a1, b0, b1 *float64, n int) (d00, d01, d10, d11 float64)
//
// d00 = a0·b0, d01 = a0·b1, d10 = a1·b0, d11 = a1·b1 over n elements:
// eight elements a step, each product in lane k mod 4 of the accumulator
// of its half (elements 0-3 of the step in Y0-Y3, 4-7 in Y4-Y7), fused
// multiply-adds; then (lo + hi) per product, lanes ((0 + 2) + (1 + 3)),
// then the n mod 8 tail in order by scalar fused multiply-adds. dot2x2Generic
// computes the same sums in the same order.
TEXT ·dot2x2AVX2(SB), NOSPLIT, $0-72
	MOVQ   a0+0(FP), SI
	MOVQ   a1+8(FP), DI
	MOVQ   b0+16(FP), R8
	MOVQ   b1+24(FP), R9
	MOVQ   n+32(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ   CX, BX
	SHRQ   $3, BX
	JZ     d2_reduce

d2_loop:
	VMOVUPD     (SI), Y8
	VMOVUPD     (DI), Y9
	VMOVUPD     (R8), Y10
	VMOVUPD     (R9), Y11
	VMOVUPD     32(SI), Y12
	VMOVUPD     32(DI), Y13
	VMOVUPD     32(R8), Y14
	VMOVUPD     32(R9), Y15
	VFMADD231PD Y10, Y8, Y0
	VFMADD231PD Y11, Y8, Y1
	VFMADD231PD Y10, Y9, Y2
	VFMADD231PD Y11, Y9, Y3
	VFMADD231PD Y14, Y12, Y4
	VFMADD231PD Y15, Y12, Y5
	VFMADD231PD Y14, Y13, Y6
	VFMADD231PD Y15, Y13, Y7
	ADDQ        $64, SI
	ADDQ        $64, DI
	ADDQ        $64, R8
	ADDQ        $64, R9
	DECQ        BX
	JNZ         d2_loop

d2_reduce:
	// Per product: lo + hi, then lanes (0 + 2) + (1 + 3).
	VADDPD       Y4, Y0, Y0
	VADDPD       Y5, Y1, Y1
	VADDPD       Y6, Y2, Y2
	VADDPD       Y7, Y3, Y3
	VEXTRACTF128 $1, Y0, X4
	VADDPD       X4, X0, X0
	VPERMILPD    $1, X0, X4
	VADDSD       X4, X0, X0
	VEXTRACTF128 $1, Y1, X5
	VADDPD       X5, X1, X1
	VPERMILPD    $1, X1, X5
	VADDSD       X5, X1, X1
	VEXTRACTF128 $1, Y2, X6
	VADDPD       X6, X2, X2
	VPERMILPD    $1, X2, X6
	VADDSD       X6, X2, X2
	VEXTRACTF128 $1, Y3, X7
	VADDPD       X7, X3, X3
	VPERMILPD    $1, X3, X7
	VADDSD       X7, X3, X3
	ANDQ         $7, CX
	JZ           d2_done

d2_tail:
	VMOVSD      (SI), X8
	VMOVSD      (DI), X9
	VMOVSD      (R8), X10
	VMOVSD      (R9), X11
	VFMADD231SD X10, X8, X0
	VFMADD231SD X11, X8, X1
	VFMADD231SD X10, X9, X2
	VFMADD231SD X11, X9, X3
	ADDQ        $8, SI
	ADDQ        $8, DI
	ADDQ        $8, R8
	ADDQ        $8, R9
	DECQ        CX
	JNZ         d2_tail

d2_done:
	VMOVSD X0, d00+40(FP)
	VMOVSD X1, d01+48(FP)
	VMOVSD X2, d10+56(FP)
	VMOVSD X3, d11+64(FP)
	VZEROUPPER
	RET
