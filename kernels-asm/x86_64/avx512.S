/* triskel avx512 backend (AVX-512F/DQ, no IFMA): primes q < 2^62, 8
 * coefficients per zmm.
 *
 * Products by a known constant w use the 64-bit Shoup companion
 * c = floor(w * 2^64 / q) = c1 * 2^32 + c0. For x < 4q < 2^64, x = x1*2^32 + x0:
 *     h = c1*x1 + (c0*x1 >> 32) + (c1*x0 >> 32)
 * is floor(c*x / 2^64) minus 0, 1 or 2 (the low halves of the cross products
 * and c0*x0 are left out), so r = x*w - h*q mod 2^64 (2 x vpmullq) is in
 * [0, 4q) (< 2^64 as q < 2^62), and one conditional subtraction of 2q brings
 * it to [0, 2q): 3 vpmuludq + 5 shift/add, 2 vpmullq (3 uops each) + 1 sub,
 * 2 for the correction = 17 uops.
 * Per 8 butterflies (common.inc): 5 + 17 = 22 vector uops, plus 2 loads and
 * 2 stores; the last three stages add 8 permutes per 16 coefficients.
 *
 * Products of two variables (mul, mul_acc): the 128-bit a*b from four
 * vpmuludq partial products, Barrett with L = bit length of q,
 * mu = floor(2^(L + 63) / q) < 2^64 (from the modulus' floor(2^128 / q)):
 *     c1 = (a*b) >> (L - 1) < 2^63, h ~ floor(c1 * mu / 2^64) (3 partial
 *     products as above), r = a*b - h*q mod 2^64 in [0, 4q)
 * then conditional subtractions of 2q and q.
 */
        .intel_syntax noprefix

/* zmm30 = q, zmm31 = 2q, zmm29 = 2^32 - 1 */
.macro SETUP_MOD m
        vpbroadcastq zmm30, qword ptr [\m]
        vpbroadcastq zmm31, qword ptr [\m+24]
        mov     eax, 0xffffffff
        vpbroadcastq zmm29, rax
.endm

.macro TW_SCALAR w, s, W, C, CH
        vpbroadcastq \W, \w
        vpbroadcastq \C, \s
        shr     \s, 32
        vpbroadcastq \CH, \s
.endm

/* dst = floor(C*src / 2^64) or one less; C = CH*2^32 + low half of C */
.macro MULHI_APPROX dst, src, C, CH
        vpsrlq  zmm12, \src, 32
        vpmuludq zmm13, \C, zmm12
        vpmuludq zmm14, \CH, \src
        vpmuludq \dst, \CH, zmm12
        vpandq  zmm15, zmm13, zmm29
        vpaddq  zmm15, zmm15, zmm14
        vpsrlq  zmm15, zmm15, 32
        vpsrlq  zmm13, zmm13, 32
        vpaddq  \dst, \dst, zmm13
        vpaddq  \dst, \dst, zmm15
.endm

/* dst = src * W mod q in [0, 2q) for src < 4q: h = floor(C*src / 2^64)
 * minus 0, 1 or 2 (the low halves of the two cross products and the c0*x0
 * product are left out), r = src*W - h*q in [0, 4q), minus 2q if >= 2q.
 * W, C, CH may be memory operands; vpmuludq reads only the low half of
 * each lane of CH, so CH may be C's memory 4 bytes on (its high halves). */
.macro SHOUP dst, src, W, C, CH
        vpsrlq  zmm12, \src, 32
        vpmuludq zmm13, zmm12, \C
        vpmuludq zmm14, \src, \CH
        vpmuludq zmm9, zmm12, \CH
        vpsrlq  zmm13, zmm13, 32
        vpsrlq  zmm14, zmm14, 32
        vpaddq  zmm9, zmm9, zmm13
        vpaddq  zmm9, zmm9, zmm14
        vpmullq zmm9, zmm9, zmm30
        vpmullq \dst, \src, \W
        vpsubq  \dst, \dst, zmm9
        SUB_IF_GE \dst, zmm31, zmm12
