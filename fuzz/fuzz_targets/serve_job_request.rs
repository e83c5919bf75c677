#![no_main]
//! `triskel_serve::job::JobRequest::from_bytes`: an accepted submission
//! re-encodes to exactly its bytes, and its program and inputs go through
//! their own loaders without a panic.

use libfuzzer_sys::fuzz_target;
use triskel_serve::job::JobRequest;

fuzz_target!(|data: &[u8]| {
    let Ok(job) = JobRequest::from_bytes(data) else {
        return;
    };
    assert_eq!(job.to_bytes(), data, "job encoding is canonical");
    let _ = triskel::Program::from_bytes(job.program);
    let _ = triskel::EncryptedInputs::from_bytes(job.inputs, 1 << 24);
});
