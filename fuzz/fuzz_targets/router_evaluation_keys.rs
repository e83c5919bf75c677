#![no_main]
//! `EvaluationKeys::from_bytes`, on the input as given and then with its
//! key-set id recomputed so the fuzzer reaches the keys. An accepted bundle
//! runs the fixture program it names (the BFV or the CKKS one, with that
//! program's own choice and valid inputs, re-addressed to the bundle's key
//! set): `Server::run` returns outputs or an error, never panics.

use libfuzzer_sys::fuzz_target;
use triskel::{EncryptedInputs, EvaluationKeys};

const LIMIT: u64 = 64 << 20;

fuzz_target!(|data: &[u8]| {
    let _ = EvaluationKeys::from_bytes(data, LIMIT);
    let Some(fixed) = triskel_fuzz::with_key_set_id(data) else {
        return;
    };
    let Ok(keys) = EvaluationKeys::from_bytes(&fixed, LIMIT) else {
        return;
    };
    let split = triskel_fuzz::split();
    let Some(case) = split
        .cases
        .iter()
        .find(|c| c.keys.program_digest() == keys.program_digest())
    else {
        return;
    };
    let inputs = triskel_fuzz::with_inputs_key_set(&case.inputs_bytes, &keys.id());
    let inputs = EncryptedInputs::from_bytes(&inputs, LIMIT).expect("fixture inputs parse");
    let _ = split
        .server
        .run(&case.program, &case.choice, &keys, &inputs);
});
