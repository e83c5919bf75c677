// triskel sve backend: negacyclic NTT and element-wise products modulo
// q < 2^62 in 64-bit SVE lanes, vector-length agnostic (128 to 2048 bits).
// SVE (not SVE2) instructions only, so Neoverse V1 (Graviton3) runs it; the
// tables and value ranges are the aarch64 backend's (ntt.S, mulmod.S): the
// plan's aux holds (w, w') pairs, forward half then inverse half.
//
// NTT stages by half-block t (in elements) against the vector length VL:
//   t >= VL       one twiddle per block broadcast (ld1rd), contiguous x / y;
//   t = 1         ld2d splits the (x, y) pairs and the (w, w') pairs;
//   2 <= t < VL   gathers and scatters with index vectors (only VL >= 256 bits
//                 meets t = 2, only VL >= 512 meets t = 4, ...).
// SVE1 multiplies are predicated and destructive: umulh and mul overwrite
// their first operand, so the butterflies copy with movprfx first.
// Addressing: the stage loops index with a register (x12) that only incd
// changes; no load waits on a store's address update.

#include "common.h"

    .arch   armv8.2-a+sve
    .text

// y = w*y - floor(w'*y / 2^64)*q, in [0, 2q) (Shoup); \h scratch.
.macro sve_twiddle_y y, w, ws, h
    movprfx \h, \y
    umulh   \h\().d, p0/m, \h\().d, \ws\().d
    mul     \y\().d, p0/m, \y\().d, \w\().d
    mls     \y\().d, p0/m, \h\().d, z30.d
.endm

// Harvey butterfly (as ntt.S), x, y in [0, 4q) -> [0, 4q), in z registers;
// \w, \ws twiddle and companion, \h, \u scratch. z30 = q, z31 = 2q, p0 all.
.macro sve_ct x, y, w, ws, h, u
    sve_twiddle_y \y, \w, \ws, \h
    sub     \u\().d, \x\().d, z31.d
    umin    \x\().d, p0/m, \x\().d, \u\().d         // u = x mod 2q
    add     \u\().d, \x\().d, z31.d
    add     \x\().d, \x\().d, \y\().d               // u + v
    sub     \y\().d, \u\().d, \y\().d               // u + 2q - v
.endm

// sve_ct for x already below 2q (the first forward stage), without x mod 2q.
.macro sve_ct_first x, y, w, ws, h, u
    sve_twiddle_y \y, \w, \ws, \h
    add     \u\().d, \x\().d, z31.d
    add     \x\().d, \x\().d, \y\().d               // x + v
    sub     \y\().d, \u\().d, \y\().d               // x + 2q - v
.endm

// Gentleman-Sande butterfly (as ntt.S), x, y in [0, 2q) -> [0, 2q).
.macro sve_gs x, y, w, ws, h, u
    add     \u\().d, \x\().d, \y\().d
    sub     \y\().d, \x\().d, \y\().d
    add     \y\().d, \y\().d, z31.d                 // x - y + 2q
    sub     \x\().d, \u\().d, z31.d
    umin    \x\().d, p0/m, \x\().d, \u\().d         // (x + y) mod 2q
    sve_twiddle_y \y, \w, \ws, \h
.endm

// x = x mod \m for x < 2 * \m (\m a vector of q or 2q); \u scratch.
.macro sve_reduce x, m, u
    sub     \u\().d, \x\().d, \m\().d
    umin    \x\().d, p0/m, \x\().d, \u\().d
.endm

// x = x * c mod q fully reduced, c in \c with companion \cs (Shoup), x < 2^64.
.macro sve_shoup x, c, cs, h
    movprfx \h, \x
    umulh   \h\().d, p0/m, \h\().d, \cs\().d
    mul     \x\().d, p0/m, \x\().d, \c\().d
    mls     \x\().d, p0/m, \h\().d, z30.d
    sve_reduce \x, z30, \h
.endm

// The scalar butterflies' q and 2q.
Q       .req x21
TWOQ    .req x22

