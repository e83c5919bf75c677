// triskel aarch64 backend (scalar): negacyclic NTT for AArch64, q < 2^62.
// ARMv8.0-A + Advanced SIMD only (tested under qemu-aarch64 -cpu cortex-a72).
//
// Scheme: the Shoup products are scalar mul/umulh/msub, and so is the rest of
// the butterfly; NEON does the element-wise add/sub/neg (vector.S). Why, in
// instructions per radix-2 butterfly (inner loop, two butterflies per step,
// counted from aarch64-linux-gnu-objdump -d):
//
//   portable C, gcc 12 -O3 for aarch64: forward 18 (3 multiplies: umulh,
//     mul, mul; single ldr/str per value; the [0, 4q) -> [0, q) pass over the
//     whole vector afterwards), inverse 16 (3 multiplies).
//   this file: forward 11, inverse 11 (3 multiplies each):
//     butterfly 8 = mul, umulh, msub (v = w*y - floor(w'*y/2^64)*q)
//                 + subs, csel (x mod 2q) + add, add, sub (x+v, x+2q-v)
//     memory 2    = ldp x0:x1, ldp y0:y1, stp, stp per two butterflies
//     loop 1      = subs, b.ne per two butterflies
//   First forward stage: 9 per butterfly (inputs are reduced, so x needs no
//   subs/csel). Last forward stage (t = 1): 21 per butterfly with the final reduction
//   folded in (portable: about 27 plus 9 for its separate reduction pass,
//   per butterfly of that stage); first inverse stage 13 (portable about 25),
//   last inverse stage with n^-1 14 (portable 24, which reloads the n^-1
//   constants every iteration). Twiddles and companions come interleaved
//   from plan->aux (one ldp).
//
//   Vector with 32-bit limbs (NEON multiplies at most 32x32->64 per lane,
//   umull/umlal, two lanes per instruction), per two butterflies:
//     high word of w'*y: umull x4 (ll, lh, hl, hh) + usra x3 + and   8
//     low words w*y - h*q: mul.4s + mls.4s (cross terms), uaddlp, shl,
//       umull, umlsl, add                                            7
//     limb split of y and h (uzp1/uzp2, shared by four lanes)        1.5
//     x mod 2q, x+v, x+2q-v: cmhs, and, sub, add, add, sub           6
//   = 22.5 per two, 11.25 per butterfly before loads/stores and the
//   twiddle shuffles the stages with t = 1 would need, and 4 multiply
//   instructions per butterfly instead of 3: worse on both counts.
//   Mixed (scalar products, vector add/sub/compare): about 10 per butterfly
//   on paper, but one general-to-vector transfer (fmov/ins) per butterfly to
//   bring v into a vector register, a cross-domain move that costs more than
//   the one instruction it saves; the 3 multiplies stay. So: scalar.
//
// Addressing: the loads post-increment and the stores use a negative offset,
// so no load waits on the address update of a store (static analysers, and
// some cores, otherwise chain every iteration through the store).
//
// Value ranges as in portable.c: forward in [0, 4q), inverse in [0, 2q),
// fully reduced on the way out, so results are bit-identical to portable.

#include "common.h"

    .text

// Register aliases shared by both transforms.
Q       .req x3         // q
TWOQ    .req x4         // 2q

// The butterflies ct_bf and gs_bf are in common.h (the sve backend uses them
// too); they read q and 2q from the aliases Q and TWOQ.

// One stage with half-blocks of t >= 2 elements: x7 blocks from a (x1), their
// (w, w') pairs from x5 + 16*x7 on, t in x6; \bf is the butterfly, applied
// to two neighbouring pairs per step. Clobbers x9..x17, x19..x24.
.macro stage bf
    add     x9, x5, x7, lsl #4      // (w, w') of the stage's first block
    mov     x10, x1                 // x half of the block
    mov     x11, x7                 // blocks left
2:  ldp     x12, x13, [x9], #16
    add     x14, x10, x6, lsl #3    // y half of the block
    mov     x15, x6                 // butterflies left in the block
