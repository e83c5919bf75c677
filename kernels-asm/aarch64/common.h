// Assembler macros shared by the AArch64 backends' .S files (included, not
// assembled on its own).

// x = x - m when x >= m (unsigned); t is scratch.
.macro sub_if_ge x, m, t
    subs    \t, \x, \m
    csel    \x, \t, \x, hs
.endm

// One-constant Barrett setup for products modulo q (the argument is in
// mulmod.S): from the triskel_modulus at \m, loads q into \q, sets \shr to
// k - 2 (k = bit length of q), \mu to floor(2^(k+62) / q) and \z to clz(q);
// \t0..\t2 are scratch.
.macro barrett_setup m, z, q, shr, mu, t0, t1, t2
    ldr     \q, [\m]
    ldp     \t0, \t1, [\m, #8]     // floor(2^128/q): high, low words
    clz     \z, \q                 // 64 - k, in [2, 62]
    mov     \shr, #62
    sub     \shr, \shr, \z
    extr    \t1, \t0, \t1, #1      // floor(2^128/q) >> 1: low word ...
    lsr     \t0, \t0, #1           // ... and high word
    add     \t2, \z, #1            // right shift still to do: 65 - k, in [3, 63]
    lsr     \t1, \t1, \t2
    neg     \t2, \t2
    lsl     \t0, \t0, \t2
    orr     \mu, \t1, \t0
.endm

// For 62-bit q (k = 62): \mu = floor(2^125 / q) = floor(2^128/q) >> 3, one
// bit more than barrett_setup's (mulmod.S says why); below 2^64 because a
// 62-bit prime is above 2^61. \t0, \t1 are scratch.
.macro barrett_setup62 m, mu, t0, t1
    ldp     \t0, \t1, [\m, #8]
    extr    \mu, \t0, \t1, #3
.endm

// Scalar one-constant Barrett product (mulmod.S; reads the aliases Q, SHR =
// k - 2, SHL = -(k - 2) mod 64 and MU set up by barrett_setup, or with
// \wide for 62-bit q only Q and MU set up by barrett_setup62):
// r = a * b (+ c when \acc) mod q into \lo; \a, \b, \t clobbered (\t holds
// c on entry when \acc).
.macro barrett lo, a, b, t, wide, acc
    mul     \lo, \a, \b
    umulh   \a, \a, \b
    .if \acc
    adds    \lo, \lo, \t
    cinc    \a, \a, hs
    .endif
    .if \wide
    lsr     \b, \lo, #60             // floor(x / 2^60); not extr, which
    orr     \b, \b, \a, lsl #4       // takes a multiply pipe on N1 and V2
    umulh   \b, \b, MU
    lsr     \b, \b, #1
    .else
    lsr     \b, \lo, SHR
    lsl     \a, \a, SHL
    orr     \b, \b, \a
    umulh   \b, \b, MU
    .endif
    msub    \lo, \b, Q, \lo
    sub_if_ge \lo, Q, \t
.endm

// Scalar NTT butterflies of the aarch64 backend (ntt.S), also interleaved
// with vector ones by the sve backend. They read q and 2q from the register
// aliases Q and TWOQ, which the including file defines (.req).
// Cooley-Tukey (Harvey) butterfly, x, y in [0, 4q) -> [0, 4q):
//   u = x mod 2q (one conditional subtraction of 2q)
//   v = w*y - floor(w'*y / 2^64)*q  (mod 2^64), in [0, 2q)
//   x = u + v,  y = u + 2q - v
// l and h are scratch.
.macro ct_bf x, y, w, ws, l, h
    mul     \l, \y, \w
    umulh   \h, \y, \ws
    msub    \l, \h, Q, \l
    sub_if_ge \x, TWOQ, \h
    add     \y, \x, TWOQ
    sub     \y, \y, \l
    add     \x, \x, \l
.endm

// ct_bf for x already below 2q (the first forward stage: the inputs are
// reduced), so without the conditional subtraction of 2q.
.macro ct_bf_first x, y, w, ws, l, h
    mul     \l, \y, \w
    umulh   \h, \y, \ws
    msub    \l, \h, Q, \l
    add     \y, \x, TWOQ
    sub     \y, \y, \l
    add     \x, \x, \l
.endm

// Gentleman-Sande (Harvey) butterfly, x, y in [0, 2q) -> [0, 2q):
//   x = (x + y) mod 2q,  y = (x - y + 2q) * w  (Shoup, in [0, 2q))
.macro gs_bf x, y, w, ws, l, h
    add     \l, \x, \y
    sub     \y, \x, \y
    add     \y, \y, TWOQ
    subs    \h, \l, TWOQ
    csel    \x, \h, \l, hs
    mul     \l, \y, \w
    umulh   \h, \y, \ws
    msub    \y, \h, Q, \l
.endm

// Every entry point starts with a BTI landing pad (a hint: a no-op on CPUs
// without BTI), so a binary built with -mbranch-protection=bti keeps its
// marking.
.macro func name
    .global \name
    .type \name, %function
    .p2align 4
\name:
    bti     c
.endm

.macro endfunc name
    .size \name, . - \name
.endm

// GNU property note: this object is BTI-compatible (landing pads above). The
// linker keeps a binary's marking only when every object carries it.
    .pushsection .note.gnu.property, "a"
    .p2align 3
    .word   4                           // name size
    .word   16                          // descriptor size
    .word   5                           // NT_GNU_PROPERTY_TYPE_0
    .asciz  "GNU"
    .word   0xc0000000                  // GNU_PROPERTY_AARCH64_FEATURE_1_AND
    .word   4
    .word   1                           // BTI
    .p2align 3
    .popsection
