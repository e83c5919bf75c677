// triskel neon backend: negacyclic NTT and products modulo primes q < 2^31 in
// four 32-bit NEON lanes (ARMv8.0-A Advanced SIMD).
//
// Products are signed Montgomery products with R = 2^32: for |a|, |b| < 2^31,
//   m = a*b*q^-1 mod 2^32 (mul, mul),  r = (hi(2ab) - hi(2mq)) / 2 (sqdmulh,
//   sqdmulh, shsub) = (a*b - m*q) / 2^32 exactly, r = a*b/R mod q, |r| < q.
// A constant c (twiddle, n^-1, R^2 mod q) is stored as C = c*R mod q with
// C' = C*q^-1 mod 2^32, so multiplying by it is 4 instructions per 4 lanes.
// Every value is kept in [0, q): r in (-q, q) is fixed by min(r, r + q) as
// unsigned, sums by min(s, s - q), differences by min(d, d + q).
//
// The ABI's vectors are 64-bit words. The NTT first packs the n words into
// n 32-bit words at the start of the same buffer (in place: each step reads
// before it writes, and writes behind what it reads), runs every stage on
// 32-bit lanes, then unpacks from the end backwards. add, sub and neg are the
// aarch64 backend's (vector.S, exact for any q); element-wise products
// unpack/pack around the lanes and hand the last len % 4 elements to the
// aarch64 backend's scalar kernels.
//
// Plan tables (neon.c), 32-bit words, forward half at aux, inverse half at
// aux + 16n bytes, each half:
//   [0, 2n)    (C_i, C'_i) pairs, i = 0..n-1, for the stages with t >= 4
//   [2n, 3n)   t = 2: per two blocks, C of each twice, then C' likewise (8 words)
//   [3n, 4n)   t = 1: per four blocks, their C, then their C' (8 words)
// then, at aux + 32n bytes: q, n^-1 as (C, C'), n^-1 * inv[1] as (C, C'),
// and the interleave word (see wide_stage).
//
// Addressing: loads and stores use separate pointers, each post-incremented,
// so no load waits on a store's address update.

#include "common.h"

    .text

// \r = \a * C mod q in (-q, q), C in \c, C' in \cc; \t scratch; v30 = q.
// (\r may be \a.)
.macro mont r, a, c, cc, t
    mul     \t\().4s, \a\().4s, \cc\().4s
    sqdmulh \r\().4s, \a\().4s, \c\().4s
    sqdmulh \t\().4s, \t\().4s, v30.4s
    shsub   \r\().4s, \r\().4s, \t\().4s
.endm

// \x from (-q, q) to [0, q); \t scratch.
.macro to_pos x, t
    add     \t\().4s, \x\().4s, v30.4s
    umin    \x\().4s, \x\().4s, \t\().4s
.endm

// Forward butterfly, x, y in [0, q): v = y*w, x = x + v, y = x - v mod q.
.macro ct x, y, c, cc, v, t
    mont    \v, \y, \c, \cc, \t
    to_pos  \v, \t
    sub     \y\().4s, \x\().4s, \v\().4s
    add     \x\().4s, \x\().4s, \v\().4s
    add     \t\().4s, \y\().4s, v30.4s
    sub     \v\().4s, \x\().4s, v30.4s
    umin    \y\().4s, \y\().4s, \t\().4s
    umin    \x\().4s, \x\().4s, \v\().4s
.endm

// Inverse butterfly, x, y in [0, q): x = x + y mod q, y = (x - y)*w mod q.
.macro gs x, y, c, cc, v, t
    add     \v\().4s, \x\().4s, \y\().4s
    sub     \y\().4s, \x\().4s, \y\().4s
    sub     \x\().4s, \v\().4s, v30.4s
    add     \t\().4s, \y\().4s, v30.4s
    umin    \x\().4s, \x\().4s, \v\().4s
    umin    \y\().4s, \y\().4s, \t\().4s
    mont    \y, \y, \c, \cc, \t
    to_pos  \y, \t
.endm

// Packs the n words at x1 into 32-bit words in place (4 per step).
.macro pack
    mov     x10, x1
    mov     x11, x1
    lsr     x12, x2, #2
1:  ld1     {v0.2d, v1.2d}, [x10], #32
    uzp1    v0.4s, v0.4s, v1.4s
    st1     {v0.4s}, [x11], #16
    subs    x12, x12, #1
    b.ne    1b
