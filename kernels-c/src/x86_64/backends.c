/* The x86-64 backends' tables and plan tables. The kernels themselves are
 * in kernels-asm/x86_64/ (ifma.S, avx512.S, sharing common.inc; avx2.S).
 *
 * plan->aux points to an x86_aux. For the three in-register NTT stages
 * (distances 4, 2, 1) the assembly reads, per group of 16 coefficients,
 * 3 stages x {8 twiddles, 8 companions}, one per lane, in the order the
 * stages run (forward: t = 4, 2, 1; inverse: t = 1, 2, 4). Companions are
 * the 64-bit Shoup companions shifted right by `shift`: 12 for IFMA (52-bit
 * companions), 0 for AVX-512F. The stage t = 8, in the same pass, reads one
 * {twiddle, shifted companion} pair per group from the mid tables. The other
 * stages read the portable twiddles and the shifted companions (comp). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct x86_aux {
    uint64_t *fwd_tail; /* offset 0 */
    uint64_t *inv_tail; /* offset 8 */
    uint64_t *fwd_mid;  /* offset 16 */
    uint64_t *inv_mid;  /* offset 24 */
    uint64_t *fwd_comp; /* offset 32 */
    uint64_t *inv_comp; /* offset 40 */
} x86_aux;

/* The avx512 kernels read each companion vector again 4 bytes on (the
 * high halves as 32-bit lanes), up to 4 bytes past a table's end: PAD_WORDS
 * keep that read inside the allocation (and its size a multiple of 64). */
enum { GROUP = 16, LANES = 8, STAGE_WORDS = 2 * LANES, GROUP_WORDS = 3 * STAGE_WORDS, PAD_WORDS = 8 };

/* Fills the lanes of one stage of one group: lane k of distance t uses
 * twiddle index (n / (2t)) + (16 / (2t)) * g + k / t. */
static void fill_stage(uint64_t *dst, const uint64_t *w, const uint64_t *w_shoup, uint64_t n,
                       uint64_t g, uint64_t t, unsigned shift) {
    const uint64_t base = n / (2 * t) + (GROUP / (2 * t)) * g;
    for (uint64_t k = 0; k < LANES; k++) {
        dst[k] = w[base + k / t];
        dst[LANES + k] = w_shoup[base + k / t] >> shift;
    }
}

static uint64_t *build_tail(const triskel_ntt_plan *p, const uint64_t *w, const uint64_t *w_shoup,
                            const uint64_t order[3], unsigned shift) {
    const uint64_t groups = p->n / GROUP;
    uint64_t *tail = aligned_alloc(64, (groups * GROUP_WORDS + PAD_WORDS) * sizeof(uint64_t));
    if (tail == NULL) return NULL;
    for (uint64_t g = 0; g < groups; g++)
        for (int s = 0; s < 3; s++)
            fill_stage(tail + g * GROUP_WORDS + s * STAGE_WORDS, w, w_shoup, p->n, g, order[s],
                       shift);
    memset(tail + groups * GROUP_WORDS, 0, PAD_WORDS * sizeof(uint64_t));
    return tail;
}

/* Group g's pair of the stage t = 8: twiddle n/16 + g. */
static uint64_t *build_mid(const triskel_ntt_plan *p, const uint64_t *w, const uint64_t *w_shoup,
                           unsigned shift) {
    const uint64_t groups = p->n / GROUP;
    uint64_t *mid = aligned_alloc(64, (groups * 2 + PAD_WORDS) * sizeof(uint64_t));
    if (mid == NULL) return NULL;
    for (uint64_t g = 0; g < groups; g++) {
        mid[2 * g] = w[groups + g];
        mid[2 * g + 1] = w_shoup[groups + g] >> shift;
    }
    memset(mid + 2 * groups, 0, PAD_WORDS * sizeof(uint64_t));
    return mid;
}

