//! The file operations behind `triskel attest keygen | sign | verify`.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{alice, flipped, route};
use triskel_attest::{
    files::{self, RecordFiles},
    hex, Error, Identity, PublicIdentity, Route, Suite, PUBLIC_FILE_LEN, SECRET_FILE_LEN,
};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("triskel-attest-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn keygen_sign_verify_on_files() {
    let dir = scratch("cli");
    let (sk, pk) = (dir.join("id.key"), dir.join("id.pub"));
    let public = files::keygen(&sk, &pk).expect("keygen");
    assert_eq!(public.suite(), Suite::Fips205);
    assert_eq!(files::load_public(&pk).expect("load"), public);
    let loaded = files::load_identity(&sk, false).expect("load");
    assert_eq!(loaded.public(), &public);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&sk).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(listing(&dir), ["id.key", "id.pub"]);

    let result = dir.join("result.bin");
    fs::write(&result, b"ciphertext bytes").expect("write");
    let (receipt, bundle) = (dir.join("r.receipt"), dir.join("r.bundle"));
    let route = Route::new("ckks", "ckks-n16384-l8");
    let paths = RecordFiles {
        result: &result,
        receipt: &receipt,
        bundle: &bundle,
    };
    let signed = files::sign(&sk, false, paths, &route, b"job 9").expect("sign");
    assert_eq!(fs::read(&receipt).expect("read").len(), 74);
    let (checked, verified) = files::verify(&pk, paths, &route, b"job 9").expect("verify");
    assert_eq!(checked, signed);
    assert_eq!(verified.key_id, *public.key_id());
    assert_eq!(verified.timestamp_ms, signed.receipt.timestamp_ms);
    assert_eq!(
        listing(&dir),
        ["id.key", "id.pub", "r.bundle", "r.receipt", "result.bin"]
    );

    let got = files::verify(&pk, paths, &route, b"job 8");
    assert!(matches!(got, Err(Error::WrongContext)), "{got:?}");
    fs::write(&result, b"ciphertext bytez").expect("write");
    let got = files::verify(&pk, paths, &route, b"job 9");
    assert!(matches!(got, Err(Error::WrongResult)), "{got:?}");
    fs::write(&result, b"ciphertext bytes").expect("write");

    // A receipt that claims version 2 for a version-1 bundle does not load.
    let relabelled = dir.join("v2.receipt");
    fs::write(
        &relabelled,
        flipped(&fs::read(&receipt).expect("read"), 0, 3),
    )
    .expect("write");
    let got = files::load_record(&relabelled, &bundle);
    assert!(
        matches!(got, Err(Error::Malformed { item: "record", .. })),
        "{got:?}"
    );

    // Oversized and swapped files are malformed, missing ones are I/O errors.
    let mut long = fs::read(&receipt).expect("read");
    long.push(0);
    let long_receipt = dir.join("long.receipt");
    fs::write(&long_receipt, long).expect("write");
    let got = files::verify(
        &pk,
        RecordFiles {
            receipt: &long_receipt,
            ..paths
        },
        &route,
        b"job 9",
    );
    assert!(
        matches!(
            got,
            Err(Error::Malformed {
                item: "receipt",
                ..
            })
        ),
        "{got:?}"
    );
    let got = files::verify(
        &pk,
        RecordFiles {
            receipt: &bundle,
            bundle: &receipt,
            ..paths
        },
        &route,
        b"job 9",
    );
    assert!(matches!(got, Err(Error::Malformed { .. })), "{got:?}");
    assert!(matches!(
        files::load_public(&sk),
        Err(Error::Malformed { .. })
    ));
    assert!(matches!(
        files::load_identity(&pk, true),
        Err(Error::Malformed { .. })
    ));
    let missing = dir.join("missing");
    assert!(matches!(
        files::load_public(&missing),
        Err(Error::Io { .. })
    ));
    let _ = fs::remove_dir_all(&dir);
}

