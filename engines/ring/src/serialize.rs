//! Versioned binary serialization of polynomials and key-switching keys.
//!
//! Layout (little-endian):
//!
//! ```text
//! header  = "TRKR" | version: u8 (= 2) | kind: u8 (1 = polynomial, 2 = key-switching key)
//! poly    = n: u32 | representation: u8 (0 = coefficient, 1 = NTT) | k: u32
//!           | primes: k x u64 | residues: k x n x u64 (limb-major)
//! key     = id: 16 bytes (the target secret's KeyId) | digits: u32 | seed: 32 bytes
//!           | digits x poly (the b_j; the a_j come from the seed)
//! key with stored halves (kind 3) = id: 16 bytes | digits: u32
//!           | digits x (poly b_j | poly a_j)
//! ```
//!
//! Kind 3 holds a key whose a_j no seed yields (the threshold
//! relinearization key); both kinds load as a [`KeySwitchKey`]. The shares
//! of the threshold protocols have kinds of their own
//! ([`crate::threshold`]).
//!
//! Version 2 added the key's identity: a version-1 polynomial still loads,
//! a version-1 key is refused with an error saying that it predates key
//! identities (generate it again).
//!
//! Loading checks the header, that the basis is the expected one, every residue
//! is reduced, and no byte is left over; anything else is an [`Error`], never
//! a panic.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::basis::RnsBasis;
use crate::error::{Error, Result};
use crate::key_id::KeyId;
use crate::keyswitch::{KeySwitchContext, KeySwitchKey, SecretKey};
use crate::poly::{Poly, Representation};
use crate::sampling::Seed;

const MAGIC: &[u8; 4] = b"TRKR";
/// The serialization format version written by this build.
pub const FORMAT_VERSION: u8 = 2;
/// The last version without key identities (module documentation).
const NO_KEY_ID_VERSION: u8 = 1;
const KIND_POLY: u8 = 1;
const KIND_KEY: u8 = 2;
const KIND_KEY_STORED: u8 = 3;

fn malformed<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Malformed(msg.into()))
}

/// A cursor over bytes being loaded; every read is bounds-checked.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// The next `len` bytes.
    pub fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        if self.bytes.len() < len {
            return malformed(format!(
                "truncated: {len} bytes needed, {} left",
                self.bytes.len()
            ));
        }
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(head)
    }

    /// Next byte.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// Next little-endian u32.
    pub fn u32(&mut self) -> Result<u32> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b))
    }

    /// Next little-endian u64.
    pub fn u64(&mut self) -> Result<u64> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }

    /// Next little-endian f64.
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    /// Next 32-byte seed.
    pub fn seed(&mut self) -> Result<Seed> {
        let mut seed = [0u8; 32];
        seed.copy_from_slice(self.take(32)?);
        Ok(seed)
    }

    /// An error unless every byte was read.
    pub fn finish(&self) -> Result<()> {
        if !self.bytes.is_empty() {
            return malformed(format!("{} trailing bytes", self.bytes.len()));
        }
        Ok(())
    }
}

pub(crate) fn write_ring_header(out: &mut Vec<u8>, kind: u8) {
    write_header(out, MAGIC, FORMAT_VERSION, kind);
}

/// Reads the header of this version, or of version 1 for a polynomial
/// (whose layout did not change).
pub(crate) fn read_ring_header(r: &mut Reader<'_>, kind: u8) -> Result<()> {
    let old = stored_version(r.bytes, MAGIC) == Some(NO_KEY_ID_VERSION);
    if old && kind == KIND_KEY {
        return malformed(predates_key_ids("key-switching key"));
    }
    if old && kind != KIND_POLY {
        return Err(Error::UnsupportedVersion(NO_KEY_ID_VERSION));
    }
    let version = if old {
        NO_KEY_ID_VERSION
    } else {
        FORMAT_VERSION
    };
    read_header(r, MAGIC, version, kind)
}

