/*
 * triskel kernel ABI: the one contract every backend (portable C, AVX-512,
 * AVX-512 IFMA, AVX2, and on AArch64 scalar, SVE and 31-bit NEON) implements
 * with bit-identical results.
 *
 * Conventions
 * - All data are arrays of uint64_t residues modulo a prime q < 2^62.
 * - Inputs are fully reduced to [0, q); outputs are fully reduced to [0, q).
 *   Lazy ranges ([0, 2q), [0, 4q)) exist only inside a kernel.
 * - Element-wise kernels allow `out` to alias any input exactly (same pointer);
 *   partial overlap is not allowed. No alignment is required.
 * - NTT order: the forward transform maps a polynomial a(X) in natural
 *   coefficient order to its evaluations in bit-reversed order,
 *       A[j] = a(psi^(2*brv(j) + 1)),  j = 0..n-1,
 *   where psi is the plan's primitive 2n-th root of unity and brv reverses
 *   log2(n) bits. The inverse transform maps that order back to natural
 *   coefficient order and includes the factor n^-1. This fixed order is what
 *   the engines' automorphisms rely on.
 * - No division in any hot path: multiplications by known constants use Shoup
 *   companions w' = floor(w * 2^64 / q); products of two variables use Barrett
 *   reduction with floor(2^128 / q).
 */
#ifndef TRISKEL_KERNELS_H
#define TRISKEL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Smallest and largest supported transform sizes (log2). */
#define TRISKEL_LOG_N_MIN 10
#define TRISKEL_LOG_N_MAX 17
/* Every modulus must be below 2^TRISKEL_MAX_MODULUS_BITS. */
#define TRISKEL_MAX_MODULUS_BITS 62

/* Backend identifiers, stable across versions. */
#define TRISKEL_BACKEND_PORTABLE 0
#define TRISKEL_BACKEND_AVX512 1
#define TRISKEL_BACKEND_AVX512IFMA 2
#define TRISKEL_BACKEND_AARCH64 3
#define TRISKEL_BACKEND_AVX2 4
#define TRISKEL_BACKEND_SVE 5
#define TRISKEL_BACKEND_NEON 6
#define TRISKEL_BACKEND_COUNT 7

/* A modulus with its precomputed reduction constants (filled by
 * triskel_modulus_init; the layout is fixed because assembly reads it). */
typedef struct triskel_modulus {
    uint64_t q;          /* offset  0: the prime */
    uint64_t barrett_hi; /* offset  8: floor(2^128 / q) >> 64 */
    uint64_t barrett_lo; /* offset 16: floor(2^128 / q) mod 2^64 */
    uint64_t two_q;      /* offset 24: 2q */
} triskel_modulus;

/* Most terms of one dot product or base conversion (the RNS basis limit). */
#define TRISKEL_MAX_TERMS 128

/* Constants of an RNS base conversion from Q = q_0...q_{k-1} to one prime p
 * (the layout is fixed because assembly reads it). */
typedef struct triskel_convert_table {
    uint64_t count;              /* offset  0: k, 1..=TRISKEL_MAX_TERMS */
    const uint64_t *src_q;       /* offset  8: the k source primes q_i (each < 2^62) */
    const double *inv_q;         /* offset 16: 1.0 / q_i, rounded to double */
    const uint64_t *qhat_mod_p;  /* offset 24: (Q / q_i) mod p */
    const uint64_t *vq_mod_p;    /* offset 32: v * Q mod p for v = 0..=k, or NULL (fast conversion) */
} triskel_convert_table;

/* Tables of one negacyclic NTT of size n modulo q (filled by
 * triskel_ntt_plan_new; the layout is fixed because assembly reads it). */
