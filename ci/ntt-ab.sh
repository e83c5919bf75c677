#!/usr/bin/env bash
# The NTT kernels of a base revision against the working tree's, in ONE
# process (x86-64): both trees' kernel objects are linked into one program
# (the base's global symbols renamed), which checks that both give the same
# output and then times forward and inverse transforms of each size in
# alternating rounds, so that both see the same host load; it prints the
# fastest round of each (ns per call) and new / old. On a shared host this
# is far steadier than medians from separate processes.
#
# Usage: ci/ntt-ab.sh BASE_REV [BACKEND [BITS [N...]]]
#   BACKEND: portable, avx512, avx512ifma, avx2 (default avx2)
#   BITS: prime sizes, e.g. "40 50" (default); N: sizes (default 2048 8192 16384)
# ROUNDS (default 40) rounds per size, each of about 0.3 ms per side (short
# rounds: the fastest of them is the least disturbed).
# KS=1 also times, the same way, the key-switching kernels of a CKKS key
# switch: dot with 3 terms, base_convert from 3 primes (fast) and the
# single-prime lift (exact) from a prime of 50 and of 40 bits, and the
# NTT-domain automorphism X -> X^5, and the exact conversion from 2 primes.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: ci/ntt-ab.sh BASE_REV [BACKEND [BITS [N...]]]}
backend=${2:-avx2}
bits=${3:-40 50}
shift $(($# < 3 ? $# : 3))
sizes=${*:-2048 8192 16384}
CC=${CC:-cc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# kernels TREE PREFIX: the tree's kernels as one object, globals PREFIXed.
kernels() {
    local tree=$1 prefix=$2 objs=()
    for f in "$tree"/kernels-c/src/*.c "$tree"/kernels-c/src/x86_64/*.c "$tree"/kernels-asm/x86_64/*.S; do
        local o
        o="$dir/$prefix$(basename "$f").o"
        "$CC" -c -O2 -std=c11 -I"$tree"/kernels-c/include -I"$tree"/kernels-c/src \
            -DTRISKEL_HAVE_AVX512 -DTRISKEL_HAVE_AVX512IFMA -DTRISKEL_HAVE_AVX2 "$f" -o "$o"
        objs+=("$o")
    done
    ld -r "${objs[@]}" -o "$dir/${prefix}all.o"
    nm -g --defined-only "$dir/${prefix}all.o" | awk -v p="$prefix" '{print $3 " " p $3}' >"$dir/$prefix.syms"
    objcopy --redefine-syms="$dir/$prefix.syms" "$dir/${prefix}all.o" "$dir/$prefix.o"
}
mkdir "$dir/base"
git archive "$base" kernels-c kernels-asm | tar -x -C "$dir/base"
kernels "$dir/base" old_
kernels . new_

cat >"$dir/ab.c" <<'C'
#define _ISOC11_SOURCE
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "triskel_kernels.h"
#define SIDE(P)                                                                                   \
    const triskel_backend *P##triskel_backend_get(uint32_t);                                      \
    int P##triskel_is_prime(uint64_t);                                                            \
    uint64_t P##triskel_min_root_2n(uint64_t, uint64_t);                                          \
    int P##triskel_modulus_init(triskel_modulus *, uint64_t);                                     \
    int P##triskel_galois_permutation(uint32_t *, uint64_t, uint64_t);                            \
    triskel_ntt_plan *P##triskel_ntt_plan_new(const triskel_backend *, uint64_t, uint64_t, uint64_t);
SIDE(old_)
SIDE(new_)
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static void run(const triskel_backend *be, const triskel_ntt_plan *p, int inverse, uint64_t *a) {
    (inverse ? be->ntt_inverse : be->ntt_forward)(p, a);
}
static uint64_t prime_below(int bits) {
    const uint64_t step = (uint64_t)1 << 18;
    uint64_t q = ((uint64_t)1 << bits) - step + 1;
    while (!new_triskel_is_prime(q)) q -= step;
    return q;
}
/* The key-switching ops (dot of 3 terms, base_convert from 3 primes, the
 * lift from one prime of 50 and of 40 bits) modulo q, old against new as
 * for the transforms. */
static void ks(const triskel_backend *be[2], uint64_t q, int bits, uint64_t n, int rounds, long reps) {
    triskel_modulus m;
    new_triskel_modulus_init(&m, q);
    uint64_t src[3] = {prime_below(50) - ((uint64_t)1 << 19), prime_below(41), prime_below(39)};
    while (!new_triskel_is_prime(src[0])) src[0] -= (uint64_t)1 << 18;
    uint64_t *in[6], *out[2] = {aligned_alloc(64, n * 8), aligned_alloc(64, n * 8)};
    for (int j = 0; j < 6; j++) {
        in[j] = aligned_alloc(64, n * 8);
        for (uint64_t i = 0; i < n; i++) in[j][i] = (i * 0x9e3779b97f4a7c15u + j) % (j < 3 ? q : src[j - 3]);
    }
    double inv_q[3];
    uint64_t qhat[3], one = 1 % q, vq[4] = {0, 0, 0, 0};
    for (int j = 0; j < 3; j++) inv_q[j] = 1.0 / (double)src[j], qhat[j] = (src[j] >> 3) % q;
    uint32_t *perm = malloc(n * sizeof *perm);
    new_triskel_galois_permutation(perm, n, 5);
    /* Keys out of the caches, as in a key switch: 64 sets of 3 limbs (12 MB
     * at n = 8192), a new set per call. */
    enum { SETS = 64 };
    uint64_t *cold = aligned_alloc(64, SETS * 3 * n * 8);
    for (uint64_t i = 0; i < SETS * 3 * n; i++) cold[i] = (i * 0x9e3779b97f4a7c15u) % q;
    /* The exact conversion from 2 primes (the division by q_l P): v Q mod p. */
    uint64_t vq2[3] = {0, (unsigned __int128)src[0] * src[1] % q, 2 * ((unsigned __int128)src[0] * src[1] % q) % q};
    const char *what[7] = {"dot(3)", "convert(3)", "lift50", "lift40", "auto_ntt", "dot(3)cold", "exact(2)"};
    for (int op = 0; op < 7; op++) {
        uint64_t lift_src = src[op == 2 ? 0 : 1];
        vq[1] = lift_src % q;
        triskel_convert_table t3 = {3, src, inv_q, qhat, NULL}, t1 = {1, &lift_src, inv_q, &one, vq},
                              t2 = {2, src, inv_q, qhat, vq2};
        const uint64_t *ys[3] = {in[3], in[4], in[5]}, *lift_y[1] = {op == 2 ? in[3] : in[4]};
        double best[2] = {1e300, 1e300};
        long k_set = 0;
        for (int r = 0; r <= rounds; r++)
            for (int v = 0; v < 2; v++) {
                double t0 = now();
                for (long k = 0; k < reps; k++) {
                    if (op == 0) be[v]->dot(out[v], (const uint64_t *const *)in, (const uint64_t *const *)in + 3, 3, n, &m);
                    else if (op == 1) be[v]->base_convert(out[v], ys, n, &t3, &m);
                    else if (op == 4) be[v]->automorphism_ntt(out[v], in[0], perm, n);
                    else if (op == 6) be[v]->base_convert(out[v], ys, n, &t2, &m);
                    else if (op == 5) {
                        const uint64_t *k = cold + (uint64_t)(k_set++ % SETS) * 3 * n;
                        const uint64_t *keys[3] = {k, k + n, k + 2 * n};
                        be[v]->dot(out[v], (const uint64_t *const *)in, keys, 3, n, &m);
                    }
                    else be[v]->base_convert(out[v], lift_y, n, &t1, &m);
                }
                double dt = (now() - t0) / reps;
                if (r > 0 && dt < best[v]) best[v] = dt;
                if (r == 0 && v == 1 && op != 5 && memcmp(out[0], out[1], n * 8) != 0) {
                    fprintf(stderr, "%s outputs differ\n", what[op]);
                    exit(1);
                }
            }
        printf("%s %2d-bit n=%6lu %-10s old %9.0f ns  new %9.0f ns  new/old %.3f\n", be[1]->name, bits,
               (unsigned long)n, what[op], best[0], best[1], best[1] / best[0]);
    }
}
int main(int argc, char **argv) {
    const char *name = argv[1];
    const int bits = atoi(argv[2]), rounds = atoi(argv[3]);
    const uint64_t n = strtoull(argv[4], 0, 0), step = (uint64_t)1 << 18;
    uint64_t q = ((uint64_t)1 << bits) - step + 1; /* largest prime = 1 mod 2^18 below 2^bits */
    while (!new_triskel_is_prime(q)) q -= step;
    const triskel_backend *be[2] = {0, 0};
    for (uint32_t id = 0; id < TRISKEL_BACKEND_COUNT; id++) {
        const triskel_backend *o = old_triskel_backend_get(id), *w = new_triskel_backend_get(id);
        if (o && w && strcmp(w->name, name) == 0) be[0] = o, be[1] = w;
    }
    if (!be[0]) return fprintf(stderr, "no backend %s in both trees\n", name), 1;
    triskel_ntt_plan *p[2] = {old_triskel_ntt_plan_new(be[0], n, q, old_triskel_min_root_2n(q, n)),
                              new_triskel_ntt_plan_new(be[1], n, q, new_triskel_min_root_2n(q, n))};
    if (!p[0] || !p[1]) return fprintf(stderr, "no plan\n"), 1;
    /* 64-byte aligned, as the engines allocate (a misaligned side is slower). */
    uint64_t *a[2] = {aligned_alloc(64, n * 8), aligned_alloc(64, n * 8)};
    const long reps = 400000 / (long)n + 1;
    for (int inverse = 0; inverse <= 1; inverse++) {
        for (uint64_t i = 0; i < n; i++) a[0][i] = a[1][i] = (i * 0x9e3779b97f4a7c15u) % q;
        for (int v = 0; v < 2; v++) run(be[v], p[v], inverse, a[v]);
        if (memcmp(a[0], a[1], n * 8) != 0) return fprintf(stderr, "outputs differ\n"), 1;
        double best[2] = {1e300, 1e300};
        for (int r = 0; r < rounds; r++)
            for (int v = 0; v < 2; v++) {
                double t0 = now();
                for (long k = 0; k < reps; k++) run(be[v], p[v], inverse, a[v]);
                double t = (now() - t0) / reps;
                if (t < best[v]) best[v] = t;
            }
        printf("%s %2d-bit n=%6lu %s  old %9.0f ns  new %9.0f ns  new/old %.3f\n", name, bits,
               (unsigned long)n, inverse ? "inverse" : "forward", best[0], best[1],
               best[1] / best[0]);
    }
    if (argc > 5 && atoi(argv[5])) ks(be, q, bits, n, rounds, reps);
    return 0;
}
C
"$CC" -O2 -std=c11 -Ikernels-c/include "$dir/ab.c" "$dir/old_.o" "$dir/new_.o" -o "$dir/ab"
for b in $bits; do
    for n in $sizes; do "$dir/ab" "$backend" "$b" "${ROUNDS:-40}" "$n" "${KS:-0}"; done
done
