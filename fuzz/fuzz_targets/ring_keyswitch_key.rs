#![no_main]
//! `KeySwitchKey::from_bytes`: an accepted key round-trips byte for byte and
//! switches a polynomial (or returns an error) without a panic.

use libfuzzer_sys::fuzz_target;
use triskel_ring::KeySwitchKey;

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::ring();
    let Ok(key) = KeySwitchKey::from_bytes(data, &f.ks) else {
        return;
    };
    assert_eq!(
        key.to_bytes(),
        data,
        "key-switching key encoding is canonical"
    );
    let _ = f.ks.switch(&key, &f.poly);
});
