#![no_main]
//! Every TFHE loader on arbitrary bytes: client keys, server keys, shortint
//! blocks, booleans, radix integers, GLWE keys, GLWE ciphertexts and GGSWs,
//! and the seed-compressed blocks, booleans, integers, GLWEs and GGSWs must
//! load or return an error, never panic, hang or allocate without bound.
//! The first byte picks the loader (mod 13). An accepted object re-encodes to
//! exactly its bytes and is used: a client or GLWE key encrypts and decrypts,
//! a block, boolean, integer or GLWE (a compressed one decompressed) decrypts
//! under the fixture's key, a GGSW's (decompressed) external product of a
//! fixture GLWE decrypts. Values carry a key identity: one other than the
//! fixture key's (bytes can name any) must be refused with `KeyMismatch`,
//! the fixture key's must be used without error.

use libfuzzer_sys::fuzz_target;
use triskel_ring::KeyId;
use triskel_tfhe::{
    BoolCiphertext, Ciphertext, ClientKey, CompressedBoolCiphertext, CompressedCiphertext,
    CompressedGgswCiphertext, CompressedGlweCiphertext, CompressedRadixCiphertext,
    CompressedServerKey, Error, GgswCiphertext, GlweCiphertext, GlweSecretKey, RadixCiphertext,
    ServerKey,
};

/// Message modulus of the GLWE checks.
const P: u64 = 16;

