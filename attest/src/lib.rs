//! # triskel-attest
//!
//! Results attested by three post-quantum signature families at once: ML-DSA, Falcon and
//! SLH-DSA, over a SHA3-256 commitment to the result, the routing decision, the caller's
//! context and the signer's key id. A record verifies only if all three signatures verify,
//! so it stays sound as long as any one of the three schemes does.
//!
//! A server that computes on ciphertexts attests each output with
//! [`attest_computation`]: a version-2 record over the program, the key set, every input
//! ciphertext and the output ciphertext, with every digest salted by the record's nonce
//! (see [Encoding](#encoding)); [`verify_computation`] checks it.
//!
//! ```
//! use triskel_attest::{attest, verify, Identity, Route, Suite};
//!
//! let identity = Identity::generate()?;
//! let route = Route::new("bfv", "bfv-n8192-128");
//! let record = attest(&identity, b"result bytes", &route, b"alice: match #7")?;
//! let verified = verify(identity.public(), b"result bytes", &route, b"alice: match #7", &record)?;
//! assert_eq!((verified.suite, &verified.key_id), (Suite::Fips205, identity.public().key_id()));
//! assert!(verify(identity.public(), b"other bytes", &route, b"alice: match #7", &record).is_err());
//! # Ok::<(), triskel_attest::Error>(())
//! ```
//!
//! ## Suites
//!
//! An [`Identity`] holds one key pair of each family. Every receipt, bundle and identity
//! file names its [`Suite`]; new identities use suite 2, and records of suite 1 still
//! verify.
//!
//! | family | suite 2 (default) | suite 1 (old records) | public key | signature |
//! | --- | --- | --- | --- | --- |
//! | ML-DSA | ML-DSA-65, FIPS 204, pure, empty context (`pqcrypto-mldsa`) | same | 1,952 B | 3,309 B |
//! | Falcon | Falcon-512 round 3, padded to a fixed 666 B (`pqcrypto-falcon`, `falconpadded512`) | same | 897 B | 666 B |
//! | SLH-DSA | SLH-DSA-SHA2-128f, FIPS 205, pure, empty context, deterministic (`fips205`) | SPHINCS+-SHA2-128f-simple round 3.1 (not FIPS 205) (`pqcrypto-sphincsplus`) | 32 B | 17,088 B |
//!
//! **Suite 1 is SPHINCS+ round 3.1 (not FIPS 205).** FIPS 205 prepares the message
//! differently, so a FIPS 205 verifier rejects suite-1 signatures; suite 1 is kept only so
//! that records made before suite 2 stay checkable ([`Identity::generate_suite`] can still
//! make suite-1 identities, for comparisons and tests). Suite 1's commitment does not contain
//! the signer's key id; suite 2's does.
//!
//! **Standard verifiers.** In suite 2 each family signs [`signed_message`]`(commitment)`
//! as it stands: ML-DSA-65 per FIPS 204 and SLH-DSA per FIPS 205, both in pure mode with an
//! empty context string (so any FIPS 204 / FIPS 205 verifier accepts them, given the
//! message, the public key and the signature, all of which `triskel attest inspect`
//! prints), and Falcon-512 as round-3 Falcon in the padded signature encoding (FIPS 206,
//! FN-DSA, is not final). The tests check the ML-DSA signatures with the `fips204` crate and
//! the SLH-DSA signatures with RustCrypto's `slh-dsa`, two implementations independent of
//! the signing ones, and the Falcon signatures printed by `triskel attest inspect` with a
//! round-3 Falcon-512 verifier written in that test from the specification.
//!
//! **Why SLH-DSA-SHA2-128f.** The goals are one record signed in at most 20 ms and verified
//! in at most 1.5 ms. Measured on this project's machine (Intel Xeon, 2 cores, a timing
//! loop over the primitive): SHA2-128f signs in 16.8 ms and verifies in 0.99 ms with
//! `fips205` (17.3 ms and 0.86 ms with RustCrypto's `slh-dsa`), 17,088 B signatures;
//! SHA2-128s signs in 306 ms (RustCrypto's `slh-dsa`; 7,856 B signatures), 15 times over the
//! signing goal. So the smaller "s" signature is out of reach, and "f" it is. `fips205`
//! signs because its secret-key type wipes itself on drop. SLH-DSA signs deterministically
//! (FIPS 205 allows it): the signed commitment already holds a fresh 32-byte random nonce,
//! and determinism gives the known-answer test fixed signatures.
//!
//! ## Encoding
//!
//! All hashes are SHA3-256. `H(tag, ...)` means SHA3-256 over `field(tag) || ...`, where
//! `field(x) = u64le(len(x)) || x` and tags are the ASCII strings
//! `triskel-attest/v1/<name>` or `triskel-attest/v2/<name>`. Integers are little-endian.
//!
//! Records come in two versions, named by the first byte of the receipt and the version
//! byte of the bundle, which must agree. Version 1 (kinds 1 and 2, made by [`attest`] and
//! [`attest_batch`]):
//!
//! ```text
//! result_digest  = H("triskel-attest/v1/result",  field(result))
//! route_digest   = H("triskel-attest/v1/route",   field(engine) || field(params))
//! context_digest = H("triskel-attest/v1/context", field(context))
//! key_id         = H("triskel-attest/v1/key-id",  suite (1) || ML-DSA pk || Falcon pk || SLH-DSA pk)
//! commitment     = H("triskel-attest/v1/commitment",
//!                    kind (1) || suite (1) || key_id (32, suite 2 only) || subject (32) ||
//!                    route_digest (32) || context_digest (32) || timestamp_ms (u64le) || nonce (32))
//! signed message = field("triskel-attest/v1/signed-commitment") || commitment
//! ```
//!
//! `kind` is 1 for a single result, whose `subject` is its `result_digest`, and 2 for a
//! batch, whose `subject` is the batch root (see [`attest_batch`]). `timestamp_ms` is
//! milliseconds since the Unix epoch (0 if the clock is before it) and `nonce` 32 bytes
//! from the OS CSPRNG. [`commitment`] computes a single-result commitment; a known-answer
//! test fixes it.
//!
//! Version 1's digests are unsalted: whoever holds a bundle can confirm a guess of a
//! low-entropy result, route or context by hashing it. Version 2 (kind 3 only, a
//! [`Computation`] made by [`attest_computation`]) salts every digest of the bundle with
//! the record's nonce, and its commitment binds the version byte and, in both suites, the
//! key id:
//!
//! ```text
//! route_digest   = H("triskel-attest/v2/route",   nonce (32) || field(engine) || field(params))
//! context_digest = H("triskel-attest/v2/context", nonce (32) || field(context))
//! subject        = H("triskel-attest/v2/computation",
//!                    nonce (32) || program (32) || key_set (32) || u64le(number of inputs) ||
//!                    input digests (32 each, in order) || output digest (32))
//! commitment     = H("triskel-attest/v2/commitment",
//!                    version (1, = 2) || kind (1, = 3) || suite (1) || key_id (32) ||
//!                    subject (32) || route_digest (32) || context_digest (32) ||
//!                    timestamp_ms (u64le) || nonce (32))
//! ```
//!
//! `program`, `key_set` and the ciphertext digests are the caller's (for example
//! [`program_digest`] of the program and [`result_digest`] of each serialized ciphertext).
//! The signed message and the bundle digest are the same in both versions.
//! [`computation_commitment`] computes a version-2 commitment; a known-answer test fixes it.
//!
//! The commitment is built from per-field digests so that a verifier can say *which*
//! input differs ([`Error::WrongResult`] or [`Error::WrongComputation`],
//! [`Error::WrongRoute`], [`Error::WrongContext`]): the bundle carries the three digests,
//! the signed commitment binds them.
//!
//! ## Record
//!
//! A [`Record`] is a 74-byte [`Receipt`] (`version || suite || timestamp_ms ||
//! commitment || bundle_digest`) and a [`Bundle`] of [`BUNDLE_LEN`] bytes laid out as
//! [`BUNDLE_LAYOUT`]: magic `TKAB`, version, suite, kind, signer key id, nonce, subject,
//! route digest, context digest, then the ML-DSA, Falcon and SLH-DSA signatures of the
//! signed message. Both versions have this layout and these lengths; parsing refuses an
//! unknown version, a kind that its version lacks (version 1 has kinds 1 and 2, version 2
//! kind 3) and, in [`Record::from_bytes`], a receipt and a bundle of different versions
//! ([`Record::version`] gives it). `bundle_digest = H("triskel-attest/v1/bundle", bundle
//! bytes)`. The receipt can be stored or published alone; the bundle travels detached.
//! [`verify`] lists the checks in order, each with its own error, and returns a
//! [`Verified`]: the suite, the signer's key id, the signed timestamp and the commitment;
//! [`verify_computation`] runs the same checks on a computation record.
//!
//! ## Identity files
//!
//! Public: `"TRSKATPK" || version (1) || suite (1) || ML-DSA pk || Falcon pk || SLH-DSA pk
//! || checksum`; secret: `"TRSKATSK" || version || suite || the three public keys || ML-DSA
//! sk || Falcon sk || SLH-DSA sk || checksum`, where `checksum = H("triskel-attest/v1/key-file",
//! all preceding bytes)`. Loading checks exact length, magic, version, suite and checksum
//! (which only catches accidents: it has no key); loading a secret identity also checks
//! that the Falcon key satisfies the NTRU equation (a crafted key that does not could make
//! the Falcon signer loop forever), then signs a fixed message with each secret key and
//! verifies it with the matching public key, so an edited file whose keys do not belong
//! together is refused. Secret keys live in buffers
//! zeroized on drop (see [`Identity`] for the one limit); [`files::load_identity`] reads
//! the file into a buffer allocated once at its full size and refuses a file that group or
//! others may access.
//!
//! ## Batches
//!
//! [`attest_batch`] signs one record over a Merkle root of many results and returns one
//! [`InclusionProof`] per result; [`verify_batch_record`] checks the record once and
//! [`VerifiedBatch::check`] then checks that a result is the one at a given index, with
//! hashing only.
//!
//! ```text
//! leaf = H("triskel-attest/v1/merkle-leaf", field(result))
//! node = H("triskel-attest/v1/merkle-node", left (32) || right (32))
//! root = H("triskel-attest/v1/merkle-root", count (u64le) || top node (32))
//! ```
//!
//! Leaves are paired left to right, level by level; a level with an odd number of nodes
//! promotes its last node unchanged to the next level (it is never duplicated, so no two
//! batches of different contents share a root). The record's subject is `root`, which binds
//! the count. An inclusion proof is `"TKAP" || version (1) || index (u64le) || count (u64le)
//! || leaf (32) || siblings (32 each, leaf level first)`, where levels on which the node was
//! promoted have no sibling; the number of siblings follows from index and count, and
//! parsing checks it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod batch;
mod computation;
mod encoding;
mod error;
mod falcon_key;
pub mod files;
mod keys;
mod record;

pub use batch::{
    attest_batch, leaf_digest, verify_batch_item, verify_batch_record, Batch, InclusionProof,
    VerifiedBatch,
};
pub use computation::{
    attest_computation, computation_commitment, verify_computation, Computation,
};
pub use encoding::{
    context_digest, hex, program_digest, result_digest, route_digest, signed_message, Digest32,
};
pub use error::{Error, Result};
pub use keys::{
    Identity, PublicIdentity, Suite, FALCON_PK_LEN, FALCON_SIG_LEN, MLDSA_PK_LEN, MLDSA_SIG_LEN,
    PUBLIC_FILE_LEN, SECRET_FILE_LEN, SLH_PK_LEN, SLH_SIG_LEN,
};
pub use record::{
    attest, commitment, verify, Bundle, Receipt, Record, RecordKind, Route, Verified,
    BUNDLE_LAYOUT, BUNDLE_LEN, RECEIPT_LEN,
};

/// Version byte of identity files and inclusion proofs. Receipts and bundles carry the
/// record version instead, 1 or 2 ([`RecordKind::version`]).
pub const FORMAT_VERSION: u8 = 1;
