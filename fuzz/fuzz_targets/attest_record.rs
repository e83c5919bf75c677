#![no_main]
//! `Record::from_bytes` (single and batch records of version 1, computation
//! records of version 2): an accepted record round-trips byte for byte and
//! verifies only if it is one the fixture signed.

use libfuzzer_sys::fuzz_target;
use triskel_attest::{verify, verify_batch_record, verify_computation, Record, RecordKind};

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::attest();
    let Ok(record) = Record::from_bytes(data) else {
        return;
    };
    assert_eq!(record.to_bytes(), data, "record encoding is canonical");
    let public = f.identity.public();
    let ok = match record.bundle.kind() {
        RecordKind::Single => verify(public, &f.result, &f.route, &f.context, &record).is_ok(),
        RecordKind::Batch => verify_batch_record(public, &f.route, &f.context, &record).is_ok(),
        RecordKind::Computation => {
            verify_computation(public, &f.computation(), &f.route, &f.context, &record).is_ok()
        }
    };
    assert_eq!(record.version(), record.receipt.version);
    assert_eq!(
        ok,
        record == f.record || record == f.batch.record || record == f.computation_record
    );
});
