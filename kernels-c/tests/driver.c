/* C test driver: checks the portable backend against schoolbook arithmetic,
 * then every other backend compiled for this target (and runnable on this CPU)
 * against portable, bit for bit, on every op and size, on random and edge
 * inputs. Prints "N passed, M failed" and exits non-zero on any failure. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triskel_kernels.h"

#if defined(__aarch64__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#ifndef HWCAP_SVE
#define HWCAP_SVE (1 << 22)
#endif
#ifndef PR_SVE_GET_VL
#define PR_SVE_GET_VL 51
#endif
#endif

typedef unsigned __int128 u128;

static int passed, failed;

/* The ABI's ops; a check whose label is an op's name, alone or followed by a
 * space, marks that op as exercised in ops_seen (main reports the ops of each
 * backend that no check reached, and ci/aarch64.sh fails on them). */
static const char *const ops[] = {"ntt_forward", "ntt_inverse", "add", "sub", "neg", "mul",
                                  "mul_scalar", "mul_acc", "dot", "base_convert",
                                  "automorphism_coeff", "automorphism_ntt", "ntt_inverse_to",
                                  "sub_mul_scalar_add"};
enum { NUM_OPS = sizeof ops / sizeof ops[0] };
static unsigned ops_seen;

static void check(int ok, const char *backend, const char *what, uint64_t n, uint64_t q) {
    for (int i = 0; i < NUM_OPS; i++) {
        size_t len = strlen(ops[i]);
        if (strncmp(what, ops[i], len) == 0 && (what[len] == '\0' || what[len] == ' '))
            ops_seen |= 1u << i;
    }
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL %s %s n=%" PRIu64 " q=%" PRIu64 "\n", backend, what, n, q);
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t next_u64(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int runnable(uint32_t id) {
    switch (id) {
    case TRISKEL_BACKEND_PORTABLE:
        return 1;
#if defined(__x86_64__)
    case TRISKEL_BACKEND_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("bmi2");
    case TRISKEL_BACKEND_AVX512IFMA:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512ifma") && __builtin_cpu_supports("bmi2");
    case TRISKEL_BACKEND_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("bmi2");
#endif
#if defined(__aarch64__)
    case TRISKEL_BACKEND_AARCH64:
    case TRISKEL_BACKEND_NEON:
        return 1;
    case TRISKEL_BACKEND_SVE:
        return (getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
#endif
    default:
        return 0;
    }
}

/* The first prime of start, start + step, ... (step may be negative) that
 * `accept` (or NULL) takes. Exits when 2^16 candidates give none, which only a
 * broken triskel_is_prime (its modular products) does: fail, never hang. */
static uint64_t first_prime(uint64_t start, int64_t step, int (*accept)(uint64_t)) {
    uint64_t q = start;
    for (int i = 0; i < 1 << 16; i++, q += (uint64_t)step)
        if (triskel_is_prime(q) && (accept == NULL || accept(q))) return q;
    fprintf(stderr, "no prime from %" PRIu64 " on: triskel_is_prime is broken\n", start);
    exit(1);
}

enum { PRIME_STEP = 1 << 18 };

/* Largest prime below 2^bits with q = 1 mod 2^18 (NTT-friendly for every n). */
static uint64_t friendly_prime(int bits) {
    return first_prime(((uint64_t)1 << bits) - PRIME_STEP + 1, -PRIME_STEP, NULL);
}

/* Smallest prime above 2^30 with q = 1 mod 2^18 (2^30 + 2^19 + 1): a 31-bit
 * prime so close to 2^30 that the neon backend's 32-bit one-constant Barrett
 * estimate (neon.S, sbarrett_mul) is two short for (q-1)(q-2), which the
 * edge fills produce. */
static uint64_t low_31_bit_prime(void) {
    return first_prime(((uint64_t)1 << 30) + PRIME_STEP + 1, PRIME_STEP, NULL);
}

/* 2^124 / q has a fractional part above 9/10. */
static int hard_for_barrett(uint64_t q) {
    return 10 * (u128)((((u128)1) << 124) % q) > 9 * (u128)q;
}

/* A 62-bit NTT-friendly prime whose 2^124 / q has a fractional part above
 * 9/10: there a one-constant Barrett quotient floor(floor(x / 2^60) *
 * floor(2^124 / q) / 2^64) is two short for x = (q - 1)^2 (the MAX fill),
 * which a second correction, or a constant one bit longer, must catch. */
static uint64_t hard_barrett_prime(void) {
    return first_prime(((uint64_t)1 << 62) - PRIME_STEP + 1, -PRIME_STEP, hard_for_barrett);
}

enum { RANDOM, ZEROS, ONES, MAX, MIXED_EDGES, NUM_FILLS };

static void fill(uint64_t *a, size_t len, uint64_t q, int kind) {
    static const uint64_t edges[] = {0, 1, 2};
    for (size_t i = 0; i < len; i++) {
        switch (kind) {
        case RANDOM: a[i] = next_u64() % q; break;
        case ZEROS: a[i] = 0; break;
        case ONES: a[i] = 1; break;
        case MAX: a[i] = q - 1; break;
        default: a[i] = (next_u64() & 1) ? q - 1 - edges[next_u64() % 3] : edges[next_u64() % 3];
        }
    }
}

static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t q) { return (uint64_t)((u128)a * b % q); }

/* mul and mul_acc against u128 for the smallest prime above 2^61, no NTT
 * prime: the bottom of the 62-bit range, where truncating x costs the
 * aarch64 backends' 62-bit Barrett quotient estimate the most (mulmod.S).
 * An odd length reaches every backend's tail. */
static void check_products_above_2_61(const triskel_backend *be) {
    uint64_t q = ((uint64_t)1 << 61) + 1;
    while (!triskel_is_prime(q)) q += 2;
    const uint64_t n = 1027;
    uint64_t *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8);
    triskel_modulus m;
    triskel_modulus_init(&m, q);
    int ok_mul = 1, ok_acc = 1;
    for (int kind = 0; kind < NUM_FILLS; kind++) {
        fill(a, n, q, kind);
        fill(b, n, q, MIXED_EDGES);
        be->mul(c, a, b, n, &m);
        for (uint64_t k = 0; k < n; k++) ok_mul &= c[k] == mulmod(a[k], b[k], q);
        memcpy(c, b, n * 8);
        be->mul_acc(c, a, a, n, &m);
        for (uint64_t k = 0; k < n; k++)
            ok_acc &= c[k] == (uint64_t)(((u128)a[k] * a[k] + b[k]) % q);
    }
    check(ok_mul, be->name, "mul above 2^61", n, q);
    check(ok_acc, be->name, "mul_acc above 2^61", n, q);
    free(a), free(b), free(c);
}

/* Portable against schoolbook: forward, pointwise product, inverse equals the
 * negacyclic product; inverse(forward(a)) = a; element-wise ops against u128. */
static void check_portable(uint64_t q) {
    const triskel_backend *pb = triskel_backend_get(TRISKEL_BACKEND_PORTABLE);
    const uint64_t n = 1024;
    triskel_ntt_plan *plan = triskel_ntt_plan_new(pb, n, q, triskel_min_root_2n(q, n));
    check(plan != NULL, "portable", "plan", n, q);
    if (!plan) return;
    uint64_t *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8), *ref = calloc(n, 8);
    for (int kind = 0; kind < NUM_FILLS; kind++) {
        fill(a, n, q, kind);
        /* Out of place: a back from its transform c, c untouched. */
        memcpy(c, a, n * 8);
        pb->ntt_forward(plan, c);
        memcpy(ref, c, n * 8);
        pb->ntt_inverse_to(plan, b, c);
        check(memcmp(b, a, n * 8) == 0 && memcmp(c, ref, n * 8) == 0, "portable",
              "ntt_inverse_to", n, q);
        fill(b, n, q, RANDOM);
        memset(ref, 0, n * 8);
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t j = 0; j < n; j++) {
                uint64_t p = mulmod(a[i], b[j], q), k = i + j;
                if (k < n) ref[k] = (ref[k] + p) % q;
                else ref[k - n] = (ref[k - n] + q - p) % q;
            }
        memcpy(c, a, n * 8);
        pb->ntt_forward(plan, c);
        pb->ntt_inverse(plan, c);
        check(memcmp(c, a, n * 8) == 0, "portable", "ntt round trip", n, q);
        pb->ntt_forward(plan, a);
        pb->ntt_forward(plan, b);
        pb->mul(c, a, b, n, &plan->modulus);
        pb->ntt_inverse(plan, c);
        check(memcmp(c, ref, n * 8) == 0, "portable", "ntt product vs schoolbook", n, q);
    }
    triskel_modulus m;
    triskel_modulus_init(&m, q);
    int ok[7] = {1, 1, 1, 1, 1, 1, 1};
    for (int kind = 0; kind < NUM_FILLS; kind++) {
        fill(a, n, q, kind);
        fill(b, n, q, MIXED_EDGES);
        uint64_t s = next_u64() % q;
        memcpy(c, b, n * 8);
        pb->mul_acc(c, a, a, n, &m);
        for (uint64_t i = 0; i < n; i++)
            ok[0] &= c[i] == (uint64_t)(((u128)a[i] * a[i] + b[i]) % q);
        pb->add(c, a, b, n, &m);
        for (uint64_t i = 0; i < n; i++) ok[1] &= c[i] == (uint64_t)(((u128)a[i] + b[i]) % q);
        pb->sub(c, a, b, n, &m);
        for (uint64_t i = 0; i < n; i++) ok[2] &= c[i] == (uint64_t)(((u128)a[i] + q - b[i]) % q);
        pb->neg(c, a, n, &m);
        for (uint64_t i = 0; i < n; i++) ok[3] &= c[i] == (q - a[i]) % q;
        pb->mul(c, a, b, n, &m);
        for (uint64_t i = 0; i < n; i++) ok[4] &= c[i] == mulmod(a[i], b[i], q);
        pb->mul_scalar(c, a, s, triskel_shoup(s, q), n, &m);
        for (uint64_t i = 0; i < n; i++) ok[5] &= c[i] == mulmod(a[i], s, q);
        /* With c = a + 1 (an addend, every value once) and without (NULL). */
        pb->sub_mul_scalar_add(c, a, b, a + 1, s, triskel_shoup(s, q), n - 1, &m);
        for (uint64_t i = 0; i + 1 < n; i++)
            ok[6] &= c[i] == (mulmod((a[i] + q - b[i]) % q, s, q) + a[i + 1]) % q;
        pb->sub_mul_scalar_add(c, a, b, NULL, s, triskel_shoup(s, q), n, &m);
        for (uint64_t i = 0; i < n; i++) ok[6] &= c[i] == mulmod((a[i] + q - b[i]) % q, s, q);
    }
    static const char *names[7] = {"mul_acc", "add", "sub", "neg", "mul", "mul_scalar",
                                   "sub_mul_scalar_add"};
    for (int i = 0; i < 7; i++) check(ok[i], "portable", names[i], n, q);
    free(a), free(b), free(c), free(ref);
    triskel_ntt_plan_free(plan);
}

