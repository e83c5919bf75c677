#!/usr/bin/env bash
# triskel's CKKS workloads side by side with Lattigo v6.1.1, one
# core: for each workload, ROUNDS rounds that run ours
# (`triskel bench workloads --only NAME --json`, compute median of 10) and
# then Lattigo's (benches/peers/lattigo, GOMAXPROCS=1, median of 10), so
# that both see the same load. Both sides are timed by the CPU time of their
# process (TRISKEL_BENCH_CLOCK=cpu; getrusage in the Go program, which
# counts its garbage collector): on a loaded machine the Go program waits
# for a core far longer than it computes (wall 3x its CPU time at load 13).
# Prints the medians over the rounds, the ratio Lattigo / triskel, and the
# errors. Not part of ci/test.sh (it fetches Lattigo through the Go module
# proxy and takes minutes).
#
# Usage: ci/peers-lattigo.sh [ROUNDS] [NAME...]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/peers-common.sh
. ci/peers-common.sh
peers_args "$@"

export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "go is not installed" >&2; exit 1; }

cargo build --release --quiet --bin triskel
(cd benches/peers/lattigo && go build -o ../../../target/release/peers-lattigo .)
theirs=target/release/peers-lattigo

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-26s %11s %11s %8s %11s %9s %9s\n' workload "ours cpu" "lattigo cpu" ratio \
    "lat. wall" "err ours" "err lat."

for name in "${names[@]}"; do
    ours_us=() theirs_us=() theirs_cpu=() ratios=()
    for _ in $(seq "$rounds"); do
        line=$(ours "$name")
        read -r o err_o <<<"$line"
        read -r _ t tc err_t < <(GOMAXPROCS=1 "$theirs" -only "$name")
        ours_us+=("$o") theirs_us+=("$t") theirs_cpu+=("$tc")
        ratios+=("$(ratio "$tc" "$o")")
    done
    printf '%-26s %11.1f %11.1f %7.2fx %11.1f %9.2g %9.2g\n' "$name" \
        "$(printf '%s\n' "${ours_us[@]}" | median)" \
        "$(printf '%s\n' "${theirs_cpu[@]}" | median)" \
        "$(printf '%s\n' "${ratios[@]}" | median)" \
        "$(printf '%s\n' "${theirs_us[@]}" | median)" "$err_o" "$err_t"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
