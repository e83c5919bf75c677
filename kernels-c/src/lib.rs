//! triskel-kernels: the number-theoretic transform (NTT) and modular vector
//! arithmetic that every triskel engine stands on.
//!
//! The kernels are written once per backend behind one C ABI
//! (`include/triskel_kernels.h`): a portable C reference, hand-written
//! AVX-512 / AVX-512 IFMA assembly on x86-64 and scalar, SVE and NEON
//! assembly on AArch64.
//! Every backend produces bit-identical results; this crate picks the best
//! one the CPU can run for each modulus ([`select_backend`]) and wraps the
//! kernels in a safe API:
//!
//! - [`Modulus`]: a checked prime q < 2^62 bound to the backend chosen for it;
//! - [`NttPlan`]: the negacyclic NTT of size n over Z_q\[X\]/(X^n + 1), in place;
//! - element-wise functions ([`add`], [`mul`], [`mul_acc`], ...) on slices of
//!   residues in [0, q);
//! - the key-switching loops: the lazy dot product [`dot`], RNS
//!   [`BaseConversion`], and the automorphisms [`automorphism_coeff`] and
//!   [`automorphism_ntt`];
//! - [`ntt_primes`]: a generator of NTT-friendly primes.
//!
//! Every function that takes user input returns [`Result`]; wrong lengths,
//! non-prime or NTT-unfriendly moduli are errors, never panics.
//!
//! The environment variable `TRISKEL_KERNELS=<portable|avx512|avx512ifma|aarch64|sve|neon>`
//! forces one backend for every modulus (an error if the CPU cannot run it).

#[rustfmt::skip]
// The assembly backends are assembled by this dependency; naming it links
// its native library, whose symbols the backend tables in C refer to.
use triskel_kernels_asm as _;

mod backend;
mod bindings;
mod cpu;
mod error;
mod keyswitch;
mod modulus;
mod ntt;
mod primes;
mod vector;

pub use backend::{available_backends, forced_backend, select_backend, Backend, OPS};
pub use cpu::{cpu_features, cpu_model};
pub use error::{Error, Result};
pub use keyswitch::{
    automorphism_coeff, automorphism_ntt, dot, BaseConversion, GaloisPermutation, MAX_TERMS,
};
pub use modulus::Modulus;
pub use ntt::NttPlan;
pub use primes::{is_prime, ntt_primes, MAX_PRIMES};
pub use vector::{
    add, add_assign, mul, mul_acc, mul_assign, mul_scalar, mul_scalar_assign, neg, neg_assign, sub,
    sub_assign, sub_mul_scalar_add_assign,
};

/// Smallest supported NTT size (2^10).
pub const MIN_NTT_SIZE: usize = 1 << bindings::TRISKEL_LOG_N_MIN;
/// Largest supported NTT size (2^17).
pub const MAX_NTT_SIZE: usize = 1 << bindings::TRISKEL_LOG_N_MAX;
/// Every modulus must be below 2^`MAX_MODULUS_BITS`.
pub const MAX_MODULUS_BITS: u32 = bindings::TRISKEL_MAX_MODULUS_BITS;
