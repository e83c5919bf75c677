//! File operations behind `triskel attest keygen | sign | verify | inspect`.
//!
//! New files are written next to their destination under a temporary name and linked into
//! place only once every file of the command is complete, so a failed command leaves
//! nothing behind and never overwrites an existing file.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use crate::keys::{PUBLIC_FILE_LEN, SECRET_FILE_LEN};
use crate::record::{BUNDLE_LEN, RECEIPT_LEN};
use crate::{
    attest, Bundle, Error, Identity, PublicIdentity, Receipt, Record, Result, Route, Verified,
};

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads all of `file` into a buffer of `limit` bytes allocated up front (so that it never
/// grows and leaves copies behind) and zeroized on drop; a longer file is
/// [`Error::Malformed`].
fn read_into_fixed(
    mut file: fs::File,
    path: &Path,
    limit: usize,
    item: &'static str,
) -> Result<Zeroizing<Vec<u8>>> {
    let mut bytes = Zeroizing::new(vec![0u8; limit]);
    let mut filled = 0;
    loop {
        let n = match file.read(&mut bytes[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(path)(e)),
        };
        if n == 0 {
            break;
        }
        filled += n;
        if filled == limit {
            let mut extra = [0u8; 1];
            if file.read(&mut extra).map_err(io_error(path))? != 0 {
                return Err(Error::malformed(item, format!("longer than {limit} bytes")));
            }
            break;
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

/// Reads at most `limit` bytes of `path`; a longer file is [`Error::Malformed`].
pub fn read_limited(path: &Path, limit: usize, item: &'static str) -> Result<Vec<u8>> {
    let file = fs::File::open(path).map_err(io_error(path))?;
    Ok(read_into_fixed(file, path, limit, item)?.to_vec())
}

/// Loads a secret identity file: refuses one that group or others may access (unless
/// `allow_insecure_mode`), reads it into a zeroizing buffer, validates it and checks that
/// each secret key matches its public key ([`Identity::from_bytes`]).
pub fn load_identity(path: &Path, allow_insecure_mode: bool) -> Result<Identity> {
    let file = fs::File::open(path).map_err(io_error(path))?;
    #[cfg(unix)]
    if !allow_insecure_mode {
        use std::os::unix::fs::PermissionsExt;
        // The mode of the file actually opened, not of whatever the path names later.
        let mode = file
            .metadata()
            .map_err(io_error(path))?
            .permissions()
            .mode()
            & 0o777;
        if mode & 0o077 != 0 {
            return Err(Error::InsecureKeyFile {
                path: path.to_path_buf(),
                mode,
            });
        }
    }
    #[cfg(not(unix))]
    let _ = allow_insecure_mode;
    let bytes = read_into_fixed(file, path, SECRET_FILE_LEN, "secret identity")?;
    Identity::from_bytes(&bytes)
}

/// Loads a public identity file.
pub fn load_public(path: &Path) -> Result<PublicIdentity> {
    PublicIdentity::from_bytes(&read_limited(path, PUBLIC_FILE_LEN, "public identity")?)
}

/// One file to create: where, what, and whether only its owner may read it.
struct NewFile<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    owner_only: bool,
}

/// `path`'s directory, resolved, joined with its file name: two paths naming the same
/// (possibly not yet existing) file give the same key.
fn resolved(path: &Path) -> Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
    })?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    Ok(fs::canonicalize(dir).map_err(io_error(path))?.join(name))
}

/// A fresh name in `path`'s directory for the temporary copy of `path`.
fn temporary_name(path: &Path) -> Result<PathBuf> {
    let mut tag = [0u8; 8];
    getrandom::fill(&mut tag).map_err(|e| Error::Random(e.to_string()))?;
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".tmp-{}", crate::hex(&tag)));
    Ok(path.with_file_name(name))
}

fn write_temporary(file: &NewFile<'_>) -> Result<PathBuf> {
    let temporary = temporary_name(file.path)?;
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if file.owner_only { 0o600 } else { 0o644 });
    }
    let mut handle = options.open(&temporary).map_err(io_error(file.path))?;
    let written = handle
        .write_all(file.bytes)
        .and_then(|()| handle.sync_all());
    if let Err(e) = written {
        let _ = fs::remove_file(&temporary);
        return Err(io_error(file.path)(e));
    }
    Ok(temporary)
}

