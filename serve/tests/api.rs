//! The service end to end on 127.0.0.1, and its answers to hostile
//! requests: each a 4xx with a JSON error, the server serving on.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::*;
use triskel_serve::job::JobRequest;
use triskel_serve::remote::{self, Remote, RemoteError};
use triskel_serve::{Quotas, JOB_TYPE, KEYS_TYPE};

/// One raw HTTP/1.1 request; the status (0 when the server closed the
/// connection without an answer) and the body. A server that neither
/// answers nor closes within a minute fails the test.
fn raw(url: &str, request: &[u8]) -> (u16, String) {
    send(url, request, false)
}

/// The same, closing the sending half after `request` when `close`.
fn send(url: &str, request: &[u8], close: bool) -> (u16, String) {
    let addr = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(request).unwrap();
    if close {
        s.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let mut out = Vec::new();
    // A reset after an answer is fine; silence is not.
    if let Err(e) = s.read_to_end(&mut out) {
        use std::io::ErrorKind::{TimedOut, WouldBlock};
        assert!(!matches!(e.kind(), TimedOut | WouldBlock), "no answer: {e}");
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

fn request(method: &str, path: &str, token: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !token.is_empty() {
        r += &format!("Authorization: Bearer {token}\r\n");
    }
    if !content_type.is_empty() {
        r += &format!("Content-Type: {content_type}\r\n");
    }
    r += "\r\n";
    let mut bytes = r.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// An error answer: its status and JSON code.
fn api_error(e: RemoteError) -> (u16, String) {
    match e {
        RemoteError::Api { status, code, .. } => (status, code),
        e => panic!("an API error expected, got {e}"),
    }
}

fn assert_json_error(status: u16, body: &str, want: u16, code: &str) {
    assert_eq!(status, want, "{body}");
    let v: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {body:?}"));
    assert_eq!(v["error"]["code"], code, "{body}");
    assert!(v["error"]["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
}

#[test]
fn a_job_runs_end_to_end_and_verifies() {
    let service = Service::start("e2e", &[("alice", None)], |_| {});
    let remote = service.remote(0);
    let server = remote.identity().unwrap();
    let p = program();
    let mut client = client(&p);
    let keys = client.evaluation_keys().unwrap().to_bytes();
    let id = remote.put_keys(&keys).unwrap();
    assert_eq!(id, triskel::attest::hex(client.key_set()));
    assert_eq!(remote.put_keys(&keys).unwrap(), id, "idempotent upload");

    let sent = client.encrypt_with_context(&inputs(), b"e2e").unwrap();
    let job = remote.submit(&p, &sent, Some("first")).unwrap();
    assert_eq!(remote.submit(&p, &sent, Some("first")).unwrap().id, job.id);
    let done = remote.wait(&job.id, WAIT).unwrap();
    assert_eq!(done.state, "done", "{done:?}");
    assert_eq!(done.runs, 1);
    let outputs = remote.outputs(&job.id).unwrap();
    remote::verify(&client, &sent, &outputs, &server).unwrap();
    let plain = client.decrypt(&outputs, &server).unwrap();
    assert_eq!(plain.get("y"), Some(&expected()));

    // Records bind the inputs sent and the server's identity.
    let other = client.encrypt(&inputs()).unwrap();
    assert!(remote::verify(&client, &other, &outputs, &server).is_err());
    let stranger = triskel::attest::Identity::generate().unwrap();
    assert!(remote::verify(&client, &sent, &outputs, stranger.public()).is_err());

    // The same over HTTP/2.
    let h2 = Remote::with_transport(
        &service.url(),
        Some(service.tokens[0].clone()),
        &remote::Transport {
            http2: true,
            ca_pem: None,
        },
    )
    .unwrap();
    assert_eq!(h2.job(&job.id).unwrap().state, "done");
    assert_eq!(h2.outputs(&job.id).unwrap(), outputs);

    let (status, metrics) = raw(&service.url(), &request("GET", "/metrics", "", "", b""));
    assert_eq!(status, 200);
    assert!(
        metrics.contains("triskel_jobs{state=\"done\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("triskel_key_cache_hits_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("triskel_job_latency_seconds_count 1"),
        "{metrics}"
    );
    assert!(metrics.contains("triskel_runs_total 1"), "{metrics}");
    let seconds = |name: &str| -> f64 {
        let line = metrics.lines().find(|l| l.starts_with(name));
        line.and_then(|l| l.split(' ').nth(1)?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {metrics}"))
    };
    let evaluation = seconds("triskel_evaluation_seconds_total ");
    let busy = seconds("triskel_worker_busy_seconds_total ");
    assert!(0.0 < evaluation && evaluation <= busy, "{metrics}");
    let running = service.running.as_ref().unwrap();
    assert_eq!(running.worker_time().runs, 1);
    let (status, doc) = raw(
        &service.url(),
        &request("GET", "/v1/openapi.json", "", "", b""),
    );
    assert_eq!(status, 200);
    assert!(
        serde_json::from_str::<serde_json::Value>(&doc).unwrap()["paths"]["/v1/jobs"].is_object()
    );

    // A finished job is deleted with its outputs; its keys then go.
    remote.cancel(&job.id).unwrap();
    assert_eq!(
        api_error(remote.job(&job.id).unwrap_err()),
        (404, "not_found".into())
    );
    remote.delete_keys(&id).unwrap();
    assert_eq!(
        api_error(remote.delete_keys(&id).unwrap_err()),
        (404, "not_found".into())
    );
    let again = client.encrypt(&inputs()).unwrap();
    assert_eq!(
        api_error(remote.submit(&p, &again, None).unwrap_err()).0,
        404
    );
}

#[test]
fn hostile_requests_get_json_errors_and_the_server_serves_on() {
    let small = Quotas {
        max_request_bytes: 64 << 10,
        ..Quotas::default()
    };
    let service = Service::start(
        "hostile",
        &[("alice", None), ("mallory", Some(small))],
        |_| {},
    );
    let url = service.url();
    let (alice, mallory) = (service.remote(0), service.remote(1));
    let token = service.tokens[0].clone();
    let p = program();
    let mut client = client(&p);
    let keys = client.evaluation_keys().unwrap().to_bytes();
    let key_set = alice.put_keys(&keys).unwrap();
    let sent = client.encrypt(&inputs()).unwrap();
    let job = alice.submit(&p, &sent, None).unwrap();
    alice.wait(&job.id, WAIT).unwrap();

    // Tokens.
    let (s, b) = raw(
        &url,
        &request("GET", &format!("/v1/jobs/{}", job.id), "", "", b""),
    );
    assert_json_error(s, &b, 401, "unauthorized");
    let forged = format!("tsk_{}", "0".repeat(64));
    let (s, b) = raw(
        &url,
        &request("GET", &format!("/v1/jobs/{}", job.id), &forged, "", b""),
    );
    assert_json_error(s, &b, 401, "unauthorized");
    let (s, b) = raw(&url, &request("GET", "/v1/jobs/x", "not-a-token", "", b""));
    assert_json_error(s, &b, 401, "unauthorized");

    // Content types, malformed bodies, truncated and oversized uploads.
    let (s, b) = raw(
        &url,
        &request(
            "PUT",
            "/v1/keys",
            &token,
            "application/json",
            b"{\"keys\": 1}",
        ),
    );
    assert_json_error(s, &b, 415, "unsupported_media_type");
    let (s, b) = raw(
        &url,
        &request("PUT", "/v1/keys", &token, KEYS_TYPE, b"{\"keys\": "),
    );
    assert_json_error(s, &b, 400, "invalid_keys");
    let (s, b) = raw(
        &url,
        &request(
            "PUT",
            "/v1/keys",
            &token,
            KEYS_TYPE,
            &keys[..keys.len() / 2],
        ),
    );
    assert_json_error(s, &b, 400, "invalid_keys");
    let mut damaged = keys.clone();
    damaged[keys.len() / 3] ^= 1;
    let (s, b) = raw(
        &url,
        &request("PUT", "/v1/keys", &token, KEYS_TYPE, &damaged),
    );
    assert_json_error(s, &b, 400, "invalid_keys");
    let (s, b) = raw(&url, &request("POST", "/v1/jobs", &token, JOB_TYPE, b"{}"));
    assert_json_error(s, &b, 400, "invalid_job");
    let (s, b) = raw(&url, &request("POST", "/v1/jobs", &token, "", b"{}"));
    assert_json_error(s, &b, 415, "unsupported_media_type");
    // A client that goes away before its body's Content-Length: answered
    // 400 if the connection still takes an answer, and nothing is stored.
    let mut cut = request("PUT", "/v1/keys", &token, KEYS_TYPE, &keys);
    cut.truncate(cut.len() - keys.len() / 2);
    let (s, b) = send(&url, &cut, true);
    if s != 0 {
        assert_json_error(s, &b, 400, "incomplete_body");
    }
    // Above the tenant's request size: by Content-Length, and streamed.
    let m_token = &service.tokens[1];
    let (s, b) = raw(
        &url,
        &request("PUT", "/v1/keys", m_token, KEYS_TYPE, &vec![0; 100 << 10]),
    );
    assert_json_error(s, &b, 413, "too_large");
    let mut chunked = format!(
        "PUT /v1/keys HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer {m_token}\r\nContent-Type: {KEYS_TYPE}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for _ in 0..4 {
        chunked.extend_from_slice(format!("{:x}\r\n", 32 << 10).as_bytes());
        chunked.extend_from_slice(&vec![0; 32 << 10]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let (s, b) = raw(&url, &chunked);
    assert_json_error(s, &b, 413, "too_large");

    // Job bodies that parse but do not belong together.
    let prog = p.to_bytes();
    let inputs = sent.to_bytes();
    let job_body = |key_set: [u8; 32], program: &[u8], inputs: &[u8]| {
        JobRequest {
            key_set,
            program,
            inputs,
        }
        .to_bytes()
    };
    let (s, b) = raw(
        &url,
        &request(
            "POST",
            "/v1/jobs",
            &token,
            JOB_TYPE,
            &job_body(*client.key_set(), b"nonsense", &inputs),
        ),
    );
    assert_json_error(s, &b, 400, "invalid_program");
    let (s, b) = raw(
        &url,
        &request(
            "POST",
            "/v1/jobs",
            &token,
            JOB_TYPE,
            &job_body(*client.key_set(), &prog, &inputs[..20]),
        ),
    );
    assert_json_error(s, &b, 400, "invalid_inputs");
    let (s, b) = raw(
        &url,
        &request(
            "POST",
            "/v1/jobs",
            &token,
            JOB_TYPE,
            &job_body([9; 32], &prog, &inputs),
        ),
    );
    assert_json_error(s, &b, 404, "not_found");
    // A program the planner refuses under the key set's plan choice.
    let mut bigger = triskel::Program::new();
    let x = bigger
        .input("x", triskel::Kind::Signed { len: 4, bound: 100 })
        .unwrap();
    let sq = bigger.mul(x, x).unwrap();
    let r = bigger.to_real(sq, 1e-5).unwrap();
    bigger.output("r", r).unwrap();
    let (s, b) = raw(
        &url,
        &request(
            "POST",
            "/v1/jobs",
            &token,
            JOB_TYPE,
            &job_body(*client.key_set(), &bigger.to_bytes(), &inputs),
        ),
    );
    assert_json_error(s, &b, 422, "planner_refused");
    // Another program of the same shape: planned, but not the keys' program.
    let mut other = triskel::Program::new();
    let x = other
        .input("x", triskel::Kind::Signed { len: 4, bound: 100 })
        .unwrap();
    let y = other.mul_scalar(x, triskel::Scalar::Int(5)).unwrap();
    let y = other.add_scalar(y, triskel::Scalar::Int(7)).unwrap();
    other.output("y", y).unwrap();
    let (s, b) = raw(
        &url,
        &request(
            "POST",
            "/v1/jobs",
            &token,
            JOB_TYPE,
            &job_body(*client.key_set(), &other.to_bytes(), &inputs),
        ),
    );
    assert_json_error(s, &b, 422, "program_mismatch");
    // One Idempotency-Key for two bodies.
    alice.submit(&p, &sent, Some("k")).unwrap();
    let again = client.encrypt(&common::inputs()).unwrap();
    assert_eq!(
        api_error(alice.submit(&p, &again, Some("k")).unwrap_err()),
        (422, "idempotency_key_reused".into())
    );

    // Unknown ids and another tenant's ids are not found.
    for path in ["/v1/jobs/nope", "/v1/jobs/nope/outputs", "/v1/nothing"] {
        let (s, b) = raw(&url, &request("GET", path, &token, "", b""));
        assert_json_error(s, &b, 404, "not_found");
    }
    let (s, b) = raw(&url, &request("PATCH", "/v1/jobs", &token, "", b""));
    assert_json_error(s, &b, 405, "method_not_allowed");
    assert_eq!(
        api_error(mallory.job(&job.id).unwrap_err()),
        (404, "not_found".into())
    );
    assert_eq!(
        api_error(mallory.outputs(&job.id).unwrap_err()),
        (404, "not_found".into())
    );
    assert_eq!(
        api_error(mallory.cancel(&job.id).unwrap_err()),
        (404, "not_found".into())
    );
    assert_eq!(
        api_error(mallory.delete_keys(&key_set).unwrap_err()),
        (404, "not_found".into())
    );
    assert_eq!(
        api_error(mallory.submit(&p, &sent, None).unwrap_err()),
        (404, "not_found".into())
    );

    // Still serving, and alice's work is intact.
    let (s, _) = raw(&url, &request("GET", "/healthz", "", "", b""));
    assert_eq!(s, 200);
    let server = alice.identity().unwrap();
    let outputs = alice.outputs(&job.id).unwrap();
    remote::verify(&client, &sent, &outputs, &server).unwrap();
    assert_eq!(
        client.decrypt(&outputs, &server).unwrap().get("y"),
        Some(&expected())
    );
}

#[test]
fn a_full_queue_and_a_spent_quota_answer_429_with_retry_after() {
    let none_in_flight = Quotas {
        max_jobs_in_flight: 0,
        ..Quotas::default()
    };
    let service = Service::start(
        "busy",
        &[("alice", None), ("bob", Some(none_in_flight))],
        |c| c.queue_capacity = 0,
    );
    let p = program();
    for (tenant, code) in [(0, "queue_full"), (1, "queue_full")] {
        let mut client = client(&p);
        let remote = service.remote(tenant);
        upload_keys(&remote, &mut client);
        let sent = client.encrypt(&inputs()).unwrap();
        assert_eq!(
            api_error(remote.submit(&p, &sent, None).unwrap_err()),
            (429, code.into())
        );
    }
    let c = client(&p);
    let token = &service.tokens[0];
    let keys = c.evaluation_keys().unwrap().to_bytes();
    service.remote(0).put_keys(&keys).unwrap();
    let mut c = c;
    let sent = c.encrypt(&inputs()).unwrap();
    let body = JobRequest {
        key_set: *c.key_set(),
        program: &p.to_bytes(),
        inputs: &sent.to_bytes(),
    }
    .to_bytes();
    let addr = service.url();
    let mut s = TcpStream::connect(addr.trim_start_matches("http://")).unwrap();
    s.write_all(&request("POST", "/v1/jobs", token, JOB_TYPE, &body))
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 429"), "{out}");
    assert!(out.to_ascii_lowercase().contains("retry-after: 1"), "{out}");
}

#[test]
fn the_jobs_in_flight_quota_answers_429() {
    let none_in_flight = Quotas {
        max_jobs_in_flight: 0,
        ..Quotas::default()
    };
    let service = Service::start("quota", &[("bob", Some(none_in_flight))], |_| {});
    let p = program();
    let mut client = client(&p);
    let remote = service.remote(0);
    upload_keys(&remote, &mut client);
    let sent = client.encrypt(&inputs()).unwrap();
    assert_eq!(
        api_error(remote.submit(&p, &sent, None).unwrap_err()),
        (429, "quota_jobs_in_flight".into())
    );
}

#[test]
fn a_job_over_its_timeout_fails() {
    let service = Service::start("timeout", &[("alice", None)], |c| {
        c.job_timeout = Duration::ZERO
    });
    let p = program();
    let mut client = client(&p);
    let remote = service.remote(0);
    upload_keys(&remote, &mut client);
    let job = remote
        .submit(&p, &client.encrypt(&inputs()).unwrap(), None)
        .unwrap();
    let end = remote.wait(&job.id, WAIT).unwrap();
    assert_eq!(end.state, "failed");
    assert!(end.error.unwrap().contains("timed out"));
    assert_eq!(
        api_error(remote.outputs(&job.id).unwrap_err()),
        (409, "not_done".into())
    );
}

#[test]
fn a_slow_upload_holds_no_worker() {
    let service = Service::start("slow", &[("alice", None)], |_| {});
    let url = service.url();
    let token = service.tokens[0].clone();
    // An upload that stops halfway and stays open, on the only worker's server.
    let head = format!(
        "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: {JOB_TYPE}\r\nContent-Length: 1000000\r\n\r\n"
    );
    let mut stalled = TcpStream::connect(url.trim_start_matches("http://")).unwrap();
    stalled.write_all(head.as_bytes()).unwrap();
    stalled.write_all(&[0; 1000]).unwrap();
    // A whole job runs meanwhile.
    let p = program();
    let mut client = client(&p);
    let remote = service.remote(0);
    upload_keys(&remote, &mut client);
    run_to_done(&remote, &p, &client.encrypt(&inputs()).unwrap());
    drop(stalled);
}

/// Submits a chain of `lookups` table lookups on one u8 (TFHE: quick to
/// set up, seconds per lookup to run) under new keys; the job.
fn submit_long(remote: &Remote, lookups: usize) -> remote::JobStatus {
    let mut p = triskel::Program::new();
    let mut x = p
        .input("x", triskel::Kind::Uint { len: 1, bits: 8 })
        .unwrap();
    let table: Vec<u8> = (0..=255u8).map(|v| v.wrapping_add(1)).collect();
    for _ in 0..lookups {
        x = p.lookup(x, &table).unwrap();
    }
    p.output("y", x).unwrap();
    let mut client = client(&p);
    upload_keys(remote, &mut client);
    let x =
        std::collections::BTreeMap::from([("x".to_string(), triskel::PlainValue::Ints(vec![0]))]);
    remote
        .submit(&p, &client.encrypt(&x).unwrap(), None)
        .unwrap()
}

#[test]
fn cancelling_a_running_job_frees_its_worker() {
    // One worker: the quick job waits behind the long one.
    let service = Service::start("cancel-running", &[("alice", None)], |_| {});
    let remote = service.remote(0);
    let a = submit_long(&remote, LONG_LOOKUPS);
    let p = program();
    let mut quick = client(&p);
    upload_keys(&remote, &mut quick);
    let sent = quick.encrypt(&inputs()).unwrap();
    let b = remote.submit(&p, &sent, None).unwrap();
    loop {
        let state = remote.job(&a.id).unwrap().state;
        if state == "running" {
            break;
        }
        assert_eq!(state, "queued");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(remote.job(&b.id).unwrap().state, "queued");
    remote.cancel(&a.id).unwrap();

    let b_end = remote.wait(&b.id, WAIT).unwrap();
    assert_eq!(b_end.state, "done", "{b_end:?}");
    let a_end = remote.job(&a.id).unwrap();
    assert_eq!((a_end.state.as_str(), a_end.runs), ("cancelled", 1));
    assert!(b_end.started_ms.unwrap() >= a_end.finished_ms.unwrap());
    assert_eq!(
        api_error(remote.outputs(&a.id).unwrap_err()),
        (409, "not_done".into())
    );
    // The worker stopped the cancelled run instead of computing it to its end.
    let (_, metrics) = raw(&service.url(), &request("GET", "/metrics", "", "", b""));
    assert!(
        metrics.contains("triskel_runs_interrupted_total 1"),
        "{metrics}"
    );
    let server = remote.identity().unwrap();
    let outputs = remote.outputs(&b.id).unwrap();
    remote::verify(&quick, &sent, &outputs, &server).unwrap();
    assert_eq!(
        quick.decrypt(&outputs, &server).unwrap().get("y"),
        Some(&expected())
    );
}

/// Lookups in the long job: minutes of work (seconds each), were it not
/// cancelled.
const LONG_LOOKUPS: usize = 64;

/// Makes every blob write of the store at `dir` fail, as a read-only disk
/// does: by permissions where they bind, else (as root, whom they do not
/// bind) by a file where the directory that every blob is written through
/// should be.
struct WriteFault {
    tmp: std::path::PathBuf,
    by_permissions: bool,
}

impl WriteFault {
    fn new(dir: &std::path::Path) -> WriteFault {
        use std::os::unix::fs::PermissionsExt;
        let tmp = dir.join("tmp");
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o500)).unwrap();
        let probe = tmp.join("probe");
        let by_permissions = std::fs::File::create(&probe).is_err();
        if !by_permissions {
            std::fs::remove_file(&probe).unwrap();
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::fs::remove_dir_all(&tmp).unwrap();
            std::fs::write(&tmp, b"not a directory").unwrap();
        }
        WriteFault {
            tmp,
            by_permissions,
        }
    }

    fn remove(self) {
        use std::os::unix::fs::PermissionsExt;
        if self.by_permissions {
            std::fs::set_permissions(&self.tmp, std::fs::Permissions::from_mode(0o700)).unwrap();
        } else {
            std::fs::remove_file(&self.tmp).unwrap();
            std::fs::create_dir(&self.tmp).unwrap();
        }
    }
}

#[test]
fn an_unwritable_store_refuses_new_work_and_serves_reads() {
    let service = Service::start("unwritable", &[("alice", None)], |_| {});
    let store = service.dir.0.join("store");
    let remote = service.remote(0);
    let server = remote.identity().unwrap();
    let p = program();
    let mut client = client(&p);
    let keys = client.evaluation_keys().unwrap().to_bytes();
    remote.put_keys(&keys).unwrap();
    let sent = client.encrypt(&inputs()).unwrap();
    let done = run_to_done(&remote, &p, &sent);
    let outputs = remote.outputs(&done).unwrap();

    // A job running when the store turns unwritable.
    let running = submit_long(&remote, 2);
    while remote.job(&running.id).unwrap().state == "queued" {
        std::thread::sleep(Duration::from_millis(5));
    }

    let fault = WriteFault::new(&store);
    let mut other = common::client(&p);
    let (s, b) = raw(
        &service.url(),
        &request(
            "PUT",
            "/v1/keys",
            &service.tokens[0],
            KEYS_TYPE,
            &other.evaluation_keys().unwrap().to_bytes(),
        ),
    );
    assert_json_error(s, &b, 503, "store_unwritable");
    let refused = client.encrypt(&inputs()).unwrap();
    assert_eq!(
        api_error(remote.submit(&p, &refused, None).unwrap_err()),
        (503, "store_unwritable".into())
    );
    // Reads go on: the done job, its outputs, the metrics.
    assert_eq!(remote.job(&done).unwrap().state, "done");
    assert_eq!(remote.outputs(&done).unwrap(), outputs);
    let (s, metrics) = raw(&service.url(), &request("GET", "/metrics", "", "", b""));
    assert_eq!(s, 200);
    assert!(
        metrics.contains("triskel_jobs{state=\"queued\"} 0"),
        "{metrics}"
    );
    assert!(
        metrics.contains("triskel_jobs{state=\"done\"} 1"),
        "{metrics}"
    );

    // The running job's outputs cannot be stored: it fails, saying so.
    let end = remote.wait(&running.id, WAIT).unwrap();
    assert_eq!(end.state, "failed", "{end:?}");
    assert!(end.error.unwrap().contains("could not be stored"));

    // Nothing was damaged: every blob has the digest it is named by.
    fault.remove();
    for path in walk(&store.join("blobs")) {
        let name: String = path
            .iter()
            .rev()
            .take(2)
            .map(|c| c.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(blake3::hash(&bytes).to_hex().as_str(), name, "{path:?}");
    }
    // And work is taken again.
    let job = run_to_done(&remote, &p, &refused);
    let again = remote.outputs(&job).unwrap();
    remote::verify(&client, &refused, &again, &server).unwrap();
    assert_eq!(
        client.decrypt(&again, &server).unwrap().get("y"),
        Some(&expected())
    );
    let other_sent = other.encrypt(&inputs()).unwrap();
    upload_keys(&remote, &mut other);
    run_to_done(&remote, &p, &other_sent);
}

#[test]
fn a_client_still_uploading_reads_an_early_refusal() {
    let small = Quotas {
        max_request_bytes: 1 << 20,
        ..Quotas::default()
    };
    let service = Service::start("early", &[("alice", Some(small))], |_| {});
    let big = vec![0u8; 48 << 20];
    for http2 in [false, true] {
        let how = remote::Transport {
            http2,
            ..remote::Transport::default()
        };
        let stranger =
            Remote::with_transport(&service.url(), Some("tsk_bad".into()), &how).unwrap();
        let (status, _) = api_error(stranger.put_keys(&big).unwrap_err());
        assert_eq!(status, 401, "http2 {http2}");
        let alice =
            Remote::with_transport(&service.url(), Some(service.tokens[0].clone()), &how).unwrap();
        assert_eq!(
            api_error(alice.put_keys(&big).unwrap_err()),
            (413, "too_large".into()),
            "http2 {http2}"
        );
        // The connection the refusals came on still serves.
        assert!(alice.identity().is_ok());
    }
}

#[test]
fn silent_and_stalled_clients_are_dropped() {
    let service = Service::start("idle", &[("alice", None)], |c| {
        c.idle_timeout = Duration::from_secs(1)
    });
    let url = service.url();
    let token = &service.tokens[0];
    // No bytes at all, and headers that never end: closed without a word.
    assert_eq!(raw(&url, b""), (0, String::new()));
    assert_eq!(
        raw(&url, b"GET /healthz HTTP/1.1\r\nHost: x\r\n"),
        (0, String::new())
    );
    // A body that stops halfway: 408 with a JSON error.
    let head = format!(
        "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: {JOB_TYPE}\r\nContent-Length: 1000000\r\n\r\n"
    );
    let mut stalled = head.into_bytes();
    stalled.extend_from_slice(&[0; 1000]);
    let (status, body) = raw(&url, &stalled);
    assert_json_error(status, &body, 408, "request_timeout");
    // And the server serves on.
    assert!(service.remote(0).identity().is_ok());
}
