/* The portable backend: the reference every SIMD backend is tested against.
 *
 * NTT: Cooley-Tukey forward / Gentleman-Sande inverse with Harvey's lazy
 * butterflies. A constant w < q with companion w' = floor(w * 2^64 / q)
 * multiplies any 64-bit x as
 *     x * w mod q  in  [0, 2q):  w * x - floor(w' * x / 2^64) * q   (mod 2^64).
 * Forward values stay in [0, 4q) (q < 2^62 keeps 4q < 2^64), inverse values
 * in [0, 2q); both are fully reduced at the end. */
#include <string.h>

#include "internal.h"

/* min(x, x - y) subtracts y when x >= y, without a branch (unsigned wrap). */
static inline uint64_t sub_if_ge(uint64_t x, uint64_t y) {
    uint64_t d = x - y;
    return d < x ? d : x;
}

static inline uint64_t shoup_lazy(uint64_t x, uint64_t w, uint64_t w_shoup, uint64_t q) {
    return w * x - mulhi64(w_shoup, x) * q;
}

/* x - e q for the Barrett estimate e of floor(x / q) with floor(2^128 / q):
 * e is at most one short for x < 2^124 (any product of two residues plus one
 * more residue) and at most two short for any x < 2^128. */
static inline uint64_t barrett_lazy(u128 x, const triskel_modulus *m) {
    uint64_t x0 = u128_lo(x), x1 = u128_hi(x);
    uint64_t carry = mulhi64(x0, m->barrett_lo);
    u128 mid1 = u128_add(mul_wide(x0, m->barrett_hi), u128_of(carry));
    u128 mid2 = mul_wide(x1, m->barrett_lo);
    u128 low_sum = u128_add(u128_of(u128_lo(mid1)), u128_of(u128_lo(mid2)));
    uint64_t quotient =
        x1 * m->barrett_hi + u128_hi(mid1) + u128_hi(mid2) + u128_hi(low_sum);
    return x0 - quotient * m->q;
}

/* x mod q for x < 2^124. */
static inline uint64_t barrett_reduce(u128 x, const triskel_modulus *m) {
    return sub_if_ge(barrett_lazy(x, m), m->q);
}

/* x mod q for any x < 2^128. */
static inline uint64_t barrett_reduce_full(u128 x, const triskel_modulus *m) {
    return sub_if_ge(sub_if_ge(barrett_lazy(x, m), m->q), m->q);
}

static void portable_ntt_forward(const triskel_ntt_plan *p, uint64_t *a) {
    const uint64_t q = p->modulus.q, two_q = p->modulus.two_q;
    const size_t n = p->n;
    size_t t = n;
    for (size_t m = 1; m < n; m <<= 1) {
        t >>= 1;
        for (size_t i = 0; i < m; i++) {
            const uint64_t w = p->fwd[m + i], ws = p->fwd_shoup[m + i];
            uint64_t *x = a + 2 * i * t, *y = x + t;
            for (size_t j = 0; j < t; j++) {
                uint64_t u = sub_if_ge(x[j], two_q);
                uint64_t v = shoup_lazy(y[j], w, ws, q);
                x[j] = u + v;
                y[j] = u - v + two_q;
            }
        }
    }
    for (size_t j = 0; j < n; j++) a[j] = sub_if_ge(sub_if_ge(a[j], two_q), q);
}

static void portable_ntt_inverse(const triskel_ntt_plan *p, uint64_t *a) {
    const uint64_t q = p->modulus.q, two_q = p->modulus.two_q;
    const size_t n = p->n;
    size_t t = 1;
    for (size_t m = n; m > 2; m >>= 1) {
        const size_t h = m >> 1;
        for (size_t i = 0; i < h; i++) {
            const uint64_t w = p->inv[h + i], ws = p->inv_shoup[h + i];
            uint64_t *x = a + 2 * i * t, *y = x + t;
            for (size_t j = 0; j < t; j++) {
                uint64_t u = x[j], v = y[j];
                x[j] = sub_if_ge(u + v, two_q);
                y[j] = shoup_lazy(u - v + two_q, w, ws, q);
            }
        }
        t <<= 1;
    }
    /* Last stage with n^-1 folded in. */
    uint64_t *x = a, *y = a + n / 2;
    for (size_t j = 0; j < n / 2; j++) {
        uint64_t u = x[j], v = y[j];
        x[j] = sub_if_ge(shoup_lazy(u + v, p->n_inv, p->n_inv_shoup, q), q);
        y[j] = sub_if_ge(shoup_lazy(u - v + two_q, p->n_inv_w, p->n_inv_w_shoup, q), q);
    }
}