/// Creates every file in `files` or none: each must not exist yet and all paths must
/// differ. Written to temporary files first, then hard-linked to their names (which fails
/// rather than replaces when a name exists); on any failure every file created is removed.
fn create_all(files: &[NewFile<'_>]) -> Result<()> {
    let mut seen = Vec::with_capacity(files.len());
    for file in files {
        let key = resolved(file.path)?;
        if seen.contains(&key) {
            let same = std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the same path is given for two output files",
            );
            return Err(io_error(file.path)(same));
        }
        if file.path.symlink_metadata().is_ok() {
            let exists = std::io::Error::from(std::io::ErrorKind::AlreadyExists);
            return Err(io_error(file.path)(exists));
        }
        seen.push(key);
    }
    let mut temporaries = Vec::with_capacity(files.len());
    let mut outcome = Ok(());
    for file in files {
        match write_temporary(file) {
            Ok(t) => temporaries.push(t),
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    let mut linked = Vec::with_capacity(files.len());
    if outcome.is_ok() {
        for (file, temporary) in files.iter().zip(&temporaries) {
            if let Err(e) = fs::hard_link(temporary, file.path) {
                outcome = Err(io_error(file.path)(e));
                break;
            }
            linked.push(file.path);
        }
    }
    for temporary in &temporaries {
        let _ = fs::remove_file(temporary);
    }
    if outcome.is_err() {
        for path in linked {
            let _ = fs::remove_file(path);
        }
    }
    outcome
}

/// Generates an identity of the default suite and writes its secret and public files
/// (neither may exist yet; the secret file gets mode 0600 on Unix).
pub fn keygen(secret_path: &Path, public_path: &Path) -> Result<PublicIdentity> {
    let identity = Identity::generate()?;
    let secret = identity.to_bytes();
    let public = identity.public().to_bytes();
    create_all(&[
        NewFile {
            path: secret_path,
            bytes: &secret,
            owner_only: true,
        },
        NewFile {
            path: public_path,
            bytes: &public,
            owner_only: false,
        },
    ])?;
    Ok(identity.public().clone())
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

/// The largest result file [`sign`] and [`verify`] read: results are held in memory
/// whole, so a bigger file (or an endless one such as `/dev/zero`) is refused instead of
/// taking all the machine's memory.
pub const MAX_RESULT_BYTES: u64 = 1 << 30;

impl RecordFiles<'_> {
    fn read_result(&self) -> Result<Vec<u8>> {
        let file = fs::File::open(self.result).map_err(io_error(self.result))?;
        let mut bytes = Vec::new();
        file.take(MAX_RESULT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io_error(self.result))?;
        if bytes.len() as u64 > MAX_RESULT_BYTES {
            return Err(Error::malformed(
                "result",
                format!("longer than {MAX_RESULT_BYTES} bytes"),
            ));
        }
        Ok(bytes)
    }
}

/// Attests the contents of `files.result` with the secret identity in `secret` (see
/// [`load_identity`] for `allow_insecure_mode`) and writes the receipt and the bundle to
/// two new files, both or neither.
pub fn sign(
    secret: &Path,
    allow_insecure_mode: bool,
    files: RecordFiles<'_>,
    route: &Route,
    context: &[u8],
) -> Result<Record> {
    let identity = load_identity(secret, allow_insecure_mode)?;
    let record = attest(&identity, &files.read_result()?, route, context)?;
    create_all(&[
        NewFile {
            path: files.receipt,
            bytes: &record.receipt.to_bytes(),
            owner_only: false,
        },
        NewFile {
            path: files.bundle,
            bytes: &record.bundle.to_bytes(),
            owner_only: false,
        },
    ])?;
    Ok(record)
}

/// Reads a receipt and a bundle file, which must name the same record version.
pub fn load_record(receipt: &Path, bundle: &Path) -> Result<Record> {
    Record::from_parts(
        Receipt::from_bytes(&read_limited(receipt, RECEIPT_LEN, "receipt")?)?,
        Bundle::from_bytes(&read_limited(bundle, BUNDLE_LEN, "bundle")?)?,
    )
}

/// Verifies the contents of `files.result` against its receipt and bundle files under a
/// public identity file; returns the record and what it vouches for.
pub fn verify(
    public: &Path,
    files: RecordFiles<'_>,
    route: &Route,
    context: &[u8],
) -> Result<(Record, Verified)> {
    let public = load_public(public)?;
    let record = load_record(files.receipt, files.bundle)?;
    let verified = crate::verify(&public, &files.read_result()?, route, context, &record)?;
    Ok((record, verified))
}
