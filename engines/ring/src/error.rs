//! The error type of the ring layer.

use std::fmt;

use crate::key_id::KeyId;
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
    /// A parameter set is below 128-bit security and was not explicitly allowed.
    Insecure {
        /// Ring degree.
        n: usize,
        /// log2(QP) of the set (the sum of its prime sizes).
        log_qp: u32,
        /// The 128-bit limit for n (0 when n is not tabulated).
        max_log_qp: u32,
    },
    /// A key or ciphertext belongs to another secret key than the one the
    /// operation uses (see [`KeyId`]).
    KeyMismatch {
        /// What carried the other identity (a ciphertext, a key...).
        what: String,
        /// The identity the operation's key has.
        expected: KeyId,
        /// The identity `what` carries.
        found: KeyId,
    },
    /// Another flooded release would take the count of a secret (or of a
    /// party's share of it) above alpha, the number its flooding is proven
    /// for ([`crate::FloodLedger`]): nothing was released.
    FloodingExhausted {
        /// Flooded releases made.
        done: u64,
        /// The least alpha of the floods made and of the one asked.
        alpha: u64,
    },
    /// Operands (keys, ciphertexts, bytes) were made under another
    /// parameter set than the context's.
    ParameterMismatch,
    /// A ciphertext has another number of components than the operation
    /// takes.
    CiphertextSize {
        /// Components required.
        expected: usize,
        /// Components given.
        got: usize,
    },
    /// A threshold protocol step got shares or parties that do not fit it
    /// (another session, key, ciphertext, protocol or party; a duplicate or
    /// missing party; a threshold above the number of parties); the message
    /// says which.
    Protocol(String),
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
            Error::Insecure { n, log_qp, max_log_qp } => write!(
                f,
                "parameters are below 128-bit security: log2(QP) = {log_qp} exceeds {max_log_qp} \
                 for n = {n} (ePrint 2024/463 128-bit table); call allow_insecure() to use them anyway"
            ),
            Error::KeyMismatch { what, expected, found } => write!(
                f,
                "{what} belongs to secret key {found}, not to key {expected} used here"
            ),
            Error::FloodingExhausted { done, alpha } => write!(
                f,
                "{done} flooded release(s) made: one more would exceed alpha = {alpha}, the \
                 number the flooding is proven for"
            ),
            Error::ParameterMismatch => write!(f, "operands belong to different parameter sets"),
            Error::Protocol(m) => write!(f, "threshold protocol: {m}"),
            Error::CiphertextSize { expected, got } => {
                write!(f, "ciphertext has {got} components, {expected} required")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand for an [`Error::InvalidParameter`].
pub(crate) fn invalid<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::InvalidParameter(msg.into()))
}

/// Shorthand for an [`Error::Protocol`].
pub(crate) fn protocol<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Protocol(msg.into()))
}

/// Implements `From<triskel_ring::Error>` and `From<triskel_kernels::Error>`
/// for an RLWE engine's error enum, which has the variants `Ring`, `Kernel`,
/// `Malformed(String)`, `InvalidParameters(String)`, `ParameterMismatch`
/// `Insecure { n, log_qp, max_log_qp }` and `CiphertextSize { expected, got }`:
/// bad bytes, bad parameters, mismatched sets, insecure sets and
/// ciphertexts of the wrong size keep their meaning across the layer
/// boundary; other ring errors are wrapped as `Ring`, kernel errors as
/// `Kernel`. [`rlwe_error!`](crate::rlwe_error) defines such an enum.
#[macro_export]
macro_rules! impl_from_ring_error {
    ($engine_error:ty) => {
        impl From<$crate::Error> for $engine_error {
            fn from(e: $crate::Error) -> Self {
                match e {
                    $crate::Error::Malformed(m) => Self::Malformed(m),
                    $crate::Error::UnsupportedVersion(v) => {
                        Self::Malformed(format!("unsupported format version {v}"))
                    }
                    $crate::Error::InvalidParameter(m) => Self::InvalidParameters(m),
                    $crate::Error::ParameterMismatch => Self::ParameterMismatch,
                    $crate::Error::CiphertextSize { expected, got } => {
                        Self::CiphertextSize { expected, got }
                    }
                    $crate::Error::Insecure {
                        n,
                        log_qp,
                        max_log_qp,
                    } => Self::Insecure {
                        n,
                        log_qp,
                        max_log_qp,
                    },
                    other => Self::Ring(other),
                }
            }
        }

        impl From<$crate::KernelError> for $engine_error {
            fn from(e: $crate::KernelError) -> Self {
                Self::Kernel(e)
            }
        }
    };
}

