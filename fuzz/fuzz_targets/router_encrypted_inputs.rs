#![no_main]
//! `EncryptedInputs::from_bytes`: accepted inputs re-encode to exactly their
//! bytes, and run on the fixture program whose key set they name (the BFV or
//! the CKKS one, with its valid keys): `Server::run` returns outputs or an
//! error, never panics.

use libfuzzer_sys::fuzz_target;
use triskel::EncryptedInputs;

fuzz_target!(|data: &[u8]| {
    let Ok(inputs) = EncryptedInputs::from_bytes(data, 64 << 20) else {
        return;
    };
    assert_eq!(inputs.to_bytes(), data, "inputs encoding is canonical");
    let split = triskel_fuzz::split();
    for case in &split.cases {
        if case.keys.id() == *inputs.key_set() {
            let _ = split
                .server
                .run(&case.program, &case.choice, &case.keys, &inputs);
        }
    }
});
