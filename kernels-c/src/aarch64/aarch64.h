/* The AArch64 backends' assembly entry points (kernels-asm/aarch64) and the
 * plan tables the aarch64 and sve backends share. */
#ifndef TRISKEL_AARCH64_H
#define TRISKEL_AARCH64_H

#include "internal.h"

/* (w, w') pairs, forward half then inverse half (scalar.c). */
int triskel_aarch64_plan_aux_init(triskel_ntt_plan *plan);
void triskel_aarch64_plan_aux_free(triskel_ntt_plan *plan); /* frees any backend's aux */

#define TRISKEL_AARCH64_KERNELS(prefix)                                                         \
    void triskel_##prefix##_ntt_forward(const triskel_ntt_plan *plan, uint64_t *a);            \
    void triskel_##prefix##_ntt_inverse(const triskel_ntt_plan *plan, uint64_t *a);            \
    void triskel_##prefix##_mul(uint64_t *out, const uint64_t *a, const uint64_t *b,          \
                                size_t len, const triskel_modulus *m);                         \
    void triskel_##prefix##_mul_scalar(uint64_t *out, const uint64_t *a, uint64_t s,          \
                                       uint64_t s_shoup, size_t len, const triskel_modulus *m); \
    void triskel_##prefix##_mul_acc(uint64_t *acc, const uint64_t *a, const uint64_t *b,      \
                                    size_t len, const triskel_modulus *m);

#define TRISKEL_AARCH64_ADDITIVE(prefix)                                                \
    void triskel_##prefix##_add(uint64_t *out, const uint64_t *a, const uint64_t *b,   \
                                size_t len, const triskel_modulus *m);                  \
    void triskel_##prefix##_sub(uint64_t *out, const uint64_t *a, const uint64_t *b,   \
                                size_t len, const triskel_modulus *m);                  \
    void triskel_##prefix##_neg(uint64_t *out, const uint64_t *a, size_t len,          \
                                const triskel_modulus *m);

/* The key-switching ops (keyswitch.S for aarch64, sve.S for sve). */
#define TRISKEL_AARCH64_KEYSWITCH(prefix)                                                       \
    void triskel_##prefix##_dot(uint64_t *out, const uint64_t *const *a,                       \
                                const uint64_t *const *b, size_t count, size_t len,            \
                                const triskel_modulus *m);                                     \
    void triskel_##prefix##_base_convert(uint64_t *out, const uint64_t *const *y, size_t len,  \
                                         const triskel_convert_table *t,                       \
                                         const triskel_modulus *m);                            \
    void triskel_##prefix##_automorphism_coeff(uint64_t *out, const uint64_t *a, uint64_t g,   \
                                               size_t n, const triskel_modulus *m);            \
    void triskel_##prefix##_automorphism_ntt(uint64_t *out, const uint64_t *a,                 \
                                             const uint32_t *perm, size_t n);

TRISKEL_AARCH64_KERNELS(aarch64)
TRISKEL_AARCH64_KEYSWITCH(aarch64)
TRISKEL_AARCH64_ADDITIVE(aarch64)
TRISKEL_AARCH64_KERNELS(sve)
TRISKEL_AARCH64_ADDITIVE(sve)
TRISKEL_AARCH64_KEYSWITCH(sve)
/* The neon backend's add, sub and neg are the aarch64 backend's. */
TRISKEL_AARCH64_KERNELS(neon)

#endif
