//! `triskel serve` and `triskel remote` as processes: a tenant's token, a
//! client session through the service, and `kill -9` of the server with
//! jobs acknowledged: after a restart on the same store every one
//! completes once and verifies.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;
use triskel::{Kind, Program, Scalar};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir =
            std::env::temp_dir().join(format!("triskel-serve-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `triskel serve` process, killed (SIGKILL) when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(store: &str) -> Server {
        Server::with(store, &[])
    }

    /// With `extra` arguments.
    fn with(store: &str, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_triskel"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--store",
                store,
                "--workers",
                "1",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start triskel serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://") || w.starts_with("https://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Server { child, url }
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn triskel(args: &[&str], token: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_triskel"))
        .args(args)
        .env("TRISKEL_TOKEN", token)
        .env_remove("TRISKEL_KERNELS")
        .output()
        .expect("run triskel");
    assert!(
        out.status.success(),
        "triskel {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn program(path: &Path) {
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 4, bound: 100 }).unwrap();
    let y = p.mul_scalar(x, Scalar::Int(3)).unwrap();
    let y = p.add_scalar(y, Scalar::Int(7)).unwrap();
    p.output("y", y).unwrap();
    std::fs::write(path, p.to_bytes()).unwrap();
}

/// A store with tenant alice's token, the test program and its inputs, and
/// the client's secret state and evaluation keys: paths in a [`Dir`].
struct Session {
    store: String,
    token: String,
    p: String,
    inputs: String,
    secret: String,
    keys: String,
    /// Where `triskel remote` pins the server's identity.
    pinned: String,
}

fn session(d: &Dir) -> Session {
    let store = d.path("store");
    let token = triskel(
        &[
            "serve", "token", "create", "--tenant", "alice", "--store", &store,
        ],
        "",
    )
    .trim()
    .to_string();
    assert!(token.starts_with("tsk_") && token.len() == 68, "{token}");
    let s = Session {
        store,
        token,
        p: d.path("program"),
        inputs: d.path("inputs.json"),
        secret: d.path("secret"),
        keys: d.path("keys"),
        pinned: d.path("server.pub"),
    };
    program(Path::new(&s.p));
    std::fs::write(&s.inputs, r#"{"x": [-100, -1, 0, 42]}"#).unwrap();
    triskel(
        &[
            "client",
            "keygen",
            "--program",
            &s.p,
            "--secret",
            &s.secret,
            "--keys",
            &s.keys,
        ],
        "",
    );
    s
}

/// `triskel remote submit` with an idempotency key; the job's JSON.
fn submit(url: &str, program: &str, inputs: &str, key: &str, token: &str) -> Value {
    let args = [
        "remote",
        "--url",
        url,
        "submit",
        "--program",
        program,
        "--inputs",
        inputs,
        "--idempotency-key",
        key,
    ];
    serde_json::from_str(&triskel(&args, token)).unwrap()
}

#[test]
fn jobs_acknowledged_before_kill_9_complete_once_after_a_restart() {
    let d = Dir::new("kill");
    let Session {
        store,
        token,
        p,
        inputs,
        secret,
        keys,
        pinned,
    } = session(&d);

    let server = Server::start(&store);
    let url = server.url.clone();
    let out = triskel(
        &[
            "remote",
            "--url",
            &url,
            "keys",
            "--keys",
            &keys,
            "--server-public",
            &pinned,
        ],
        &token,
    );
    assert!(out.starts_with("key set "), "{out}");
    const JOBS: usize = 6;
    let mut jobs = Vec::new();
    for i in 0..JOBS {
        let enc = d.path(&format!("enc{i}"));
        triskel(
            &[
                "client", "encrypt", "--secret", &secret, "--inputs", &inputs, "--out", &enc,
            ],
            "",
        );
        let key = format!("job-{i}");
        let job = submit(&url, &p, enc.as_ref(), key.as_ref(), &token);
        jobs.push((job["id"].as_str().unwrap().to_string(), enc, key));
    }
    // Every job is acknowledged; the server dies wherever it is.
    server.kill();

    let server = Server::start(&store);
    let url = server.url.clone();
    assert_ne!(url, "", "restarted");
    for (id, enc, key) in &jobs {
        // A retried submission after the restart is the same job.
        let again = submit(&url, &p, enc.as_ref(), key.as_ref(), &token);
        assert_eq!(again["id"], id.as_str());
        let end: Value = serde_json::from_str(&triskel(
            &["remote", "--url", &url, "wait", "--job", id],
            &token,
        ))
        .unwrap();
        assert_eq!(end["state"], "done", "{end}");
        assert!(end["runs"].as_u64().unwrap() >= 1);
        let args = [
            "remote",
            "--url",
            &url,
            "fetch",
            "--job",
            id,
            "--secret",
            &secret,
            "--server-public",
            &pinned,
            "--inputs",
            enc,
        ];
        let plain: Value = serde_json::from_str(&triskel(&args, &token)).unwrap();
        assert_eq!(plain, serde_json::json!({"y": [-293, 4, 7, 133]}));
    }
    // Outputs verify only against the inputs of their own job.
    let (first, second) = (&jobs[0], &jobs[1]);
    let out = Command::new(env!("CARGO_BIN_EXE_triskel"))
        .args([
            "remote",
            "--url",
            &url,
            "fetch",
            "--job",
            &first.0,
            "--secret",
            &secret,
            "--server-public",
            &pinned,
            "--inputs",
            &second.1,
        ])
        .env("TRISKEL_TOKEN", &token)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not verify"));
    // A bad token is refused with the server's JSON error.
    let out = Command::new(env!("CARGO_BIN_EXE_triskel"))
        .args(["remote", "--url", &url, "wait", "--job", &first.0])
        .env("TRISKEL_TOKEN", format!("tsk_{}", "1".repeat(64)))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("401 (unauthorized)"));
    drop(server);
}

#[test]
fn the_demo_runs_through_the_service() {
    let out = triskel(&["demo", "--remote"], "");
    assert_eq!(out.matches("check: correct").count(), 3, "{out}");
    assert_eq!(
        out.matches("verified against the server").count(),
        3,
        "{out}"
    );
}

#[test]
fn the_service_load_test_reports_its_figures() {
    let out = triskel(
        &[
            "bench",
            "service",
            "--clients",
            "2",
            "--seconds",
            "1",
            "--workers",
            "1",
            "--json",
        ],
        "",
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["completed"].as_u64().unwrap() >= 1, "{v}");
    assert_eq!(v["submitted"], v["completed"], "{v}");
    assert_eq!(
        (v["failed"].as_u64(), v["lost"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(v["throughput_jobs_per_s"].as_f64().unwrap() > 0.0, "{v}");
    let (p50, p99) = (v["p50_ms"].as_f64().unwrap(), v["p99_ms"].as_f64().unwrap());
    assert!(0.0 < p50 && p50 <= p99, "{v}");
    assert_eq!(
        (v["clients"].as_u64(), v["workers"].as_u64()),
        (Some(2), Some(1))
    );
    // The evaluation is within the latency; the workers' own overhead and
    // the HTTP threads' CPU are measured.
    let evaluation = v["evaluation_ms_per_job"].as_f64().unwrap();
    assert!(0.0 < evaluation && evaluation <= p99, "{v}");
    assert!(
        v["worker_overhead_ms_per_job"].as_f64().unwrap() >= 0.0,
        "{v}"
    );
    assert!(v["http_cpu_ms_per_job"].as_f64().unwrap() >= 0.0, "{v}");
    assert!(v["overhead_ratio"].as_f64().unwrap() >= 0.0, "{v}");
}

#[test]
fn a_client_session_over_https() {
    let d = Dir::new("https");
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    let (crt, key) = (d.path("server.crt"), d.path("server.key"));
    std::fs::write(&crt, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();

    // Another address than loopback needs TLS.
    let refused = Command::new(env!("CARGO_BIN_EXE_triskel"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--store",
            &d.path("refused"),
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--tls-cert"), "{stderr}");

    let Session {
        token,
        p,
        inputs,
        secret,
        keys,
        pinned,
        ..
    } = session(&d);
    let enc = d.path("enc");
    triskel(
        &[
            "client", "encrypt", "--secret", &secret, "--inputs", &inputs, "--out", &enc,
        ],
        "",
    );
    let server = Server::with(&d.path("store"), &["--tls-cert", &crt, "--tls-key", &key]);
    let url = server.url.clone();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let remote = |args: &[&str]| {
        let mut all = vec!["remote", "--url", &url, "--ca", &crt];
        all.extend_from_slice(args);
        triskel(&all, &token)
    };
    remote(&["keys", "--keys", &keys, "--server-public", &pinned]);
    let job: Value =
        serde_json::from_str(&remote(&["submit", "--program", &p, "--inputs", &enc])).unwrap();
    let id = job["id"].as_str().unwrap();
    remote(&["wait", "--job", id]);
    let plain: Value = serde_json::from_str(&remote(&[
        "fetch",
        "--job",
        id,
        "--secret",
        &secret,
        "--server-public",
        &pinned,
        "--inputs",
        &enc,
    ]))
    .unwrap();
    assert_eq!(plain["y"], serde_json::json!([-293, 4, 7, 133]), "{plain}");

    // Without --ca the client refuses to connect.
    let out = Command::new(env!("CARGO_BIN_EXE_triskel"))
        .args(["remote", "--url", &url, "wait", "--job", id])
        .env("TRISKEL_TOKEN", &token)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--ca"));
}
