#![no_main]
//! Every TFHE loader on arbitrary bytes: client keys, server keys, shortint
//! blocks, booleans, radix integers, GLWE keys, GLWE ciphertexts and GGSWs,
//! and the seed-compressed blocks, booleans, integers, GLWEs and GGSWs must
//! load or return an error, never panic, hang or allocate without bound.
//! The first byte picks the loader (mod 13). An accepted object re-encodes to
//! exactly its bytes and is used: a client or GLWE key encrypts and decrypts,
//! a block, boolean, integer or GLWE (a compressed one decompressed) decrypts
//! under the fixture's key, a GGSW's (decompressed) external product of a
//! fixture GLWE decrypts.

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use triskel_tfhe::{
    BoolCiphertext, Ciphertext, ClientKey, CompressedBoolCiphertext, CompressedCiphertext,
    CompressedGgswCiphertext, CompressedGlweCiphertext, CompressedRadixCiphertext, GgswCiphertext,
    GlweCiphertext, GlweSecretKey, RadixCiphertext, ServerKey, TfheParameters,
};

/// Message modulus of the GLWE checks.
const P: u64 = 16;

/// Client keys of the boolean and 2_2 sets (server keys are not needed to
/// decrypt, and would cost seconds per process).
fn keys() -> &'static (ClientKey, ClientKey) {
    static KEYS: OnceLock<(ClientKey, ClientKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        (
            ClientKey::generate(&TfheParameters::boolean()).expect("boolean key"),
            ClientKey::generate(&TfheParameters::message_2_carry_2()).expect("2_2 key"),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let (boolean, shortint) = keys();
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
            if let Ok(sk) = ServerKey::from_bytes(bytes) {
                assert_eq!(sk.to_bytes(), bytes, "server key encoding is canonical");
            }
        }
        2 => {
            let params = shortint.parameters();
            if let Ok(ct) = Ciphertext::from_bytes(bytes, params) {
                assert_eq!(ct.to_bytes(), bytes, "block encoding is canonical");
                let _ = shortint.decrypt(&ct);
            }
        }
        3 => {
            let params = boolean.parameters();
            if let Ok(ct) = BoolCiphertext::from_bytes(bytes, params) {
                assert_eq!(ct.to_bytes(), bytes, "boolean encoding is canonical");
                let _ = boolean.decrypt_bool(&ct);
            }
        }
        4 => {
            let params = shortint.parameters();
            if let Ok(ct) = RadixCiphertext::from_bytes(bytes, params) {
                assert_eq!(ct.to_bytes(), bytes, "integer encoding is canonical");
                let v = shortint
                    .decrypt_radix(&ct)
                    .expect("a loaded integer decrypts");
                assert!(
                    ct.bits() == 64 || v >> ct.bits() == 0,
                    "value fits its width"
                );
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
                shortint
                    .glwe_key()
                    .decrypt(&ct, P)
                    .expect("a loaded GLWE decrypts");
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
                shortint
                    .decrypt(&ct.decompress())
                    .expect("a loaded compressed block decrypts");
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
                boolean
                    .decrypt_bool(&ct.decompress())
                    .expect("a loaded compressed boolean decrypts");
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
                let v = shortint
                    .decrypt_radix(&ct.decompress())
                    .expect("a loaded compressed integer decrypts");
                assert!(
                    ct.bits() == 64 || v >> ct.bits() == 0,
                    "value fits its width"
                );
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
                shortint.glwe_key().decrypt(&ct, P).expect("and decrypts");
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
    let product = ggsw
        .external_product(&ct)
        .expect("a loaded GGSW multiplies");
    key.decrypt(&product, P).expect("the product decrypts");
}
