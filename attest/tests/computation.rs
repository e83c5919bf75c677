//! Computation records (version 2): round trip, every changed field, versions and kinds,
//! malformed headers, the KAT of the salted commitment.

mod common;

use std::sync::OnceLock;

use common::{
    alice, bob, field, flipped, length_prefixed, public, resealed, route, signed_by_alice,
    tagged_hash,
};
use triskel_attest::{
    attest, attest_batch, attest_computation, computation_commitment, hex, result_digest,
    route_digest, verify, verify_batch_record, verify_computation, Bundle, Computation, Digest32,
    Error, Identity, Receipt, Record, RecordKind, Route, Suite, Verified, RECEIPT_LEN,
};

const CONTEXT: &[u8] = b"tenant=acme request=91";

fn inputs() -> &'static [Digest32] {
    static INPUTS: OnceLock<Vec<Digest32>> = OnceLock::new();
    INPUTS.get_or_init(|| {
        ["ciphertext x", "ciphertext y", "ciphertext z"]
            .iter()
            .map(|c| result_digest(c.as_bytes()))
            .collect()
    })
}

fn computation() -> Computation<'static> {
    Computation {
        program: [0x11; 32],
        key_set: [0x22; 32],
        inputs: inputs(),
        output: result_digest(b"output ciphertext"),
    }
}

/// One computation record by alice over computation() / route() / CONTEXT.
fn record() -> &'static Record {
    static RECORD: OnceLock<Record> = OnceLock::new();
    RECORD.get_or_init(|| {
        attest_computation(alice(), &computation(), &route(), CONTEXT).expect("attest")
    })
}

fn check_with(c: &Computation<'_>, route: &Route, context: &[u8]) -> Result<Verified, Error> {
    verify_computation(alice().public(), c, route, context, record())
}

fn check(record: &Record) -> Result<Verified, Error> {
    verify_computation(alice().public(), &computation(), &route(), CONTEXT, record)
}

#[test]
fn round_trip_verifies() {
    let record = record();
    let verified = check(record).expect("verifies");
    assert_eq!(verified, signed_by_alice(record));
    assert_eq!(record.version(), 2);
    assert_eq!(record.receipt.version, 2);
    assert_eq!(record.bundle.kind(), RecordKind::Computation);
    let bytes = record.to_bytes();
    assert_eq!((bytes[0], bytes[RECEIPT_LEN + 4]), (2, 2), "version bytes");
    let parsed = Record::from_bytes(&bytes).expect("parse");
    assert_eq!(&parsed, record);
    assert!(check(&parsed).is_ok());
    let detached = Record {
        receipt: Receipt::from_bytes(&record.receipt.to_bytes()).expect("receipt"),
        bundle: Bundle::from_bytes(&record.bundle.to_bytes()).expect("bundle"),
    };
    assert!(check(&detached).is_ok());
    // A computation with no inputs is a computation too.
    let constant = Computation {
        inputs: &[],
        ..computation()
    };
    let record = attest_computation(alice(), &constant, &route(), b"").expect("attest");
    assert!(verify_computation(alice().public(), &constant, &route(), b"", &record).is_ok());
    let got = verify_computation(alice().public(), &computation(), &route(), b"", &record);
    assert!(matches!(got, Err(Error::WrongComputation)), "{got:?}");
}

#[test]
fn every_digest_in_the_bundle_is_salted() {
    let other = attest_computation(alice(), &computation(), &route(), CONTEXT).expect("attest");
    assert!(check(&other).is_ok());
    let (a, b) = (&record().bundle, &other.bundle);
    assert_ne!(a.nonce(), b.nonce());
    assert_ne!(a.subject(), b.subject());
    assert_ne!(a.route_digest(), b.route_digest());
    assert_ne!(a.context_digest(), b.context_digest());
    assert_ne!(*a.route_digest(), route_digest(&route()));
}

