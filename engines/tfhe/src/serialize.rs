//! Versioned binary format of keys and ciphertexts.
//!
//! ```text
//! header = "TRKT" | version: u8 (= 2) | kind: u8 | name length: u8 | parameter set name
//!          | key identity: 16 bytes (the client key's, `triskel_ring::KeyId`)
//! client = small key: n bytes (0/1) | big key: k N bytes (0/1)
//! server = seed: 32 bytes | bodies: G (k+1) l N x u64 (NTT form, < q) | LWE key-switching key
//!          (kind 2: G = n GGSWs; kind 6, multi-bit sets: G = 3 n / 2, three per pair of bits)
//! block  = degree: u64 | noise level: u64 | LWE ciphertext (k N + 1 words)
//! bool   = LWE ciphertext
//! radix  = bits: u8 | block count: u8 | count x (block without its header)
//! glwe key   (kind 7) = shape | k N bytes (0/1): S_1..S_k's coefficients
//! glwe       (kind 8) = shape | (k + 1) N x u64 (< q): A_1..A_k, B, coefficient form
//! ggsw       (kind 9) = shape | base_log: u32 | levels: u32
//!                       | (k + 1) l rows x (k + 1) N x u64 (< q), NTT form
//! shape      = k: u32 | N: u32
//! compressed block (kind 10) = seed: 32 bytes | degree: u64 | noise level: u64 | body: u64
//! compressed bool  (kind 11) = seed: 32 bytes | body: u64
//! compressed radix (kind 12) = bits: u8 | block count: u8 | seed: 32 bytes
//!                              | count x (degree: u64 | noise level: u64 | body: u64)
//! compressed glwe  (kind 13) = shape | seed: 32 bytes | N x u64 (< q): B, coefficient form
//! compressed ggsw  (kind 14) = shape | base_log: u32 | levels: u32 | seed: 32 bytes
//!                              | (k + 1) l rows x N x u64 (< q): the bodies, NTT form
//! ```
//!
//! A compressed kind's masks (k N words each) are regenerated from its seed:
//! the ChaCha20 stream 0 of the seed for a block or a boolean, stream i for
//! block i of an integer. Its degree, noise level, width and block count are
//! checked as for the uncompressed kind. A compressed GLWE's mask is stream 0
//! of its seed, a compressed GGSW row i's stream i (k N residues below q in
//! the NTT domain, as the bootstrapping key's).
//!
//! Every object carries the identity of the client (or GLWE) key it is, or
//! is under, in its header; a loaded value carries it and keys of another
//! identity refuse it. Version 1 had no identities: its bytes are refused
//! with an error saying so (generate the keys and encrypt the values again).
//!
//! Parameters are found by name among the named sets and checked, never taken
//! from the bytes (the name of a superseded set is refused as
//! `Error::Superseded`, naming it and its replacement); the bootstrapping key's masks are regenerated from the seed.
//! Loading checks every length and range (key bits, residues < q, degree,
//! noise level at least a fresh encryption's; a radix integer's width, its
//! block count against that width and clean blocks) and rejects trailing bytes.
//! A value is written under its own set's name and loaded only as the set
//! the caller names; the loaded value carries that name, so keys of another
//! set refuse it as they refuse any value of another set.
//!
//! The GLWE kinds carry the set the object was made for (its k, N, q and,
//! for a GGSW, the bootstrapping decomposition, all checked equal to the
//! set's before anything is allocated). A GGSW is stored as it is kept: its
//! rows (row (r, j) at r l + j) in the NTT domain of the set's prime, in the
//! kernels' fixed (bit-reversed) order. The NTT is a bijection of `Z_q^N`, so
//! every vector of residues below q is the transform of one polynomial:
//! checking the range is all a loaded GGSW needs. Kinds 8 and 9 store the
//! masks whole; their compressed forms are kinds 13 and 14.

use std::sync::Arc;

use triskel_ring::{
    CompressedLweCiphertext, KeyId, LweCiphertext, LweKeySwitchKey, LweSecretKey, Reader, Seed,
};
use zeroize::Zeroizing;

