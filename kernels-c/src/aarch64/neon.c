/* The NEON backend's table and its plan tables (AArch64 only).
 *
 * The kernels are in kernels-asm/aarch64 (ntt.S, mulmod.S, vector.S). A plan's aux holds the twiddles
 * interleaved with their Shoup companions, so one ldp fetches both:
 *     aux[2i], aux[2i+1]           = fwd[i], fwd_shoup[i]   i = 0..n-1
 *     aux[2n+2i], aux[2n+2i+1]     = inv[i], inv_shoup[i]
 * (ntt.S reads the inverse half at aux + 16n bytes). */
#include <stdlib.h>

#include "internal.h"

void triskel_neon_ntt_forward(const triskel_ntt_plan *plan, uint64_t *a);
void triskel_neon_ntt_inverse(const triskel_ntt_plan *plan, uint64_t *a);
void triskel_neon_add(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,
                      const triskel_modulus *m);
void triskel_neon_sub(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,
                      const triskel_modulus *m);
void triskel_neon_neg(uint64_t *out, const uint64_t *a, size_t len, const triskel_modulus *m);
void triskel_neon_mul(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,
                      const triskel_modulus *m);
void triskel_neon_mul_scalar(uint64_t *out, const uint64_t *a, uint64_t s, uint64_t s_shoup,
                             size_t len, const triskel_modulus *m);
void triskel_neon_mul_acc(uint64_t *acc, const uint64_t *a, const uint64_t *b, size_t len,
                          const triskel_modulus *m);

static int neon_plan_aux_init(triskel_ntt_plan *plan) {
    const size_t n = plan->n;
    uint64_t *aux = malloc(4 * n * sizeof(uint64_t));
    if (aux == NULL) return -1;
    for (size_t i = 0; i < n; i++) {
        aux[2 * i] = plan->fwd[i];
        aux[2 * i + 1] = plan->fwd_shoup[i];
        aux[2 * n + 2 * i] = plan->inv[i];
        aux[2 * n + 2 * i + 1] = plan->inv_shoup[i];
    }
    plan->aux = aux;
    return 0;
}

static void neon_plan_aux_free(triskel_ntt_plan *plan) {
    free(plan->aux);
    plan->aux = NULL;
}

const triskel_backend triskel_neon_backend = {
    .name = "neon",
    .max_modulus_bits = TRISKEL_MAX_MODULUS_BITS,
    .plan_aux_init = neon_plan_aux_init,
    .plan_aux_free = neon_plan_aux_free,
    .ntt_forward = triskel_neon_ntt_forward,
    .ntt_inverse = triskel_neon_ntt_inverse,
    .add = triskel_neon_add,
    .sub = triskel_neon_sub,
    .neg = triskel_neon_neg,
    .mul = triskel_neon_mul,
    .mul_scalar = triskel_neon_mul_scalar,
    .mul_acc = triskel_neon_mul_acc,
};
