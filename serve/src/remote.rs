//! The client of the service: a blocking HTTP client for one server and
//! one tenant, and [`verify`], which checks every record of a job's
//! outputs against the server's identity and the inputs this client sent
//! before anything is decrypted.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use triskel::{Kind, PlainValue, Program};
//! # let mut program = Program::new();
//! # let x = program.input("x", Kind::Signed { len: 2, bound: 100 })?;
//! # let y = program.add_scalar(x, triskel::Scalar::Int(1))?;
//! # program.output("y", y)?;
//! # let inputs = std::collections::BTreeMap::from([("x".to_string(), PlainValue::Ints(vec![1, 2]))]);
//! use triskel_serve::remote::Remote;
//! let remote = Remote::new("http://127.0.0.1:7340", Some("tsk_...".into()))?;
//! let server = remote.identity()?; // compare with a pinned copy
//! let mut client = triskel::Client::new(&program, triskel::PlanOptions::default())?;
//! remote.put_keys(&client.evaluation_keys()?.to_bytes())?;
//! let sent = client.encrypt(&inputs)?;
//! let job = remote.submit(&program, &sent, None)?;
//! remote.wait(&job.id, std::time::Duration::from_secs(600))?;
//! let outputs = remote.outputs(&job.id)?;
//! triskel_serve::remote::verify(&client, &sent, &outputs, &server)?;
//! let plain = client.decrypt(&outputs, &server)?;
//! # Ok(())
//! # }
//! ```

use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, StatusCode};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;
use triskel::attest::{hex, Computation, PublicIdentity};
use triskel::{Client, EncryptedInputs, EncryptedOutputs, Program};

use zeroize::Zeroizing;

use crate::job::JobRequest;
use crate::{JOB_TYPE, KEYS_TYPE};

/// The largest response body read.
const MAX_RESPONSE_BYTES: u64 = 4 << 30;

/// What a call to the service can fail with.
#[derive(Debug)]
pub enum RemoteError {
    /// The server answered with an error.
    Api {
        status: u16,
        code: String,
        message: String,
    },
    /// The server could not be reached or answered something unreadable.
    Transport(String),
    /// The outputs do not verify, or another library refusal.
    Triskel(triskel::Error),
    /// Anything else the client refuses (a pinned identity that differs, a
    /// job that failed).
    Refused(String),
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteError::Api {
                status,
                code,
                message,
            } => write!(f, "the server answered {status} ({code}): {message}"),
            RemoteError::Transport(m) => write!(f, "transport: {m}"),
            RemoteError::Triskel(e) => write!(f, "{e}"),
            RemoteError::Refused(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for RemoteError {}

impl From<triskel::Error> for RemoteError {
    fn from(e: triskel::Error) -> RemoteError {
        RemoteError::Triskel(e)
    }
}

impl From<triskel::attest::Error> for RemoteError {
    fn from(e: triskel::attest::Error) -> RemoteError {
        RemoteError::Refused(format!("a record does not verify: {e}"))
    }
}

pub type RemoteResult<T> = Result<T, RemoteError>;

/// A job as the server reports it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct JobStatus {
    pub id: String,
    pub state: String,
    pub error: Option<String>,
    pub key_set: String,
    pub runs: u64,
    pub created_ms: u64,
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
}

impl JobStatus {
    /// Done, failed or cancelled.
    pub fn is_finished(&self) -> bool {
        matches!(self.state.as_str(), "done" | "failed" | "cancelled")
    }
}

/// A blocking client of one server as one tenant.
pub struct Remote {
    base: String,
    token: Option<Zeroizing<String>>,
    runtime: tokio::runtime::Runtime,
    http: HttpClient<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

/// How a [`Remote`] reaches its server.
#[derive(Debug, Clone, Default)]
pub struct Transport {
    /// HTTP/2 only: prior knowledge over `http`, ALPN `h2` over `https`.
    /// Otherwise HTTP/1.1.
    pub http2: bool,
    /// The PEM certificates trusted for an `https` server (its self-signed
    /// certificate, a private CA, or a system bundle); `https` needs them.
    pub ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

fn transport(e: impl std::fmt::Display) -> RemoteError {
    RemoteError::Transport(e.to_string())
}

impl Remote {
    /// A client of the server at `url` (`http://host:port`), with a bearer
    /// `token` for the tenant's endpoints.
    pub fn new(url: &str, token: Option<String>) -> RemoteResult<Remote> {
        Remote::with_transport(url, token, &Transport::default())
    }

    /// A client of the server at `url` (`http://` or `https://host:port`)
    /// reached as `transport` says.
    pub fn with_transport(
        url: &str,
        token: Option<String>,
        how: &Transport,
    ) -> RemoteResult<Remote> {
        let base = url.trim_end_matches('/').to_string();
        let uri: hyper::Uri = base.parse().map_err(transport)?;
        let https = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            _ => {
                return Err(RemoteError::Refused(format!(
                    "{url}: an http:// or https://host:port address is expected"
                )))
            }
        };
        if uri.host().is_none() {
            return Err(RemoteError::Refused(format!("{url}: no host in it")));
        }
        if https && how.ca_pem.is_none() {
            return Err(RemoteError::Refused(format!(
                "{url}: https needs the certificates to trust (a CA file, --ca PEM)"
            )));
        }
        let tls = crate::tls::client_config(how.ca_pem.as_deref()).map_err(RemoteError::Refused)?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http();
        let connector = if how.http2 {
            connector.enable_http2().build()
        } else {
            connector.enable_http1().build()
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(transport)?;
        // Idle connections are let go before a server at its default
        // idle timeout (30 s) closes them, so that a request never races
        // that close.
        let http = HttpClient::builder(TokioExecutor::new())
            .http2_only(how.http2)
            .pool_timer(hyper_util::rt::TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(15))
            .build(connector);
        Ok(Remote {
            base,
            token: token.map(Zeroizing::new),
            runtime,
            http,
        })
    }

    /// One request; the status, and the body (at most [`MAX_RESPONSE_BYTES`]).
    fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<(&'static str, Vec<u8>)>,
        idempotency_key: Option<&str>,
    ) -> RemoteResult<(StatusCode, Bytes)> {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(t) = &self.token {
            let value = Zeroizing::new(format!("Bearer {}", t.as_str()));
            req = req.header("authorization", value.as_str());
        }
        if let Some(k) = idempotency_key {
            req = req.header("idempotency-key", k);
        }
        let (content_type, bytes) = body.unwrap_or(("", Vec::new()));
        if !content_type.is_empty() {
            req = req.header("content-type", content_type);
        }
        let req = req.body(Full::new(Bytes::from(bytes))).map_err(transport)?;
        self.runtime.block_on(async {
            let response = self.http.request(req).await.map_err(transport)?;
            let status = response.status();
            let limited =
                http_body_util::Limited::new(response.into_body(), MAX_RESPONSE_BYTES as usize);
            let body = limited.collect().await.map_err(transport)?.to_bytes();
            Ok((status, body))
        })
    }

    /// The body of a successful answer, or the server's error.
    fn ok(&self, answer: (StatusCode, Bytes)) -> RemoteResult<Bytes> {
        let (status, body) = answer;
        if status.is_success() {
            return Ok(body);
        }
        let parsed: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
        let field = |k: &str| {
            parsed
                .as_ref()
                .and_then(|v| v["error"][k].as_str())
                .map(str::to_string)
        };
        Err(RemoteError::Api {
            status: status.as_u16(),
            code: field("code").unwrap_or_else(|| "unknown".into()),
            message: field("message")
                .unwrap_or_else(|| String::from_utf8_lossy(&body).chars().take(200).collect()),
        })
    }

    fn json<T: for<'de> Deserialize<'de>>(&self, body: &Bytes) -> RemoteResult<T> {
        serde_json::from_slice(body).map_err(|e| transport(format!("an unreadable answer: {e}")))
    }

    /// The server's public attestation identity. Compare it with a copy
    /// obtained out of band (the CLI pins the first one it sees).
    pub fn identity(&self) -> RemoteResult<PublicIdentity> {
        #[derive(Deserialize)]
        struct Identity {
            public: String,
        }
        let body = self.ok(self.call(Method::GET, "/v1/identity", None, None)?)?;
        let id: Identity = self.json(&body)?;
        let bytes =
            crate::from_hex(&id.public).ok_or_else(|| transport("the identity is not hex"))?;
        Ok(PublicIdentity::from_bytes(&bytes)?)
    }

