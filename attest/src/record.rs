//! Records: a 74-byte receipt plus a detached bundle of three signatures.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::encoding::{
    context_digest, result_digest, route_digest, salted_context_digest, salted_route_digest,
    signed_message, Digest32, Hasher, Reader, TAG_BUNDLE, TAG_COMMITMENT, TAG_COMMITMENT_V2,
};
use crate::keys::{FALCON_SIG_LEN, MLDSA_SIG_LEN, SLH_SIG_LEN};
use crate::{Error, Identity, PublicIdentity, Result, Suite};

/// What a record attests: one result, the Merkle root of a batch of results, or one
/// output of a computation on ciphertexts.
///
/// The kind fixes the record version: single and batch records are version 1,
/// computation records version 2 (see [`RecordKind::version`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordKind {
    /// The record commits to one result (version 1).
    Single = 1,
    /// The record commits to the Merkle root of a batch (version 1, see
    /// [`crate::attest_batch`]).
    Batch = 2,
    /// The record commits to a program, key set, input ciphertexts and output ciphertext,
    /// with every digest salted by the nonce (version 2, see [`crate::attest_computation`]).
    Computation = 3,
}

impl RecordKind {
    fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            1 => Some(RecordKind::Single),
            2 => Some(RecordKind::Batch),
            3 => Some(RecordKind::Computation),
            _ => None,
        }
    }

    /// The record format version that has this kind: 1 for [`RecordKind::Single`] and
    /// [`RecordKind::Batch`], 2 for [`RecordKind::Computation`].
    pub fn version(self) -> u8 {
        match self {
            RecordKind::Single | RecordKind::Batch => 1,
            RecordKind::Computation => 2,
        }
    }
}

/// Reads a record version byte, which must be 1 or 2.
fn record_version(r: &mut Reader<'_>) -> Result<u8> {
    let version = r.u8("version")?;
    if matches!(version, 1 | 2) {
        Ok(version)
    } else {
        Err(r.error(format!("unsupported version {version} (known: 1, 2)")))
    }
}

/// Bytes of a serialized [`Receipt`].
pub const RECEIPT_LEN: usize = 1 + 1 + 8 + 32 + 32;

/// The small fixed-size part of a record, which can be stored or published on its own.
///
/// Layout (74 bytes): `version (1) || suite (1) || timestamp_ms (u64 LE, 8) ||
/// commitment (32) || bundle_digest (32)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Receipt {
    /// The record format version (1 or 2), the same as the bundle's.
    pub version: u8,
    /// The signature suite of the record.
    pub suite: Suite,
    /// Milliseconds since the Unix epoch (UTC) at attestation time.
    pub timestamp_ms: u64,
    /// The SHA3-256 commitment the three signatures sign.
    pub commitment: Digest32,
    /// [`Bundle::digest`] of the signature bundle issued with this receipt.
    pub bundle_digest: Digest32,
}

impl Receipt {
    /// Serializes the receipt to its 74 bytes.
    pub fn to_bytes(&self) -> [u8; RECEIPT_LEN] {
        let mut out = [0u8; RECEIPT_LEN];
        out[0] = self.version;
        out[1] = self.suite.id();
        out[2..10].copy_from_slice(&self.timestamp_ms.to_le_bytes());
        out[10..42].copy_from_slice(&self.commitment);
        out[42..74].copy_from_slice(&self.bundle_digest);
        out
    }

    /// Parses a receipt, checking its length, version (1 or 2) and suite.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new("receipt", bytes);
        r.expect_len(RECEIPT_LEN)?;
        let receipt = Receipt {
            version: record_version(&mut r)?,
            suite: r.suite()?,
            timestamp_ms: r.u64("timestamp")?,
            commitment: r.array32("commitment")?,
            bundle_digest: r.array32("bundle digest")?,
        };
        r.finish()?;
        Ok(receipt)
    }
}

const BUNDLE_MAGIC: &[u8; 4] = b"TKAB";

