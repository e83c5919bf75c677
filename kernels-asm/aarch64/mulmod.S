// triskel aarch64 backend (scalar): element-wise products modulo q < 2^62.
//
// mul, mul_acc: Barrett with one 64-bit constant derived per call.
//   Let k = bit length of q (2 <= k <= 62), x = a*b (+ c) < q^2 < 2^(2k).
//   t  = floor(x / 2^(k-2))                         (< 2^(k+2) <= 2^64)
//   mu = floor(2^(k+62) / q) = floor(2^128/q) >> (66-k)   (<= 2^63)
//   qh = floor(t * mu / 2^64)                       (one umulh)
//   With t = x/2^(k-2) - f and mu = 2^(k+62)/q - g (0 <= f, g < 1),
//   x/q - t*mu/2^64 = (f*2^(k+62)/q + g*t)/2^64 < 1/2 + 2^(k-62), so
//   qh <= floor(x/q) and qh is exact or one short for k <= 61 (one
//   conditional subtraction).
//   For k = 62 that bound would allow two short; one more bit of constant
//   makes it one: t = floor(x / 2^60) (< 2^64), mu = floor(2^125 / q)
//   (< 2^64: a 62-bit prime is above 2^61), qh = floor(t * mu / 2^65)
//   (umulh, then a shift by one), so x/q - t*mu/2^65 = (f*2^125/q + g*t)/2^65
//   < 2^60/q + 2^64/2^65 < 1/2 + 1/2: qh is exact or one short.
//   r = x - qh*q is computed mod 2^64 from the low word of x (r < 2q < 2^63).
// mul_scalar: Shoup with the caller's s' = floor(s * 2^64 / q), as portable.
//
// Instructions per element (pair loops, from aarch64-linux-gnu-objdump -d),
// against portable C (gcc 12 -O3 for aarch64, which reloads the modulus
// every iteration because out may alias it as far as C knows):
//   mul        11.5 (62-bit q too), 4 multiplies   portable 24, 9 multiplies
//   mul_acc    14   (62-bit q too), 4 multiplies   portable 27, 9 multiplies
//   mul_scalar  7,                  3 multiplies   portable 12, 3 multiplies
// The scalar products for the reason given in ntt.S: NEON has no 64x64-bit
// multiply, and 32-bit limbs take more instructions and more multiplies.

#include "common.h"

    .text

Q       .req x5
SHR     .req x9         // k - 2
SHL     .req x10        // 64 - (k - 2), as a shift amount mod 64
MU      .req x11

// The scalar Barrett product `barrett` is in common.h (the sve backend
// interleaves it with vector products).

// The pairs, then the last element of an odd len: out/acc x0, a x1, b x2,
// len x3; \wide for 62-bit q.
.macro barrett_loop acc, wide
    lsr     x13, x3, #1
    cbz     x13, 8f
1:  ldp     x6, x7, [x1], #16
    ldp     x12, x14, [x2], #16
    .if \acc
    ldp     x15, x16, [x0], #16     // the load advances acc: the store
    .endif                          // below then waits on nothing
    barrett x4, x6, x12, x15, \wide, \acc
    barrett x17, x7, x14, x16, \wide, \acc
    .if \acc
    stp     x4, x17, [x0, #-16]
    .else
    stp     x4, x17, [x0], #16
    .endif
    subs    x13, x13, #1
    b.ne    1b
8:  tbz     x3, #0, 9f
    ldr     x6, [x1]
    ldr     x12, [x2]
    .if \acc
    ldr     x15, [x0]
    .endif
    barrett x4, x6, x12, x15, \wide, \acc
    str     x4, [x0]
9:  ret
.endm

// Whole kernel: out/acc x0, a x1, b x2, len x3, m x4.
.macro barrett_func acc
    barrett_setup x4, x8, Q, SHR, MU, x6, x7, x12
    neg     SHL, SHR
    cmp     x8, #2                  // 62-bit q?
    b.eq    5f
    barrett_loop \acc, 0
5:  barrett_setup62 x4, MU, x6, x7
    barrett_loop \acc, 1
.endm

// void triskel_aarch64_mul(uint64_t *out, const uint64_t *a, const uint64_t *b,
//                       size_t len, const triskel_modulus *m)
func triskel_aarch64_mul
    barrett_func 0
endfunc triskel_aarch64_mul

// void triskel_aarch64_mul_acc(uint64_t *acc, const uint64_t *a, const uint64_t *b,
//                           size_t len, const triskel_modulus *m)
func triskel_aarch64_mul_acc
    barrett_func 1
endfunc triskel_aarch64_mul_acc

// r = a * s mod q into \a (Shoup: s in x2, s' in x3, q in x6); \t clobbered.
.macro shoup_mul a, t
    umulh   \t, \a, x3
    mul     \a, \a, x2
    msub    \a, \t, x6, \a
    sub_if_ge \a, x6, \t
.endm

// void triskel_aarch64_mul_scalar(uint64_t *out, const uint64_t *a, uint64_t s,
//                              uint64_t s_shoup, size_t len, const triskel_modulus *m)
func triskel_aarch64_mul_scalar
    ldr     x6, [x5]
    lsr     x7, x4, #1
    cbz     x7, 8f
1:  ldp     x12, x13, [x1], #16
    shoup_mul x12, x14
    shoup_mul x13, x15
    stp     x12, x13, [x0], #16
    subs    x7, x7, #1
    b.ne    1b
8:  tbz     x4, #0, 9f
    ldr     x12, [x1]
    shoup_mul x12, x14
    str     x12, [x0]
9:  ret
endfunc triskel_aarch64_mul_scalar

    .section .note.GNU-stack, "", %progbits
