#!/usr/bin/env bash
# Every test of triskel: formatting, lints, fresh bindings, the C kernel
# driver (native, and NEON under qemu when ci/neon.sh exists), the Rust tests
# in release mode. Installs what it needs (Debian/Ubuntu packages) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

# apt_install PKG...: installs Debian packages, as root or through sudo.
apt_install() {
    local sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    if [ -z "${APT_UPDATED:-}" ]; then
        $sudo apt-get update -qq
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "committed bindings match a fresh bindgen run"
if ! ldconfig -p 2>/dev/null | grep -q libclang; then apt_install libclang-dev; fi
bindings=kernels-c/src/bindings.rs
committed=$(mktemp)
cp "$bindings" "$committed"
cargo build --quiet --release -p triskel-kernels --features regenerate-bindings
if ! cmp -s "$committed" "$bindings"; then
    diff -u "$committed" "$bindings" | head -40 || true
    cp "$committed" "$bindings"
    echo "kernels-c/src/bindings.rs is stale: run cargo build -p triskel-kernels --features regenerate-bindings and commit it" >&2
    exit 1
fi
rm -f "$committed"

step "C kernel driver ($(uname -m), native)"
ci/c-driver.sh

if [ -x ci/neon.sh ]; then
    step "NEON kernels under qemu-aarch64"
    ci/neon.sh
fi

# The workflow files, when actionlint is installed (on PATH or by go install).
actionlint=$(command -v actionlint || true)
if [ -z "$actionlint" ] && command -v go >/dev/null && [ -x "$(go env GOPATH)/bin/actionlint" ]; then
    actionlint="$(go env GOPATH)/bin/actionlint"
fi
if [ -n "$actionlint" ]; then
    step "actionlint .github/workflows"
    "$actionlint" .github/workflows/*.yml
fi

if command -v rustup >/dev/null && rustup toolchain list | grep -q "^nightly"; then
    step "fuzzing, 5 s per target (ci/fuzz.sh)"
    ci/fuzz.sh 5
else
    step "fuzzing skipped: no nightly toolchain (rustup toolchain install nightly)"
fi

step "cargo test --workspace --release"
log=$(mktemp)
cargo test --workspace --release 2>&1 | tee "$log"
# One closing line for the whole run (cargo prints one result line per test binary).
awk '/^test result:/ { p += $4; f += $6 } END { printf "\n%d passed, %d failed\n", p, f; exit (f > 0 || p == 0) }' "$log"
rm -f "$log"
