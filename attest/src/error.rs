//! The one error type of the crate.

use std::fmt;
use std::path::PathBuf;

use crate::RecordKind;

/// Everything that can go wrong while attesting, verifying or (de)serializing.
///
/// Verification failures each have their own variant, so a caller can tell *why* a
/// record was refused; see [`crate::verify`] for the order in which checks run.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Bytes that do not parse: wrong length, magic, version, suite or an invalid field.
    Malformed {
        /// What was being parsed ("receipt", "bundle", "inclusion proof", ...).
        item: &'static str,
        /// What was wrong with it.
        problem: String,
    },
    /// The result bytes are not the ones the record (or inclusion proof) commits to.
    WrongResult,
    /// The program, key set, input ciphertext digests (their number, order or any one of
    /// them) or output ciphertext digest are not the ones a computation record commits to.
    WrongComputation,
    /// The route (engine or parameter-set id) is not the one the record commits to.
    WrongRoute,
    /// The caller context is not the one the record commits to.
    WrongContext,
    /// The record was signed by another identity than the one it is verified under.
    WrongIdentity,
    /// The record is of another kind than the one asked for (a single-result, batch or
    /// computation record; the kind also fixes the record version, see
    /// [`RecordKind::version`]).
    WrongKind {
        /// The kind the caller asked to verify.
        expected: RecordKind,
        /// The kind the record says it is.
        found: RecordKind,
    },
    /// The receipt and the bundle name different signature suites.
    SuiteMismatch,
    /// The receipt and the bundle name different record versions.
    VersionMismatch,
    /// The inclusion proof is for another place in the batch than the one asked for.
    WrongIndex {
        /// The index the caller asked for.
        expected: u64,
        /// The index the proof is for.
        found: u64,
    },
    /// A secret identity file that group or others may access (Unix mode bits).
    InsecureKeyFile {
        /// The file concerned.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The receipt's commitment (or timestamp) does not match the commitment recomputed
    /// from the bundle's nonce and the verified inputs.
    CommitmentMismatch,
    /// The bundle is not the one the receipt was issued for (its digest differs).
    BundleDigestMismatch,
    /// The ML-DSA-65 signature does not verify.
    BadMlDsaSignature,
    /// The Falcon-512 signature does not verify.
    BadFalconSignature,
    /// The SLH-DSA signature (suite 2), or the SPHINCS+ round 3.1 (not FIPS 205) signature (suite 1), does
    /// not verify.
    BadSlhDsaSignature,
    /// The inclusion proof does not lead from the result to the batch root.
    ProofMismatch,
    /// A batch must hold at least one result.
    EmptyBatch,
    /// The operating system's random number generator failed.
    Random(String),
    /// Reading or writing a file failed.
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn malformed(item: &'static str, problem: impl Into<String>) -> Self {
        Error::Malformed {
            item,
            problem: problem.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Malformed { item, problem } => write!(f, "malformed {item}: {problem}"),
            Error::WrongResult => f.write_str("result does not match the attested result"),
            Error::WrongComputation => f.write_str(
                "program, key set, input or output ciphertexts do not match the attested computation",
            ),
            Error::WrongRoute => f.write_str("route does not match the attested route"),
            Error::WrongContext => f.write_str("context does not match the attested context"),
            Error::WrongIdentity => f.write_str("record was signed by another identity"),
            Error::WrongKind { expected, found } => {
                write!(
                    f,
                    "expected a {expected:?} record (version {}), found a {found:?} record (version {})",
                    expected.version(),
                    found.version()
                )
            }
            Error::SuiteMismatch => {
                f.write_str("receipt, bundle and public identity do not name the same suite")
            },
            Error::VersionMismatch => {
                f.write_str("receipt and bundle do not name the same record version")
            }
            Error::WrongIndex { expected, found } => write!(
                f,
                "inclusion proof is for result #{found} of the batch, not #{expected}"
            ),
            Error::InsecureKeyFile { path, mode } => write!(
                f,
                "{p}: secret identity file is accessible by group or others (mode {mode:03o}); \
                 run `chmod 600 {p}`, or pass --allow-insecure-key-file to use it anyway",
                p = path.display()
            ),
            Error::CommitmentMismatch => f.write_str(
                "receipt commitment or timestamp does not match the recomputed commitment",
            ),
            Error::BundleDigestMismatch => {
                f.write_str("signature bundle does not match the receipt's bundle digest")
            }
            Error::BadMlDsaSignature => f.write_str("ML-DSA-65 signature does not verify"),
            Error::BadFalconSignature => f.write_str("Falcon-512 signature does not verify"),
            Error::BadSlhDsaSignature => {
                f.write_str("third signature (SLH-DSA in suite 2, SPHINCS+ round 3.1 (not FIPS 205) in suite 1) does not verify")
            }
            Error::ProofMismatch => f.write_str("inclusion proof does not lead to the batch root"),
            Error::EmptyBatch => f.write_str("a batch needs at least one result"),
            Error::Random(why) => write!(f, "OS random number generator failed: {why}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;