use crate::boolean::BoolCiphertext;
use crate::compressed::{
    CompressedBoolCiphertext, CompressedCiphertext, CompressedRadixCiphertext,
};
use crate::error::{Error, Result};
use crate::glwe::{
    CompressedGgswCiphertext, CompressedGlweCiphertext, GgswCiphertext, GlweCiphertext,
    GlweContext, GlweSecretKey,
};
use crate::integer::{block_shape, check_width, RadixCiphertext};
use crate::keys::{context, ClientKey, Owner, ServerKey};
use crate::params::TfheParameters;
use crate::shortint::{moduli, Ciphertext};

const MAGIC: &[u8; 4] = b"TRKT";
/// The format version written by this build.
pub const FORMAT_VERSION: u8 = 2;
/// The last version without key identities (refused with a message).
const VERSION_BEFORE_KEY_IDS: u8 = 1;
const KIND_CLIENT: u8 = 1;
const KIND_SERVER: u8 = 2;
const KIND_BLOCK: u8 = 3;
const KIND_BOOL: u8 = 4;
const KIND_RADIX: u8 = 5;
const KIND_SERVER_MULTI_BIT: u8 = 6;
const KIND_GLWE_KEY: u8 = 7;
const KIND_GLWE: u8 = 8;
const KIND_GGSW: u8 = 9;
const KIND_COMPRESSED_BLOCK: u8 = 10;
const KIND_COMPRESSED_BOOL: u8 = 11;
const KIND_COMPRESSED_RADIX: u8 = 12;
const KIND_COMPRESSED_GLWE: u8 = 13;
const KIND_COMPRESSED_GGSW: u8 = 14;

/// The kind byte of a server key: multi-bit keys have their own.
fn server_kind(params: &TfheParameters) -> u8 {
    if params.grouping == 2 {
        KIND_SERVER_MULTI_BIT
    } else {
        KIND_SERVER
    }
}

fn malformed<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Malformed(msg.into()))
}

/// Bytes of the header of a set named `name`.
fn header_len(name: &str) -> usize {
    7 + name.len() + KeyId::LEN
}

fn write_header(out: &mut Vec<u8>, kind: u8, set_name: &str, key: KeyId) {
    out.extend_from_slice(MAGIC);
    out.push(FORMAT_VERSION);
    out.push(kind);
    out.push(set_name.len() as u8);
    out.extend_from_slice(set_name.as_bytes());
    key.write(out);
}

/// Reads the header; `kind` gives the kind byte expected of the named set.
/// Returns the set and the key identity.
fn read_header(
    r: &mut Reader<'_>,
    kind: impl Fn(&TfheParameters) -> u8,
) -> Result<(TfheParameters, KeyId)> {
    if r.take(4)? != MAGIC {
        return malformed("bad magic: not triskel TFHE data");
    }
    let version = r.u8()?;
    if version == VERSION_BEFORE_KEY_IDS {
        return malformed(
            "TFHE data of format version 1 predates key identities: generate the keys \
             again and encrypt the values again under them",
        );
    }
    if version != FORMAT_VERSION {
        return Err(Error::UnsupportedVersion(version));
    }
    let got = r.u8()?;
    let len = r.u8()? as usize;
    let name = std::str::from_utf8(r.take(len)?).or_else(|_| malformed("parameter name"))?;
    // A superseded set's bytes keep their typed error, naming the set.
    let params = TfheParameters::by_name(name).map_err(|e| match e {
        e @ Error::Superseded { .. } => e,
        e => Error::Malformed(e.to_string()),
    })?;
    let want = kind(&params);
    if got != want {
        return malformed(format!(
            "object kind {got} found, {want} expected for {}",
            params.name
        ));
    }
    params.check()?;
    Ok((params, KeyId::read(r)?))
}

/// Reads the header of a value of the set `expected`: the set and key
/// identity the loaded value carries.
fn read_value_header(r: &mut Reader<'_>, kind: u8, expected: &TfheParameters) -> Result<Owner> {
    let (params, key) = read_header(r, |_| kind)?;
    expect_params(&params, expected)?;
    Ok(Owner {
        set: expected.name,
        key,
    })
}

fn expect_params(params: &TfheParameters, expected: &TfheParameters) -> Result<()> {
    if params != expected {
        return malformed(format!(
            "data for {}, expected {}",
            params.name, expected.name
        ));
    }
    Ok(())
}

