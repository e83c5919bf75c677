//! Versioned binary serialization of parameters, keys and ciphertexts.
//!
//! Layout (little-endian):
//!
//! ```text
//! object     = "TRKB" | version: u8 (= 2) | kind: u8 | params | body
//! kind       = 1 parameters, 2 secret key, 3 public key, 4 relinearization key,
//!              5 Galois keys, 6 ciphertext
//! params     = name_len: u16 | name | n: u32 | kq: u8 | kq x bits: u8
//!              | kp: u8 | kp x bits: u8 | t: u64 | dnum: u32
//! secret     = n x i8 (coefficients in {-1, 0, 1})
//! public     = seed: 32 bytes | b (ring poly body; a comes from the seed)
//! relin      = len: u32 | ring key-switching key bytes (seed-compressed)
//! galois     = count: u32 | count x (g: u32 | len: u32 | ring key bytes),
//!              g strictly increasing (one encoding per set of keys)
//! ciphertext = level: u8 | size: u8 | noise_log2: f64 | seeded: u8
//!              | seeded ? (seed: 32 bytes | c0) : size x poly
//! ```
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

use std::collections::BTreeMap;
use std::sync::Arc;

use triskel_ring::{
    read_components, write_blob, write_components, KeySwitchKey, Reader, RlwePublicKey,
    SecretKey as RingSecret,
};

use crate::ciphertext::Ciphertext;
use crate::context::BfvContext;
use crate::error::{Error, Result};
use crate::keys::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use crate::params::BfvParameters;

const MAGIC: &[u8; 4] = b"TRKB";
/// The format version written by this build.
pub const FORMAT_VERSION: u8 = 2;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Kind {
    Params = 1,
    Secret = 2,
    Public = 3,
    Relin = 4,
    Galois = 5,
    Ciphertext = 6,
}

fn malformed<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Malformed(msg.into()))
}

impl BfvParameters {
    fn write_body(&self, out: &mut Vec<u8>) {
        let name = self.name.as_bytes();
        out.extend_from_slice(&(name.len().min(u16::MAX as usize) as u16).to_le_bytes());
        out.extend_from_slice(&name[..name.len().min(u16::MAX as usize)]);
        out.extend_from_slice(&(self.n as u32).to_le_bytes());
        for bits in [&self.q_bits, &self.p_bits] {
            out.push(bits.len() as u8);
            out.extend(bits.iter().map(|&b| b as u8));
        }
        out.extend_from_slice(&self.plain_modulus.to_le_bytes());
        out.extend_from_slice(&(self.dnum as u32).to_le_bytes());
    }

    fn read_body(r: &mut Reader<'_>) -> Result<BfvParameters> {
        let len = u16::from_le_bytes([r.u8()?, r.u8()?]) as usize;
        let name = std::str::from_utf8(r.take(len)?)
            .map_err(|_| Error::Malformed("parameter set name is not UTF-8".into()))?
            .to_string();
        let n = r.u32()? as usize;
        let read_bits = |r: &mut Reader<'_>| -> Result<Vec<u32>> {
            let k = r.u8()? as usize;
            Ok(r.take(k)?.iter().map(|&b| b as u32).collect())
        };
        let q_bits = read_bits(r)?;
        let p_bits = read_bits(r)?;
        let plain_modulus = r.u64()?;
        let dnum = r.u32()? as usize;
        Ok(BfvParameters {
            name,
            n,
            q_bits,
            p_bits,
            plain_modulus,
            dnum,
            allow_insecure: false,
        })
    }

    fn read_checked(bytes: &[u8], allow_insecure: bool) -> Result<BfvParameters> {
        let mut r = Reader::new(bytes);
        read_header(&mut r, Kind::Params)?;
        let mut params = BfvParameters::read_body(&mut r)?;
        r.finish()?;
        params.allow_insecure = allow_insecure;
        params.validate()?;
        Ok(params)
    }

    /// Versioned bytes of the parameter set.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = header(Kind::Params);
        self.write_body(&mut out);
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

fn header(kind: Kind) -> Vec<u8> {
    let mut out = Vec::new();
    triskel_ring::write_header(&mut out, MAGIC, FORMAT_VERSION, kind as u8);
    out
}

fn read_header(r: &mut Reader<'_>, kind: Kind) -> Result<()> {
    Ok(triskel_ring::read_header(
        r,
        MAGIC,
        FORMAT_VERSION,
        kind as u8,
    )?)
}

/// Header and parameter set of an object of `ctx`.
fn object(kind: Kind, ctx: &BfvContext) -> Vec<u8> {
    let mut out = header(kind);
    ctx.params().write_body(&mut out);
    out
}

