#!/usr/bin/env bash
# ci/fuzz.sh SECONDS [TARGET...]: fuzzes every target of fuzz/ (or the ones
# named) for SECONDS each, one after the other, starting from seeds the library
# writes. Needs the nightly toolchain; installs cargo-fuzz when missing. Prints
# executions and crashes per target and exits non-zero on any crash.
# Findings land in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

secs=${1:?usage: ci/fuzz.sh SECONDS [TARGET...]}
shift
if [ $# -gt 0 ]; then
    targets=("$@")
else
    targets=()
    for f in fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
fi

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

# Release build with debug assertions and overflow checks: an overflow is a
# crash. AddressSanitizer (it also provides the coverage hooks the `seeds`
# binary needs: with -s none it does not link).
build=(-O -a)
cargo +nightly fuzz build "${build[@]}"
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
"target/$host/release/seeds" corpus >/dev/null

# A unit slower than 10 s or a process above 2 GiB counts as a crash (hang, unbounded allocation).
# Inputs up to 8 MiB: libFuzzer's default of 1 MiB would cut the evaluation-key
# seeds (several MiB) short, and the target would never load a bundle.
libfuzzer=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=$((8 << 20)) -print_final_stats=1)
rows=()
failed=0
for t in "${targets[@]}"; do
    printf '\n== fuzz %s (%s s)\n' "$t" "$secs"
    mkdir -p "artifacts/$t" "corpus/$t"
    before=$(find "artifacts/$t" -type f | wc -l)
    log=$(mktemp)
    set +e
    cargo +nightly fuzz run "${build[@]}" "$t" "corpus/$t" -- "${libfuzzer[@]}" 2>&1 |
        tee "$log" | grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|panicked|ERROR|SUMMARY|Test unit written'
    status=${PIPESTATUS[0]}
    set -e
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    time=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    crashes=$(($(find "artifacts/$t" -type f | wc -l) - before))
    if [ "$status" != 0 ] && [ "$crashes" = 0 ]; then crashes=1; fi
    [ "$crashes" = 0 ] || failed=1
    rate=$(awk -v r="${runs:-0}" -v s="${time:-$secs}" 'BEGIN { printf "%.0f", (s > 0 ? r / s : r) }')
    rows+=("$(printf '%-26s %14s %8s %8s' "$t" "${runs:-0}" "$rate" "$crashes")")
    rm -f "$log"
done

printf '\n%-26s %14s %8s %8s\n' target executions exec/s crashes
printf '%s\n' "${rows[@]}"
exit "$failed"