/// The version byte of an object of format `magic` (None when `bytes` do
/// not start with the magic): lets a loader accept or refuse objects of an
/// older version by kind.
pub fn stored_version(bytes: &[u8], magic: &[u8; 4]) -> Option<u8> {
    match bytes.get(..5) {
        Some(head) if head[..4] == magic[..] => Some(head[4]),
        _ => None,
    }
}

/// The message refusing `what` stored by a format version older than key
/// identities.
pub fn predates_key_ids(what: &str) -> String {
    format!(
        "{what} of a format version that predates key identities: \
         generate the key again or re-encrypt the value"
    )
}

/// Appends an object header: a 4-byte magic naming the format (one per
/// crate), its version and the object's kind. Shared by the engines' formats.
pub fn write_header(out: &mut Vec<u8>, magic: &[u8; 4], version: u8, kind: u8) {
    out.extend_from_slice(magic);
    out.push(version);
    out.push(kind);
}

/// Reads a header of [`write_header`], which must match exactly.
pub fn read_header(r: &mut Reader<'_>, magic: &[u8; 4], version: u8, kind: u8) -> Result<()> {
    let got = r.take(4)?;
    if got != magic {
        return malformed(format!(
            "bad magic {:?}: not {} data",
            String::from_utf8_lossy(got),
            String::from_utf8_lossy(magic)
        ));
    }
    let v = r.u8()?;
    if v != version {
        return Err(Error::UnsupportedVersion(v));
    }
    let got = r.u8()?;
    if got != kind {
        return malformed(format!("object kind {got} found, {kind} expected"));
    }
    Ok(())
}

/// The objects of an RLWE engine's format (BFV, CKKS): the kind byte of
/// their header.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum ObjectKind {
    /// A parameter set.
    Params = 1,
    /// A secret key.
    Secret = 2,
    /// A public key.
    Public = 3,
    /// A relinearization key.
    Relin = 4,
    /// A set of Galois keys.
    Galois = 5,
    /// A ciphertext.
    Ciphertext = 6,
    /// A set of bootstrapping keys (CKKS).
    Bootstrap = 7,
}

/// Appends a u32 length and the bytes (an embedded object).
pub fn write_blob(out: &mut Vec<u8>, blob: &[u8]) {
    write_blob_with(out, |out| out.extend_from_slice(blob));
}

