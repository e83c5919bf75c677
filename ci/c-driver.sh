#!/usr/bin/env bash
# Builds the plain-C kernel test driver for one target and runs it.
#   ci/c-driver.sh                      native build with the system C compiler
#   CC=aarch64-linux-gnu-gcc ARCH=aarch64 RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu" ci/c-driver.sh
#   EXTRA_CFLAGS=-DTRISKEL_NO_INT128 ci/c-driver.sh      the two-word 128-bit arithmetic
# The same backend defines as kernels-c/build.rs: an architecture's assembly
# backends are compiled in when kernels-asm/<arch>/ holds .S files.
set -euo pipefail
cd "$(dirname "$0")/.."
CC=${CC:-cc}
ARCH=${ARCH:-$(uname -m)}
RUNNER=${RUNNER:-}
OUT=${OUT:-target/c-driver-$ARCH}
mkdir -p "$(dirname "$OUT")"

shopt -s nullglob
asm=(kernels-asm/"$ARCH"/*.S)
arch_c=(kernels-c/src/"$ARCH"/*.c)
defines=()
if [ ${#asm[@]} -gt 0 ]; then
    case "$ARCH" in
        x86_64) defines=(-DTRISKEL_HAVE_AVX512 -DTRISKEL_HAVE_AVX512IFMA -DTRISKEL_HAVE_AVX2) ;;
        aarch64) defines=(-DTRISKEL_HAVE_AARCH64 -DTRISKEL_HAVE_SVE -DTRISKEL_HAVE_NEON) ;;
    esac
fi
# EXTRA_CFLAGS: more compiler flags, e.g. -DTRISKEL_NO_INT128 (the library's
# 128-bit arithmetic in two 64-bit words, as on compilers without __int128).
# shellcheck disable=SC2086
"$CC" -O2 -std=c11 -Wall -Wextra -Werror -Ikernels-c/include -Ikernels-c/src "${defines[@]}" ${EXTRA_CFLAGS:-} \
    kernels-c/src/*.c "${arch_c[@]}" "${asm[@]}" kernels-c/tests/driver.c -o "$OUT"
$RUNNER "$OUT"
