#![no_main]
//! `BfvParameters::from_bytes`: an accepted set round-trips byte for byte and
//! builds a context (or returns an error) without a panic.

use libfuzzer_sys::fuzz_target;
use triskel_bfv::{BfvContext, BfvParameters};

fuzz_target!(|data: &[u8]| {
    let Ok(params) = BfvParameters::from_bytes(data) else {
        return;
    };
    assert_eq!(params.to_bytes(), data, "parameter encoding is canonical");
    let _ = BfvContext::new(params);
});