/// Byte ranges of the fields of a serialized [`Bundle`], in order: `(name, start, end)`.
pub const BUNDLE_LAYOUT: [(&str, usize, usize); 12] = {
    const NAMES: [&str; 12] = [
        "magic",
        "version",
        "suite",
        "kind",
        "key_id",
        "nonce",
        "subject",
        "route_digest",
        "context_digest",
        "mldsa_signature",
        "falcon_signature",
        "slhdsa_signature",
    ];
    const LENS: [usize; 12] = [
        4,
        1,
        1,
        1,
        32,
        32,
        32,
        32,
        32,
        MLDSA_SIG_LEN,
        FALCON_SIG_LEN,
        SLH_SIG_LEN,
    ];
    let mut out = [("", 0, 0); 12];
    let mut start = 0;
    let mut i = 0;
    while i < 12 {
        out[i] = (NAMES[i], start, start + LENS[i]);
        start += LENS[i];
        i += 1;
    }
    out
};

/// Bytes of a serialized [`Bundle`].
pub const BUNDLE_LEN: usize = BUNDLE_LAYOUT[11].2;

/// The detached part of a record: the signer's key id, the nonce, the digests the
/// commitment is built from, and the three signatures over the commitment.
///
/// Its byte layout is [`BUNDLE_LAYOUT`] in both record versions; `subject` is the result
/// digest of a single record, the Merkle root of a batch record or the computation digest
/// of a computation record. The version byte follows from the kind
/// ([`RecordKind::version`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Bundle {
    suite: Suite,
    kind: RecordKind,
    key_id: Digest32,
    nonce: Digest32,
    subject: Digest32,
    route_digest: Digest32,
    context_digest: Digest32,
    mldsa: Vec<u8>,
    falcon: Vec<u8>,
    slh: Vec<u8>,
}

impl Bundle {
    /// The signature suite of the record.
    pub fn suite(&self) -> Suite {
        self.suite
    }

    /// Whether the record attests one result, a batch root or a computation.
    pub fn kind(&self) -> RecordKind {
        self.kind
    }

    /// The record format version, 1 or 2 (the kind's [`RecordKind::version`]).
    pub fn version(&self) -> u8 {
        self.kind.version()
    }

    /// The key id of the identity that signed.
    pub fn key_id(&self) -> &Digest32 {
        &self.key_id
    }

    /// The 32-byte random nonce of the commitment.
    pub fn nonce(&self) -> &Digest32 {
        &self.nonce
    }

    /// The result digest (single record), Merkle root (batch record) or salted computation
    /// digest (computation record).
    pub fn subject(&self) -> &Digest32 {
        &self.subject
    }

    /// The digest of the attested route: `H(tag "route", ...)` in version 1, salted with
    /// the nonce in version 2.
    pub fn route_digest(&self) -> &Digest32 {
        &self.route_digest
    }

    /// The digest of the attested caller context: `H(tag "context", ...)` in version 1,
    /// salted with the nonce in version 2.
    pub fn context_digest(&self) -> &Digest32 {
        &self.context_digest
    }

    /// The ML-DSA, Falcon and SLH-DSA signatures, in the order of [`Suite::algorithms`];
    /// each signs [`signed_message`]`(commitment)`.
    pub fn signatures(&self) -> [&[u8]; 3] {
        [&self.mldsa, &self.falcon, &self.slh]
    }

    /// The commitment this bundle's fields and `timestamp_ms` give (see the crate docs):
    /// in version 1, suite 2 binds the signer's key id and suite 1 does not; version 2
    /// binds the version byte and always the key id.
    pub fn commitment(&self, timestamp_ms: u64) -> Digest32 {
        let mut h;
        if self.version() == 1 {
            h = Hasher::new(TAG_COMMITMENT);
            h.fixed(&[self.kind as u8, self.suite.id()]);
            if self.suite != Suite::Sphincs31 {
                h.fixed(&self.key_id);
            }
        } else {
            h = Hasher::new(TAG_COMMITMENT_V2);
            h.fixed(&[self.version(), self.kind as u8, self.suite.id()])
                .fixed(&self.key_id);
        }
        h.fixed(&self.subject)
            .fixed(&self.route_digest)
            .fixed(&self.context_digest)
            .fixed(&timestamp_ms.to_le_bytes())
            .fixed(&self.nonce)
            .finish()
    }

