//! Threshold keys with one process per party: five `triskel party keygen`
//! processes make 3-of-5 keys over files, an outside process encrypts, a
//! server process runs the program on the keys and inputs alone, and three
//! party processes decrypt. Fewer parties, another party's state, other
//! keys and an open state file are refused.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

use serde_json::Value;
use triskel::{Kind, Program, Scalar};

const WEIGHTS: [i64; 8] = [3, -1, 4, 1, -5, 9, 2, -6];
const X: [i64; 8] = [12, -7, 100, 0, 55, -100, 3, 9];
const Y: [i64; 8] = [-4, 8, 1, 99, -2, 7, 0, -100];

fn triskel<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_triskel"));
    c.args(args).env_remove("TRISKEL_KERNELS");
    c
}

fn ok<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S]) -> String {
    let out = triskel(args).output().expect("run triskel");
    assert!(
        out.status.success(),
        "triskel {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S], needle: &str) {
    let out = triskel(args).output().expect("run triskel");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "triskel {args:?} should have failed");
    assert!(
        err.contains(needle),
        "triskel {args:?}: {err:?} does not say {needle:?}"
    );
}

mod common;
use common::Dir;

#[test]
fn three_of_five_parties_as_processes_make_keys_and_decrypt() {
    let d = Dir::new("party");
    std::fs::create_dir_all(d.0.join("messages")).unwrap();
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 8, bound: 100 }).unwrap();
    let y = p.input("y", Kind::Signed { len: 8, bound: 100 }).unwrap();
    let s = p.dot_plain(x, &WEIGHTS.map(Scalar::Int)).unwrap();
    let m = p.mul(x, y).unwrap();
    p.output("score", s).unwrap();
    p.output("product", m).unwrap();
    std::fs::write(d.path("p.prog"), p.to_bytes()).unwrap();
    let inputs = serde_json::json!({"x": X, "y": Y});
    std::fs::write(d.path("in.json"), inputs.to_string()).unwrap();

    let explained = ok(&[
        "party",
        "session",
        "--program",
        &d.path("p.prog"),
        "--k",
        "3",
        "--n",
        "5",
        "--out",
        &d.path("session"),
    ]);
    assert!(
        explained.contains("threshold keys: 3 of 5 parties"),
        "{explained}"
    );

    // Five processes at once: each waits for the others' messages.
    let keygen: Vec<_> = (0..5)
        .map(|i| {
            let i = i.to_string();
            triskel(&[
                "party",
                "keygen",
                "--session",
                &d.path("session"),
                "--index",
                &i,
                "--dir",
                &d.path("messages"),
                "--state",
                &d.path(&format!("state{i}")),
                "--keys",
                &d.path(&format!("keys{i}")),
                "--timeout",
                "300",
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn a party")
        })
        .collect();
    for mut child in keygen {
        assert!(
            child.wait().unwrap().success(),
            "a party's key generation failed"
        );
    }
    let keys = std::fs::read(d.path("keys0")).unwrap();
    for i in 1..5 {
        assert_eq!(
            std::fs::read(d.path(&format!("keys{i}"))).unwrap(),
            keys,
            "party {i}'s keys"
        );
    }

    ok(&[
        "party",
        "encrypt",
        "--program",
        &d.path("p.prog"),
        "--keys",
        &d.path("keys0"),
        "--inputs",
        &d.path("in.json"),
        "--out",
        &d.path("in.ct"),
    ]);
    ok(&[
        "server",
        "identity",
        "--secret",
        &d.path("server.key"),
        "--public",
        &d.path("server.pub"),
    ]);
    ok(&[
        "server",
        "run",
        "--identity",
        &d.path("server.key"),
        "--program",
        &d.path("p.prog"),
        "--keys",
        &d.path("keys3"),
        "--inputs",
        &d.path("in.ct"),
        "--out",
        &d.path("out.ct"),
    ]);

    let run = |i: u16, set: &str| -> Vec<String> {
        [
            "--state",
            &d.path(&format!("state{i}")),
            "--keys",
            &d.path(&format!("keys{i}")),
            "--server-public",
            &d.path("server.pub"),
            "--inputs",
            &d.path("in.ct"),
            "--outputs",
            &d.path("out.ct"),
            "--set",
            set,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let args = |head: &[&str], tail: &[String]| -> Vec<String> {
        head.iter()
            .map(|s| s.to_string())
            .chain(tail.iter().cloned())
            .collect()
    };
    for i in [0u16, 2, 4] {
        let share = d.path(&format!("share{i}"));
        ok(&args(
            &["party", "share"],
            &[run(i, "0,2,4"), vec!["--out".into(), share]].concat(),
        ));
    }
    let shares: Vec<String> = [0, 2, 4]
        .iter()
        .map(|i| d.path(&format!("share{i}")))
        .collect();
    let combine = |by: u16, set: &str, shares: &[String]| -> Vec<String> {
        args(
            &["party", "combine"],
            &[run(by, set), vec!["--shares".into()], shares.to_vec()].concat(),
        )
    };
    let out: Value = serde_json::from_str(&ok(&combine(2, "0,2,4", &shares))).unwrap();
    let score: i64 = X.iter().zip(&WEIGHTS).map(|(a, b)| a * b).sum();
    let product: Vec<i64> = X.iter().zip(&Y).map(|(a, b)| a * b).collect();
    assert_eq!(
        out,
        serde_json::json!({"score": [score], "product": product})
    );

    // Two parties are not enough, as a set or as shares.
    refused(
        &combine(0, "0,2", &shares[..2]),
        "2 parties given; 3 of the 5 are needed",
    );
    refused(
        &combine(0, "0,2,4", &shares[..2]),
        "2 decryption shares for 3 parties",
    );
    // Damaged evaluation keys are refused (the router's tests refuse another
    // key set's).
    let mut other = keys.clone();
    let at = other.len() / 2;
    other[at] ^= 1;
    std::fs::write(d.path("keys1"), &other).unwrap();
    refused(
        &args(
            &["party", "share"],
            &[run(1, "0,1,2"), vec!["--out".into(), d.path("x")]].concat(),
        ),
        "evaluation keys",
    );
    // A state file others can read is refused.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let state = d.path("state3");
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o644)).unwrap();
        refused(
            &args(
                &["party", "share"],
                &[run(3, "0,2,3"), vec!["--out".into(), d.path("x")]].concat(),
            ),
            "readable by its owner only",
        );
    }
}
