#![no_main]
//! `InclusionProof::from_bytes`: an accepted proof round-trips byte for byte
//! and is checked against the fixture's verified batch; only the real proof
//! of a result passes.

use libfuzzer_sys::fuzz_target;
use triskel_attest::InclusionProof;

fuzz_target!(|data: &[u8]| {
    let f = triskel_fuzz::attest();
    let Ok(proof) = InclusionProof::from_bytes(data) else {
        return;
    };
    assert_eq!(proof.to_bytes(), data, "proof encoding is canonical");
    for (i, (result, real)) in f.batch_results.iter().zip(&f.batch.proofs).enumerate() {
        let ok = f.verified_batch.check(i as u64, result, &proof).is_ok();
        assert_eq!(ok, proof == *real);
    }
});
