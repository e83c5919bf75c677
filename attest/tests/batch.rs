//! Batch records: Merkle roots, inclusion proofs, tampering and malformed proofs.

mod common;

use common::{alice, bob, flipped, garbage, route};
use triskel_attest::{
    attest, attest_batch, verify, verify_batch_item, verify_batch_record, Error, InclusionProof,
    Record,
};

const CONTEXT: &[u8] = b"nightly batch 42";

fn results(count: usize) -> Vec<Vec<u8>> {
    (0..count)
        .map(|i| format!("result #{i}").into_bytes())
        .collect()
}

#[test]
fn batches_of_every_shape_round_trip() {
    for count in [1, 2, 3, 5, 8, 13] {
        let results = results(count);
        let batch = attest_batch(alice(), &results, &route(), CONTEXT).expect("attest");
        assert_eq!(batch.proofs.len(), count);
        let record = Record::from_bytes(&batch.record.to_bytes()).expect("record");
        let verified = verify_batch_record(alice().public(), &route(), CONTEXT, &record)
            .expect("batch record verifies");
        for (i, (result, proof)) in results.iter().zip(&batch.proofs).enumerate() {
            let proof = InclusionProof::from_bytes(&proof.to_bytes()).expect("proof");
            assert_eq!((proof.index(), proof.count()), (i as u64, count as u64));
            let i = i as u64;
            assert!(verified.check(i, result, &proof).is_ok(), "{count}/{i}");
            let got = verify_batch_item(
                alice().public(),
                i,
                result,
                &proof,
                &route(),
                CONTEXT,
                &record,
            );
            assert_eq!(got.ok().as_ref(), Some(verified.record()));
            // Another result of the batch does not pass with this proof, nor does this
            // result at another place.
            if count > 1 {
                let other = &results[(i as usize + 1) % count];
                let got = verified.check(i, other, &proof);
                assert!(matches!(got, Err(Error::WrongResult)), "{got:?}");
                let elsewhere = (i + 1) % count as u64;
                let got = verified.check(elsewhere, result, &proof);
                assert!(
                    matches!(got, Err(Error::WrongIndex { expected, found })
                        if expected == elsewhere && found == i),
                    "{got:?}"
                );
            }
        }
    }
}

#[test]
fn batch_record_checks_route_context_identity_and_kind() {
    let results = results(4);
    let batch = attest_batch(alice(), &results, &route(), CONTEXT).expect("attest");
    let proof = &batch.proofs[2];
    let item = |public, result: &[u8], route: &_, context: &[u8]| {
        verify_batch_item(public, 2, result, proof, route, context, &batch.record)
    };
    let got = item(alice().public(), b"forged", &route(), CONTEXT);
    assert!(matches!(got, Err(Error::WrongResult)), "{got:?}");
    let other_route = triskel_attest::Route::new("ckks", "ckks-n16384");
    let got = item(alice().public(), &results[2], &other_route, CONTEXT);
    assert!(matches!(got, Err(Error::WrongRoute)), "{got:?}");
    let got = item(alice().public(), &results[2], &route(), b"nightly batch 43");
    assert!(matches!(got, Err(Error::WrongContext)), "{got:?}");
    let got = item(bob().public(), &results[2], &route(), CONTEXT);
    assert!(matches!(got, Err(Error::WrongIdentity)), "{got:?}");
    // A batch record is no single-result record, and the reverse.
    let got = verify(
        alice().public(),
        &results[2],
        &route(),
        CONTEXT,
        &batch.record,
    );
    assert!(matches!(got, Err(Error::WrongKind { .. })), "{got:?}");
    let single = attest(alice(), &results[2], &route(), CONTEXT).expect("attest");
    let got = verify_batch_record(alice().public(), &route(), CONTEXT, &single);
    assert!(matches!(got, Err(Error::WrongKind { .. })), "{got:?}");
    // A proof from another batch of the same results leads to another root.
    let again = attest_batch(alice(), &results[..3], &route(), CONTEXT).expect("attest");
    let got = item(alice().public(), &results[2], &route(), CONTEXT);
    assert!(got.is_ok());
    let got = verify_batch_item(
        alice().public(),
        2,
        &results[2],
        &again.proofs[2],
        &route(),
        CONTEXT,
        &batch.record,
    );
    assert!(matches!(got, Err(Error::ProofMismatch)), "{got:?}");
    assert!(matches!(
        attest_batch::<&[u8]>(alice(), &[], &route(), CONTEXT),
        Err(Error::EmptyBatch)
    ));
}

#[test]
fn every_proof_byte_matters() {
    let results = results(11);
    let batch = attest_batch(alice(), &results, &route(), CONTEXT).expect("attest");
    let verified =
        verify_batch_record(alice().public(), &route(), CONTEXT, &batch.record).expect("record");
    for (result, proof) in results.iter().zip(&batch.proofs) {
        let bytes = proof.to_bytes();
        for i in 0..bytes.len() {
            for mask in [0x01, 0x80] {
                let got = InclusionProof::from_bytes(&flipped(&bytes, i, mask))
                    .and_then(|p| verified.check(proof.index(), result, &p));
                let ok = match i {
                    // magic, version
                    0..=4 => matches!(got, Err(Error::Malformed { .. })),
                    // index: out of range, wrong length, or another place
                    5..=12 => {
                        matches!(got, Err(Error::Malformed { .. } | Error::WrongIndex { .. }))
                    }
                    // count: out of range, wrong length, or another path
                    13..=20 => matches!(got, Err(Error::Malformed { .. } | Error::ProofMismatch)),
                    // leaf digest
                    21..=52 => matches!(got, Err(Error::WrongResult)),
                    // siblings
                    _ => matches!(got, Err(Error::ProofMismatch)),
                };
                assert!(
                    ok,
                    "proof {} byte {i} mask {mask:#x}: {got:?}",
                    proof.index()
                );
            }
        }
    }
}

#[test]
fn truncated_oversized_and_garbage_proofs_are_errors() {
    let batch = attest_batch(alice(), &results(6), &route(), CONTEXT).expect("attest");
    for proof in &batch.proofs {
        let bytes = proof.to_bytes();
        for len in 0..bytes.len() {
            assert!(
                InclusionProof::from_bytes(&bytes[..len]).is_err(),
                "len {len}"
            );
        }
        let mut long = bytes.clone();
        long.extend_from_slice(&[0; 32]);
        assert!(InclusionProof::from_bytes(&long).is_err());
    }
    for seed in 1..200 {
        let mut bytes = garbage(53 + (seed as usize % 5) * 32, seed);
        bytes[..5].copy_from_slice(b"TKAP\x01");
        // Random index/count must give errors, never a panic or a huge allocation.
        assert!(
            InclusionProof::from_bytes(&bytes).is_err_and(|e| matches!(e, Error::Malformed { .. }))
        );
    }
}
