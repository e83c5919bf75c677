#![no_main]
//! `GaloisKeys::from_bytes`: an accepted key set round-trips byte for byte
//! (entries strictly increasing) and rotates (or returns an error) without a panic.

use libfuzzer_sys::fuzz_target;
use triskel_bfv::GaloisKeys;

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::bfv();
    let Ok(gk) = GaloisKeys::from_bytes(data, &f.ctx) else {
        return;
    };
    assert_eq!(gk.to_bytes(), data, "Galois key encoding is canonical");
    if let Ok(ct) = f.ct.rotate_rows(1, &gk) {
        let _ = f.sk.decrypt(&ct);
    }
    let _ = f.ct.rotate_columns(&gk);
});
