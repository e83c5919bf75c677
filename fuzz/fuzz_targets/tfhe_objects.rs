#![no_main]
//! Every TFHE loader on arbitrary bytes: client keys, server keys, shortint
//! blocks, booleans and radix integers must load or return an error, never
//! panic, hang or allocate without bound. The first byte picks the loader. An
//! accepted object re-encodes to exactly its bytes and is used: a client key
//! encrypts and decrypts, a block, boolean or integer decrypts under the
//! fixture's key.

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use triskel_tfhe::{
    BoolCiphertext, Ciphertext, ClientKey, RadixCiphertext, ServerKey, TfheParameters,
};

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
    match which % 5 {
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
                assert_eq!(ct.to_bytes(params), bytes, "block encoding is canonical");
                let _ = shortint.decrypt(&ct);
            }
        }
        3 => {
            let params = boolean.parameters();
            if let Ok(ct) = BoolCiphertext::from_bytes(bytes, params) {
                assert_eq!(ct.to_bytes(params), bytes, "boolean encoding is canonical");
                let _ = boolean.decrypt_bool(&ct);
            }
        }
        _ => {
            let params = shortint.parameters();
            if let Ok(ct) = RadixCiphertext::from_bytes(bytes, params) {
                assert_eq!(ct.to_bytes(params), bytes, "integer encoding is canonical");
                let v = shortint.decrypt_radix(&ct).expect("a loaded integer decrypts");
                assert!(ct.bits() == 64 || v >> ct.bits() == 0, "value fits its width");
            }
        }
    }
});
