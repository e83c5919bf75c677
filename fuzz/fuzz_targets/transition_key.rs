#![no_main]
//! The transition key loader (BFV or CKKS -> TFHE) on arbitrary bytes: it
//! loads or returns an error, never panics, hangs or allocates without bound
//! (the source ring degree is capped before its context is built and the key
//! expanded). An accepted key re-encodes to exactly its bytes and names sets
//! that pass their checks.

use libfuzzer_sys::fuzz_target;
use triskel::transition::{Source, TransitionKey};

fuzz_target!(|data: &[u8]| {
    if let Ok(key) = TransitionKey::from_bytes(data) {
        assert_eq!(key.to_bytes(), data, "transition key encoding is canonical");
        assert!(key.tfhe_parameters().check().is_ok());
        match key.source() {
            Source::Bfv(p) => assert!(triskel::bfv::BfvContext::new(p.clone()).is_ok()),
            Source::Ckks(p) => assert!(triskel::ckks::CkksContext::new(p.clone()).is_ok()),
        }
    }
});
