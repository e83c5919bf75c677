/* Helpers shared by the C sources of triskel-kernels (not part of the ABI). */
#ifndef TRISKEL_INTERNAL_H
#define TRISKEL_INTERNAL_H

#include "triskel_kernels.h"

/* 128-bit unsigned arithmetic: the compiler's __int128 where it has one (gcc,
 * clang), else two 64-bit words (MSVC has no 128-bit integer), so that the
 * portable backend builds everywhere. TRISKEL_NO_INT128 forces the two-word
 * form: ci/test.sh runs the C driver with it. */
#if defined(__SIZEOF_INT128__) && !defined(TRISKEL_NO_INT128)
typedef unsigned __int128 u128;
static inline u128 u128_of(uint64_t lo) { return lo; }
static inline u128 mul_wide(uint64_t a, uint64_t b) { return (u128)a * b; }
static inline u128 u128_add(u128 a, u128 b) { return a + b; }
static inline uint64_t u128_lo(u128 a) { return (uint64_t)a; }
static inline uint64_t u128_hi(u128 a) { return (uint64_t)(a >> 64); }
/* floor((hi 2^64 + lo) / d) for hi < d, the remainder in *rem. */
static inline uint64_t div_wide(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *rem) {
    u128 x = ((u128)hi << 64) | lo;
    *rem = (uint64_t)(x % d);
    return (uint64_t)(x / d);
}
#else
typedef struct {
    uint64_t lo, hi;
} u128;
static inline u128 u128_of(uint64_t lo) {
    u128 r = {lo, 0};
    return r;
}
/* Schoolbook on 32-bit halves: mid < 3 * 2^32 cannot overflow. */
static inline u128 mul_wide(uint64_t a, uint64_t b) {
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    u128 r = {(mid << 32) | (uint32_t)p00, p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)};
    return r;
}
static inline u128 u128_add(u128 a, u128 b) {
    u128 r = {a.lo + b.lo, a.hi + b.hi + (a.lo + b.lo < a.lo)};
    return r;
}
static inline uint64_t u128_lo(u128 a) { return a.lo; }
static inline uint64_t u128_hi(u128 a) { return a.hi; }
/* Restoring division, one quotient bit per step (tables only, never a hot
 * path); hi < d throughout, and a shifted-out top bit means hi >= 2^64 > d. */
static inline uint64_t div_wide(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *rem) {
    uint64_t quotient = 0;
    for (int i = 0; i < 64; i++) {
        uint64_t top = hi >> 63;
        hi = (hi << 1) | (lo >> 63);
        lo <<= 1;
        quotient <<= 1;
        if (top || hi >= d) {
            hi -= d;
            quotient |= 1;
        }
    }
    *rem = hi;
    return quotient;
}
#endif

static inline uint64_t mulhi64(uint64_t a, uint64_t b) { return u128_hi(mul_wide(a, b)); }

/* Plain modular product for table construction (uses division: not for hot paths). */
static inline uint64_t mulmod_slow(uint64_t a, uint64_t b, uint64_t q) {
    u128 x = mul_wide(a, b);
    uint64_t r;
    div_wide(u128_hi(x) % q, u128_lo(x), q, &r);
    return r;
}

uint64_t triskel_powmod_slow(uint64_t base, uint64_t exp, uint64_t q);

/* ntt_inverse_to by a copy and the plan's backend's in-place inverse
 * (portable.c). */
void triskel_ntt_inverse_by_copy(const triskel_ntt_plan *p, uint64_t *out, const uint64_t *in);

/* sub_mul_scalar_add by the sub, mul_scalar and add of `be` (portable.c);
 * SUB_MUL_SCALAR_ADD_BY_OPS(name, be) defines the op `name` of a backend
 * that has no fused one. */
void triskel_sub_mul_scalar_add_by_ops(const triskel_backend *be, uint64_t *out,
                                       const uint64_t *a, const uint64_t *b, const uint64_t *c,
                                       uint64_t s, uint64_t s_shoup, size_t len,
                                       const triskel_modulus *m);
#define SUB_MUL_SCALAR_ADD_BY_OPS(name, be)                                                    \
    static void name(uint64_t *out, const uint64_t *a, const uint64_t *b, const uint64_t *c,   \
                     uint64_t s, uint64_t s_shoup, size_t len, const triskel_modulus *m) {     \
        triskel_sub_mul_scalar_add_by_ops(&(be), out, a, b, c, s, s_shoup, len, m);            \
    }

/* The backends compiled into this build. */
extern const triskel_backend triskel_portable_backend;
#ifdef TRISKEL_HAVE_AVX512
extern const triskel_backend triskel_avx512_backend;
#endif
#ifdef TRISKEL_HAVE_AVX512IFMA
extern const triskel_backend triskel_avx512ifma_backend;
#endif
#ifdef TRISKEL_HAVE_AARCH64
extern const triskel_backend triskel_aarch64_backend;
#endif
#ifdef TRISKEL_HAVE_SVE
extern const triskel_backend triskel_sve_backend;
#endif
#ifdef TRISKEL_HAVE_AVX2
extern const triskel_backend triskel_avx2_backend;
#endif
#ifdef TRISKEL_HAVE_NEON
extern const triskel_backend triskel_neon_backend;
#endif

#endif
