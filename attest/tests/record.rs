//! Single-result records: round trip, every tampered field, malformed bytes, the KAT.

mod common;

use std::sync::OnceLock;

use common::{
    alice, bob, field, flipped, garbage, public, resealed, route, signed_by_alice, tagged_hash,
};
use triskel_attest::{
    attest, commitment, hex, verify, verify_batch_record, Bundle, Error, Receipt, Record,
    RecordKind, Route, Verified, BUNDLE_LEN, RECEIPT_LEN,
};

const RESULT: &[u8] = b"encrypted match score: 0x5e11";
const CONTEXT: &[u8] = b"caller=alice purpose=biometric-match job=7";

/// One record by alice over RESULT / route() / CONTEXT, shared by every test.
fn record() -> &'static Record {
    static RECORD: OnceLock<Record> = OnceLock::new();
    RECORD.get_or_init(|| attest(alice(), RESULT, &route(), CONTEXT).expect("attest"))
}

fn check(record: &Record) -> Result<Verified, Error> {
    verify(alice().public(), RESULT, &route(), CONTEXT, record)
}

/// Verifies receipt and bundle given as bytes, parsing them first.
fn check_bytes(receipt: &[u8], bundle: &[u8]) -> Result<Verified, Error> {
    check(&Record {
        receipt: Receipt::from_bytes(receipt)?,
        bundle: Bundle::from_bytes(bundle)?,
    })
}

#[test]
fn round_trip_verifies() {
    let record = record();
    let verified = check(record).expect("verifies");
    assert_eq!(verified, signed_by_alice(record));
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as u64;
    assert!(
        now_ms.abs_diff(verified.timestamp_ms) < 600_000,
        "signed just now"
    );
    let bytes = record.to_bytes();
    assert_eq!(bytes.len(), RECEIPT_LEN + BUNDLE_LEN);
    let parsed = Record::from_bytes(&bytes).expect("parse");
    assert_eq!(&parsed, record);
    assert!(check(&parsed).is_ok());
    const { assert!(RECEIPT_LEN <= 74) };
    assert_eq!(parsed.bundle.kind(), RecordKind::Single);
    assert_eq!(parsed.bundle.key_id(), alice().public().key_id());
    // Detached: receipt and bundle serialized separately.
    assert!(check_bytes(&record.receipt.to_bytes(), &record.bundle.to_bytes()).is_ok());
}

#[test]
fn two_records_of_one_result_differ_by_nonce() {
    let other = attest(alice(), RESULT, &route(), CONTEXT).expect("attest");
    assert!(check(&other).is_ok());
    assert_ne!(other.bundle.nonce(), record().bundle.nonce());
    assert_ne!(other.receipt.commitment, record().receipt.commitment);
}

#[test]
fn every_result_byte_matters() {
    for i in 0..RESULT.len() {
        let result = flipped(RESULT, i, 0x01);
        let got = verify(alice().public(), &result, &route(), CONTEXT, record());
        assert!(matches!(got, Err(Error::WrongResult)), "byte {i}: {got:?}");
    }
    for result in [&RESULT[..RESULT.len() - 1], &[RESULT, b"x"].concat(), &[]] {
        let got = verify(alice().public(), result, &route(), CONTEXT, record());
        assert!(matches!(got, Err(Error::WrongResult)), "{got:?}");
    }
}

#[test]
fn every_context_byte_matters() {
    for i in 0..CONTEXT.len() {
        let context = flipped(CONTEXT, i, 0x01);
        let got = verify(alice().public(), RESULT, &route(), &context, record());
        assert!(matches!(got, Err(Error::WrongContext)), "byte {i}: {got:?}");
    }
    let got = verify(alice().public(), RESULT, &route(), b"", record());
    assert!(matches!(got, Err(Error::WrongContext)), "{got:?}");
}

#[test]
fn every_route_byte_matters() {
    let base = route();
    let mut routes = vec![
        Route::new("ckks", base.params.clone()),
        Route::new(base.engine.clone(), "bfv-n8192-129"),
        // Moving a byte between engine and params must not collide.
        Route::new("bfvb", "fv-n8192-128"),
    ];
    for i in 0..base.engine.len() {
        let engine = flipped(base.engine.as_bytes(), i, 0x01);
        routes.push(Route::new(
            String::from_utf8_lossy(&engine),
            base.params.clone(),
        ));
    }
    for i in 0..base.params.len() {
        let params = flipped(base.params.as_bytes(), i, 0x01);
        routes.push(Route::new(
            base.engine.clone(),
            String::from_utf8_lossy(&params),
        ));
    }
    for r in routes {
        let got = verify(alice().public(), RESULT, &r, CONTEXT, record());
        assert!(matches!(got, Err(Error::WrongRoute)), "{r:?}: {got:?}");
    }
}

