#include "textflag.h"

// One-letter escape letters (" / \ b f n r t), classified by nibble: a
// byte is one when hiNibble[x>>4] & loNibble[x&15] is not zero. Each
// table is sixteen bytes, twice, for VPSHUFB's two lanes.
DATA hiNibble<>+0(SB)/8, $0x0804020000010000
DATA hiNibble<>+8(SB)/8, $0x0000000000000000
DATA hiNibble<>+16(SB)/8, $0x0804020000010000
DATA hiNibble<>+24(SB)/8, $0x0000000000000000
GLOBL hiNibble<>(SB), RODATA|NOPTR, $32
DATA loNibble<>+0(SB)/8, $0x00040008000d0000
DATA loNibble<>+8(SB)/8, $0x0104000200000000
DATA loNibble<>+16(SB)/8, $0x00040008000d0000
DATA loNibble<>+24(SB)/8, $0x0104000200000000
GLOBL loNibble<>(SB), RODATA|NOPTR, $32

// func plainRun(b []byte) (i, shrink int)
//
// With AVX2, 64 bytes a step and no branch per escape: bitmaps of the
// block's backslashes, its other special bytes and its bytes that are not
// escape letters; from the backslashes, the bytes they escape (runs of
// backslashes included: simdjson's find_escaped). The block is consumed
// unless an unescaped special byte, or a backslash escaping anything but
// a one-letter escape, stops the run inside it; a block ending in a
// backslash that starts an escape leaves that backslash to the next.
//
// Then (and without AVX2, for all of b) SSE2, sixteen bytes a step: a
// special byte found with two byte compares and one signed compare
// (0x20 > x catches control bytes and, as negative, every non-ASCII
// byte). A backslash followed by a one-letter escape is consumed in the
// loop; anything else stops it.
TEXT ·plainRun(SB), NOSPLIT, $0-40
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), DX
	XORQ AX, AX
	XORQ BX, BX
	CMPQ DX, $64
	JB   sse
	CMPB ·useAVX2(SB), $0
	JEQ  sse

	// VEX moves only from here on: a legacy SSE instruction while the
	// upper halves are in use costs a state transition
	MOVQ $0x2222222222222222, R8
	VMOVQ R8, X1
	VPBROADCASTQ X1, Y1
	MOVQ $0x5c5c5c5c5c5c5c5c, R8
	VMOVQ R8, X2
	VPBROADCASTQ X2, Y2
	MOVQ $0x2020202020202020, R8
	VMOVQ R8, X3
	VPBROADCASTQ X3, Y3
	MOVQ $0x0f0f0f0f0f0f0f0f, R8
	VMOVQ R8, X6
	VPBROADCASTQ X6, Y6
	VMOVDQU hiNibble<>(SB), Y7
	VMOVDQU loNibble<>(SB), Y9
	VPXOR Y10, Y10, Y10
	MOVQ $0x5555555555555555, DI

block:
	LEAQ 64(AX), CX
	CMPQ CX, DX
	JA   blocksdone
	VMOVDQU (SI)(AX*1), Y0
	VMOVDQU 32(SI)(AX*1), Y8

	// R8: backslashes
	VPCMPEQB Y0, Y2, Y4
	VPMOVMSKB Y4, R8
	VPCMPEQB Y8, Y2, Y4
	VPMOVMSKB Y4, CX
	SHLQ $32, CX
	ORQ  CX, R8

	// R9: quotes, control bytes, non-ASCII
	VPCMPEQB Y0, Y1, Y4
	VPCMPGTB Y0, Y3, Y5
	VPOR Y4, Y5, Y4
	VPMOVMSKB Y4, R9
	VPCMPEQB Y8, Y1, Y4
	VPCMPGTB Y8, Y3, Y5
	VPOR Y4, Y5, Y4
	VPMOVMSKB Y4, CX
	SHLQ $32, CX
	ORQ  CX, R9

	// R10: not an escape letter
	VPSRLW $4, Y0, Y5
	VPAND Y6, Y5, Y5
	VPSHUFB Y5, Y7, Y5
	VPAND Y6, Y0, Y4
	VPSHUFB Y4, Y9, Y4
	VPAND Y4, Y5, Y4
	VPCMPEQB Y10, Y4, Y4
	VPMOVMSKB Y4, R10
	VPSRLW $4, Y8, Y5
	VPAND Y6, Y5, Y5
	VPSHUFB Y5, Y7, Y5
	VPAND Y6, Y8, Y4
	VPSHUFB Y4, Y9, Y4
	VPAND Y4, Y5, Y4
	VPCMPEQB Y10, Y4, Y4
	VPMOVMSKB Y4, CX
	SHLQ $32, CX
	ORQ  CX, R10

	// R11: escaped bytes. follows = bs<<1; oddStarts = bs &^ even &^
	// follows; escaped = (even ^ (oddStarts+bs)<<1) & follows
	MOVQ R8, R11
	SHLQ $1, R11
	MOVQ DI, R12
	NOTQ R12
	ANDQ R8, R12
	MOVQ R11, CX
	NOTQ CX
	ANDQ CX, R12
	ADDQ R8, R12
	SHLQ $1, R12
	XORQ DI, R12
	ANDQ R12, R11

	// R9: where the run stops: an unescaped special, or the backslash
	// before an escaped byte that is not a letter
	MOVQ R11, CX
	NOTQ CX
	ANDQ CX, R9
	ANDQ R11, R10
	SHRQ $1, R10
	ORQ  R10, R9
	JNZ  stop

	// an escape starting in the last byte waits for the next block. A
	// branch, not arithmetic, so the next block's loads need not wait
	// for this block's bitmaps.
	POPCNTQ R11, R12
	ADDQ R12, BX
	ADDQ $64, AX
	MOVQ R11, CX
	NOTQ CX
	ANDQ CX, R8
	BTQ  $63, R8
	JCC  block
	DECQ AX
	JMP  block

stop:
	BSFQ R9, CX
	ADDQ CX, AX
	MOVQ $1, R12
	SHLQ CX, R12
	DECQ R12
	ANDQ R12, R11
	POPCNTQ R11, R11
	ADDQ R11, BX
	VZEROUPPER
	JMP  done

blocksdone:
	VZEROUPPER

sse:
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
