#!/usr/bin/env bash
# The AArch64 kernels (backends aarch64, sve, neon) on any Linux host:
# cross-compiles the C kernel driver with kernels-c/src/aarch64 and
# kernels-asm/aarch64 and runs it under qemu-aarch64:
#   -cpu max (qemu's default)      aarch64
#   -cpu cortex-a72                ARMv8.0-A + NEON only: neon
#   -cpu neoverse-n1               neon, whose NTT and products interleave scalar work there
#   -cpu max,sve128=on (256, 512)  the sve backend at each vector length
# Every op, every size 2^10..2^17, every test prime the backend accepts,
# random and edge inputs: the driver compares each backend with portable bit
# for bit. This script fails when a run did not check a backend it should
# have (or ran SVE at another vector length than asked), or did not check
# each of a backend's fourteen ops (a NULL op would run portable unchecked).
# On an AArch64 host it runs the driver natively instead and expects sve
# there when /proc/cpuinfo lists it.
# Installs gcc-aarch64-linux-gnu and qemu-user (Debian/Ubuntu) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# check "BACKENDS" "VECTOR_LENGTH" RUNNER...: builds and runs the driver on
# the listed backends only, fails unless each of them matched portable (and,
# when VECTOR_LENGTH is not empty, unless SVE ran at that many bits).
check() {
    local backends=$1 vl=$2
    shift 2
    local runner="$*" log b
    echo "-- ${runner:-native}: $backends"
    log=$(TRISKEL_DRIVER_ONLY=${backends// /,} CC=$CROSS_CC ARCH=aarch64 RUNNER=$runner \
        OUT=target/c-driver-aarch64 ci/c-driver.sh) || {
        printf '%s\n' "$log"
        echo "AArch64 driver failed (${runner:-native})" >&2
        exit 1
    }
    printf '%s\n' "$log" | grep -E 'vector length|matches portable|ops |^skip|passed'
    for b in $backends; do
        if ! printf '%s\n' "$log" | grep -qx "$b: matches portable"; then
            echo "the $b backend was not checked (${runner:-native})" >&2
            exit 1
        fi
        if ! printf '%s\n' "$log" | grep -qx "$b ops checked: all 14"; then
            echo "the $b backend left an op to portable or unchecked (${runner:-native})" >&2
            exit 1
        fi
    done
    if [ -n "$vl" ] && ! printf '%s\n' "$log" | grep -qx "sve vector length: $vl bits"; then
        echo "SVE did not run at $vl bits (${runner:-native})" >&2
        exit 1
    fi
}

if [ "$(uname -m)" = aarch64 ]; then
    CROSS_CC=${CC:-cc}
    backends="aarch64 neon"
    if grep -qw sve /proc/cpuinfo; then backends="aarch64 sve neon"; fi
    check "$backends" ""
    ci/asm-landing-pads.sh
    exit 0
fi

CROSS_CC=${CROSS_CC:-aarch64-linux-gnu-gcc}
SYSROOT=${SYSROOT:-/usr/aarch64-linux-gnu}

missing=()
command -v "$CROSS_CC" >/dev/null || missing+=(gcc-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    echo "installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Each backend's code path once: qemu's default CPU would run sve at 512 bits
# (checked below) and neon's non-N1 path (checked on Cortex-A72).
qemu=(qemu-aarch64 -L "$SYSROOT")
check "aarch64" "" "${qemu[@]}"
check "neon" "" "${qemu[@]}" -cpu cortex-a72
check "neon" "" "${qemu[@]}" -cpu neoverse-n1
for vl in 128 256 512; do
    check "sve" "$vl" "${qemu[@]}" -cpu "max,sve$vl=on"
done
cross=${CROSS_CC%gcc}
CC=$CROSS_CC OBJDUMP=${cross}objdump READELF=${cross}readelf ARCH=aarch64 ci/asm-landing-pads.sh
