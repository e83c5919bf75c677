//! The service over HTTPS on 127.0.0.1 with a self-signed certificate made
//! here: a job end to end over HTTP/1.1 and HTTP/2, clients that do not
//! trust the certificate, plain HTTP to the TLS port, and the refusal of a
//! non-loopback address without TLS.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use common::*;
use triskel_serve::remote::{self, Remote, RemoteError, Transport};
use triskel_serve::TlsFiles;

/// A self-signed certificate for 127.0.0.1 and localhost: its PEM, and the
/// files of it and its key in `dir`.
fn certificate(dir: &TempDir, name: &str) -> (String, TlsFiles) {
    let made =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".into(), "localhost".into()]).unwrap();
    let pem = made.cert.pem();
    let files = TlsFiles {
        cert: dir.0.join(format!("{name}.crt")),
        key: dir.0.join(format!("{name}.key")),
    };
    std::fs::write(&files.cert, &pem).unwrap();
    std::fs::write(&files.key, made.signing_key.serialize_pem()).unwrap();
    (pem, files)
}

/// A service over HTTPS, and its certificate's PEM.
fn tls_service(name: &str) -> (Service, String) {
    let certs = TempDir::new(&format!("{name}-certs"));
    let (pem, files) = certificate(&certs, "server");
    let service = Service::start(name, &[("alice", None)], |c| c.tls = Some(files.clone()));
    (service, pem)
}

fn https(service: &Service, ca_pem: Option<&str>, http2: bool) -> Result<Remote, RemoteError> {
    Remote::with_transport(
        &service.url(),
        Some(service.tokens[0].clone()),
        &Transport {
            http2,
            ca_pem: ca_pem.map(|p| p.as_bytes().to_vec()),
        },
    )
}

fn addr(service: &Service) -> std::net::SocketAddr {
    service.running.as_ref().unwrap().addr()
}

#[test]
fn a_job_runs_over_https_and_verifies() {
    let (service, pem) = tls_service("tls-e2e");
    assert!(service.url().starts_with("https://127.0.0.1:"));
    let remote = https(&service, Some(&pem), false).unwrap();
    let server = remote.identity().unwrap();
    let p = program();
    let mut client = client(&p);
    upload_keys(&remote, &mut client);
    let sent = client.encrypt(&inputs()).unwrap();
    let job = run_to_done(&remote, &p, &sent);
    let outputs = remote.outputs(&job).unwrap();
    remote::verify(&client, &sent, &outputs, &server).unwrap();
    let plain = client.decrypt(&outputs, &server).unwrap();
    assert_eq!(plain.get("y"), Some(&expected()));

    // The same outputs over HTTP/2 (ALPN h2).
    let h2 = https(&service, Some(&pem), true).unwrap();
    assert_eq!(h2.outputs(&job).unwrap(), outputs);
}

/// A TLS connection to `service` trusting `pem` and offering `alpn`.
fn tls_stream(
    service: &Service,
    pem: &str,
    alpn: &[u8],
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    let mut config = triskel_serve::tls::client_config(Some(pem.as_bytes())).unwrap();
    config.alpn_protocols = vec![alpn.to_vec()];
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let tcp = TcpStream::connect(addr(service)).unwrap();
    rustls::StreamOwned::new(conn, tcp)
}

#[test]
fn alpn_offers_http2_and_http1() {
    let (service, pem) = tls_service("tls-alpn");
    let mut h1 = tls_stream(&service, &pem, b"http/1.1");
    h1.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    let _ = h1.read_to_end(&mut answer);
    assert_eq!(h1.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let mut h2 = tls_stream(&service, &pem, b"h2");
    // The handshake completes on the first write.
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    assert_eq!(h2.conn.alpn_protocol(), Some(&b"h2"[..]));
}

#[test]
fn a_client_that_does_not_trust_the_certificate_is_refused() {
    let (service, pem) = tls_service("tls-untrusted");
    // Another self-signed certificate is no substitute for the server's.
    let other_dir = TempDir::new("tls-other");
    let (other, _) = certificate(&other_dir, "other");
    match https(&service, Some(&other), false).unwrap().identity() {
        Err(RemoteError::Transport(m)) => assert!(!m.is_empty()),
        r => panic!("an untrusted certificate was accepted: {r:?}"),
    }
    // Without certificates to trust, https is refused before connecting.
    match https(&service, None, false) {
        Err(RemoteError::Refused(m)) => assert!(m.contains("--ca"), "{m}"),
        r => panic!("https without a CA: {r:?}"),
    }
    // Nor is a CA file without certificates taken.
    match https(&service, Some("not a certificate"), false) {
        Err(RemoteError::Refused(m)) => assert!(m.contains("CA file"), "{m}"),
        r => panic!("an empty CA file: {r:?}"),
    }
    // The server serves on.
    https(&service, Some(&pem), false)
        .unwrap()
        .identity()
        .unwrap();
}

#[test]
fn plain_http_to_the_tls_port_is_answered_and_the_server_serves_on() {
    let (service, pem) = tls_service("tls-plain");
    let mut s = TcpStream::connect(addr(&service)).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap();
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["error"]["code"], "tls_required", "{body}");

    // The plain-HTTP client is refused the same way.
    let plain = format!("http://{}", addr(&service));
    match Remote::new(&plain, Some(service.tokens[0].clone()))
        .unwrap()
        .identity()
    {
        Err(RemoteError::Api { status, code, .. }) => {
            assert_eq!((status, code.as_str()), (400, "tls_required"))
        }
        r => panic!("plain HTTP to the TLS port: {r:?}"),
    }

    // A truncated handshake record, garbage, and a connection that closes
    // at once: each ends its connection only.
    for bytes in [&[0x16u8, 3, 1, 0xff][..], b"\x00\x01\x02garbage", b""] {
        let mut s = TcpStream::connect(addr(&service)).unwrap();
        s.write_all(bytes).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
    }
    https(&service, Some(&pem), false)
        .unwrap()
        .identity()
        .unwrap();
}

#[test]
fn a_non_loopback_address_needs_tls() {
    let dir = TempDir::new("tls-refused");
    let mut c = config(&dir);
    c.listen = "0.0.0.0:0".parse().unwrap();
    let e = triskel_serve::start(c.clone()).err().expect("refused");
    assert!(e.to_string().contains("--tls-cert"), "{e}");
    assert!(!c.store.exists(), "nothing is written when refused");

    // Certificate files that are not what they claim are refused clearly.
    let (_, files) = certificate(&dir, "good");
    let garbage = dir.0.join("garbage.pem");
    std::fs::write(&garbage, "not PEM").unwrap();
    let (_, other) = certificate(&dir, "other");
    c.listen = "127.0.0.1:0".parse().unwrap();
    for (tls, want) in [
        (
            TlsFiles {
                cert: garbage.clone(),
                key: files.key.clone(),
            },
            "--tls-cert",
        ),
        (
            TlsFiles {
                cert: files.cert.clone(),
                key: garbage.clone(),
            },
            "--tls-key",
        ),
        (
            TlsFiles {
                cert: files.cert.clone(),
                key: other.key.clone(),
            },
            "--tls-key",
        ),
        (
            TlsFiles {
                cert: dir.0.join("absent.pem"),
                key: files.key.clone(),
            },
            "absent.pem",
        ),
    ] {
        c.tls = Some(tls);
        let e = triskel_serve::start(c.clone()).err().expect("refused");
        assert!(e.to_string().contains(want), "{e}");
    }
}
