//! What crosses between a client and a server: plan choices, evaluation
//! keys, encrypted inputs and encrypted outputs, as versioned,
//! self-describing bytes.
//!
//! Little-endian throughout; `blob = len:u32 bytes`, `name = len:u8 bytes`
//! (1..=64 bytes of printable ASCII), `digest = 32 bytes` (SHA3-256).
//!
//! ```text
//! choice   = "TRSKCHO" version:u8(2) round_trips:u8(0|1) scale:u8(0..=64, 255 none)
//!            max_bytes:u64(0 none) threshold_k:u16 threshold_n:u16 (0 0: none)
//!            nodes:u32 engine:u8*  (0 bfv, 1 ckks, 2 tfhe)
//!            bfv:u8 name* ckks:opt(name) tfhe:opt(name)
//! opt(x)   = 0 | 1 x
//! keys     = "TRSKEVK" version:u8(2) program:digest choice:blob
//!            bfv:u8 (params:blob pk:blob opt(rk:blob) opt(gk:blob))*
//!            opt(ckks params:blob pk:blob opt(rk:blob) opt(gk:blob))
//!            opt(tfhe server key:blob) transitions:u8 (name key:blob)*
//!            id:digest
//! inputs   = "TRSKINP" version:u8(2) key_set:digest context:blob count:u32 value*
//! value    = node:u32 tag:u8 count:u32 blob*
//! outputs  = "TRSKOUT" version:u8(2) key_set:digest program:digest context:blob
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
//!
//! # Examples
//!
//! ```
//! use triskel::{plan, CostModel, Error, Kind, PlanChoice, Program};
//!
//! let mut p = Program::new();
//! let x = p.input("x", Kind::Real { len: 4 })?;
//! let y = p.mul(x, x)?;
//! p.output("y", y)?;
//! let choice = plan(&p, &CostModel::builtin())?.choice();
//! let bytes = choice.to_bytes();
//! assert_eq!(&bytes[..8], b"TRSKCHO\x02");
//! assert_eq!(PlanChoice::from_bytes(&bytes, 1 << 10)?, choice);
//! // A limit below the size, or a trailing byte, is refused.
//! assert!(matches!(PlanChoice::from_bytes(&bytes, 8), Err(Error::Format(_))));
//! let mut longer = bytes.clone();
//! longer.push(0);
//! assert!(matches!(PlanChoice::from_bytes(&longer, 1 << 10), Err(Error::Format(_))));
//! # Ok::<(), triskel::Error>(())
//! ```

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
    Ciphertext as TfheBit, CompressedCiphertext, CompressedRadixCiphertext, CompressedServerKey,
    RadixCiphertext,
};

use crate::error::{Error, Result};
use crate::plan::{Engine, Placement, Plan, PlanChoice, PlanOptions};
use crate::program::{Kind, Op};
use crate::server::{BfvEval, CkksEval, EvaluationKeys, Released, TfheEval, Val};
use crate::transition::TransitionKey;

mod keys;
mod values;

pub use self::values::*;

const CHOICE_MAGIC: &[u8; 7] = b"TRSKCHO";
const KEYS_MAGIC: &[u8; 7] = b"TRSKEVK";
const INPUTS_MAGIC: &[u8; 7] = b"TRSKINP";
const OUTPUTS_MAGIC: &[u8; 7] = b"TRSKOUT";
/// Tags of seed-compressed TFHE values (module documentation).
pub(crate) const TAG_COMPRESSED_RADIX: u8 = 7;
pub(crate) const TAG_COMPRESSED_BITS: u8 = 8;
/// The version of every format of this module.
pub const WIRE_FORMAT_VERSION: u8 = 2;
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
    /// The blob that `write` appends, written in place.
    pub(crate) fn blob_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        triskel_ring::write_blob_with(&mut self.0, write);
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

fn read_context(r: &mut Reader<'_>) -> Result<Vec<u8>> {
    let context = r.blob()?;
    if context.len() > MAX_CONTEXT_BYTES {
        return bad(r.what, format!("a context above {MAX_CONTEXT_BYTES} bytes"));
    }
    Ok(context.to_vec())
}

/// Where an entry of [`EncryptedOutputs`] goes.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{attest::Identity, Client, Kind, PlainValue, PlanOptions, Program, Server, Slot};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 100 })?;
/// let (a, b) = (p.add(x, x)?, p.mul(x, x)?);
/// p.output("a", a)?;
/// p.output("b", b)?;
/// let mut client = Client::new(&p, PlanOptions::default())?;
/// let inputs = client.encrypt(&BTreeMap::from([("x".into(), PlainValue::Ints(vec![1, 2]))]))?;
/// let server = Server::new(Identity::generate()?);
/// let keys = client.evaluation_keys()?;
/// let outputs = server.run(&p, keys.choice(), keys, &inputs)?;
/// let slots: Vec<Slot> = outputs.entries().iter().map(|e| e.slot()).collect();
/// assert_eq!(slots, [Slot::Output(0), Slot::Output(1)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Output `u32` of the program, in its output order.
    Output(u32),
    /// The operand of round-trip node `u32`, for the key holder to convert.
    RoundTrip(u32),
}
