//! The error type of the BFV engine.

use std::fmt;

/// Everything that can go wrong in the BFV engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An error from the ring layer (basis or representation mismatch, ...).
    Ring(triskel_ring::Error),
    /// An error from the kernel layer (modulus, sizes).
    Kernel(triskel_kernels::Error),
    /// The parameter set is invalid; the message says which field and why.
    InvalidParameters(String),
    /// The parameter set is below 128-bit security and was not explicitly allowed.
    Insecure {
        /// Ring degree.
        n: usize,
        /// Upper bound on log2(QP) of the set.
        log_qp: u32,
        /// The 128-bit limit for n (0 when n is not tabulated).
        max_log_qp: u32,
    },
    /// Operands were made under different parameter sets or contexts.
    ParameterMismatch,
    /// Operands are at different levels (numbers of ciphertext primes).
    LevelMismatch {
        /// Level of the first operand.
        left: usize,
        /// Level of the second operand.
        right: usize,
    },
    /// An operation needs a key that was not generated or given.
    MissingKey(String),
    /// A plaintext value or slot count does not fit the encoding.
    Encoding(String),
    /// The ciphertext's estimated noise would exceed what decryption tolerates.
    NoiseBudgetExhausted {
        /// The operation that was refused.
        operation: &'static str,
    },
    /// The ciphertext has the wrong number of components for the operation.
    CiphertextSize {
        /// Components required.
        expected: usize,
        /// Components given.
        got: usize,
    },
    /// The ciphertext is already at the lowest level.
    LowestLevel,
    /// Serialized bytes are malformed; the message says where.
    Malformed(String),
}

/// Result of BFV operations.
pub type Result<T> = std::result::Result<T, Error>;

triskel_ring::impl_from_ring_error!(Error);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Ring(e) => write!(f, "ring layer: {e}"),
            Error::Kernel(e) => write!(f, "kernels: {e}"),
            Error::InvalidParameters(m) => write!(f, "invalid BFV parameters: {m}"),
            &Error::Insecure { n, log_qp, max_log_qp } => triskel_ring::Error::Insecure {
                n,
                log_qp,
                max_log_qp,
            }
            .fmt(f),
            Error::ParameterMismatch => write!(f, "operands belong to different BFV parameter sets"),
            Error::LevelMismatch { left, right } => {
                write!(f, "operands are at different levels ({left} and {right}); mod-switch one first")
            }
            Error::MissingKey(k) => write!(f, "missing key: {k}"),
            Error::Encoding(m) => write!(f, "encoding: {m}"),
            Error::NoiseBudgetExhausted { operation } => write!(
                f,
                "{operation} would exhaust the noise budget: the result could not be decrypted correctly"
            ),
            Error::CiphertextSize { expected, got } => {
                write!(f, "ciphertext has {got} components, {expected} expected")
            }
            Error::LowestLevel => write!(f, "the ciphertext is already at the lowest level"),
            Error::Malformed(m) => write!(f, "malformed BFV data: {m}"),
        }
    }
}

impl std::error::Error for Error {}
