// Assembler macros shared by the NEON backend's .S files (included, not
// assembled on its own).

// x = x - m when x >= m (unsigned); t is scratch.
.macro sub_if_ge x, m, t
    subs    \t, \x, \m
    csel    \x, \t, \x, hs
.endm

.macro func name
    .global \name
    .type \name, %function
    .p2align 4
\name:
.endm

.macro endfunc name
    .size \name, . - \name
.endm