/* The companions of the broadcast twiddles (the other stages), shifted. */
static uint64_t *build_comp(const triskel_ntt_plan *p, const uint64_t *w_shoup, unsigned shift) {
    uint64_t *comp = aligned_alloc(64, (p->n + PAD_WORDS) * sizeof(uint64_t));
    if (comp == NULL) return NULL;
    for (uint64_t i = 0; i < p->n; i++) comp[i] = w_shoup[i] >> shift;
    memset(comp + p->n, 0, PAD_WORDS * sizeof(uint64_t));
    return comp;
}

static void x86_aux_free(triskel_ntt_plan *p) {
    x86_aux *aux = p->aux;
    if (aux == NULL) return;
    free(aux->fwd_tail);
    free(aux->inv_tail);
    free(aux->fwd_mid);
    free(aux->inv_mid);
    free(aux->fwd_comp);
    free(aux->inv_comp);
    free(aux);
    p->aux = NULL;
}

static int x86_aux_init(triskel_ntt_plan *p, unsigned shift) {
    static const uint64_t fwd_order[3] = {4, 2, 1}, inv_order[3] = {1, 2, 4};
    x86_aux *aux = calloc(1, sizeof *aux);
    if (aux == NULL) return -1;
    p->aux = aux;
    aux->fwd_tail = build_tail(p, p->fwd, p->fwd_shoup, fwd_order, shift);
    aux->inv_tail = build_tail(p, p->inv, p->inv_shoup, inv_order, shift);
    aux->fwd_mid = build_mid(p, p->fwd, p->fwd_shoup, shift);
    aux->inv_mid = build_mid(p, p->inv, p->inv_shoup, shift);
    aux->fwd_comp = build_comp(p, p->fwd_shoup, shift);
    aux->inv_comp = build_comp(p, p->inv_shoup, shift);
    if (aux->fwd_tail == NULL || aux->inv_tail == NULL || aux->fwd_mid == NULL ||
        aux->inv_mid == NULL || aux->fwd_comp == NULL || aux->inv_comp == NULL) {
        x86_aux_free(p);
        return -1;
    }
    return 0;
}

static int ifma_aux_init(triskel_ntt_plan *p) { return x86_aux_init(p, 12); }
static int avx512_aux_init(triskel_ntt_plan *p) { return x86_aux_init(p, 0); }

#define DECLARE_KERNELS(prefix)                                                                 \
    void prefix##_ntt_forward(const triskel_ntt_plan *plan, uint64_t *a);                       \
    void prefix##_ntt_inverse(const triskel_ntt_plan *plan, uint64_t *a);                       \
    void prefix##_add(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,          \
                      const triskel_modulus *m);                                                \
    void prefix##_sub(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,          \
                      const triskel_modulus *m);                                                \
    void prefix##_neg(uint64_t *out, const uint64_t *a, size_t len, const triskel_modulus *m);  \
    void prefix##_mul(uint64_t *out, const uint64_t *a, const uint64_t *b, size_t len,          \
                      const triskel_modulus *m);                                                \
    void prefix##_mul_scalar(uint64_t *out, const uint64_t *a, uint64_t s, uint64_t s_shoup,    \
                             size_t len, const triskel_modulus *m);                             \
    void prefix##_mul_acc(uint64_t *acc, const uint64_t *a, const uint64_t *b, size_t len,      \
                          const triskel_modulus *m);                                            \
    void prefix##_ntt_inverse_to(const triskel_ntt_plan *plan, uint64_t *out,                   \
                                 const uint64_t *in);                                           \
    void prefix##_sub_mul_scalar_add(uint64_t *out, const uint64_t *a, const uint64_t *b,       \
                                     const uint64_t *c, uint64_t s, uint64_t s_shoup,           \
                                     size_t len, const triskel_modulus *m);

DECLARE_KERNELS(triskel_ifma)
DECLARE_KERNELS(triskel_avx512)

void triskel_ifma_dot(uint64_t *out, const uint64_t *const *a, const uint64_t *const *b,
                      size_t count, size_t len, const triskel_modulus *m);
void triskel_ifma_base_convert_raw(uint64_t *out, const uint64_t *const *y, size_t len,
                                   const triskel_convert_table *t, const triskel_modulus *m);
