/* The aarch64 backend's table and its plan tables (AArch64 only): scalar
 * products (mul/umulh/msub), NEON add/sub/neg.
 *
 * The kernels are in kernels-asm/aarch64 (ntt.S, mulmod.S, vector.S, keyswitch.S). A plan's aux holds the twiddles
 * interleaved with their Shoup companions, so one ldp fetches both:
 *     aux[2i], aux[2i+1]           = fwd[i], fwd_shoup[i]   i = 0..n-1
 *     aux[2n+2i], aux[2n+2i+1]     = inv[i], inv_shoup[i]
 * (ntt.S reads the inverse half at aux + 16n bytes). The sve backend uses the
 * same tables. */
#include <stdlib.h>

#include "aarch64.h"

int triskel_aarch64_plan_aux_init(triskel_ntt_plan *plan) {
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

void triskel_aarch64_plan_aux_free(triskel_ntt_plan *plan) {
    free(plan->aux);
    plan->aux = NULL;
}

SUB_MUL_SCALAR_ADD_BY_OPS(aarch64_sub_mul_scalar_add, triskel_aarch64_backend)

const triskel_backend triskel_aarch64_backend = {
    .name = "aarch64",
    .max_modulus_bits = TRISKEL_MAX_MODULUS_BITS,
    .plan_aux_init = triskel_aarch64_plan_aux_init,
    .plan_aux_free = triskel_aarch64_plan_aux_free,
    .ntt_forward = triskel_aarch64_ntt_forward,
    .ntt_inverse = triskel_aarch64_ntt_inverse,
    .add = triskel_aarch64_add,
    .sub = triskel_aarch64_sub,
    .neg = triskel_aarch64_neg,
    .mul = triskel_aarch64_mul,
    .mul_scalar = triskel_aarch64_mul_scalar,
    .mul_acc = triskel_aarch64_mul_acc,
    .dot = triskel_aarch64_dot,
    .base_convert = triskel_aarch64_base_convert,
    .automorphism_coeff = triskel_aarch64_automorphism_coeff,
    .automorphism_ntt = triskel_aarch64_automorphism_ntt,
    .ntt_inverse_to = triskel_ntt_inverse_by_copy,
    .sub_mul_scalar_add = aarch64_sub_mul_scalar_add,
};
