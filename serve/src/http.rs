//! The HTTP API (documented in `openapi.json`, served at `/v1/openapi.json`).
//!
//! Request bodies are read (within the tenant's size quota) before any
//! blocking work, so a slow client holds a connection, never a worker or
//! the store; parsing, validation and the store run on tokio's blocking
//! pool. Every error is a JSON object ([`ApiError`]).

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use triskel::attest::hex;
use triskel::{EncryptedInputs, EvaluationKeys, PlanChoice, Program};

use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::job::JobRequest;
use crate::metrics::Metrics;
use crate::sched::{Core, MAX_BLOB_BYTES};
use crate::store::{Job, NewJob, Removal, Tenant};
use crate::{IDENTITY_TYPE, JOB_TYPE, KEYS_TYPE, OUTPUTS_TYPE};

const OPENAPI: &str = include_str!("../openapi.json");
/// The longest `Idempotency-Key`.
const MAX_IDEMPOTENCY_KEY: usize = 255;

type Shared = State<Arc<Core>>;
type IdPath = Result<Path<String>, PathRejection>;

/// The API's routes on `core`.
pub fn router(core: Arc<Core>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/identity", get(identity))
        .route("/v1/keys", axum::routing::put(put_keys))
        .route("/v1/keys/{id}", axum::routing::delete(delete_keys))
        .route("/v1/jobs", axum::routing::post(post_job))
        .route("/v1/jobs/{id}", get(get_job).delete(delete_job))
        .route("/v1/jobs/{id}/outputs", get(get_outputs))
        .fallback(|| async {
            ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this endpoint does not take this method",
            )
        })
        .with_state(core)
}

fn respond(status: StatusCode, body: &Value) -> Response {
    let mut r = (status, crate::json(body)).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn bytes_response(core: &Core, content_type: &'static str, bytes: Vec<u8>) -> Response {
    Metrics::add(&core.metrics.bytes_out, bytes.len() as u64);
    let mut r = bytes.into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// Runs `f` on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|_| ApiError::internal("the request's work stopped unexpectedly"))?
}

/// The tenant of the request's bearer token.
async fn tenant(core: &Arc<Core>, headers: &HeaderMap) -> ApiResult<Tenant> {
    let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", m);
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or_else(|| unauthorized("an `Authorization: Bearer <token>` header is required"))?;
    let token = value
        .to_str()
        .ok()
        .and_then(auth::bearer)
        .ok_or_else(|| unauthorized("the Authorization header is not a well-formed bearer token"))?
        .to_string();
    let core = core.clone();
    blocking(move || core.store.authenticate(&token))
        .await?
        .ok_or_else(|| unauthorized("unknown or revoked token"))
}

/// The most bytes of a refused request's body read and dropped (see
/// [`drain`]).
const MAX_DRAIN_BYTES: u64 = 64 << 20;

/// The tenant of a request and its body of media type `media`, within the
/// tenant's quota. A request refused before its body is read has the body
/// drained first, so that a client still sending it reads the refusal.
async fn tenant_and_body(
    core: &Arc<Core>,
    headers: &HeaderMap,
    body: Body,
    media: &str,
) -> ApiResult<(Tenant, Bytes)> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let checked = async {
        let tenant = tenant(core, headers).await?;
        let given = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or("").trim());
        if !given.is_some_and(|g| g.eq_ignore_ascii_case(media)) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                format!("the body must be of type {media}"),
            ));
        }
        let limit = tenant.quotas.max_request_bytes.min(core.max_request_bytes);
        if declared.is_some_and(|n| n > limit) {
            return Err(too_large(limit));
        }
        Ok((tenant, limit))
    };
    let (tenant, limit) = match checked.await {
        Ok(t) => t,
        Err(e) => {
            drain(body, declared, core.idle_timeout).await;
            return Err(e);
        }
    };
    let bytes = collect(body, limit, core.idle_timeout).await?;
    Metrics::add(&core.metrics.bytes_in, bytes.len() as u64);
    Ok((tenant, bytes))
}

fn too_large(limit: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("the body is larger than the limit of {limit} bytes"),
    )
}

