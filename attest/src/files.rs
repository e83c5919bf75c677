//! File operations behind `triskel attest keygen | sign | verify`.

use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use crate::keys::{PUBLIC_FILE_LEN, SECRET_FILE_LEN};
use crate::record::{BUNDLE_LEN, RECEIPT_LEN};
use crate::{attest, Bundle, Error, Identity, PublicIdentity, Receipt, Record, Result, Route};

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads at most `limit` bytes of `path`; a longer file is [`Error::Malformed`].
pub fn read_limited(path: &Path, limit: usize, item: &'static str) -> Result<Vec<u8>> {
    let file = fs::File::open(path).map_err(io_error(path))?;
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error(path))?;
    if bytes.len() > limit {
        return Err(Error::malformed(item, format!("longer than {limit} bytes")));
    }
    Ok(bytes)
}

fn write_new(path: &Path, bytes: &[u8], secret: bool) -> Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut file = options.open(path).map_err(io_error(path))?;
    file.write_all(bytes).map_err(io_error(path))
}

/// Generates an identity and writes its secret and public files (neither may exist yet;
/// the secret file is created with mode 0600 on Unix).
pub fn keygen(secret_path: &Path, public_path: &Path) -> Result<PublicIdentity> {
    for path in [secret_path, public_path] {
        if path.exists() {
            let exists = std::io::Error::from(std::io::ErrorKind::AlreadyExists);
            return Err(io_error(path)(exists));
        }
    }
    let identity = Identity::generate();
    write_new(secret_path, &identity.to_bytes(), true)?;
    write_new(public_path, &identity.public().to_bytes(), false)?;
    Ok(identity.public().clone())
}

/// Loads a secret identity file.
pub fn load_identity(path: &Path) -> Result<Identity> {
    let bytes = zeroize::Zeroizing::new(read_limited(path, SECRET_FILE_LEN, "secret identity")?);
    Identity::from_bytes(&bytes)
}

/// Loads a public identity file.
pub fn load_public(path: &Path) -> Result<PublicIdentity> {
    PublicIdentity::from_bytes(&read_limited(path, PUBLIC_FILE_LEN, "public identity")?)
}

/// The files of one attestation: the result, and where its receipt and bundle live.
#[derive(Clone, Copy, Debug)]
pub struct RecordFiles<'a> {
    /// The attested result bytes.
    pub result: &'a Path,
    /// The 74-byte receipt.
    pub receipt: &'a Path,
    /// The signature bundle.
    pub bundle: &'a Path,
}

impl RecordFiles<'_> {
    fn read_result(&self) -> Result<Vec<u8>> {
        fs::read(self.result).map_err(io_error(self.result))
    }
}

/// Attests the contents of `files.result` and writes the receipt and the bundle to two
/// new files.
pub fn sign(
    secret: &Path,
    files: RecordFiles<'_>,
    route: &Route,
    context: &[u8],
) -> Result<Record> {
    let identity = load_identity(secret)?;
    let record = attest(&identity, &files.read_result()?, route, context)?;
    write_new(files.receipt, &record.receipt.to_bytes(), false)?;
    write_new(files.bundle, &record.bundle.to_bytes(), false)?;
    Ok(record)
}

/// Verifies the contents of `files.result` against its receipt and bundle files under a
/// public identity file; returns the verified record.
pub fn verify(
    public: &Path,
    files: RecordFiles<'_>,
    route: &Route,
    context: &[u8],
) -> Result<Record> {
    let public = load_public(public)?;
    let record = Record {
        receipt: Receipt::from_bytes(&read_limited(files.receipt, RECEIPT_LEN, "receipt")?)?,
        bundle: Bundle::from_bytes(&read_limited(files.bundle, BUNDLE_LEN, "bundle")?)?,
    };
    crate::verify(&public, &files.read_result()?, route, context, &record)?;
    Ok(record)
}