/// Defines an RLWE scheme's error enum: the variants every RLWE scheme has
/// (below), then the scheme's own, each with its message; `Display`,
/// `std::error::Error` and the conversions of
/// [`impl_from_ring_error!`](crate::impl_from_ring_error).
///
/// The shared variants: `Ring(triskel_ring::Error)`, `Kernel`,
/// `InvalidParameters(String)`, `Insecure { n, log_qp, max_log_qp }`,
/// `ParameterMismatch`, `MissingKey(String)`, `Encoding(String)`,
/// `CiphertextSize { expected, got }`, `LowestLevel` and
/// `Malformed(String)`; messages name the scheme where it matters.
///
/// ```
/// triskel_ring::rlwe_error! {
///     /// The errors of a toy scheme.
///     #[derive(Debug, Clone, PartialEq, Eq)]
///     pub enum Error for "toy" {
///         /// Too deep.
///         TooDeep { depth: usize } => ("depth {depth} is too deep"),
///     }
/// }
/// assert_eq!(Error::TooDeep { depth: 3 }.to_string(), "depth 3 is too deep");
/// assert_eq!(
///     Error::from(triskel_ring::Error::ParameterMismatch).to_string(),
///     "operands belong to different toy parameter sets"
/// );
/// ```
#[macro_export]
macro_rules! rlwe_error {
    (
        $(#[$attr:meta])*
        pub enum $name:ident for $scheme:literal {
            $(
                $(#[$vattr:meta])*
                $variant:ident { $($(#[$fattr:meta])* $field:ident : $fty:ty),* $(,)? } => ($($msg:tt)*)
            ),* $(,)?
        }
    ) => {
        $(#[$attr])*
        pub enum $name {
            /// An error from the ring layer (basis or representation mismatch, ...).
            Ring($crate::Error),
            /// An error from the kernel layer (modulus, sizes).
            Kernel($crate::KernelError),
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
            /// Operands were made under different parameter sets or contexts.
            ParameterMismatch,
            /// An operation needs a key that was not generated or given.
            MissingKey(String),
            /// Values do not fit the encoding; the message says why.
            Encoding(String),
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
            $(
                $(#[$vattr])*
                $variant { $($(#[$fattr])* $field: $fty),* },
            )*
        }

        $crate::impl_from_ring_error!($name);

        impl $name {
            /// `Err(Malformed(msg))`.
            pub(crate) fn malformed<T>(msg: impl Into<String>) -> ::std::result::Result<T, Self> {
                Err(Self::Malformed(msg.into()))
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self {
                    Self::Ring(e) => write!(f, "ring layer: {e}"),
                    Self::Kernel(e) => write!(f, "kernels: {e}"),
                    Self::InvalidParameters(m) => {
                        write!(f, concat!("invalid ", $scheme, " parameters: {}"), m)
                    }
                    &Self::Insecure { n, log_qp, max_log_qp } => ::std::fmt::Display::fmt(
                        &$crate::Error::Insecure { n, log_qp, max_log_qp },
                        f,
                    ),
                    Self::ParameterMismatch => write!(
                        f,
                        concat!("operands belong to different ", $scheme, " parameter sets")
                    ),
                    Self::MissingKey(k) => write!(f, "missing key: {k}"),
                    Self::Encoding(m) => write!(f, "encoding: {m}"),
                    Self::CiphertextSize { expected, got } => {
                        write!(f, "ciphertext has {got} components, {expected} expected")
                    }
                    Self::LowestLevel => write!(f, "the ciphertext is already at the lowest level"),
                    Self::Malformed(m) => write!(f, concat!("malformed ", $scheme, " data: {}"), m),
                    $(
                        Self::$variant { $($field),* } => write!(f, $($msg)*),
                    )*
                }
            }
        }

        impl ::std::error::Error for $name {}
    };
}