/// The next piece of `body`'s data; `None` at its end. A client silent for
/// `idle` is given up on (408).
async fn next_data(body: &mut Body, idle: Duration) -> ApiResult<Option<Bytes>> {
    loop {
        let frame = tokio::time::timeout(idle, body.frame())
            .await
            .map_err(|_| {
                ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "request_timeout",
                    format!("the body stalled for {} s", idle.as_secs()),
                )
            })?;
        match frame {
            None => return Ok(None),
            Some(Err(_)) => {
                return Err(ApiError::bad_request(
                    "incomplete_body",
                    "the body ended before it was whole",
                ))
            }
            // Trailers carry no data.
            Some(Ok(f)) => {
                if let Ok(data) = f.into_data() {
                    return Ok(Some(data));
                }
            }
        }
    }
}

/// The whole of `body`, at most `limit` bytes. A longer body is drained
/// before the 413, as [`drain`] does.
async fn collect(mut body: Body, limit: u64, idle: Duration) -> ApiResult<Bytes> {
    let mut bytes = Vec::new();
    while let Some(data) = next_data(&mut body, idle).await? {
        if (bytes.len() + data.len()) as u64 > limit {
            drain(body, None, idle).await;
            return Err(too_large(limit));
        }
        bytes.extend_from_slice(&data);
    }
    Ok(Bytes::from(bytes))
}

/// Reads and drops what is left of a refused request's body, at most
/// [`MAX_DRAIN_BYTES`] (nothing when it declares more). An HTTP/1.1 server
/// that answers while unread bytes wait makes the client's kernel reset the
/// connection, and the client sees that instead of the answer. A body too
/// long to drain gets the answer on a connection that then closes.
async fn drain(mut body: Body, declared: Option<u64>, idle: Duration) {
    if declared.is_some_and(|n| n > MAX_DRAIN_BYTES) {
        return;
    }
    let mut left = MAX_DRAIN_BYTES;
    while let Ok(Some(data)) = next_data(&mut body, idle).await {
        let Some(l) = left.checked_sub(data.len() as u64) else {
            return;
        };
        left = l;
    }
}

fn id_of(path: IdPath) -> ApiResult<String> {
    path.map(|Path(id)| id)
        .map_err(|_| ApiError::not_found("resource"))
}

fn job_json(job: &Job) -> Value {
    json!({
        "id": job.id,
        "state": job.state.name(),
        "error": job.error,
        "key_set": hex(&job.key_set),
        "runs": job.runs,
        "created_ms": job.created_ms,
        "started_ms": job.started_ms,
        "finished_ms": job.finished_ms,
    })
}

async fn healthz() -> Response {
    respond(StatusCode::OK, &json!({"status": "ok"}))
}

