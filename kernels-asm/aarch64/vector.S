// triskel aarch64 backend: element-wise add, sub, negate modulo q < 2^62
// (shared by the aarch64, sve and neon backends' tables).
// No products, so these are vector code: four residues (two 2 x 64-bit
// registers) per step, unaligned ld1/st1, a scalar loop for the last len % 4.
// out may alias an input exactly: each step loads before it stores.
// Per element (four-residue loop): add 3.25, sub 3.25, neg 2.75 instructions;
// portable C with gcc 12 -O3: add 5 (vectorized two lanes at a time after a
// run-time overlap check), sub 8 to 9 (scalar, with a branch), neg 4.

#include "common.h"

    .text


// Loop frame of one op: out x0, a x1, b x2, len x3, m x4 (unary: len x2,
// m x3, no b). \vec turns a in (v0, v1), b in (v2, v3) into (v0, v1), with q
// broadcast in v31; \one turns a in x7, b in x8 into x7, with q in x5.
.macro elementwise vec, one, unary=0
    .if \unary
    LEN .req x2
    ldr     x5, [x3]
    .else
    LEN .req x3
    ldr     x5, [x4]
    .endif
    dup     v31.2d, x5
    lsr     x6, LEN, #2
    cbz     x6, 8f
1:  ld1     {v0.2d, v1.2d}, [x1], #32
    .if !\unary
    ld1     {v2.2d, v3.2d}, [x2], #32
    .endif
    \vec
    st1     {v0.2d, v1.2d}, [x0], #32
    subs    x6, x6, #1
    b.ne    1b
8:  ands    x6, LEN, #3
    b.eq    9f
2:  ldr     x7, [x1], #8
    .if !\unary
    ldr     x8, [x2], #8
    .endif
    \one
    str     x7, [x0], #8
    subs    x6, x6, #1
    b.ne    2b
9:  ret
    .unreq LEN
.endm

// s = a + b (< 2q < 2^63); s - q when s >= q.
.macro add_vec
    add     v0.2d, v0.2d, v2.2d
    add     v1.2d, v1.2d, v3.2d
    cmhs    v2.2d, v0.2d, v31.2d
    cmhs    v3.2d, v1.2d, v31.2d
    and     v2.16b, v2.16b, v31.16b
    and     v3.16b, v3.16b, v31.16b
    sub     v0.2d, v0.2d, v2.2d
    sub     v1.2d, v1.2d, v3.2d
.endm
.macro add_one
    add     x7, x7, x8
    sub_if_ge x7, x5, x8
.endm

// void triskel_aarch64_add(uint64_t *out, const uint64_t *a, const uint64_t *b,
//                       size_t len, const triskel_modulus *m)
func triskel_aarch64_add
    elementwise add_vec, add_one
endfunc triskel_aarch64_add

// a - b, plus q when b > a.
.macro sub_vec
    cmhi    v4.2d, v2.2d, v0.2d
    cmhi    v5.2d, v3.2d, v1.2d
    sub     v0.2d, v0.2d, v2.2d
    sub     v1.2d, v1.2d, v3.2d
    and     v4.16b, v4.16b, v31.16b
    and     v5.16b, v5.16b, v31.16b
    add     v0.2d, v0.2d, v4.2d
    add     v1.2d, v1.2d, v5.2d
.endm
.macro sub_one
    subs    x7, x7, x8
    add     x8, x7, x5
    csel    x7, x7, x8, hs
.endm

// void triskel_aarch64_sub(uint64_t *out, const uint64_t *a, const uint64_t *b,
//                       size_t len, const triskel_modulus *m)
func triskel_aarch64_sub
    elementwise sub_vec, sub_one
endfunc triskel_aarch64_sub

// q - a, or 0 when a = 0.
.macro neg_vec
    cmeq    v2.2d, v0.2d, #0
    cmeq    v3.2d, v1.2d, #0
    sub     v0.2d, v31.2d, v0.2d
    sub     v1.2d, v31.2d, v1.2d
    bic     v0.16b, v0.16b, v2.16b
    bic     v1.16b, v1.16b, v3.16b
.endm
.macro neg_one
    sub     x8, x5, x7
    cmp     x7, #0
    csel    x7, x8, xzr, ne
.endm

// void triskel_aarch64_neg(uint64_t *out, const uint64_t *a, size_t len,
//                       const triskel_modulus *m)
func triskel_aarch64_neg
    elementwise neg_vec, neg_one, 1
endfunc triskel_aarch64_neg

    .section .note.GNU-stack, "", %progbits