#[test]
fn every_computation_field_matters() {
    let base = computation();
    let mut changed: Vec<(&str, Vec<Digest32>, Computation<'_>)> = Vec::new();
    let mut program = base;
    program.program[31] ^= 1;
    changed.push(("program", vec![], program));
    let mut key_set = base;
    key_set.key_set[0] ^= 1;
    changed.push(("key set", vec![], key_set));
    let mut output = base;
    output.output[7] ^= 0x80;
    changed.push(("output", vec![], output));
    let mut swapped = inputs().to_vec();
    swapped.swap(0, 2);
    changed.push(("input order", swapped, base));
    changed.push(("one input fewer", inputs()[..2].to_vec(), base));
    changed.push(("no input", vec![], base));
    changed.push(("one input more", [inputs(), &[[0; 32]]].concat(), base));
    for i in 0..inputs().len() {
        let mut one = inputs().to_vec();
        one[i][i] ^= 1;
        changed.push(("one input", one, base));
    }
    for (what, inputs, mut c) in changed.iter().cloned() {
        if what.contains("input") {
            c.inputs = &inputs;
        }
        let got = check_with(&c, &route(), CONTEXT);
        assert!(
            matches!(got, Err(Error::WrongComputation)),
            "{what}: {got:?}"
        );
    }
    for r in [
        Route::new("ckks", "bfv-n8192-128"),
        Route::new("bfv", "bfv-n8192-129"),
        Route::new("bfvb", "fv-n8192-128"),
    ] {
        let got = check_with(&base, &r, CONTEXT);
        assert!(matches!(got, Err(Error::WrongRoute)), "{r:?}: {got:?}");
    }
    for i in 0..CONTEXT.len() {
        let got = check_with(&base, &route(), &flipped(CONTEXT, i, 1));
        assert!(matches!(got, Err(Error::WrongContext)), "byte {i}: {got:?}");
    }
    let got = check_with(&base, &route(), b"");
    assert!(matches!(got, Err(Error::WrongContext)), "{got:?}");
    let got = verify_computation(bob().public(), &base, &route(), CONTEXT, record());
    assert!(matches!(got, Err(Error::WrongIdentity)), "{got:?}");
}

#[test]
fn nonce_timestamp_and_every_bundle_field_are_bound() {
    let mut receipt = record().receipt;
    receipt.timestamp_ms += 1;
    let got = check(&Record {
        receipt,
        bundle: record().bundle.clone(),
    });
    assert!(matches!(got, Err(Error::CommitmentMismatch)), "{got:?}");
    let mut receipt = record().receipt;
    receipt.commitment[0] ^= 1;
    let got = check(&Record {
        receipt,
        bundle: record().bundle.clone(),
    });
    assert!(matches!(got, Err(Error::CommitmentMismatch)), "{got:?}");

    let bundle = record().bundle.to_bytes();
    type Case = (&'static str, fn(&Error) -> bool);
    let expect: [Case; 8] = [
        ("key_id", |e| matches!(e, Error::WrongIdentity)),
        // The nonce salts the subject, so the recomputed subject differs first.
        ("nonce", |e| matches!(e, Error::WrongComputation)),
        ("subject", |e| matches!(e, Error::WrongComputation)),
        ("route_digest", |e| matches!(e, Error::WrongRoute)),
        ("context_digest", |e| matches!(e, Error::WrongContext)),
        ("mldsa_signature", |e| matches!(e, Error::BadMlDsaSignature)),
        ("falcon_signature", |e| {
            matches!(e, Error::BadFalconSignature)
        }),
        ("slhdsa_signature", |e| {
            matches!(e, Error::BadSlhDsaSignature)
        }),
    ];
    for (name, is_expected) in expect {
        let (start, end) = field(name);
        for i in [start, (start + end) / 2, end - 1] {
            let forged = resealed(record().receipt, &flipped(&bundle, i, 0x01)).expect("parse");
            let got = check(&forged);
            assert!(
                got.as_ref().is_err_and(is_expected),
                "{name} byte {i}: {got:?}"
            );
        }
    }
    // Only the nonce changed, with the three salted digests recomputed from it: the
    // commitment (which binds the nonce) no longer matches the receipt's.
    let (start, _) = field("nonce");
    let mut nonce = *record().bundle.nonce();
    nonce[0] ^= 1;
    let mut forged = bundle.clone();
    forged[start] ^= 1;
    for (name, digest) in [
        ("subject", subject_by_hand(&nonce, &computation())),
        ("route_digest", route_by_hand(&nonce, &route())),
        ("context_digest", context_by_hand(&nonce, CONTEXT)),
    ] {
        let (s, e) = field(name);
        forged[s..e].copy_from_slice(&digest);
    }
    let got = check(&resealed(record().receipt, &forged).expect("parse"));
    assert!(matches!(got, Err(Error::CommitmentMismatch)), "{got:?}");
}

#[test]
fn kinds_and_versions_do_not_mix() {
    let v2 = record();
    let got = verify(alice().public(), b"result", &route(), CONTEXT, v2);
    assert!(
        matches!(
            got,
            Err(Error::WrongKind {
                expected: RecordKind::Single,
                found: RecordKind::Computation
            })
        ),
        "{got:?}"
    );
    let got = verify_batch_record(alice().public(), &route(), CONTEXT, v2);
    assert!(matches!(got, Err(Error::WrongKind { .. })), "{got:?}");

    let single = attest(alice(), b"result", &route(), CONTEXT).expect("attest");
    assert_eq!((single.version(), single.receipt.version), (1, 1));
    assert!(verify(alice().public(), b"result", &route(), CONTEXT, &single).is_ok());
    let batch = attest_batch(alice(), &[b"a", b"b"], &route(), CONTEXT).expect("batch");
    assert_eq!(batch.record.version(), 1);
    for v1 in [&single, &batch.record] {
        let got = verify_computation(alice().public(), &computation(), &route(), CONTEXT, v1);
        assert!(
            matches!(
                got,
                Err(Error::WrongKind {
                    expected: RecordKind::Computation,
                    ..
                })
            ),
            "{got:?}"
        );
        let message = got.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("(version 2)") && message.contains("(version 1)"));
    }

    // Receipt and bundle of different versions: refused when parsed together, and when
    // put together by hand.
    let mixed = [&single.receipt.to_bytes()[..], &v2.bundle.to_bytes()].concat();
    let got = Record::from_bytes(&mixed);
    assert!(
        matches!(got, Err(Error::Malformed { item: "record", .. })),
        "{got:?}"
    );
    let mut receipt = v2.receipt;
    receipt.version = 1;
    let got = check(&Record {
        receipt,
        bundle: v2.bundle.clone(),
    });
    assert!(matches!(got, Err(Error::VersionMismatch)), "{got:?}");
}

#[test]
fn headers_of_unknown_versions_and_kinds_are_malformed() {
    let (version, _) = field("version");
    let (kind, _) = field("kind");
    let v1 = attest(alice(), b"result", &route(), CONTEXT)
        .expect("attest")
        .bundle
        .to_bytes();
    let v2 = record().bundle.to_bytes();
    let with = |bytes: &[u8], at: usize, value: u8| {
        let mut out = bytes.to_vec();
        out[at] = value;
        out
    };
    let cases = [
        ("v1 claiming kind 3", with(&v1, kind, 3)),
        ("v2 claiming kind 1", with(&v2, kind, 1)),
        ("v2 claiming kind 2", with(&v2, kind, 2)),
        ("v2 bundle marked v1", with(&v2, version, 1)),
        ("kind 4", with(&v2, kind, 4)),
        ("version 3", with(&v2, version, 3)),
        ("version 0", with(&v1, version, 0)),
    ];
    for (what, bytes) in cases {
        let got = Bundle::from_bytes(&bytes);
        assert!(
            matches!(got, Err(Error::Malformed { item: "bundle", .. })),
            "{what}: {got:?}"
        );
    }
    for v in [0u8, 3, 255] {
        let got = Receipt::from_bytes(&with(&record().receipt.to_bytes(), 0, v));
        assert!(
            matches!(
                got,
                Err(Error::Malformed {
                    item: "receipt",
                    ..
                })
            ),
            "receipt version {v}: {got:?}"
        );
    }
}

#[test]
fn suite_1_identities_sign_computations_too() {
    let old = Identity::generate_suite(Suite::Sphincs31).expect("suite 1");
    let record = attest_computation(&old, &computation(), &route(), CONTEXT).expect("attest");
    let got = verify_computation(old.public(), &computation(), &route(), CONTEXT, &record);
    assert_eq!(got.expect("verifies").suite, Suite::Sphincs31);
}

fn subject_by_hand(nonce: &Digest32, c: &Computation<'_>) -> Digest32 {
    let count = (c.inputs.len() as u64).to_le_bytes();
    let mut fixed: Vec<&[u8]> = vec![nonce, &c.program, &c.key_set, &count];
    fixed.extend(c.inputs.iter().map(|d| &d[..]));
    fixed.push(&c.output);
    tagged_hash("triskel-attest/v2/computation", &[], &fixed)
}

fn route_by_hand(nonce: &Digest32, route: &Route) -> Digest32 {
    let (engine, params) = (
        length_prefixed(route.engine.as_bytes()),
        length_prefixed(route.params.as_bytes()),
    );
    tagged_hash("triskel-attest/v2/route", &[], &[nonce, &engine, &params])
}

fn context_by_hand(nonce: &Digest32, context: &[u8]) -> Digest32 {
    tagged_hash(
        "triskel-attest/v2/context",
        &[],
        &[nonce, &length_prefixed(context)],
    )
}

/// The digests a signed bundle carries are the documented ones, under its own nonce.
#[test]
fn bundle_digests_follow_the_documented_formulas() {
    let bundle = &record().bundle;
    let nonce = bundle.nonce();
    assert_eq!(bundle.subject(), &subject_by_hand(nonce, &computation()));
    assert_eq!(bundle.route_digest(), &route_by_hand(nonce, &route()));
    assert_eq!(bundle.context_digest(), &context_by_hand(nonce, CONTEXT));
}

#[test]
fn computation_commitment_known_answer() {
    let signer = public("kat-suite2.pub");
    let inputs = [result_digest(b"x"), result_digest(b"y")];
    let c = Computation {
        program: [0x01; 32],
        key_set: [0x02; 32],
        inputs: &inputs,
        output: result_digest(b"z"),
    };
    let route = Route::new("bfv", "bfv-n8192-128");
    let nonce = [0x42u8; 32];
    let ts: u64 = 1_700_000_000_123;
    // The documented encoding, spelled out independently of the crate: version 2, kind 3,
    // the suite, then the key id (in both suites) and the three salted digests.
    let by_hand = |suite: u8, key_id: &Digest32| {
        tagged_hash(
            "triskel-attest/v2/commitment",
            &[],
            &[
                &[2, 3, suite],
                key_id,
                &subject_by_hand(&nonce, &c),
                &route_by_hand(&nonce, &route),
                &context_by_hand(&nonce, b"ctx"),
                &ts.to_le_bytes(),
                &nonce,
            ],
        )
    };
    let got = computation_commitment(&signer, &c, &route, b"ctx", ts, &nonce);
    assert_eq!(got, by_hand(2, signer.key_id()));
    assert_eq!(hex(&got), KAT_COMPUTATION_COMMITMENT);
    let old = public("suite1.pub");
    let got = computation_commitment(&old, &c, &route, b"ctx", ts, &nonce);
    assert_eq!(got, by_hand(1, old.key_id()));
}

/// Computed from the implementation, cross-checked by the spelled-out encoding above and
/// by Python's `hashlib.sha3_256` over the documented encoding, with the fixed public
/// identity `tests/data/kat-suite2.pub`.
const KAT_COMPUTATION_COMMITMENT: &str =
    "bcb21e5ea299b55f6e5500f2cd16960d455d8d32d67184bce0fb8a9f986ecd83";
