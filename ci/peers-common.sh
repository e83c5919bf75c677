# Shared by ci/peers-lattigo.sh and ci/peers-python.sh (sourced from the repository root):
# their arguments, our side of each round, and the median over the rounds.
# shellcheck shell=bash

# peers_args [ROUNDS] [NAME...]: sets `rounds` (3 by default) and `names` (every CKKS
# workload that has a peer by default).
# shellcheck disable=SC2034 # rounds and names are read by the caller
peers_args() {
    rounds=${1:-3}
    shift || true
    names=("$@")
    if [ ${#names[@]} -eq 0 ]; then
        names=(ckks.mul_pipeline ckks.rotate ckks.slot_sum64 ckks.dot64 ckks.poly_x2
            ckks.dense_64x4 ckks.mul_pipeline_16384)
    fi
}

# ours NAME: prints "compute_median_us max_abs_error" of one `triskel bench workloads` run,
# one thread, timed by process CPU time; fails when the result is not verified.
ours() {
    local json
    json=$(TRISKEL_BENCH_CLOCK=cpu RAYON_NUM_THREADS=1 target/release/triskel bench workloads \
        --only "$1" --json)
    python3 -c 'import json,sys
w = json.loads(sys.argv[1])["workloads"][0]
assert w["verified"], w
print(w["median_us"]["compute"], w["max_abs_error"])' "$json"
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }
