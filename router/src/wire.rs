//! What crosses between a client and a server: plan choices, evaluation
//! keys, encrypted inputs and encrypted outputs, as versioned,
//! self-describing bytes.
//!
//! Little-endian throughout; `blob = len:u32 bytes`, `name = len:u8 bytes`
//! (1..=64 bytes of printable ASCII), `digest = 32 bytes` (SHA3-256).
//!
//! ```text
//! choice   = "TRSKCHO" version:u8(1) round_trips:u8(0|1) scale:u8(0..=64, 255 none)
//!            max_bytes:u64(0 none) nodes:u32 engine:u8*  (0 bfv, 1 ckks, 2 tfhe)
//!            bfv:u8 name* ckks:opt(name) tfhe:opt(name)
//! opt(x)   = 0 | 1 x
//! keys     = "TRSKEVK" version:u8(1) program:digest choice:blob
//!            bfv:u8 (params:blob pk:blob opt(rk:blob) opt(gk:blob))*
//!            opt(ckks params:blob pk:blob opt(rk:blob) opt(gk:blob))
//!            opt(tfhe server key:blob) transitions:u8 (name key:blob)*
//!            id:digest
//! inputs   = "TRSKINP" version:u8(1) key_set:digest context:blob count:u32 value*
//! value    = node:u32 tag:u8 count:u32 blob*
//! outputs  = "TRSKOUT" version:u8(1) key_set:digest program:digest context:blob
//!            inputs:u32 digest* entries:u32 entry*
//! entry    = slot:u8(0 output, 1 round trip) index:u32 tag:u8 count:u32 blob*
//!            record:(attestation receipt || bundle)
//! ```
//!
//! Value tags: 1 a BFV ciphertext, 2 BFV coefficients extracted as LWE
//! ciphertexts, 3 a CKKS ciphertext, 4 CKKS coefficients extracted (first
//! blob: the scale as f64, then one LWE blob each), 5 TFHE radix integers
//! (one blob each), 6 TFHE bits (one blob each), 7 and 8 the same
//! seed-compressed (fresh encryptions: inputs). An LWE blob is the key
//! identity (16 bytes) and the body. The blobs inside are the engines' own
//! formats, checked by the engines against the parameter sets of the plan.
//!
//! The key-set id (`id` above) is BLAKE3 (32 bytes) in key-derivation mode
//! with the context `triskel/evaluation-keys/v1`, over every byte before
//! it: it commits to the program's digest, the plan choice and every key,
//! and loading recomputes it. BLAKE3 rather than SHA3-256 because the
//! bundle is tens of MB and the hash must not be what limits loading it
//! (BLAKE3 runs at several GB/s on one core, SHA3-256 at a few hundred MB/s).
//! For the same reason an input's digest and an entry's digest, which the
//! server's records bind, are BLAKE3 in key-derivation mode with the
//! context `triskel/ciphertext/v1` over its bytes (`value`, or `entry`
//! from `tag` on, without its record).
//!
//! Loading is validation: a caller-given byte limit is checked before
//! anything is read ([`read_limited`]), every count is checked against the
//! bytes left before anything is allocated, and trailing bytes are an
//! error.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Arc, OnceLock};

use triskel_attest::{Digest32, Record, BUNDLE_LEN, RECEIPT_LEN};
use triskel_bfv::{
    BfvContext, BfvParameters, Ciphertext as BfvCiphertext, GaloisKeys as BfvGaloisKeys,
    PublicKey as BfvPublicKey, RelinKey as BfvRelinKey,
};
use triskel_ckks::{
    Ciphertext as CkksCiphertext, CkksContext, CkksParameters, GaloisKeys as CkksGaloisKeys,
    PublicKey as CkksPublicKey, RelinKey as CkksRelinKey,
};
use triskel_ring::{KeyId, LweCiphertext};
use triskel_tfhe::{
    Ciphertext as TfheBit, CompressedCiphertext, CompressedRadixCiphertext, RadixCiphertext,
    ServerKey,
};

use crate::error::{Error, Result};
use crate::plan::{Engine, Placement, Plan, PlanChoice, PlanOptions};
use crate::program::{Kind, Op};
use crate::server::{BfvEval, CkksEval, EvaluationKeys, Released, Val};
use crate::transition::TransitionKey;

const CHOICE_MAGIC: &[u8; 7] = b"TRSKCHO";
const KEYS_MAGIC: &[u8; 7] = b"TRSKEVK";
const INPUTS_MAGIC: &[u8; 7] = b"TRSKINP";
const OUTPUTS_MAGIC: &[u8; 7] = b"TRSKOUT";
/// Tags of seed-compressed TFHE values (module documentation).
pub(crate) const TAG_COMPRESSED_RADIX: u8 = 7;
pub(crate) const TAG_COMPRESSED_BITS: u8 = 8;
/// The version of every format of this module.
pub const WIRE_FORMAT_VERSION: u8 = 1;
/// The most bytes of a caller's context.
pub const MAX_CONTEXT_BYTES: usize = 4096;
const KEY_SET_CONTEXT: &str = "triskel/evaluation-keys/v1";
const CIPHERTEXT_CONTEXT: &str = "triskel/ciphertext/v1";

pub(crate) fn bad<T>(what: &str, msg: impl std::fmt::Display) -> Result<T> {
    Err(Error::Format(format!("{what}: {msg}")))
}

/// Reads at most `limit` bytes of `what` from `reader`: a longer stream is
/// refused after `limit + 1` bytes, before the rest is read.
pub fn read_limited(reader: impl Read, limit: u64, what: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Format(format!("{what}: {e}")))?;
    if bytes.len() as u64 > limit {
        return bad(what, format!("longer than the limit of {limit} bytes"));
    }
    Ok(bytes)
}

fn check_limit(bytes: &[u8], limit: u64, what: &str) -> Result<()> {
    if bytes.len() as u64 > limit {
        return bad(
            what,
            format!("{} bytes, above the limit of {limit}", bytes.len()),
        );
    }
    Ok(())
}

pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    pub(crate) fn new(magic: &[u8; 7]) -> Writer {
        let mut w = Writer(magic.to_vec());
        w.u8(WIRE_FORMAT_VERSION);
        w
    }
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u32(&mut self, v: usize) {
        self.0.extend_from_slice(&(v as u32).to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn bytes(&mut self, v: &[u8]) {
        self.0.extend_from_slice(v);
    }
    pub(crate) fn blob(&mut self, v: &[u8]) {
        self.u32(v.len());
        self.bytes(v);
    }
    pub(crate) fn name(&mut self, s: &str) {
        self.u8(s.len() as u8);
        self.bytes(s.as_bytes());
    }
    pub(crate) fn opt<T>(&mut self, v: Option<T>, f: impl FnOnce(&mut Self, T)) {
        match v {
            None => self.u8(0),
            Some(x) => {
                self.u8(1);
                f(self, x);
            }
        }
    }
}

pub(crate) struct Reader<'a> {
    what: &'static str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader past the magic and version of `what`.
    pub(crate) fn new(what: &'static str, magic: &[u8; 7], bytes: &'a [u8]) -> Result<Reader<'a>> {
        let mut r = Reader { what, bytes, at: 0 };
        if r.take(7)? != magic {
            return bad(what, "not this kind of file (wrong magic)");
        }
        let version = r.u8()?;
        if version != WIRE_FORMAT_VERSION {
            return bad(
                what,
                format!("format version {version}; this build reads {WIRE_FORMAT_VERSION}"),
            );
        }
        Ok(r)
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() - self.at < n {
            return bad(self.what, "truncated");
        }
        self.at += n;
        Ok(&self.bytes[self.at - n..self.at])
    }
    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Result<usize> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")) as usize)
    }
    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    pub(crate) fn digest(&mut self) -> Result<Digest32> {
        Ok(self.take(32)?.try_into().expect("32 bytes"))
    }
    pub(crate) fn blob(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()?;
        self.take(n)
    }
    /// A count of items of at least `min_bytes` each, checked against the
    /// bytes left.
    pub(crate) fn count(&mut self, min_bytes: usize, most: usize) -> Result<usize> {
        let n = self.u32()?;
        if n > most || n.saturating_mul(min_bytes) > self.bytes.len() - self.at {
            return bad(
                self.what,
                format!("a count of {n} does not fit the bytes left"),
            );
        }
        Ok(n)
    }
    pub(crate) fn name(&mut self) -> Result<String> {
        let n = self.u8()? as usize;
        let raw = self.take(n)?;
        if n == 0 || n > 64 || !raw.iter().all(|b| b.is_ascii_graphic()) {
            return bad(self.what, "a name must be 1 to 64 printable ASCII bytes");
        }
        Ok(String::from_utf8_lossy(raw).into_owned())
    }
    pub(crate) fn flag(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => bad(self.what, format!("flag byte {b}, 0 or 1 expected")),
        }
    }
    pub(crate) fn finish(&self) -> Result<()> {
        if self.at != self.bytes.len() {
            return bad(
                self.what,
                format!("{} trailing bytes", self.bytes.len() - self.at),
            );
        }
        Ok(())
    }
}

fn engine_tag(e: Engine) -> u8 {
    match e {
        Engine::Bfv => 0,
        Engine::Ckks => 1,
        Engine::Tfhe => 2,
    }
}

impl PlanChoice {
    /// The versioned bytes of the choice (module documentation).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(CHOICE_MAGIC);
        w.u8(u8::from(self.options.allow_round_trips));
        w.u8(self
            .options
            .ckks_scale_log2
            .map_or(255, |s| s.min(254) as u8));
        w.u64(self.options.max_ciphertext_bytes.unwrap_or(0));
        w.u32(self.engines.len());
        self.engines.iter().for_each(|&e| w.u8(engine_tag(e)));
        w.u8(self.bfv.len() as u8);
        self.bfv.iter().for_each(|s| w.name(s));
        w.opt(self.ckks.as_deref(), |w, s| w.name(s));
        w.opt(self.tfhe.as_deref(), |w, s| w.name(s));
        w.0
    }

    /// Loads [`PlanChoice::to_bytes`] output (at most `limit` bytes). What it
    /// says is checked against a program only by [`crate::plan_chosen`].
    pub fn from_bytes(bytes: &[u8], limit: u64) -> Result<PlanChoice> {
        check_limit(bytes, limit, "plan choice")?;
        let mut r = Reader::new("plan choice", CHOICE_MAGIC, bytes)?;
        let choice = read_choice(&mut r)?;
        r.finish()?;
        Ok(choice)
    }
}

fn read_choice(r: &mut Reader<'_>) -> Result<PlanChoice> {
    let allow_round_trips = r.flag()?;
    let scale = r.u8()?;
    if scale > 64 && scale != 255 {
        return bad("plan choice", format!("CKKS scale 2^{scale}"));
    }
    let max = r.u64()?;
    let options = PlanOptions {
        allow_round_trips,
        ckks_scale_log2: (scale != 255).then_some(scale as u32),
        max_ciphertext_bytes: (max != 0).then_some(max),
    };
    let nodes = r.count(1, crate::MAX_NODES)?;
    let engines = (0..nodes)
        .map(|_| match r.u8()? {
            0 => Ok(Engine::Bfv),
            1 => Ok(Engine::Ckks),
            2 => Ok(Engine::Tfhe),
            t => bad("plan choice", format!("engine tag {t}")),
        })
        .collect::<Result<_>>()?;
    let parts = r.u8()? as usize;
    let bfv = (0..parts).map(|_| r.name()).collect::<Result<_>>()?;
    let ckks = if r.flag()? { Some(r.name()?) } else { None };
    let tfhe = if r.flag()? { Some(r.name()?) } else { None };
    Ok(PlanChoice {
        options,
        engines,
        bfv,
        ckks,
        tfhe,
    })
}

fn key_set_id(bytes: &[u8]) -> Digest32 {
    blake3::derive_key(KEY_SET_CONTEXT, bytes)
}

impl EvaluationKeys {
    /// The key-set id: SHA3-256 of the bundle's bytes (module
    /// documentation), so it commits to the program, the plan choice and
    /// every key.
    pub fn id(&self) -> Digest32 {
        *self.id.get_or_init(|| {
            let bytes = self.body_bytes();
            key_set_id(&bytes)
        })
    }

    fn body_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(KEYS_MAGIC);
        w.bytes(&self.program);
        w.blob(&self.choice.to_bytes());
        w.u8(self.bfv.len() as u8);
        for b in &self.bfv {
            w.blob(&b.ctx.params().to_bytes());
            w.blob(&b.pk.to_bytes());
            w.opt(b.rk.as_ref(), |w, k| w.blob(&k.to_bytes()));
            w.opt(b.gk.as_ref(), |w, k| w.blob(&k.to_bytes()));
        }
        w.opt(self.ckks.as_ref(), |w, c| {
            w.blob(&c.ctx.params().to_bytes());
            w.blob(&c.pk.to_bytes());
            w.opt(c.rk.as_ref(), |w, k| w.blob(&k.to_bytes()));
            w.opt(c.gk.as_ref(), |w, k| w.blob(&k.to_bytes()));
        });
        w.opt(self.tfhe.as_ref(), |w, k| w.blob(&k.to_bytes()));
        w.u8(self.transition.len() as u8);
        for (name, key) in &self.transition {
            w.name(name);
            w.blob(&key.to_bytes());
        }
        w.0
    }

    /// The versioned, seed-compressed bytes of the bundle (module
    /// documentation), ending with the key-set id.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = self.body_bytes();
        let id = key_set_id(&bytes);
        let _ = self.id.set(id);
        bytes.extend_from_slice(&id);
        bytes
    }

    /// Loads [`EvaluationKeys::to_bytes`] output of at most `limit` bytes:
    /// every key is parsed and checked by its engine under a named,
    /// 128-bit-secure parameter set, and the key-set id must match the
    /// bytes. Whether the keys fit a plan is checked by
    /// [`Server::run`](crate::Server::run).
    pub fn from_bytes(bytes: &[u8], limit: u64) -> Result<EvaluationKeys> {
        const WHAT: &str = "evaluation keys";
        check_limit(bytes, limit, WHAT)?;
        if bytes.len() < 32 {
            return bad(WHAT, "truncated");
        }
        let (body, id) = bytes.split_at(bytes.len() - 32);
        if key_set_id(body)[..] != *id {
            return bad(
                WHAT,
                "the key-set id does not match the bytes (damaged or edited)",
            );
        }
        let mut r = Reader::new(WHAT, KEYS_MAGIC, body)?;
        let program = r.digest()?;
        let choice = {
            let raw = r.blob()?;
            let mut c = Reader::new("plan choice", CHOICE_MAGIC, raw)?;
            let choice = read_choice(&mut c)?;
            c.finish()?;
            choice
        };
        let parts = r.u8()? as usize;
        let mut bfv = Vec::with_capacity(parts.min(16));
        for _ in 0..parts {
            let params = BfvParameters::from_bytes(r.blob()?)?;
            let ctx = BfvContext::new(params)?;
            let pk = Arc::new(BfvPublicKey::from_bytes(r.blob()?, &ctx)?);
            let rk = match r.flag()? {
                true => Some(Arc::new(BfvRelinKey::from_bytes(r.blob()?, &ctx)?)),
                false => None,
            };
            let gk = match r.flag()? {
                true => Some(Arc::new(BfvGaloisKeys::from_bytes(r.blob()?, &ctx)?)),
                false => None,
            };
            bfv.push(BfvEval { ctx, pk, rk, gk });
        }
        let ckks = match r.flag()? {
            false => None,
            true => {
                let params = CkksParameters::from_bytes(r.blob()?)?;
                let ctx = CkksContext::new(params)?;
                let pk = Arc::new(CkksPublicKey::from_bytes(r.blob()?, &ctx)?);
                let rk = match r.flag()? {
                    true => Some(Arc::new(CkksRelinKey::from_bytes(r.blob()?, &ctx)?)),
                    false => None,
                };
                let gk = match r.flag()? {
                    true => Some(Arc::new(CkksGaloisKeys::from_bytes(r.blob()?, &ctx)?)),
                    false => None,
                };
                Some(CkksEval { ctx, pk, rk, gk })
            }
        };
        let tfhe = match r.flag()? {
            true => Some(Arc::new(ServerKey::from_bytes(r.blob()?)?)),
            false => None,
        };
        let count = r.u8()? as usize;
        let mut transition = BTreeMap::new();
        for _ in 0..count {
            let name = r.name()?;
            let key = TransitionKey::from_bytes(r.blob()?)?;
            if transition.insert(name, Arc::new(key)).is_some() {
                return bad(WHAT, "a transition key is given twice");
            }
        }
        r.finish()?;
        let keys = EvaluationKeys {
            program,
            choice,
            bfv,
            ckks,
            tfhe,
            transition,
            id: OnceLock::new(),
            transforms: OnceLock::new(),
        };
        let _ = keys.id.set(id.try_into().expect("32 bytes"));
        Ok(keys)
    }
}

/// One serialized value: its tag (module documentation) and blobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Encoded {
    pub(crate) tag: u8,
    pub(crate) blobs: Vec<Vec<u8>>,
}

impl Encoded {
    fn write(&self, w: &mut Writer) {
        w.u8(self.tag);
        w.u32(self.blobs.len());
        self.blobs.iter().for_each(|b| w.blob(b));
    }

    fn read(r: &mut Reader<'_>) -> Result<Encoded> {
        let tag = r.u8()?;
        if !(1..=TAG_COMPRESSED_BITS).contains(&tag) {
            return bad(r.what, format!("value tag {tag}"));
        }
        let count = r.count(4, crate::MAX_LEN + 1)?;
        let blobs = (0..count)
            .map(|_| Ok(r.blob()?.to_vec()))
            .collect::<Result<_>>()?;
        Ok(Encoded { tag, blobs })
    }

    /// Hashes its bytes as [`Encoded::write`] writes them, without a copy.
    fn hash_into(&self, h: &mut blake3::Hasher) {
        h.update(&[self.tag]);
        h.update(&(self.blobs.len() as u32).to_le_bytes());
        for b in &self.blobs {
            h.update(&(b.len() as u32).to_le_bytes());
            h.update(b);
        }
    }

    /// The digest of its bytes (module documentation).
    pub(crate) fn digest(&self) -> Digest32 {
        let mut h = blake3::Hasher::new_derive_key(CIPHERTEXT_CONTEXT);
        self.hash_into(&mut h);
        *h.finalize().as_bytes()
    }

    /// The blob of a one-blob value of tag `tag`.
    pub(crate) fn single(&self, tag: u8, what: &str) -> Result<&[u8]> {
        match (self.tag == tag, self.blobs.as_slice()) {
            (true, [b]) => Ok(b),
            _ => bad(
                what,
                format!("a value of tag {} for a value of tag {tag}", self.tag),
            ),
        }
    }

    /// The blobs of a value of tag `tag` with `len` blobs.
    pub(crate) fn many(&self, tag: u8, len: usize, what: &str) -> Result<&[Vec<u8>]> {
        if self.tag != tag || self.blobs.len() != len {
            return bad(
                what,
                format!(
                    "{} values of tag {} for {len} of tag {tag}",
                    self.blobs.len(),
                    self.tag
                ),
            );
        }
        Ok(&self.blobs)
    }
}

fn lwe_blob(l: &LweCiphertext) -> Vec<u8> {
    let mut out = l.key_id.to_bytes().to_vec();
    l.write_body(&mut out);
    out
}

/// An LWE ciphertext of dimension `n` under the key `id`.
pub(crate) fn read_lwe(blob: &[u8], n: usize, id: KeyId, what: &str) -> Result<LweCiphertext> {
    let mut r = triskel_ring::Reader::new(blob);
    let found = KeyId::read(&mut r)?;
    if found != id {
        return bad(what, "an extracted value under another key");
    }
    let l = LweCiphertext::read_body(&mut r, n, found)?;
    r.finish()?;
    Ok(l)
}

/// Serialized bytes of a value (a score: of the product holding it).
pub(crate) fn val_bytes(v: &Val) -> usize {
    match v {
        Val::Score(c, _) => c.to_bytes().len(),
        v => encode_val(v).map_or(0, |e| e.blobs.iter().map(Vec::len).sum()),
    }
}

pub(crate) fn encode_val(v: &Val) -> Result<Encoded> {
    Ok(match v {
        Val::Bfv(c) => Encoded {
            tag: 1,
            blobs: vec![c.to_bytes()],
        },
        Val::Ckks(c, _) => Encoded {
            tag: 3,
            blobs: vec![c.to_bytes()],
        },
        Val::Radix(r) => Encoded {
            tag: 5,
            blobs: r.iter().map(|x| x.to_bytes()).collect(),
        },
        Val::Bits(b) => Encoded {
            tag: 6,
            blobs: b.iter().map(|x| x.to_bytes()).collect(),
        },
        Val::Score(..) => return Err(crate::server::wrong("input")),
    })
}

pub(crate) fn encode_released(r: &Released) -> Encoded {
    match r {
        Released::Slots(c) => Encoded {
            tag: 1,
            blobs: vec![c.to_bytes()],
        },
        Released::Extracted(l) => Encoded {
            tag: 2,
            blobs: l.iter().map(lwe_blob).collect(),
        },
        Released::CkksSlots(c) => Encoded {
            tag: 3,
            blobs: vec![c.to_bytes()],
        },
        Released::CkksExtracted(l, scale) => Encoded {
            tag: 4,
            blobs: std::iter::once(scale.to_bits().to_le_bytes().to_vec())
                .chain(l.iter().map(lwe_blob))
                .collect(),
        },
        Released::Radix(r) => Encoded {
            tag: 5,
            blobs: r.iter().map(|x| x.to_bytes()).collect(),
        },
        Released::Bits(b) => Encoded {
            tag: 6,
            blobs: b.iter().map(|x| x.to_bytes()).collect(),
        },
    }
}

/// TFHE values of node kind `kind` from `e`, each under the key `id`.
pub(crate) fn decode_tfhe(
    e: &Encoded,
    kind: Kind,
    params: &triskel_tfhe::TfheParameters,
    id: KeyId,
    what: &str,
) -> Result<Val> {
    let len = kind.len();
    let foreign = || bad(what, "a TFHE value under another key");
    match kind {
        Kind::Uint { bits, .. } => {
            let mut out = Vec::with_capacity(len);
            for b in e.many(5, len, what)? {
                let x = RadixCiphertext::from_bytes(b, params)?;
                if x.key_id() != id {
                    return foreign();
                }
                if x.bits() != bits {
                    return bad(
                        what,
                        format!("a {}-bit integer for a {bits}-bit one", x.bits()),
                    );
                }
                out.push(x);
            }
            Ok(Val::Radix(out))
        }
        Kind::Bit { .. } => {
            let mut out = Vec::with_capacity(len);
            for b in e.many(6, len, what)? {
                let x = TfheBit::from_bytes(b, params)?;
                if x.key_id() != id {
                    return foreign();
                }
                out.push(x);
            }
            Ok(Val::Bits(out))
        }
        _ => bad(what, "not a TFHE value"),
    }
}

