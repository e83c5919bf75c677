#!/usr/bin/env bash
# triskel's CKKS workloads side by side with OpenFHE 1.6.1 and Microsoft SEAL 4.1,
# one core, through their PyPI wheels: `openfhe` (OpenFHE's compiled libraries) and `tenseal`
# (whose `tenseal.sealapi` is SEAL's own API). For each workload, ROUNDS rounds that run ours
# (`triskel bench workloads --only NAME --json`, compute median of 10) and then each peer
# (benches/peers/python/ckks_peers.py, median of 10 after a warm-up), so that all see the same
# load; all are timed by the CPU time of their process, as ci/peers-lattigo.sh does. Prints
# the medians over the rounds, the ratios peer / triskel and the errors; fails when a peer's
# decrypted result is wrong. Not part of ci/test.sh (it installs the wheels into a venv under
# target/, which needs a CPython 3.10: the wheels are built for it).
# Naming tfhe.gate_nand adds OpenFHE BinFHE's NAND gate (benches/peers/python/binfhe_nand.py).
#
# Usage: ci/peers-python.sh [ROUNDS] [NAME...]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/peers-common.sh
. ci/peers-common.sh
peers_args "$@"

venv=target/peers-python/venv
if [ ! -x "$venv/bin/python" ]; then
    python310=""
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.10*/bin/python3.10 \
        "$(command -v python3.10 || true)"; do
        if [ -x "$candidate" ]; then python310=$candidate && break; fi
    done
    if [ -z "$python310" ]; then
        echo "no CPython 3.10 found (neither pyenv's versions/3.10* nor python3.10 on PATH):" \
            "the openfhe and tenseal wheels are built for 3.10 only" >&2
        exit 1
    fi
    "$python310" -m venv "$venv"
fi
# Quick when already installed (pip then asks no index), and completes an interrupted install.
"$venv/bin/pip" install --quiet openfhe==1.6.1.0.22.4 tenseal==0.3.16

cargo build --release --quiet --bin triskel
# One thread each: OpenFHE parallelizes with OpenMP; SEAL runs on the calling thread; numpy,
# which tenseal imports, would start an idle OpenBLAS thread.
python=(env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$venv/bin/python")
peers=("${python[@]}" benches/peers/python/ckks_peers.py)

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for peer in openfhe seal; do
    echo "$peer: python call overhead, $("${peers[@]}" --peer "$peer" --overhead)"
done
printf '%-24s %9s %9s %9s %7s %7s %9s %9s %9s %9s %9s\n' workload "ours cpu" \
    "ofhe cpu" "seal cpu" "ofhe/o" "seal/o" "ofhe wall" "seal wall" "err ours" "err ofhe" \
    "err seal"

gate=false
for name in "${names[@]}"; do
    if [ "$name" = tfhe.gate_nand ]; then gate=true && continue; fi
    ours_cpu=() of_cpu=() of_wall=() se_cpu=() se_wall=() of_ratio=() se_ratio=()
    for _ in $(seq "$rounds"); do
        line=$(ours "$name")
        read -r o err_o <<<"$line"
        # A failing peer (wrong result, missing library) stops the script here.
        line=$("${peers[@]}" --peer openfhe --only "$name")
        read -r _ ow oc err_of <<<"$line"
        line=$("${peers[@]}" --peer seal --only "$name")
        read -r _ sw sc err_se <<<"$line"
        ours_cpu+=("$o") of_cpu+=("$oc") of_wall+=("$ow") se_cpu+=("$sc") se_wall+=("$sw")
        of_ratio+=("$(ratio "$oc" "$o")") se_ratio+=("$(ratio "$sc" "$o")")
    done
    printf '%-24s %9.1f %9.1f %9.1f %6.2fx %6.2fx %9.1f %9.1f %9.2g %9.2g %9.2g\n' "$name" \
        "$(printf '%s\n' "${ours_cpu[@]}" | median)" \
        "$(printf '%s\n' "${of_cpu[@]}" | median)" \
        "$(printf '%s\n' "${se_cpu[@]}" | median)" \
        "$(printf '%s\n' "${of_ratio[@]}" | median)" \
        "$(printf '%s\n' "${se_ratio[@]}" | median)" \
        "$(printf '%s\n' "${of_wall[@]}" | median)" \
        "$(printf '%s\n' "${se_wall[@]}" | median)" "$err_o" "$err_of" "$err_se"
done

# tfhe.gate_nand, when named: OpenFHE BinFHE's NAND gate, STD128 with GINX (CGGI)
# and STD128_LMKCDEY with LMKCDEY, against ours, by the same rounds.
if $gate; then
    printf '\n%-8s %9s %11s %11s %9s %9s %9s %9s\n' workload "ours wall" "ginx wall" \
        "lmk. wall" "ginx/o" "lmk./o" "ginx cpu" "lmk. cpu"
    ours_us=() gc=() gw=() lc=() lw=() gr=() lr=()
    for _ in $(seq "$rounds"); do
        line=$(ours tfhe.gate_nand)
        read -r o _ <<<"$line"
        line=$("${python[@]}" benches/peers/python/binfhe_nand.py |
            tr '\n' ' ')
        read -r _ w1 c1 _ _ w2 c2 _ <<<"$line"
        ours_us+=("$o") gc+=("$c1") gw+=("$w1") lc+=("$c2") lw+=("$w2")
        gr+=("$(ratio "$w1" "$o")") lr+=("$(ratio "$w2" "$o")")
    done
    printf '%-8s %9.1f %11.1f %11.1f %8.2fx %8.2fx %9.1f %9.1f\n' nand \
        "$(printf '%s\n' "${ours_us[@]}" | median)" "$(printf '%s\n' "${gw[@]}" | median)" \
        "$(printf '%s\n' "${lw[@]}" | median)" "$(printf '%s\n' "${gr[@]}" | median)" \
        "$(printf '%s\n' "${lr[@]}" | median)" "$(printf '%s\n' "${gc[@]}" | median)" \
        "$(printf '%s\n' "${lc[@]}" | median)"
    echo "(ours: triskel's tfhe.gate_nand, on TFHE_BOOLEAN_MULTI_BIT_2M128_V2;" \
        "ratios by wall time)"
fi
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