.endm

#include "common.inc"

        .text
NTT_FORWARD triskel_avx512_ntt_forward
NTT_INVERSE triskel_avx512_ntt_inverse
SIMPLE_OPS triskel_avx512

/* Barrett constants of the modulus at [m] (clobbers rax, r9, r10, r11; needs BMI2):
 * xmm25 = L - 1, xmm24 = 65 - L, zmm26 = mu = floor(2^128 / q) >> (65 - L),
 * zmm27 = mu >> 32. */
.macro BARRETT_SETUP m
        bsr     rax, [\m]
        inc     rax                     // L
        lea     r10, [rax - 1]
        vmovq   xmm25, r10
        mov     r10, 65
        sub     r10, rax                // s = 65 - L, 3..63
        vmovq   xmm24, r10
        mov     r11, [\m+16]
        shrx    r11, r11, r10
        mov     rax, 64
        sub     rax, r10
        mov     r9, [\m+8]
        shlx    r9, r9, rax
        or      r11, r9
        vpbroadcastq zmm26, r11
        shr     r11, 32
        vpbroadcastq zmm27, r11
.endm

/* zmm0 = zmm0 * zmm1 mod q */
.macro BODY_MUL
        vpsrlq  zmm3, zmm0, 32
        vpsrlq  zmm4, zmm1, 32
        vpmuludq zmm5, zmm0, zmm1       // p00
        vpmuludq zmm6, zmm0, zmm4       // p01
        vpmuludq zmm7, zmm3, zmm1       // p10
        vpmuludq zmm3, zmm3, zmm4       // p11
        vpsrlq  zmm4, zmm5, 32
        vpandq  zmm8, zmm6, zmm29
        vpaddq  zmm4, zmm4, zmm8
        vpandq  zmm8, zmm7, zmm29
        vpaddq  zmm4, zmm4, zmm8        // middle column, < 3 * 2^32
        vpsrlq  zmm6, zmm6, 32
        vpsrlq  zmm7, zmm7, 32
        vpaddq  zmm3, zmm3, zmm6
        vpaddq  zmm3, zmm3, zmm7
        vpsrlq  zmm8, zmm4, 32
        vpaddq  zmm3, zmm3, zmm8        // high word of a*b
        vpsllq  zmm4, zmm4, 32
        vpandq  zmm5, zmm5, zmm29
        vporq   zmm4, zmm4, zmm5        // low word of a*b
        vpsllq  zmm3, zmm3, xmm24
        vpsrlq  zmm5, zmm4, xmm25
        vporq   zmm3, zmm3, zmm5        // c1 = a*b >> (L - 1)
        MULHI_APPROX zmm5, zmm3, zmm26, zmm27
        vpmullq zmm5, zmm5, zmm30
        vpsubq  zmm0, zmm4, zmm5        // [0, 4q)
        SUB_IF_GE zmm0, zmm31, zmm3
        SUB_IF_GE zmm0, zmm30, zmm3
.endm

PRODUCT_OPS triskel_avx512

/* One block of 8 (mask k1) of the single-prime lift at byte offset r10:
 * zmm1 = (y mod p) - (y > q_0 / 2 ? zmm27 : zmm23) mod p. The quotient
 * estimate floor(y * floor(2^64 / p) / 2^64), minus at most 1 more from
 * MULHI_APPROX, is floor(y / p) minus 0..2, so y - est * p is in [0, 3p). */
.macro LIFT_BLOCK
        vmovdqu64 zmm0{k1}{z}, [rsi + r10]
        MULHI_APPROX zmm1, zmm0, zmm24, zmm25
        vpmullq zmm1, zmm1, zmm30
        vpsubq  zmm1, zmm0, zmm1
        SUB_IF_GE zmm1, zmm30, zmm3
        SUB_IF_GE zmm1, zmm30, zmm3
        LIFT_CORRECT
