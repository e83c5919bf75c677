//! Every CKKS loader on arbitrary bytes: parameters, keys and ciphertexts
//! must load or return an error, never panic, hang or allocate without bound.
//! The first byte picks the loader; a loaded ciphertext is also decrypted
//! and rescaled, so that metadata the loader accepted is exercised.

#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use triskel_ckks::{
    Ciphertext, CkksContext, CkksParameters, GaloisKeys, PublicKey, RelinKey, SecretKey,
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
    match which % 6 {
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
        _ => {
            if let Ok(ct) = Ciphertext::from_bytes(bytes, ctx) {
                let _ = sk.decrypt_real(&ct);
                let _ = ct.rescale();
            }
        }
    }
});