/// The use `r` of a loaded value of identity `found` with a fixture key of
/// identity `key`: refused as another key's exactly when the identities
/// differ, else it must succeed.
fn used<T>(key: KeyId, found: KeyId, r: triskel_tfhe::Result<T>, what: &str) -> Option<T> {
    if found != key {
        assert!(
            matches!(r, Err(Error::Ring(triskel_ring::Error::KeyMismatch { .. }))),
            "{what} of another key identity is refused"
        );
        return None;
    }
    Some(r.expect(what))
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let (boolean, shortint) = triskel_fuzz::tfhe_keys();
    match which % 13 {
        0 => {
            if let Ok(ck) = ClientKey::from_bytes(bytes) {
                assert_eq!(
                    &ck.to_bytes()[..],
                    bytes,
                    "client key encoding is canonical"
                );
                if let Ok(ct) = ck.encrypt_bool(true) {
                    assert!(ck.decrypt_bool(&ct).unwrap_or(true));
                }
            }
        }
        1 => {
            // The checked, unexpanded form accepts exactly what the
            // expanding loader accepts, and keeps the bytes.
            let compressed = CompressedServerKey::from_bytes(bytes);
            let full = ServerKey::from_bytes(bytes);
            assert_eq!(
                compressed.is_ok(),
                full.is_ok(),
                "the server key loaders agree"
            );
            if let (Ok(c), Ok(sk)) = (compressed, full) {
                assert_eq!(sk.to_bytes(), bytes, "server key encoding is canonical");
                assert_eq!(c.as_bytes(), bytes);
            }
        }
        2 => {
            let params = shortint.parameters();
            if let Ok(ct) = Ciphertext::from_bytes(bytes, params) {
                assert_eq!(ct.to_bytes(), bytes, "block encoding is canonical");
                let r = shortint.decrypt(&ct);
                used(shortint.key_id(), ct.key_id(), r, "a loaded block decrypts");
            }
        }
        3 => {
            let params = boolean.parameters();
            if let Ok(ct) = BoolCiphertext::from_bytes(bytes, params) {
                assert_eq!(ct.to_bytes(), bytes, "boolean encoding is canonical");
                let r = boolean.decrypt_bool(&ct);
                used(
                    boolean.key_id(),
                    ct.key_id(),
                    r,
                    "a loaded boolean decrypts",
                );
            }
        }
        4 => {
            let params = shortint.parameters();
            if let Ok(ct) = RadixCiphertext::from_bytes(bytes, params) {
                assert_eq!(ct.to_bytes(), bytes, "integer encoding is canonical");
                let id = shortint.key_id();
                let r = shortint.decrypt_radix(&ct);
                if let Some(v) = used(id, ct.key_id(), r, "a loaded integer decrypts") {
                    assert!(
                        ct.bits() == 64 || v >> ct.bits() == 0,
                        "value fits its width"
                    );
                }
            }
        }
        5 => {
            if let Ok(key) = GlweSecretKey::from_bytes(bytes) {
                assert_eq!(&key.to_bytes()[..], bytes, "GLWE key encoding is canonical");
                let m: Vec<u64> = (0..key.polynomial_size() as u64).map(|i| i % P).collect();
                let ct = key.encrypt(&m, P).expect("a loaded GLWE key encrypts");
                assert_eq!(key.decrypt(&ct, P).expect("and decrypts"), m);
            }
        }
        6 => {
            let params = shortint.parameters();
            if let Ok(ct) = GlweCiphertext::from_bytes(bytes, params) {
                assert_eq!(ct.to_bytes(), bytes, "GLWE encoding is canonical");
                let r = shortint.glwe_key().decrypt(&ct, P);
                used(shortint.key_id(), ct.key_id(), r, "a loaded GLWE decrypts");
            }
        }
        7 => {
            let params = shortint.parameters();
            if let Ok(ggsw) = GgswCiphertext::from_bytes(bytes, params) {
                assert_eq!(ggsw.to_bytes(), bytes, "GGSW encoding is canonical");
                check_ggsw(shortint, &ggsw);
            }
        }
        8 => {
            let params = shortint.parameters();
            if let Ok(ct) = CompressedCiphertext::from_bytes(bytes, params) {
                assert_eq!(
                    ct.to_bytes(),
                    bytes,
                    "compressed block encoding is canonical"
                );
                let r = shortint.decrypt(&ct.decompress());
                let what = "a loaded compressed block decrypts";
                used(shortint.key_id(), ct.key_id(), r, what);
            }
        }
        9 => {
            let params = boolean.parameters();
            if let Ok(ct) = CompressedBoolCiphertext::from_bytes(bytes, params) {
                assert_eq!(
                    ct.to_bytes(),
                    bytes,
                    "compressed boolean encoding is canonical"
                );
                let r = boolean.decrypt_bool(&ct.decompress());
                let what = "a loaded compressed boolean decrypts";
                used(boolean.key_id(), ct.key_id(), r, what);
            }
        }
        10 => {
            let params = shortint.parameters();
            if let Ok(ct) = CompressedRadixCiphertext::from_bytes(bytes, params) {
                assert_eq!(
                    ct.to_bytes(),
                    bytes,
                    "compressed integer encoding is canonical"
                );
                let r = shortint.decrypt_radix(&ct.decompress());
                let what = "a loaded compressed integer decrypts";
                if let Some(v) = used(shortint.key_id(), ct.key_id(), r, what) {
                    assert!(
                        ct.bits() == 64 || v >> ct.bits() == 0,
                        "value fits its width"
                    );
                }
            }
        }
        11 => {
            let params = shortint.parameters();
            if let Ok(ct) = CompressedGlweCiphertext::from_bytes(bytes, params) {
                assert_eq!(
                    ct.to_bytes(),
                    bytes,
                    "compressed GLWE encoding is canonical"
                );
                let ct = ct
                    .decompress()
                    .expect("a loaded compressed GLWE decompresses");
                let r = shortint.glwe_key().decrypt(&ct, P);
                used(shortint.key_id(), ct.key_id(), r, "and decrypts");
            }
        }
        _ => {
            let params = shortint.parameters();
            if let Ok(ggsw) = CompressedGgswCiphertext::from_bytes(bytes, params) {
                assert_eq!(
                    ggsw.to_bytes(),
                    bytes,
                    "compressed GGSW encoding is canonical"
                );
                let ggsw = ggsw
                    .decompress()
                    .expect("a loaded compressed GGSW decompresses");
                check_ggsw(shortint, &ggsw);
            }
        }
    }
});

/// A loaded GGSW's external product of a fixture GLWE decrypts.
fn check_ggsw(shortint: &ClientKey, ggsw: &GgswCiphertext) {
    let key = shortint.glwe_key();
    let ct = key
        .encrypt(&vec![1; key.polynomial_size()], P)
        .expect("fixture GLWE");
    let r = ggsw.external_product(&ct);
    if let Some(product) = used(ggsw.key_id(), key.key_id(), r, "a loaded GGSW multiplies") {
        key.decrypt(&product, P).expect("the product decrypts");
    }
}
