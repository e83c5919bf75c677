#!/usr/bin/env bash
# `triskel bench kernels --json` into DIR (default figures/) for n = 4096,
# 16384, 65536 and 50- and 60-bit primes, plus 31-bit primes on AArch64 (the
# neon backend's range), one file per run: kernels-n<N>-b<BITS>.json. Each
# report has every backend this CPU runs that takes the prime (portable for
# the ratios; on AArch64 aarch64, sve when the CPU has SVE, and at 31 bits
# neon). `triskel info` goes to info.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-figures}
mkdir -p "$out"
cargo build --quiet --release --bin triskel
triskel=target/release/triskel
"$triskel" info | tee "$out/info.txt"
widths="50 60"
if [ "$(uname -m)" = aarch64 ]; then widths="31 50 60"; fi
for n in 4096 16384 65536; do
    for bits in $widths; do
        "$triskel" bench kernels --n "$n" --bits "$bits" --json | tee "$out/kernels-n$n-b$bits.json"
        echo
    done
done
