#!/usr/bin/env bash
# triskel's CKKS workloads side by side with Lattigo v6.1.1 (issue 13), one
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

rounds=${1:-3}
shift || true
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    names=(ckks.mul_pipeline ckks.rotate ckks.slot_sum64 ckks.dot64 ckks.poly_x2
        ckks.dense_64x4 ckks.mul_pipeline_16384)
fi

export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "go is not installed" >&2; exit 1; }

cargo build --release --quiet --bin triskel
(cd benches/peers/lattigo && go build -o ../../../target/release/peers-lattigo .)
ours=target/release/triskel
theirs=target/release/peers-lattigo

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-26s %11s %11s %8s %11s %9s %9s\n' workload "ours cpu" "lattigo cpu" ratio \
    "lat. wall" "err ours" "err lat."

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

for name in "${names[@]}"; do
    ours_us=() theirs_us=() theirs_cpu=() ratios=()
    for _ in $(seq "$rounds"); do
        json=$(TRISKEL_BENCH_CLOCK=cpu RAYON_NUM_THREADS=1 "$ours" bench workloads --only "$name" --json)
        read -r o err_o < <(python3 -c 'import json,sys
w = json.loads(sys.argv[1])["workloads"][0]
assert w["verified"], w
print(w["median_us"]["compute"], w["max_abs_error"])' "$json")
        read -r _ t tc err_t < <(GOMAXPROCS=1 "$theirs" -only "$name")
        ours_us+=("$o") theirs_us+=("$t") theirs_cpu+=("$tc")
        ratios+=("$(awk -v a="$tc" -v b="$o" 'BEGIN {print a / b}')")
    done
    printf '%-26s %11.1f %11.1f %7.2fx %11.1f %9.2g %9.2g\n' "$name" \
        "$(printf '%s\n' "${ours_us[@]}" | median)" \
        "$(printf '%s\n' "${theirs_cpu[@]}" | median)" \
        "$(printf '%s\n' "${ratios[@]}" | median)" \
        "$(printf '%s\n' "${theirs_us[@]}" | median)" "$err_o" "$err_t"
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
