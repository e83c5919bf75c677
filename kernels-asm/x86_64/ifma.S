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

.macro TW_LOAD off
        vmovdqa64 zmm20, [r13+\off]
        vmovdqa64 zmm21, [r13+\off+64]
.endm

.macro SHOUP dst, src, W, C, CH
        vpxorq  zmm12, zmm12, zmm12
        vpmadd52huq zmm12, \src, \C
        vpxorq  \dst, \dst, \dst
        vpmadd52luq \dst, \src, \W
        vpmadd52luq \dst, zmm12, zmm29
        vpandq  \dst, \dst, zmm28
.endm

#include "common.inc"

        .text
NTT_FORWARD triskel_ifma_ntt_forward
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

        .section .note.GNU-stack, "", @progbits