/* AVX-512F gathers, shared by both AVX-512 backends (avx512.S). */
void triskel_x86_automorphism_ntt(uint64_t *out, const uint64_t *a, const uint32_t *perm,
                                  size_t n);
void triskel_x86_automorphism_coeff_raw(uint64_t *out, const uint64_t *a, uint64_t ginv, size_t n,
                                        const triskel_modulus *m);

typedef void automorphism_coeff_raw_fn(uint64_t *out, const uint64_t *a, uint64_t ginv,
                                       size_t n, const triskel_modulus *m);

/* The coefficient-form automorphism as a gather (avx512.S, avx2.S), from
 * g^-1 mod 2n (Newton's iteration: each step doubles the correct low bits of
 * an inverse of the odd g modulo 2^64). Fewer than 8 values: portable. */
static void automorphism_coeff_by_gather(automorphism_coeff_raw_fn *raw, uint64_t *out,
                                         const uint64_t *a, uint64_t g, size_t n,
                                         const triskel_modulus *m) {
    if (n < 8) {
        triskel_portable_backend.automorphism_coeff(out, a, g, n, m);
        return;
    }
    uint64_t inv = g;
    for (int i = 0; i < 6; i++) inv *= 2 - g * inv;
    raw(out, a, inv & (2 * (uint64_t)n - 1), n, m);
}

static void x86_automorphism_coeff(uint64_t *out, const uint64_t *a, uint64_t g, size_t n,
                                   const triskel_modulus *m) {
    automorphism_coeff_by_gather(triskel_x86_automorphism_coeff_raw, out, a, g, n, m);
}

void triskel_ifma_lift(uint64_t *out, const uint64_t *y, size_t len,
                       const triskel_convert_table *t, const triskel_modulus *m);
/* The lift for q_0 <= 2p: y mod p by one conditional subtraction. */
void triskel_ifma_lift_sub(uint64_t *out, const uint64_t *y, size_t len,
                           const triskel_convert_table *t, const triskel_modulus *m);
/* AVX-512F lazy sums for primes up to 62 bits (avx512.S). */
void triskel_avx512_dot(uint64_t *out, const uint64_t *const *a, const uint64_t *const *b,
                        size_t count, size_t len, const triskel_modulus *m);
void triskel_avx512_base_convert_raw(uint64_t *out, const uint64_t *const *y, size_t len,
                                     const triskel_convert_table *t, const triskel_modulus *m);
void triskel_avx512_lift(uint64_t *out, const uint64_t *y, size_t len,
                         const triskel_convert_table *t, const triskel_modulus *m);

void triskel_ifma_ntt_forward_lazy(const triskel_ntt_plan *p, uint64_t *a);

/* The forward transform without reductions between stages when its values,
 * which grow by 2q per stage from [0, q), stay below 2^52 (the IFMA input
 * width): (1 + 2 log n) q < 2^52, every prime of up to 46 bits. */
static void ifma_ntt_forward(const triskel_ntt_plan *p, uint64_t *a) {
    if (p->modulus.q < ((uint64_t)1 << 52) / (2 * p->log_n + 1))
        triskel_ifma_ntt_forward_lazy(p, a);
    else
        triskel_ifma_ntt_forward(p, a);
}

/* One source prime with Q/q_0 = 1 (every real basis): a reduction and the
 * sign's correction, without the general kernel's floating-point sum. */
static int is_lift(const triskel_convert_table *t, const triskel_modulus *m) {
    return t->count == 1 && t->qhat_mod_p[0] == 1 % m->q;
}

/* The IFMA conversion multiplies 52-bit limbs: source residues of primes of
 * 50 bits or more (the target is below 2^50 by the backend's limit) take
 * the AVX-512F kernels instead. */
static void ifma_base_convert(uint64_t *out, const uint64_t *const *y, size_t len,
                              const triskel_convert_table *t, const triskel_modulus *m) {
    int small = 1;
    for (uint64_t i = 0; i < t->count; i++) small &= (t->src_q[i] >> 50) == 0;
    if (is_lift(t, m) && small && t->src_q[0] <= 2 * m->q)
        triskel_ifma_lift_sub(out, y[0], len, t, m);
    else if (is_lift(t, m))
        (small ? triskel_ifma_lift : triskel_avx512_lift)(out, y[0], len, t, m);
    else if (small)
        triskel_ifma_base_convert_raw(out, y, len, t, m);
    else
        triskel_avx512_base_convert_raw(out, y, len, t, m);
}

