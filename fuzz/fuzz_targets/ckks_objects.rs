#![no_main]
//! Every CKKS loader on arbitrary bytes: parameters, keys and ciphertexts
//! must load or return an error, never panic, hang or allocate without bound.
//! The first byte picks the loader (6: bootstrapping keys). An accepted ciphertext re-encodes to bytes
//! that load to the same ciphertext, and is decrypted, added to itself and
//! rescaled, so that the metadata the loader accepted is exercised.

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use triskel_ckks::{
    BootstrapKeys, Ciphertext, CkksContext, CkksParameters, GaloisKeys, PublicKey, RelinKey,
    SecretKey,
};

fn context() -> &'static (Arc<CkksContext>, SecretKey) {
    static CTX: OnceLock<(Arc<CkksContext>, SecretKey)> = OnceLock::new();
    CTX.get_or_init(|| {
        let ctx = CkksContext::new(CkksParameters::n8192()).expect("named set");
        let sk = SecretKey::generate(&ctx).expect("key");
        (ctx, sk)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let (ctx, sk) = context();
    match which % 7 {
        0 => {
            let _ = CkksParameters::from_bytes(bytes);
        }
        1 => {
            let _ = SecretKey::from_bytes(bytes, ctx);
        }
        2 => {
            let _ = PublicKey::from_bytes(bytes, ctx);
        }
        3 => {
            let _ = RelinKey::from_bytes(bytes, ctx);
        }
        4 => {
            let _ = GaloisKeys::from_bytes(bytes, ctx);
        }
        6 => {
            if let Ok(keys) = BootstrapKeys::from_bytes(bytes, ctx) {
                let encoded = keys.to_bytes();
                let again = BootstrapKeys::from_bytes(&encoded, ctx).expect("re-encoded keys load");
                assert_eq!(again.to_bytes(), encoded, "bootstrapping keys round-trip");
            }
        }
        _ => {
            let Ok(ct) = Ciphertext::from_bytes(bytes, ctx) else {
                return;
            };
            let encoded = ct.to_bytes();
            let again = Ciphertext::from_bytes(&encoded, ctx).expect("re-encoded ciphertext loads");
            assert_eq!(again.to_bytes(), encoded, "ciphertext encoding round-trips");
            let _ = sk.decrypt_real(&ct);
            if let Ok(sum) = ct.add(&ct) {
                let _ = sk.decrypt_real(&sum);
            }
            let _ = ct.rescale();
        }
    }
});