/* The key-switching ops of portable against slow references: dot against a
 * running u128 % q, base conversion against the CRT sum mod p computed one
 * term at a time, and the two automorphisms against each other through the
 * NTT (forward(a(X^g)) = the NTT-domain permutation of forward(a)). */
enum { TERMS = 20 }; /* more than one 16-term chunk of the lazy sums */
static void check_portable_keyswitch_ops(uint64_t q) {
    const triskel_backend *pb = triskel_backend_get(TRISKEL_BACKEND_PORTABLE);
    const uint64_t n = 1024;
    triskel_modulus m;
    triskel_modulus_init(&m, q);
    uint64_t *buf = malloc(2 * TERMS * n * 8), *out = malloc(n * 8);
    const uint64_t *a[TERMS], *b[TERMS];
    for (int j = 0; j < TERMS; j++) a[j] = buf + j * n, b[j] = buf + (TERMS + j) * n;
    int ok_dot = 1, ok_conv = 1;
    for (int kind = 0; kind < NUM_FILLS; kind++) {
        fill(buf, 2 * TERMS * n, q, kind);
        for (size_t count = 1; count <= TERMS; count += 3) {
            pb->dot(out, a, b, count, n, &m);
            for (uint64_t i = 0; i < n; i++) {
                uint64_t r = 0;
                for (size_t j = 0; j < count; j++) r = (r + mulmod(a[j][i], b[j][i], q)) % q;
                ok_dot &= out[i] == r;
            }
        }
    }
    /* Fast conversion from TERMS primes of 40 bits (y_i < q_i, the "a" vectors
     * reduced mod q_i) to q: sum_i y_i * w_i mod q with arbitrary w_i < q. */
    uint64_t src_q[TERMS], w[TERMS];
    double inv_q[TERMS];
    for (int i = 0; i < TERMS; i++) {
        src_q[i] = friendly_prime(40) - ((uint64_t)i << 19);
        inv_q[i] = 1.0 / (double)src_q[i];
        w[i] = next_u64() % q;
    }
    uint64_t *y = malloc(TERMS * n * 8);
    const uint64_t *yp[TERMS];
    for (int i = 0; i < TERMS; i++) {
        yp[i] = y + i * n;
        for (uint64_t c = 0; c < n; c++) y[i * n + c] = next_u64() % src_q[i];
    }
    triskel_convert_table t = {TERMS, src_q, inv_q, w, NULL};
    pb->base_convert(out, yp, n, &t, &m);
    for (uint64_t c = 0; c < n; c++) {
        uint64_t r = 0;
        for (int i = 0; i < TERMS; i++) r = (r + mulmod(yp[i][c], w[i], q)) % q;
        ok_conv &= out[c] == r;
    }
    check(ok_dot, "portable", "dot", n, q);
    check(ok_conv, "portable", "base_convert (fast)", n, q);

    triskel_ntt_plan *plan = triskel_ntt_plan_new(pb, n, q, triskel_min_root_2n(q, n));
    uint32_t *perm = malloc(n * sizeof *perm);
    uint64_t *x = malloc(n * 8), *z = malloc(n * 8);
    int ok_auto = plan != NULL;
    static const uint64_t gs[] = {1, 3, 5, 25, 2047, 1025};
    for (size_t gi = 0; plan && gi < sizeof gs / sizeof gs[0]; gi++) {
        fill(x, n, q, MIXED_EDGES);
        pb->automorphism_coeff(out, x, gs[gi], n, &m);
        pb->ntt_forward(plan, out);
        pb->ntt_forward(plan, x);
        ok_auto &= triskel_galois_permutation(perm, n, gs[gi]) == 0;
        pb->automorphism_ntt(z, x, perm, n);
        ok_auto &= memcmp(z, out, n * 8) == 0;
    }
    check(ok_auto, "portable", "automorphisms (coefficient = NTT domain)", n, q);
    triskel_ntt_plan_free(plan);
    free(buf), free(out), free(y), free(perm), free(x), free(z);
}