/* AVX-512F: the single-prime lift, or the general lazy sum. */
static void avx512_base_convert(uint64_t *out, const uint64_t *const *y, size_t len,
                                const triskel_convert_table *t, const triskel_modulus *m) {
    if (is_lift(t, m))
        triskel_avx512_lift(out, y[0], len, t, m);
    else
        triskel_avx512_base_convert_raw(out, y, len, t, m);
}

const triskel_backend triskel_avx512ifma_backend = {
    .name = "avx512ifma",
    .max_modulus_bits = 50,
    .plan_aux_init = ifma_aux_init,
    .plan_aux_free = x86_aux_free,
    .ntt_forward = ifma_ntt_forward,
    .ntt_inverse = triskel_ifma_ntt_inverse,
    .add = triskel_ifma_add,
    .sub = triskel_ifma_sub,
    .neg = triskel_ifma_neg,
    .mul = triskel_ifma_mul,
    .mul_scalar = triskel_ifma_mul_scalar,
    .mul_acc = triskel_ifma_mul_acc,
    .dot = triskel_ifma_dot,
    .base_convert = ifma_base_convert,
    .automorphism_coeff = x86_automorphism_coeff,
    .automorphism_ntt = triskel_x86_automorphism_ntt,
    .ntt_inverse_to = triskel_ifma_ntt_inverse_to,
    .sub_mul_scalar_add = triskel_ifma_sub_mul_scalar_add,
};

const triskel_backend triskel_avx512_backend = {
    .name = "avx512",
    .max_modulus_bits = 62,
    .plan_aux_init = avx512_aux_init,
    .plan_aux_free = x86_aux_free,
    .ntt_forward = triskel_avx512_ntt_forward,
    .ntt_inverse = triskel_avx512_ntt_inverse,
    .add = triskel_avx512_add,
    .sub = triskel_avx512_sub,
    .neg = triskel_avx512_neg,
    .mul = triskel_avx512_mul,
    .mul_scalar = triskel_avx512_mul_scalar,
    .mul_acc = triskel_avx512_mul_acc,
    .dot = triskel_avx512_dot,
    .base_convert = avx512_base_convert,
    .automorphism_coeff = x86_automorphism_coeff,
    .automorphism_ntt = triskel_x86_automorphism_ntt,
    .ntt_inverse_to = triskel_avx512_ntt_inverse_to,
    .sub_mul_scalar_add = triskel_avx512_sub_mul_scalar_add,
};

/* The avx2 NTT (kernels-asm/x86_64/avx2.S) runs in double precision for
 * q < 2^50 from these tables (layout fixed: the assembly reads it), and in
 * 32-bit-limb integer arithmetic from the portable tables otherwise (aux
 * stays NULL). Each twiddle w comes with w / q rounded to a double. The
 * stage t = 2 reads its twiddles as vectors, one per group g of 8
 * coefficients: [w[n/4 + 2g], w[n/4 + 2g], w[n/4 + 2g + 1], w[n/4 + 2g + 1]]
 * (fwd_t2, inv_t2; and their w / q in fwd_t2q, inv_t2q). */
typedef struct avx2_aux {
    double *fwd_w, *fwd_wq;  /* offsets 0, 8 */
    double *inv_w, *inv_wq;  /* offsets 16, 24 */
    double q, q_inv;         /* offsets 32, 40 */
    double n_inv, n_inv_q;   /* offsets 48, 56 */
    double n_inv_w, n_inv_wq; /* offsets 64, 72 */
    double *fwd_t2, *fwd_t2q; /* offsets 80, 88 */
    double *inv_t2, *inv_t2q; /* offsets 96, 104 */
    /* Stages in a row that may skip reducing x (forward) or x + y (inverse)
     * for this q (the bounds are in avx2.S): fewer reductions for smaller
     * primes. */
    uint64_t fwd_lazy, inv_lazy; /* offsets 112, 120 */
} avx2_aux;

