//! The hand-written assembly kernels of triskel, assembled for the target by
//! this crate's build script: `x86_64/` (AVX2, AVX-512F and AVX-512 IFMA) and
//! `aarch64/` (scalar `aarch64`, `sve`, and `neon` for primes below 2^31). They implement the C ABI of `triskel-kernels`
//! (`include/triskel_kernels.h`), which registers them as backends and
//! dispatches to them at run time; use that crate, not this one.
//!
//! On targets whose assembler is not ELF/SysV (macOS, Windows) nothing is
//! assembled and the build says so: `triskel-kernels` then runs its portable
//! C backend.
#![no_std]

/// The backends assembled into this build, comma-separated (as
/// `triskel_kernels::Backend::name` spells them); empty when none.
pub const BACKENDS: &str = env!("TRISKEL_ASM_BACKENDS");