async fn openapi() -> Response {
    let mut r = OPENAPI.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

async fn metrics(State(core): Shared) -> ApiResult<Response> {
    let c = core.clone();
    let counts = blocking(move || c.store.counts()).await?;
    let text = core.metrics.render(&counts, core.key_cache_bytes());
    let mut r = text.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    Ok(r)
}

async fn identity(State(core): Shared) -> Response {
    let public = core.server.identity().public();
    respond(
        StatusCode::OK,
        &json!({
            "key_id": hex(public.key_id()),
            "suite": public.suite().describe(),
            "public": hex(&public.to_bytes()),
            "media_type": IDENTITY_TYPE,
        }),
    )
}

async fn put_keys(State(core): Shared, headers: HeaderMap, body: Body) -> ApiResult<Response> {
    let (tenant, body) = tenant_and_body(&core, &headers, body, KEYS_TYPE).await?;
    let c = core.clone();
    let (id, created) = blocking(move || {
        // The same bundle again: its bytes are the stored blob's.
        if let Some(claimed) = body.len().checked_sub(32).map(|at| &body[at..]) {
            let claimed: [u8; 32] = claimed.try_into().expect("32 bytes");
            if let Some(k) = c.store.key_set(tenant.id, &claimed)? {
                if k.blob == blake3::hash(&body).to_hex().as_str() {
                    return Ok((claimed, false));
                }
            }
        }
        let keys = EvaluationKeys::from_bytes(&body, MAX_BLOB_BYTES)
            .map_err(|e| ApiError::bad_request("invalid_keys", e.to_string()))?;
        let id = keys.id();
        let created = c.store.add_key_set(
            &tenant,
            &id,
            keys.program_digest(),
            &keys.choice().to_bytes(),
            &body,
        )?;
        c.remember_keys(Arc::new(keys), body.len() as u64);
        Ok((id, created))
    })
    .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(respond(
        status,
        &json!({"key_set": hex(&id), "created": created}),
    ))
}

async fn delete_keys(State(core): Shared, headers: HeaderMap, path: IdPath) -> ApiResult<Response> {
    let tenant = tenant(&core, &headers).await?;
    let id = id_of(path)?;
    let digest = auth::parse_digest(&id).ok_or_else(|| ApiError::not_found("key set"))?;
    let c = core.clone();
    if !blocking(move || c.store.delete_key_set(tenant.id, &digest)).await? {
        return Err(ApiError::not_found("key set"));
    }
    core.forget_keys(&digest);
    Ok(respond(
        StatusCode::OK,
        &json!({"key_set": id, "deleted": true}),
    ))
}

async fn post_job(State(core): Shared, headers: HeaderMap, body: Body) -> ApiResult<Response> {
    let (tenant, body) = tenant_and_body(&core, &headers, body, JOB_TYPE).await?;
    let idempotency_key = match headers.get("idempotency-key") {
        None => None,
        Some(v) => {
            let key = v
                .to_str()
                .ok()
                .filter(|k| !k.is_empty() && k.len() <= MAX_IDEMPOTENCY_KEY)
                .ok_or_else(|| {
                    ApiError::bad_request(
                        "invalid_idempotency_key",
                        format!("an Idempotency-Key is 1 to {MAX_IDEMPOTENCY_KEY} visible ASCII characters"),
                    )
                })?;
            Some(key.to_string())
        }
    };
    let c = core.clone();
    let (job, created) = blocking(move || {
        let req =
            JobRequest::from_bytes(&body).map_err(|e| ApiError::bad_request("invalid_job", e))?;
        let key_set = c
            .store
            .key_set(tenant.id, &req.key_set)?
            .ok_or_else(|| ApiError::not_found("key set"))?;
        let program = Program::from_bytes(req.program)
            .map_err(|e| ApiError::bad_request("invalid_program", e.to_string()))?;
        let inputs = EncryptedInputs::from_bytes(req.inputs, MAX_BLOB_BYTES)
            .map_err(|e| ApiError::bad_request("invalid_inputs", e.to_string()))?;
        if inputs.key_set() != &req.key_set {
            return Err(ApiError::unprocessable(
                "key_set_mismatch",
                "the inputs are encrypted under another key set than the job names",
            ));
        }
        let choice = PlanChoice::from_bytes(&key_set.choice, MAX_BLOB_BYTES)
            .map_err(|e| ApiError::internal(format!("stored plan choice: {e}")))?;
        triskel::plan_chosen(&program, &choice)
            .map_err(|e| ApiError::unprocessable("planner_refused", e.to_string()))?;
        if triskel::attest::program_digest(&program.to_bytes()) != key_set.program {
            return Err(ApiError::unprocessable(
                "program_mismatch",
                "the key set was made for another program",
            ));
        }
        c.store.submit(&NewJob {
            tenant: &tenant,
            key_set: req.key_set,
            program: req.program,
            inputs: req.inputs,
            idempotency_key: idempotency_key.as_deref(),
            request: *blake3::hash(&body).as_bytes(),
            queue_capacity: c.queue_capacity,
        })
    })
    .await?;
    if created {
        core.notify();
    }
    let mut r = respond(StatusCode::ACCEPTED, &job_json(&job));
    let location = format!("/v1/jobs/{}", job.id);
    if let Ok(v) = HeaderValue::from_str(&location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    if !created {
        r.headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    Ok(r)
}

/// Job `path` of the request's tenant.
async fn find_job(core: &Arc<Core>, headers: &HeaderMap, path: IdPath) -> ApiResult<Job> {
    let tenant = tenant(core, headers).await?;
    let id = id_of(path)?;
    let c = core.clone();
    blocking(move || c.store.job(tenant.id, &id))
        .await?
        .ok_or_else(|| ApiError::not_found("job"))
}

async fn get_job(State(core): Shared, headers: HeaderMap, path: IdPath) -> ApiResult<Response> {
    let job = find_job(&core, &headers, path).await?;
    Ok(respond(StatusCode::OK, &job_json(&job)))
}

async fn get_outputs(State(core): Shared, headers: HeaderMap, path: IdPath) -> ApiResult<Response> {
    let job = find_job(&core, &headers, path).await?;
    let Some(blob) = job.outputs_blob.clone() else {
        let detail = job.error.map_or(String::new(), |e| format!(": {e}"));
        return Err(ApiError::conflict(
            "not_done",
            format!("the job is {}{detail}", job.state.name()),
        ));
    };
    let c = core.clone();
    let bytes = blocking(move || c.store.get_blob(&blob)).await?;
    Ok(bytes_response(&core, OUTPUTS_TYPE, bytes))
}

async fn delete_job(State(core): Shared, headers: HeaderMap, path: IdPath) -> ApiResult<Response> {
    let tenant = tenant(&core, &headers).await?;
    let id = id_of(path)?;
    let c = core.clone();
    let job_id = id.clone();
    match blocking(move || c.store.remove_job(tenant.id, &job_id)).await? {
        None => Err(ApiError::not_found("job")),
        Some(Removal::Cancelled(job)) => {
            core.interrupt(&job.id);
            Ok(respond(StatusCode::OK, &job_json(&job)))
        }
        Some(Removal::Deleted) => Ok(respond(StatusCode::OK, &json!({"id": id, "deleted": true}))),
    }
}

/// How long a new connection has to begin: its first byte and, on a TLS
/// port, the whole handshake.
const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What a plain-HTTP request to a TLS port is answered (then the
/// connection is closed).
const PLAIN_TO_TLS: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 93\r\n\r\n{\"error\":{\"code\":\"tls_required\",\"message\":\"this port serves HTTPS only: connect with https\"}}";

/// The most connections served at once; more wait in the listen backlog.
const MAX_CONNECTIONS: usize = 1024;

/// Serves `app` on `listener` (HTTP/1.1 and HTTP/2 on each connection;
/// inside TLS when `tls` is given, with ALPN) until `shutdown` resolves,
/// then lets open connections end. A connection whose client stays silent
/// for `idle` (before its first bytes, within a request's headers, between
/// HTTP/2 pings) is closed, so that idle clients cannot use up the
/// connections.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    tls: Option<tokio_rustls::TlsAcceptor>,
    idle: Duration,
    shutdown: tokio::sync::oneshot::Receiver<()>,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto;
    use hyper_util::service::TowerToHyperService;

    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(idle);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(idle)
        .keep_alive_timeout(idle);
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    tokio::pin!(shutdown);
    loop {
        let (tcp, slot) = tokio::select! {
            accepted = accept(&listener, &slots) => accepted,
            _ = &mut shutdown => break,
        };
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let (builder, watcher, tls) = (builder.clone(), graceful.watcher(), tls.clone());
        tokio::spawn(async move {
            let _slot = slot;
            match tls {
                None => {
                    let mut first = [0u8; 1];
                    if !matches!(
                        tokio::time::timeout(idle, tcp.peek(&mut first)).await,
                        Ok(Ok(1..))
                    ) {
                        return;
                    }
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tcp), service);
                    let _ = watcher.watch(conn).await;
                }
                Some(acceptor) => {
                    let Ok(Some(stream)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(acceptor, tcp)).await
                    else {
                        return;
                    };
                    let conn =
                        builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                    let _ = watcher.watch(conn).await;
                }
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// The next connection, once one of the `slots` is free.
async fn accept(
    listener: &tokio::net::TcpListener,
    slots: &Arc<tokio::sync::Semaphore>,
) -> (tokio::net::TcpStream, tokio::sync::OwnedSemaphorePermit) {
    loop {
        let slot = slots
            .clone()
            .acquire_owned()
            .await
            .expect("the connection semaphore is never closed");
        match listener.accept().await {
            Ok((tcp, _)) => return (tcp, slot),
            // Out of file descriptors and the like: try again shortly.
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// The TLS handshake on a new connection; a client that speaks plain HTTP
/// (its first byte is not a TLS handshake record's) is answered with a JSON
/// error instead.
async fn handshake(
    acceptor: tokio_rustls::TlsAcceptor,
    mut tcp: tokio::net::TcpStream,
) -> Option<tokio_rustls::server::TlsStream<tokio::net::TcpStream>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const TLS_HANDSHAKE_RECORD: u8 = 0x16;
    let mut first = [0u8; 1];
    if tcp.peek(&mut first).await.ok()? == 0 {
        return None;
    }
    if first[0] != TLS_HANDSHAKE_RECORD {
        // Take what the client sent first, so that closing does not reset
        // the connection before it reads the answer.
        let mut request = vec![0u8; 16 << 10];
        let _ = tcp.read(&mut request).await;
        let _ = tcp.write_all(PLAIN_TO_TLS).await;
        let _ = tcp.shutdown().await;
        return None;
    }
    acceptor.accept(tcp).await.ok()
}