3:  ldp     x16, x17, [x10], #16
    ldp     x19, x20, [x14], #16
    \bf     x16, x19, x12, x13, x21, x22
    \bf     x17, x20, x12, x13, x23, x24
    stp     x16, x17, [x10, #-16]
    stp     x19, x20, [x14, #-16]
    subs    x15, x15, #2
    b.ne    3b
    mov     x10, x14                // the next block starts after this y half
    subs    x11, x11, #1
    b.ne    2b
.endm

.macro save_regs
    stp     x19, x20, [sp, #-48]!
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
.endm

.macro restore_regs
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x19, x20, [sp], #48
.endm

// void triskel_aarch64_ntt_forward(const triskel_ntt_plan *plan, uint64_t *a)
// Natural order in, bit-reversed out, every value fully reduced.
func triskel_aarch64_ntt_forward
    save_regs
    ldr     x2, [x0]                // n
    ldr     Q, [x0, #16]
    ldr     TWOQ, [x0, #40]
    ldr     x5, [x0, #120]          // aux: (w, w') pairs, forward half
    mov     x6, x2                  // t = n
    mov     x7, #1                  // m = 1
    lsr     x8, x2, #1              // n/2
    // Stages m = 1, 2, .., n/4 (half-block t >= 2): two butterflies per step;
    // the first (m = 1) on reduced inputs, without reducing x.
    lsr     x6, x6, #1
    stage   ct_bf_first
    lsl     x7, x7, #1
1:  lsr     x6, x6, #1
    stage   ct_bf
    lsl     x7, x7, #1
    cmp     x7, x8
    b.lo    1b
    // Last stage (m = n/2, t = 1, x and y adjacent) with the final
    // reduction [0, 4q) -> [0, q) folded in.
    add     x9, x5, x8, lsl #4      // &aux[n/2]
    mov     x10, x1
    mov     x11, x8
4:  ldp     x16, x19, [x10], #16
    ldp     x12, x13, [x9], #16
    ct_bf   x16, x19, x12, x13, x21, x22
    sub_if_ge x16, TWOQ, x21
    sub_if_ge x19, TWOQ, x22
    sub_if_ge x16, Q, x21
    sub_if_ge x19, Q, x22
    stp     x16, x19, [x10, #-16]
    subs    x11, x11, #1
    b.ne    4b
    restore_regs
    ret
endfunc triskel_aarch64_ntt_forward

// Last inverse stage: x, y in [0, 2q) ->
//   x = (x + y) * n^-1 mod q,  y = (x - y + 2q) * (n^-1 * inv[1]) mod q.
NI      .req x12
NIS     .req x13
NIW     .req x15
NIWS    .req x2
.macro gs_last x, y, l, h
    add     \l, \x, \y
    sub     \y, \x, \y
    add     \y, \y, TWOQ
    mul     \x, \l, NI
    umulh   \h, \l, NIS
    msub    \x, \h, Q, \x
    sub_if_ge \x, Q, \h
    mul     \l, \y, NIW
    umulh   \h, \y, NIWS
    msub    \y, \h, Q, \l
    sub_if_ge \y, Q, \h
.endm

// void triskel_aarch64_ntt_inverse(const triskel_ntt_plan *plan, uint64_t *a)
// Bit-reversed in, natural order out, times n^-1, every value fully reduced.
func triskel_aarch64_ntt_inverse
    save_regs
    ldr     x2, [x0]                // n
    ldr     Q, [x0, #16]
    ldr     TWOQ, [x0, #40]
    ldr     x5, [x0, #120]
    add     x5, x5, x2, lsl #4      // aux: (w, w') pairs, inverse half
    lsr     x8, x2, #1              // n/2
    // First stage (m = n, h = n/2, t = 1, x and y adjacent).
    add     x9, x5, x8, lsl #4      // &iaux[n/2]
    mov     x10, x1
    mov     x11, x8
4:  ldp     x16, x19, [x10], #16
    ldp     x12, x13, [x9], #16
    gs_bf   x16, x19, x12, x13, x21, x22
    stp     x16, x19, [x10, #-16]
    subs    x11, x11, #1
    b.ne    4b
    // Stages h = n/4, .., 2 (t = 2, .., n/8 doubling): two butterflies per step.
    mov     x6, #2                  // t
    lsr     x7, x8, #1              // h
1:  stage   gs_bf
    lsl     x6, x6, #1
    lsr     x7, x7, #1
    cmp     x7, #1
    b.hi    1b
    // Last stage (h = 1, t = n/2) with n^-1 folded in.
    ldp     NI, NIS, [x0, #88]
    ldp     NIW, NIWS, [x0, #104]
    mov     x10, x1
    add     x14, x1, x8, lsl #3
    lsr     x11, x8, #1
5:  ldp     x16, x17, [x10], #16
    ldp     x19, x20, [x14], #16
    gs_last x16, x19, x21, x22
    gs_last x17, x20, x23, x24
    stp     x16, x17, [x10, #-16]
    stp     x19, x20, [x14, #-16]
    subs    x11, x11, #1
    b.ne    5b
    restore_regs
    ret
endfunc triskel_aarch64_ntt_inverse

    .section .note.GNU-stack, "", %progbits
