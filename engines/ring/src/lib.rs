//! triskel-ring: the polynomial ring layer shared by the BFV and CKKS engines.
//!
//! - [`RnsBasis`]: ordered NTT-friendly primes with their plans (from
//!   `triskel-kernels`, so every SIMD backend is used) and CRT constants;
//!   sub-bases, digits, concatenation.
//! - [`Poly`]: an element of R_Q = Z_Q\[X\]/(X^n + 1) in RNS form, tagged
//!   [`Representation::Coefficient`] or [`Representation::Ntt`]; arithmetic,
//!   conversions, automorphisms X -> X^g in both forms.
//! - [`sampling`]: ChaCha20 from the OS or a seed; uniform, ternary,
//!   centered binomial and discrete Gaussian (small ones as integers,
//!   reduced to every prime by [`Poly::from_signed`]).
//! - [`BaseConverter`] (fast and exact base extension Q -> P) and
//!   [`DivRound`] (round(x / D): ModDown, rescale, modulus switching).
//! - [`KeySwitchContext`] / [`KeySwitchKey`]: hybrid key switching with
//!   `dnum` digits and special primes; relinearization and Galois keys.
//! - Versioned serialization ([`Poly::to_bytes`], [`KeySwitchKey::to_bytes`])
//!   with seed compression of the uniform half of keys.
//!
//! - [`rlwe`]: the RLWE layer of the BFV and CKKS engines: secret and
//!   public keys, encryption and the phase, the context's levels, the
//!   generic public, relinearization and Galois keys with their formats,
//!   and the shared error variants ([`rlwe_error!`]).
//!
//! - [`lwe`]: LWE keys and ciphertexts modulo 2^64, sample extraction from
//!   a GLWE/RLWE ciphertext, modulus switching and LWE key switching (TFHE and
//!   engine transitions).
//!
//! - [`threshold`]: threshold RLWE (Shamir t-out-of-N and additive
//!   N-out-of-N sharing of the secret, collective public, relinearization
//!   and Galois keys, collective decryption and public-key switching with
//!   flooding sized from the ciphertext, [`Smudging`]) and threshold LWE
//!   decryption.
//!
//! Every public operation returns [`Result`]. With feature `parallel` (on by
//! default) work is spread over limbs with rayon; results do not depend on the
//! number of threads.

mod aligned;
mod basis;
mod conversion;
mod error;
mod flooding;
mod key_id;
mod keyswitch;
mod lazy;
pub mod lwe;
mod par;
mod params;
mod poly;
pub mod ring_switch;
pub mod rlwe;
pub mod sampling;
mod scratch;
mod security;
mod serialize;
pub mod threshold;

pub use aligned::{aligned_zeros, huge_page_zeros, AlignedVec, CACHE_LINE};
pub use basis::{
    allocate_primes, digit_ranges, machine_prime_bits, split_modulus_bits, RnsBasis, MAX_PRIMES,
    NARROW_PRIME_BITS,
};
pub use conversion::{BaseConverter, DivRound};
pub use error::{Error, Result};
pub use flooding::{Flood, FloodLedger, Smudging, DEFAULT_SMUDGING_SECURITY, MAX_FLOOD_LOG2};
pub use key_id::KeyId;
pub use keyswitch::{
    Addend, Decomposition, KeySwitchContext, KeySwitchKey, SecretDistribution, SecretKey,
};
pub use lazy::LazyRlwe;
pub use lwe::{CompressedLweCiphertext, LweCiphertext, LweKeySwitchKey, LweSecretKey, SwitchedLwe};
pub use par::{in_pool, several_threads, PARALLEL_MIN_VALUES};
pub use params::RlweSet;
pub use poly::{
    galois_element, galois_permutation, galois_power, power_of_two_steps, Poly, Representation,
};
pub use rlwe::{read_components, write_components, RlwePublicKey, RlweSecret};
pub use sampling::{NoiseDistribution, Prng, Seed};
pub use security::{max_log_qp_128, HE_STANDARD_128, MAX_SET_PRIMES};
pub use serialize::{
    predates_key_ids, read_galois_keys, read_header, stored_version, write_blob, write_blob_with,
    write_galois_keys, write_header, ObjectKind, Reader, FORMAT_VERSION,
};
/// The kernel layer's error, which [`Error::Kernel`] wraps.
pub use triskel_kernels::Error as KernelError;