fn read_bits(r: &mut Reader<'_>, n: usize) -> Result<Vec<i64>> {
    let raw = r.take(n)?;
    if raw.iter().any(|&b| b > 1) {
        return malformed("secret key coefficient not in {0, 1}");
    }
    Ok(raw.iter().map(|&b| b as i64).collect())
}

impl ClientKey {
    /// Versioned bytes of the secret keys (secret: zeroized when dropped;
    /// store them as such).
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        // Sized once: no reallocation leaves a copy of the key behind.
        let len =
            header_len(self.params.name) + self.small.dimension() + self.big_key().dimension();
        let mut out = Zeroizing::new(Vec::with_capacity(len));
        write_header(&mut out, KIND_CLIENT, self.params.name, self.id);
        out.extend(self.small.coefficients().iter().map(|&c| c as u8));
        out.extend(self.big_key().coefficients().iter().map(|&c| c as u8));
        out
    }

    /// Loads [`ClientKey::to_bytes`] output.
    pub fn from_bytes(bytes: &[u8]) -> Result<ClientKey> {
        let mut r = Reader::new(bytes);
        let (params, id) = read_header(&mut r, |_| KIND_CLIENT)?;
        let small = Zeroizing::new(read_bits(&mut r, params.lwe_dimension)?);
        let big = Zeroizing::new(read_bits(
            &mut r,
            params.glwe_dimension * params.polynomial_size,
        )?);
        r.finish()?;
        let ctx = context(&params)?;
        let big = LweSecretKey::from_coefficients(&big, id);
        let glwe = GlweSecretKey::from_lwe_key(ctx.clone(), big)?;
        Ok(ClientKey {
            small: LweSecretKey::from_coefficients(&small, id),
            params,
            id,
            ctx,
            glwe,
        })
    }
}

impl ServerKey {
    /// Versioned, seed-compressed bytes: the bootstrapping key's bodies and
    /// seed, the key-switching key's bodies and seed.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_header(
            &mut out,
            server_kind(&self.params),
            self.params.name,
            self.id,
        );
        out.extend_from_slice(&self.bsk_seed);
        let (k, n) = (self.ctx.k, self.ctx.n);
        out.reserve(self.bsk.len() / (k + 1) * 8);
        for row in self.bsk.chunks(self.ctx.glwe_len()) {
            for v in &row[k * n..] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        self.ksk.write_body(&mut out);
        out
    }

    /// Size of [`ServerKey::to_bytes`] output, in bytes.
    pub fn compressed_size(&self) -> usize {
        let p = &self.params;
        let bodies = self.bsk.len() / (self.ctx.k + 1);
        let ksk = p.glwe_dimension * p.polynomial_size * p.ks_levels as usize;
        header_len(p.name) + 32 + bodies * 8 + 16 + 32 + ksk * 8
    }

    /// Loads [`ServerKey::to_bytes`] output, regenerating every mask.
    pub fn from_bytes(bytes: &[u8]) -> Result<ServerKey> {
        let mut parts = ServerKeyParts::read(bytes)?;
        let ServerKeyParts {
            params,
            id,
            ref ctx,
            bsk_seed,
            bodies,
            ..
        } = parts;
        let (k, n) = (ctx.k, ctx.n);
        let mut bsk = crate::glwe::key_buffer(bodies.len() / 8 * (k + 1));
        for (i, (row, body)) in bsk
            .chunks_mut(ctx.glwe_len())
            .zip(bodies.chunks_exact(n * 8))
            .enumerate()
        {
            let (mask, dst) = row.split_at_mut(k * n);
            ctx.uniform_mask(bsk_seed, i as u64, mask)?;
            for (d, c) in dst.iter_mut().zip(body.chunks_exact(8)) {
                *d = word(c);
            }
        }
        let ksk = LweKeySwitchKey::read_body(
            &mut parts.reader,
            params.ks_base_log,
            params.ks_levels,
            (k * n, params.lwe_dimension),
            (id, id),
        )?;
        parts.reader.finish()?;
        let ctx = parts.ctx;
        Ok(ServerKey::new(params.clone(), id, ctx, bsk_seed, bsk, ksk))
    }

    /// The key in its compressed form (its [`to_bytes`](Self::to_bytes)).
    pub fn compress(&self) -> CompressedServerKey {
        CompressedServerKey {
            params: self.params.clone(),
            id: self.id,
            bytes: self.to_bytes(),
        }
    }
}

