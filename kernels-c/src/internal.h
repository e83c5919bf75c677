/* Helpers shared by the C sources of triskel-kernels (not part of the ABI). */
#ifndef TRISKEL_INTERNAL_H
#define TRISKEL_INTERNAL_H

#include "triskel_kernels.h"

typedef unsigned __int128 u128;

static inline uint64_t mulhi64(uint64_t a, uint64_t b) { return (uint64_t)(((u128)a * b) >> 64); }

/* Plain modular product for table construction (uses division: not for hot paths). */
static inline uint64_t mulmod_slow(uint64_t a, uint64_t b, uint64_t q) {
    return (uint64_t)(((u128)a * b) % q);
}

uint64_t triskel_powmod_slow(uint64_t base, uint64_t exp, uint64_t q);

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
