/* triskel avx512ifma backend: primes q < 2^50, 8 coefficients per zmm.
 *
 * Products by a known constant w use 52-bit Shoup companions
 * c = floor(w * 2^52 / q) (= the 64-bit companion >> 12). For x < 4q < 2^52:
 *     h = hi52(x * c)                                  vpmadd52huq
 *     r = lo52(x * w) + lo52(h * (2^52 - q)) mod 2^52   2 x vpmadd52luq, vpandq
 * gives r = x*w - h*q in [0, 2q) (2 zeroing idioms are free).
 * Per 8 butterflies (common.inc): 5 adds/subs/mins + 4 for the product
 * = 9 vector ops, 3 of them IFMA, plus 2 loads and 2 stores; the last three
 * stages add 8 permutes per 16 coefficients (2.7 per 8 butterflies).
 *
 * Products of two variables (mul, mul_acc): the 104-bit product a*b as
 * (hi52, lo52), Barrett with L = bit length of q, s = L - 1,
 * mu = floor(2^(s + 52) / q) < 2^52 (taken from the modulus' floor(2^128/q)):
 *     c1 = (a*b) >> s < 2^51,  h = hi52(c1 * mu),  r = a*b - h*q in [0, 3q)
 * then two conditional subtractions of q.
 */
        .intel_syntax noprefix

/* zmm30 = q, zmm31 = 2q, zmm29 = 2^52 - q, zmm28 = 2^52 - 1 */
.macro SETUP_MOD m
        vpbroadcastq zmm30, qword ptr [\m]
        vpbroadcastq zmm31, qword ptr [\m+24]
        movabs  rax, 0x10000000000000
        sub     rax, [\m]
        vpbroadcastq zmm29, rax
        movabs  rax, 0xfffffffffffff
        vpbroadcastq zmm28, rax
.endm

.macro TW_SCALAR w, s, W, C, CH
        shr     \s, 12
        vpbroadcastq \W, \w
        vpbroadcastq \C, \s
.endm

.macro SHOUP dst, src, W, C, CH
        vpxorq  zmm12, zmm12, zmm12
        vpmadd52huq zmm12, \src, \C
        vpxorq  \dst, \dst, \dst
        vpmadd52luq \dst, \src, \W
        vpmadd52luq \dst, zmm12, zmm29
        vpandq  \dst, \dst, zmm28
.endm

/* The lazy forward transform's constant: zmm13 = floor(2^52 / q) (the
 * companion of 1; clobbers rax, rdx). */
.macro LAZY_NTT_SETUP
        xor     edx, edx
        movabs  rax, 0x10000000000000
        div     qword ptr [rdi + 16]
        vpbroadcastq zmm13, rax
.endm

/* x = x mod q for x < 2^52: x - hi52(x * floor(2^52 / q)) q is in [0, 2q)
 * (Shoup by 1), then one conditional subtraction (4 + 2 vector ops, the
 * zeroing idiom free). */
.macro REDUCE_LAZY x, tmp
        vpxorq  \tmp, \tmp, \tmp
        vpmadd52huq \tmp, \x, zmm13
        vpmadd52luq \x, \tmp, zmm29
        vpandq  \x, \x, zmm28
        SUB_IF_GE \x, zmm30, \tmp
.endm

#include "common.inc"

        .text
NTT_FORWARD triskel_ifma_ntt_forward
NTT_FORWARD triskel_ifma_ntt_forward_lazy, 1
NTT_INVERSE triskel_ifma_ntt_inverse
SIMPLE_OPS triskel_ifma

/* Barrett constants of the modulus at [m] (clobbers rax, r9, r10, r11; needs BMI2):
 * xmm25 = L - 1, xmm24 = 53 - L, zmm26 = floor(2^128 / q) >> (77 - L). */
.macro BARRETT_SETUP m
        bsr     rax, [\m]
        inc     rax                     // L
        lea     r10, [rax - 1]
        vmovq   xmm25, r10
        mov     r10, 53
        sub     r10, rax
        vmovq   xmm24, r10
        mov     r10, 77
        sub     r10, rax                // shift s = 77 - L >= 27
        mov     r9, [\m+8]              // floor(2^128/q) high word
        cmp     r10, 64
        jae     8f
        mov     r11, [\m+16]
        shrx    r11, r11, r10
        mov     rax, 64
        sub     rax, r10
        shlx    rax, r9, rax
        or      r11, rax
        jmp     9f
8:      sub     r10, 64
        shrx    r11, r9, r10
9:      vpbroadcastq zmm26, r11
.endm