/// The value of input (or round-trip) node `v.node`, checked against the
/// plan and the keys: its engine, parameter set, length and key identity.
pub(crate) fn decode_input(plan: &Plan, keys: &EvaluationKeys, v: &InputValue) -> Result<Val> {
    let i = v.node as usize;
    let what = "inputs";
    let Some(node) = plan.program.nodes.get(i) else {
        return bad(what, format!("node v{i} is not in the program"));
    };
    let round_trip = plan.round_trips.iter().any(|&(n, _)| n == i);
    if !matches!(node.op, Op::Input { .. }) && !round_trip {
        return bad(
            what,
            format!("node v{i} is neither an input nor a round trip"),
        );
    }
    let e = &v.value;
    match plan.placements[i] {
        Placement::Bfv(part) => {
            let k = keys.bfv(part)?;
            let c = BfvCiphertext::from_bytes(e.single(1, what)?, &k.ctx)?;
            if c.key_id() != k.pk.id() {
                return bad(what, format!("v{i} is encrypted under another BFV key"));
            }
            Ok(Val::Bfv(c))
        }
        Placement::Ckks => {
            let k = keys.ckks()?;
            let c = CkksCiphertext::from_bytes(e.single(3, what)?, &k.ctx)?;
            if c.key_id() != k.pk.id() {
                return bad(what, format!("v{i} is encrypted under another CKKS key"));
            }
            let period = if plan.packing[i].coefficients {
                0
            } else {
                plan.packing[i].period
            };
            Ok(Val::Ckks(c, period))
        }
        Placement::Tfhe => {
            let sk = keys.tfhe()?;
            let (params, id) = (sk.parameters(), sk.key_id());
            let foreign = || bad(what, format!("v{i} is encrypted under another TFHE key"));
            let len = node.kind.len();
            match node.kind {
                Kind::Uint { bits, .. } => {
                    let mut out = Vec::with_capacity(len);
                    for b in e.many(TAG_COMPRESSED_RADIX, len, what)? {
                        let x = CompressedRadixCiphertext::from_bytes(b, params)?;
                        if x.key_id() != id {
                            return foreign();
                        }
                        if x.bits() != bits {
                            return bad(
                                what,
                                format!("v{i}: a {}-bit integer for a {bits}-bit one", x.bits()),
                            );
                        }
                        out.push(x.decompress());
                    }
                    Ok(Val::Radix(out))
                }
                Kind::Bit { .. } => {
                    let mut out = Vec::with_capacity(len);
                    for b in e.many(TAG_COMPRESSED_BITS, len, what)? {
                        let x = CompressedCiphertext::from_bytes(b, params)?;
                        if x.key_id() != id {
                            return foreign();
                        }
                        out.push(x.decompress());
                    }
                    Ok(Val::Bits(out))
                }
                _ => bad(what, format!("v{i} is not a TFHE value")),
            }
        }
        _ => bad(what, format!("node v{i} takes no input")),
    }
}

/// One encrypted input value (or a key holder's round-trip value) of
/// [`EncryptedInputs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputValue {
    pub(crate) node: u32,
    pub(crate) value: Encoded,
}

impl InputValue {
    fn write(&self, w: &mut Writer) {
        w.u32(self.node as usize);
        self.value.write(w);
    }

    /// The digest records bind: of `value` as serialized (module
    /// documentation).
    pub(crate) fn digest(&self) -> Digest32 {
        let mut h = blake3::Hasher::new_derive_key(CIPHERTEXT_CONTEXT);
        h.update(&self.node.to_le_bytes());
        self.value.hash_into(&mut h);
        *h.finalize().as_bytes()
    }
}

/// A client's encrypted inputs for one run, under one key set, with the
/// caller's context (which the server's records bind).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncryptedInputs {
    pub(crate) key_set: Digest32,
    pub(crate) context: Vec<u8>,
    pub(crate) values: Vec<InputValue>,
}

impl EncryptedInputs {
    /// The key-set id the inputs are encrypted under.
    pub fn key_set(&self) -> &Digest32 {
        &self.key_set
    }

    /// The caller's context.
    pub fn context(&self) -> &[u8] {
        &self.context
    }

    /// The digests of the values, in order (what records bind).
    pub fn digests(&self) -> Vec<Digest32> {
        self.values.iter().map(|v| v.digest()).collect()
    }

    /// The versioned bytes (module documentation).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(INPUTS_MAGIC);
        w.bytes(&self.key_set);
        w.blob(&self.context);
        w.u32(self.values.len());
        self.values.iter().for_each(|v| v.write(&mut w));
        w.0
    }

    /// Loads [`EncryptedInputs::to_bytes`] output of at most `limit` bytes.
    /// The ciphertexts inside are parsed and checked against the plan and
    /// the keys by [`Server::run`](crate::Server::run).
    pub fn from_bytes(bytes: &[u8], limit: u64) -> Result<EncryptedInputs> {
        const WHAT: &str = "encrypted inputs";
        check_limit(bytes, limit, WHAT)?;
        let mut r = Reader::new(WHAT, INPUTS_MAGIC, bytes)?;
        let key_set = r.digest()?;
        let context = read_context(&mut r)?;
        let count = r.count(9, crate::MAX_NODES)?;
        let values = (0..count)
            .map(|_| {
                Ok(InputValue {
                    node: r.u32()? as u32,
                    value: Encoded::read(&mut r)?,
                })
            })
            .collect::<Result<_>>()?;
        r.finish()?;
        Ok(EncryptedInputs {
            key_set,
            context,
            values,
        })
    }
}

