/* Backend registry, modulus and plan construction, and the number theory that
 * builds the tables. None of this is a hot path. */
#include <stdlib.h>

#include "internal.h"

const triskel_backend *triskel_backend_get(uint32_t id) {
    switch (id) {
    case TRISKEL_BACKEND_PORTABLE:
        return &triskel_portable_backend;
#ifdef TRISKEL_HAVE_AVX512
    case TRISKEL_BACKEND_AVX512:
        return &triskel_avx512_backend;
#endif
#ifdef TRISKEL_HAVE_AVX512IFMA
    case TRISKEL_BACKEND_AVX512IFMA:
        return &triskel_avx512ifma_backend;
#endif
#ifdef TRISKEL_HAVE_AARCH64
    case TRISKEL_BACKEND_AARCH64:
        return &triskel_aarch64_backend;
#endif
#ifdef TRISKEL_HAVE_SVE
    case TRISKEL_BACKEND_SVE:
        return &triskel_sve_backend;
#endif
#ifdef TRISKEL_HAVE_AVX2
    case TRISKEL_BACKEND_AVX2:
        return &triskel_avx2_backend;
#endif
#ifdef TRISKEL_HAVE_NEON
    case TRISKEL_BACKEND_NEON:
        return &triskel_neon_backend;
#endif
    default:
        return NULL;
    }
}

int triskel_modulus_init(triskel_modulus *m, uint64_t q) {
    if (m == NULL || q < 2 || (q >> TRISKEL_MAX_MODULUS_BITS) != 0) return -1;
    /* floor(2^128 / q) = floor((2^128 - 1) / q) unless q divides 2^128 (q = 2^k),
     * where the two differ by one. Long division by 64-bit digits. */
    uint64_t rem, hi = UINT64_MAX / q;
    uint64_t lo = div_wide(UINT64_MAX % q, UINT64_MAX, q, &rem);
    if ((q & (q - 1)) == 0 && ++lo == 0) hi++;
    m->q = q;
    m->barrett_hi = hi;
    m->barrett_lo = lo;
    m->two_q = 2 * q;
    return 0;
}

uint64_t triskel_shoup(uint64_t w, uint64_t q) {
    uint64_t rem;
    return div_wide(w % q, 0, q, &rem);
}

uint64_t triskel_powmod_slow(uint64_t base, uint64_t exp, uint64_t q) {
    uint64_t result = 1 % q;
    base %= q;
    while (exp != 0) {
        if (exp & 1) result = mulmod_slow(result, base, q);
        base = mulmod_slow(base, base, q);
        exp >>= 1;
    }
    return result;
}

int triskel_is_prime(uint64_t q) {
    static const uint64_t bases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
    if (q < 2) return 0;
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        if (q == bases[i]) return 1;
        if (q % bases[i] == 0) return 0;
    }
    uint64_t d = q - 1;
    int s = 0;
    while ((d & 1) == 0) {
        d >>= 1;
        s++;
    }
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        uint64_t x = triskel_powmod_slow(bases[i], d, q);
        if (x == 1 || x == q - 1) continue;
        int witness = 1;
        for (int r = 1; r < s; r++) {
            x = mulmod_slow(x, x, q);
            if (x == q - 1) {
                witness = 0;
                break;
            }
        }
        if (witness) return 0;
    }
    return 1;
}

uint64_t triskel_min_root_2n(uint64_t q, uint64_t n) {
    if (n == 0 || (n & (n - 1)) != 0 || !triskel_is_prime(q)) return 0;
    uint64_t two_n = 2 * n;
    if (two_n == 0 || (q - 1) % two_n != 0) return 0;
    /* psi = x^((q-1)/2n) has order dividing 2n; it is primitive iff psi^n = -1. */
    uint64_t psi = 0;
    for (uint64_t x = 2; x < q; x++) {
        uint64_t cand = triskel_powmod_slow(x, (q - 1) / two_n, q);
        if (triskel_powmod_slow(cand, n, q) == q - 1) {
            psi = cand;
            break;
        }
    }
    if (psi == 0) return 0;
    /* The primitive 2n-th roots are the odd powers of psi: take the smallest so
     * the choice is canonical. */
    uint64_t psi_sq = mulmod_slow(psi, psi, q), cur = psi, best = psi;
    for (uint64_t k = 1; k < n; k++) {
        cur = mulmod_slow(cur, psi_sq, q);
        if (cur < best) best = cur;
    }
    return best;
}