/// A little-endian word of an 8-byte chunk.
fn word(c: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(c);
    u64::from_le_bytes(w)
}

/// The parts of a server key's bytes up to its key-switching key, checked:
/// the header, the bootstrapping key's seed and its bodies (each reduced).
struct ServerKeyParts<'a> {
    params: TfheParameters,
    id: KeyId,
    ctx: Arc<crate::glwe::GlweContext>,
    bsk_seed: Seed,
    bodies: &'a [u8],
    reader: Reader<'a>,
}

impl<'a> ServerKeyParts<'a> {
    fn read(bytes: &'a [u8]) -> Result<ServerKeyParts<'a>> {
        let mut reader = Reader::new(bytes);
        let (params, id) = read_header(&mut reader, server_kind)?;
        let ctx = context(&params)?;
        let mut bsk_seed = [0u8; 32];
        bsk_seed.copy_from_slice(reader.take(32)?);
        let rows = params.bootstrapping_ggsws() * ctx.ggsw_rows();
        let bodies = reader.take(rows * ctx.n * 8)?;
        let q = ctx.q();
        // The largest residue, in a branch-free pass.
        if bodies.chunks_exact(8).map(word).fold(0, u64::max) >= q {
            return malformed("bootstrapping key residue not reduced");
        }
        Ok(ServerKeyParts {
            params,
            id,
            ctx,
            bsk_seed,
            bodies,
            reader,
        })
    }
}

/// A server key as loaded and checked, its masks not yet regenerated: what
/// a server receives and stores. Every check of [`ServerKey::from_bytes`]
/// but the expansion runs when it loads, so [`decompress`](Self::decompress)
/// only spends time and memory (the expanded key is several times larger).
#[derive(Clone)]
pub struct CompressedServerKey {
    params: TfheParameters,
    id: KeyId,
    bytes: Vec<u8>,
}

impl std::fmt::Debug for CompressedServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CompressedServerKey {{ params: {}, .. }}",
            self.params.name
        )
    }
}

impl CompressedServerKey {
    /// Loads and checks [`ServerKey::to_bytes`] output.
    pub fn from_bytes(bytes: &[u8]) -> Result<CompressedServerKey> {
        let mut parts = ServerKeyParts::read(bytes)?;
        let (k, n) = (parts.ctx.k, parts.ctx.n);
        let p = &parts.params;
        LweKeySwitchKey::check_body(
            &mut parts.reader,
            p.ks_base_log,
            p.ks_levels,
            (k * n, p.lwe_dimension),
        )?;
        parts.reader.finish()?;
        Ok(CompressedServerKey {
            params: parts.params,
            id: parts.id,
            bytes: bytes.to_vec(),
        })
    }

    /// The bytes it was loaded from (or compressed to).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The parameter set.
    pub fn parameters(&self) -> &TfheParameters {
        &self.params
    }

    /// The identity of the client key it was made from.
    pub fn key_id(&self) -> KeyId {
        self.id
    }

    /// The server key, its masks regenerated from their seeds.
    pub fn decompress(&self) -> Result<ServerKey> {
        ServerKey::from_bytes(&self.bytes)
    }
}

impl Ciphertext {
    /// Versioned bytes of the block, naming its set.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_header(&mut out, KIND_BLOCK, self.owner.set, self.owner.key);
        self.write_body(&mut out);
        out
    }

    /// Loads a block of the parameter set `params` (bytes naming another
    /// set are refused; the block carries `params`' name and the key
    /// identity of the bytes): the degree must fit the block and the noise
    /// level is at least a fresh encryption's.
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<Ciphertext> {
        let mut r = Reader::new(bytes);
        let owner = read_value_header(&mut r, KIND_BLOCK, params)?;
        let ct = Ciphertext::read_body(&mut r, params, owner)?;
        r.finish()?;
        Ok(ct)
    }

    fn write_body(&self, out: &mut Vec<u8>) {
        write_metadata(out, self.degree, self.noise_level);
        self.lwe.write_body(out);
    }

    fn read_body(r: &mut Reader<'_>, params: &TfheParameters, owner: Owner) -> Result<Ciphertext> {
        let (degree, noise_level) = read_metadata(r, params)?;
        let n = params.glwe_dimension * params.polynomial_size;
        let lwe = LweCiphertext::read_body(r, n, owner.key)?;
        Ok(Ciphertext {
            lwe,
            degree,
            noise_level,
            owner,
        })
    }
}

