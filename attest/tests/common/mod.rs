//! Identities shared by the tests of one binary (SLH-DSA signing costs milliseconds).

#![allow(dead_code)]

use std::sync::OnceLock;

use triskel_attest::{Identity, Route};

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