    /// Uploads an evaluation-key bundle; returns its key-set id (hex).
    pub fn put_keys(&self, bundle: &[u8]) -> RemoteResult<String> {
        #[derive(Deserialize)]
        struct Uploaded {
            key_set: String,
        }
        let body = self.ok(self.call(
            Method::PUT,
            "/v1/keys",
            Some((KEYS_TYPE, bundle.to_vec())),
            None,
        )?)?;
        Ok(self.json::<Uploaded>(&body)?.key_set)
    }

    /// Removes a key set.
    pub fn delete_keys(&self, key_set: &str) -> RemoteResult<()> {
        self.ok(self.call(Method::DELETE, &format!("/v1/keys/{key_set}"), None, None)?)?;
        Ok(())
    }

    /// Submits `program` on `inputs` under the inputs' key set; a retry
    /// with the same `idempotency_key` returns the same job.
    pub fn submit(
        &self,
        program: &Program,
        inputs: &EncryptedInputs,
        idempotency_key: Option<&str>,
    ) -> RemoteResult<JobStatus> {
        let (program, inputs_bytes) = (program.to_bytes(), inputs.to_bytes());
        let body = JobRequest {
            key_set: *inputs.key_set(),
            program: &program,
            inputs: &inputs_bytes,
        }
        .to_bytes();
        let answer = self.ok(self.call(
            Method::POST,
            "/v1/jobs",
            Some((JOB_TYPE, body)),
            idempotency_key,
        )?)?;
        self.json(&answer)
    }

    /// The state of a job.
    pub fn job(&self, id: &str) -> RemoteResult<JobStatus> {
        let body = self.ok(self.call(Method::GET, &format!("/v1/jobs/{id}"), None, None)?)?;
        self.json(&body)
    }

    /// Cancels a queued or running job; deletes a finished one.
    pub fn cancel(&self, id: &str) -> RemoteResult<()> {
        self.ok(self.call(Method::DELETE, &format!("/v1/jobs/{id}"), None, None)?)?;
        Ok(())
    }

    /// Polls a job until it is finished or `timeout` has passed.
    pub fn wait(&self, id: &str, timeout: Duration) -> RemoteResult<JobStatus> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(10);
        loop {
            let status = self.job(id)?;
            if status.is_finished() {
                return Ok(status);
            }
            if start.elapsed() >= timeout {
                return Err(RemoteError::Refused(format!(
                    "job {id} is still {} after {:.0} s",
                    status.state,
                    timeout.as_secs_f64()
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    /// The encrypted outputs of a finished job. Check them with [`verify`]
    /// before decrypting.
    pub fn outputs(&self, id: &str) -> RemoteResult<EncryptedOutputs> {
        let body =
            self.ok(self.call(Method::GET, &format!("/v1/jobs/{id}/outputs"), None, None)?)?;
        Ok(EncryptedOutputs::from_bytes(&body, MAX_RESPONSE_BYTES)?)
    }
}

/// Checks `outputs` against what this client knows, not what they claim:
/// the key set and program of `client`, the digests of the inputs `sent`,
/// the context `sent` carried, and every entry's record under `server`'s
/// identity. Only then may the caller decrypt.
pub fn verify(
    client: &Client,
    sent: &EncryptedInputs,
    outputs: &EncryptedOutputs,
    server: &PublicIdentity,
) -> RemoteResult<()> {
    if outputs.key_set() != client.key_set() || sent.key_set() != client.key_set() {
        return Err(RemoteError::Refused(
            "the outputs or the inputs are of another key set than this client's".into(),
        ));
    }
    if outputs.entries().is_empty() {
        return Err(RemoteError::Refused("the outputs have no entries".into()));
    }
    let program = triskel::attest::program_digest(&client.plan().program().to_bytes());
    let inputs = sent.digests();
    let route = triskel::route(client.plan());
    for e in outputs.entries() {
        let computation = Computation {
            program,
            key_set: *client.key_set(),
            inputs: &inputs,
            output: e.digest(),
        };
        triskel::attest::verify_computation(
            server,
            &computation,
            &route,
            sent.context(),
            e.record(),
        )
        .map_err(|err| {
            RemoteError::Refused(format!(
                "a record does not verify against server {} and the inputs sent: {err}",
                hex(server.key_id())
            ))
        })?;
    }
    Ok(())
}