enum { AVX2_FMA_MAX_BITS = 50 };

static void avx2_aux_free(triskel_ntt_plan *p) {
    avx2_aux *aux = p->aux;
    if (aux == NULL) return;
    free(aux->fwd_w);
    free(aux->fwd_wq);
    free(aux->inv_w);
    free(aux->inv_wq);
    free(aux->fwd_t2);
    free(aux->fwd_t2q);
    free(aux->inv_t2);
    free(aux->inv_t2q);
    free(aux);
    p->aux = NULL;
}

/* The t = 2 twiddles of every group of 8 as vectors (from the double
 * tables w, wq of avx2_tables). */
static int avx2_t2_tables(const triskel_ntt_plan *p, const double *w, const double *wq,
                          double **t2_out, double **t2q_out) {
    const uint64_t half = p->n / 2, quarter = p->n / 4;
    *t2_out = aligned_alloc(32, half * sizeof(double));
    *t2q_out = aligned_alloc(32, half * sizeof(double));
    if (*t2_out == NULL || *t2q_out == NULL) return -1;
    for (uint64_t i = 0; i < half; i++) {
        (*t2_out)[i] = w[quarter + i / 2];
        (*t2q_out)[i] = wq[quarter + i / 2];
    }
    return 0;
}

static int avx2_tables(const triskel_ntt_plan *p, const uint64_t *w, double **w_out,
                       double **wq_out) {
    const double q = (double)p->modulus.q;
    *w_out = aligned_alloc(32, p->n * sizeof(double));
    *wq_out = aligned_alloc(32, p->n * sizeof(double));
    if (*w_out == NULL || *wq_out == NULL) return -1;
    for (uint64_t i = 0; i < p->n; i++) {
        (*w_out)[i] = (double)w[i];
        (*wq_out)[i] = (double)w[i] / q;
    }
    return 0;
}

static int avx2_aux_init(triskel_ntt_plan *p) {
    const uint64_t q = p->modulus.q;
    if ((q >> AVX2_FMA_MAX_BITS) != 0) return 0;
    avx2_aux *aux = calloc(1, sizeof *aux);
    if (aux == NULL) return -1;
    p->aux = aux;
    if (avx2_tables(p, p->fwd, &aux->fwd_w, &aux->fwd_wq) != 0 ||
        avx2_tables(p, p->inv, &aux->inv_w, &aux->inv_wq) != 0 ||
        avx2_t2_tables(p, aux->fwd_w, aux->fwd_wq, &aux->fwd_t2, &aux->fwd_t2q) != 0 ||
        avx2_t2_tables(p, aux->inv_w, aux->inv_wq, &aux->inv_t2, &aux->inv_t2q) != 0) {
        avx2_aux_free(p);
        return -1;
    }
    aux->q = (double)q;
    aux->q_inv = 1.0 / (double)q;
    aux->n_inv = (double)p->n_inv;
    aux->n_inv_q = (double)p->n_inv / (double)q;
    aux->n_inv_w = (double)p->n_inv_w;
    aux->n_inv_wq = (double)p->n_inv_w / (double)q;
    /* (2 + K) q < 2^52 forward, 2^(K + 1) q < 2^52 inverse (q < 2^50:
     * room >= 4, so K >= 2 and K >= 1). */
    const uint64_t room = (((uint64_t)1 << 52) - 1) / q;
    aux->fwd_lazy = room - 2;
    aux->inv_lazy = 0;
    while (((uint64_t)4 << aux->inv_lazy) <= room) aux->inv_lazy++;
    return 0;
}

DECLARE_KERNELS(triskel_avx2)
void triskel_avx2_dot_raw(uint64_t *out, const uint64_t *const *a, const uint64_t *const *b,
                          size_t count, size_t len, const triskel_modulus *m);
void triskel_avx2_lift(uint64_t *out, const uint64_t *y, size_t len,
                       const triskel_convert_table *t, const triskel_modulus *m);
