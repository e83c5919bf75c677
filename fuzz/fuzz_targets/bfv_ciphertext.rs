#![no_main]
//! `Ciphertext::from_bytes`: an accepted ciphertext re-encodes to bytes that
//! load to the same ciphertext, and decrypts, adds to itself, relinearizes and
//! mod-switches (or returns an error) without a panic.

use libfuzzer_sys::fuzz_target;
use triskel_bfv::Ciphertext;

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::bfv();
    let Ok(ct) = Ciphertext::from_bytes(data, &f.ctx) else {
        return;
    };
    // Not compared with `data`: a loader may raise the stored noise estimate.
    let bytes = ct.to_bytes();
    let again = Ciphertext::from_bytes(&bytes, &f.ctx).expect("re-encoded ciphertext loads");
    assert_eq!(again.to_bytes(), bytes, "ciphertext encoding round-trips");
    let _ = f.sk.decrypt(&ct);
    let _ = f.sk.noise_budget(&ct);
    if let Ok(sum) = ct.add(&ct) {
        let _ = f.sk.decrypt(&sum);
    }
    if ct.size() == 3 {
        let _ = ct.relinearize(&f.rk);
    }
    let _ = ct.mod_switch_to_next();
});