/// Appends a block's degree and noise level.
fn write_metadata(out: &mut Vec<u8>, degree: u64, noise_level: u64) {
    out.extend_from_slice(&degree.to_le_bytes());
    out.extend_from_slice(&noise_level.to_le_bytes());
}

/// Reads a block's degree (inside the block) and noise level (at least a
/// fresh encryption's, at most the set's maximum).
fn read_metadata(r: &mut Reader<'_>, params: &TfheParameters) -> Result<(u64, u64)> {
    let (msg, carry, max_noise) = moduli(params.encoding)?;
    let degree = r.u64()?;
    let noise_level = r.u64()?;
    if degree >= msg * carry {
        return malformed(format!("degree {degree} outside the block"));
    }
    if !(1..=max_noise).contains(&noise_level) {
        return malformed(format!(
            "noise level {noise_level} outside [1, {max_noise}]"
        ));
    }
    Ok((degree, noise_level))
}

/// Reads a radix integer's width and block count: a width of 8, 16, 32 or 64
/// bits and exactly the blocks it needs (at most 64, checked before any block
/// is read). Returns (bits, count, message modulus).
fn read_radix_shape(r: &mut Reader<'_>, params: &TfheParameters) -> Result<(u32, usize, u64)> {
    let (msg, _, _) = moduli(params.encoding)?;
    let bits = r.u8()? as u32;
    let expected = check_width(bits, block_shape(msg)?).or_else(|e| malformed(e.to_string()))?;
    let count = r.u8()? as usize;
    if count != expected {
        return malformed(format!(
            "{count} blocks for a {bits}-bit integer of {expected}"
        ));
    }
    Ok((bits, count, msg))
}

/// An integer's block must be clean (degree below the message modulus), as
/// every operation's result and every fresh encryption is.
fn check_clean(degree: u64, msg: u64) -> Result<()> {
    if degree >= msg {
        return malformed(format!("radix block of degree {degree} holds a carry"));
    }
    Ok(())
}

impl RadixCiphertext {
    /// Versioned bytes of the integer, naming its set: its width and its
    /// blocks.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Every block has the integer's owner (constructors check it).
        let owner = self.blocks[0].owner;
        write_header(&mut out, KIND_RADIX, owner.set, owner.key);
        out.push(self.bits as u8);
        out.push(self.blocks.len() as u8);
        for block in &self.blocks {
            block.write_body(&mut out);
        }
        out
    }

    /// Loads an integer of the parameter set `params`: a width of 8, 16, 32
    /// or 64 bits, exactly the blocks that width needs (at most 64, checked
    /// before any is read), each checked as a block and clean (degree below
    /// the message modulus), as every operation's result is.
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<RadixCiphertext> {
        let mut r = Reader::new(bytes);
        let owner = read_value_header(&mut r, KIND_RADIX, params)?;
        let (bits, count, msg) = read_radix_shape(&mut r, params)?;
        let mut blocks = Vec::with_capacity(count);
        for _ in 0..count {
            let block = Ciphertext::read_body(&mut r, params, owner)?;
            check_clean(block.degree, msg)?;
            blocks.push(block);
        }
        r.finish()?;
        Ok(RadixCiphertext { blocks, bits })
    }
}

impl BoolCiphertext {
    /// Versioned bytes of the boolean, naming its set.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_header(&mut out, KIND_BOOL, self.owner.set, self.owner.key);
        self.lwe.write_body(&mut out);
        out
    }

    /// Loads a boolean of the parameter set `params`.
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<BoolCiphertext> {
        let mut r = Reader::new(bytes);
        let owner = read_value_header(&mut r, KIND_BOOL, params)?;
        let n = params.glwe_dimension * params.polynomial_size;
        let lwe = LweCiphertext::read_body(&mut r, n, owner.key)?;
        r.finish()?;
        Ok(BoolCiphertext { lwe, owner })
    }
}

