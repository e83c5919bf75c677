//! Computation records (version 2): one output of a program run on ciphertexts.

use crate::encoding::{Digest32, Hasher, TAG_COMPUTATION_V2};
use crate::record::{check, seal, unsigned};
use crate::{Identity, PublicIdentity, Record, RecordKind, Result, Route, Verified};

/// What a server vouches for when it computes one output on ciphertexts: which program
/// ran under which key set, on which inputs, giving which output.
///
/// The ciphertext digests are the caller's to compute (for example [`crate::result_digest`]
/// of each serialized ciphertext); the record salts them with its nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Computation<'a> {
    /// The digest of the program that ran (for example [`crate::program_digest`]).
    pub program: Digest32,
    /// The id of the evaluation key set the server computed under.
    pub key_set: Digest32,
    /// The digest of every input ciphertext, in the program's input order.
    pub inputs: &'a [Digest32],
    /// The digest of the output ciphertext.
    pub output: Digest32,
}

impl Computation<'_> {
    /// The record's subject: `H(tag "v2/computation", nonce || program || key_set ||
    /// u64le(number of inputs) || inputs || output)`.
    fn subject(&self, nonce: &Digest32) -> Digest32 {
        let mut h = Hasher::new(TAG_COMPUTATION_V2);
        h.fixed(nonce)
            .fixed(&self.program)
            .fixed(&self.key_set)
            .fixed(&(self.inputs.len() as u64).to_le_bytes());
        for input in self.inputs {
            h.fixed(input);
        }
        h.fixed(&self.output).finish()
    }
}

/// The commitment of a computation record by `signer` to `computation`, `route`,
/// `context`, `timestamp_ms` and `nonce`, exactly as documented in the crate docs
/// (version 2: every digest salted with `nonce`).
pub fn computation_commitment(
    signer: &PublicIdentity,
    computation: &Computation<'_>,
    route: &Route,
    context: &[u8],
    timestamp_ms: u64,
    nonce: &Digest32,
) -> Digest32 {
    let subject = |n: &Digest32| computation.subject(n);
    unsigned(
        signer,
        RecordKind::Computation,
        subject,
        route,
        context,
        *nonce,
    )
    .commitment(timestamp_ms)
}

/// Attests one output of a computation on ciphertexts: a version-2 record of kind
/// [`RecordKind::Computation`] that commits to `computation`, `route` and `context` (plus
/// the signer's key id and the current time), every digest salted with a fresh 32-byte
/// nonce, so that the bundle does not let anyone confirm a guess of the route, the
/// context or the ciphertexts by hashing, and signs the commitment with all three schemes.
pub fn attest_computation(
    identity: &Identity,
    computation: &Computation<'_>,
    route: &Route,
    context: &[u8],
) -> Result<Record> {
    let subject = |n: &Digest32| computation.subject(n);
    seal(identity, RecordKind::Computation, subject, route, context)
}

/// Verifies a computation record against the computation, route and context the verifier
/// holds, under `public`, and returns what it vouches for.
///
/// The checks and their order are those of [`crate::verify`], with a computation record
/// (version 2) expected at step 4 (a version-1 record is [`crate::Error::WrongKind`]) and
/// [`crate::Error::WrongComputation`] instead of [`crate::Error::WrongResult`] at step 6
/// when the program, key set, inputs (any one, their order or their number) or output
/// differ. All digests are salted with the bundle's nonce, so a bundle whose nonce was
/// changed fails at that step too.
pub fn verify_computation(
    public: &PublicIdentity,
    computation: &Computation<'_>,
    route: &Route,
    context: &[u8],
    record: &Record,
) -> Result<Verified> {
    let subject = |n: &Digest32| computation.subject(n);
    check(
        public,
        RecordKind::Computation,
        Some(&subject),
        route,
        context,
        record,
    )
}
