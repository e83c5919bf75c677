//! The error type of the TFHE engine.

use std::fmt;

/// Everything that can go wrong in the TFHE engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An error from the ring layer (LWE pieces, sampling, serialization).
    Ring(triskel_ring::Error),
    /// An error from the kernel layer (modulus, NTT plan, lengths).
    Kernel(triskel_kernels::Error),
    /// A parameter set fails a check (security, noise, shape); the message says which.
    InvalidParameters(String),
    /// Operands or keys belong to different parameter sets or dimensions.
    Mismatch(String),
    /// A value is outside the message space (plaintext, LUT output, scalar).
    OutOfRange(String),
    /// The operation would exceed the noise or carry budget of a ciphertext:
    /// bootstrap (clean the carries) first.
    Budget(String),
    /// Bytes given to a loader are malformed; the message says where.
    Malformed(String),
    /// Serialized data uses a format version this build cannot read.
    UnsupportedVersion(u8),
    /// A parameter set (named by loaded bytes or a caller) that was replaced
    /// because the current lattice estimate puts it below 128 bits: keys
    /// must be generated again for its replacement.
    Superseded {
        /// The superseded set's name.
        set: String,
        /// The named set that replaces it.
        replacement: &'static str,
    },
}

/// Result of TFHE operations.
pub type Result<T> = std::result::Result<T, Error>;

impl From<triskel_ring::Error> for Error {
    fn from(e: triskel_ring::Error) -> Self {
        match e {
            triskel_ring::Error::Malformed(m) => Error::Malformed(m),
            e => Error::Ring(e),
        }
    }
}

impl From<triskel_kernels::Error> for Error {
    fn from(e: triskel_kernels::Error) -> Self {
        Error::Kernel(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Ring(e) => write!(f, "ring error: {e}"),
            Error::Kernel(e) => write!(f, "kernel error: {e}"),
            Error::InvalidParameters(m) => write!(f, "invalid parameters: {m}"),
            Error::Mismatch(m) => write!(f, "mismatched operands: {m}"),
            Error::OutOfRange(m) => write!(f, "out of range: {m}"),
            Error::Budget(m) => write!(f, "noise or carry budget exceeded: {m}"),
            Error::Malformed(m) => write!(f, "malformed serialized data: {m}"),
            Error::UnsupportedVersion(v) => write!(f, "unsupported serialization version {v}"),
            Error::Superseded { set, replacement } => write!(
                f,
                "the parameter set {set} is superseded (about 125 bits by the current lattice \
                 estimate): generate keys of {replacement} and encrypt the values again"
            ),
        }
    }
}

impl std::error::Error for Error {}