static uint64_t bit_reverse(uint64_t x, uint64_t bits) {
    uint64_t r = 0;
    for (uint64_t i = 0; i < bits; i++) r |= ((x >> i) & 1) << (bits - 1 - i);
    return r;
}

int triskel_galois_permutation(uint32_t *perm, uint64_t n, uint64_t g) {
    if (perm == NULL || n < 2 || n > ((uint64_t)1 << 31) || (n & (n - 1)) != 0 || (g & 1) == 0)
        return -1;
    uint64_t log_n = 0;
    while (((uint64_t)1 << log_n) < n) log_n++;
    const uint64_t mask = 2 * n - 1;
    for (uint64_t j = 0; j < n; j++) {
        uint64_t e = ((2 * bit_reverse(j, log_n) + 1) * (g & mask)) & mask;
        perm[j] = (uint32_t)bit_reverse((e - 1) / 2, log_n);
    }
    return 0;
}

void triskel_ntt_plan_free(triskel_ntt_plan *plan) {
    if (plan == NULL) return;
    if (plan->aux != NULL && plan->backend != NULL && plan->backend->plan_aux_free != NULL)
        plan->backend->plan_aux_free(plan);
    free(plan->fwd);
    free(plan->fwd_shoup);
    free(plan->inv);
    free(plan->inv_shoup);
    free(plan);
}

triskel_ntt_plan *triskel_ntt_plan_new(const triskel_backend *backend, uint64_t n, uint64_t q,
                                       uint64_t psi) {
    if (backend == NULL) return NULL;
    uint64_t log_n = 0;
    while (log_n < 64 && ((uint64_t)1 << log_n) < n) log_n++;
    if (((uint64_t)1 << log_n) != n || log_n < TRISKEL_LOG_N_MIN || log_n > TRISKEL_LOG_N_MAX)
        return NULL;
    if ((q >> backend->max_modulus_bits) != 0 || !triskel_is_prime(q) || (q - 1) % (2 * n) != 0)
        return NULL;
    if (psi == 0 || psi >= q || triskel_powmod_slow(psi, n, q) != q - 1) return NULL;

    triskel_ntt_plan *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->n = n;
    p->log_n = log_n;
    triskel_modulus_init(&p->modulus, q);
    p->psi = psi;
    p->backend = backend;
    p->fwd = malloc(n * sizeof(uint64_t));
    p->fwd_shoup = malloc(n * sizeof(uint64_t));
    p->inv = malloc(n * sizeof(uint64_t));
    p->inv_shoup = malloc(n * sizeof(uint64_t));
    if (!p->fwd || !p->fwd_shoup || !p->inv || !p->inv_shoup) {
        triskel_ntt_plan_free(p);
        return NULL;
    }
    uint64_t psi_inv = triskel_powmod_slow(psi, q - 2, q);
    uint64_t pw = 1, pw_inv = 1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = bit_reverse(i, log_n);
        p->fwd[r] = pw;
        p->inv[r] = pw_inv;
        pw = mulmod_slow(pw, psi, q);
        pw_inv = mulmod_slow(pw_inv, psi_inv, q);
    }
    for (uint64_t i = 0; i < n; i++) {
        p->fwd_shoup[i] = triskel_shoup(p->fwd[i], q);
        p->inv_shoup[i] = triskel_shoup(p->inv[i], q);
    }
    p->n_inv = triskel_powmod_slow(n, q - 2, q);
    p->n_inv_shoup = triskel_shoup(p->n_inv, q);
    p->n_inv_w = mulmod_slow(p->n_inv, p->inv[1], q);
    p->n_inv_w_shoup = triskel_shoup(p->n_inv_w, q);
    if (backend->plan_aux_init != NULL && backend->plan_aux_init(p) != 0) {
        triskel_ntt_plan_free(p);
        return NULL;
    }
    return p;
}
