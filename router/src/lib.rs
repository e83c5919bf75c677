//! triskel: fully homomorphic encryption on hand-written SIMD kernels.
//!
//! This crate is the public face of the project. Today it offers the kernel
//! layer ([`kernels`]: NTT and modular vector arithmetic with run-time backend
//! dispatch), the BFV engine ([`bfv`]), the CKKS engine ([`ckks`]), the TFHE
//! engine ([`tfhe`]: gates, programmable bootstrapping, radix integers),
//! attestation of results with three post-quantum signature families
//! ([`attest`]) and the measurement helpers behind `triskel bench`. The
//! router that picks
//! an engine per operation are not built yet.

pub use triskel_attest as attest;
pub use triskel_bfv as bfv;
pub use triskel_ckks as ckks;
pub use triskel_kernels as kernels;
pub use triskel_tfhe as tfhe;

pub mod measure;
pub mod transition;

/// The README's Rust examples run as doctests, so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
