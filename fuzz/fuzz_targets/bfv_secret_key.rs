#![no_main]
//! `SecretKey::from_bytes`: an accepted key round-trips byte for byte, and a
//! message it encrypts decrypts back under it.

use libfuzzer_sys::fuzz_target;
use triskel_bfv::SecretKey;

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::bfv();
    let Ok(sk) = SecretKey::from_bytes(data, &f.ctx) else {
        return;
    };
    assert_eq!(&sk.to_bytes()[..], data, "secret key encoding is canonical");
    let ct = sk.encrypt(&f.pt).expect("a loaded secret key encrypts");
    let back = sk.decrypt(&ct).expect("and decrypts its own ciphertext");
    assert_eq!(back.coeffs(), f.pt.coeffs());
});
