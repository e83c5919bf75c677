#![no_main]
//! `PublicIdentity::from_bytes`: the input as given, then with its checksum
//! recomputed so the fuzzer reaches the keys. An accepted identity round-trips
//! byte for byte and verifies a record bearing its key id (running all three
//! verifiers on its keys); only the fixture's own identity accepts it.

use libfuzzer_sys::fuzz_target;
use triskel_attest::{verify, Bundle, PublicIdentity, Receipt, Record, BUNDLE_LAYOUT};

fuzz_target!(|data: &[u8]| {
    let _ = PublicIdentity::from_bytes(data);
    let Some(fixed) = triskel_fuzz::with_identity_checksum(data) else {
        return;
    };
    let Ok(public) = PublicIdentity::from_bytes(&fixed) else {
        return;
    };
    assert_eq!(
        public.to_bytes(),
        fixed,
        "public identity encoding is canonical"
    );
    let f = triskel_fuzz::attest();
    // The fixture's record, re-addressed to this identity.
    let mut bundle = f.record.bundle.to_bytes();
    let (_, start, end) = BUNDLE_LAYOUT[4];
    bundle[start..end].copy_from_slice(public.key_id());
    let bundle = Bundle::from_bytes(&bundle).expect("re-addressed bundle parses");
    let record = Record {
        receipt: Receipt {
            bundle_digest: bundle.digest(),
            ..f.record.receipt
        },
        bundle,
    };
    let ok = verify(&public, &f.result, &f.route, &f.context, &record).is_ok();
    assert_eq!(ok, public == *f.identity.public());
});