.endm

/* The single-prime lift (LIFT_FUNC, common.inc) for q_0, p < 2^62:
 * zmm24 = floor(2^64 / p) (the high word of the modulus' floor(2^128 / p)),
 * zmm25 = its high half. */
.macro LIFT_CONSTANTS
        mov     rax, [r8 + 8]
        vpbroadcastq zmm24, rax
        shr     rax, 32
        vpbroadcastq zmm25, rax
.endm

LIFT_FUNC triskel_avx512_lift

/* Lazy sums of products (dot, base_convert) for primes up to 62 bits: each
 * 124-bit product a*b of a = a1*2^32 + a0, b = b1*2^32 + b0 (a1, b1 < 2^30)
 * is added to three 64-bit columns without carries:
 *     zmm16 += lo32(a0 b0)                         (2^0)
 *     s = a0 b1 + a1 b0 + hi32(a0 b0) < 2^63 + 2^32
 *     zmm17 += lo32(s)                             (2^32)
 *     zmm18 += a1 b1 + hi32(s)                     (2^64)
 * so 16 terms (the ABI's reduction period: below 2^128 with one residue
 * more) never overflow a column: 15 vector ops per 8 products. */
.macro LAZY128_TERM a, b0, b1
        vpsrlq  zmm4, \a, 32
        vpmuludq zmm6, \a, \b0          // a0 b0
        vpmuludq zmm7, \a, \b1          // a0 b1
        vpmuludq zmm8, zmm4, \b0        // a1 b0
        vpmuludq zmm4, zmm4, \b1        // a1 b1
        vpaddq  zmm18, zmm18, zmm4
        vpaddq  zmm7, zmm7, zmm8
        vpandq  zmm8, zmm6, zmm29
        vpaddq  zmm16, zmm16, zmm8
        vpsrlq  zmm6, zmm6, 32
        vpaddq  zmm7, zmm7, zmm6        // s
        vpandq  zmm8, zmm7, zmm29
        vpaddq  zmm17, zmm17, zmm8
        vpsrlq  zmm7, zmm7, 32
        vpaddq  zmm18, zmm18, zmm7
.endm

/* Constants of LAZY128_REDUCE from the modulus at [m] (clobbers rax, r11):
 * zmm24/25 = floor(2^64 / q) (the high word of floor(2^128 / q)) and its
 * high half, zmm26 = w = 2^64 mod q (= -floor(2^64 / q) q mod 2^64),
 * zmm27/28 = w's Shoup companion floor(w 2^64 / q), which is
 * floor(2^128 / q) - floor(2^64 / q) 2^64, the low word, and its high half. */
.macro LAZY_CONSTANTS m
        mov     rax, [\m + 8]
        vpbroadcastq zmm24, rax
        mov     r11, rax
        shr     rax, 32
        vpbroadcastq zmm25, rax
        imul    r11, [\m]
        neg     r11
        vpbroadcastq zmm26, r11
        mov     rax, [\m + 16]
        vpbroadcastq zmm27, rax
        shr     rax, 32
        vpbroadcastq zmm28, rax
.endm

/* zmm0 = (zmm18 2^64 + zmm17 2^32 + zmm16) mod q, the sum below 2^128:
 * carried into hi:lo words, then lo - floor(lo / q) q and hi w - ... by
 * Shoup's method (quotients from MULHI_APPROX, one short at most: each
 * part in [0, 3q)), each brought to [0, 2q), summed and fully reduced.
 * Clobbers zmm1..zmm3, zmm12..zmm15. */
