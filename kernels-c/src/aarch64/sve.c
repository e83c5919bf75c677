/* The sve backend's table (AArch64 with SVE): 64-bit lanes at any vector
 * length, kernels in kernels-asm/aarch64/sve.S, plan tables shared with the
 * aarch64 backend. */
#include "aarch64.h"

SUB_MUL_SCALAR_ADD_BY_OPS(sve_sub_mul_scalar_add, triskel_sve_backend)

const triskel_backend triskel_sve_backend = {
    .name = "sve",
    .max_modulus_bits = TRISKEL_MAX_MODULUS_BITS,
    .plan_aux_init = triskel_aarch64_plan_aux_init,
    .plan_aux_free = triskel_aarch64_plan_aux_free,
    .ntt_forward = triskel_sve_ntt_forward,
    .ntt_inverse = triskel_sve_ntt_inverse,
    .add = triskel_sve_add,
    .sub = triskel_sve_sub,
    .neg = triskel_sve_neg,
    .mul = triskel_sve_mul,
    .mul_scalar = triskel_sve_mul_scalar,
    .mul_acc = triskel_sve_mul_acc,
    .dot = triskel_sve_dot,
    .base_convert = triskel_sve_base_convert,
    .automorphism_coeff = triskel_sve_automorphism_coeff,
    .automorphism_ntt = triskel_sve_automorphism_ntt,
    .ntt_inverse_to = triskel_ntt_inverse_by_copy,
    .sub_mul_scalar_add = sve_sub_mul_scalar_add,
};
