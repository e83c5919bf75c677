#![no_main]
//! `PublicKey::from_bytes`: an accepted key round-trips byte for byte and
//! encrypts (or returns an error) without a panic.

use libfuzzer_sys::fuzz_target;
use triskel_bfv::PublicKey;

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::bfv();
    let Ok(pk) = PublicKey::from_bytes(data, &f.ctx) else {
        return;
    };
    assert_eq!(pk.to_bytes(), data, "public key encoding is canonical");
    if let Ok(ct) = pk.encrypt(&f.pt) {
        let _ = f.sk.decrypt(&ct);
    }
});
