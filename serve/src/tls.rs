//! TLS for the service and its client, through rustls with the `ring`
//! provider: the server's configuration from a PEM certificate chain and
//! key (ALPN `h2` and `http/1.1`), the client's from the PEM certificates
//! it trusts.

use std::path::Path;
#[cfg(feature = "service")]
use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
#[cfg(feature = "service")]
use rustls::pki_types::PrivateKeyDer;
#[cfg(feature = "service")]
use rustls::ServerConfig;
use rustls::{ClientConfig, RootCertStore};

/// The largest PEM file read (a certificate chain, a key, a CA bundle).
pub const MAX_PEM_BYTES: u64 = 4 << 20;

/// The server's certificate chain and its private key, PEM files.
#[cfg(feature = "service")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The bytes of `path`, at most [`MAX_PEM_BYTES`].
pub fn read_pem(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(format!(
            "{}: larger than {MAX_PEM_BYTES} bytes",
            path.display()
        ));
    }
    Ok(bytes)
}

/// The certificates of a PEM text (at least one).
pub fn certificates(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what}: not PEM certificates: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{what}: no CERTIFICATE block in it"));
    }
    Ok(certs)
}

/// The server's TLS configuration from `files`.
#[cfg(feature = "service")]
pub fn server_config(files: &TlsFiles) -> Result<Arc<ServerConfig>, String> {
    let cert_what = format!("--tls-cert {}", files.cert.display());
    let key_what = format!("--tls-key {}", files.key.display());
    let chain = certificates(&read_pem(&files.cert)?, &cert_what)?;
    let key = PrivateKeyDer::from_pem_slice(&read_pem(&files.key)?)
        .map_err(|e| format!("{key_what}: not a PEM private key: {e}"))?;
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("{cert_what} and {key_what}: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A client configuration that trusts exactly the certificates in `ca_pem`
/// (a self-signed server certificate, a private CA, or a system bundle);
/// without them it trusts no server.
pub fn client_config(ca_pem: Option<&[u8]>) -> Result<ClientConfig, String> {
    let mut roots = RootCertStore::empty();
    let trusted = match ca_pem {
        Some(pem) => certificates(pem, "the CA file")?,
        None => Vec::new(),
    };
    for cert in trusted {
        roots
            .add(cert)
            .map_err(|e| format!("the CA file: a certificate is unusable: {e}"))?;
    }
    Ok(ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}