/* The key-switching ops of `be` equal portable's, with the exact conversion
 * (v from doubles, and the k = 1 exact lift) on top of the fast one. */
static void check_keyswitch_ops_against_portable(const triskel_backend *be, uint64_t q) {
    const triskel_backend *pb = triskel_backend_get(TRISKEL_BACKEND_PORTABLE);
    const uint64_t n = 1024 + 3; /* vector tails too */
    const uint64_t max_auto = 4096; /* the largest automorphism size below */
    triskel_modulus m;
    triskel_modulus_init(&m, q);
    uint64_t *buf = malloc(2 * TERMS * n * 8), *x = malloc(max_auto * 8), *y = malloc(max_auto * 8);
    const uint64_t *a[TERMS], *b[TERMS];
    for (int j = 0; j < TERMS; j++) a[j] = buf + j * n, b[j] = buf + (TERMS + j) * n;
    for (int kind = 0; kind < NUM_FILLS; kind++) {
        fill(buf, 2 * TERMS * n, q, kind);
        if (be->dot)
            for (size_t count = 1; count <= TERMS; count++) {
                pb->dot(x, a, b, count, n, &m);
                be->dot(y, a, b, count, n, &m);
                check(memcmp(x, y, n * 8) == 0, be->name, "dot", n, q);
            }
        if (be->base_convert) {
            /* Source primes around q's size (some above, some below it), each
             * y_i reduced modulo its prime. */
            uint64_t src_q[TERMS], w[TERMS], vq[TERMS + 1];
            double inv_q[TERMS];
            int bits = (int)(64 - __builtin_clzll(q));
            for (int i = 0; i < TERMS; i++) {
                int sb = bits + (i % 3) - 1;
                src_q[i] = friendly_prime(sb < 20 ? 20 : sb > 62 ? 62 : sb) - ((uint64_t)i << 18);
                inv_q[i] = 1.0 / (double)src_q[i];
                w[i] = kind == MAX ? q - 1 : next_u64() % q;
            }
            for (int v = 0; v <= TERMS; v++) vq[v] = next_u64() % q;
            uint64_t *ys = malloc(TERMS * n * 8);
            const uint64_t *yp[TERMS];
            for (int i = 0; i < TERMS; i++) {
                yp[i] = ys + i * n;
                for (uint64_t c = 0; c < n; c++) {
                    uint64_t half = src_q[i] / 2 + c % 2; /* the boundary of the exact lift */
                    ys[i * n + c] = kind == MAX           ? src_q[i] - 1
                                    : kind == ZEROS       ? 0
                                    : kind == MIXED_EDGES ? half
                                                          : a[i][c] % src_q[i];
                }
            }
            for (size_t count = 1; count <= TERMS; count++)
                for (int exact = 0; exact <= 1; exact++) {
                    triskel_convert_table t = {count, src_q, inv_q, w, exact ? vq : NULL};
                    pb->base_convert(x, yp, n, &t, &m);
                    be->base_convert(y, yp, n, &t, &m);
                    check(memcmp(x, y, n * 8) == 0, be->name,
                          exact ? "base_convert exact" : "base_convert fast", n, q);
                    if (count > 1) continue;
                    /* (Q/q_0) mod p = 1: the single-prime lift of real bases. */
                    uint64_t one = 1, w0 = w[0];
                    w[0] = one;
                    pb->base_convert(x, yp, n, &t, &m);
                    be->base_convert(y, yp, n, &t, &m);
                    w[0] = w0;
                    check(memcmp(x, y, n * 8) == 0, be->name, "base_convert lift", n, q);
                }
            /* The lift from a 62-bit prime (above IFMA's 52-bit limbs). */
            uint64_t big = friendly_prime(62), one = 1, *y0 = malloc(n * 8);
            double inv_big = 1.0 / (double)big;
            const uint64_t *y0p[1] = {y0};
            for (uint64_t c = 0; c < n; c++)
                y0[c] = c % 4 == 0 ? big / 2 + (c / 4) % 2 : c % 4 == 1 ? big - 1 : next_u64() % big;
            for (int exact = 0; exact <= 1; exact++) {
                triskel_convert_table t = {1, &big, &inv_big, &one, exact ? vq : NULL};
                pb->base_convert(x, y0p, n, &t, &m);
                be->base_convert(y, y0p, n, &t, &m);
                check(memcmp(x, y, n * 8) == 0, be->name, "base_convert lift (62-bit source)", n, q);
            }
            free(ys), free(y0);
        }
    }
    /* The lift's quotient estimates err more for primes far from a power of
     * two (the NTT primes above sit just below one): a target p of about
     * 1.5 * 2^48, a source prime just below 2^50 (IFMA) or 2^62. */
    if (be->base_convert) {
        uint64_t p = (3ull << 47) + 1, one = 1, vq[2] = {0, 12345};
        while (!triskel_is_prime(p)) p += 2;
        triskel_modulus mp;
        triskel_modulus_init(&mp, p);
        for (int big = 0; big <= 1; big++) {
            uint64_t src = friendly_prime(big ? 62 : 50);
            double inv_src = 1.0 / (double)src;
            const uint64_t *y0p[1] = {buf};
            for (uint64_t c = 0; c < n; c++) buf[c] = next_u64() % src;
            triskel_convert_table t = {1, &src, &inv_src, &one, vq};
            pb->base_convert(x, y0p, n, &t, &mp);
            be->base_convert(y, y0p, n, &t, &mp);
            check(memcmp(x, y, n * 8) == 0, be->name, "base_convert lift (p far from 2^k)", n, p);
        }
    }
    /* Automorphisms take reduced inputs (the ABI): refill, since the lift
     * checks above leave residues of larger primes in buf. */
    for (uint64_t c = 0; c < 4096; c++) buf[c] = c % 7 == 0 ? q - 1 : next_u64() % q;
    const uint64_t sizes[2] = {1024, 4096};
    uint32_t *perm = malloc(4096 * sizeof *perm);
    for (int si = 0; si < 2; si++) {
        const uint64_t len = sizes[si];
        for (uint64_t g = 1; g < 2 * len; g += len / 4 + 2) { /* odd g only */
            if (be->automorphism_coeff) {
                pb->automorphism_coeff(x, buf, g, len, &m);
                be->automorphism_coeff(y, buf, g, len, &m);
                check(memcmp(x, y, len * 8) == 0, be->name, "automorphism_coeff", len, q);
            }
            if (be->automorphism_ntt) {
                triskel_galois_permutation(perm, len, g);
                pb->automorphism_ntt(x, buf, perm, len);
                be->automorphism_ntt(y, buf, perm, len);
                check(memcmp(x, y, len * 8) == 0, be->name, "automorphism_ntt", len, q);
                /* Any permutation, not only a Galois one: two entries swapped
                 * across blocks of 8, then a stride that splits every block. */
                uint32_t t = perm[3];
                perm[3] = perm[len - 5], perm[len - 5] = t;
                pb->automorphism_ntt(x, buf, perm, len);
                be->automorphism_ntt(y, buf, perm, len);
                check(memcmp(x, y, len * 8) == 0, be->name, "automorphism_ntt (swapped)", len, q);
                for (uint64_t j = 0; j < len; j++) perm[j] = (uint32_t)((j * (g + 2)) % len);
                pb->automorphism_ntt(x, buf, perm, len);
                be->automorphism_ntt(y, buf, perm, len);
                check(memcmp(x, y, len * 8) == 0, be->name, "automorphism_ntt (strided)", len, q);
            }
        }
    }
    free(buf), free(x), free(y), free(perm);
}

