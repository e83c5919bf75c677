//! Suite 2 signatures checked by independent standard verifiers, and suite-1 records made
//! before suite 2 existed still verify.

mod common;

use std::path::PathBuf;

use common::{alice, route};
use triskel_attest::{
    attest, signed_message, verify, verify_batch_record, Bundle, Error, Identity, InclusionProof,
    PublicIdentity, Receipt, Record, Route, Suite,
};

fn data(name: &str) -> Vec<u8> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "data", name]
        .iter()
        .collect();
    std::fs::read(path).expect("fixture")
}

/// FIPS 204 ML-DSA-65 verification by the `fips204` crate (not the signing `pqcrypto`).
fn fips204_accepts(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    use fips204::ml_dsa_65;
    use fips204::traits::{SerDes, Verifier};
    let (Ok(pk), Ok(sig)) = (pk.try_into(), sig.try_into()) else {
        return false;
    };
    ml_dsa_65::PublicKey::try_from_bytes(pk).is_ok_and(|pk| pk.verify(msg, &sig, b""))
}

/// FIPS 205 SLH-DSA-SHA2-128f verification by RustCrypto's `slh-dsa` (not the signing
/// `fips205`), pure mode, empty context.
fn rustcrypto_slh_dsa_accepts(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    use slh_dsa::{Sha2_128f, Signature, VerifyingKey};
    let (Ok(pk), Ok(sig)) = (
        VerifyingKey::<Sha2_128f>::try_from(pk),
        Signature::<Sha2_128f>::try_from(sig),
    ) else {
        return false;
    };
    pk.try_verify_with_context(msg, &[], &sig).is_ok()
}

#[test]
fn suite_2_signatures_pass_independent_standard_verifiers() {
    let record = attest(alice(), b"result", &route(), b"ctx").expect("attest");
    let msg = signed_message(&record.receipt.commitment);
    let [mldsa_pk, _, slh_pk] = alice().public().public_keys();
    let [mldsa_sig, _, slh_sig] = record.bundle.signatures();
    assert!(fips204_accepts(mldsa_pk, &msg, mldsa_sig));
    assert!(rustcrypto_slh_dsa_accepts(slh_pk, &msg, slh_sig));
    // They are real checks: another message, or a flipped signature bit, fails.
    let other = signed_message(&[0u8; 32]);
    assert!(!fips204_accepts(mldsa_pk, &other, mldsa_sig));
    assert!(!rustcrypto_slh_dsa_accepts(slh_pk, &other, slh_sig));
    let mut bad = slh_sig.to_vec();
    bad[100] ^= 1;
    assert!(!rustcrypto_slh_dsa_accepts(slh_pk, &msg, &bad));
}

fn suite_1_record() -> (PublicIdentity, Record) {
    let public = PublicIdentity::from_bytes(&data("suite1.pub")).expect("public");
    let record = Record {
        receipt: Receipt::from_bytes(&data("suite1.receipt")).expect("receipt"),
        bundle: Bundle::from_bytes(&data("suite1.bundle")).expect("bundle"),
    };
    (public, record)
}

/// `tests/data/suite1.*` were written by this crate before suite 2 existed (commit
/// 6f64654): one single record and one batch of three.
#[test]
fn old_suite_1_records_still_verify() {
    let (public, record) = suite_1_record();
    assert_eq!(public.suite(), Suite::Sphincs31);
    let r = Route::new("bfv", "bfv-n8192-128");
    let verified = verify(&public, b"suite 1 result", &r, b"suite 1 context", &record)
        .expect("old record verifies");
    assert_eq!(verified.suite, Suite::Sphincs31);
    assert_eq!(&verified.key_id, public.key_id());
    let got = verify(&public, b"suite 1 resulT", &r, b"suite 1 context", &record);
    assert!(matches!(got, Err(Error::WrongResult)), "{got:?}");
    // SPHINCS+ round 3.1 is not FIPS 205: a FIPS 205 verifier rejects its signature.
    let msg = signed_message(&record.receipt.commitment);
    let [_, _, slh_pk] = public.public_keys();
    assert!(!rustcrypto_slh_dsa_accepts(
        slh_pk,
        &msg,
        record.bundle.signatures()[2]
    ));
    // ML-DSA-65 was FIPS 204 already.
    let [mldsa_pk, _, _] = public.public_keys();
    assert!(fips204_accepts(
        mldsa_pk,
        &msg,
        record.bundle.signatures()[0]
    ));

    let batch = Record::from_bytes(&data("suite1-batch.record")).expect("record");
    let proof = InclusionProof::from_bytes(&data("suite1-batch.proof1")).expect("proof");
    let verified = verify_batch_record(&public, &r, b"suite 1 batch", &batch).expect("batch");
    assert!(verified.check(1, b"batch result 1", &proof).is_ok());
    assert!(verified.check(1, b"batch result 2", &proof).is_err());
}

/// A suite-1 key's record relabelled suite 2 (FIPS 205) would have its third signature
/// checked as SPHINCS+ round 3.1 yet be reported as FIPS 205: refused before any signature.
#[test]
fn a_record_naming_another_suite_than_its_key_is_refused() {
    let (public, record) = suite_1_record();
    let mut bundle = record.bundle.to_bytes();
    assert_eq!(bundle[5], 1, "the bundle's suite byte");
    bundle[5] = 2;
    let bundle = Bundle::from_bytes(&bundle).expect("bundle");
    let receipt = Receipt {
        suite: Suite::Fips205,
        bundle_digest: bundle.digest(),
        ..record.receipt
    };
    let relabelled = Record { receipt, bundle };
    let r = Route::new("bfv", "bfv-n8192-128");
    let got = verify(
        &public,
        b"suite 1 result",
        &r,
        b"suite 1 context",
        &relabelled,
    );
    assert!(matches!(got, Err(Error::SuiteMismatch)), "{got:?}");
}

#[test]
fn suite_1_identities_still_sign_for_comparison() {
    let identity = Identity::generate_suite(Suite::Sphincs31).expect("generate");
    let record = attest(&identity, b"r", &route(), b"c").expect("attest");
    let verified = verify(identity.public(), b"r", &route(), b"c", &record).expect("verify");
    assert_eq!(verified.suite, Suite::Sphincs31);
    // A suite-1 record is refused under a suite-2 identity, and the reverse.
    let got = verify(alice().public(), b"r", &route(), b"c", &record);
    assert!(matches!(got, Err(Error::WrongIdentity)), "{got:?}");
    let reloaded = Identity::from_bytes(&identity.to_bytes()).expect("reload");
    assert_eq!(reloaded.public().suite(), Suite::Sphincs31);
}
