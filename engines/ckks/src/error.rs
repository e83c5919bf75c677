//! The error type of the CKKS engine.

use std::fmt;

/// Everything that can go wrong in the CKKS engine.
#[derive(Debug, Clone, PartialEq)]
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
        /// log2(QP) of the set (from the prime sizes).
        log_qp: u32,
        /// The 128-bit limit for n (0 when n is not tabulated).
        max_log_qp: u32,
    },
    /// Operands were made under different parameter sets.
    ParameterMismatch,
    /// Operands are at levels that cannot be matched (the message says why).
    LevelMismatch {
        /// Level of the first operand.
        left: usize,
        /// Level of the second operand.
        right: usize,
    },
    /// Operands have different scales at the same level: adding them would
    /// return garbage, and matching them would need a level neither has.
    ScaleMismatch {
        /// log2 of the first operand's scale.
        left_log2: f64,
        /// log2 of the second operand's scale.
        right_log2: f64,
    },
    /// The result's scale would leave no room for the message in Q_l.
    ScaleOverflow {
        /// log2 of the scale the operation would produce.
        scale_log2: f64,
        /// log2 of the largest scale the level allows.
        max_log2: f64,
    },
    /// An operation needs a key that was not generated or given.
    MissingKey(String),
    /// Values do not fit the encoding (too many, not finite, too large).
    Encoding(String),
    /// The ciphertext has the wrong number of components for the operation.
    CiphertextSize {
        /// Components required.
        expected: usize,
        /// Components given.
        got: usize,
    },
    /// The ciphertext is already at the lowest level: nothing left to rescale by.
    LowestLevel,
    /// An evaluation needs more levels than the ciphertext has left.
    NotEnoughLevels {
        /// Levels the evaluation consumes.
        needed: usize,
        /// Levels the ciphertext has left (its level).
        left: usize,
    },
    /// The result's estimated error would reach its scale: no precision left.
    NoiseExhausted {
        /// log2 of the estimated error bound (scaled units).
        noise_log2: f64,
        /// log2 of the result's scale.
        scale_log2: f64,
    },
    /// The message bound plus the error bound would reach Q_l / 2: the
    /// decrypted values would wrap around the modulus.
    MessageOverflow {
        /// log2 of message bound + error bound (scaled units).
        needed_log2: f64,
        /// log2 of the level's modulus Q_l.
        q_log2: f64,
    },
    /// Flooded decryptions under this key would exceed alpha, the number
    /// its floods are proven for (the least `Flooding::decryptions` of its
    /// floods and of the one asked): nothing was decrypted.
    FloodingExhausted {
        /// Flooded decryptions the key has made.
        done: u64,
        /// Flooded decryptions asked now.
        asked: u64,
        /// The alpha that bounds the total.
        alpha: u64,
    },
    /// Serialized bytes are malformed; the message says where.
    Malformed(String),
}

/// Result of CKKS operations.
pub type Result<T> = std::result::Result<T, Error>;

triskel_ring::impl_from_ring_error!(Error);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Ring(e) => write!(f, "ring layer: {e}"),
            Error::Kernel(e) => write!(f, "kernels: {e}"),
            Error::InvalidParameters(m) => write!(f, "invalid CKKS parameters: {m}"),
            &Error::Insecure { n, log_qp, max_log_qp } => triskel_ring::Error::Insecure {
                n,
                log_qp,
                max_log_qp,
            }
            .fmt(f),
            Error::ParameterMismatch => {
                write!(f, "operands belong to different CKKS parameter sets")
            }
            Error::LevelMismatch { left, right } => write!(
                f,
                "operands are at levels {left} and {right}, which cannot be matched"
            ),
            Error::ScaleMismatch { left_log2, right_log2 } => write!(
                f,
                "operands have scales 2^{left_log2:.6} and 2^{right_log2:.6} at the same level; \
                 rescale or adjust one first"
            ),
            Error::ScaleOverflow { scale_log2, max_log2 } => write!(
                f,
                "the result's scale 2^{scale_log2:.2} exceeds the level's limit 2^{max_log2:.2}; rescale first"
            ),
            Error::MissingKey(k) => write!(f, "missing key: {k}"),
            Error::Encoding(m) => write!(f, "encoding: {m}"),
            Error::CiphertextSize { expected, got } => {
                write!(f, "ciphertext has {got} components, {expected} expected")
            }
            Error::LowestLevel => write!(f, "the ciphertext is already at the lowest level"),
            Error::NotEnoughLevels { needed, left } => write!(
                f,
                "the evaluation needs {needed} levels and the ciphertext has {left} left: \
                 use a deeper parameter set or a lower degree"
            ),
            Error::NoiseExhausted { noise_log2, scale_log2 } => write!(
                f,
                "the estimated error 2^{noise_log2:.1} would reach the scale 2^{scale_log2:.1}: \
                 no precision left"
            ),
            Error::MessageOverflow { needed_log2, q_log2 } => write!(
                f,
                "message and error bounds 2^{needed_log2:.1} would reach Q/2 = 2^{:.1}: \
                 decryption would wrap (declare a smaller bound or use a larger modulus)",
                q_log2 - 1.0
            ),
            Error::FloodingExhausted { done, asked, alpha } => write!(
                f,
                "this secret key has made {done} flooded decryption(s): {asked} more would exceed \
                 alpha = {alpha}, the number its noise flooding is proven for (use a new key pair)"
            ),
            Error::Malformed(m) => write!(f, "malformed CKKS data: {m}"),
        }
    }
}

impl std::error::Error for Error {}
