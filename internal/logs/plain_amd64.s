#include "textflag.h"

// func plainBlocks(s []byte) int
//
// Per block of 16 bytes: a byte is plain if it is in 0x20..0x7e and is not
// '"' or '\\'. Adding 0x60 maps 0x20..0x7e onto 0x80..0xde, -128..-34 as
// signed bytes, and every other byte above -34 (PCMPGTB); two PCMPEQB find
// the quote and the backslash. PMOVMSKB gathers the marks, BSF the first.
TEXT ·plainBlocks(SB), NOSPLIT, $0-32
	MOVQ s_base+0(FP), SI
	MOVQ s_len+8(FP), BX
	XORQ AX, AX
	MOVQ $0x6060606060606060, DX
	MOVQ DX, X1
	PUNPCKLQDQ X1, X1            // 0x60 in each byte
	MOVQ $0xdededededededede, DX
	MOVQ DX, X2
	PUNPCKLQDQ X2, X2            // -34 in each byte
	MOVQ $0x2222222222222222, DX
	MOVQ DX, X3
	PUNPCKLQDQ X3, X3            // '"'
	MOVQ $0x5c5c5c5c5c5c5c5c, DX
	MOVQ DX, X4
	PUNPCKLQDQ X4, X4            // '\\'

loop:
	LEAQ 16(AX), CX
	CMPQ CX, BX
	JA   done                    // fewer than 16 bytes left
	MOVOU (SI)(AX*1), X0
	MOVO  X0, X5
	PADDB X1, X5
	PCMPGTB X2, X5               // out of 0x20..0x7e
	MOVO  X0, X6
	PCMPEQB X3, X6
	POR   X6, X5
	PCMPEQB X4, X0
	POR   X0, X5
	PMOVMSKB X5, DX
	TESTL DX, DX
	JNZ   found
	MOVQ  CX, AX
	JMP   loop

found:
	BSFL DX, DX
	ADDQ DX, AX

done:
	MOVQ AX, ret+24(FP)
	RET