/* zmm0 = zmm0 * zmm1 mod q */
.macro BODY_MUL
        vpxorq  zmm3, zmm3, zmm3
        vpmadd52luq zmm3, zmm0, zmm1
        vpxorq  zmm4, zmm4, zmm4
        vpmadd52huq zmm4, zmm0, zmm1
        vpsrlq  zmm5, zmm3, xmm25
        vpsllq  zmm6, zmm4, xmm24
        vporq   zmm5, zmm5, zmm6
        vpxorq  zmm6, zmm6, zmm6
        vpmadd52huq zmm6, zmm5, zmm26
        vpmadd52luq zmm3, zmm6, zmm29
        vpandq  zmm0, zmm3, zmm28
        SUB_IF_GE zmm0, zmm30, zmm3
        SUB_IF_GE zmm0, zmm30, zmm3
.endm

PRODUCT_OPS triskel_ifma

/* Lazy sums (dot, base_convert): the 104-bit products of 50-bit values
 * accumulate as lo = sum lo52(x*y) and hi = sum hi52(x*y) (X = hi*2^52 + lo,
 * below 2^108 for up to 128 terms); X mod q is reduced once, as
 *     X = hh*2^104 + hl*2^52 + l  with l, hl < 2^52, hh < 2^4
 *       = Shoup(l, 1) + Shoup(hl, 2^52 mod q) + Shoup(hh, 2^104 mod q)  (mod q)
 * (three products in [0, 2q), summed with conditional subtractions).
 * LAZY_CONSTANTS computes the constants from q (rdx:rax division, once per call;
 * clobbers rax, rdx, r11): zmm25 = 1, zmm24 = floor(2^52 / q),
 * zmm20/21 = 2^52 mod q and its companion, zmm22/23 = 2^104 mod q and its. */
.macro LAZY_CONSTANTS m
        mov     r11, [\m]
        xor     edx, edx
        movabs  rax, 0x10000000000000
        div     r11                     // rax = floor(2^52 / q), rdx = 2^52 mod q
        vpbroadcastq zmm24, rax
        vpbroadcastq zmm20, rdx
        mov     rax, rdx
        shl     rax, 52
        shr     rdx, 12
        div     r11                     // companion of 2^52 mod q; rdx = 2^104 mod q
        vpbroadcastq zmm21, rax
        vpbroadcastq zmm22, rdx
        mov     rax, rdx
        shl     rax, 52
        shr     rdx, 12
        div     r11
        vpbroadcastq zmm23, rax
        mov     eax, 1
        vpbroadcastq zmm25, rax
.endm

/* zmm0 = (zmm1 * 2^52 + zmm0) mod q (clobbers zmm4..zmm9, zmm12) */
.macro LAZY_REDUCE
        vpsrlq  zmm4, zmm0, 52
        vpaddq  zmm1, zmm1, zmm4
        vpandq  zmm0, zmm0, zmm28
        vpsrlq  zmm5, zmm1, 52
        vpandq  zmm1, zmm1, zmm28
        SHOUP   zmm6, zmm0, zmm25, zmm24
        SHOUP   zmm7, zmm1, zmm20, zmm21
        SHOUP   zmm8, zmm5, zmm22, zmm23
        vpaddq  zmm6, zmm6, zmm7
        SUB_IF_GE zmm6, zmm31, zmm9
        vpaddq  zmm6, zmm6, zmm8
        SUB_IF_GE zmm6, zmm31, zmm9
        SUB_IF_GE zmm6, zmm30, zmm9
        vmovdqa64 zmm0, zmm6
.endm

/* LAZY_REDUCE for at most 15 terms (rcx <= 15): then hi < 15 * 2^48 + 15,
 * so X = H*2^52 + L with H, L < 2^52 after the carry, and
 *     X = Shoup(L, 1) + Shoup(H, 2^52 mod q)  (mod q)
 * with both Shoup estimates summed in one register (h0 + h1 < 2^52) and
 * one product by 2^52 - q: L + lo52(H*r) + lo52((h0 + h1)(2^52 - q)), masked
 * to 52 bits, is the true value in [0, 4q). 12 vector ops (4 IFMA) instead
 * of LAZY_REDUCE's 26 (9 IFMA). Clobbers zmm4, zmm5. */
.macro LAZY_REDUCE_SHORT
        vpsrlq  zmm4, zmm0, 52
        vpaddq  zmm1, zmm1, zmm4
        vpandq  zmm0, zmm0, zmm28
        vpxorq  zmm5, zmm5, zmm5
        vpmadd52huq zmm5, zmm0, zmm24
        vpmadd52huq zmm5, zmm1, zmm21
        vpmadd52luq zmm0, zmm1, zmm20
        vpmadd52luq zmm0, zmm5, zmm29
        vpandq  zmm0, zmm0, zmm28
        SUB_IF_GE zmm0, zmm31, zmm4
        SUB_IF_GE zmm0, zmm30, zmm4
