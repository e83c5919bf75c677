//! triskel as a network service: `triskel serve`.
//!
//! A tenant uploads an [`triskel::EvaluationKeys`] bundle (`PUT /v1/keys`),
//! submits jobs (`POST /v1/jobs`: the key-set id, a [`triskel::Program`] and
//! [`triskel::EncryptedInputs`], the [`job`] format), and fetches the
//! [`triskel::EncryptedOutputs`] of a finished job with the server's signed
//! records (`GET /v1/jobs/{id}/outputs`). The server never holds a secret
//! key of a client. Tenants authenticate with bearer tokens ([`auth`]),
//! stored hashed; a tenant sees only its own key sets and jobs. Everything
//! lives in one store directory ([`store`]): SQLite for the rows, files
//! named by their digest for the blobs. Worker threads run the jobs
//! ([`sched`]); [`remote`] is the client, which verifies every record
//! against the server's identity and the inputs it sent before the caller
//! decrypts.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = triskel_serve::Config::new("triskel-store".into());
//! let token = triskel_serve::create_token(&config.store, "alice", None)?;
//! let running = triskel_serve::start(config)?;
//! println!("listening on {} (token {token})", running.url());
//! running.wait();
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "service")]
use std::net::SocketAddr;
#[cfg(feature = "service")]
use std::path::{Path, PathBuf};
#[cfg(feature = "service")]
use std::sync::Arc;
#[cfg(feature = "service")]
use std::thread::JoinHandle;
#[cfg(feature = "service")]
use std::time::Duration;

#[cfg(feature = "service")]
use triskel::attest::files;

#[cfg(feature = "service")]
pub mod auth;
#[cfg(feature = "service")]
pub mod cache;
#[cfg(feature = "service")]
pub mod error;
#[cfg(feature = "service")]
pub mod http;
pub mod job;
#[cfg(feature = "service")]
pub mod metrics;
#[cfg(feature = "remote")]
pub mod remote;
#[cfg(feature = "service")]
pub mod sched;
#[cfg(feature = "service")]
pub mod store;
#[cfg(feature = "remote")]
pub mod tls;

#[cfg(feature = "service")]
pub use error::{ApiError, ApiResult};
#[cfg(feature = "service")]
pub use store::Quotas;
#[cfg(feature = "service")]
pub use tls::TlsFiles;

/// The bytes of an even number of hex digits.
pub fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    hex.as_bytes()
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// Media type of an [`triskel::EvaluationKeys`] bundle.
pub const KEYS_TYPE: &str = "application/vnd.triskel.keys";
/// Media type of a job submission ([`job::JobRequest`]).
pub const JOB_TYPE: &str = "application/vnd.triskel.job";
/// Media type of [`triskel::EncryptedOutputs`].
pub const OUTPUTS_TYPE: &str = "application/vnd.triskel.outputs";
/// Media type of a public attestation identity's bytes.
pub const IDENTITY_TYPE: &str = "application/vnd.triskel.identity";
#[cfg(feature = "service")]
/// How long [`Running::stop`] waits for open requests.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
#[cfg(feature = "service")]
/// The port `triskel serve` listens on by default.
pub const DEFAULT_PORT: u16 = 7340;

#[cfg(feature = "service")]
pub(crate) fn json(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "{}".into())
}

#[cfg(feature = "service")]
/// How to run the service.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen: any address with `tls`, a loopback one without.
    pub listen: SocketAddr,
    /// Serve HTTPS with this certificate and key; plain HTTP without.
    pub tls: Option<TlsFiles>,
    /// The store directory; nothing is written elsewhere.
    pub store: PathBuf,
    /// Worker threads, each running one job at a time.
    pub workers: usize,
    /// The most jobs queued at once over every tenant; more get 429.
    pub queue_capacity: u64,
    /// A running job that takes longer fails.
    pub job_timeout: Duration,
    /// Bytes of deserialized evaluation keys kept in memory.
    pub key_cache_bytes: u64,
    /// The largest request body taken (a tenant's quota may be lower).
    pub max_request_bytes: u64,
    /// How long the server waits for a client's next bytes: the first
    /// bytes of a connection, a request's headers, the next piece of its
    /// body. A client silent for longer is dropped (its request answered
    /// 408 where it can still be).
    pub idle_timeout: Duration,
}

