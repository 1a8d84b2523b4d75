#include "textflag.h"

// func Lines(addrs []uintptr)
TEXT ·Lines(SB), NOSPLIT, $0-24
	MOVQ addrs_base+0(FP), SI
	MOVQ addrs_len+8(FP), CX
	TESTQ CX, CX
	JEQ done
loop:
	MOVQ (SI), AX
	PREFETCHT0 (AX)
	ADDQ $8, SI
	DECQ CX
	JNE loop
done:
	RET

// func Keyed(base uintptr, shift uint, p unsafe.Pointer, n int, stride uintptr)
TEXT ·Keyed(SB), NOSPLIT, $0-40
	MOVQ base+0(FP), BX
	MOVQ shift+8(FP), CX
	MOVQ p+16(FP), SI
	MOVQ n+24(FP), DX
	MOVQ stride+32(FP), DI
	TESTQ DX, DX
	JLE keyedDone
keyedLoop:
	MOVL (SI), AX
	SHLQ CX, AX
	PREFETCHT0 (BX)(AX*1)
	ADDQ DI, SI
	DECQ DX
	JNE keyedLoop
keyedDone:
	RET