.endm

/* The reduction of a block's sums: the short one for up to 15 terms. */
.macro LAZY_REDUCE_BY_COUNT
        cmp     rcx, 15
        ja      78f
        LAZY_REDUCE_SHORT
        jmp     79f
78:     LAZY_REDUCE
79:
.endm

/* One block of 8 (mask k1) of the dot product at byte offset r12 into zmm0:
 * the lo/hi sums (zmm0/zmm1) over the rcx terms of the pointer arrays rsi,
 * r10, reduced. */
.macro DOT_BLOCK
        vpxorq  zmm0, zmm0, zmm0
        vpxorq  zmm1, zmm1, zmm1
        xor     eax, eax
77:     mov     r11, [rsi + rax*8]
        mov     rdx, [r10 + rax*8]
        vmovdqu64 zmm2{k1}{z}, [r11 + r12]
        vmovdqu64 zmm3{k1}{z}, [rdx + r12]
        vpmadd52luq zmm0, zmm2, zmm3
        vpmadd52huq zmm1, zmm2, zmm3
        inc     rax
        cmp     rax, rcx
        jb      77b
        LAZY_REDUCE_BY_COUNT
.endm

/* One block of 8 (mask k1) of base_convert at byte offset r12 into zmm0:
 * the lo/hi sums (zmm0/zmm1) of y_i * qhat_mod_p[i] reduced, minus
 * vq_mod_p[v] when rbx (vq_mod_p) is not NULL (HPS_OVERFLOW, with the double
 * sum in zmm11). Pointer array rsi, table r10, count rcx. */
.macro CONVERT_BLOCK
        vpxorq  zmm0, zmm0, zmm0
        vpxorq  zmm1, zmm1, zmm1
        vpxorq  zmm11, zmm11, zmm11     // double sum
        xor     eax, eax
77:     mov     r11, [rsi + rax*8]
        vmovdqu64 zmm2{k1}{z}, [r11 + r12]
        vpbroadcastq zmm3, [r13 + rax*8]
        vpmadd52luq zmm0, zmm2, zmm3
        vpmadd52huq zmm1, zmm2, zmm3
        vcvtqq2pd zmm2, zmm2
        vmulpd  zmm2, zmm2, qword ptr [r9 + rax*8]{1to8}
        vaddpd  zmm11, zmm11, zmm2
        inc     rax
        cmp     rax, rcx
        jb      77b
        LAZY_REDUCE_BY_COUNT
        test    rbx, rbx
        jz      80f
        HPS_OVERFLOW
        HPS_CORRECT
80:
.endm

LAZY_SUM_FUNCS triskel_ifma

/* One block of 8 (mask k1) of the single-prime lift at byte offset r10:
 * zmm1 = (y mod p) - (y > q_0 / 2 ? zmm27 : zmm23) mod p. */
.macro LIFT_BLOCK
        vmovdqu64 zmm0{k1}{z}, [rsi + r10]
        SHOUP   zmm1, zmm0, zmm25, zmm24
        SUB_IF_GE zmm1, zmm30, zmm3
        LIFT_CORRECT
.endm

/* The single-prime lift (LIFT_FUNC, common.inc) for q_0 < 2^50 (the C
 * wrapper checks): one Shoup product by 1 per value (y < 2^50, so the
 * estimate is at most one short), no floating-point sum, no lazy 104-bit
 * reduction. zmm24 = floor(2^52 / p), zmm25 = 1. */
.macro LIFT_CONSTANTS
        xor     edx, edx
        movabs  rax, 0x10000000000000
        div     qword ptr [r8]
        vpbroadcastq zmm24, rax
        mov     eax, 1
        vpbroadcastq zmm25, rax
.endm

LIFT_FUNC triskel_ifma_lift

/* LIFT_BLOCK when q_0 <= 2p (the C wrapper checks): y < 2p, so y mod p is
 * one conditional subtraction (2 vector ops instead of 6). */
.macro LIFT_BLOCK_SUB
        vmovdqu64 zmm0{k1}{z}, [rsi + r10]
        vpsubq  zmm1, zmm0, zmm30
        vpminuq zmm1, zmm1, zmm0
        LIFT_CORRECT
.endm

LIFT_FUNC triskel_ifma_lift_sub, LIFT_BLOCK_SUB

        .section .note.GNU-stack, "", @progbits
