#!/usr/bin/env bash
# Every test of triskel: formatting, lints, fresh bindings, the C kernel
# driver (native, and the AArch64 backends under qemu), the Rust tests
# with release optimisations (the `ci` profile of Cargo.toml: no LTO, 16 codegen
# units, so the build from scratch takes less than half the time), then the
# Python package's tests in a virtualenv of their own. Installs what it needs
# (Debian/Ubuntu packages, PyPI packages into target/py-venv) when missing.
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

# rustup's "minimal" profile has neither rustfmt nor clippy.
if command -v rustup >/dev/null && ! { cargo fmt --version && cargo clippy --version; } >/dev/null 2>&1; then
    step "rustup component add rustfmt clippy"
    rustup component add rustfmt clippy
fi

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The tfhe crate's one-off slow test: compiled and linted here, run by hand.
cargo clippy -p triskel-tfhe --features slow-noise --lib --tests --quiet -- -D warnings
# The service crate without its server: the job format alone, as the fuzz target builds it.
cargo clippy -p triskel-serve --no-default-features --lib --quiet -- -D warnings
# Its client alone, as the Python package builds it.
cargo clippy -p triskel-serve --no-default-features --features remote --lib --quiet -- -D warnings

step "committed bindings match a fresh bindgen run"
# bindgen loads libclang through clang-sys, which looks for libclang.so,
# libclang-<N>.so or libclang.so.<N> (never libclang-cpp, which base images
# ship on their own): look for exactly those, and install libclang-dev when
# none is there.
has_libclang() {
    ldconfig -p 2>/dev/null | grep -qE '[[:space:]]libclang(-[0-9.]+)?\.so(\.[0-9.]+)?[[:space:]]' ||
        compgen -G '/usr/lib/llvm-*/lib/libclang.so*' >/dev/null ||
        compgen -G '/usr/lib/llvm-*/lib/libclang-[0-9]*.so*' >/dev/null
}
if ! has_libclang; then apt_install libclang-dev; fi
bindings=kernels-c/src/bindings.rs
committed=$(mktemp)
cp "$bindings" "$committed"
cargo build --quiet --profile ci -p triskel-kernels --features regenerate-bindings
if ! cmp -s "$committed" "$bindings"; then
    diff -u "$committed" "$bindings" | head -40 || true
    cp "$committed" "$bindings"
    echo "kernels-c/src/bindings.rs is stale: run cargo build -p triskel-kernels --features regenerate-bindings and commit it" >&2
    exit 1
fi
rm -f "$committed"

# The kernel backends this CPU can run, read from /proc/cpuinfo (not from
# triskel's own detection, which the tests check against this list): every
# one of them must be exercised by the C driver and by the Rust tests.
runnable_backends() {
    echo portable
    case "$(uname -m)" in
        x86_64)
            local flags
            flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
            has() { for f; do [[ $flags == *" $f "* ]] || return 1; done; }
            if has avx512f avx512dq bmi2; then echo avx512; fi
            if has avx512f avx512dq avx512ifma bmi2; then echo avx512ifma; fi
            if has avx2 fma bmi2; then echo avx2; fi
            ;;
        aarch64)
            echo aarch64 neon
            if grep -qw sve /proc/cpuinfo; then echo sve; fi
            ;;
    esac
}
TRISKEL_EXPECT_BACKENDS=$(runnable_backends | tr '\n' ' ')
export TRISKEL_EXPECT_BACKENDS
echo "backends this CPU can run: $TRISKEL_EXPECT_BACKENDS"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    echo "Kernel backends exercised on $(uname -m): $TRISKEL_EXPECT_BACKENDS" >>"$GITHUB_STEP_SUMMARY"
fi

step "C kernel driver ($(uname -m), native)"
driver_log=$(ci/c-driver.sh) || { printf '%s\n' "$driver_log"; exit 1; }
printf '%s\n' "$driver_log" | grep -E 'matches portable|MISMATCH|^skip|passed'
for b in $TRISKEL_EXPECT_BACKENDS; do
    [ "$b" = portable ] && continue
    if ! printf '%s\n' "$driver_log" | grep -qx "$b: matches portable"; then
        echo "this CPU can run the $b backend, but the C driver did not check it" >&2
        exit 1
    fi
done

step "C kernel driver with 128-bit arithmetic in two words (as built by compilers without __int128, e.g. MSVC)"
driver_log=$(EXTRA_CFLAGS=-DTRISKEL_NO_INT128 OUT=target/c-driver-no-int128 ci/c-driver.sh) ||
    { printf '%s\n' "$driver_log"; exit 1; }
printf '%s\n' "$driver_log" | grep -E 'matches portable|MISMATCH|passed'

# Every crate packages (manifests, versions of path dependencies, file
# lists), without building them (that would take minutes more).
step "cargo package --workspace (the kernel crates built from their packages)"
if ! package_log=$(cargo package --workspace --no-verify --allow-dirty 2>&1); then
    printf '%s\n' "$package_log" >&2
    exit 1
fi
printf '%s\n' "$package_log" | grep -E '^ *Packaged' || true
# The two crates that carry C and assembly sources are also built from their
# packages (the kernels against the packaged assembly crate), so a source file
# missing from a package fails here, not for the first user.
if ! package_log=$(cargo package -p triskel-kernels-asm -p triskel-kernels --allow-dirty 2>&1); then
    printf '%s\n' "$package_log" >&2
    exit 1
fi
printf '%s\n' "$package_log" | grep -E '^ *Verifying' || true

step "landing pads and GNU property notes in the $(uname -m) assembly"
ci/asm-landing-pads.sh

step "AArch64 kernels (aarch64, sve at 128/256/512 bits, neon) under qemu-aarch64"
ci/aarch64.sh

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

step "cargo test --workspace --profile ci"
log=$(mktemp)
cargo test --workspace --profile ci 2>&1 | tee "$log"
# One closing line for the whole run (cargo prints one result line per test binary).
awk '/^test result:/ { p += $4; f += $6 } END { printf "\n%d passed, %d failed\n", p, f; exit (f > 0 || p == 0) }' "$log"
rm -f "$log"
echo "kernel backends exercised (C driver and Rust tests): $TRISKEL_EXPECT_BACKENDS"

# The Python package, built into its own virtualenv (reused when present) with
# the `ci` profile, so it reuses the library the Rust tests built.
step "python: maturin develop --profile ci, pytest python/tests"
venv=target/py-venv
if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
"$venv/bin/pip" install --quiet --upgrade maturin numpy pytest
# Ray, for the triskel.ray tests only. When its install fails, those tests
# skip and name the reason (and only then: without Ray and without this
# variable they fail).
if ! ray_log=$("$venv/bin/pip" install --quiet "ray>=2.9,<3" 2>&1); then
    TRISKEL_RAY_INSTALL_FAILED="pip install ray failed: $(printf '%s\n' "$ray_log" | tail -n 1)"
    export TRISKEL_RAY_INSTALL_FAILED
    echo "$TRISKEL_RAY_INSTALL_FAILED" >&2
fi
(cd python && VIRTUAL_ENV="$PWD/../$venv" PATH="$PWD/../$venv/bin:$PATH" maturin develop --quiet --profile ci)
TRISKEL_BIN=target/ci/triskel "$venv/bin/python" -m pytest -q python/tests

# The API fuzzer against a live service, with the binary the tests built,
# in the same virtualenv.
step "schemathesis against triskel serve on 127.0.0.1 (ci/schemathesis.sh)"
ci/schemathesis.sh target/ci/triskel
