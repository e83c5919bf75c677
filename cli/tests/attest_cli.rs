//! `triskel attest keygen | sign | verify | inspect` as a user runs them: round trip,
//! tampering, another identity, files left behind, key file modes, and the inspect output
//! checked by independent standard verifiers.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn triskel(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_triskel"))
        .args(args)
        .output()
        .expect("run triskel");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("triskel-cli-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn s(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn keygen(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let (sk, pk) = (
        dir.join(format!("{name}.key")),
        dir.join(format!("{name}.pub")),
    );
    let (ok, out, err) = triskel(&["attest", "keygen", "--secret", s(&sk), "--public", s(&pk)]);
    assert!(ok, "{err}");
    assert!(out.contains("suite 2") && out.contains("FIPS 205"), "{out}");
    (sk, pk)
}

const ROUTE: [&str; 4] = ["--engine", "bfv", "--params", "bfv-n8192-128"];

/// `triskel attest <command> <key_flag> KEY --result .. --receipt .. --bundle ..` with
/// the route and context every test uses.
fn on_record(
    command: &str,
    key_flag: &str,
    key: &Path,
    files: [&Path; 3],
) -> (bool, String, String) {
    let [result, receipt, bundle] = files.map(s);
    let mut args = vec!["attest", command, key_flag, s(key), "--result", result];
    args.extend(ROUTE);
    args.extend([
        "--context",
        "job 7",
        "--receipt",
        receipt,
        "--bundle",
        bundle,
    ]);
    triskel(&args)
}

fn sign(secret: &Path, result: &Path, receipt: &Path, bundle: &Path) -> (bool, String, String) {
    on_record("sign", "--secret", secret, [result, receipt, bundle])
}

fn verify(public: &Path, result: &Path, receipt: &Path, bundle: &Path) -> (bool, String, String) {
    on_record("verify", "--public", public, [result, receipt, bundle])
}

fn flip(path: &Path, at: usize) -> PathBuf {
    let mut bytes = fs::read(path).expect("read");
    bytes[at] ^= 0x01;
    let out = path.with_extension(format!("flipped{at}"));
    fs::write(&out, bytes).expect("write");
    out
}

