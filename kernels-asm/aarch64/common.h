// Assembler macros shared by the NEON backend's .S files (included, not
// assembled on its own).

// x = x - m when x >= m (unsigned); t is scratch.
.macro sub_if_ge x, m, t
    subs    \t, \x, \m
    csel    \x, \t, \x, hs
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