.macro LAZY128_REDUCE
        vpsrlq  zmm1, zmm16, 32
        vpaddq  zmm1, zmm1, zmm17       // the 2^32 column, < 2^38
        vpandq  zmm2, zmm16, zmm29
        vpsllq  zmm3, zmm1, 32
        vporq   zmm2, zmm2, zmm3        // lo
        vpsrlq  zmm1, zmm1, 32
        vpaddq  zmm1, zmm1, zmm18       // hi
        MULHI_APPROX zmm3, zmm2, zmm24, zmm25
        vpmullq zmm3, zmm3, zmm30
        vpsubq  zmm2, zmm2, zmm3
        SUB_IF_GE zmm2, zmm31, zmm3
        MULHI_APPROX zmm3, zmm1, zmm27, zmm28
        vpmullq zmm3, zmm3, zmm30
        vpmullq zmm0, zmm1, zmm26
        vpsubq  zmm0, zmm0, zmm3
        SUB_IF_GE zmm0, zmm31, zmm3
        vpaddq  zmm0, zmm0, zmm2
        SUB_IF_GE zmm0, zmm31, zmm3
        SUB_IF_GE zmm0, zmm30, zmm3
.endm

/* Before term rax: every 16 terms (not before the first), the columns are
 * reduced and restart from the residue, as the ABI's reduction period. */
.macro LAZY128_FOLD
        test    eax, 15
        jnz     76f
        test    eax, eax
        jz      76f
        LAZY128_REDUCE
        vmovdqa64 zmm16, zmm0
        vpxorq  zmm17, zmm17, zmm17
        vpxorq  zmm18, zmm18, zmm18
76:
.endm

.macro LAZY128_CLEAR
        vpxorq  zmm16, zmm16, zmm16
        vpxorq  zmm17, zmm17, zmm17
        vpxorq  zmm18, zmm18, zmm18
.endm

/* One block of 8 (mask k1) of the dot product at byte offset r12 into zmm0:
 * the rcx terms of the pointer arrays rsi, r10. */
.macro DOT_BLOCK
        LAZY128_CLEAR
        xor     eax, eax
77:     LAZY128_FOLD
        mov     r11, [rsi + rax*8]
        mov     r9, [r10 + rax*8]
        vmovdqu64 zmm2{k1}{z}, [r11 + r12]
        vmovdqu64 zmm3{k1}{z}, [r9 + r12]
        vpsrlq  zmm5, zmm3, 32
        LAZY128_TERM zmm2, zmm3, zmm5
        inc     rax
        cmp     rax, rcx
        jb      77b
        LAZY128_REDUCE
.endm

/* One block of 8 (mask k1) of base_convert at byte offset r12 into zmm0:
 * the sum of y_i * qhat_mod_p[i] mod p over the rcx source primes (pointer
 * array rsi, table r10, qhat r13), and when exact (rbx = vq_mod_p non-NULL)
 * minus vq_mod_p[v] (HPS_OVERFLOW, from the double sum of y_i * inv_q[i]
 * (r9), taken left to right as portable does). */
.macro CONVERT_BLOCK
        LAZY128_CLEAR
        vpxorq  zmm11, zmm11, zmm11     // the double sum
        xor     eax, eax
77:     LAZY128_FOLD
        mov     r11, [rsi + rax*8]
        vmovdqu64 zmm9{k1}{z}, [r11 + r12]
        vpbroadcastq zmm3, [r13 + rax*8]
        vpsrlq  zmm5, zmm3, 32
        LAZY128_TERM zmm9, zmm3, zmm5
        test    rbx, rbx
        jz      78f
        vcvtqq2pd zmm9, zmm9
        vmulpd  zmm9, zmm9, qword ptr [r9 + rax*8]{1to8}
        vaddpd  zmm11, zmm11, zmm9
78:     inc     rax
        cmp     rax, rcx
        jb      77b
        LAZY128_REDUCE
        test    rbx, rbx
        jz      81f
        HPS_OVERFLOW
        HPS_CORRECT
81:
.endm

LAZY_SUM_FUNCS triskel_avx512