void triskel_avx2_lift_fma(uint64_t *out, const uint64_t *y, size_t len,
                           const triskel_convert_table *t, const triskel_modulus *m);
void triskel_avx2_base_convert_int(uint64_t *out, const uint64_t *const *y, size_t len,
                                   const triskel_convert_table *t, const triskel_modulus *m);
void triskel_avx2_base_convert_fma(uint64_t *out, const uint64_t *const *y, size_t len,
                                   const triskel_convert_table *t, const triskel_modulus *m);
void triskel_avx2_automorphism_ntt(uint64_t *out, const uint64_t *a, const uint32_t *perm,
                                   size_t n);
void triskel_avx2_automorphism_coeff_raw(uint64_t *out, const uint64_t *a, uint64_t ginv, size_t n,
                                         const triskel_modulus *m);

/* The assembly takes whole blocks of 4 values; the last len mod 4 run portable. */
static void avx2_dot(uint64_t *out, const uint64_t *const *a, const uint64_t *const *b,
                     size_t count, size_t len, const triskel_modulus *m) {
    const size_t body = len & ~(size_t)3;
    triskel_avx2_dot_raw(out, a, b, count, body, m);
    if (body == len) return;
    const uint64_t *a_tail[TRISKEL_MAX_TERMS], *b_tail[TRISKEL_MAX_TERMS];
    for (size_t j = 0; j < count; j++) a_tail[j] = a[j] + body, b_tail[j] = b[j] + body;
    triskel_portable_backend.dot(out + body, a_tail, b_tail, count, len - body, m);
}

/* The single-prime lift, or the lazy sum; in doubles when every prime is
 * below 2^50 (exact products), else on 32-bit limbs. The lazy sum leaves
 * the last len mod 4 values to portable. */
static void avx2_base_convert(uint64_t *out, const uint64_t *const *y, size_t len,
                              const triskel_convert_table *t, const triskel_modulus *m) {
    uint64_t high = m->q >> AVX2_FMA_MAX_BITS;
    for (uint64_t i = 0; i < t->count; i++) high |= t->src_q[i] >> AVX2_FMA_MAX_BITS;
    if (is_lift(t, m)) {
        (high ? triskel_avx2_lift : triskel_avx2_lift_fma)(out, y[0], len, t, m);
        return;
    }
    const size_t body = len & ~(size_t)3;
    (high ? triskel_avx2_base_convert_int : triskel_avx2_base_convert_fma)(out, y, body, t, m);
    if (body == len) return;
    const uint64_t *y_tail[TRISKEL_MAX_TERMS];
    for (size_t i = 0; i < t->count; i++) y_tail[i] = y[i] + body;
    triskel_portable_backend.base_convert(out + body, y_tail, len - body, t, m);
}

static void avx2_automorphism_coeff(uint64_t *out, const uint64_t *a, uint64_t g, size_t n,
                                    const triskel_modulus *m) {
    automorphism_coeff_by_gather(triskel_avx2_automorphism_coeff_raw, out, a, g, n, m);
}

SUB_MUL_SCALAR_ADD_BY_OPS(avx2_sub_mul_scalar_add, triskel_avx2_backend)

const triskel_backend triskel_avx2_backend = {
    .name = "avx2",
    .max_modulus_bits = 62,
    .plan_aux_init = avx2_aux_init,
    .plan_aux_free = avx2_aux_free,
    .ntt_forward = triskel_avx2_ntt_forward,
    .ntt_inverse = triskel_avx2_ntt_inverse,
    .add = triskel_avx2_add,
    .sub = triskel_avx2_sub,
    .neg = triskel_avx2_neg,
    .mul = triskel_avx2_mul,
    .mul_scalar = triskel_avx2_mul_scalar,
    .mul_acc = triskel_avx2_mul_acc,
    .dot = avx2_dot,
    .base_convert = avx2_base_convert,
    .automorphism_coeff = avx2_automorphism_coeff,
    .automorphism_ntt = triskel_avx2_automorphism_ntt,
    .ntt_inverse_to = triskel_ntt_inverse_by_copy,
    .sub_mul_scalar_add = avx2_sub_mul_scalar_add,
};