/* dot and base_convert of `be` equal portable's for every term count the
 * ABI allows (1..TRISKEL_MAX_TERMS, across the reduction period's
 * boundaries 16, 32, ...), on every fill: all q-1 is the largest sum the
 * lazy columns must hold. */
static void check_lazy_sums_at_max_terms(const triskel_backend *be, uint64_t q) {
    const triskel_backend *pb = triskel_backend_get(TRISKEL_BACKEND_PORTABLE);
    enum { K = TRISKEL_MAX_TERMS };
    const uint64_t n = 16 + 5; /* whole vectors and a tail */
    triskel_modulus m;
    triskel_modulus_init(&m, q);
    uint64_t *buf = malloc(2 * K * n * 8), *ys = malloc(K * n * 8);
    uint64_t *x = malloc(n * 8), *y = malloc(n * 8);
    const uint64_t *a[K], *b[K], *yp[K];
    uint64_t src_q[K], w[K], vq[K + 1];
    double inv_q[K];
    const int bits = (int)(64 - __builtin_clzll(q));
    for (int j = 0; j < K; j++) {
        a[j] = buf + j * n, b[j] = buf + (K + j) * n, yp[j] = ys + j * n;
        /* Moduli around q's size (the kernels need no primality). */
        int sb = bits + (j % 3) - 1;
        src_q[j] = friendly_prime(sb < 20 ? 20 : sb > 62 ? 62 : sb) - 2 * (uint64_t)j;
        inv_q[j] = 1.0 / (double)src_q[j];
    }
    for (int v = 0; v <= K; v++) vq[v] = next_u64() % q;
    for (int kind = 0; kind < NUM_FILLS; kind++) {
        fill(buf, 2 * K * n, q, kind);
        for (int j = 0; j < K; j++) w[j] = kind == MAX ? q - 1 : next_u64() % q;
        for (size_t count = 1; count <= K; count++) {
            if (be->dot) {
                pb->dot(x, a, b, count, n, &m);
                be->dot(y, a, b, count, n, &m);
                check(memcmp(x, y, n * 8) == 0, be->name, "dot (up to the largest term count)", n,
                      q);
            }
            if (!be->base_convert) continue;
            /* Residues of the source primes: the "b" vectors reduced, or
             * q_i - 1 for the largest sum. */
            for (size_t i = 0; i < count; i++)
                for (uint64_t c = 0; c < n; c++)
                    ys[i * n + c] = kind == MAX ? src_q[i] - 1 : b[i][c] % src_q[i];
            for (int exact = 0; exact <= 1; exact++) {
                triskel_convert_table t = {count, src_q, inv_q, w, exact ? vq : NULL};
                pb->base_convert(x, yp, n, &t, &m);
                be->base_convert(y, yp, n, &t, &m);
                check(memcmp(x, y, n * 8) == 0, be->name,
                      "base_convert (up to the largest term count)", n, q);
            }
        }
    }
    free(buf), free(ys), free(x), free(y);
}