    /// `H(tag "bundle", bundle bytes)`: what the receipt's `bundle_digest` holds.
    pub fn digest(&self) -> Digest32 {
        Hasher::new(TAG_BUNDLE).fixed(&self.to_bytes()).finish()
    }

    /// Serializes the bundle ([`BUNDLE_LEN`] bytes).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(BUNDLE_LEN);
        out.extend_from_slice(BUNDLE_MAGIC);
        out.extend_from_slice(&[self.version(), self.suite.id(), self.kind as u8]);
        for part in [
            &self.key_id,
            &self.nonce,
            &self.subject,
            &self.route_digest,
            &self.context_digest,
        ] {
            out.extend_from_slice(part);
        }
        out.extend_from_slice(&self.mldsa);
        out.extend_from_slice(&self.falcon);
        out.extend_from_slice(&self.slh);
        out
    }

    /// Parses a bundle, checking its length, magic, version, suite and kind (which must
    /// exist in that version). Signatures are only checked by verification.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new("bundle", bytes);
        r.expect_len(BUNDLE_LEN)?;
        r.expect_magic(BUNDLE_MAGIC)?;
        let version = record_version(&mut r)?;
        let suite = r.suite()?;
        let kind_byte = r.u8("kind")?;
        let kind = RecordKind::from_byte(kind_byte)
            .ok_or_else(|| r.error(format!("unknown record kind {kind_byte}")))?;
        if kind.version() != version {
            return Err(r.error(format!(
                "record kind {kind_byte} does not exist in version {version}"
            )));
        }
        let bundle = Bundle {
            suite,
            kind,
            key_id: r.array32("key id")?,
            nonce: r.array32("nonce")?,
            subject: r.array32("subject")?,
            route_digest: r.array32("route digest")?,
            context_digest: r.array32("context digest")?,
            mldsa: r.take(MLDSA_SIG_LEN, "ML-DSA signature")?.to_vec(),
            falcon: r.take(FALCON_SIG_LEN, "Falcon signature")?.to_vec(),
            slh: r.take(SLH_SIG_LEN, "SLH-DSA signature")?.to_vec(),
        };
        r.finish()?;
        Ok(bundle)
    }
}

impl std::fmt::Debug for Bundle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bundle")
            .field("version", &self.version())
            .field("suite", &self.suite)
            .field("kind", &self.kind)
            .field("key_id", &crate::hex(&self.key_id))
            .field("nonce", &crate::hex(&self.nonce))
            .field("subject", &crate::hex(&self.subject))
            .finish_non_exhaustive()
    }
}

/// A signed attestation: the receipt and its (possibly detached) signature bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The 74-byte receipt.
    pub receipt: Receipt,
    /// The signature bundle.
    pub bundle: Bundle,
}

impl Record {
    /// `receipt bytes || bundle bytes`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.receipt.to_bytes().to_vec();
        out.extend_from_slice(&self.bundle.to_bytes());
        out
    }

    /// The record format version (1 or 2), as the bundle gives it.
    pub fn version(&self) -> u8 {
        self.bundle.version()
    }

    /// Parses `receipt bytes || bundle bytes`; receipt and bundle must name the same
    /// version.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() != RECEIPT_LEN + BUNDLE_LEN {
            return Err(Error::malformed(
                "record",
                format!(
                    "expected {} bytes, got {}",
                    RECEIPT_LEN + BUNDLE_LEN,
                    bytes.len()
                ),
            ));
        }
        let (receipt, bundle) = bytes.split_at(RECEIPT_LEN);
        Record::from_parts(Receipt::from_bytes(receipt)?, Bundle::from_bytes(bundle)?)
    }

    /// Joins a parsed receipt and bundle, which must name the same version.
    pub(crate) fn from_parts(receipt: Receipt, bundle: Bundle) -> Result<Self> {
        if receipt.version != bundle.version() {
            return Err(Error::malformed(
                "record",
                format!(
                    "receipt version {} differs from bundle version {}",
                    receipt.version,
                    bundle.version()
                ),
            ));
        }
        Ok(Record { receipt, bundle })
    }
}

