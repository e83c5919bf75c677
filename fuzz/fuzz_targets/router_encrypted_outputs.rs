#![no_main]
//! `EncryptedOutputs::from_bytes`, then `Client::decrypt` by the fixture
//! clients against the fixture server's public identity: as given (records
//! checked), and, when the first byte is odd, with every record signed again
//! by the server over what the bytes say, so that the fuzzer reaches the
//! decryption of what a dishonest server sends. Outputs or an error, never a
//! panic. Accepted outputs re-encode to exactly their bytes.

use libfuzzer_sys::fuzz_target;
use triskel::EncryptedOutputs;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, data)) = data.split_first() else {
        return;
    };
    let Ok(outputs) = EncryptedOutputs::from_bytes(data, 64 << 20) else {
        return;
    };
    assert_eq!(outputs.to_bytes(), data, "outputs encoding is canonical");
    let split = triskel_fuzz::split();
    let server = split.server.identity();
    for case in &split.cases {
        if mode & 1 == 0 {
            let _ = case.client.decrypt(&outputs, server.public());
            continue;
        }
        let route = triskel::route(case.client.plan());
        let Some(signed) = triskel_fuzz::resigned_outputs(data, server, &route) else {
            continue;
        };
        let outputs = EncryptedOutputs::from_bytes(&signed, u64::MAX).expect("re-signed parse");
        let _ = case.client.decrypt(&outputs, server.public());
    }
});
