//! Versioned binary serialization of parameters, keys and ciphertexts.
//!
//! Layout (little-endian):
//!
//! ```text
//! object     = "TRKC" | version: u8 (= 5) | kind: u8 | params | body
//! kind       = 1 parameters, 2 secret key, 3 public key, 4 relinearization key,
//!              5 Galois keys, 6 ciphertext, 7 bootstrapping keys
//! params     = name_len: u16 | name | n: u32 | kq: u8 | kq x bits: u8
//!              | kp: u8 | kp x bits: u8 | log_scale: u8 | dnum: u32
//! id         = 16 bytes: the KeyId of the secret key (triskel_ring::KeyId)
//! secret     = id | n x i8 (coefficients in {-1, 0, 1})
//! public     = id | seed: 32 bytes | b (ring poly body modulo Q P; a comes
//!              from the seed; version 3 stored b modulo Q)
//! relin      = len: u32 | ring key-switching key bytes (seed-compressed,
//!              with the id)
//! galois     = id | count: u32 | count x (g: u32 | len: u32 | ring key bytes),
//!              g strictly increasing (one encoding per set of keys), every
//!              key of the set's id
//! bootstrap  = id | relin key blob | galois (as above) | dense-to-sparse key
//!              blob (ring key over q_0 p_0, to the ephemeral secret, whose
//!              identity it carries) | sparse-to-dense key blob (over Q P, to
//!              the id); every blob seed-compressed
//! ciphertext = id | level: u8 | size: u8 | scale: f64 | error: f64 | message: f64
//!              | seeded: u8   (message: the bound derived from the bounds
//!              the encryptor declared, never from the values; version 2
//!              stored a power of two of the values' magnitude)
//!              | seeded ? (seed: 32 bytes | c0) : size x poly
//! ```
//!
//! Version 5 added the identities of keys and ciphertexts (version 4 had
//! changed the public key to modulo Q P): parameters of versions 3 and 4
//! still load; their keys and ciphertexts are refused with an error saying
//! that they predate key identities (generate the keys again, re-encrypt).
//! Older versions are refused. Identities are not authentication: bytes
//! can carry any identity.
//!
//! Loaded bytes are evidence, never instructions: the parameter set is
//! always validated against the 128-bit table (there is no flag to waive it,
//! so a set allowed as insecure in memory does not load), must equal the
//! context's, and a ciphertext's level, size and scale must be possible for
//! it (scale in [1, Q_l / 4]); polynomials must be in NTT form and reduced.
//! A ciphertext's noise estimate must be finite (error non-negative,
//! message bound positive), and its error is raised to at least a fresh
//! public-key encryption's: bytes can never make a ciphertext look cleaner
//! than fresh. An error at or above the scale is refused (no precision
//! left), and so is message + error at or above Q_l / 2 (decryption would
//! wrap). The message bound cannot be checked further without the secret
//! key and is taken as stated.
//! Anything else is an [`Error`], never a panic.

use std::sync::Arc;

use triskel_ring::rlwe::Scheme;
use triskel_ring::{
    predates_key_ids, read_components, read_galois_keys, read_header, stored_version,
    write_galois_keys, write_header, KeyId, KeySwitchKey, ObjectKind as Kind, Reader, RlweSet,
    RnsBasis,
};

use crate::bootstrap::{encapsulation_context, BootstrapKeys};
use crate::ciphertext::Ciphertext;
use crate::context::{CkksContext, Level};
use crate::error::{Error, Result};
use crate::keys::{GaloisKeys, PublicKey, RelinKey};
use crate::noise::{encoding_error, public_key_error, Noise};
use crate::params::CkksParameters;
use crate::plaintext::{check_scale, Plaintext};

const MAGIC: &[u8; 4] = b"TRKC";
/// The format version written by this build.
pub const FORMAT_VERSION: u8 = 5;

/// The oldest version whose parameters still load (module documentation).
const OLDEST_PARAMS_VERSION: u8 = 3;

impl CkksParameters {
    /// Versioned bytes of the parameter set.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        CkksContext::write_header(self, Kind::Params, &mut out);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output; the set is validated,
    /// 128-bit security included.
    pub fn from_bytes(bytes: &[u8]) -> Result<CkksParameters> {
        let (r, params) = CkksContext::read_header(bytes, Kind::Params)?;
        r.finish()?;
        Ok(params)
    }
}

/// What CKKS gives the RLWE layer: its format's header (module
/// documentation) and its public-key encryption.
impl Scheme for CkksContext {
    type Params = CkksParameters;
    type Error = Error;

    /// The header and the parameter set of an object of `kind`.
    fn write_header(params: &CkksParameters, kind: Kind, out: &mut Vec<u8>) {
        write_header(out, MAGIC, FORMAT_VERSION, kind as u8);
        params.set.write(out, &[params.log_scale as u8]);
    }

    /// Reads the header of an object of `kind` (this version, or versions
    /// 3 and 4 for parameters: module documentation) and its parameter set,
    /// always fully checked, 128-bit security included.
    fn read_header(bytes: &[u8], kind: Kind) -> Result<(Reader<'_>, CkksParameters)> {
        let mut version = FORMAT_VERSION;
        if let Some(v) = stored_version(bytes, MAGIC)
            .filter(|v| (OLDEST_PARAMS_VERSION..FORMAT_VERSION).contains(v))
        {
            if kind != Kind::Params {
                return Error::malformed(predates_key_ids(&format!("CKKS object of version {v}")));
            }
            version = v;
        }
        let mut r = Reader::new(bytes);
        read_header(&mut r, MAGIC, version, kind as u8)?;
        let (set, log_scale) = RlweSet::read(&mut r, |r| Ok(r.u8()? as u32))?;
        let params = CkksParameters { set, log_scale };
        params.validate()?;
        Ok((r, params))
    }

