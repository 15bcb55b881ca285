#include "textflag.h"

// func backdoorInOut(r *Regs)
// Regs is {AX, BX, CX, DX, SI, DI uint32}.
TEXT ·backdoorInOut(SB), NOSPLIT, $0-8
	MOVQ r+0(FP), R8
	MOVL 0(R8), AX
	MOVL 4(R8), BX
	MOVL 8(R8), CX
	MOVL 12(R8), DX
	MOVL 16(R8), SI
	MOVL 20(R8), DI
	INL
	MOVL AX, 0(R8)
	MOVL BX, 4(R8)
	MOVL CX, 8(R8)
	MOVL DX, 12(R8)
	MOVL SI, 16(R8)
	MOVL DI, 20(R8)
	RET

// func privilegedFault()
TEXT ·privilegedFault(SB), NOSPLIT, $0-0
	HLT
	RET