fn read_context(r: &mut Reader<'_>) -> Result<Vec<u8>> {
    let context = r.blob()?;
    if context.len() > MAX_CONTEXT_BYTES {
        return bad(r.what, format!("a context above {MAX_CONTEXT_BYTES} bytes"));
    }
    Ok(context.to_vec())
}

/// Where an entry of [`EncryptedOutputs`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Output `u32` of the program, in its output order.
    Output(u32),
    /// The operand of round-trip node `u32`, for the key holder to convert.
    RoundTrip(u32),
}

/// One released value and the server's record of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncryptedOutput {
    pub(crate) slot: Slot,
    pub(crate) value: Encoded,
    pub(crate) record: Record,
}

impl EncryptedOutput {
    /// Where it goes.
    pub fn slot(&self) -> Slot {
        self.slot
    }

    /// The server's attestation record of it.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// The digest its record binds.
    pub fn digest(&self) -> Digest32 {
        self.value.digest()
    }
}

/// What a server returns for one run: every output, or the values of the
/// key-holder round trips not made yet ([`EncryptedOutputs::is_final`]),
/// each with its record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncryptedOutputs {
    pub(crate) key_set: Digest32,
    pub(crate) program: Digest32,
    pub(crate) inputs: Vec<Digest32>,
    pub(crate) context: Vec<u8>,
    pub(crate) entries: Vec<EncryptedOutput>,
}

impl EncryptedOutputs {
    /// Whether these are the program's outputs (not round-trip values).
    pub fn is_final(&self) -> bool {
        self.entries
            .iter()
            .all(|e| matches!(e.slot, Slot::Output(_)))
    }

    /// The key-set id they were computed under.
    pub fn key_set(&self) -> &Digest32 {
        &self.key_set
    }

    /// The entries, each with its record.
    pub fn entries(&self) -> &[EncryptedOutput] {
        &self.entries
    }

    /// The versioned bytes (module documentation).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new(OUTPUTS_MAGIC);
        w.bytes(&self.key_set);
        w.bytes(&self.program);
        w.blob(&self.context);
        w.u32(self.inputs.len());
        self.inputs.iter().for_each(|d| w.bytes(d));
        w.u32(self.entries.len());
        for e in &self.entries {
            let (slot, index) = match e.slot {
                Slot::Output(o) => (0, o),
                Slot::RoundTrip(n) => (1, n),
            };
            w.u8(slot);
            w.u32(index as usize);
            e.value.write(&mut w);
            w.bytes(&e.record.to_bytes());
        }
        w.0
    }

    /// Loads [`EncryptedOutputs::to_bytes`] output of at most `limit`
    /// bytes. The ciphertexts and records are checked by
    /// [`Client::decrypt`](crate::Client::decrypt).
    pub fn from_bytes(bytes: &[u8], limit: u64) -> Result<EncryptedOutputs> {
        const WHAT: &str = "encrypted outputs";
        check_limit(bytes, limit, WHAT)?;
        let mut r = Reader::new(WHAT, OUTPUTS_MAGIC, bytes)?;
        let key_set = r.digest()?;
        let program = r.digest()?;
        let context = read_context(&mut r)?;
        let count = r.count(32, crate::MAX_NODES)?;
        let inputs = (0..count).map(|_| r.digest()).collect::<Result<_>>()?;
        let count = r.count(10 + RECEIPT_LEN + BUNDLE_LEN, crate::MAX_NODES)?;
        let mut entries = Vec::with_capacity(count);
        for _ in 0..count {
            let slot = match (r.u8()?, r.u32()? as u32) {
                (0, o) => Slot::Output(o),
                (1, n) => Slot::RoundTrip(n),
                (s, _) => return bad(WHAT, format!("slot kind {s}")),
            };
            let value = Encoded::read(&mut r)?;
            let record = Record::from_bytes(r.take(RECEIPT_LEN + BUNDLE_LEN)?)?;
            entries.push(EncryptedOutput {
                slot,
                value,
                record,
            });
        }
        r.finish()?;
        Ok(EncryptedOutputs {
            key_set,
            program,
            inputs,
            context,
            entries,
        })
    }
}
