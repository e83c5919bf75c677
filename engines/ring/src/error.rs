//! The error type of the ring layer.

use std::fmt;

use crate::poly::Representation;

/// Everything that can go wrong in the ring layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An error from the kernel layer (invalid modulus, size, length...).
    Kernel(triskel_kernels::Error),
    /// Operands live in different RNS bases (different primes or ring degree).
    BasisMismatch,
    /// An operation got a polynomial in the wrong representation.
    RepresentationMismatch {
        /// The representation required.
        expected: Representation,
        /// The representation given.
        got: Representation,
    },
    /// A parameter is invalid; the message says which and why.
    InvalidParameter(String),
    /// Bytes given to a loader are malformed; the message says where.
    Malformed(String),
    /// Serialized data uses a format version this build cannot read.
    UnsupportedVersion(u8),
    /// The operating system's random source failed.
    Randomness(String),
}

/// Result of ring operations.
pub type Result<T> = std::result::Result<T, Error>;

impl From<triskel_kernels::Error> for Error {
    fn from(e: triskel_kernels::Error) -> Self {
        Error::Kernel(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Kernel(e) => write!(f, "kernel error: {e}"),
            Error::BasisMismatch => write!(f, "operands belong to different RNS bases"),
            Error::RepresentationMismatch { expected, got } => {
                write!(
                    f,
                    "polynomial is in {got:?} form, {expected:?} form required"
                )
            }
            Error::InvalidParameter(m) => write!(f, "invalid parameter: {m}"),
            Error::Malformed(m) => write!(f, "malformed serialized data: {m}"),
            Error::UnsupportedVersion(v) => write!(f, "unsupported serialization version {v}"),
            Error::Randomness(m) => write!(f, "random source failed: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand for an [`Error::InvalidParameter`].
pub(crate) fn invalid<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::InvalidParameter(msg.into()))
}