/// Failed `keygen` and `sign` leave nothing behind and overwrite nothing.
#[test]
fn failed_commands_leave_no_files() {
    let dir = scratch("atomic");
    let (sk, pk) = (dir.join("id.key"), dir.join("id.pub"));
    files::keygen(&sk, &pk).expect("keygen");
    let pk_bytes = fs::read(&pk).expect("read");

    // keygen: an existing public file, an unwritable path, the same path twice.
    let fresh = dir.join("fresh.key");
    let got = files::keygen(&fresh, &pk);
    assert!(matches!(got, Err(Error::Io { .. })), "{got:?}");
    let got = files::keygen(&fresh, &dir.join("no-such-dir").join("id.pub"));
    assert!(matches!(got, Err(Error::Io { .. })), "{got:?}");
    let got = files::keygen(&fresh, &dir.join(".").join("fresh.key"));
    assert!(
        got.as_ref()
            .is_err_and(|e| e.to_string().contains("same path")),
        "{got:?}"
    );
    assert_eq!(listing(&dir), ["id.key", "id.pub"]);
    assert_eq!(fs::read(&pk).expect("read"), pk_bytes, "not overwritten");

    // sign: an existing bundle, an unwritable bundle path, the same path twice.
    let result = dir.join("result.bin");
    fs::write(&result, b"r").expect("write");
    let existing = dir.join("existing.bundle");
    fs::write(&existing, b"keep me").expect("write");
    let receipt = dir.join("out.receipt");
    let sign = |bundle: &Path| {
        let paths = RecordFiles {
            result: &result,
            receipt: &receipt,
            bundle,
        };
        files::sign(&sk, false, paths, &route(), b"c")
    };
    for bundle in [
        existing.clone(),
        dir.join("no-such-dir").join("out.bundle"),
        receipt.clone(),
    ] {
        let got = sign(&bundle);
        assert!(matches!(got, Err(Error::Io { .. })), "{bundle:?}: {got:?}");
        assert_eq!(
            listing(&dir),
            ["existing.bundle", "id.key", "id.pub", "result.bin"],
            "{bundle:?}"
        );
    }
    assert_eq!(fs::read(&existing).expect("read"), b"keep me");
    #[cfg(unix)]
    {
        // A directory nobody may write to (root ignores modes, so only when it applies).
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.join("locked");
        fs::create_dir(&locked).expect("mkdir");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o500)).expect("chmod");
        if fs::write(locked.join("probe"), b"").is_err() {
            let got = sign(&locked.join("out.bundle"));
            assert!(matches!(got, Err(Error::Io { .. })), "{got:?}");
            assert!(!receipt.exists());
        }
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).expect("chmod");
    }
    let _ = fs::remove_dir_all(&dir);
}

#[cfg(unix)]
/// A result longer than `MAX_RESULT_BYTES` (here an endless one) is refused after at most
/// that many bytes, and nothing is written.
#[cfg(unix)]
#[test]
fn endless_result_files_are_refused() {
    let dir = scratch("endless");
    let (sk, pk) = (dir.join("id.key"), dir.join("id.pub"));
    files::keygen(&sk, &pk).expect("keygen");
    let receipt = dir.join("out.receipt");
    let bundle = dir.join("out.bundle");
    let paths = RecordFiles {
        result: Path::new("/dev/zero"),
        receipt: &receipt,
        bundle: &bundle,
    };
    let got = files::sign(&sk, false, paths, &route(), b"c");
    assert!(
        matches!(got, Err(Error::Malformed { item: "result", .. })),
        "{got:?}"
    );
    assert_eq!(listing(&dir), ["id.key", "id.pub"]);
}

#[test]
fn secret_files_open_to_others_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("mode");
    let (sk, pk) = (dir.join("id.key"), dir.join("id.pub"));
    files::keygen(&sk, &pk).expect("keygen");
    for mode in [0o644, 0o640, 0o604, 0o620] {
        fs::set_permissions(&sk, fs::Permissions::from_mode(mode)).expect("chmod");
        let got = files::load_identity(&sk, false);
        let message = error_text(&got);
        assert!(
            matches!(got, Err(Error::InsecureKeyFile { mode: m, .. }) if m == mode),
            "{mode:o}: {message}"
        );
        assert!(message.contains("chmod 600"), "{message}");
        assert!(files::load_identity(&sk, true).is_ok(), "explicit override");
    }
    fs::set_permissions(&sk, fs::Permissions::from_mode(0o400)).expect("chmod");
    assert!(files::load_identity(&sk, false).is_ok());
    let _ = fs::remove_dir_all(&dir);
}