typedef struct triskel_ntt_plan {
    uint64_t n;                  /* offset   0: transform size, 2^10..2^17 */
    uint64_t log_n;              /* offset   8 */
    triskel_modulus modulus;     /* offset  16 (32 bytes) */
    uint64_t psi;                /* offset  48: the primitive 2n-th root used */
    uint64_t *fwd;               /* offset  56: fwd[i] = psi^brv(i) */
    uint64_t *fwd_shoup;         /* offset  64: Shoup companions of fwd */
    uint64_t *inv;               /* offset  72: inv[i] = psi^-(brv(i)) */
    uint64_t *inv_shoup;         /* offset  80: Shoup companions of inv */
    uint64_t n_inv;              /* offset  88: n^-1 mod q */
    uint64_t n_inv_shoup;        /* offset  96 */
    uint64_t n_inv_w;            /* offset 104: n^-1 * inv[1] mod q (last inverse stage) */
    uint64_t n_inv_w_shoup;      /* offset 112 */
    void *aux;                   /* offset 120: backend-specific tables, owned by the plan */
    const struct triskel_backend *backend; /* offset 128: the backend the plan was built for */
} triskel_ntt_plan;

/* One backend: a table of kernels. A NULL kernel means "not implemented by
 * this backend"; callers then use the portable kernel for that operation. */
typedef struct triskel_backend {
    const char *name;
    /* Largest modulus bit size this backend accepts (q < 2^max_modulus_bits). */
    uint32_t max_modulus_bits;
    /* Builds plan->aux from the portable tables; returns 0 on success.
     * NULL when the backend needs no tables of its own. */
    int (*plan_aux_init)(triskel_ntt_plan *plan);
    /* Frees plan->aux; NULL when plan_aux_init is NULL. */
    void (*plan_aux_free)(triskel_ntt_plan *plan);
    /* In-place forward negacyclic NTT: natural order in, bit-reversed out. */
    void (*ntt_forward)(const triskel_ntt_plan *plan, uint64_t *a);
    /* In-place inverse negacyclic NTT: bit-reversed in, natural out, times n^-1. */
    void (*ntt_inverse)(const triskel_ntt_plan *plan, uint64_t *a);
    /* out[i] = a[i] + b[i] mod q */
    void (*add)(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,
                const triskel_modulus *m);
    /* out[i] = a[i] - b[i] mod q */
    void (*sub)(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,
                const triskel_modulus *m);
    /* out[i] = -a[i] mod q */
    void (*neg)(uint64_t *out, const uint64_t *a, size_t len, const triskel_modulus *m);
    /* out[i] = a[i] * b[i] mod q */
    void (*mul)(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,
                const triskel_modulus *m);
    /* out[i] = a[i] * s mod q, with s < q and s_shoup = floor(s * 2^64 / q) */
    void (*mul_scalar)(uint64_t *out, const uint64_t *a, uint64_t s, uint64_t s_shoup,
                       size_t len, const triskel_modulus *m);
    /* acc[i] = acc[i] + a[i] * b[i] mod q */
    void (*mul_acc)(uint64_t *acc, const uint64_t *a, const uint64_t *b, size_t len,
                    const triskel_modulus *m);
    /* Lazy dot product (the key-switching inner product over digits):
     *     out[i] = sum_{j < count} a[j][i] * b[j][i] mod q,
     * 1 <= count <= TRISKEL_MAX_TERMS, summed unreduced (128-bit) and reduced
     * once per 16 terms. out may alias any a[j] or b[j] exactly. */
    void (*dot)(uint64_t *out, const uint64_t *const *a, const uint64_t *const *b, size_t count,
                size_t len, const triskel_modulus *m);
    /* Base conversion to the prime p of `m` (HPS): for y[i][c] in [0, q_i),
     *     s = sum_i y[i][c] * qhat_mod_p[i]   (unreduced, reduced once per 16 terms)
     *     out[c] = (s - v * Q) mod p
     * with v = 0 when t->vq_mod_p is NULL; otherwise v = [y_0 > q_0 / 2] when
     * k = 1, else v = (uint64_t)(0.5 + sum_i (double)(int64_t)y[i][c] * inv_q[i]),
     * the double sum taken left to right without fused multiply-adds, clamped
     * to [0, k] (never reached by reduced inputs). Callers pass
     * y_i = [x_i * (Q/q_i)^-1]_{q_i}; out must not overlap any y[i]. */
    void (*base_convert)(uint64_t *out, const uint64_t *const *y, size_t len,
                         const triskel_convert_table *t, const triskel_modulus *m);
    /* Automorphism X -> X^g (g odd) in coefficient form, n = 2^k coefficients:
     *     out[j g mod 2n] = a[j] when j g mod 2n < n, else out[j g mod 2n - n] = -a[j] mod q.
     * out must not overlap a. */
    void (*automorphism_coeff)(uint64_t *out, const uint64_t *a, uint64_t g, size_t n,
                               const triskel_modulus *m);
    /* Automorphism in NTT form: out[j] = a[perm[j]] for j < n, with perm the
     * slot permutation of triskel_galois_permutation. out must not overlap a. */
    void (*automorphism_ntt)(uint64_t *out, const uint64_t *a, const uint32_t *perm, size_t n);
    /* Out-of-place inverse NTT: out = INTT(in), in untouched (out == in is the
     * in-place transform; partial overlap is not allowed). The avx512 and
     * avx512ifma backends read `in` in their first pass; the others (avx2,
     * aarch64, sve, neon) copy and transform in place (the portable C
     * function triskel_ntt_inverse_by_copy). */
    void (*ntt_inverse_to)(const triskel_ntt_plan *plan, uint64_t *out, const uint64_t *in);
    /* The finish of a division by rounding (ModDown, rescale), fused:
     *     out[i] = (a[i] - b[i]) * s + c[i] mod q,
     * or (a[i] - b[i]) * s mod q when c is NULL, with s < q and s_shoup =
     * floor(s * 2^64 / q). out may alias a, b or c exactly. The avx512 and
     * avx512ifma backends have their own; the others (avx2, aarch64, sve,
     * neon) run their sub, mul_scalar and add in turn (the portable C
     * function triskel_sub_mul_scalar_add_by_ops). */
    void (*sub_mul_scalar_add)(uint64_t *out, const uint64_t *a, const uint64_t *b,
                               const uint64_t *c, uint64_t s, uint64_t s_shoup, size_t len,
                               const triskel_modulus *m);
} triskel_backend;

