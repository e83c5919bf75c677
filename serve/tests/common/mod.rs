//! A service on 127.0.0.1 (an ephemeral port) over a temporary store, and a
//! small BFV program, for the tests.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use triskel::{Client, Kind, PlainValue, PlanOptions, Program, Scalar};
use triskel_serve::remote::Remote;
use triskel_serve::{Config, Quotas, Running};

pub const WAIT: Duration = Duration::from_secs(600);

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "triskel-serve-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn config(store: &TempDir) -> Config {
    let mut c = Config::new(store.0.join("store"));
    c.listen = "127.0.0.1:0".parse().unwrap();
    c.workers = 1;
    c
}

/// A running service and a token per tenant.
pub struct Service {
    pub running: Option<Running>,
    pub tokens: Vec<String>,
    pub dir: TempDir,
}

impl Service {
    pub fn start(
        name: &str,
        tenants: &[(&str, Option<Quotas>)],
        edit: impl Fn(&mut Config),
    ) -> Service {
        let dir = TempDir::new(name);
        let mut c = config(&dir);
        edit(&mut c);
        let tokens = tenants
            .iter()
            .map(|(t, q)| triskel_serve::create_token(&c.store, t, *q).unwrap())
            .collect();
        Service {
            running: Some(triskel_serve::start(c).unwrap()),
            tokens,
            dir,
        }
    }

    pub fn url(&self) -> String {
        self.running.as_ref().unwrap().url()
    }

    pub fn remote(&self, tenant: usize) -> Remote {
        Remote::new(&self.url(), Some(self.tokens[tenant].clone())).unwrap()
    }
}

/// y = 3 x + 7 on four signed BFV values: public keys only.
pub fn program() -> Program {
    let mut p = Program::new();
    let x = p.input("x", Kind::Signed { len: 4, bound: 100 }).unwrap();
    let y = p.mul_scalar(x, Scalar::Int(3)).unwrap();
    let y = p.add_scalar(y, Scalar::Int(7)).unwrap();
    p.output("y", y).unwrap();
    p
}

pub const X: [i128; 4] = [-100, -1, 0, 42];

pub fn inputs() -> BTreeMap<String, PlainValue> {
    BTreeMap::from([("x".to_string(), PlainValue::Ints(X.to_vec()))])
}

pub fn expected() -> PlainValue {
    PlainValue::Ints(X.iter().map(|x| 3 * x + 7).collect())
}

/// Uploads `client`'s evaluation keys through `remote`.
pub fn upload_keys(remote: &Remote, client: &mut Client) {
    remote
        .put_keys(&client.evaluation_keys().unwrap().to_bytes())
        .unwrap();
}

/// Submits `p` on `sent` and waits until the job is done; its id.
pub fn run_to_done(remote: &Remote, p: &Program, sent: &triskel::EncryptedInputs) -> String {
    let job = remote.submit(p, sent, None).unwrap();
    let end = remote.wait(&job.id, WAIT).unwrap();
    assert_eq!(end.state, "done", "{end:?}");
    job.id
}

pub fn client(p: &Program) -> Client {
    Client::new(p, PlanOptions::default()).unwrap()
}

/// The files under `dir`, at any depth.
pub fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}
