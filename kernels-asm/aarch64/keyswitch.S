// triskel aarch64 backend (scalar): the key-switching ops of the ABI, modulo
// q < 2^62 (the neon backend uses them too, see neon.c).
//
// dot, base_convert: per output element, a 128-bit sum of 64 x 64-bit
// products (mul, umulh, adds, adc), reduced once per 16 terms and at the end
// by Barrett with floor(2^128 / q) (portable's barrett_reduce_full: five
// multiplies, at most two corrections). The exact conversion's overflow
// count v sums (double)(int64_t)y_i * inv_q_i left to right with separate
// fmul and fadd (no fused multiply-add, as the ABI requires), adds 0.5,
// truncates (fcvtzu, which gives 0 for negative sums) and clamps to k.
// automorphism_coeff, automorphism_ntt: a permutation with sign, one load and
// one store per element: no arithmetic for vectors to share.
// Every branch depends on lengths, counts and g only, never on data.

#include "common.h"

    .text

// \lo = (\hi:\lo) mod \q for any 128-bit value, with floor(2^128 / q) in
// \bhi:\blo. \hi and \t0..\t3 clobbered.
.macro reduce128 lo, hi, q, bhi, blo, t0, t1, t2, t3
    umulh   \t0, \lo, \blo
    mul     \t1, \lo, \bhi
    umulh   \t2, \lo, \bhi
    adds    \t1, \t1, \t0
    adc     \t2, \t2, xzr                   // lo * bhi + hi(lo * blo)
    mul     \t0, \hi, \blo
    umulh   \t3, \hi, \blo
    cmn     \t1, \t0                        // carry of the middle words
    mul     \t0, \hi, \bhi
    adc     \t0, \t0, \t2
    add     \t0, \t0, \t3                   // quotient estimate
    msub    \lo, \t0, \q, \lo
    sub_if_ge \lo, \q, \t1
    sub_if_ge \lo, \q, \t1
.endm

