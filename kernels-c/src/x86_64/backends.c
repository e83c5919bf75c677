/* The x86-64 backends' tables and plan tables. The kernels themselves are
 * in kernels-asm/x86_64/ (ifma.S, avx512.S, sharing common.inc; avx2.S).
 *
 * plan->aux points to an x86_aux: the Shoup companions of the forward and
 * inverse twiddles shifted right by `shift` (12 for IFMA's 52-bit
 * companions, 0 for AVX-512F), one per twiddle, in the plan's order. The
 * three in-register NTT stages (distances 4, 2, 1) expand them, with the
 * plan's twiddles, to their lanes (kernels-asm/x86_64/common.inc). */
#include <stdlib.h>

#include "internal.h"

typedef struct x86_aux {
    uint64_t *fwd_comp; /* offset 0 */
    uint64_t *inv_comp; /* offset 8 */
} x86_aux;

static uint64_t *shifted_copy(const uint64_t *src, uint64_t n, unsigned shift) {
    uint64_t *dst = aligned_alloc(64, n * sizeof(uint64_t));
    if (dst == NULL) return NULL;
    for (uint64_t i = 0; i < n; i++) dst[i] = src[i] >> shift;
    return dst;
}

static void x86_aux_free(triskel_ntt_plan *p) {
    x86_aux *aux = p->aux;
    if (aux == NULL) return;
    free(aux->fwd_comp);
    free(aux->inv_comp);
    free(aux);
    p->aux = NULL;
}

static int x86_aux_init(triskel_ntt_plan *p, unsigned shift) {
    x86_aux *aux = calloc(1, sizeof *aux);
    if (aux == NULL) return -1;
    p->aux = aux;
    aux->fwd_comp = shifted_copy(p->fwd_shoup, p->n, shift);
    aux->inv_comp = shifted_copy(p->inv_shoup, p->n, shift);
    if (aux->fwd_comp == NULL || aux->inv_comp == NULL) {
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
                          const triskel_modulus *m);

DECLARE_KERNELS(triskel_ifma)
DECLARE_KERNELS(triskel_avx512)

const triskel_backend triskel_avx512ifma_backend = {
    .name = "avx512ifma",
    .max_modulus_bits = 50,
    .plan_aux_init = ifma_aux_init,
    .plan_aux_free = x86_aux_free,
    .ntt_forward = triskel_ifma_ntt_forward,
    .ntt_inverse = triskel_ifma_ntt_inverse,
    .add = triskel_ifma_add,
    .sub = triskel_ifma_sub,
    .neg = triskel_ifma_neg,
    .mul = triskel_ifma_mul,
    .mul_scalar = triskel_ifma_mul_scalar,
    .mul_acc = triskel_ifma_mul_acc,
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
};

/* The avx2 NTT (kernels-asm/x86_64/avx2.S) runs in double precision for
 * q < 2^50 from these tables (layout fixed: the assembly reads it), and in
 * 32-bit-limb integer arithmetic from the portable tables otherwise (aux
 * stays NULL). Each twiddle w comes with w / q rounded to a double. */
typedef struct avx2_aux {
    double *fwd_w, *fwd_wq;  /* offsets 0, 8 */
    double *inv_w, *inv_wq;  /* offsets 16, 24 */
    double q, q_inv;         /* offsets 32, 40 */
    double n_inv, n_inv_q;   /* offsets 48, 56 */
    double n_inv_w, n_inv_wq; /* offsets 64, 72 */
} avx2_aux;

enum { AVX2_FMA_MAX_BITS = 50 };

static void avx2_aux_free(triskel_ntt_plan *p) {
    avx2_aux *aux = p->aux;
    if (aux == NULL) return;
    free(aux->fwd_w);
    free(aux->fwd_wq);
    free(aux->inv_w);
    free(aux->inv_wq);
    free(aux);
    p->aux = NULL;
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
        avx2_tables(p, p->inv, &aux->inv_w, &aux->inv_wq) != 0) {
        avx2_aux_free(p);
        return -1;
    }
    aux->q = (double)q;
    aux->q_inv = 1.0 / (double)q;
    aux->n_inv = (double)p->n_inv;
    aux->n_inv_q = (double)p->n_inv / (double)q;
    aux->n_inv_w = (double)p->n_inv_w;
    aux->n_inv_wq = (double)p->n_inv_w / (double)q;
    return 0;
}

DECLARE_KERNELS(triskel_avx2)

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
};
