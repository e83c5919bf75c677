//! The file operations behind `triskel attest keygen | sign | verify`.

mod common;

use std::fs;
use std::path::PathBuf;

use common::{alice, flipped, route};
use triskel_attest::{
    files::{self, RecordFiles},
    Error, Identity, PublicIdentity, Route, PUBLIC_FILE_LEN, SECRET_FILE_LEN,
};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("triskel-attest-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn keygen_sign_verify_on_files() {
    let dir = scratch("cli");
    let (sk, pk) = (dir.join("id.key"), dir.join("id.pub"));
    let public = files::keygen(&sk, &pk).expect("keygen");
    assert_eq!(files::load_public(&pk).expect("load"), public);
    assert_eq!(files::load_identity(&sk).expect("load").public(), &public);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&sk).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Refuses to overwrite.
    assert!(matches!(files::keygen(&sk, &pk), Err(Error::Io { .. })));
    let fresh = dir.join("fresh.key");
    assert!(matches!(files::keygen(&fresh, &pk), Err(Error::Io { .. })));
    assert!(!fresh.exists(), "no orphan secret file");

    let result = dir.join("result.bin");
    fs::write(&result, b"ciphertext bytes").expect("write");
    let (receipt, bundle) = (dir.join("r.receipt"), dir.join("r.bundle"));
    let route = Route::new("ckks", "ckks-n16384-l8");
    let paths = RecordFiles {
        result: &result,
        receipt: &receipt,
        bundle: &bundle,
    };
    let signed = files::sign(&sk, paths, &route, b"job 9").expect("sign");
    assert_eq!(fs::read(&receipt).expect("read").len(), 74);
    let checked = files::verify(&pk, paths, &route, b"job 9").expect("verify");
    assert_eq!(checked, signed);

    let got = files::verify(&pk, paths, &route, b"job 8");
    assert!(matches!(got, Err(Error::WrongContext)), "{got:?}");
    fs::write(&result, b"ciphertext bytez").expect("write");
    let got = files::verify(&pk, paths, &route, b"job 9");
    assert!(matches!(got, Err(Error::WrongResult)), "{got:?}");
    fs::write(&result, b"ciphertext bytes").expect("write");

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
        files::load_identity(&pk),
        Err(Error::Malformed { .. })
    ));
    let missing = dir.join("missing");
    assert!(matches!(
        files::load_public(&missing),
        Err(Error::Io { .. })
    ));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn identity_files_round_trip_and_validate() {
    let secret = alice().to_bytes();
    let public = alice().public().to_bytes();
    assert_eq!(
        (secret.len(), public.len()),
        (SECRET_FILE_LEN, PUBLIC_FILE_LEN)
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
    assert!(!format!("{loaded:?}").contains(&format!("{:?}", &secret[2000..2008])));
}