// Saves x19..x28; sets p0 (all lanes), z30 = Q = q, z31 = TWOQ = 2q,
// x3 = VL in elements, x16 = VL + 2, x2 = n.
.macro sve_ntt_setup
    stp     x19, x20, [sp, #-80]!
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    ptrue   p0.d
    ldr     x2, [x0]
    ldr     Q, [x0, #16]
    ldr     TWOQ, [x0, #40]
    dup     z30.d, Q
    dup     z31.d, TWOQ
    cntd    x3
    add     x16, x3, #2
.endm

.macro sve_ntt_return
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x19, x20, [sp], #80
    ret
.endm

// One stage with t >= VL: m blocks (x7) of half-size t (x6), (w, w') pairs
// from x5 + 16*m, data at x1. \bf is sve_ct or sve_gs, \sbf the scalar
// butterfly of the same kind (ct_bf or gs_bf). Each block is split: SVE
// works from its front, one vector per step, while scalar butterflies on
// two elements per step work from its back, so that the vector multiplier
// and the integer multipliers run at the same time; the middle left over
// (fewer than VL + 2 elements) takes vector steps while VL elements remain,
// then scalar pairs. x16 = VL + 2.
.macro sve_wide_stage bf, sbf
    add     x9, x5, x7, lsl #4
    mov     x10, x1
    mov     x11, x7
22:  ld1rd   z28.d, p0/z, [x9]
    ld1rd   z29.d, p0/z, [x9, #8]
    ldp     x19, x20, [x9], #16
    add     x14, x10, x6, lsl #3            // y half
    add     x17, x14, x6, lsl #3            // end of y half: scalar y pointer
    mov     x13, x14                        // end of x half: scalar x pointer
    mov     x12, #0                         // vector index
    mov     x15, x6                         // elements left in the half-block
    b       24f
23:  ld1d    z0.d, p0/z, [x10, x12, lsl #3]
    ld1d    z1.d, p0/z, [x14, x12, lsl #3]
    ldp     x23, x24, [x13, #-16]!
    ldp     x25, x26, [x17, #-16]!
    \bf     z0, z1, z28, z29, z2, z3
    \sbf    x23, x25, x19, x20, x27, x28
    \sbf    x24, x26, x19, x20, x27, x28
    st1d    z0.d, p0, [x10, x12, lsl #3]
    st1d    z1.d, p0, [x14, x12, lsl #3]
    stp     x23, x24, [x13]
    stp     x25, x26, [x17]
    incd    x12
24:  subs    x15, x15, x16
    b.hs    23b
    add     x15, x15, x16
25:  cmp     x15, x3                         // the middle: vector steps ...
    b.lo    26f
    ld1d    z0.d, p0/z, [x10, x12, lsl #3]
    ld1d    z1.d, p0/z, [x14, x12, lsl #3]
    \bf     z0, z1, z28, z29, z2, z3
    st1d    z0.d, p0, [x10, x12, lsl #3]
    st1d    z1.d, p0, [x14, x12, lsl #3]
    incd    x12
    sub     x15, x15, x3
    b       25b
26:  cbz     x15, 27f                         // ... then scalar pairs
    ldp     x23, x24, [x13, #-16]!
    ldp     x25, x26, [x17, #-16]!
    \sbf    x23, x25, x19, x20, x27, x28
    \sbf    x24, x26, x19, x20, x27, x28
    stp     x23, x24, [x13]
    stp     x25, x26, [x17]
    sub     x15, x15, #2
    b       26b
27:  add     x10, x14, x6, lsl #3
    subs    x11, x11, #1
    b.ne    22b
.endm

// One stage with 2 <= t < VL (x6), m blocks (x7): VL butterflies per step,
// butterfly k of the step at x index k + (k & -t), y index that + t, twiddle
// pair m + k/t. Each step moves 2*VL elements and VL/t twiddle pairs on.
.macro sve_gather_stage bf
    index   z20.d, #0, #1                   // k
    neg     x12, x6
    dup     z21.d, x12
    and     z21.d, z20.d, z21.d
    add     z21.d, z21.d, z20.d             // x indexes
    dup     z22.d, x6
    add     z22.d, z21.d, z22.d             // y indexes
    rbit    x12, x6
    clz     x12, x12                        // log2 t
    dup     z23.d, x12
    lsr     z20.d, p0/m, z20.d, z23.d       // k / t
    lsl     z23.d, z20.d, #1                // pair index of the (w, w') words
    movprfx z24, z23
    add     z24.d, z24.d, #1
    add     x9, x5, x7, lsl #4              // &pairs[m]
    udiv    x13, x3, x6                     // blocks per step: VL / t
    lsl     x13, x13, #4                    // their twiddle bytes
    lsl     x15, x3, #4                     // data bytes per step: 2 * VL * 8
    mov     x10, x1
    lsr     x11, x2, #1
    udiv    x11, x11, x3                    // steps: (n/2) / VL
32: ld1d    z28.d, p0/z, [x9, z23.d, lsl #3]
    ld1d    z29.d, p0/z, [x9, z24.d, lsl #3]
    ld1d    z0.d, p0/z, [x10, z21.d, lsl #3]
    ld1d    z1.d, p0/z, [x10, z22.d, lsl #3]
    \bf     z0, z1, z28, z29, z2, z3
    st1d    z0.d, p0, [x10, z21.d, lsl #3]
    st1d    z1.d, p0, [x10, z22.d, lsl #3]
    add     x9, x9, x13
    add     x10, x10, x15
    subs    x11, x11, #1
    b.ne    32b
.endm

// void triskel_sve_ntt_forward(const triskel_ntt_plan *plan, uint64_t *a)
func triskel_sve_ntt_forward
    sve_ntt_setup
    ldr     x5, [x0, #120]                  // aux: (w, w') pairs, forward half
    mov     x6, x2                          // t = n
    mov     x7, #1                          // m = 1
    lsr     x8, x2, #1                      // n/2
    // The first stage (t = n/2 >= 512 >= VL) on reduced inputs, x not reduced.
    lsr     x6, x6, #1
    sve_wide_stage sve_ct_first, ct_bf_first
    lsl     x7, x7, #1
1:  lsr     x6, x6, #1
    cmp     x6, #1
    b.eq    4f
    cmp     x6, x3
    b.lo    5f
    sve_wide_stage sve_ct, ct_bf
    b       6f
5:  sve_gather_stage sve_ct
6:  lsl     x7, x7, #1
    b       1b
    // Last stage (t = 1, m = n/2): ld2d splits x from y and w from w'; the
    // final reduction [0, 4q) -> [0, q) folded in.
4:  add     x9, x5, x8, lsl #4
    mov     x12, #0
    lsl     x13, x3, #1                     // 2 * VL words per step
7:  ld2d    {z0.d, z1.d}, p0/z, [x1, x12, lsl #3]
    ld2d    {z28.d, z29.d}, p0/z, [x9, x12, lsl #3]
    sve_ct  z0, z1, z28, z29, z2, z3
    sve_reduce z0, z31, z2
    sve_reduce z1, z31, z3
    sve_reduce z0, z30, z2
    sve_reduce z1, z30, z3
    st2d    {z0.d, z1.d}, p0, [x1, x12, lsl #3]
    add     x12, x12, x13
    cmp     x12, x2
    b.lo    7b
    sve_ntt_return
endfunc triskel_sve_ntt_forward

// void triskel_sve_ntt_inverse(const triskel_ntt_plan *plan, uint64_t *a)
func triskel_sve_ntt_inverse
    sve_ntt_setup
    ldr     x5, [x0, #120]
    add     x5, x5, x2, lsl #4              // aux: inverse half
    lsr     x8, x2, #1
    // First stage (t = 1, h = n/2).
    add     x9, x5, x8, lsl #4
    mov     x12, #0
    lsl     x13, x3, #1
7:  ld2d    {z0.d, z1.d}, p0/z, [x1, x12, lsl #3]
    ld2d    {z28.d, z29.d}, p0/z, [x9, x12, lsl #3]
    sve_gs  z0, z1, z28, z29, z2, z3
    st2d    {z0.d, z1.d}, p0, [x1, x12, lsl #3]
    add     x12, x12, x13
    cmp     x12, x2
    b.lo    7b
    // Stages h = n/4, .., 2 (t = 2, .., n/8).
    mov     x6, #2                          // t
    lsr     x7, x8, #1                      // h (the stage's block count)
1:  cmp     x6, x3
    b.lo    5f
    sve_wide_stage sve_gs, gs_bf
    b       6f
5:  sve_gather_stage sve_gs
6:  lsl     x6, x6, #1
    lsr     x7, x7, #1
    cmp     x7, #1
    b.hi    1b
    // Last stage (h = 1, t = n/2) with n^-1 folded in, fully reduced.
    add     x9, x0, #88
    ld1rd   z24.d, p0/z, [x9]               // n^-1
    ld1rd   z25.d, p0/z, [x9, #8]
    ld1rd   z26.d, p0/z, [x9, #16]          // n^-1 * inv[1]
    ld1rd   z27.d, p0/z, [x9, #24]
    add     x14, x1, x8, lsl #3
    mov     x12, #0
8:  ld1d    z0.d, p0/z, [x1, x12, lsl #3]
    ld1d    z1.d, p0/z, [x14, x12, lsl #3]
    add     z2.d, z0.d, z1.d
    sub     z1.d, z0.d, z1.d
    add     z1.d, z1.d, z31.d
    sve_shoup z2, z24, z25, z3
    sve_shoup z1, z26, z27, z3
    st1d    z2.d, p0, [x1, x12, lsl #3]
    st1d    z1.d, p0, [x14, x12, lsl #3]
    incd    x12
    cmp     x12, x8
    b.lo    8b
    sve_ntt_return
endfunc triskel_sve_ntt_inverse

// Element-wise loop frame: x5 counts elements, p1 is the active predicate
// (whilelo against \len), p0 all lanes (the arithmetic is lane-wise, so the
// inactive lanes of a partial last step compute garbage nobody stores).
// out may alias an input exactly: each step loads before it stores.
.macro sve_loop len, body
    ptrue   p0.d
    mov     x5, #0
    whilelo p1.d, x5, \len
    b.none  9f
1:  \body
    incd    x5
    whilelo p1.d, x5, \len
    b.first 1b
9:  ret
.endm

// void triskel_sve_add(uint64_t *out, const uint64_t *a, const uint64_t *b,
//                      size_t len, const triskel_modulus *m)
.macro add_body
    ld1d    z0.d, p1/z, [x1, x5, lsl #3]
    ld1d    z1.d, p1/z, [x2, x5, lsl #3]
    add     z0.d, z0.d, z1.d
    sve_reduce z0, z30, z1
    st1d    z0.d, p1, [x0, x5, lsl #3]
.endm
func triskel_sve_add
    ptrue   p0.d
    ld1rd   z30.d, p0/z, [x4]
    sve_loop x3, add_body
endfunc triskel_sve_add

// a - b, plus q when it wrapped: min(a - b, a - b + q) as unsigned.
.macro sub_body
    ld1d    z0.d, p1/z, [x1, x5, lsl #3]
    ld1d    z1.d, p1/z, [x2, x5, lsl #3]
    sub     z0.d, z0.d, z1.d
    add     z1.d, z0.d, z30.d
    umin    z0.d, p0/m, z0.d, z1.d
    st1d    z0.d, p1, [x0, x5, lsl #3]
.endm
func triskel_sve_sub
    ptrue   p0.d
    ld1rd   z30.d, p0/z, [x4]
    sve_loop x3, sub_body
endfunc triskel_sve_sub

// q - a, reduced: min(q - a, -a) as unsigned is 0 for a = 0, q - a otherwise.
.macro neg_body
    ld1d    z0.d, p1/z, [x1, x5, lsl #3]
    sub     z1.d, z30.d, z0.d
    sve_reduce z1, z30, z0
    st1d    z1.d, p1, [x0, x5, lsl #3]
.endm
func triskel_sve_neg
    ptrue   p0.d
    ld1rd   z30.d, p0/z, [x3]
    sve_loop x2, neg_body
endfunc triskel_sve_neg

// One-constant Barrett as in mulmod.S: z30 = q, z25 = k - 2, z26 = 64 - (k - 2),
// z27 = mu; with \wide (62-bit q) z27 = floor(2^125 / q) and the shifts are
// immediates, which spares a movprfx. r = a*b (+ c) mod q into z2 and out;
// z0, z1 and z3 clobbered. p1 selects the lanes loaded and stored.
.macro barrett_body acc, wide
    ld1d    z0.d, p1/z, [x1, x5, lsl #3]
    ld1d    z1.d, p1/z, [x2, x5, lsl #3]
    movprfx z2, z0
    mul     z2.d, p0/m, z2.d, z1.d          // low word
    umulh   z0.d, p0/m, z0.d, z1.d          // high word
    .if \acc
    ld1d    z1.d, p1/z, [x0, x5, lsl #3]
    add     z2.d, z2.d, z1.d
    cmphi   p2.d, p0/z, z1.d, z2.d          // carry out of the low word
    add     z0.d, p2/m, z0.d, z24.d         // z24 = 1
    .endif
    .if \wide
    lsr     z3.d, z2.d, #60
    lsl     z0.d, z0.d, #4
    orr     z3.d, z3.d, z0.d                // floor(x / 2^60)
    umulh   z3.d, p0/m, z3.d, z27.d
    lsr     z3.d, z3.d, #1                  // quotient estimate
    .else
    movprfx z3, z2
    lsr     z3.d, p0/m, z3.d, z25.d
    lsl     z0.d, p0/m, z0.d, z26.d         // shifts >= 64 give 0 (k = 2)
    orr     z3.d, z3.d, z0.d                // floor(x / 2^(k-2))
    umulh   z3.d, p0/m, z3.d, z27.d         // quotient estimate
    .endif
    mls     z2.d, p0/m, z3.d, z30.d
    sve_reduce z2, z30, z3
    st1d    z2.d, p1, [x0, x5, lsl #3]
.endm

// The scalar Barrett of common.h, on these registers.
    .unreq  Q
Q       .req x6
SHR     .req x9
SHL     .req x10
MU      .req x11

// The loops of barrett_func; \wide: 62-bit q.
.macro barrett_loop acc, wide
    b       2f
1:  barrett_body \acc, \wide
    ldp     x13, x14, [x15, #-16]!
    ldp     x16, x17, [x7, #-16]!
    .if \acc
    ldp     x21, x22, [x12, #-16]!
    .else
    sub     x12, x12, #16
    .endif
    barrett x19, x13, x16, x21, \wide, \acc
    barrett x20, x14, x17, x22, \wide, \acc
    stp     x19, x20, [x12]
    incd    x5
2:  subs    x23, x23, x24
    b.hs    1b
    add     x23, x23, x24
    add     x23, x23, x5                    // end of the middle
3:  whilelo p1.d, x5, x23
    b.none  9f
    barrett_body \acc, \wide
    incd    x5
    b       3b
.endm

// mul / mul_acc: out x0, a x1, b x2, len x3, m x4. As in the NTT, each
// vector step of VL elements from the front runs next to two scalar
// products from the back (the integer multipliers are otherwise idle); the
// middle left over (fewer than VL + 2) takes predicated vector steps.
.macro barrett_func acc
    stp     x19, x20, [sp, #-48]!
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    ptrue   p0.d
    ptrue   p1.d
    barrett_setup x4, x8, Q, SHR, MU, x7, x10, x12
    neg     SHL, SHR
    dup     z30.d, Q
    dup     z25.d, SHR
    mov     x12, #64
    sub     x12, x12, SHR
    dup     z26.d, x12
    dup     z27.d, MU
    mov     z24.d, #1
    add     x15, x1, x3, lsl #3             // scalar pointers: the ends of a, b, out
    add     x7, x2, x3, lsl #3
    add     x12, x0, x3, lsl #3
    mov     x5, #0
    mov     x23, x3                         // elements left
    cntd    x24
    add     x24, x24, #2                    // VL + 2 per step
    cmp     x8, #2                          // 62-bit q?
    b.eq    5f
    barrett_loop \acc, 0
5:  barrett_setup62 x4, MU, x13, x14
    dup     z27.d, MU
    barrett_loop \acc, 1
9:  ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x19, x20, [sp], #48
    ret
.endm

// void triskel_sve_mul(uint64_t *out, const uint64_t *a, const uint64_t *b,
//                      size_t len, const triskel_modulus *m)
func triskel_sve_mul
    barrett_func 0
endfunc triskel_sve_mul

// void triskel_sve_mul_acc(uint64_t *acc, const uint64_t *a, const uint64_t *b,
//                          size_t len, const triskel_modulus *m)
func triskel_sve_mul_acc
    barrett_func 1
endfunc triskel_sve_mul_acc

// void triskel_sve_mul_scalar(uint64_t *out, const uint64_t *a, uint64_t s,
//                             uint64_t s_shoup, size_t len, const triskel_modulus *m)
.macro mul_scalar_body
    ld1d    z0.d, p1/z, [x1, x5, lsl #3]
    sve_shoup z0, z28, z29, z1
    st1d    z0.d, p1, [x0, x5, lsl #3]
.endm
func triskel_sve_mul_scalar
    ptrue   p0.d
    ld1rd   z30.d, p0/z, [x5]
    dup     z28.d, x2
    dup     z29.d, x3
    sve_loop x4, mul_scalar_body
endfunc triskel_sve_mul_scalar

// The key-switching ops, one 64-bit lane per output element (the sums run
// down the terms in each lane, so the order of the double sum is portable's).

// (\hi:\lo) mod q lane-wise, as reduce128 in keyswitch.S: z26:z27 =
// floor(2^128 / q) (high, low), z30 = q, z24 = 1; \hi, z6..z9, p2 clobbered.
// Unsigned carries: a sum is below an addend exactly when it wrapped.
.macro sve_reduce128 lo, hi
    movprfx z6, \lo
    umulh   z6.d, p0/m, z6.d, z27.d
    movprfx z7, \lo
    mul     z7.d, p0/m, z7.d, z26.d
    movprfx z8, \lo
    umulh   z8.d, p0/m, z8.d, z26.d
    add     z7.d, z7.d, z6.d
    cmphi   p2.d, p0/z, z6.d, z7.d
    add     z8.d, p2/m, z8.d, z24.d         // lo * bhi + hi(lo * blo)
    movprfx z6, \hi
    mul     z6.d, p0/m, z6.d, z27.d
    movprfx z9, \hi
    umulh   z9.d, p0/m, z9.d, z27.d
    add     z7.d, z7.d, z6.d
    cmphi   p2.d, p0/z, z6.d, z7.d          // carry of the middle words
    mul     \hi\().d, p0/m, \hi\().d, z26.d
    add     \hi\().d, \hi\().d, z8.d
    add     \hi\().d, \hi\().d, z9.d
    add     \hi\().d, p2/m, \hi\().d, z24.d // quotient estimate
    mls     \lo\().d, p0/m, \hi\().d, z30.d
    sve_reduce \lo, z30, z6
    sve_reduce \lo, z30, z6
.endm

// (z5:z4) += z0 * z1 (z0, z1, z2 and p2 clobbered).
.macro sve_mul_add128
    movprfx z2, z0
    mul     z2.d, p0/m, z2.d, z1.d
    umulh   z0.d, p0/m, z0.d, z1.d
    add     z4.d, z4.d, z2.d
    cmphi   p2.d, p0/z, z2.d, z4.d
    add     z5.d, z5.d, z0.d
    add     z5.d, p2/m, z5.d, z24.d
.endm

// After the term x13 was added: on to the next term (2b), reducing the sum
// after every 16, or on to 3f after the last (x9 terms).
.macro sve_next_term
    add     x13, x13, #1
    cmp     x13, x9
    b.eq    3f
    tst     x13, #15
    b.ne    2b
    sve_reduce128 z4, z5
    mov     z5.d, #0
    b       2b
.endm

// Setup of dot and base_convert from the triskel_modulus at \m.
.macro sve_sum_setup m
    ptrue   p0.d
    ld1rd   z30.d, p0/z, [\m]
    ld1rd   z26.d, p0/z, [\m, #8]
    ld1rd   z27.d, p0/z, [\m, #16]
    mov     z24.d, #1
    mov     x6, #0
.endm

// void triskel_sve_dot(uint64_t *out, const uint64_t *const *a,
//                      const uint64_t *const *b, size_t count, size_t len,
//                      const triskel_modulus *m)
// x6: first element of the step, x13: term j, (z5:z4) the sums.
// With 128-bit vectors (two lanes: Neoverse V2, N2) the scalar kernel of the
// aarch64 backend is faster by ci/mca.sh (1.35 against 2.0 cycles per term on
// V2): the call goes there.
func triskel_sve_dot
    cntd    x6
    cmp     x6, #2
    b.eq    triskel_aarch64_dot
    sve_sum_setup x5
    mov     x9, x3
    whilelo p1.d, x6, x4
    b.none  9f
1:  mov     z4.d, #0
    mov     z5.d, #0
    mov     x13, #0
2:  ldr     x14, [x1, x13, lsl #3]
    ldr     x15, [x2, x13, lsl #3]
    ld1d    z0.d, p1/z, [x14, x6, lsl #3]
    ld1d    z1.d, p1/z, [x15, x6, lsl #3]
    sve_mul_add128
    sve_next_term
3:  sve_reduce128 z4, z5
    st1d    z4.d, p1, [x0, x6, lsl #3]
    incd    x6
    whilelo p1.d, x6, x4
    b.first 1b
9:  ret
endfunc triskel_sve_dot

// The column loop of base_convert (registers: see the function); \exact adds
// the double sum in z16 and the correction by vq_mod_p[v].
.macro sve_convert_columns exact
1:  mov     z4.d, #0
    mov     z5.d, #0
    mov     z16.d, #0                       // 0.0
    mov     x13, #0
2:  ldr     x14, [x1, x13, lsl #3]
    ldr     x15, [x12, x13, lsl #3]
    ld1d    z0.d, p1/z, [x14, x6, lsl #3]   // y_i
    dup     z1.d, x15
    .if \exact
    scvtf   z3.d, p0/m, z0.d
    ldr     d17, [x11, x13, lsl #3]
    mov     z17.d, d17
    fmul    z3.d, z3.d, z17.d
    fadd    z16.d, z16.d, z3.d
    .endif
    sve_mul_add128
    sve_next_term
3:  sve_reduce128 z4, z5
    .if \exact
    cmp     x9, #1
    b.ne    4f
    ldr     x14, [x1]                       // k = 1: v = [y_0 > q_0 / 2]
    ld1d    z0.d, p1/z, [x14, x6, lsl #3]
    cmphi   p2.d, p0/z, z0.d, z18.d
    sel     z17.d, p2, z20.d, z19.d
    b       5f
4:  fadd    z16.d, p0/m, z16.d, #0.5
    fcvtzu  z16.d, p0/m, z16.d              // 0 for negative sums
    umin    z16.d, p0/m, z16.d, z21.d       // at most k
    ld1d    z17.d, p1/z, [x3, z16.d, lsl #3]
5:  add     z4.d, z4.d, z30.d
    sub     z4.d, z4.d, z17.d
    sve_reduce z4, z30, z17
    .endif
    st1d    z4.d, p1, [x0, x6, lsl #3]
    incd    x6
    whilelo p1.d, x6, x2
    b.first 1b
.endm

// void triskel_sve_base_convert(uint64_t *out, const uint64_t *const *y,
//                               size_t len, const triskel_convert_table *t,
//                               const triskel_modulus *m)
// x3: vq_mod_p, x9: k, x11: inv_q, x12: qhat_mod_p, x13: term i; z18 = q_0 / 2,
// z19, z20 = vq_mod_p[0], [1], z21 = k (exact only). Two lanes: the aarch64
// kernel, as for dot.
func triskel_sve_base_convert
    cntd    x6
    cmp     x6, #2
    b.eq    triskel_aarch64_base_convert
    sve_sum_setup x4
    ldp     x9, x10, [x3]
    ldp     x11, x12, [x3, #16]
    ldr     x3, [x3, #32]
    whilelo p1.d, x6, x2
    b.none  9f
    cbz     x3, 8f
    ldr     x10, [x10]
    lsr     x10, x10, #1
    dup     z18.d, x10
    ld1rd   z19.d, p0/z, [x3]
    ld1rd   z20.d, p0/z, [x3, #8]
    dup     z21.d, x9
    sve_convert_columns 1
    ret
8:  sve_convert_columns 0
9:  ret
endfunc triskel_sve_base_convert

// void triskel_sve_automorphism_coeff(uint64_t *out, const uint64_t *a,
//                                     uint64_t g, size_t n, const triskel_modulus *m)
// A scatter: lane j stores a[j] or -a[j] at (j g mod 2n) mod n; z26 holds
// j g mod 2n for the step's lanes and moves on by VL g each step.
func triskel_sve_automorphism_coeff
    ptrue   p0.d
    ld1rd   z30.d, p0/z, [x4]
    lsl     x5, x3, #1
    sub     x5, x5, #1
    and     x2, x2, x5                      // the step of e
    dup     z29.d, x5                       // 2n - 1
    sub     x6, x3, #1
    dup     z28.d, x6                       // n - 1
    dup     z27.d, x3                       // n
    index   z26.d, #0, x2
    and     z26.d, z26.d, z29.d
    cntd    x7
    mul     x7, x7, x2
    dup     z25.d, x7
    mov     x8, #0
    whilelo p1.d, x8, x3
    b.none  9f
1:  ld1d    z0.d, p1/z, [x1, x8, lsl #3]
    sub     z1.d, z30.d, z0.d
    sve_reduce z1, z30, z2                  // -a mod q
    and     z2.d, z26.d, z27.d
    cmpne   p2.d, p0/z, z2.d, #0            // e >= n: the negated value
    sel     z0.d, p2, z1.d, z0.d
    and     z2.d, z26.d, z28.d
    st1d    z0.d, p1, [x0, z2.d, lsl #3]
    add     z26.d, z26.d, z25.d
    and     z26.d, z26.d, z29.d
    incd    x8
    whilelo p1.d, x8, x3
    b.first 1b
9:  ret
endfunc triskel_sve_automorphism_coeff

// void triskel_sve_automorphism_ntt(uint64_t *out, const uint64_t *a,
//                                   const uint32_t *perm, size_t n)
// A gather: out[j] = a[perm[j]].
func triskel_sve_automorphism_ntt
    mov     x5, #0
    whilelo p1.d, x5, x3
    b.none  9f
1:  ld1w    z0.d, p1/z, [x2, x5, lsl #2]
    ld1d    z1.d, p1/z, [x1, z0.d, lsl #3]
    st1d    z1.d, p1, [x0, x5, lsl #3]
    incd    x5
    whilelo p1.d, x5, x3
    b.first 1b
9:  ret
endfunc triskel_sve_automorphism_ntt

    .section .note.GNU-stack, "", %progbits
