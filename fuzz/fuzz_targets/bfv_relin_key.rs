#![no_main]
//! `RelinKey::from_bytes`: an accepted key round-trips byte for byte and
//! relinearizes a three-component ciphertext (or returns an error) without a panic.

use libfuzzer_sys::fuzz_target;
use triskel_bfv::RelinKey;

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::bfv();
    let Ok(rk) = RelinKey::from_bytes(data, &f.ctx) else {
        return;
    };
    assert_eq!(
        rk.to_bytes(),
        data,
        "relinearization key encoding is canonical"
    );
    if let Ok(ct) = f.ct3.relinearize(&rk) {
        let _ = f.sk.decrypt(&ct);
    }
});