/// A routing decision: which engine ran the work under which parameter set.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Route {
    /// Engine name, e.g. `"bfv"`.
    pub engine: String,
    /// Parameter-set id, e.g. `"bfv-n8192-128"`.
    pub params: String,
}

impl Route {
    /// A route from an engine name and a parameter-set id.
    pub fn new(engine: impl Into<String>, params: impl Into<String>) -> Self {
        Route {
            engine: engine.into(),
            params: params.into(),
        }
    }
}

/// What a successful verification vouches for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The signature suite of the record (suite 1 is SPHINCS+ round 3.1, not FIPS 205).
    pub suite: Suite,
    /// The signer's key id (equal to the verifying identity's).
    pub key_id: Digest32,
    /// Milliseconds since the Unix epoch (UTC) at attestation time, as signed.
    pub timestamp_ms: u64,
    /// The signed commitment.
    pub commitment: Digest32,
}

impl Bundle {
    /// The route digest of this bundle's version (salted with its nonce in version 2).
    fn route_digest_of(&self, route: &Route) -> Digest32 {
        match self.version() {
            1 => route_digest(route),
            _ => salted_route_digest(&self.nonce, route),
        }
    }

    /// The context digest of this bundle's version (salted with its nonce in version 2).
    fn context_digest_of(&self, context: &[u8]) -> Digest32 {
        match self.version() {
            1 => context_digest(context),
            _ => salted_context_digest(&self.nonce, context),
        }
    }
}

/// A bundle without signatures yet, for the commitment; `subject` is given the nonce.
pub(crate) fn unsigned(
    identity: &PublicIdentity,
    kind: RecordKind,
    subject: impl FnOnce(&Digest32) -> Digest32,
    route: &Route,
    context: &[u8],
    nonce: Digest32,
) -> Bundle {
    let mut bundle = Bundle {
        suite: identity.suite(),
        kind,
        key_id: *identity.key_id(),
        nonce,
        subject: subject(&nonce),
        route_digest: [0; 32],
        context_digest: [0; 32],
        mldsa: Vec::new(),
        falcon: Vec::new(),
        slh: Vec::new(),
    };
    bundle.route_digest = bundle.route_digest_of(route);
    bundle.context_digest = bundle.context_digest_of(context);
    bundle
}

/// The commitment of a single-result record by `signer` (suite 2 or 1, as the identity's)
/// to `result`, `route`, `context`, `timestamp_ms` and `nonce`, exactly as documented in
/// the crate docs.
pub fn commitment(
    signer: &PublicIdentity,
    result: &[u8],
    route: &Route,
    context: &[u8],
    timestamp_ms: u64,
    nonce: &Digest32,
) -> Digest32 {
    let subject = |_: &Digest32| result_digest(result);
    unsigned(signer, RecordKind::Single, subject, route, context, *nonce).commitment(timestamp_ms)
}

/// Signs a commitment to `subject` (computed from the nonce), `route` and `context` with a
/// fresh nonce and the current time.
pub(crate) fn seal(
    identity: &Identity,
    kind: RecordKind,
    subject: impl FnOnce(&Digest32) -> Digest32,
    route: &Route,
    context: &[u8],
) -> Result<Record> {
    let mut nonce = [0u8; 32];
    getrandom::fill(&mut nonce).map_err(|e| Error::Random(e.to_string()))?;
    let timestamp_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut bundle = unsigned(identity.public(), kind, subject, route, context, nonce);
    let commitment = bundle.commitment(timestamp_ms);
    let sigs = identity.sign(&signed_message(&commitment))?;
    (bundle.mldsa, bundle.falcon, bundle.slh) = (sigs.mldsa, sigs.falcon, sigs.slh);
    let receipt = Receipt {
        version: bundle.version(),
        suite: bundle.suite,
        timestamp_ms,
        commitment,
        bundle_digest: bundle.digest(),
    };
    Ok(Record { receipt, bundle })
}

