#!/usr/bin/env bash
# The NEON kernels on any Linux host: cross-compiles the C kernel driver with
# the AArch64 backend (kernels-c/src/aarch64, kernels-asm/aarch64) and runs it
# under qemu-aarch64, once with qemu's default CPU and once as a Cortex-A72
# (ARMv8.0-A + NEON, nothing newer), so nothing depends on later extensions.
# Every op, every size 2^10..2^17, every test prime, random and edge inputs:
# the driver compares NEON with portable bit for bit and fails on a mismatch.
# On an AArch64 host it runs the driver natively instead.
# Installs gcc-aarch64-linux-gnu and qemu-user (Debian/Ubuntu) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# check RUNNER...: builds and runs the driver, fails unless NEON was checked
# (the driver prints "<backend>: matches portable" for each backend it ran).
check() {
    local runner="$*" log
    echo "-- ${runner:-native}"
    log=$(CC=$CROSS_CC ARCH=aarch64 RUNNER=$runner OUT=target/c-driver-aarch64 ci/c-driver.sh) || {
        printf '%s\n' "$log"
        echo "NEON driver failed (${runner:-native})" >&2
        exit 1
    }
    printf '%s\n' "$log" | tail -n 3
    if ! printf '%s\n' "$log" | grep -qx 'neon: matches portable'; then
        echo "the NEON backend was not checked (${runner:-native})" >&2
        exit 1
    fi
}

if [ "$(uname -m)" = aarch64 ]; then
    CROSS_CC=${CC:-cc}
    check
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

check qemu-aarch64 -L "$SYSROOT"
check qemu-aarch64 -L "$SYSROOT" -cpu cortex-a72
cross=${CROSS_CC%gcc}
CC=$CROSS_CC OBJDUMP=${cross}objdump READELF=${cross}readelf ARCH=aarch64 ci/asm-landing-pads.sh
