#!/usr/bin/env bash
# Runs every fuzz target for a while (default 60 s each; FUZZ_SECONDS to change).
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${FUZZ_SECONDS:-60}"
for target in $(cargo +nightly fuzz list); do
    echo "== fuzz $target for ${seconds}s"
    cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=4096
done
