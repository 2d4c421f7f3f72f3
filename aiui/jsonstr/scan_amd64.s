#include "textflag.h"

// func plainRun(b []byte) (i, shrink int)
//
// SSE2 (every amd64 has it): sixteen bytes a step, a special byte found
// with two byte compares and one signed compare (0x20 > x catches control
// bytes and, as negative, every non-ASCII byte). A backslash followed by
// a one-letter escape is consumed in the loop; anything else stops it.
TEXT ·plainRun(SB), NOSPLIT, $0-40
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), DX
	XORQ AX, AX
	XORQ BX, BX
	MOVQ $0x2222222222222222, R8
	MOVQ R8, X1
	PUNPCKLQDQ X1, X1
	MOVQ $0x5c5c5c5c5c5c5c5c, R8
	MOVQ R8, X2
	PUNPCKLQDQ X2, X2
	MOVQ $0x2020202020202020, R8
	MOVQ R8, X3
	PUNPCKLQDQ X3, X3
	// bitmaps of the letters after a backslash that make a one-letter
	// escape: " / below 64, \ b f n r t from 64
	MOVQ $0x0000800400000000, R9
	MOVQ $0x0014404410000000, R10

loop:
	LEAQ 16(AX), CX
	CMPQ CX, DX
	JA   done
	MOVOU (SI)(AX*1), X0
	MOVO X0, X4
	PCMPEQB X1, X4
	MOVO X0, X5
	PCMPEQB X2, X5
	POR  X5, X4
	MOVO X3, X6
	PCMPGTB X0, X6
	POR  X6, X4
	PMOVMSKB X4, CX
	TESTL CX, CX
	JNZ  special
	ADDQ $16, AX
	JMP  loop

special:
	BSFL CX, CX
	ADDQ CX, AX
	MOVBLZX (SI)(AX*1), CX
	CMPQ CX, $0x5c
	JNE  done
	LEAQ 1(AX), R11
	CMPQ R11, DX
	JAE  done
	MOVBLZX (SI)(R11*1), CX
	CMPQ CX, $64
	JAE  high
	BTQ  CX, R9
	JCC  done
	JMP  escaped

high:
	CMPQ CX, $128
	JAE  done
	SUBQ $64, CX
	BTQ  CX, R10
	JCC  done

escaped:
	ADDQ $2, AX
	INCQ BX
	JMP  loop

done:
	MOVQ AX, i+24(FP)
	MOVQ BX, shrink+32(FP)
	RET
