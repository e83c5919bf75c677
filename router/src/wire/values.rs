//! The formats of encrypted values: inputs, released outputs and their
//! value encodings.

use super::*;

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

pub(crate) fn lwe_blob(l: &LweCiphertext) -> Vec<u8> {
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
            let sk = keys.tfhe_compressed()?;
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
pub(crate) struct InputValue {
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
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{Client, Kind, PlainValue, PlanOptions, Program};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 100 })?;
/// let r = p.input("r", Kind::Signed { len: 2, bound: 100 })?;
/// let y = p.add(x, r)?;
/// p.output("y", y)?;
/// let mut client = Client::new(&p, PlanOptions::default())?;
/// let plain = BTreeMap::from([
///     ("x".to_string(), PlainValue::Ints(vec![1, 2])),
///     ("r".to_string(), PlainValue::Ints(vec![3, 4])),
/// ]);
/// let inputs = client.encrypt_with_context(&plain, b"job 7")?;
/// assert_eq!(inputs.key_set(), client.key_set());
/// assert_eq!(inputs.context(), b"job 7");
///
/// let bytes = inputs.to_bytes();
/// assert_eq!(triskel::EncryptedInputs::from_bytes(&bytes, 1 << 30)?, inputs);
/// assert!(triskel::EncryptedInputs::from_bytes(&bytes[..bytes.len() - 1], 1 << 30).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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

/// One released value and the server's record of it.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::attest::{verify_computation, Computation, Identity};
/// use triskel::{Client, Kind, PlainValue, PlanOptions, Program, Server, Slot};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 100 })?;
/// let y = p.add(x, x)?;
/// p.output("y", y)?;
/// let mut client = Client::new(&p, PlanOptions::default())?;
/// let inputs = client.encrypt(&BTreeMap::from([("x".into(), PlainValue::Ints(vec![1, 2]))]))?;
/// let server = Server::new(Identity::generate()?);
/// let keys = client.evaluation_keys()?;
/// let outputs = server.run(&p, keys.choice(), keys, &inputs)?;
/// let entry = &outputs.entries()[0];
/// assert_eq!(entry.slot(), Slot::Output(0));
/// // The record binds the program, the key set, the inputs and this entry.
/// let computation = Computation {
///     program: triskel::attest::program_digest(&p.to_bytes()),
///     key_set: *client.key_set(),
///     inputs: &inputs.digests(),
///     output: entry.digest(),
/// };
/// let route = triskel::route(client.plan());
/// let public = server.identity().public();
/// verify_computation(public, &computation, &route, inputs.context(), entry.record())?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use triskel::{attest::Identity, Client, EncryptedOutputs, Kind, PlainValue, PlanOptions};
/// use triskel::{Program, Server};
///
/// let mut p = Program::new();
/// let x = p.input("x", Kind::Signed { len: 2, bound: 100 })?;
/// let y = p.mul(x, x)?;
/// p.output("y", y)?;
/// let mut client = Client::new(&p, PlanOptions::default())?;
/// let inputs = client.encrypt(&BTreeMap::from([("x".into(), PlainValue::Ints(vec![-5, 6]))]))?;
/// let server = Server::new(Identity::generate()?);
/// let keys = client.evaluation_keys()?;
/// let outputs = server.run(&p, keys.choice(), keys, &inputs)?;
/// assert!(outputs.is_final());
/// assert_eq!(outputs.key_set(), client.key_set());
///
/// let loaded = EncryptedOutputs::from_bytes(&outputs.to_bytes(), 1 << 30)?;
/// assert_eq!(loaded, outputs);
/// let plain = client.decrypt(&loaded, server.identity().public())?;
/// assert_eq!(plain.get("y"), Some(&PlainValue::Ints(vec![25, 36])));
/// // Records of another server do not verify.
/// let stranger = Identity::generate()?;
/// assert!(client.decrypt(&loaded, stranger.public()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