.endm

// Unpacks the n 32-bit words at x1 into words, from the end backwards.
.macro unpack
    add     x10, x1, x2, lsl #2
    add     x11, x1, x2, lsl #3
    lsr     x12, x2, #2
1:  ldr     q0, [x10, #-16]!
    ushll2  v1.2d, v0.4s, #0
    ushll   v0.2d, v0.2s, #0
    stp     q0, q1, [x11, #-32]!
    subs    x12, x12, #1
    b.ne    1b
.endm

// Scalar butterflies on 32-bit words, the same Montgomery products with the
// integer multiplier: m = y*C' mod 2^32 (mul), y*C - m*q (smull, smsubl) is
// a multiple of 2^32, its high word v = y*w mod q in (-q, q). Operands are
// register numbers (w\x, x\x); C in w19, C' in w20, q in w21; \s, \t scratch.
.macro sct x, y, s, t
    mul     w\s, w\y, w20
    smull   x\t, w\y, w19
    smsubl  x\t, w\s, w21, x\t
    asr     x\t, x\t, #32                   // v in (-q, q)
    add     w\s, w\t, w21
    cmp     w\t, #0
    csel    w\t, w\s, w\t, lt               // v in [0, q)
    subs    w\y, w\x, w\t                   // x - v, borrow when negative
    add     w\s, w\y, w21
    csel    w\y, w\y, w\s, hs
    add     w\x, w\x, w\t                   // x + v < 2q
    subs    w\s, w\x, w21
    csel    w\x, w\s, w\x, hs
.endm

.macro sgs x, y, s, t
    add     w\t, w\x, w\y                   // x + y < 2q
    subs    w\y, w\x, w\y
    add     w\s, w\y, w21
    csel    w\y, w\y, w\s, hs               // x - y mod q
    subs    w\s, w\t, w21
    csel    w\x, w\s, w\t, hs               // x + y mod q
    mul     w\s, w\y, w20
    smull   x\t, w\y, w19
    smsubl  x\t, w\s, w21, x\t
    asr     x\t, x\t, #32
    add     w\s, w\t, w21
    cmp     w\t, #0
    csel    w\y, w\s, w\t, lt
.endm

// Stage with t >= 4 (32-bit words, x6), m blocks (x7), (C, C') pairs from
// x5 + 8*m: one twiddle pair per block, replicated with ld2r. \bf is ct or
// gs, \sbf the scalar sct or sgs. As in the sve backend, each half-block is
// split when x3 is not 0: vector steps of four butterflies from its front,
// scalar steps of two from its back, at the same time, so that the integer
// multiplier works next to the vector one. That pays on Neoverse N1, whose
// vector multiplies take two cycles each and whose integer pipes are idle;
// on V1 and V2 the integer pipes become the bottleneck (ci/mca.sh), so
// neon.c sets x3 (the plan's interleave word) for N1 only. What is left
// takes vector steps, then at most one scalar pair.
.macro wide_stage bf, sbf
    add     x9, x5, x7, lsl #3
    mov     x10, x1
    mov     x13, x1
    mov     x11, x7
22: ldp     w19, w20, [x9]
    ld2r    {v28.4s, v29.4s}, [x9], #8
    add     x14, x10, x6, lsl #2            // y half: vector loads ...
    mov     x16, x14                        // ... and stores
    mov     x22, x14                        // scalar x pointer: end of x half
    add     x23, x14, x6, lsl #2            // scalar y pointer: end of y half
    mov     x12, x23                        // the next block
    mov     x15, x6                         // words left in the half-block
    cbz     x3, 25f
    b       24f
23: ldr     q0, [x10], #16
    ldr     q1, [x14], #16
    ldp     w24, w25, [x22, #-8]!
    ldp     w26, w27, [x23, #-8]!
    \bf     v0, v1, v28, v29, v2, v3
    \sbf    24, 26, 28, 17
    \sbf    25, 27, 28, 17
    str     q0, [x13], #16
    str     q1, [x16], #16
    stp     w24, w25, [x22]
    stp     w26, w27, [x23]
24: subs    x15, x15, #6
    b.hs    23b
    add     x15, x15, #6
    b       25f
27: ldr     q0, [x10], #16
    ldr     q1, [x14], #16
    \bf     v0, v1, v28, v29, v2, v3
    str     q0, [x13], #16
    str     q1, [x16], #16
25: subs    x15, x15, #4
    b.hs    27b
    adds    x15, x15, #4                    // 0 or 2 left
    b.eq    26f
    ldp     w24, w25, [x22, #-8]!
    ldp     w26, w27, [x23, #-8]!
    \sbf    24, 26, 28, 17
    \sbf    25, 27, 28, 17
    stp     w24, w25, [x22]
    stp     w26, w27, [x23]
26: mov     x10, x12
    mov     x13, x12
    subs    x11, x11, #1
    b.ne    22b
.endm

// Stage with t = 2: ld2 on 64-bit units splits two blocks' x pairs from their
// y pairs; twiddles from the t = 2 table (x5 + 8n bytes).
.macro t2_stage bf
    add     x9, x5, x2, lsl #3
    mov     x10, x1
    mov     x11, x1
    lsr     x12, x2, #3
1:  ld2     {v0.2d, v1.2d}, [x10], #32
    ld1     {v28.4s, v29.4s}, [x9], #32
    \bf     v0, v1, v28, v29, v2, v3
    st2     {v0.2d, v1.2d}, [x11], #32
    subs    x12, x12, #1
    b.ne    1b
.endm

// Stage with t = 1: ld2 on 32-bit lanes splits four blocks' x from their y;
// twiddles from the t = 1 table (x5 + 12n bytes).
.macro t1_stage bf
    add     x9, x5, x2, lsl #3
    add     x9, x9, x2, lsl #2
    mov     x10, x1
    mov     x11, x1
    lsr     x12, x2, #3
1:  ld2     {v0.4s, v1.4s}, [x10], #32
    ld1     {v28.4s, v29.4s}, [x9], #32
    \bf     v0, v1, v28, v29, v2, v3
    st2     {v0.4s, v1.4s}, [x11], #32
    subs    x12, x12, #1
    b.ne    1b
.endm

// Saves x19..x28; x2 = n, x5 = the tables of this direction, v30 = w21 = q,
// x3 = the interleave word, x4 = the constants.
.macro ntt_return
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x19, x20, [sp], #80
    ret
.endm

.macro ntt_setup inverse
    stp     x19, x20, [sp, #-80]!
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    ldr     w21, [x0, #16]
    ldr     x2, [x0]
    ldr     x5, [x0, #120]
    add     x4, x5, x2, lsl #5              // constants at aux + 32n bytes
    ld1r    {v30.4s}, [x4]
    ldr     w3, [x4, #20]
    .if \inverse
    add     x5, x5, x2, lsl #4
    .endif
.endm

// void triskel_neon_ntt_forward(const triskel_ntt_plan *plan, uint64_t *a)
func triskel_neon_ntt_forward
    ntt_setup 0
    pack
    mov     x6, x2                          // t = n
    mov     x7, #1                          // m = 1
4:  lsr     x6, x6, #1
    wide_stage ct, sct
    lsl     x7, x7, #1
    cmp     x6, #4
    b.hi    4b
    t2_stage ct
    t1_stage ct
    unpack
    ntt_return
endfunc triskel_neon_ntt_forward

// void triskel_neon_ntt_inverse(const triskel_ntt_plan *plan, uint64_t *a)
func triskel_neon_ntt_inverse
    ntt_setup 1
    pack
    t1_stage gs
    t2_stage gs
    mov     x6, #4                          // t
    lsr     x7, x2, #3                      // h
4:  cmp     x7, #1
    b.eq    5f
    wide_stage gs, sgs
    lsl     x6, x6, #1
    lsr     x7, x7, #1
    b       4b
    // Last stage (h = 1, t = n/2): x = (x + y)/n, y = (x - y)*inv[1]/n.
5:  add     x4, x4, #4
    ld4r    {v24.4s, v25.4s, v26.4s, v27.4s}, [x4]
    mov     x10, x1
    mov     x13, x1
    add     x14, x1, x2, lsl #1
    mov     x16, x14
    lsr     x15, x2, #3
6:  ldr     q0, [x10], #16
    ldr     q1, [x14], #16
    add     v2.4s, v0.4s, v1.4s
    sub     v1.4s, v0.4s, v1.4s
    sub     v0.4s, v2.4s, v30.4s
    add     v3.4s, v1.4s, v30.4s
    umin    v0.4s, v0.4s, v2.4s
    umin    v1.4s, v1.4s, v3.4s
    mont    v2, v0, v24, v25, v3
    mont    v0, v1, v26, v27, v3
    to_pos  v2, v3
    to_pos  v0, v3
    str     q2, [x13], #16
    str     q0, [x16], #16
    subs    x15, x15, #1
    b.ne    6b
    unpack
    ntt_return
endfunc triskel_neon_ntt_inverse

// Element-wise products. Setup from the triskel_modulus at \m: v30 = w6 = q,
// v29 = q^-1 mod 2^32 (Newton: each step doubles the correct low bits,
// 3 -> 6 -> 12 -> 24 -> 48), v27 = R^2 mod q in
// Montgomery form's terms: the constant C = R^2 mod q with C' = C*q^-1 mod
// 2^32, so mont(r, C) = r*R mod q. Scratch x7..x9. The two divisions are per
// call, not per element. An even q (only q = 2 is prime) has no inverse mod
// 2^32: the whole call goes to \fallback, the aarch64 backend's kernel with
// the same arguments.
.macro product_setup m, fallback
    ldr     x6, [\m]
    tbz     w6, #0, \fallback
    dup     v30.4s, w6
    mov     w7, w6                          // q^-1 correct to 3 bits (q odd)
    .rept 4
    mul     w8, w6, w7
    mov     w9, #2
    sub     w8, w9, w8
    mul     w7, w7, w8
    .endr
    dup     v29.4s, w7
    mov     x8, #1
    lsl     x8, x8, #32
    udiv    x9, x8, x6
    msub    x9, x9, x6, x8                  // R mod q
    mul     x8, x9, x9
    udiv    x9, x8, x6
    msub    x9, x9, x6, x8                  // R^2 mod q
    dup     v27.4s, w9
    mul     w9, w9, w7
    dup     v28.4s, w9                      // (R^2 mod q) * q^-1 mod 2^32
.endm

// \r = a*b mod q in [0, q) for a in \a, b in \b (32-bit lanes); \t scratch.
.macro product r, a, b, t
    mul     \t\().4s, \a\().4s, \b\().4s
    sqdmulh \r\().4s, \a\().4s, \b\().4s
    mul     \t\().4s, \t\().4s, v29.4s
    sqdmulh \t\().4s, \t\().4s, v30.4s
    shsub   \r\().4s, \r\().4s, \t\().4s    // a*b/R mod q, in (-q, q)
    mont    \r, \r, v27, v28, \t            // times R^2/R
    to_pos  \r, \t
.endm

// The same product on the integer pipes, by one-constant Barrett (as in
// mulmod.S, in 32-bit terms) with three 32 x 32-bit multiplies (one cycle
// each on N1, where the 64-bit ones take three): for k = bit length of q,
// x = a*b < 2^62, t = x >> (k-1) < 2^32 and mu = floor(2^(k+31) / q) < 2^32,
// qh = t*mu >> 32 is at most two short of floor(x / q) (the argument of
// mulmod.S with 2^(k-1)/q < 1 and t/2^32 < 1), so r = x - qh*q < 3q takes two
// conditional subtractions. \r = a*b mod q from a in w\r and b in w\b
// (register numbers); x\t scratch; x6 = q, x11 = mu, x12 = k - 1.
.macro sbarrett_mul r, b, t
    umull   x\r, w\r, w\b
    lsr     x\t, x\r, x12
    umull   x\t, w\t, w11
    lsr     x\t, x\t, #32
    umsubl  x\r, w\t, w6, x\r
    subs    x\t, x\r, x6
    csel    x\r, x\t, x\r, hs
    subs    x\t, x\r, x6
    csel    x\r, x\t, x\r, hs
.endm

// x11 = mu, x12 = k - 1 of sbarrett_mul for q in x6; x8, x9 scratch.
.macro sbarrett_setup
    clz     x8, x6
    mov     x12, #63
    sub     x12, x12, x8
    add     x8, x12, #32
    mov     x9, #1
    lsl     x9, x9, x8
    udiv    x11, x9, x6
.endm

// w\r = w\r + w\c mod q (both in [0, q)); w\t scratch.
.macro sadd_mod r, c, t
    add     w\r, w\r, w\c
    subs    w\t, w\r, w6
    csel    w\r, w\t, w\r, hs
.endm

// Eight products from the front (a at x1, b at x2, acc read at x10, out x0)
// in two groups of registers, v0..v5 and v16..v21, their instructions
// alternating: each product is a chain of dependent multiplies, and two
// chains side by side keep the vector multiplier busy.
.macro vector_products8 acc
    ld1     {v0.2d, v1.2d}, [x1], #32
    ld1     {v16.2d, v17.2d}, [x1], #32
    ld1     {v2.2d, v3.2d}, [x2], #32
    ld1     {v18.2d, v19.2d}, [x2], #32
    uzp1    v0.4s, v0.4s, v1.4s
    uzp1    v16.4s, v16.4s, v17.4s
    uzp1    v2.4s, v2.4s, v3.4s
    uzp1    v18.4s, v18.4s, v19.4s
    mul     v5.4s, v0.4s, v2.4s
    mul     v21.4s, v16.4s, v18.4s
    sqdmulh v4.4s, v0.4s, v2.4s
    sqdmulh v20.4s, v16.4s, v18.4s
    mul     v5.4s, v5.4s, v29.4s
    mul     v21.4s, v21.4s, v29.4s
    sqdmulh v5.4s, v5.4s, v30.4s
    sqdmulh v21.4s, v21.4s, v30.4s
    shsub   v4.4s, v4.4s, v5.4s             // a*b/R mod q, in (-q, q)
    shsub   v20.4s, v20.4s, v21.4s
    mul     v5.4s, v4.4s, v28.4s            // times R^2/R (mont)
    mul     v21.4s, v20.4s, v28.4s
    sqdmulh v4.4s, v4.4s, v27.4s
    sqdmulh v20.4s, v20.4s, v27.4s
    sqdmulh v5.4s, v5.4s, v30.4s
    sqdmulh v21.4s, v21.4s, v30.4s
    shsub   v4.4s, v4.4s, v5.4s
    shsub   v20.4s, v20.4s, v21.4s
    to_pos  v4, v5
    to_pos  v20, v21
    .if \acc
    ld1     {v0.2d, v1.2d}, [x10], #32
    ld1     {v16.2d, v17.2d}, [x10], #32
    uzp1    v0.4s, v0.4s, v1.4s
    uzp1    v16.4s, v16.4s, v17.4s
    add     v4.4s, v4.4s, v0.4s
    add     v20.4s, v20.4s, v16.4s
    sub     v5.4s, v4.4s, v30.4s
    sub     v21.4s, v20.4s, v30.4s
    umin    v4.4s, v4.4s, v5.4s
    umin    v20.4s, v20.4s, v21.4s
    .endif
    ushll2  v1.2d, v4.4s, #0
    ushll   v0.2d, v4.2s, #0
    ushll2  v17.2d, v20.4s, #0
    ushll   v16.2d, v20.2s, #0
    st1     {v0.2d, v1.2d}, [x0], #32
    st1     {v16.2d, v17.2d}, [x0], #32
.endm

// Four products from the front, as one group of vector_products8.
.macro vector_products acc
    ld1     {v0.2d, v1.2d}, [x1], #32
    ld1     {v2.2d, v3.2d}, [x2], #32
    uzp1    v0.4s, v0.4s, v1.4s
    uzp1    v2.4s, v2.4s, v3.4s
    product v4, v0, v2, v5
    .if \acc
    ld1     {v0.2d, v1.2d}, [x10], #32
    uzp1    v0.4s, v0.4s, v1.4s
    add     v4.4s, v4.4s, v0.4s
    sub     v5.4s, v4.4s, v30.4s
    umin    v4.4s, v4.4s, v5.4s
    .endif
    ushll2  v1.2d, v4.4s, #0
    ushll   v0.2d, v4.2s, #0
    st1     {v0.2d, v1.2d}, [x0], #32
.endm

// Two products from the back (x13, x14, x15 move down from the ends of a, b
// and out/acc).
.macro scalar_pair acc
    ldp     x16, x17, [x13, #-16]!
    ldp     x8, x9, [x14, #-16]!
    sbarrett_mul 16, 8, 7
    sbarrett_mul 17, 9, 7
    .if \acc
    ldp     x3, x4, [x15, #-16]!
    sadd_mod 16, 3, 7
    sadd_mod 17, 4, 7
    stp     x16, x17, [x15]
    .else
    stp     x16, x17, [x15, #-16]!
    .endif
.endm

// mul / mul_acc: out/acc x0, a x1, b x2, len x3, m x4. On Neoverse N1
// (triskel_neon_on_n1, set by neon.c), as in the NTT's wide stages, vector
// products from the front run next to scalar ones from the back: per step
// eight vector products and four scalar ones, so that the integer
// multipliers work next to the vector one, whose multiplies take two cycles
// there (1.4x faster by ci/mca.sh). On V1 and V2 the scalar products would
// slow the step down: eight vector products per step. What is left takes
// vector steps of four, then scalar ones from the front.
.macro products fallback, acc
    product_setup x4, \fallback
    sbarrett_setup
    add     x13, x1, x3, lsl #3
    add     x14, x2, x3, lsl #3
    add     x15, x0, x3, lsl #3
    mov     x10, x0
    mov     x5, x3                          // elements left
    adrp    x7, triskel_neon_on_n1
    ldr     w7, [x7, :lo12:triskel_neon_on_n1]
    cbz     w7, 6f
    b       2f
1:  vector_products8 \acc
    scalar_pair \acc
    scalar_pair \acc
2:  subs    x5, x5, #12
    b.hs    1b
    adds    x5, x5, #12
    b       3f
7:  vector_products8 \acc
6:  subs    x5, x5, #8
    b.hs    7b
    adds    x5, x5, #8
3:  subs    x5, x5, #4
    b.lo    4f
    vector_products \acc
    b       3b
4:  adds    x5, x5, #4
    b.eq    9f
5:  ldr     x16, [x1], #8
    ldr     x8, [x2], #8
    sbarrett_mul 16, 8, 7
    .if \acc
    ldr     x3, [x10], #8
    sadd_mod 16, 3, 7
    .endif
    str     x16, [x0], #8
    subs    x5, x5, #1
    b.ne    5b
9:  ret
.endm

// void triskel_neon_mul(uint64_t *out, const uint64_t *a, const uint64_t *b,
//                       size_t len, const triskel_modulus *m)
func triskel_neon_mul
    products triskel_aarch64_mul, 0
endfunc triskel_neon_mul

// void triskel_neon_mul_acc(uint64_t *acc, const uint64_t *a, const uint64_t *b,
//                           size_t len, const triskel_modulus *m)
func triskel_neon_mul_acc
    products triskel_aarch64_mul_acc, 1
endfunc triskel_neon_mul_acc

// void triskel_neon_mul_scalar(uint64_t *out, const uint64_t *a, uint64_t s,
//                              uint64_t s_shoup, size_t len, const triskel_modulus *m)
// Shoup on 32-bit lanes: s' = floor(s * 2^32 / q) = s_shoup >> 32, and
// s*a - floor(s'*a / 2^32)*q is in [0, 2q), below 2^32.
func triskel_neon_mul_scalar
    ldr     x6, [x5]
    dup     v30.4s, w6
    dup     v28.4s, w2
    lsr     x7, x3, #32
    dup     v29.4s, w7
    lsr     x8, x4, #2
    cbz     x8, 8f
1:  ld1     {v0.2d, v1.2d}, [x1], #32
    uzp1    v0.4s, v0.4s, v1.4s
    umull   v2.2d, v0.2s, v29.2s
    umull2  v3.2d, v0.4s, v29.4s
    uzp2    v2.4s, v2.4s, v3.4s             // floor(s'*a / 2^32)
    mul     v0.4s, v0.4s, v28.4s
    mls     v0.4s, v2.4s, v30.4s
    sub     v2.4s, v0.4s, v30.4s
    umin    v0.4s, v0.4s, v2.4s
    ushll2  v1.2d, v0.4s, #0
    ushll   v0.2d, v0.2s, #0
    st1     {v0.2d, v1.2d}, [x0], #32
    subs    x8, x8, #1
    b.ne    1b
8:  ands    x4, x4, #3
    b.ne    triskel_aarch64_mul_scalar
    ret
endfunc triskel_neon_mul_scalar

    .section .note.GNU-stack, "", %progbits