#[test]
fn another_identity_is_rejected() {
    let got = verify(bob().public(), RESULT, &route(), CONTEXT, record());
    assert!(matches!(got, Err(Error::WrongIdentity)), "{got:?}");
    // A bundle relabelled with bob's key id: suite 2 commits to the key id, so the
    // commitment no longer matches, before any signature is looked at.
    let mut bundle = record().bundle.to_bytes();
    let (start, end) = field("key_id");
    bundle[start..end].copy_from_slice(bob().public().key_id());
    let forged = resealed(record().receipt, &bundle).expect("parse");
    let got = verify(bob().public(), RESULT, &route(), CONTEXT, &forged);
    assert!(matches!(got, Err(Error::CommitmentMismatch)), "{got:?}");
}

#[test]
fn every_receipt_byte_matters() {
    let receipt = record().receipt.to_bytes();
    let bundle = record().bundle.to_bytes();
    for i in 0..RECEIPT_LEN {
        let got = check_bytes(&flipped(&receipt, i, 0x01), &bundle);
        let ok = match i {
            // version; suite 2 turned into the unknown suite 3
            0 | 1 => matches!(
                got,
                Err(Error::Malformed {
                    item: "receipt",
                    ..
                })
            ),
            2..=41 => matches!(got, Err(Error::CommitmentMismatch)),
            _ => matches!(got, Err(Error::BundleDigestMismatch)),
        };
        assert!(ok, "receipt byte {i}: {got:?}");
    }
    // A receipt claiming suite 1 for a suite-2 bundle.
    let got = check_bytes(&flipped(&receipt, 1, 0x03), &bundle);
    assert!(matches!(got, Err(Error::SuiteMismatch)), "{got:?}");
}

#[test]
fn every_bundle_byte_is_bound_by_the_receipt() {
    let receipt = record().receipt.to_bytes();
    let bundle = record().bundle.to_bytes();
    let (_, header_end) = field("kind");
    for i in 0..BUNDLE_LEN {
        let got = check_bytes(&receipt, &flipped(&bundle, i, 0x01));
        let ok = if i < header_end {
            matches!(got, Err(Error::Malformed { item: "bundle", .. }))
        } else {
            matches!(got, Err(Error::BundleDigestMismatch))
        };
        assert!(ok, "bundle byte {i}: {got:?}");
    }
}

