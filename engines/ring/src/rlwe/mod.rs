//! The RLWE layer under the BFV and CKKS engines: what both schemes share,
//! so that a scheme keeps only its encoding, its tensor and scaling, its
//! level change (rescale or modulus switching) and its noise rules.
//!
//! - [`RlweSecret`] / [`RlwePublicKey`]: the ring secret with its NTT form,
//!   public keys (b, a) = (e - a s, a) with a from a seed, symmetric and
//!   public-key encryption of a message body, the phase c0 + c1 s + ...;
//!   [`write_components`] / [`read_components`] for ciphertext bodies (c1
//!   stored as its seed when it is one).
//! - [`RlweContext`]: a scheme context's parameters, key switching and
//!   per-level tables over the prefixes of Q; a scheme's context
//!   dereferences to it.
//! - [`Scheme`]: what a scheme's context gives this layer (parameters,
//!   error type, the basis of public keys, its format's header, public-key
//!   encryption); [`Scheme::open`] reads any object's header against a
//!   context.
//! - [`PublicKey`], [`RelinKey`], [`GaloisKeys`]: the keys of a scheme,
//!   one [`Key`] generic over its context and its ring part ([`KeyBody`]:
//!   [`RlwePublicKey`], a key-switching key, a [`GaloisSet`]): generation
//!   from an [`RlweSecret`], key identities, checks against a ciphertext
//!   ([`RlweCiphertext`]), assembly from threshold protocols, and their
//!   serialized form.
//! - [`RlweCiphertext`]: the RLWE part of a scheme's ciphertext
//!   (components, level, key identity, seed of c1), which the scheme's
//!   ciphertext dereferences to; the scheme adds its noise bookkeeping.
//! - [`threshold`]: the collective key protocols set up for a scheme's
//!   context (share basis, public, relinearization and Galois key
//!   generation).
//! - [`rlwe_deref!`](crate::rlwe_deref) and
//!   [`rlwe_secret_key!`](crate::rlwe_secret_key): the `Deref` of a
//!   scheme's parameters and context to their RLWE parts, and the `Debug`
//!   and bytes of its secret key.
//! - [`rlwe_error!`](crate::rlwe_error): a scheme's error enum with the
//!   variants every RLWE scheme has, and its conversions from ring and
//!   kernel errors.
//!
//! Every object a scheme serializes is `header | body`, the header being
//! `magic: 4 bytes | version: u8 | kind: u8 | params` ([`Scheme::write_header`],
//! kinds [`ObjectKind`](crate::ObjectKind)); the bodies of keys are:
//!
//! ```text
//! id         = 16 bytes: the KeyId of the secret key
//! secret     = id | n x i8 (coefficients in {-1, 0, 1})
//! public     = id | seed: 32 bytes | b (ring poly body over the scheme's
//!              public-key basis; a comes from the seed)
//! relin      = len: u32 | ring key-switching key bytes (seed-compressed,
//!              with the id)
//! galois     = id | count: u32 | count x (g: u32 | len: u32 | ring key bytes),
//!              g strictly increasing (one encoding per set of keys), every
//!              key of the set's id
//! ```

mod ciphertext;
mod context;
mod encryption;
mod keys;
mod macros;
pub mod threshold;

pub use ciphertext::RlweCiphertext;
pub use context::{check_same_context, Contexts, RlweContext, Scheme};
pub(crate) use encryption::{at_basis, public_key_with_seed};
pub use encryption::{read_components, write_components, RlwePublicKey, RlweSecret};
pub use keys::{check_encrypted, GaloisKeys, GaloisSet, Key, KeyBody, PublicKey, RelinKey};
