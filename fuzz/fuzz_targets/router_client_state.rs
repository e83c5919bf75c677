#![no_main]
//! `Client::from_bytes` (a key holder's saved secret state): loads or
//! returns an error, never panics; an accepted state re-encodes to exactly
//! its bytes.

use libfuzzer_sys::fuzz_target;
use triskel::Client;

fuzz_target!(|data: &[u8]| {
    let Ok(client) = Client::from_bytes(data, triskel::MAX_CLIENT_STATE_BYTES) else {
        return;
    };
    assert_eq!(
        &client.to_bytes()[..],
        data,
        "client state encoding is canonical"
    );
});
