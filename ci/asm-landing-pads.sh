#!/usr/bin/env bash
# Checks that every assembly object of one architecture keeps a binary's
# control-flow protection: the GNU property note (x86-64: IBT and SHSTK;
# AArch64: BTI) and a landing pad (endbr64 / bti c) as the first instruction
# of every global function.
#   ci/asm-landing-pads.sh                 native x86-64 (cc, objdump)
#   CC=aarch64-linux-gnu-gcc OBJDUMP=aarch64-linux-gnu-objdump READELF=aarch64-linux-gnu-readelf \
#       ARCH=aarch64 ci/asm-landing-pads.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CC=${CC:-cc}
OBJDUMP=${OBJDUMP:-objdump}
READELF=${READELF:-readelf}
ARCH=${ARCH:-$(uname -m)}
case "$ARCH" in
    x86_64) feature='x86 feature: IBT, SHSTK' pad=endbr64 ;;
    aarch64) feature='AArch64 feature: BTI' pad='bti[[:space:]]+c' ;;
    *) echo "no landing-pad rules for $ARCH"; exit 0 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
checked=0
for src in kernels-asm/"$ARCH"/*.S; do
    obj="$out/$(basename "$src" .S).o"
    "$CC" -c -I"kernels-asm/$ARCH" "$src" -o "$obj"
    if ! "$READELF" -n "$obj" | grep -q "$feature"; then
        echo "$src: no GNU property note with '$feature'" >&2
        exit 1
    fi
    # The first instruction after each global function's label.
    globals=$("$READELF" -sW "$obj" | awk '$4 == "FUNC" && $5 == "GLOBAL" { print $8 }')
    "$OBJDUMP" -d --no-show-raw-insn "$obj" >"$obj.dis"
    for f in $globals; do
        first=$(awk -v f="<$f>:" '$2 == f { getline; print; exit }' "$obj.dis")
        if ! grep -Eq "$pad" <<<"$first"; then
            echo "$src: $f starts with '$first', not a landing pad" >&2
            exit 1
        fi
        checked=$((checked + 1))
    done
done
echo "$ARCH assembly: $checked entry points start with a landing pad; every object carries '$feature'"
