#![no_main]
//! `Bundle::from_bytes`: an accepted bundle round-trips byte for byte and is
//! verified under a receipt that names its digest, so the checks reach the
//! signatures; only the real bundle verifies.

use libfuzzer_sys::fuzz_target;
use triskel_attest::{verify, Bundle, Receipt, Record};

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::attest();
    let Ok(bundle) = Bundle::from_bytes(data) else {
        return;
    };
    assert_eq!(bundle.to_bytes(), data, "bundle encoding is canonical");
    let record = Record {
        receipt: Receipt {
            bundle_digest: bundle.digest(),
            ..f.record.receipt
        },
        bundle: bundle.clone(),
    };
    let verdict = verify(
        f.identity.public(),
        &f.result,
        &f.route,
        &f.context,
        &record,
    );
    assert_eq!(verdict.is_ok(), bundle == f.record.bundle);
});
