//! Identities shared by the tests of one binary (SLH-DSA signing costs milliseconds).

#![allow(dead_code)]

use std::sync::OnceLock;

use sha3::{Digest, Sha3_256};
use triskel_attest::{
    Bundle, Error, Identity, PublicIdentity, Receipt, Record, Route, Suite, Verified, BUNDLE_LAYOUT,
};

/// The identity most tests sign with.
pub fn alice() -> &'static Identity {
    static ID: OnceLock<Identity> = OnceLock::new();
    ID.get_or_init(|| Identity::generate().expect("generate"))
}

/// A second, unrelated identity.
pub fn bob() -> &'static Identity {
    static ID: OnceLock<Identity> = OnceLock::new();
    ID.get_or_init(|| Identity::generate().expect("generate"))
}

/// The route most tests use.
pub fn route() -> Route {
    Route::new("bfv", "bfv-n8192-128")
}

/// Returns `bytes` with byte `i` xor-ed with `mask`.
pub fn flipped(bytes: &[u8], i: usize, mask: u8) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out[i] ^= mask;
    out
}

/// Deterministic pseudo-random bytes (xorshift), for garbage inputs.
pub fn garbage(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The byte range `(start, end)` of the bundle field `name`.
pub fn field(name: &str) -> (usize, usize) {
    let (_, start, end) = BUNDLE_LAYOUT
        .iter()
        .find(|(n, _, _)| *n == name)
        .expect("known field");
    (*start, *end)
}

/// `u64le(len(x)) || x`.
pub fn length_prefixed(x: &[u8]) -> Vec<u8> {
    [&(x.len() as u64).to_le_bytes()[..], x].concat()
}

/// SHA3-256 of `field(tag) || field(f) for f in fields || fixed...`, spelled out
/// independently of the crate.
pub fn tagged_hash(tag: &str, fields: &[&[u8]], fixed: &[&[u8]]) -> [u8; 32] {
    let mut bytes = length_prefixed(tag.as_bytes());
    for f in fields {
        bytes.extend_from_slice(&length_prefixed(f));
    }
    for f in fixed {
        bytes.extend_from_slice(f);
    }
    Sha3_256::digest(&bytes).into()
}

/// The public identity in `tests/data/<file>`.
pub fn public(file: &str) -> PublicIdentity {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    PublicIdentity::from_bytes(&std::fs::read(path).expect("fixture")).expect("public identity")
}

/// A record of `bundle` under `receipt` with the bundle digest recomputed to match, as an
/// attacker replacing both would do.
pub fn resealed(mut receipt: Receipt, bundle: &[u8]) -> Result<Record, Error> {
    let bundle = Bundle::from_bytes(bundle)?;
    receipt.bundle_digest = bundle.digest();
    Ok(Record { receipt, bundle })
}

/// What `record`, signed by alice in suite 2, vouches for.
pub fn signed_by_alice(record: &Record) -> Verified {
    Verified {
        suite: Suite::Fips205,
        key_id: *alice().public().key_id(),
        timestamp_ms: record.receipt.timestamp_ms,
        commitment: record.receipt.commitment,
    }
}