// void triskel_aarch64_dot(uint64_t *out, const uint64_t *const *a,
//                          const uint64_t *const *b, size_t count, size_t len,
//                          const triskel_modulus *m)
// x6: byte offset of the element, x9: term j, (x11:x10) the sum.
func triskel_aarch64_dot
    cbz     x4, 9f
    ldp     x7, x8, [x5, #8]                // floor(2^128/q): high, low
    ldr     x5, [x5]
    mov     x6, #0
1:  mov     x10, #0
    mov     x11, #0
    mov     x9, #0
2:  ldr     x13, [x1, x9, lsl #3]
    ldr     x14, [x2, x9, lsl #3]
    ldr     x13, [x13, x6]
    ldr     x14, [x14, x6]
    mul     x15, x13, x14
    umulh   x16, x13, x14
    adds    x10, x10, x15
    adc     x11, x11, x16
    add     x9, x9, #1
    cmp     x9, x3
    b.eq    3f
    tst     x9, #15
    b.ne    2b
    reduce128 x10, x11, x5, x7, x8, x13, x14, x15, x16
    mov     x11, #0
    b       2b
3:  reduce128 x10, x11, x5, x7, x8, x13, x14, x15, x16
    str     x10, [x0, x6]
    add     x6, x6, #8
    subs    x4, x4, #1
    b.ne    1b
9:  ret
endfunc triskel_aarch64_dot

// The column loop of base_convert; \exact adds the double sum in d0 and the
// correction by vq_mod_p[v]. Registers: see the function.
.macro convert_columns exact
1:  mov     x14, #0
    mov     x15, #0
    mov     x13, #0
    .if \exact
    movi    d0, #0
    .endif
2:  ldr     x16, [x1, x13, lsl #3]
    ldr     x17, [x12, x13, lsl #3]
    ldr     x16, [x16, x6]                  // y_i
    mul     x5, x16, x17
    umulh   x17, x16, x17
    adds    x14, x14, x5
    adc     x15, x15, x17
    .if \exact
    scvtf   d1, x16
    ldr     d2, [x11, x13, lsl #3]
    fmul    d1, d1, d2
    fadd    d0, d0, d1
    .endif
    add     x13, x13, #1
    cmp     x13, x9
    b.eq    3f
    tst     x13, #15
    b.ne    2b
    reduce128 x14, x15, x4, x7, x8, x5, x16, x17, x19
    mov     x15, #0
    b       2b
3:  reduce128 x14, x15, x4, x7, x8, x5, x16, x17, x19
    .if \exact
    cmp     x9, #1
    b.ne    4f
    ldr     x16, [x1]                       // k = 1: v = [y_0 > q_0 / 2]
    ldr     x16, [x16, x6]
    cmp     x16, x10
    cset    x16, hi
    b       5f
4:  fadd    d0, d0, d3
    fcvtzu  x16, d0
    cmp     x16, x9
    csel    x16, x16, x9, lo                // min(v, k)
5:  ldr     x16, [x3, x16, lsl #3]
    add     x14, x14, x4
    sub     x14, x14, x16
    sub_if_ge x14, x4, x16
    .endif
    str     x14, [x0, x6]
    add     x6, x6, #8
    cmp     x6, x2
    b.lo    1b
.endm

// void triskel_aarch64_base_convert(uint64_t *out, const uint64_t *const *y,
//                                   size_t len, const triskel_convert_table *t,
//                                   const triskel_modulus *m)
// x2: end byte offset, x3: vq_mod_p, x4: p, x6: byte offset of the column,
// x7:x8 floor(2^128/p), x9: k, x10: q_0 / 2, x11: inv_q, x12: qhat_mod_p,
// x13: term i, (x15:x14) the sum, d3 = 0.5. (The single-prime lift of
// portable is the k = 1 case of the same formula: no separate path.)
func triskel_aarch64_base_convert
    cbz     x2, 9f
    str     x19, [sp, #-16]!
    lsl     x2, x2, #3
    ldp     x7, x8, [x4, #8]
    ldr     x4, [x4]
    ldp     x9, x10, [x3]
    ldp     x11, x12, [x3, #16]
    ldr     x3, [x3, #32]
    ldr     x10, [x10]
    lsr     x10, x10, #1
    fmov    d3, #0.5
    mov     x6, #0
    cbz     x3, 8f
    convert_columns 1
    b       7f
8:  convert_columns 0
7:  ldr     x19, [sp], #16
9:  ret
endfunc triskel_aarch64_base_convert

// void triskel_aarch64_automorphism_coeff(uint64_t *out, const uint64_t *a,
//                                         uint64_t g, size_t n,
//                                         const triskel_modulus *m)
// out[e mod n] = a[j] or -a[j] (e = j g mod 2n >= n), without a data branch.
func triskel_aarch64_automorphism_coeff
    cbz     x3, 9f
    ldr     x4, [x4]
    lsl     x5, x3, #1
    sub     x5, x5, #1                      // 2n - 1
    and     x2, x2, x5                      // the step of e
    sub     x6, x3, #1
    mov     x7, #0                          // e = j g mod 2n
    mov     x8, x3                          // elements left
1:  ldr     x10, [x1], #8
    sub     x11, x4, x10
    cmp     x10, #0
    csel    x11, x11, xzr, ne               // -a mod q
    tst     x7, x3
    csel    x10, x10, x11, eq
    and     x12, x7, x6
    str     x10, [x0, x12, lsl #3]
    add     x7, x7, x2
    and     x7, x7, x5
    subs    x8, x8, #1
    b.ne    1b
9:  ret
endfunc triskel_aarch64_automorphism_coeff

// void triskel_aarch64_automorphism_ntt(uint64_t *out, const uint64_t *a,
//                                       const uint32_t *perm, size_t n)
func triskel_aarch64_automorphism_ntt
    lsr     x5, x3, #1
    cbz     x5, 8f
1:  ldp     w6, w7, [x2], #8
    ldr     x6, [x1, x6, lsl #3]
    ldr     x7, [x1, x7, lsl #3]
    stp     x6, x7, [x0], #16
    subs    x5, x5, #1
    b.ne    1b
8:  tbz     x3, #0, 9f
    ldr     w6, [x2]
    ldr     x6, [x1, x6, lsl #3]
    str     x6, [x0]
9:  ret
endfunc triskel_aarch64_automorphism_ntt

    .section .note.GNU-stack, "", %progbits