#[cfg(feature = "service")]
impl Config {
    /// Defaults: 127.0.0.1 on [`DEFAULT_PORT`], a worker per core, a queue
    /// of 256, a job timeout of 10 minutes, 2 GiB of cached keys, and 30 s
    /// for a silent client.
    pub fn new(store: PathBuf) -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            tls: None,
            store,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            queue_capacity: 256,
            job_timeout: Duration::from_secs(600),
            key_cache_bytes: 2 << 30,
            max_request_bytes: 4 << 30,
            idle_timeout: Duration::from_secs(30),
        }
    }
}

#[cfg(feature = "service")]
/// Creates a token for tenant `name` in the store at `dir` (creating the
/// tenant with `quotas`, or the defaults, if new). The token is shown only
/// here; the store keeps its hash.
pub fn create_token(dir: &Path, name: &str, quotas: Option<Quotas>) -> ApiResult<String> {
    store::Store::open(dir)?.create_token(name, quotas)
}

#[cfg(feature = "service")]
/// The server's attestation identity in the store, generated on first use.
fn identity(dir: &Path) -> Result<triskel::attest::Identity, Box<dyn std::error::Error>> {
    let (secret, public) = (dir.join("identity.secret"), dir.join("identity.public"));
    if !secret.exists() {
        files::keygen(&secret, &public)?;
    }
    Ok(files::load_identity(&secret, false)?)
}

#[cfg(feature = "service")]
/// A running service.
pub struct Running {
    addr: SocketAddr,
    https: bool,
    core: Arc<sched::Core>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    http: Option<JoinHandle<std::io::Result<()>>>,
    workers: Vec<JoinHandle<()>>,
    /// Held while serving, so that a second server cannot open the store:
    /// two schedulers would run the same jobs. The OS drops it when the
    /// process dies, so a killed server leaves no stale lock.
    _store_lock: std::fs::File,
}

#[cfg(feature = "service")]
/// Opens the store, puts jobs left running back in the queue, and serves.
pub fn start(config: Config) -> Result<Running, Box<dyn std::error::Error>> {
    let tls = match &config.tls {
        Some(files) => Some(tokio_rustls::TlsAcceptor::from(tls::server_config(files)?)),
        None if !config.listen.ip().is_loopback() => {
            return Err(format!(
                "{}: not a loopback address, and plain HTTP is served only on loopback: give a certificate and key (--tls-cert, --tls-key) to serve HTTPS",
                config.listen
            )
            .into())
        }
        None => None,
    };
    let https = tls.is_some();
    let store_lock = lock_store(&config.store)?;
    let store = store::Store::open(&config.store)?;
    let server = triskel::Server::new(identity(&config.store)?);
    store.clear_tmp();
    store.recover()?;
    let listener = std::net::TcpListener::bind(config.listen)
        .map_err(|e| format!("{}: {e}", config.listen))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let core = Arc::new(sched::Core::new(store, server, &config)?);
    let workers = sched::start_workers(&core, config.workers);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let app = http::router(core.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("triskel-http")
        .enable_io()
        .enable_time()
        .build()?;
    let idle_timeout = config.idle_timeout;
    let http = std::thread::spawn(move || {
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener)?;
            http::serve(listener, app, tls, idle_timeout, rx).await;
            Ok(())
        })
    });
    Ok(Running {
        addr,
        https,
        core,
        shutdown: Some(tx),
        http: Some(http),
        workers,
        _store_lock: store_lock,
    })
}

#[cfg(feature = "service")]
fn lock_store(dir: &std::path::Path) -> Result<std::fs::File, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join("serve.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(format!(
            "the store {} is in use by another triskel serve process",
            dir.display()
        )
        .into()),
        Err(std::fs::TryLockError::Error(e)) => Err(format!("{}: {e}", path.display()).into()),
    }
}

#[cfg(feature = "service")]
impl Running {
    /// The address it listens on (the port chosen when the config's was 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://ADDR` or `http://ADDR`.
    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Where the workers' time has gone so far.
    pub fn worker_time(&self) -> metrics::WorkerTime {
        self.core.metrics.worker_time()
    }

    /// Serves until the process ends.
    pub fn wait(mut self) {
        if let Some(h) = self.http.take() {
            let _ = h.join();
        }
    }

    /// Stops taking requests (open ones get 10 s to end), lets the running
    /// jobs end and stops.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        // Open requests get a grace period to end; a connection held open
        // longer (a stalled upload) is left behind.
        if let Some(h) = self.http.take() {
            let deadline = std::time::Instant::now() + SHUTDOWN_GRACE;
            while !h.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
        self.core.stop();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(feature = "service")]
impl Drop for Running {
    fn drop(&mut self) {
        self.halt();
    }
}