/* The backend with the given TRISKEL_BACKEND_* id, or NULL when it is not
 * compiled into this build. Whether the CPU can run it is the caller's check. */
const triskel_backend *triskel_backend_get(uint32_t id);

/* Fills m for q; returns 0, or -1 when q < 2 or q >= 2^62 (primality is the
 * caller's check). */
int triskel_modulus_init(triskel_modulus *m, uint64_t q);

/* Shoup companion floor(w * 2^64 / q) of a constant w < q. */
uint64_t triskel_shoup(uint64_t w, uint64_t q);

/* Deterministic primality test for any 64-bit integer (Miller-Rabin with a
 * base set that is exact below 2^64). Returns 1 for primes, 0 otherwise. */
int triskel_is_prime(uint64_t q);

/* The smallest primitive 2n-th root of unity modulo the prime q, or 0 when
 * none exists (2n does not divide q - 1). */
uint64_t triskel_min_root_2n(uint64_t q, uint64_t n);

/* Builds a plan for `backend`, size n (power of two, 2^10..2^17), prime q
 * with 2n | q - 1 and q below the backend's limit, and primitive 2n-th root
 * psi. Returns NULL on invalid arguments or allocation failure. */
triskel_ntt_plan *triskel_ntt_plan_new(const triskel_backend *backend, uint64_t n, uint64_t q,
                                       uint64_t psi);

/* The NTT-domain slot permutation of X -> X^g for size n (a power of two,
 * 2..2^31; g odd): perm[j] = j' with 2 brv(j') + 1 = (2 brv(j) + 1) g mod 2n,
 * so that the image of A is A'[j] = A[perm[j]]. Returns 0, or -1 on invalid
 * arguments. */
int triskel_galois_permutation(uint32_t *perm, uint64_t n, uint64_t g);

/* Frees a plan (NULL is ignored). */
void triskel_ntt_plan_free(triskel_ntt_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* TRISKEL_KERNELS_H */