/// The compressed LWE ciphertext of stream `stream` under `seed` whose body
/// comes next, of the dimension of the set's big key and the identity of
/// `owner`'s key.
fn read_compressed_lwe(
    r: &mut Reader<'_>,
    params: &TfheParameters,
    owner: Owner,
    seed: triskel_ring::Seed,
    stream: u64,
) -> Result<CompressedLweCiphertext> {
    Ok(CompressedLweCiphertext {
        seed,
        stream,
        dimension: params.glwe_dimension * params.polynomial_size,
        b: r.u64()?,
        key_id: owner.key,
    })
}

impl CompressedCiphertext {
    /// Versioned bytes of the compressed block, naming its set (kind 10:
    /// seed, degree, noise level, body).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_header(
            &mut out,
            KIND_COMPRESSED_BLOCK,
            self.owner.set,
            self.owner.key,
        );
        out.extend_from_slice(&self.lwe.seed);
        write_metadata(&mut out, self.degree, self.noise_level);
        out.extend_from_slice(&self.lwe.b.to_le_bytes());
        out
    }

    /// Loads a compressed block of the parameter set `params`, checked as
    /// [`Ciphertext::from_bytes`] checks a block.
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<CompressedCiphertext> {
        let mut r = Reader::new(bytes);
        let owner = read_value_header(&mut r, KIND_COMPRESSED_BLOCK, params)?;
        let seed = r.seed()?;
        let (degree, noise_level) = read_metadata(&mut r, params)?;
        let lwe = read_compressed_lwe(&mut r, params, owner, seed, 0)?;
        r.finish()?;
        Ok(CompressedCiphertext {
            lwe,
            degree,
            noise_level,
            owner,
        })
    }
}

impl CompressedBoolCiphertext {
    /// Versioned bytes of the compressed boolean, naming its set (kind 11:
    /// seed, body).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_header(
            &mut out,
            KIND_COMPRESSED_BOOL,
            self.owner.set,
            self.owner.key,
        );
        out.extend_from_slice(&self.lwe.seed);
        out.extend_from_slice(&self.lwe.b.to_le_bytes());
        out
    }

    /// Loads a compressed boolean of the parameter set `params`.
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<CompressedBoolCiphertext> {
        let mut r = Reader::new(bytes);
        let owner = read_value_header(&mut r, KIND_COMPRESSED_BOOL, params)?;
        let seed = r.seed()?;
        let lwe = read_compressed_lwe(&mut r, params, owner, seed, 0)?;
        r.finish()?;
        Ok(CompressedBoolCiphertext { lwe, owner })
    }
}

impl CompressedRadixCiphertext {
    /// Versioned bytes of the compressed integer, naming its set (kind 12:
    /// width, block count, seed, each block's degree, noise level and body).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let owner = self.owner();
        write_header(&mut out, KIND_COMPRESSED_RADIX, owner.set, owner.key);
        out.push(self.bits as u8);
        out.push(self.blocks.len() as u8);
        out.extend_from_slice(&self.seed);
        for block in &self.blocks {
            write_metadata(&mut out, block.degree, block.noise_level);
            out.extend_from_slice(&block.lwe.b.to_le_bytes());
        }
        out
    }

    /// Loads a compressed integer of the parameter set `params`, checked as
    /// [`RadixCiphertext::from_bytes`] checks an integer (width, block count
    /// before any block is read, clean blocks).
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<CompressedRadixCiphertext> {
        let mut r = Reader::new(bytes);
        let owner = read_value_header(&mut r, KIND_COMPRESSED_RADIX, params)?;
        let (bits, count, msg) = read_radix_shape(&mut r, params)?;
        let seed = r.seed()?;
        let mut blocks = Vec::with_capacity(count);
        for i in 0..count {
            let (degree, noise_level) = read_metadata(&mut r, params)?;
            check_clean(degree, msg)?;
            blocks.push(CompressedCiphertext {
                lwe: read_compressed_lwe(&mut r, params, owner, seed, i as u64)?,
                degree,
                noise_level,
                owner,
            });
        }
        r.finish()?;
        Ok(CompressedRadixCiphertext { seed, bits, blocks })
    }
}

/// Writes a GLWE object's shape (k, N).
fn write_shape(out: &mut Vec<u8>, ctx: &GlweContext) {
    out.extend_from_slice(&(ctx.k as u32).to_le_bytes());
    out.extend_from_slice(&(ctx.n as u32).to_le_bytes());
}