/// Appends `words` as little-endian bytes.
pub(crate) fn write_words(out: &mut Vec<u8>, words: &[u64]) {
    #[cfg(target_endian = "little")]
    out.extend_from_slice(bytemuck::cast_slice(words));
    #[cfg(not(target_endian = "little"))]
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// Appends the blob that `write` appends, in place (no copy of it): its
/// length is filled in afterwards.
pub fn write_blob_with(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    write(out);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

impl Reader<'_> {
    /// A blob of [`write_blob`].
    pub fn blob(&mut self) -> Result<&[u8]> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

impl SecretKey {
    /// Appends the identity (16 bytes) and the coefficients as one signed
    /// byte each (a ternary secret).
    pub fn write_ternary(&self, out: &mut Vec<u8>) {
        self.id().write(out);
        out.extend(self.coeffs().iter().map(|&c| c as i8 as u8));
    }

    /// Reads the identity and n coefficients of
    /// [`write_ternary`](Self::write_ternary); each must be -1, 0 or 1.
    pub fn read_ternary(r: &mut Reader<'_>, n: usize) -> Result<SecretKey> {
        let id = KeyId::read(r)?;
        let raw = r.take(n)?;
        if let Some(&b) = raw.iter().find(|&&b| !(-1..=1).contains(&(b as i8))) {
            return malformed(format!("secret coefficient {} is not ternary", b as i8));
        }
        // Checked first, then collected at its exact size: no reallocation
        // leaves a copy of the key behind.
        SecretKey::from_coeffs(raw.iter().map(|&b| b as i8 as i64).collect(), id)
    }
}

impl Poly {
    /// Appends the `poly` body of the module documentation (no header), for
    /// embedding in an engine's own formats.
    pub fn write_body(&self, out: &mut Vec<u8>) {
        let b = self.basis();
        out.extend_from_slice(&(b.n() as u32).to_le_bytes());
        out.push(match self.representation() {
            Representation::Coefficient => 0,
            Representation::Ntt => 1,
        });
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        for q in b.primes() {
            out.extend_from_slice(&q.to_le_bytes());
        }
        write_words(out, self.data());
    }

    /// Reads a `poly` body that must be in exactly `basis`.
    pub fn read_body(r: &mut Reader<'_>, basis: &Arc<RnsBasis>) -> Result<Poly> {
        let n = r.u32()? as usize;
        if n != basis.n() {
            return malformed(format!("ring degree {n}, expected {}", basis.n()));
        }
        let repr = match r.u8()? {
            0 => Representation::Coefficient,
            1 => Representation::Ntt,
            t => return malformed(format!("unknown representation tag {t}")),
        };
        let k = r.u32()? as usize;
        if k != basis.len() {
            return malformed(format!("{k} primes, expected {}", basis.len()));
        }
        for (i, q) in basis.primes().into_iter().enumerate() {
            let got = r.u64()?;
            if got != q {
                return malformed(format!("prime {i} is {got}, expected {q}"));
            }
        }
        let raw = r.take(k * n * 8)?;
        // Decoded in place, one limb at a time, its largest value checked
        // after the limb (a branch-free pass).
        let mut p = Poly::for_overwrite(basis, repr);
        for (i, (limb, bytes)) in p
            .data_mut()
            .chunks_exact_mut(n)
            .zip(raw.chunks_exact(8 * n))
            .enumerate()
        {
            let q = basis.modulus(i).value();
            let mut largest = 0;
            for (v, c) in limb.iter_mut().zip(bytes.chunks_exact(8)) {
                *v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                largest = largest.max(*v);
            }
            if largest >= q {
                return malformed(format!(
                    "value {largest} of limb {i} is not reduced modulo {q}"
                ));
            }
        }
        Ok(p)
    }

    /// [`read_body`](Self::read_body) of a polynomial that must be in NTT
    /// form (ciphertext components and public keys).
    pub fn read_ntt_body(r: &mut Reader<'_>, basis: &Arc<RnsBasis>) -> Result<Poly> {
        let p = Poly::read_body(r, basis)?;
        if p.representation() != Representation::Ntt {
            return malformed("polynomial must be in NTT form");
        }
        Ok(p)
    }

    /// Versioned bytes of the polynomial.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_ring_header(&mut out, KIND_POLY);
        self.write_body(&mut out);
        out
    }

    /// Loads [`Poly::to_bytes`] output, which must be in exactly `basis`.
    pub fn from_bytes(bytes: &[u8], basis: &Arc<RnsBasis>) -> Result<Poly> {
        let mut r = Reader::new(bytes);
        read_ring_header(&mut r, KIND_POLY)?;
        let p = Poly::read_body(&mut r, basis)?;
        r.finish()?;
        Ok(p)
    }
}

impl KeySwitchKey {
    /// Versioned bytes: the identity, the b_j and the seed of the a_j
    /// (kind 2), or the b_j and a_j of a key without a seed (kind 3).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    /// Appends [`to_bytes`](Self::to_bytes) output.
    fn write(&self, out: &mut Vec<u8>) {
        write_ring_header(
            out,
            if self.seed.is_some() {
                KIND_KEY
            } else {
                KIND_KEY_STORED
            },
        );
        self.id.write(out);
        out.extend_from_slice(&(self.b.len() as u32).to_le_bytes());
        match &self.seed {
            Some(seed) => {
                out.extend_from_slice(seed);
                for b in &self.b {
                    b.write_body(out);
                }
            }
            None => {
                for (b, a) in self.b.iter().zip(self.uniform()) {
                    b.write_body(out);
                    a.write_body(out);
                }
            }
        }
    }

    /// Loads [`KeySwitchKey::to_bytes`] output for `ctx` (its basis Q || P and
    /// digit count must match), the a_j regenerated from the seed when the key is first used.
    pub fn from_bytes(bytes: &[u8], ctx: &KeySwitchContext) -> Result<KeySwitchKey> {
        let mut r = Reader::new(bytes);
        let stored = bytes.get(5) == Some(&KIND_KEY_STORED);
        read_ring_header(&mut r, if stored { KIND_KEY_STORED } else { KIND_KEY })?;
        let id = KeyId::read(&mut r)?;
        let digits = r.u32()? as usize;
        if digits != ctx.digits().len() {
            return malformed(format!(
                "{digits} digits, the context has {}",
                ctx.digits().len()
            ));
        }
        let key = if stored {
            let (mut b, mut a) = (Vec::with_capacity(digits), Vec::with_capacity(digits));
            for _ in 0..digits {
                b.push(Poly::read_ntt_body(&mut r, ctx.qp())?);
                a.push(Poly::read_ntt_body(&mut r, ctx.qp())?);
            }
            KeySwitchKey::stored(id, b, a)
        } else {
            let seed = r.seed()?;
            let b = (0..digits)
                .map(|_| Poly::read_ntt_body(&mut r, ctx.qp()))
                .collect::<Result<Vec<_>>>()?;
            KeySwitchKey::seeded(id, seed, b)
        };
        r.finish()?;
        Ok(key)
    }
}

impl KeySwitchKey {
    /// Appends the key's bytes as a blob ([`write_blob`]), for embedding in
    /// an engine's objects.
    pub fn write_blob(&self, out: &mut Vec<u8>) {
        write_blob_with(out, |out| self.write(out));
    }

    /// Reads a blob of [`write_blob`](Self::write_blob) for `ctx`.
    pub fn read_blob(r: &mut Reader<'_>, ctx: &KeySwitchContext) -> Result<KeySwitchKey> {
        KeySwitchKey::from_bytes(r.blob()?, ctx)
    }
}

/// Appends Galois keys of the secret key `id`: `id: 16 bytes | count: u32
/// | count x (g: u32 | key blob)`, g increasing. The set's identity is
/// stored even when it holds no key, and every key carries it.
pub fn write_galois_keys(out: &mut Vec<u8>, id: KeyId, keys: &BTreeMap<usize, KeySwitchKey>) {
    id.write(out);
    out.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    for (&g, key) in keys {
        out.extend_from_slice(&(g as u32).to_le_bytes());
        key.write_blob(out);
    }
}

/// Reads [`write_galois_keys`] output for `ctx`: the set's identity and its
/// keys, every g odd, in 3..2n and above the previous one, so that a set of
/// keys has one encoding, and every key of the set's identity.
pub fn read_galois_keys(
    r: &mut Reader<'_>,
    ctx: &KeySwitchContext,
) -> Result<(KeyId, BTreeMap<usize, KeySwitchKey>)> {
    let id = KeyId::read(r)?;
    let count = r.u32()? as usize;
    let two_n = 2 * ctx.q().n();
    let mut keys = BTreeMap::new();
    for _ in 0..count {
        let g = r.u32()? as usize;
        let increasing = keys.last_key_value().is_none_or(|(&last, _)| g > last);
        if g.is_multiple_of(2) || !(3..two_n).contains(&g) || !increasing {
            return malformed(format!(
                "Galois element {g} is not odd, in 3..{two_n} and above the previous one"
            ));
        }
        let key = KeySwitchKey::read_blob(r, ctx)?;
        if key.id != id {
            return malformed(format!(
                "Galois key for element {g} belongs to secret key {}, the set to {id}",
                key.id
            ));
        }
        keys.insert(g, key);
    }
    Ok((id, keys))
}
