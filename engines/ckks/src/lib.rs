//! triskel-ckks: the CKKS scheme (Cheon-Kim-Kim-Song) for approximate
//! arithmetic on encrypted vectors of n/2 complex (or real) numbers, on the
//! RNS ring layer of `triskel-ring`.
//!
//! ```
//! use triskel_ckks::{CkksContext, CkksParameters, Plaintext, SecretKey};
//!
//! let ctx = CkksContext::new(CkksParameters::n8192())?;   // checked against the 128-bit table
//! let sk = SecretKey::generate(&ctx)?;
//! let (pk, rk) = (sk.public_key()?, sk.relin_key()?);
//! // Values above 1 need a declared (public) bound: here 4.
//! let (level, scale) = (ctx.max_level(), ctx.default_scale());
//! let x = pk.encrypt(&Plaintext::encode_real(&ctx, &[0.5, 1.5, -2.0], level, scale, 4.0)?)?;
//! let y = pk.encrypt(&Plaintext::encode_real(&ctx, &[2.0, 0.25, 3.0], level, scale, 4.0)?)?;
//! let z = x.mul_relin_rescale(&y, &rk)?;                   // multiply, relinearize, rescale
//! let got = sk.decrypt_real(&z)?;
//! assert!((got[0] - 1.0).abs() < 1e-6 && (got[2] + 6.0).abs() < 1e-6);
//! # Ok::<(), triskel_ckks::Error>(())
//! ```
//!
//! - [`CkksParameters`]: named sets (N = 2^13 .. 2^16) and a chain builder
//!   for a depth and precision, checked against the ePrint 2024/463
//!   128-bit table.
//! - [`Plaintext`]: the canonical-embedding encoder (special FFT), under a
//!   public bound on the values that the caller declares (default
//!   [`DEFAULT_BOUND`] = 1): ciphertexts never reveal the values' magnitude.
//! - [`SecretKey`], [`PublicKey`], [`RelinKey`], [`GaloisKeys`]:
//!   encryption (public key, and symmetric with a seed-compressed c1),
//!   decryption (IND-CPA), and decryption with noise flooding for shared
//!   decryptions (IND-CPA-D, [`Flooding`]; each key counts its floods and
//!   refuses one beyond alpha, [`SecretKey::flooded_decryptions`]) with the
//!   trial-run noise estimate [`SecretKey::noise_bound_log2`].
//! - [`threshold`]: collective keys made by N parties without a dealer
//!   and decryption by any t of them, each share flooded for a stated
//!   statistical security, with the precision left reported.
//! - [`Ciphertext`]: add, sub, negate, constants and plaintexts, multiply,
//!   relinearize, rescale and the fused pipeline, level and scale matching,
//!   rotations (with a power-of-two fallback), conjugation, hoisted rotations,
//!   slot sums. Every ciphertext carries a noise estimate (bounds on its
//!   values and error in the slots, average-case canonical-embedding
//!   heuristics): [`Ciphertext::noise_estimate_log2`],
//!   [`Ciphertext::precision_bits`], and [`Error::NoiseExhausted`] for an
//!   operation that would leave no precision.
//! - [`ChebyshevPolynomial`]: baby-step giant-step evaluation up to degree
//!   63, and ReLU / sigmoid / tanh approximations.
//! - [`LinearTransform`]: plaintext matrix x encrypted vector (diagonal
//!   method, hoisted baby steps, giant steps, zero diagonals skipped);
//!   [`RotationSum`]: the caller's own sum of rotations times plaintext
//!   vectors, with one ModUp and one ModDown (merged with the rescale).
//! - [`Bootstrapper`]: CKKS bootstrapping (ModRaise, CoeffToSlot and
//!   SlotToCoeff as merged butterfly stages, EvalMod by a cosine and double
//!   angles) with sparse-secret encapsulation, a failure probability checked
//!   to be at most 2^-128 ([`failure_probability_log2`]) and the ephemeral
//!   secret's security checked against pinned estimates
//!   ([`SPARSE_SECRET_ESTIMATES`]); [`BootstrapSet`] names the sets.
//! - Versioned, validated serialization of parameters, keys (bootstrapping
//!   keys too) and ciphertexts.

mod bootstrap;
mod ciphertext;
mod context;
mod encoder;
mod error;
mod flooding;
mod keys;
mod linear;
mod noise;
mod params;
mod plaintext;
mod polynomial;
mod serial;
pub mod threshold;

pub use bootstrap::sparse::{sparse_secret_security, SPARSE_SECRET_ESTIMATES};
pub use bootstrap::{
    failure_probability_log2, BootstrapKeys, BootstrapParameters, BootstrapSet, Bootstrapper,
    MAX_FAILURE_LOG2,
};
pub use ciphertext::Ciphertext;
pub use context::CkksContext;
pub use encoder::Complex;
pub use error::{Error, Result};
pub use flooding::{Flooding, DEFAULT_STATISTICAL_SECURITY};
pub use keys::{GaloisKeys, PublicKey, RelinKey, SecretKey};
pub use linear::{LinearTransform, RotationSum, TransformShape};
pub use noise::{error_bounds, ErrorBounds, Noise};
pub use params::CkksParameters;
pub use plaintext::{Plaintext, DEFAULT_BOUND};
pub use polynomial::{ChebyshevPolynomial, MAX_DEGREE};
pub use serial::FORMAT_VERSION;
pub use triskel_ring::{max_log_qp_128, HE_STANDARD_128};