/// Reads the header and checks the parameter set against `ctx`.
fn open<'a>(bytes: &'a [u8], kind: Kind, ctx: &BfvContext) -> Result<Reader<'a>> {
    let mut r = Reader::new(bytes);
    read_header(&mut r, kind)?;
    if BfvParameters::read_body(&mut r)? != *ctx.params() {
        return Err(Error::ParameterMismatch);
    }
    Ok(r)
}

impl SecretKey {
    /// Versioned bytes of the secret key (keep them secret).
    pub fn to_bytes(&self) -> zeroize::Zeroizing<Vec<u8>> {
        let mut out = zeroize::Zeroizing::new(object(Kind::Secret, &self.ctx));
        self.secret.secret().write_ternary(&mut out);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<BfvContext>) -> Result<SecretKey> {
        let mut r = open(bytes, Kind::Secret, ctx)?;
        let secret = RingSecret::read_ternary(&mut r, ctx.n())?;
        r.finish()?;
        SecretKey::from_ring(ctx, secret)
    }
}

impl PublicKey {
    /// Versioned, seed-compressed bytes (b and the seed of a).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = object(Kind::Public, &self.ctx);
        self.key.write(&mut out);
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<BfvContext>) -> Result<PublicKey> {
        let mut r = open(bytes, Kind::Public, ctx)?;
        let key = RlwePublicKey::read(&mut r, &ctx.level(ctx.max_level())?.basis)?;
        r.finish()?;
        Ok(PublicKey {
            ctx: ctx.clone(),
            key,
        })
    }
}

impl RelinKey {
    /// Versioned, seed-compressed bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = object(Kind::Relin, &self.ctx);
        write_blob(&mut out, &self.key.to_bytes());
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<BfvContext>) -> Result<RelinKey> {
        let mut r = open(bytes, Kind::Relin, ctx)?;
        let key = KeySwitchKey::from_bytes(r.blob()?, ctx.key_switch())?;
        r.finish()?;
        Ok(RelinKey {
            ctx: ctx.clone(),
            key,
        })
    }
}

impl GaloisKeys {
    /// Versioned, seed-compressed bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = object(Kind::Galois, &self.ctx);
        out.extend_from_slice(&(self.keys.len() as u32).to_le_bytes());
        for (&g, key) in &self.keys {
            out.extend_from_slice(&(g as u32).to_le_bytes());
            write_blob(&mut out, &key.to_bytes());
        }
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<BfvContext>) -> Result<GaloisKeys> {
        let mut r = open(bytes, Kind::Galois, ctx)?;
        let count = r.u32()? as usize;
        let mut keys = BTreeMap::new();
        for _ in 0..count {
            let g = r.u32()? as usize;
            let increasing = keys.last_key_value().is_none_or(|(&last, _)| g > last);
            if g % 2 == 0 || g >= 2 * ctx.n() || !increasing {
                return malformed(format!(
                    "Galois element {g} is not odd, below 2n and above the previous one"
                ));
            }
            let key = KeySwitchKey::from_bytes(r.blob()?, ctx.key_switch())?;
            keys.insert(g, key);
        }
        r.finish()?;
        Ok(GaloisKeys {
            ctx: ctx.clone(),
            keys,
        })
    }
}

impl Ciphertext {
    /// Versioned bytes; a fresh symmetric encryption stores the seed of c1
    /// instead of c1 (half the size).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = object(Kind::Ciphertext, &self.ctx);
        out.push(self.level as u8);
        out.push(self.polys.len() as u8);
        out.extend_from_slice(&self.noise_log2.to_le_bytes());
        write_components(&mut out, &self.polys, self.seed.as_ref());
        out
    }

    /// Loads [`to_bytes`](Self::to_bytes) output for `ctx`.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<BfvContext>) -> Result<Ciphertext> {
        let mut r = open(bytes, Kind::Ciphertext, ctx)?;
        let level = r.u8()? as usize;
        if level > ctx.max_level() {
            return malformed(format!(
                "level {level} above the maximum {}",
                ctx.max_level()
            ));
        }
        let size = r.u8()? as usize;
        if !(2..=3).contains(&size) {
            return malformed(format!("{size} components; 2 or 3 expected"));
        }
        let noise_log2 = f64::from_le_bytes(r.u64()?.to_le_bytes());
        if !noise_log2.is_finite() || !(-8.0..=1024.0).contains(&noise_log2) {
            return malformed("noise estimate out of range");
        }
        // A claim of less noise than a fresh encryption is not believed.
        let noise_log2 = noise_log2.max(ctx.fresh_noise_floor_log2(level)?);
        let basis = &ctx.level(level)?.basis;
        let seed_allowed = level == ctx.max_level();
        let (polys, seed) = read_components(&mut r, basis, size, seed_allowed)?;
        r.finish()?;
        Ciphertext::new(ctx, polys, level, noise_log2, seed).checked("load")
    }
}