    type Level = Level;
    type Plaintext = Plaintext;
    type Ciphertext = Ciphertext;

    fn public_key_basis(&self) -> &Arc<RnsBasis> {
        self.key_switch().qp()
    }

    const ROTATION_GENERATOR: u64 = 5;

    fn encrypt_public(pk: &PublicKey, pt: &Plaintext) -> Result<Ciphertext> {
        crate::keys::encrypt_public(pk, pt)
    }
}

impl BootstrapKeys {
    /// Versioned, seed-compressed bytes of all the keys (module
    /// documentation).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.relin.context().begin(Kind::Bootstrap);
        self.id.write(&mut out);
        self.relin.key().write_blob(&mut out);
        write_galois_keys(&mut out, self.galois.id(), self.galois.keys());
        self.to_sparse.write_blob(&mut out);
        self.to_dense.write_blob(&mut out);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`: every key must
    /// be for `ctx`'s bases and, but the dense-to-sparse key, of the stored
    /// identity; the dense-to-sparse key must switch to another secret.
    /// Whether the Galois keys cover a circuit's rotations is checked when
    /// it runs ([`Error::MissingKey`]).
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<CkksContext>) -> Result<BootstrapKeys> {
        let mut r = ctx.open(bytes, Kind::Bootstrap)?;
        let id = KeyId::read(&mut r)?;
        let relin = KeySwitchKey::read_blob(&mut r, ctx.key_switch())?;
        let (galois_id, galois) = read_galois_keys(&mut r, ctx.key_switch())?;
        let to_sparse = KeySwitchKey::read_blob(&mut r, &encapsulation_context(ctx)?)?;
        let to_dense = KeySwitchKey::read_blob(&mut r, ctx.key_switch())?;
        r.finish()?;
        id.check("relinearization key", relin.id())?;
        id.check("Galois keys", galois_id)?;
        id.check("sparse-to-dense key", to_dense.id())?;
        if to_sparse.id() == id {
            return Error::malformed("the dense-to-sparse key switches to the dense secret itself");
        }
        Ok(BootstrapKeys {
            id,
            relin: RelinKey::from_collective(ctx, relin)?,
            galois: GaloisKeys::from_collective(ctx, id, galois)?,
            to_sparse,
            to_dense,
        })
    }
}

impl Ciphertext {
    /// Versioned bytes; a fresh symmetric encryption stores the seed of c1
    /// instead of c1 (half the size).
    pub fn to_bytes(&self) -> Vec<u8> {
        let noise = [self.scale, self.noise.error, self.noise.message];
        self.to_bytes_with(&noise.map(f64::to_le_bytes).concat())
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`, checking the
    /// level, size and scale (module documentation).
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<CkksContext>) -> Result<Ciphertext> {
        let (mut r, key_id, level, size) = ctx.open_ciphertext(bytes)?;
        let scale = r.f64()?;
        check_scale(ctx, level, scale)
            .map_err(|e| Error::Malformed(format!("scale impossible at level {level}: {e}")))?;
        let (error, message) = (r.f64()?, r.f64()?);
        if !(error >= 0.0 && message > 0.0) {
            return Error::malformed(
                "the error bound must be non-negative, the message bound positive",
            );
        }
        let fresh = public_key_error(ctx) + encoding_error(ctx);
        let noise = Noise::new(message, error.max(fresh))
            .check(scale, ctx.level(level)?.log2_q)
            .map_err(|e| Error::Malformed(format!("noise estimate: {e}")))?;
        let basis = &ctx.level(level)?.basis;
        let (polys, seed) = read_components(&mut r, basis, size, true)?;
        r.finish()?;
        Ok(Ciphertext::new(
            ctx, key_id, polys, level, scale, noise, seed,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::SecretKey;

    #[test]
    fn bootstrap_keys_round_trip_and_refuse_tampering() {
        let ctx = CkksContext::new(CkksParameters::n8192()).unwrap();
        let sk = SecretKey::generate(&ctx).unwrap();
        let keys = BootstrapKeys::generate(&sk, &[1, -4], 32).unwrap();
        let bytes = keys.to_bytes();
        let back = BootstrapKeys::from_bytes(&bytes, &ctx).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.id(), sk.id());
        assert_eq!(back.galois_keys().elements(), keys.galois_keys().elements());
        // Truncated, extended, another kind, another set.
        assert!(BootstrapKeys::from_bytes(&bytes[..bytes.len() - 1], &ctx).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(BootstrapKeys::from_bytes(&longer, &ctx).is_err());
        assert!(BootstrapKeys::from_bytes(&keys.galois_keys().to_bytes(), &ctx).is_err());
        let other = CkksContext::new(CkksParameters::n8192_depth3()).unwrap();
        assert!(matches!(
            BootstrapKeys::from_bytes(&bytes, &other),
            Err(Error::ParameterMismatch)
        ));
        // Another identity in the header: the keys no longer match it.
        let header = CkksParameters::n8192().to_bytes().len(); // the id follows the set
        let mut forged = bytes.clone();
        forged[header] ^= 1;
        assert!(matches!(
            BootstrapKeys::from_bytes(&forged, &ctx),
            Err(Error::Ring(triskel_ring::Error::KeyMismatch { .. }))
        ));
        // An insecure set never loads, even one allowed in memory.
        let weak = CkksParameters::new("weak", 1024, &[50, 40], &[50], 40, 2).allow_insecure();
        let weak = CkksContext::new(weak).unwrap();
        let weak_keys =
            BootstrapKeys::generate(&SecretKey::generate(&weak).unwrap(), &[1], 32).unwrap();
        assert!(BootstrapKeys::from_bytes(&weak_keys.to_bytes(), &weak).is_err());
    }
}
