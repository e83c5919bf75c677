//! triskel-tfhe: the TFHE engine.
//!
//! Programmable bootstrapping over an NTT-friendly prime with the kernels of
//! `triskel-kernels`; LWE pieces (ciphertexts, sample extraction, modulus and
//! key switching) come from `triskel-ring`. See the crate README for the
//! design and the noise analysis behind every parameter set.

pub mod argmax;
mod boolean;
mod compressed;
mod error;
mod glwe;
mod integer;
mod keys;
pub mod lookup;
mod multibit;
pub mod params;
mod serialize;
mod shortint;

pub use boolean::{BoolCiphertext, Gate};
pub use compressed::{CompressedBoolCiphertext, CompressedCiphertext, CompressedRadixCiphertext};
pub use error::{Error, Result};
pub use glwe::{
    CompressedGgswCiphertext, CompressedGlweCiphertext, Decomposer, GgswCiphertext, GlweCiphertext,
    GlweSecretKey,
};
pub use integer::{Bitwise, Comparison, RadixCiphertext};
pub use keys::{ClientKey, ServerKey, TestVector};
pub use params::{Encoding, NoiseAnalysis, TfheParameters};
pub use serialize::CompressedServerKey;
pub use serialize::FORMAT_VERSION;
pub use shortint::{Ciphertext, LookupTable, TwoLookupTables};

/// The README's Rust example runs as a doctest, so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