/// Reads the header and shape of a GLWE object of kind `kind`: the set's
/// context, its shape checked against the set's, and the key identity.
fn read_glwe_header(
    r: &mut Reader<'_>,
    kind: u8,
) -> Result<(TfheParameters, Arc<GlweContext>, KeyId)> {
    let (params, key) = read_header(r, |_| kind)?;
    let (k, n) = (r.u32()? as usize, r.u32()? as usize);
    if (k, n) != (params.glwe_dimension, params.polynomial_size) {
        return malformed(format!(
            "GLWE shape (k, N) = ({k}, {n}) for {}, which has ({}, {})",
            params.name, params.glwe_dimension, params.polynomial_size
        ));
    }
    let ctx = context(&params)?;
    Ok((params, ctx, key))
}

/// Appends residues as little-endian u64 words.
fn write_words(out: &mut Vec<u8>, words: &[u64]) {
    out.reserve(words.len() * 8);
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// Reads `len` residues, each below q (the bytes are taken, so present,
/// before anything is allocated).
fn read_residues(r: &mut Reader<'_>, len: usize, q: u64) -> Result<Vec<u64>> {
    let raw = r.take(len * 8)?;
    let words: Vec<u64> = raw
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk")))
        .collect();
    if words.iter().any(|&w| w >= q) {
        return malformed(format!("residue not reduced modulo {q}"));
    }
    Ok(words)
}

impl GlweSecretKey {
    /// Versioned bytes of the key, naming the set it was made for (secret:
    /// zeroized when dropped; store them as such).
    pub fn to_bytes(&self) -> Zeroizing<Vec<u8>> {
        let ctx = &self.ctx;
        // Sized once: no reallocation leaves a copy of the key behind.
        let len = header_len(ctx.set_name) + 8 + ctx.k * ctx.n;
        let mut out = Zeroizing::new(Vec::with_capacity(len));
        write_header(&mut out, KIND_GLWE_KEY, ctx.set_name, self.key);
        write_shape(&mut out, ctx);
        out.extend(self.lwe_key().coefficients().iter().map(|&c| c as u8));
        out
    }

    /// Loads [`GlweSecretKey::to_bytes`] output: the set named in the
    /// header (checked), its shape, k N binary coefficients, nothing after.
    /// Every copy of the coefficients is wiped, on errors too.
    pub fn from_bytes(bytes: &[u8]) -> Result<GlweSecretKey> {
        let mut r = Reader::new(bytes);
        let (_, ctx, key) = read_glwe_header(&mut r, KIND_GLWE_KEY)?;
        let bits = Zeroizing::new(read_bits(&mut r, ctx.k * ctx.n)?);
        r.finish()?;
        GlweSecretKey::from_lwe_key(ctx, LweSecretKey::from_coefficients(&bits, key))
    }
}

impl GlweCiphertext {
    /// Versioned bytes of the ciphertext (coefficient form), naming the set
    /// it was made for.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(header_len(self.ctx.set_name) + 8 + self.data.len() * 8);
        write_header(&mut out, KIND_GLWE, self.ctx.set_name, self.key);
        write_shape(&mut out, &self.ctx);
        write_words(&mut out, &self.data);
        out
    }

    /// Loads a GLWE ciphertext of the parameter set `params`: its shape,
    /// (k + 1) N residues below q, nothing after.
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<GlweCiphertext> {
        let mut r = Reader::new(bytes);
        let (set, ctx, key) = read_glwe_header(&mut r, KIND_GLWE)?;
        expect_params(&set, params)?;
        let data = read_residues(&mut r, ctx.glwe_len(), ctx.q())?;
        r.finish()?;
        Ok(GlweCiphertext { ctx, key, data })
    }
}

impl GgswCiphertext {
    /// Versioned bytes of the GGSW (its rows in NTT form, as kept), naming
    /// the set it was made for.
    pub fn to_bytes(&self) -> Vec<u8> {
        let ctx = &self.ctx;
        let mut out = Vec::with_capacity(header_len(ctx.set_name) + 16 + self.data.len() * 8);
        write_header(&mut out, KIND_GGSW, ctx.set_name, self.key);
        write_ggsw_shape(&mut out, ctx);
        write_words(&mut out, &self.data);
        out
    }

