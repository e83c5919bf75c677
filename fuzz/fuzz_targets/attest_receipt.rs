#![no_main]
//! `Receipt::from_bytes`: an accepted receipt round-trips byte for byte and is
//! verified with the fixture's bundle (an error unless it is the real receipt).

use libfuzzer_sys::fuzz_target;
use triskel_attest::{verify, Receipt, Record};

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::attest();
    let Ok(receipt) = Receipt::from_bytes(data) else {
        return;
    };
    assert_eq!(receipt.to_bytes(), data, "receipt encoding is canonical");
    let record = Record {
        receipt,
        bundle: f.record.bundle.clone(),
    };
    let verdict = verify(
        f.identity.public(),
        &f.result,
        &f.route,
        &f.context,
        &record,
    );
    assert_eq!(verdict.is_ok(), receipt == f.record.receipt);
});
