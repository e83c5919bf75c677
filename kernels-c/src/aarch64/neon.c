/* The neon backend's table and plan tables (AArch64): primes q < 2^31 in four
 * 32-bit NEON lanes, kernels in kernels-asm/aarch64/neon.S (whose header
 * describes the Montgomery products and the table layout built here). */
#include <stdlib.h>
#include <sys/auxv.h>

#include "aarch64.h"

#define NEON_MODULUS_BITS 31

/* q^-1 mod 2^32 for odd q (Newton: the correct low bits double each step). */
static uint32_t inverse_mod_2_32(uint32_t q) {
    uint32_t x = q; /* correct to 3 bits */
    for (int i = 0; i < 4; i++) x *= 2 - q * x;
    return x;
}

/* True on Arm Neoverse N1 (Graviton2), where the NTT's wide stages pay for
 * interleaving scalar butterflies with the vector ones (neon.S, wide_stage).
 * MIDR_EL1 is readable from user space when the kernel says so (HWCAP_CPUID:
 * it emulates the read). */
static int neon_interleave(void) {
    const unsigned long hwcap_cpuid = 1ul << 11;
    if ((getauxval(AT_HWCAP) & hwcap_cpuid) == 0) return 0;
    uint64_t midr;
    __asm__ volatile("mrs %0, midr_el1" : "=r"(midr));
    const uint64_t implementer = (midr >> 24) & 0xff, part = (midr >> 4) & 0xfff;
    return implementer == 0x41 && part == 0xd0c;
}

/* Read by neon.S's mul and mul_acc, which interleave scalar products on N1
 * only: set once at load time (a constructor), before any kernel runs. */
__attribute__((visibility("hidden"))) int triskel_neon_on_n1;

__attribute__((constructor)) static void neon_detect_core(void) {
    triskel_neon_on_n1 = neon_interleave();
}

static int neon_plan_aux_init(triskel_ntt_plan *plan) {
    const size_t n = plan->n;
    const uint64_t q = plan->modulus.q, r = ((uint64_t)1 << 32) % q;
    const uint32_t q_inv = inverse_mod_2_32((uint32_t)q);
    uint32_t *aux = malloc((8 * n + 8) * sizeof(uint32_t));
    if (aux == NULL) return -1;
    /* Montgomery form of a constant: C = c*R mod q, C' = C*q^-1 mod 2^32. */
#define MONT(c) ((uint32_t)mulmod_slow((c), r, q))
    for (int dir = 0; dir < 2; dir++) {
        const uint64_t *w = dir == 0 ? plan->fwd : plan->inv;
        uint32_t *half = aux + 4 * n * dir, *t2 = half + 2 * n, *t1 = half + 3 * n;
        for (size_t i = 0; i < n; i++) {
            half[2 * i] = MONT(w[i]);
            half[2 * i + 1] = half[2 * i] * q_inv;
        }
        for (size_t p = 0; p < n / 8; p++) {
            for (size_t k = 0; k < 4; k++) {
                /* t = 2: blocks n/4 + 2p and n/4 + 2p + 1, each twice. */
                const uint32_t c2 = half[2 * (n / 4 + 2 * p + k / 2)];
                t2[8 * p + k] = c2;
                t2[8 * p + 4 + k] = c2 * q_inv;
                /* t = 1: blocks n/2 + 4p .. n/2 + 4p + 3. */
                const uint32_t c1 = half[2 * (n / 2 + 4 * p + k)];
                t1[8 * p + k] = c1;
                t1[8 * p + 4 + k] = c1 * q_inv;
            }
        }
    }
    uint32_t *constants = aux + 8 * n;
    constants[0] = (uint32_t)q;
    constants[1] = MONT(plan->n_inv);
    constants[2] = constants[1] * q_inv;
    constants[3] = MONT(plan->n_inv_w);
    constants[4] = constants[3] * q_inv;
    constants[5] = (uint32_t)triskel_neon_on_n1;
#undef MONT
    plan->aux = aux;
    return 0;
}

SUB_MUL_SCALAR_ADD_BY_OPS(neon_sub_mul_scalar_add, triskel_neon_backend)

const triskel_backend triskel_neon_backend = {
    .name = "neon",
    .max_modulus_bits = NEON_MODULUS_BITS,
    .plan_aux_init = neon_plan_aux_init,
    .plan_aux_free = triskel_aarch64_plan_aux_free, /* free(aux) */
    .ntt_forward = triskel_neon_ntt_forward,
    .ntt_inverse = triskel_neon_ntt_inverse,
    .add = triskel_aarch64_add,
    .sub = triskel_aarch64_sub,
    .neg = triskel_aarch64_neg,
    .mul = triskel_neon_mul,
    .mul_scalar = triskel_neon_mul_scalar,
    .mul_acc = triskel_neon_mul_acc,
    .dot = triskel_aarch64_dot,
    .base_convert = triskel_aarch64_base_convert,
    .automorphism_coeff = triskel_aarch64_automorphism_coeff,
    .automorphism_ntt = triskel_aarch64_automorphism_ntt,
    .ntt_inverse_to = triskel_ntt_inverse_by_copy,
    .sub_mul_scalar_add = neon_sub_mul_scalar_add,
};