/* Every kernel of `be` equals the portable kernel on the same inputs. */
static void check_against_portable(const triskel_backend *be, uint64_t q) {
    const triskel_backend *pb = triskel_backend_get(TRISKEL_BACKEND_PORTABLE);
    for (int log_n = TRISKEL_LOG_N_MIN; log_n <= TRISKEL_LOG_N_MAX; log_n++) {
        const uint64_t n = (uint64_t)1 << log_n, psi = triskel_min_root_2n(q, n);
        triskel_ntt_plan *pp = triskel_ntt_plan_new(pb, n, q, psi);
        triskel_ntt_plan *bp = triskel_ntt_plan_new(be, n, q, psi);
        check(pp != NULL && bp != NULL, be->name, "plan", n, q);
        if (!pp || !bp) continue;
        const triskel_modulus *m = &pp->modulus;
        /* One extra word on each side catches out-of-bounds writes; the +1
         * offset makes the buffers unaligned for vector loads. */
        uint64_t *a = malloc((n + 2) * 8), *b = malloc((n + 2) * 8);
        uint64_t *x = malloc((n + 2) * 8), *y = malloc((n + 2) * 8);
        uint64_t *b_copy = malloc((n + 2) * 8);
        for (int kind = 0; kind < NUM_FILLS; kind++) {
            for (int offset = 0; offset <= 1; offset++) {
                uint64_t *xa = x + offset, *ya = y + offset;
                fill(a, n + 2, q, kind);
                fill(b, n + 2, q, MIXED_EDGES);
                uint64_t s = kind == MAX ? q - 1 : next_u64() % q, s_shoup = triskel_shoup(s, q);
#define COMPARE(what, call_p, call_b)                                                  \
    do {                                                                               \
        memcpy(x, a, (n + 2) * 8);                                                     \
        memcpy(y, a, (n + 2) * 8);                                                     \
        call_p;                                                                        \
        call_b;                                                                        \
        check(memcmp(x, y, (n + 2) * 8) == 0, be->name, what, n, q);                   \
    } while (0)
                if (be->ntt_forward)
                    COMPARE("ntt_forward", pb->ntt_forward(pp, xa), be->ntt_forward(bp, ya));
                if (be->ntt_inverse)
                    COMPARE("ntt_inverse", pb->ntt_inverse(pp, xa), be->ntt_inverse(bp, ya));
                if (be->add) COMPARE("add", pb->add(xa, xa, b, n, m), be->add(ya, ya, b, n, m));
                if (be->sub) COMPARE("sub", pb->sub(xa, b, xa, n, m), be->sub(ya, b, ya, n, m));
                if (be->neg) COMPARE("neg", pb->neg(xa, xa, n, m), be->neg(ya, ya, n, m));
                if (be->mul) COMPARE("mul", pb->mul(xa, xa, b, n, m), be->mul(ya, ya, b, n, m));
                if (be->mul_scalar)
                    COMPARE("mul_scalar", pb->mul_scalar(xa, xa, s, s_shoup, n, m),
                            be->mul_scalar(ya, ya, s, s_shoup, n, m));
                if (be->mul_acc)
                    COMPARE("mul_acc", pb->mul_acc(xa, b, b + 1, n, m),
                            be->mul_acc(ya, b, b + 1, n, m));
                /* Out of place from the (unaligned) b + 1, which must stay
                 * untouched, and in place through the same entry. */
                if (be->ntt_inverse_to) {
                    memcpy(b_copy, b, (n + 2) * 8);
                    COMPARE("ntt_inverse_to", pb->ntt_inverse_to(pp, xa, b + 1),
                            be->ntt_inverse_to(bp, ya, b + 1));
                    check(memcmp(b, b_copy, (n + 2) * 8) == 0, be->name,
                          "ntt_inverse_to input untouched", n, q);
                    COMPARE("ntt_inverse_to in place", pb->ntt_inverse_to(pp, xa, xa),
                            be->ntt_inverse_to(bp, ya, ya));
                }
                /* Every aliasing the ABI allows: out = a, out = b, out = c, none. */
                if (be->sub_mul_scalar_add) {
                    COMPARE("sub_mul_scalar_add",
                            pb->sub_mul_scalar_add(xa, xa, b, b + 1, s, s_shoup, n, m),
                            be->sub_mul_scalar_add(ya, ya, b, b + 1, s, s_shoup, n, m));
                    COMPARE("sub_mul_scalar_add out = b",
                            pb->sub_mul_scalar_add(xa, b, xa, b + 1, s, s_shoup, n - 3, m),
                            be->sub_mul_scalar_add(ya, b, ya, b + 1, s, s_shoup, n - 3, m));
                    COMPARE("sub_mul_scalar_add out = c",
                            pb->sub_mul_scalar_add(xa, b, b + 1, xa, s, s_shoup, n - 1, m),
                            be->sub_mul_scalar_add(ya, b, b + 1, ya, s, s_shoup, n - 1, m));
                    COMPARE("sub_mul_scalar_add no addend",
                            pb->sub_mul_scalar_add(xa, xa, b, NULL, s, s_shoup, n - 5, m),
                            be->sub_mul_scalar_add(ya, ya, b, NULL, s, s_shoup, n - 5, m));
                }
                /* Odd lengths exercise the tails of vector loops (every op: lengths
                 * 1, 2 and 3 mod 4). */
                if (be->mul)
                    COMPARE("mul odd length", pb->mul(xa, xa, b, n - 3, m),
                            be->mul(ya, ya, b, n - 3, m));
                if (be->add)
                    COMPARE("add odd length", pb->add(xa, xa, b, 5, m), be->add(ya, ya, b, 5, m));
                if (be->sub)
                    COMPARE("sub tail length", pb->sub(xa, b, xa, n - 2, m),
                            be->sub(ya, b, ya, n - 2, m));
                if (be->neg)
                    COMPARE("neg odd length", pb->neg(xa, xa, n - 1, m), be->neg(ya, ya, n - 1, m));
                if (be->mul_scalar)
                    COMPARE("mul_scalar odd length", pb->mul_scalar(xa, xa, s, s_shoup, n - 3, m),
                            be->mul_scalar(ya, ya, s, s_shoup, n - 3, m));
                if (be->mul_acc)
                    COMPARE("mul_acc odd length", pb->mul_acc(xa, b, b + 1, 9, m),
                            be->mul_acc(ya, b, b + 1, 9, m));
#undef COMPARE
            }
        }
        free(a), free(b), free(x), free(y), free(b_copy);
        triskel_ntt_plan_free(pp);
        triskel_ntt_plan_free(bp);
    }
}