/// With the receipt's digest recomputed, each bundle field fails its own check.
#[test]
fn every_resealed_bundle_field_fails_its_own_check() {
    let bundle = record().bundle.to_bytes();
    type Case = (&'static str, fn(&Error) -> bool, usize);
    let expect: [Case; 8] = [
        ("key_id", |e| matches!(e, Error::WrongIdentity), 1),
        ("nonce", |e| matches!(e, Error::CommitmentMismatch), 1),
        ("subject", |e| matches!(e, Error::WrongResult), 1),
        ("route_digest", |e| matches!(e, Error::WrongRoute), 1),
        ("context_digest", |e| matches!(e, Error::WrongContext), 1),
        (
            "mldsa_signature",
            |e| matches!(e, Error::BadMlDsaSignature),
            1,
        ),
        (
            "falcon_signature",
            |e| matches!(e, Error::BadFalconSignature),
            1,
        ),
        // SLH-DSA verification costs ~0.7 ms: every 61st byte plus both ends.
        (
            "slhdsa_signature",
            |e| matches!(e, Error::BadSlhDsaSignature),
            61,
        ),
    ];
    for (name, is_expected, step) in expect {
        let (start, end) = field(name);
        let positions = (start..end).step_by(step).chain([end - 1]);
        for i in positions {
            let forged = resealed(record().receipt, &flipped(&bundle, i, 0x01)).expect("parse");
            let got = check(&forged);
            assert!(
                got.as_ref().is_err_and(is_expected),
                "{name} byte {i}: {got:?}"
            );
        }
    }
    // The kind byte turned into a valid other kind.
    let (kind, _) = field("kind");
    let forged = resealed(record().receipt, &flipped(&bundle, kind, 0x03)).expect("parse");
    let got = check(&forged);
    assert!(
        matches!(
            got,
            Err(Error::WrongKind {
                expected: RecordKind::Single,
                found: RecordKind::Batch
            })
        ),
        "{got:?}"
    );
    let got = verify_batch_record(alice().public(), &route(), CONTEXT, record());
    assert!(matches!(got, Err(Error::WrongKind { .. })), "{got:?}");
}

#[test]
fn truncated_oversized_and_garbage_inputs_are_errors() {
    let receipt = record().receipt.to_bytes();
    let bundle = record().bundle.to_bytes();
    let all = record().to_bytes();
    for len in 0..RECEIPT_LEN {
        assert!(
            Receipt::from_bytes(&receipt[..len]).is_err(),
            "receipt {len}"
        );
    }
    for len in (0..BUNDLE_LEN).step_by(7).chain([BUNDLE_LEN - 1]) {
        assert!(Bundle::from_bytes(&bundle[..len]).is_err(), "bundle {len}");
        assert!(Record::from_bytes(&all[..RECEIPT_LEN + len]).is_err());
    }
    for len in 0..RECEIPT_LEN + 3 {
        assert!(Record::from_bytes(&all[..len]).is_err(), "record {len}");
    }
    let long = |b: &[u8]| [b, &[0u8]].concat();
    assert!(Receipt::from_bytes(&long(&receipt)).is_err());
    assert!(Bundle::from_bytes(&long(&bundle)).is_err());
    assert!(Record::from_bytes(&long(&all)).is_err());
    for seed in 1..50 {
        for len in [0, 1, 73, 74, 75, 1000, BUNDLE_LEN, RECEIPT_LEN + BUNDLE_LEN] {
            let bytes = garbage(len, seed);
            assert!(Bundle::from_bytes(&bytes).is_err());
            assert!(Record::from_bytes(&bytes).is_err());
        }
        // A receipt has no magic: 74 random bytes with a valid header parse, and must then
        // fail verification.
        let mut bytes = garbage(RECEIPT_LEN, seed);
        bytes[..2].copy_from_slice(&[1, 2]);
        let receipt = Receipt::from_bytes(&bytes).expect("valid header");
        let got = check(&Record {
            receipt,
            bundle: record().bundle.clone(),
        });
        assert!(matches!(got, Err(Error::BundleDigestMismatch)), "{got:?}");
    }
    let mut wrong_header = receipt;
    wrong_header[0] = 3;
    let got = Receipt::from_bytes(&wrong_header);
    assert!(matches!(got, Err(Error::Malformed { .. })), "{got:?}");
    assert!(got.is_err_and(|e| e.to_string().contains("version")));
}

#[test]
fn commitment_known_answer() {
    let route = Route::new("bfv", "bfv-n8192-128");
    let nonce = [0x42u8; 32];
    let ts: u64 = 1_700_000_000_123;
    let result_d = tagged_hash("triskel-attest/v1/result", &[b"triskel"], &[]);
    let route_d = tagged_hash("triskel-attest/v1/route", &[b"bfv", b"bfv-n8192-128"], &[]);
    let context_d = tagged_hash("triskel-attest/v1/context", &[b"ctx"], &[]);
    let fixed = [
        &result_d[..],
        &route_d,
        &context_d,
        &ts.to_le_bytes(),
        &nonce,
    ];

    // Suite 2 binds the signer's key id, which hashes the suite and the three keys.
    let signer = public("kat-suite2.pub");
    let keys = signer.public_keys();
    let key_id = tagged_hash(
        "triskel-attest/v1/key-id",
        &[],
        &[&[2], keys[0], keys[1], keys[2]],
    );
    assert_eq!(signer.key_id(), &key_id);
    let got = commitment(&signer, b"triskel", &route, b"ctx", ts, &nonce);
    // The documented encoding, spelled out independently of the crate.
    let expected = tagged_hash(
        "triskel-attest/v1/commitment",
        &[],
        &[&[&[1u8, 2][..], &key_id[..]][..], &fixed[..]].concat(),
    );
    assert_eq!(got, expected);
    assert_eq!(hex(&got), KAT_COMMITMENT_SUITE2);

    // Suite 1 has no key id in its commitment (records made before suite 2).
    let signer = public("suite1.pub");
    let got = commitment(&signer, b"triskel", &route, b"ctx", ts, &nonce);
    let expected = tagged_hash(
        "triskel-attest/v1/commitment",
        &[],
        &[&[&[1u8, 1][..]][..], &fixed[..]].concat(),
    );
    assert_eq!(got, expected);
    // The value suite 1 has always had (before suite 2 existed).
    assert_eq!(hex(&got), KAT_COMMITMENT_SUITE1);
}

/// Computed from the implementation and cross-checked by the spelled-out encoding above,
/// over the fixed public identity `tests/data/kat-suite2.pub`.
const KAT_COMMITMENT_SUITE2: &str =
    "1db43a897dcb051caffa2722a52331069f454315573868e2b7e6f19066be5fe9";

/// Computed once from the implementation and cross-checked with Python's `hashlib.sha3_256`
/// over the documented encoding.
const KAT_COMMITMENT_SUITE1: &str =
    "6b85ff0fdd54480256a420465ecd62319cde4ed62578b6b95416ae3f518ce2a1";