/// Runs every check of a record except the subject's, which the caller passes when it
/// can (`Some` of a function of the bundle's nonce: the result digest of a single record,
/// the computation digest of a computation record).
pub(crate) fn check(
    public: &PublicIdentity,
    kind: RecordKind,
    subject: Option<&dyn Fn(&Digest32) -> Digest32>,
    route: &Route,
    context: &[u8],
    record: &Record,
) -> Result<Verified> {
    let (receipt, bundle) = (&record.receipt, &record.bundle);
    if bundle.digest() != receipt.bundle_digest {
        return Err(Error::BundleDigestMismatch);
    }
    if receipt.version != bundle.version() {
        return Err(Error::VersionMismatch);
    }
    if receipt.suite != bundle.suite {
        return Err(Error::SuiteMismatch);
    }
    if bundle.kind != kind {
        return Err(Error::WrongKind {
            expected: kind,
            found: bundle.kind,
        });
    }
    if bundle.key_id != *public.key_id() {
        return Err(Error::WrongIdentity);
    }
    // The key's suite decides how the third signature is checked, so a record naming
    // another suite would be reported under a name its signature does not have.
    if bundle.suite != public.suite() {
        return Err(Error::SuiteMismatch);
    }
    if subject.is_some_and(|s| s(&bundle.nonce) != bundle.subject) {
        return Err(match kind {
            RecordKind::Computation => Error::WrongComputation,
            RecordKind::Single | RecordKind::Batch => Error::WrongResult,
        });
    }
    if bundle.route_digest_of(route) != bundle.route_digest {
        return Err(Error::WrongRoute);
    }
    if bundle.context_digest_of(context) != bundle.context_digest {
        return Err(Error::WrongContext);
    }
    let commitment = bundle.commitment(receipt.timestamp_ms);
    if commitment != receipt.commitment {
        return Err(Error::CommitmentMismatch);
    }
    public.verify(&signed_message(&commitment), bundle.signatures())?;
    Ok(Verified {
        suite: bundle.suite,
        key_id: bundle.key_id,
        timestamp_ms: receipt.timestamp_ms,
        commitment,
    })
}

/// Attests one result: commits to `result`, `route` and `context` (plus the signer's key
/// id, the current time and a fresh 32-byte nonce) and signs the commitment with all
/// three schemes.
///
/// Takes about as long as one SLH-DSA signature.
pub fn attest(identity: &Identity, result: &[u8], route: &Route, context: &[u8]) -> Result<Record> {
    let subject = |_: &Digest32| result_digest(result);
    seal(identity, RecordKind::Single, subject, route, context)
}

/// Verifies a single-result record against the result, route and context the verifier
/// holds, under `public`, and returns what it vouches for (suite, signer, time).
///
/// Records of both suites verify; [`Verified::suite`] says which one a record used.
/// Checks run in this order, and the first failure is returned:
/// 1. the bundle digest matches the receipt ([`Error::BundleDigestMismatch`]);
/// 2. receipt and bundle name the same record version ([`Error::VersionMismatch`]);
/// 3. receipt, bundle and public identity name the same suite ([`Error::SuiteMismatch`]);
/// 4. the record is a single-result record, hence of version 1 ([`Error::WrongKind`]);
/// 5. the bundle names `public` as signer ([`Error::WrongIdentity`]);
/// 6. result, route and context digests match the bundle's ([`Error::WrongResult`],
///    [`Error::WrongRoute`], [`Error::WrongContext`]);
/// 7. the commitment recomputed from them, the key id (suite 2), the receipt's timestamp
///    and the bundle's nonce equals the receipt's ([`Error::CommitmentMismatch`]);
/// 8. the ML-DSA, Falcon and SLH-DSA signatures over it verify
///    ([`Error::BadMlDsaSignature`], [`Error::BadFalconSignature`],
///    [`Error::BadSlhDsaSignature`]).
pub fn verify(
    public: &PublicIdentity,
    result: &[u8],
    route: &Route,
    context: &[u8],
    record: &Record,
) -> Result<Verified> {
    let subject = result_digest(result);
    check(
        public,
        RecordKind::Single,
        Some(&|_: &Digest32| subject),
        route,
        context,
        record,
    )
}
