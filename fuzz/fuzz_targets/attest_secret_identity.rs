#![no_main]
//! `Identity::from_bytes`: the input as given, then with its checksum
//! recomputed so the fuzzer reaches the keys. An accepted identity round-trips
//! byte for byte and signs a record (or returns an error) without a panic or hang.

use libfuzzer_sys::fuzz_target;
use triskel_attest::{attest, Identity};

fuzz_target!(|data: &[u8]| {
    let _ = Identity::from_bytes(data);
    let Some(fixed) = triskel_fuzz::with_identity_checksum(data) else {
        return;
    };
    let Ok(identity) = Identity::from_bytes(&fixed) else {
        return;
    };
    assert_eq!(
        &identity.to_bytes()[..],
        &fixed[..],
        "secret identity encoding is canonical"
    );
    let f = triskel_fuzz::attest();
    let _ = attest(&identity, &f.result, &f.route, &f.context);
});