static void portable_add(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,
                         const triskel_modulus *m) {
    for (size_t i = 0; i < len; i++) out[i] = sub_if_ge(a[i] + b[i], m->q);
}

static void portable_sub(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,
                         const triskel_modulus *m) {
    for (size_t i = 0; i < len; i++) {
        uint64_t d = a[i] - b[i];
        out[i] = a[i] >= b[i] ? d : d + m->q;
    }
}

static void portable_neg(uint64_t *out, const uint64_t *a, size_t len, const triskel_modulus *m) {
    for (size_t i = 0; i < len; i++) out[i] = (m->q - a[i]) & (0 - (uint64_t)(a[i] != 0));
}

static void portable_mul(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,
                         const triskel_modulus *m) {
    for (size_t i = 0; i < len; i++) out[i] = barrett_reduce(mul_wide(a[i], b[i]), m);
}

static void portable_mul_scalar(uint64_t *out, const uint64_t *a, uint64_t s, uint64_t s_shoup,
                                size_t len, const triskel_modulus *m) {
    for (size_t i = 0; i < len; i++) out[i] = sub_if_ge(shoup_lazy(a[i], s, s_shoup, m->q), m->q);
}

static void portable_mul_acc(uint64_t *acc, const uint64_t *a, const uint64_t *b, size_t len,
                             const triskel_modulus *m) {
    for (size_t i = 0; i < len; i++) acc[i] = barrett_reduce(u128_add(mul_wide(a[i], b[i]), u128_of(acc[i])), m);
}

/* Terms of a 128-bit sum between reductions: 16 products of values below
 * 2^62 plus one residue stay below 2^128. */
enum { LAZY_TERMS = 16 };

static void portable_dot(uint64_t *out, const uint64_t *const *a, const uint64_t *const *b,
                         size_t count, size_t len, const triskel_modulus *m) {
    for (size_t i = 0; i < len; i++) {
        u128 acc = u128_of(0);
        for (size_t j = 0; j < count; j++) {
            if (j != 0 && j % LAZY_TERMS == 0) acc = u128_of(barrett_reduce_full(acc, m));
            acc = u128_add(acc, mul_wide(a[j][i], b[j][i]));
        }
        out[i] = barrett_reduce_full(acc, m);
    }
}

/* The overflow count v of the exact conversion (see the header). */
static inline uint64_t convert_overflow(const uint64_t *const *y, size_t c,
                                        const triskel_convert_table *t) {
    if (t->count == 1) return y[0][c] > t->src_q[0] / 2;
    double s = 0.0;
    for (size_t i = 0; i < t->count; i++) {
        double term = (double)(int64_t)y[i][c] * t->inv_q[i]; /* y < 2^62: exact as signed */
        s += term;
    }
    s += 0.5;
    /* Clamped to [0, k], so that unreduced inputs never index outside vq_mod_p
     * (reduced inputs give s < k + 1/2 anyway). */
    return s > 0.0 ? (s < (double)t->count ? (uint64_t)s : t->count) : 0;
}

/* The conversion from one prime with (Q/q_0) mod p = 1 (always the case, Q
 * being q_0): out = y mod p, minus vq_mod_p[v] when exact. One
 * word Barrett with floor(2^64 / p) (the high word of floor(2^128 / p)): the
 * estimate is exact or one short. */
static void portable_lift(uint64_t *out, const uint64_t *y, size_t len,
                          const triskel_convert_table *t, const triskel_modulus *m) {
    const uint64_t p = m->q, half = t->src_q[0] / 2;
    const int exact = t->vq_mod_p != NULL;
    const uint64_t vq0 = exact ? t->vq_mod_p[0] : 0, vq1 = exact ? t->vq_mod_p[1] : 0;
    for (size_t c = 0; c < len; c++) {
        uint64_t r = sub_if_ge(y[c] - mulhi64(y[c], m->barrett_hi) * p, p);
        uint64_t mask = 0 - (uint64_t)(exact && y[c] > half);
        out[c] = sub_if_ge(r + p - ((vq1 & mask) | (vq0 & ~mask)), p);
    }
}

