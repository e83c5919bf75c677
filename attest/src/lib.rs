//! # triskel-attest
//!
//! Results attested by three post-quantum signature families at once: ML-DSA, Falcon and
//! SLH-DSA, over a SHA3-256 commitment to the result, the routing decision and the
//! caller's context. A record verifies only if all three signatures verify, so it stays
//! sound as long as any one of the three schemes does.
//!
//! ```
//! use triskel_attest::{attest, verify, Identity, Route};
//!
//! let identity = Identity::generate();
//! let route = Route::new("bfv", "bfv-n8192-128");
//! let record = attest(&identity, b"result bytes", &route, b"alice: match #7")?;
//! verify(identity.public(), b"result bytes", &route, b"alice: match #7", &record)?;
//! assert!(verify(identity.public(), b"other bytes", &route, b"alice: match #7", &record).is_err());
//! # Ok::<(), triskel_attest::Error>(())
//! ```
//!
//! ## Suite 1
//!
//! An [`Identity`] holds one key pair of each family (suite id 1):
//!
//! | family | scheme | public key | signature |
//! | --- | --- | --- | --- |
//! | ML-DSA (FIPS 204) | ML-DSA-65 (`pqcrypto-mldsa`) | 1,952 B | 3,309 B |
//! | Falcon | Falcon-512, padded to a fixed 666 B (`pqcrypto-falcon`, `falconpadded512`) | 897 B | 666 B |
//! | SLH-DSA (FIPS 205) | SPHINCS+-SHA2-128f-simple (`pqcrypto-sphincsplus`) | 32 B | 17,088 B |
//!
//! **Why SHA2-128f.** The goals are one record signed in at most 20 ms and verified in at
//! most 1.5 ms. The "s" variants sign in about 330 ms (7,856 B signatures): 16 times over
//! budget, so the larger 17,088 B "f" signature is forced. Between the two "f" variants,
//! measured on this project's machine (Intel Xeon, 2 cores, `pqcrypto`'s AVX2
//! code): SHA2-128f signs in about 10.5 ms and verifies in 0.68 ms, SHAKE-128f in about
//! 15.3 ms and 1.1 ms, for the same sizes. SHA2 meets both goals and the batch goal of
//! 20 us per result at 1,024 results with some margin (figures in BENCHMARKS.md); SHAKE
//! would leave none.
//!
//! Standards status of the three implementations: `pqcrypto-mldsa` is FIPS 204 ML-DSA
//! (signing with the empty context string). `pqcrypto-falcon` is round-3 Falcon; FIPS 206
//! (FN-DSA) is not final yet. `pqcrypto-sphincsplus` is SPHINCS+ round 3.1 with the
//! parameters FIPS 205 adopted as SLH-DSA-SHA2-128f, but FIPS 205 final prepares the
//! message differently (pure SLH-DSA prefixes a domain separator and context), so these
//! signatures do not verify under a FIPS 205 implementation. No `pqcrypto` crate for FIPS
//! 205 final exists today (`pqcrypto-slhdsa` is not published); moving to one is a new
//! suite id with the same record shape.
//!
//! ## Encoding
//!
//! All hashes are SHA3-256. `H(tag, ...)` means SHA3-256 over `field(tag) || ...`, where
//! `field(x) = u64le(len(x)) || x` and tags are the ASCII strings
//! `triskel-attest/v1/<name>`. Integers are little-endian.
//!
//! ```text
//! result_digest  = H("triskel-attest/v1/result",  field(result))
//! route_digest   = H("triskel-attest/v1/route",   field(engine) || field(params))
//! context_digest = H("triskel-attest/v1/context", field(context))
//! commitment     = H("triskel-attest/v1/commitment",
//!                    kind (1) || suite (1) || subject (32) || route_digest (32) ||
//!                    context_digest (32) || timestamp_ms (u64le) || nonce (32))
//! signed message = field("triskel-attest/v1/signed-commitment") || commitment
//! ```
//!
//! `kind` is 1 for a single result, whose `subject` is its `result_digest`, and 2 for a
//! batch, whose `subject` is the batch root (see [`attest_batch`]). `timestamp_ms` is
//! milliseconds since the Unix epoch (0 if the clock is before it) and `nonce` 32 bytes
//! from the OS CSPRNG. [`commitment`] computes a single-result commitment; a known-answer
//! test fixes it.
//!
//! The commitment is built from per-field digests so that a verifier can say *which*
//! input differs ([`Error::WrongResult`], [`Error::WrongRoute`], [`Error::WrongContext`]):
//! the bundle carries the three digests, the signed commitment binds them.
//!
//! ## Record
//!
//! A [`Record`] is a 74-byte [`Receipt`] (`version || suite || timestamp_ms ||
//! commitment || bundle_digest`) and a [`Bundle`] of [`BUNDLE_LEN`] bytes laid out as
//! [`BUNDLE_LAYOUT`]: magic `TKAB`, version, suite, kind, signer key id, nonce, subject,
//! route digest, context digest, then the ML-DSA, Falcon and SLH-DSA signatures of the
//! signed message. `bundle_digest = H("triskel-attest/v1/bundle", bundle bytes)`. The
//! receipt can be stored or published alone; the bundle travels detached. [`verify`]
//! lists the checks in order, each with its own error.
//!
//! ## Identity files
//!
//! Public: `"TRSKATPK" || version (1) || suite (1) || ML-DSA pk || Falcon pk || SLH-DSA pk
//! || checksum`; secret: `"TRSKATSK" || version || suite || the three public keys || ML-DSA
//! sk || Falcon sk || SLH-DSA sk || checksum`, where `checksum = H("triskel-attest/v1/key-file",
//! all preceding bytes)`. Loading checks exact length, magic, version, suite and checksum.
//! Secret keys live in buffers zeroized on drop (see [`Identity`] for the one limit).
//!
//! ## Batches
//!
//! [`attest_batch`] signs one record over a Merkle root of many results and returns one
//! [`InclusionProof`] per result; [`verify_batch_record`] checks the record once and
//! [`VerifiedBatch::check`] then checks each result with hashing only.
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
mod encoding;
mod error;
pub mod files;
mod keys;
mod record;

pub use batch::{
    attest_batch, leaf_digest, verify_batch_item, verify_batch_record, Batch, InclusionProof,
    VerifiedBatch,
};
pub use encoding::{commitment, context_digest, hex, result_digest, route_digest, Digest32};
pub use error::{Error, Result};
pub use keys::{
    Identity, PublicIdentity, FALCON_PK_LEN, FALCON_SIG_LEN, MLDSA_PK_LEN, MLDSA_SIG_LEN,
    PUBLIC_FILE_LEN, SECRET_FILE_LEN, SLH_PK_LEN, SLH_SIG_LEN,
};
pub use record::{
    attest, verify, Bundle, Receipt, Record, RecordKind, Route, BUNDLE_LAYOUT, BUNDLE_LEN,
    RECEIPT_LEN,
};

/// Version byte of every serialized format of this crate.
pub const FORMAT_VERSION: u8 = 1;

/// Suite id: ML-DSA-65 + Falcon-512 (padded) + SPHINCS+-SHA2-128f-simple, SHA3-256.
pub const SUITE_ID: u8 = 1;
