//go:build amd64 && !purego && !cblas

#include "textflag.h"

// AVX2 and FMA kernels for matvec32.go: float32 matrix rows, float64 vectors
// and sums. The lanes and the order of the sums match the portable versions
// exactly.

// func dotF32AVX2(a []float32, x []float64) float64
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-56
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   x_base+24(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD X8, X8, X8
	MOVQ   CX, BX
	SHRQ   $4, BX
	JZ     dot_tail

dot_loop:
	// Sixteen elements: lanes 0-3 in Y0, 4-7 in Y1, 8-11 in Y2, 12-15 in Y3.
	VCVTPS2PD   (SI), Y4
	VCVTPS2PD   16(SI), Y5
	VCVTPS2PD   32(SI), Y6
	VCVTPS2PD   48(SI), Y7
	VFMADD231PD (DI), Y4, Y0
	VFMADD231PD 32(DI), Y5, Y1
	VFMADD231PD 64(DI), Y6, Y2
	VFMADD231PD 96(DI), Y7, Y3
	ADDQ        $64, SI
	ADDQ        $128, DI
	DECQ        BX
	JNZ         dot_loop

dot_tail:
	ANDQ $15, CX
	JZ   dot_reduce

dot_tail_loop:
	VCVTSS2SD   (SI), X9, X9
	VFMADD231SD (DI), X9, X8
	ADDQ        $4, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         dot_tail_loop

dot_reduce:
	// s = (Y0 + Y1) + (Y2 + Y3); ((s0 + s2) + (s1 + s3)) + tail.
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	VADDSD       X8, X0, X0
	VMOVSD       X0, ret+48(FP)
	VZEROUPPER
	RET

// func axpyF32AVX2(alpha float64, a []float32, y []float64)
TEXT ·axpyF32AVX2(SB), NOSPLIT, $0-56
	VBROADCASTSD alpha+0(FP), Y0
	MOVQ         a_base+8(FP), SI
	MOVQ         a_len+16(FP), CX
	MOVQ         y_base+32(FP), DI
	MOVQ         CX, BX
	SHRQ         $4, BX
	JZ           axpy_tail

axpy_loop:
	VCVTPS2PD   (SI), Y4
	VCVTPS2PD   16(SI), Y5
	VCVTPS2PD   32(SI), Y6
	VCVTPS2PD   48(SI), Y7
	VFMADD213PD (DI), Y0, Y4
	VFMADD213PD 32(DI), Y0, Y5
	VFMADD213PD 64(DI), Y0, Y6
	VFMADD213PD 96(DI), Y0, Y7
	VMOVUPD     Y4, (DI)
	VMOVUPD     Y5, 32(DI)
	VMOVUPD     Y6, 64(DI)
	VMOVUPD     Y7, 96(DI)
	ADDQ        $64, SI
	ADDQ        $128, DI
	DECQ        BX
	JNZ         axpy_loop

axpy_tail:
	ANDQ $15, CX
	JZ   axpy_done

axpy_tail_loop:
	VCVTSS2SD   (SI), X9, X9
	VFMADD213SD (DI), X0, X9
	VMOVSD      X9, (DI)
	ADDQ        $4, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         axpy_tail_loop

axpy_done:
	VZEROUPPER
	RET

// func axpy2F32AVX2(a1, a2 float64, a []float32, y1, y2 []float64)
TEXT ·axpy2F32AVX2(SB), NOSPLIT, $0-88
	VBROADCASTSD a1+0(FP), Y0
	VBROADCASTSD a2+8(FP), Y1
	MOVQ         a_base+16(FP), SI
	MOVQ         a_len+24(FP), CX
	MOVQ         y1_base+40(FP), DI
	MOVQ         y2_base+64(FP), DX
	MOVQ         CX, BX
	SHRQ         $3, BX
	JZ           axpy2_tail

axpy2_loop:
	VCVTPS2PD   (SI), Y4
	VCVTPS2PD   16(SI), Y5
	VMOVAPD     Y4, Y6
	VMOVAPD     Y5, Y7
	VFMADD213PD (DI), Y0, Y4
	VFMADD213PD 32(DI), Y0, Y5
	VFMADD213PD (DX), Y1, Y6
	VFMADD213PD 32(DX), Y1, Y7
	VMOVUPD     Y4, (DI)
	VMOVUPD     Y5, 32(DI)
	VMOVUPD     Y6, (DX)
	VMOVUPD     Y7, 32(DX)
	ADDQ        $32, SI
	ADDQ        $64, DI
	ADDQ        $64, DX
	DECQ        BX
	JNZ         axpy2_loop

axpy2_tail:
	ANDQ $7, CX
	JZ   axpy2_done

axpy2_tail_loop:
	VCVTSS2SD   (SI), X9, X9
	VMOVAPD     X9, X10
	VFMADD213SD (DI), X0, X9
	VFMADD213SD (DX), X1, X10
	VMOVSD      X9, (DI)
	VMOVSD      X10, (DX)
	ADDQ        $4, SI
	ADDQ        $8, DI
	ADDQ        $8, DX
	DECQ        CX
	JNZ         axpy2_tail_loop

axpy2_done:
	VZEROUPPER
	RET