static void portable_base_convert(uint64_t *out, const uint64_t *const *y, size_t len,
                                  const triskel_convert_table *t, const triskel_modulus *m) {
    const uint64_t p = m->q;
    if (t->count == 1 && t->qhat_mod_p[0] == 1 % p) {
        portable_lift(out, y[0], len, t, m);
        return;
    }
    for (size_t c = 0; c < len; c++) {
        u128 acc = u128_of(0);
        for (size_t i = 0; i < t->count; i++) {
            if (i != 0 && i % LAZY_TERMS == 0) acc = u128_of(barrett_reduce_full(acc, m));
            acc = u128_add(acc, mul_wide(y[i][c], t->qhat_mod_p[i]));
        }
        uint64_t r = barrett_reduce_full(acc, m);
        if (t->vq_mod_p != NULL) {
            uint64_t v = convert_overflow(y, c, t);
            r = sub_if_ge(r + p - t->vq_mod_p[v], p);
        }
        out[c] = r;
    }
}

static void portable_automorphism_coeff(uint64_t *out, const uint64_t *a, uint64_t g, size_t n,
                                        const triskel_modulus *m) {
    const uint64_t mask = 2 * (uint64_t)n - 1, step = g & mask;
    uint64_t e = 0; /* j g mod 2n */
    for (size_t j = 0; j < n; j++) {
        /* Branch-free: the high bit of e (e >= n) selects the negated value. */
        uint64_t neg = 0 - (uint64_t)(e >= n);
        uint64_t v = a[j], minus = (m->q - v) & (0 - (uint64_t)(v != 0));
        out[e & (n - 1)] = (v & ~neg) | (minus & neg);
        e = (e + step) & mask;
    }
}

static void portable_automorphism_ntt(uint64_t *out, const uint64_t *a, const uint32_t *perm,
                                      size_t n) {
    for (size_t j = 0; j < n; j++) out[j] = a[perm[j]];
}

/* The ops below serve the backends without their own version (see the
 * header): correct for any plan or backend, as fast as that backend's parts. */
void triskel_ntt_inverse_by_copy(const triskel_ntt_plan *p, uint64_t *out, const uint64_t *in) {
    if (out != in) memcpy(out, in, p->n * sizeof *out);
    p->backend->ntt_inverse(p, out);
}

/* Blocks of BY_OPS_BLOCK values through a stack buffer, so that out may
 * alias a, b or c (an in-place sub would overwrite c == out). */
enum { BY_OPS_BLOCK = 256 };

void triskel_sub_mul_scalar_add_by_ops(const triskel_backend *be, uint64_t *out,
                                       const uint64_t *a, const uint64_t *b, const uint64_t *c,
                                       uint64_t s, uint64_t s_shoup, size_t len,
                                       const triskel_modulus *m) {
    uint64_t tmp[BY_OPS_BLOCK];
    for (size_t at = 0; at < len; at += BY_OPS_BLOCK) {
        const size_t k = len - at < BY_OPS_BLOCK ? len - at : BY_OPS_BLOCK;
        be->sub(tmp, a + at, b + at, k, m);
        be->mul_scalar(c == NULL ? out + at : tmp, tmp, s, s_shoup, k, m);
        if (c != NULL) be->add(out + at, tmp, c + at, k, m);
    }
}

static void portable_sub_mul_scalar_add(uint64_t *out, const uint64_t *a, const uint64_t *b,
                                        const uint64_t *c, uint64_t s, uint64_t s_shoup,
                                        size_t len, const triskel_modulus *m) {
    const uint64_t q = m->q;
    for (size_t i = 0; i < len; i++) {
        uint64_t r = sub_if_ge(shoup_lazy(a[i] + q - b[i], s, s_shoup, q), q);
        out[i] = c == NULL ? r : sub_if_ge(r + c[i], q);
    }
}

const triskel_backend triskel_portable_backend = {
    .name = "portable",
    .max_modulus_bits = TRISKEL_MAX_MODULUS_BITS,
    .plan_aux_init = NULL,
    .plan_aux_free = NULL,
    .ntt_forward = portable_ntt_forward,
    .ntt_inverse = portable_ntt_inverse,
    .add = portable_add,
    .sub = portable_sub,
    .neg = portable_neg,
    .mul = portable_mul,
    .mul_scalar = portable_mul_scalar,
    .mul_acc = portable_mul_acc,
    .dot = portable_dot,
    .base_convert = portable_base_convert,
    .automorphism_coeff = portable_automorphism_coeff,
    .automorphism_ntt = portable_automorphism_ntt,
    .ntt_inverse_to = triskel_ntt_inverse_by_copy,
    .sub_mul_scalar_add = portable_sub_mul_scalar_add,
};