    /// Loads a GGSW of the parameter set `params`: its shape, the set's
    /// bootstrapping decomposition (base_log, levels), (k + 1) l rows of
    /// (k + 1) N NTT-domain residues below q, nothing after.
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<GgswCiphertext> {
        let mut r = Reader::new(bytes);
        let (ctx, key) = read_ggsw_header(&mut r, KIND_GGSW, params)?;
        let data = read_residues(&mut r, ctx.ggsw_rows() * ctx.glwe_len(), ctx.q())?;
        r.finish()?;
        Ok(GgswCiphertext { ctx, key, data })
    }
}

/// Writes a GGSW's shape (k, N) and decomposition (base_log, levels).
fn write_ggsw_shape(out: &mut Vec<u8>, ctx: &GlweContext) {
    write_shape(out, ctx);
    out.extend_from_slice(&ctx.decomposer.base_log().to_le_bytes());
    out.extend_from_slice(&(ctx.decomposer.levels() as u32).to_le_bytes());
}

/// Reads the header, shape and decomposition of a GGSW kind of the set
/// `params`: the decomposition must be the set's bootstrapping one.
fn read_ggsw_header(
    r: &mut Reader<'_>,
    kind: u8,
    params: &TfheParameters,
) -> Result<(Arc<GlweContext>, KeyId)> {
    let (set, ctx, key) = read_glwe_header(r, kind)?;
    expect_params(&set, params)?;
    let (base_log, levels) = (r.u32()?, r.u32()?);
    if (base_log, levels) != (set.pbs_base_log, set.pbs_levels) {
        return malformed(format!(
            "GGSW decomposition (base 2^{base_log}, {levels} levels) for {}, which has \
             (2^{}, {})",
            set.name, set.pbs_base_log, set.pbs_levels
        ));
    }
    Ok((ctx, key))
}

impl CompressedGlweCiphertext {
    /// Versioned bytes (kind 13: shape, seed, body), naming the set it was
    /// made for.
    pub fn to_bytes(&self) -> Vec<u8> {
        let ctx = &self.ctx;
        let mut out = Vec::with_capacity(header_len(ctx.set_name) + 40 + self.body.len() * 8);
        write_header(&mut out, KIND_COMPRESSED_GLWE, ctx.set_name, self.key);
        write_shape(&mut out, ctx);
        out.extend_from_slice(&self.seed);
        write_words(&mut out, &self.body);
        out
    }

    /// Loads a compressed GLWE of the parameter set `params`: its shape, a
    /// seed, N residues below q, nothing after.
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<CompressedGlweCiphertext> {
        let mut r = Reader::new(bytes);
        let (set, ctx, key) = read_glwe_header(&mut r, KIND_COMPRESSED_GLWE)?;
        expect_params(&set, params)?;
        let seed = r.seed()?;
        let body = read_residues(&mut r, ctx.n, ctx.q())?;
        r.finish()?;
        Ok(CompressedGlweCiphertext {
            ctx,
            key,
            seed,
            body,
        })
    }
}

impl CompressedGgswCiphertext {
    /// Versioned bytes (kind 14: shape, decomposition, seed, row bodies),
    /// naming the set it was made for.
    pub fn to_bytes(&self) -> Vec<u8> {
        let ctx = &self.ctx;
        let mut out = Vec::with_capacity(header_len(ctx.set_name) + 48 + self.bodies.len() * 8);
        write_header(&mut out, KIND_COMPRESSED_GGSW, ctx.set_name, self.key);
        write_ggsw_shape(&mut out, ctx);
        out.extend_from_slice(&self.seed);
        write_words(&mut out, &self.bodies);
        out
    }

    /// Loads a compressed GGSW of the parameter set `params`: its shape, the
    /// set's bootstrapping decomposition, a seed, (k + 1) l row bodies of N
    /// NTT-domain residues below q, nothing after.
    pub fn from_bytes(bytes: &[u8], params: &TfheParameters) -> Result<CompressedGgswCiphertext> {
        let mut r = Reader::new(bytes);
        let (ctx, key) = read_ggsw_header(&mut r, KIND_COMPRESSED_GGSW, params)?;
        let seed = r.seed()?;
        let bodies = read_residues(&mut r, ctx.ggsw_rows() * ctx.n, ctx.q())?;
        r.finish()?;
        Ok(CompressedGgswCiphertext {
            ctx,
            key,
            seed,
            bodies,
        })
    }
}
