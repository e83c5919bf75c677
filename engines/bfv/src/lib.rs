//! triskel-bfv: the BFV scheme (Brakerski, Fan-Vercauteren) for exact
//! arithmetic modulo t on encrypted integers, with SIMD batching of n values
//! per ciphertext, on the RNS ring layer of `triskel-ring`.
//!
//! ```
//! use triskel_bfv::{BfvContext, BfvParameters, Plaintext, SecretKey};
//!
//! let ctx = BfvContext::new(BfvParameters::n4096())?;
//! let sk = SecretKey::generate(&ctx)?;
//! let pk = sk.public_key()?;
//! let x = pk.encrypt(&Plaintext::from_slots(&ctx, &[1, 2, 3])?)?;
//! let y = pk.encrypt(&Plaintext::from_slots(&ctx, &[4, 5, 6])?)?;
//! let z = x.mul(&y)?.relinearize(&sk.relin_key()?)?;
//! assert_eq!(sk.decrypt(&z)?.to_slots()?[..3], [4, 10, 18]);
//! # Ok::<(), triskel_bfv::Error>(())
//! ```
//!
//! - [`BfvParameters`]: named sets (N = 4096 .. 32768, and a shallow N = 4096
//!   set for depth-0 circuits) checked against the ePrint 2024/463
//!   128-bit table; custom sets are refused below it unless allowed.
//! - [`BfvContext`]: everything precomputed from a set.
//! - [`Plaintext`]: batch encoder (2 rows of n/2 slots) and coefficient encoder.
//! - [`SecretKey`], [`PublicKey`], [`RelinKey`], [`GaloisKeys`]: encryption
//!   (public-key, and symmetric with a seed-compressed c1), decryption, and
//!   the measured invariant noise budget.
//! - [`Ciphertext`]: add, sub, negate, plaintext add/multiply, multiply
//!   (HPS) and relinearize, square, row rotations and the row swap, modulus
//!   switching; each carries a noise estimate and refuses to exhaust it.
//! - [`threshold`]: collective keys made by N parties without a dealer
//!   (public, relinearization, Galois), usable by every operation above, and
//!   exact decryption by any t of them with noise flooding sized from the
//!   ciphertext's noise estimate, and re-encryption under another public
//!   key.
//! - Key identities: every secret key has a [`triskel_ring::KeyId`] (16
//!   random bytes from its generator), carried by its public,
//!   relinearization and Galois keys and by every ciphertext under it
//!   (results carry their operands'). Decryption, the noise budget, add /
//!   sub / mul, relinearization, rotations, hoisted and tree sums,
//!   re-randomization, flooding and the biometric match refuse a value or key
//!   of another secret key with `Error::Ring(KeyMismatch)` before any work.
//!   Plaintexts (and the match's encoded templates) carry no identity. Not
//!   authentication: bytes can carry any identity. Sample extraction's LWE
//!   ciphertexts carry their ciphertext's identity, and
//!   [`SecretKey::decrypt_lwe`] (through the LWE key's phase) refuses another
//!   key's the same way.

pub mod biometric;
mod ciphertext;
mod context;
mod encoding;
mod error;
mod keys;
mod params;
mod serial;
pub mod threshold;

pub use ciphertext::Ciphertext;
pub use context::BfvContext;
pub use encoding::Plaintext;
pub use error::{Error, Result};
pub use keys::{GaloisKeys, PublicKey, RelinKey, SecretKey};
pub use params::{max_log_qp_128, BfvParameters, DEFAULT_PLAIN_MODULUS, HE_STANDARD_128};
pub use serial::FORMAT_VERSION;