#[test]
fn sign_verify_tamper_and_another_identity() {
    let dir = scratch("roundtrip");
    let (sk, pk) = keygen(&dir, "alice");
    let (bob_sk, bob_pk) = keygen(&dir, "bob");
    let result = dir.join("score.bin");
    fs::write(&result, b"encrypted match score").expect("write");
    let (receipt, bundle) = (dir.join("score.receipt"), dir.join("score.bundle"));
    let (ok, out, err) = sign(&sk, &result, &receipt, &bundle);
    assert!(ok, "{err}");
    assert!(out.contains("suite 2"), "{out}");
    assert_eq!(fs::metadata(&receipt).expect("receipt").len(), 74);

    let (ok, out, err) = verify(&pk, &result, &receipt, &bundle);
    assert!(ok, "{err}");
    assert!(out.contains("all three signatures valid"), "{out}");
    assert!(out.contains("SLH-DSA-SHA2-128f (FIPS 205"), "{out}");

    // One flipped byte of the receipt, the bundle or the result is rejected, naming why.
    let cases = [
        (
            flip(&receipt, 20),
            bundle.clone(),
            result.clone(),
            "commitment",
        ),
        (
            receipt.clone(),
            flip(&bundle, 5000),
            result.clone(),
            "bundle",
        ),
        (receipt.clone(), bundle.clone(), flip(&result, 3), "result"),
    ];
    for (receipt, bundle, result, why) in &cases {
        let (ok, _, err) = verify(&pk, result, receipt, bundle);
        assert!(!ok && err.contains(why), "{why}: {err}");
    }

    // Bob's bundle with alice's receipt; bob's record under alice's public identity.
    let (bob_receipt, bob_bundle) = (dir.join("bob.receipt"), dir.join("bob.bundle"));
    let (ok, _, err) = sign(&bob_sk, &result, &bob_receipt, &bob_bundle);
    assert!(ok, "{err}");
    let (ok, _, err) = verify(&pk, &result, &receipt, &bob_bundle);
    assert!(!ok && err.contains("bundle digest"), "{err}");
    let (ok, _, err) = verify(&pk, &result, &bob_receipt, &bob_bundle);
    assert!(!ok && err.contains("another identity"), "{err}");
    let (ok, _, err) = verify(&bob_pk, &result, &bob_receipt, &bob_bundle);
    assert!(ok, "{err}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn failed_commands_leave_nothing_behind() {
    let dir = scratch("leftovers");
    let (sk, pk) = keygen(&dir, "id");
    let result = dir.join("r.bin");
    fs::write(&result, b"r").expect("write");
    let before = listing(&dir);

    // keygen: existing public file, unwritable path, the same path twice.
    let fresh = dir.join("fresh.key");
    let missing_dir = dir.join("no-such-dir").join("x");
    for (secret, public) in [(&fresh, &pk), (&fresh, &missing_dir), (&fresh, &fresh)] {
        let (ok, _, err) = triskel(&[
            "attest",
            "keygen",
            "--secret",
            s(secret),
            "--public",
            s(public),
        ]);
        assert!(!ok, "{public:?}");
        assert!(!err.is_empty());
        assert_eq!(listing(&dir), before, "{public:?}: {err}");
    }
    // sign: existing bundle, unwritable bundle path, receipt and bundle on one path.
    let receipt = dir.join("r.receipt");
    let existing = dir.join("old.bundle");
    fs::write(&existing, b"keep").expect("write");
    let before = listing(&dir);
    for bundle in [&existing, &missing_dir, &receipt] {
        let (ok, _, err) = sign(&sk, &result, &receipt, bundle);
        assert!(!ok, "{bundle:?}");
        assert_eq!(listing(&dir), before, "{bundle:?}: {err}");
    }
    assert_eq!(fs::read(&existing).expect("read"), b"keep");
    let _ = fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_secret_key_others_can_read_is_refused_unless_allowed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("mode");
    let (sk, _) = keygen(&dir, "id");
    let mode = fs::metadata(&sk).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    fs::set_permissions(&sk, fs::Permissions::from_mode(0o644)).expect("chmod");
    let result = dir.join("r.bin");
    fs::write(&result, b"r").expect("write");
    let (receipt, bundle) = (dir.join("r.receipt"), dir.join("r.bundle"));
    let (ok, _, err) = sign(&sk, &result, &receipt, &bundle);
    assert!(!ok && err.contains("chmod 600"), "{err}");
    assert!(!receipt.exists() && !bundle.exists());
    let mut args = vec![
        "attest",
        "sign",
        "--allow-insecure-key-file",
        "--secret",
        s(&sk),
    ];
    args.extend(["--result", s(&result)]);
    args.extend(ROUTE);
    let (ok, _, err) = triskel(&args);
    assert!(ok, "{err}");
    let _ = fs::remove_dir_all(&dir);
}

fn unhex(text: &serde_json::Value) -> Vec<u8> {
    let text = text.as_str().expect("hex string");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Each signature as printed by `inspect`, checked by a verifier that is not the signer's.
#[test]
fn inspect_output_passes_independent_standard_verifiers() {
    let dir = scratch("inspect");
    let (sk, pk) = keygen(&dir, "alice");
    let (_, other_pk) = keygen(&dir, "bob");
    let result = dir.join("r.bin");
    fs::write(&result, b"42").expect("write");
    let (receipt, bundle) = (dir.join("r.receipt"), dir.join("r.bundle"));
    assert!(sign(&sk, &result, &receipt, &bundle).0);
    let args = [
        "attest",
        "inspect",
        s(&receipt),
        s(&bundle),
        "--public",
        s(&pk),
    ];
    let (ok, out, err) = triskel(&[&args[..], &["--json"]].concat());
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["suite"], 2);
    assert_eq!(v["kind"], "single");
    assert!(v["timestamp_ms"]
        .as_u64()
        .is_some_and(|t| t > 1_700_000_000_000));
    for key in [
        "key_id",
        "nonce",
        "subject",
        "route_digest",
        "context_digest",
        "commitment",
    ] {
        assert_eq!(unhex(&v[key]).len(), 32, "{key}");
    }
    let receipt_bytes = fs::read(&receipt).expect("read");
    assert_eq!(unhex(&v["commitment"]), receipt_bytes[10..42]);
    let sigs = v["signatures"].as_array().expect("signatures");
    let families: Vec<&str> = sigs.iter().map(|s| s["family"].as_str().unwrap()).collect();
    assert_eq!(families, ["ML-DSA", "Falcon", "SLH-DSA"]);
    let part = |i: usize, key| unhex(&sigs[i][key]);
    let message = unhex(&v["signed_message"]);
    assert_eq!(message.len(), 75);
    assert!(message.ends_with(&receipt_bytes[10..42]));

    // ML-DSA-65, FIPS 204 pure mode, empty context, by the `fips204` crate.
    {
        use fips204::ml_dsa_65::PublicKey;
        use fips204::traits::{SerDes, Verifier};
        assert_eq!(sigs[0]["context"], "");
        let pk = PublicKey::try_from_bytes(part(0, "public_key").try_into().unwrap()).unwrap();
        let sig: [u8; 3309] = part(0, "signature").try_into().unwrap();
        assert!(pk.verify(&part(0, "message"), &sig, b""));
        assert!(!pk.verify(&part(0, "message")[1..], &sig, b""));
    }
    // Falcon-512 round 3 (padded encoding), by the verifier below, written from the
    // round-3 specification (the signer is PQClean's code through `pqcrypto-falcon`).
    {
        assert!(sigs[1]["context"].is_null());
        let (pk, sig) = (part(1, "public_key"), part(1, "signature"));
        assert!(falcon512::verify(&pk, &part(1, "message"), &sig));
        assert!(!falcon512::verify(&pk, &part(1, "message")[1..], &sig));
        let mut flipped = sig.clone();
        flipped[100] ^= 0x10;
        assert!(!falcon512::verify(&pk, &part(1, "message"), &flipped));
    }
    // SLH-DSA-SHA2-128f, FIPS 205 pure mode, empty context, by RustCrypto `slh-dsa`.
    {
        use slh_dsa::{Sha2_128f, Signature, VerifyingKey};
        assert_eq!(sigs[2]["context"], "");
        let pk = VerifyingKey::<Sha2_128f>::try_from(&part(2, "public_key")[..]).unwrap();
        let sig = Signature::<Sha2_128f>::try_from(&part(2, "signature")[..]).unwrap();
        assert!(pk
            .try_verify_with_context(&part(2, "message"), &[], &sig)
            .is_ok());
        assert!(pk
            .try_verify_with_context(&part(2, "message"), b"x", &sig)
            .is_err());
    }

    // Without --public the keys are null; the text form names each algorithm.
    let (ok, out, err) = triskel(&["attest", "inspect", s(&receipt), s(&bundle), "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["signatures"][0]["public_key"].is_null());
    let (ok, out, err) = triskel(&args);
    assert!(ok, "{err}");
    assert!(
        out.contains("ML-DSA-65 (FIPS 204") && out.contains("Falcon-512 (round 3"),
        "{out}"
    );

    // Another identity's public file, and a receipt that is not the bundle's, are refused.
    let (ok, _, err) = triskel(&[
        "attest",
        "inspect",
        s(&receipt),
        s(&bundle),
        "--public",
        s(&other_pk),
    ]);
    assert!(!ok && err.contains("another identity"), "{err}");
    let (ok, _, err) = triskel(&["attest", "inspect", s(&flip(&receipt, 50)), s(&bundle)]);
    assert!(!ok && err.contains("bundle digest"), "{err}");
    let _ = fs::remove_dir_all(&dir);
}

/// A record made before suite 2 existed (`attest/tests/data`) still verifies, and says
/// what it is.
#[test]
fn old_suite_1_records_verify_and_say_so() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../attest/tests/data");
    let dir = scratch("suite1");
    let result = dir.join("r.bin");
    fs::write(&result, b"suite 1 result").expect("write");
    let mut args = vec!["attest", "verify", "--public"];
    let (public, receipt, bundle) = (
        data.join("suite1.pub"),
        data.join("suite1.receipt"),
        data.join("suite1.bundle"),
    );
    args.extend([s(&public), "--result", s(&result), "--receipt", s(&receipt)]);
    args.extend(["--bundle", s(&bundle), "--context", "suite 1 context"]);
    args.extend(ROUTE);
    let (ok, out, err) = triskel(&args);
    assert!(ok, "{err}");
    assert!(
        out.contains("SPHINCS+-SHA2-128f-simple round 3.1 (not FIPS 205)"),
        "{out}"
    );
    let (ok, out, err) = triskel(&["attest", "inspect", s(&receipt), s(&bundle), "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["suite"], 1);
    assert_eq!(v["signatures"][2]["family"], "SPHINCS+");
    assert!(v["signatures"][2]["context"].is_null());
    let _ = fs::remove_dir_all(&dir);
}

/// A Falcon-512 verifier following the round-3 specification, for the padded signature
/// encoding: `0x39 || nonce (40) || compressed s2, zero-padded to 666 bytes`; public key
/// `0x09 || h` with 512 coefficients of 14 bits, most significant bit first.
mod falcon512 {
    use sha3::digest::{ExtendableOutput, Update, XofReader};

    const N: usize = 512;
    const Q: i64 = 12289;
    /// floor(beta^2) for n = 512.
    const NORM_BOUND: i64 = 34_034_726;

    /// Reads bits most significant first.
    struct Bits<'a> {
        bytes: &'a [u8],
        at: usize,
    }

    impl Bits<'_> {
        fn bit(&mut self) -> Option<u32> {
            let byte = self.bytes.get(self.at / 8)?;
            let bit = (byte >> (7 - self.at % 8)) & 1;
            self.at += 1;
            Some(u32::from(bit))
        }

        fn bits(&mut self, count: usize) -> Option<u32> {
            (0..count).try_fold(0, |acc, _| Some(acc << 1 | self.bit()?))
        }
    }

    fn public_key(pk: &[u8]) -> Option<Vec<i64>> {
        if pk.len() != 1 + N * 14 / 8 || pk[0] != 0x09 {
            return None;
        }
        let mut bits = Bits {
            bytes: &pk[1..],
            at: 0,
        };
        (0..N)
            .map(|_| bits.bits(14).map(i64::from).filter(|&h| h < Q))
            .collect()
    }

    /// Sign bit, 7 low bits, then the high bits in unary (zeros closed by a one); the
    /// rest of the signature must be zero padding.
    fn compressed(bytes: &[u8]) -> Option<Vec<i64>> {
        let mut bits = Bits { bytes, at: 0 };
        let mut out = Vec::with_capacity(N);
        for _ in 0..N {
            let negative = bits.bit()? == 1;
            let mut magnitude = bits.bits(7)?;
            while bits.bit()? == 0 {
                magnitude += 128;
                if magnitude > 2047 {
                    return None;
                }
            }
            if negative && magnitude == 0 {
                return None;
            }
            let m = i64::from(magnitude);
            out.push(if negative { -m } else { m });
        }
        let padding_ok = (bits.at..bytes.len() * 8).all(|_| bits.bit() == Some(0));
        padding_ok.then_some(out)
    }

    /// HashToPoint: SHAKE256(nonce || message), 16-bit big-endian draws below 5q, mod q.
    fn hash_to_point(nonce: &[u8], msg: &[u8]) -> Vec<i64> {
        let mut shake = sha3::Shake256::default();
        shake.update(nonce);
        shake.update(msg);
        let mut reader = shake.finalize_xof();
        let mut c = Vec::with_capacity(N);
        while c.len() < N {
            let mut two = [0u8; 2];
            reader.read(&mut two);
            let t = i64::from(u16::from_be_bytes(two));
            if t < 5 * Q {
                c.push(t % Q);
            }
        }
        c
    }

    /// s2 * h in Z_q[x] / (x^n + 1), schoolbook.
    fn mul(a: &[i64], b: &[i64]) -> Vec<i64> {
        let mut out = vec![0i64; N];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                let (k, sign) = if i + j < N {
                    (i + j, 1)
                } else {
                    (i + j - N, -1)
                };
                out[k] = (out[k] + sign * x * y).rem_euclid(Q);
            }
        }
        out
    }

    pub fn verify(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
        if sig.len() != 666 || sig[0] != 0x39 {
            return false;
        }
        let (nonce, body) = sig[1..].split_at(40);
        let (Some(h), Some(s2)) = (public_key(pk), compressed(body)) else {
            return false;
        };
        let c = hash_to_point(nonce, msg);
        let s2h = mul(&s2, &h);
        let centred = |x: i64| if x > Q / 2 { x - Q } else { x };
        let s1_norm: i64 = (0..N)
            .map(|i| centred((c[i] - s2h[i]).rem_euclid(Q)).pow(2))
            .sum();
        let s2_norm: i64 = s2.iter().map(|x| x * x).sum();
        s1_norm + s2_norm <= NORM_BOUND
    }
}