fn error_text<T>(got: &Result<T, Error>) -> String {
    got.as_ref()
        .err()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The byte range of the secret keys in a secret identity file.
const SECRET_KEYS: std::ops::Range<usize> = PUBLIC_FILE_LEN - 32..SECRET_FILE_LEN - 32;

#[test]
fn identity_files_round_trip_and_validate() {
    let secret = alice().to_bytes();
    let public = alice().public().to_bytes();
    assert_eq!(
        (secret.len(), public.len()),
        (SECRET_FILE_LEN, PUBLIC_FILE_LEN)
    );
    // The public keys come first in both files.
    assert_eq!(
        secret[10..PUBLIC_FILE_LEN - 32],
        public[10..PUBLIC_FILE_LEN - 32]
    );
    let loaded = Identity::from_bytes(&secret).expect("secret");
    assert_eq!(loaded.public(), alice().public());
    assert_eq!(
        &PublicIdentity::from_bytes(&public).expect("public"),
        alice().public()
    );

    // Every byte is covered by magic, version, suite or checksum.
    for i in 0..PUBLIC_FILE_LEN {
        assert!(
            PublicIdentity::from_bytes(&flipped(&public, i, 0x01)).is_err(),
            "{i}"
        );
    }
    for i in (0..SECRET_FILE_LEN)
        .step_by(13)
        .chain([SECRET_FILE_LEN - 1])
    {
        assert!(
            Identity::from_bytes(&flipped(&secret, i, 0x01)).is_err(),
            "{i}"
        );
    }
    for len in (0..PUBLIC_FILE_LEN).step_by(5) {
        assert!(PublicIdentity::from_bytes(&public[..len]).is_err());
    }
    for len in (0..SECRET_FILE_LEN).step_by(11) {
        assert!(Identity::from_bytes(&secret[..len]).is_err());
    }
    assert!(PublicIdentity::from_bytes(&[public.as_slice(), &[0]].concat()).is_err());
    assert!(Identity::from_bytes(&[secret.as_slice(), &[0]].concat()).is_err());
    let mut v2 = public.clone();
    v2[8] = 2;
    let got = PublicIdentity::from_bytes(&v2);
    assert!(got.is_err_and(|e| e.to_string().contains("version")));

    // A reloaded identity signs records that verify under the original public identity.
    let record = triskel_attest::attest(&loaded, b"r", &route(), b"c").expect("attest");
    assert!(triskel_attest::verify(alice().public(), b"r", &route(), b"c", &record).is_ok());

    // Debug shows the key id, and no 8 consecutive bytes of any secret key, neither in hex
    // nor as a list of numbers.
    let shown = format!("{loaded:?}");
    assert!(shown.contains(&hex(alice().public().key_id())), "{shown}");
    for window in secret[SECRET_KEYS].windows(8).step_by(8) {
        let listed: Vec<String> = window.iter().map(u8::to_string).collect();
        assert!(!shown.contains(&hex(window)), "{shown}");
        assert!(!shown.contains(&listed.join(", ")), "{shown}");
    }
}

/// Re-seals a secret identity file's checksum after editing it, as an attacker could
/// (the checksum has no key).
fn resealed(mut file: Vec<u8>) -> Vec<u8> {
    use sha3::{Digest, Sha3_256};
    let body = file.len() - 32;
    let tag = b"triskel-attest/v1/key-file";
    let mut h = Sha3_256::new();
    h.update((tag.len() as u64).to_le_bytes());
    h.update(tag);
    h.update(&file[..body]);
    file[body..].copy_from_slice(&h.finalize());
    file
}

#[test]
fn secret_keys_that_do_not_match_their_public_keys_are_refused() {
    let secret = alice().to_bytes().to_vec();
    let other = common::bob().to_bytes();
    assert!(Identity::from_bytes(&resealed(secret.clone())).is_ok());
    // Each family's secret key replaced by bob's, checksum recomputed.
    let mldsa_sk = SECRET_KEYS.start..SECRET_KEYS.start + 4032;
    let slh_sk = SECRET_KEYS.end - 64..SECRET_KEYS.end;
    let falcon_sk = mldsa_sk.end..slh_sk.start;
    for (family, range) in [
        ("ML-DSA", mldsa_sk),
        ("Falcon", falcon_sk),
        ("SLH-DSA", slh_sk),
    ] {
        let mut edited = secret.clone();
        edited[range.clone()].copy_from_slice(&other[range]);
        let got = Identity::from_bytes(&resealed(edited));
        let message = error_text(&got);
        assert!(
            matches!(
                got,
                Err(Error::Malformed {
                    item: "secret identity",
                    ..
                })
            ) && message.contains(family),
            "{family}: {message}"
        );
    }
}
