#!/usr/bin/env bash
# Prints the core's current clock in GHz from a dependent loop of 2e9
# one-cycle decrements (a loaded or throttled host reads low), to quote next
# to timings.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/clock.c" <<'C'
#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec a, b;
    long n = 2000000000;
    clock_gettime(CLOCK_MONOTONIC, &a);
#if defined(__x86_64__)
    __asm__ volatile("1: dec %0\n jnz 1b" : "+r"(n));
#elif defined(__aarch64__)
    __asm__ volatile("1: subs %0, %0, #1\n b.ne 1b" : "+r"(n));
#else
#error "x86-64 or AArch64 only"
#endif
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("%.2f GHz\n", 2.0 / s);
    return 0;
}
C
"${CC:-gcc}" -O1 -o "$dir/clock" "$dir/clock.c"
"$dir/clock"