/* void triskel_x86_automorphism_ntt(u64 *out rdi, const u64 *a rsi,
 *     const u32 *perm rdx, size_t n rcx): out[j] = a[perm[j]] (AVX-512F/DQ
 * only, so the avx512 and avx512ifma backends share it). perm[j] < n <= 2^31.
 * In the bit-reversed NTT order of the ABI, X -> X^g maps each aligned block
 * of 8 slots onto one aligned block of 8 (the low three index bits are the
 * top three exponent bits, which g only permutes), so when the 8 indices of
 * an output block share one source block the values come from one load and
 * one vpermq (the index's low three bits); otherwise (any other
 * permutation) from a gather. */
FUNC triskel_x86_automorphism_ntt
        xor     eax, eax
        mov     r8, rcx
        and     r8, -8
        jz      2f
        mov     r10, -8
        vpbroadcastq zmm5, r10
1:      vpmovzxdq zmm0, ymmword ptr [rdx + rax*4]
        vpbroadcastq zmm1, xmm0
        vpxorq  zmm1, zmm1, zmm0
        vptestmq k1, zmm1, zmm5         // lanes outside lane 0's source block
        kortestb k1, k1
        jnz     5f
        vmovq   r9, xmm0
        and     r9, -8
        vpermq  zmm2, zmm0, [rsi + r9*8]
        vmovdqu64 [rdi + rax*8], zmm2
6:      add     rax, 8
        cmp     rax, r8
        jb      1b
        GATHER_TAIL_RET
5:      kxnorb  k2, k2, k2
        vpxorq  zmm2, zmm2, zmm2
        vpgatherqq zmm2{k2}, qword ptr [rsi + zmm0*8]
        vmovdqu64 [rdi + rax*8], zmm2
        jmp     6b
ENDFUNC triskel_x86_automorphism_ntt

/* void triskel_x86_automorphism_coeff_raw(u64 *out rdi, const u64 *a rsi,
 *     u64 ginv rdx, size_t n rcx, m r8): X -> X^g in coefficient form as a
 * gather (no scatter): for e < n, J = e g^-1 mod 2n (ginv = g^-1 mod 2n)
 * satisfies J g = e mod 2n, so out[e] = a[J] when J < n and, as n g = n
 * mod 2n for odd g, out[e] = -a[J - n] mod q otherwise. n is a power of
 * two >= 8 (the C wrapper checks). */
FUNC triskel_x86_automorphism_coeff_raw
        vpbroadcastq zmm30, qword ptr [r8]      // q
        lea     rax, [rcx*2 - 1]
        vpbroadcastq zmm29, rax                 // 2n - 1
        lea     rax, [rcx - 1]
        vpbroadcastq zmm28, rax                 // n - 1
        vpbroadcastq zmm27, rcx                 // n
        vpbroadcastq zmm1, rdx
        vpmullq zmm0, zmm1, [rip + .Llane_index]
        vpandq  zmm0, zmm0, zmm29               // J of lanes e = 0..7
        shl     rdx, 3
        vpbroadcastq zmm26, rdx                 // 8 ginv: J of e + 8
        xor     eax, eax
1:      vptestmq k2, zmm0, zmm27                // J >= n
        vpandq  zmm1, zmm0, zmm28
        kxnorb  k1, k1, k1
        vpxorq  zmm2, zmm2, zmm2
        vpgatherqq zmm2{k1}, qword ptr [rsi + zmm1*8]
        vptestmq k3, zmm2, zmm2                 // -0 = 0
        kandb   k2, k2, k3
        vpsubq  zmm2{k2}, zmm30, zmm2
        vmovdqu64 [rdi + rax*8], zmm2
        vpaddq  zmm0, zmm0, zmm26
        vpandq  zmm0, zmm0, zmm29
        add     rax, 8
        cmp     rax, rcx
        jb      1b
        vzeroupper
        ret
ENDFUNC triskel_x86_automorphism_coeff_raw

        .section .rodata
        .balign 64
.Llane_index:
        .quad   0, 1, 2, 3, 4, 5, 6, 7
        .text

        .section .note.GNU-stack, "", @progbits
