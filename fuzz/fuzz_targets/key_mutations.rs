#![no_main]
//! The loaders of the large keys, which libFuzzer cannot reach from small
//! inputs: a valid TFHE server key (boolean set), CKKS relinearization key
//! and CKKS Galois keys are made once, and each input overwrites (or cuts)
//! one of them at a chosen offset before loading it. The loader must accept
//! or refuse without a panic, hang or unbounded allocation, and a key it
//! accepts re-encodes to exactly the bytes it read.
//!
//! Input: which key (byte 0), offset (bytes 1-4, little endian, modulo the
//! key's length; its top bit set means cut the key there), then the bytes
//! to write at the offset.

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use triskel_ckks::{CkksContext, CkksParameters, GaloisKeys, RelinKey, SecretKey};
use triskel_tfhe::{ClientKey, ServerKey, TfheParameters};

struct Fixture {
    ckks: Arc<CkksContext>,
    /// The valid bytes of the TFHE server key, the relinearization key and
    /// the Galois keys, in that order.
    keys: [Vec<u8>; 3],
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tfhe = ClientKey::generate(&TfheParameters::boolean()).expect("client key");
        let server = tfhe.server_key().expect("server key").to_bytes();
        let ckks = CkksContext::new(CkksParameters::n8192()).expect("named set");
        let sk = SecretKey::generate(&ckks).expect("key");
        let relin = sk.relin_key().expect("relinearization key").to_bytes();
        let galois = sk
            .galois_keys(&[1, -3], true)
            .expect("Galois keys")
            .to_bytes();
        Fixture {
            ckks,
            keys: [server, relin, galois],
        }
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let f = fixture();
    let which = data[0] as usize % 3;
    let word = u32::from_le_bytes(data[1..5].try_into().expect("4 bytes"));
    let mut bytes = f.keys[which].clone();
    let offset = (word & 0x7fff_ffff) as usize % bytes.len();
    if word >> 31 == 1 {
        bytes.truncate(offset);
    } else {
        let patch = &data[5..];
        let end = (offset + patch.len()).min(bytes.len());
        bytes[offset..end].copy_from_slice(&patch[..end - offset]);
    }
    match which {
        0 => {
            if let Ok(key) = ServerKey::from_bytes(&bytes) {
                assert_eq!(key.to_bytes(), bytes, "server key encoding is canonical");
            }
        }
        1 => {
            if let Ok(key) = RelinKey::from_bytes(&bytes, &f.ckks) {
                assert_eq!(
                    key.to_bytes(),
                    bytes,
                    "relinearization key encoding is canonical"
                );
            }
        }
        _ => {
            if let Ok(key) = GaloisKeys::from_bytes(&bytes, &f.ckks) {
                assert_eq!(key.to_bytes(), bytes, "Galois key encoding is canonical");
            }
        }
    }
});
