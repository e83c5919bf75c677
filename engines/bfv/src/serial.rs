//! Versioned binary serialization of parameters, keys and ciphertexts.
//!
//! Layout (little-endian):
//!
//! ```text
//! object     = "TRKB" | version: u8 (= 3) | kind: u8 | params | body
//! kind       = 1 parameters, 2 secret key, 3 public key, 4 relinearization key,
//!              5 Galois keys, 6 ciphertext
//! params     = name_len: u16 | name | n: u32 | kq: u8 | kq x bits: u8
//!              | kp: u8 | kp x bits: u8 | t: u64 | dnum: u32
//! id         = 16 bytes: the KeyId of the secret key (triskel_ring::KeyId)
//! secret     = id | n x i8 (coefficients in {-1, 0, 1})
//! public     = id | seed: 32 bytes | b (ring poly body; a comes from the seed)
//! relin      = len: u32 | ring key-switching key bytes (seed-compressed,
//!              with the id)
//! galois     = id | count: u32 | count x (g: u32 | len: u32 | ring key bytes),
//!              g strictly increasing (one encoding per set of keys), every
//!              key of the set's id
//! ciphertext = id | level: u8 | size: u8 | noise_log2: f64 | seeded: u8
//!              | seeded ? (seed: 32 bytes | c0) : size x poly
//! ```
//!
//! Version 3 added the identities of keys and ciphertexts: parameters of
//! version 2 still load; its keys and ciphertexts are refused with an error
//! saying that they predate key identities (generate the keys again,
//! re-encrypt). Identities are not authentication: bytes can carry any
//! identity.
//!
//! Every object repeats its parameter set; loading one into a context with
//! other parameters is [`Error::ParameterMismatch`]. Loading checks lengths,
//! ranges, levels and trailing bytes and never panics.
//!
//! Bytes are evidence, never instructions: nothing in them can waive the
//! 128-bit security check (version 1 carried an `allow_insecure` byte; version
//! 2 has none, and only [`BfvParameters::from_bytes_insecure`] accepts an
//! insecure set), and a ciphertext's noise estimate is never taken below
//! what a fresh encryption carries at its level.

use std::sync::Arc;

use triskel_ring::rlwe::Scheme;
use triskel_ring::{
    predates_key_ids, read_components, stored_version, ObjectKind as Kind, Reader, RlweSet,
    RnsBasis,
};

use crate::ciphertext::Ciphertext;
use crate::context::{BfvContext, Level};
use crate::encoding::Plaintext;
use crate::error::{Error, Result};
use crate::keys::PublicKey;
use crate::params::BfvParameters;

const MAGIC: &[u8; 4] = b"TRKB";
/// The format version written by this build.
pub const FORMAT_VERSION: u8 = 3;

/// The last version without key identities: its parameters still load.
const NO_KEY_ID_VERSION: u8 = 2;

impl BfvParameters {
    fn read_checked(bytes: &[u8], allow_insecure: bool) -> Result<BfvParameters> {
        let (r, mut params) = BfvContext::read_header(bytes, Kind::Params)?;
        r.finish()?;
        if allow_insecure {
            params.set = params.set.allow_insecure();
        }
        params.validate()?;
        Ok(params)
    }

    /// Versioned bytes of the parameter set.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        BfvContext::write_header(self, Kind::Params, &mut out);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output. The set is validated,
    /// 128-bit security included: nothing in the bytes can waive it.
    pub fn from_bytes(bytes: &[u8]) -> Result<BfvParameters> {
        BfvParameters::read_checked(bytes, false)
    }

    /// [`from_bytes`](Self::from_bytes) for the rare caller who means to
    /// accept a set below 128-bit security (tests, experiments); every other
    /// check still applies.
    pub fn from_bytes_insecure(bytes: &[u8]) -> Result<BfvParameters> {
        BfvParameters::read_checked(bytes, true)
    }
}

/// What BFV gives the RLWE layer: its format's header (module
/// documentation) and its public-key encryption.
impl Scheme for BfvContext {
    type Params = BfvParameters;
    type Error = Error;

    /// The header and the parameter set of an object of `kind`.
    fn write_header(params: &BfvParameters, kind: Kind, out: &mut Vec<u8>) {
        triskel_ring::write_header(out, MAGIC, FORMAT_VERSION, kind as u8);
        params.set.write(out, &params.plain_modulus.to_le_bytes());
    }

    /// Reads the header of an object of `kind` (this version, or version 2
    /// for parameters: module documentation) and its parameter set
    /// (unchecked, not insecure).
    fn read_header(bytes: &[u8], kind: Kind) -> Result<(Reader<'_>, BfvParameters)> {
        let mut version = FORMAT_VERSION;
        if stored_version(bytes, MAGIC) == Some(NO_KEY_ID_VERSION) {
            if kind != Kind::Params {
                return Error::malformed(predates_key_ids(&format!(
                    "BFV object of version {NO_KEY_ID_VERSION}"
                )));
            }
            version = NO_KEY_ID_VERSION;
        }
        let mut r = Reader::new(bytes);
        triskel_ring::read_header(&mut r, MAGIC, version, kind as u8)?;
        let (set, plain_modulus) = RlweSet::read(&mut r, |r| r.u64())?;
        Ok((r, BfvParameters { set, plain_modulus }))
    }

    type Level = Level;
    type Plaintext = Plaintext;
    type Ciphertext = Ciphertext;

    fn public_key_basis(&self) -> &Arc<RnsBasis> {
        self.top_basis()
    }

    const ROTATION_GENERATOR: u64 = 3;

    fn encrypt_public(pk: &PublicKey, pt: &Plaintext) -> Result<Ciphertext> {
        crate::keys::encrypt_public(pk, pt)
    }
}

impl Ciphertext {
    /// Versioned bytes; a fresh symmetric encryption stores the seed of c1
    /// instead of c1 (half the size).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_with(&self.noise_log2.to_le_bytes())
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<BfvContext>) -> Result<Ciphertext> {
        let (mut r, key_id, level, size) = ctx.open_ciphertext(bytes)?;
        let noise_log2 = r.f64()?;
        if !noise_log2.is_finite() || !(-8.0..=1024.0).contains(&noise_log2) {
            return Error::malformed("noise estimate out of range");
        }
        // A claim of less noise than a fresh encryption is not believed.
        let noise_log2 = noise_log2.max(ctx.fresh_noise_floor_log2(level)?);
        let basis = &ctx.level(level)?.basis;
        let seed_allowed = level == ctx.max_level();
        let (polys, seed) = read_components(&mut r, basis, size, seed_allowed)?;
        r.finish()?;
        Ciphertext::new(ctx, key_id, polys, level, noise_log2, seed).checked("load")
    }
}