/* True when `name` is an element of the comma-separated `list`. */
static int listed(const char *list, const char *name) {
    const size_t len = strlen(name);
    for (const char *p = list; *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t item = end ? (size_t)(end - p) : strlen(p);
        if (item == len && strncmp(p, name, len) == 0) return 1;
        if (end == NULL) break;
        p = end + 1;
    }
    return 0;
}

int main(void) {
    static const int bits[] = {20, 30, 31, 40, 49, 50, 51, 60, 62};
#if defined(__aarch64__)
    /* ci/aarch64.sh checks that each SVE vector length it asks for was run. */
    if (runnable(TRISKEL_BACKEND_SVE))
        printf("sve vector length: %d bits\n", (prctl(PR_SVE_GET_VL) & 0xffff) * 8);
#endif
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) check_portable(friendly_prime(bits[i]));
    const uint64_t hard = hard_barrett_prime();
    check_portable(hard);
    check_products_above_2_61(triskel_backend_get(TRISKEL_BACKEND_PORTABLE));
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        check_portable_keyswitch_ops(friendly_prime(bits[i]));
    check_portable_keyswitch_ops(hard);
    /* TRISKEL_DRIVER_ONLY=name[,name]: check only those backends (ci/aarch64.sh
     * runs each SVE vector length for the sve backend alone). */
    const char *only = getenv("TRISKEL_DRIVER_ONLY");
    int incomplete = 0;
    for (uint32_t id = 1; id < TRISKEL_BACKEND_COUNT; id++) {
        const triskel_backend *be = triskel_backend_get(id);
        if (be == NULL || (only != NULL && !listed(only, be->name))) continue;
        if (!runnable(id)) {
            printf("skip %s: this CPU cannot run it\n", be->name);
            continue;
        }
        int before = failed;
        ops_seen = 0;
        for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
            if (bits[i] <= (int)be->max_modulus_bits) {
                check_against_portable(be, friendly_prime(bits[i]));
                check_keyswitch_ops_against_portable(be, friendly_prime(bits[i]));
                check_lazy_sums_at_max_terms(be, friendly_prime(bits[i]));
            }
        if (be->max_modulus_bits >= 62) {
            check_against_portable(be, hard);
            check_keyswitch_ops_against_portable(be, hard);
            check_products_above_2_61(be);
            check_lazy_sums_at_max_terms(be, hard);
        }
        if (be->max_modulus_bits == 31) check_against_portable(be, low_31_bit_prime());
        printf("%s: %s\n", be->name, failed == before ? "matches portable" : "MISMATCH");
        if (ops_seen == (1u << NUM_OPS) - 1) {
            printf("%s ops checked: all %d\n", be->name, (int)NUM_OPS);
        } else {
            /* Every backend implements every op: one that falls back to
             * portable is a regression (or a table entry left NULL). */
            printf("%s ops not checked (portable runs them):", be->name);
            for (int i = 0; i < NUM_OPS; i++)
                if (!(ops_seen & (1u << i))) printf(" %s", ops[i]);
            printf("\n");
            incomplete++;
        }
    }
    printf("%d passed, %d failed, %d backends with unchecked ops\n", passed, failed, incomplete);
    return failed != 0 || incomplete != 0;
}
