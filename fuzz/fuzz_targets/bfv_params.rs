#![no_main]
//! `BfvParameters::from_bytes` and `from_bytes_insecure`: an accepted set
//! round-trips byte for byte and builds a context (or returns an error)
//! without a panic; a set the checked loader accepts, the insecure one
//! accepts as the same set (it waives the security check, nothing else).

use libfuzzer_sys::fuzz_target;
use triskel_bfv::{BfvContext, BfvParameters};

fuzz_target!(|data: &[u8]| {
    let checked = BfvParameters::from_bytes(data);
    let Ok(params) = BfvParameters::from_bytes_insecure(data) else {
        assert!(checked.is_err(), "accepted checked, refused insecure");
        return;
    };
    // Older versions still load, and are written at the current one.
    let again =
        BfvParameters::from_bytes_insecure(&params.to_bytes()).expect("re-encoded set loads");
    assert!(again == params, "a re-encoded set reads as the same set");
    if data.get(4) == Some(&triskel_bfv::FORMAT_VERSION) {
        assert_eq!(params.to_bytes(), data, "parameter encoding is canonical");
    }
    if let Ok(checked) = checked {
        assert!(checked == params, "the two loaders read different sets");
    }
    let _ = BfvContext::new(params);
});
