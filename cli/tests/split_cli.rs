//! The client and the server as separate processes: each demo program runs
//! with `triskel client` and `triskel server`, the server process given only
//! the program, the evaluation keys and the encrypted inputs; the verified,
//! decrypted outputs equal `triskel program run`'s. A flipped byte in the
//! keys, the inputs or the outputs, and another client's secret, are refused.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn triskel(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_triskel"))
        .args(args)
        .env_remove("TRISKEL_KERNELS")
        .output()
        .expect("run triskel");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(args: &[&str]) -> String {
    let (ok, out, err) = triskel(args);
    assert!(ok, "triskel {args:?} failed: {err}");
    out
}

/// Fails with a message that contains `needle`.
fn refused(args: &[&str], needle: &str) {
    let (ok, _, err) = triskel(args);
    assert!(!ok, "triskel {args:?} should have failed");
    assert!(
        err.contains(needle),
        "triskel {args:?}: {err:?} does not say {needle:?}"
    );
}

mod common;
use common::Dir;

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn flip_middle_byte(from: &str, to: &str) {
    let mut bytes = std::fs::read(from).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x10;
    std::fs::write(to, bytes).unwrap();
}

/// Equal outputs: the same names, bits and integers exact, reals within `tolerance`.
fn assert_same(a: &Value, b: &Value, tolerance: f64) {
    let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, x) in a {
        let (x, y) = (x.as_array().unwrap(), b[name].as_array().unwrap());
        assert_eq!(x.len(), y.len(), "{name}");
        for (u, v) in x.iter().zip(y) {
            match (u.as_f64(), v.as_f64()) {
                (Some(u), Some(v)) if u.fract() != 0.0 || v.fract() != 0.0 => {
                    assert!((u - v).abs() <= tolerance, "{name}: {u} against {v}")
                }
                _ => assert_eq!(u, v, "{name}"),
            }
        }
    }
}

/// Runs demo `name` split in two processes and checks the refusals.
fn split_run(name: &str, tolerance: f64) {
    let d = Dir::new(&format!("split-{name}"));
    let (p, inputs) = (d.path("program"), d.path("inputs.json"));
    ok(&["program", "write", name, "--out", &p]);
    ok(&["program", "inputs", name, "--out", &inputs]);
    let local: Value = serde_json::from_str(&ok(&[
        "program",
        "run",
        "--program",
        &p,
        "--inputs",
        &inputs,
    ]))
    .unwrap();

    let (secret, keys, enc) = (d.path("client"), d.path("keys"), d.path("enc"));
    ok(&[
        "client",
        "keygen",
        "--program",
        &p,
        "--secret",
        &secret,
        "--keys",
        &keys,
    ]);
    ok(&[
        "client", "encrypt", "--secret", &secret, "--inputs", &inputs, "--out", &enc,
    ]);
    let (ss, sp, out) = (d.path("server"), d.path("server.pub"), d.path("out"));
    ok(&["server", "identity", "--secret", &ss, "--public", &sp]);
    let run = |keys: &str, inputs: &str, out: &str| {
        vec![
            "server".to_string(),
            "run".into(),
            "--identity".into(),
            ss.clone(),
            "--program".into(),
            p.clone(),
            "--keys".into(),
            keys.into(),
            "--inputs".into(),
            inputs.into(),
            "--out".into(),
            out.into(),
        ]
    };
    ok(&args(&run(&keys, &enc, &out)));
    let decrypt = |secret: &str, out: &str| {
        vec![
            "client".to_string(),
            "decrypt".into(),
            "--secret".into(),
            secret.into(),
            "--server-public".into(),
            sp.clone(),
            "--outputs".into(),
            out.into(),
        ]
    };
    let split: Value = serde_json::from_str(&ok(&args(&decrypt(&secret, &out)))).unwrap();
    assert_same(&local, &split, tolerance);

    // A flipped byte in the keys: the key-set id no longer matches them.
    let bad = d.path("bad");
    flip_middle_byte(&keys, &bad);
    refused(&args(&run(&bad, &enc, &d.path("o2"))), "key-set id");
    // In the inputs: refused by the server, or the records bind inputs the
    // client did not send.
    flip_middle_byte(&enc, &bad);
    let (served, _, _) = triskel(&args(&run(&keys, &bad, &d.path("o3"))));
    if served {
        refused(&args(&decrypt(&secret, &d.path("o3"))), "did not send");
    }
    // In the outputs: the entry's record does not verify.
    flip_middle_byte(&out, &bad);
    let (decrypted, _, err) = triskel(&args(&decrypt(&secret, &bad)));
    assert!(!decrypted, "a flipped output byte was decrypted");
    assert!(err.contains("attest") || err.contains("malformed"), "{err}");
    // Another client's secret: another key set.
    let other = d.path("other");
    ok(&[
        "client",
        "keygen",
        "--program",
        &p,
        "--secret",
        &other,
        "--keys",
        &d.path("k2"),
    ]);
    refused(&args(&decrypt(&other, &out)), "another key set");
    // The secret state must be the owner's only.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
        refused(&args(&decrypt(&secret, &out)), "owner only");
    }
    assert!(Path::new(&secret).exists());
}

#[test]
fn the_biometric_match_runs_split_in_two_processes() {
    split_run("match", 0.0);
}

#[test]
fn the_ckks_network_runs_split_in_two_processes() {
    // Two encryptions of the same inputs: each within the demo's 2^-10 goal.
    split_run("mlp", 2.0 * 2f64.powi(-10));
}

#[test]
fn the_tfhe_comparison_runs_split_in_two_processes() {
    split_run("compare8", 0.0);
}
