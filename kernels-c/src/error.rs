use std::fmt;

/// Everything that can go wrong when building or using kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The modulus is not prime.
    NotPrime(u64),
    /// The modulus is outside what the library (or the chosen backend) accepts.
    ModulusOutOfRange {
        /// The modulus given.
        q: u64,
        /// The exclusive bit limit: q must be below 2^max_bits.
        max_bits: u32,
    },
    /// 2n does not divide q - 1, so no negacyclic NTT of size n exists mod q.
    NotNttFriendly {
        /// The modulus given.
        q: u64,
        /// The transform size.
        n: usize,
    },
    /// The NTT size is not a power of two in [2^10, 2^17].
    InvalidSize(usize),
    /// A slice has the wrong length.
    LengthMismatch {
        /// The length required.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A scalar operand is not reduced modulo q.
    ScalarOutOfRange {
        /// The scalar given.
        value: u64,
        /// The modulus.
        q: u64,
    },
    /// `TRISKEL_KERNELS` or a caller named a backend that does not exist.
    UnknownBackend(String),
    /// The backend exists but cannot run here.
    BackendUnavailable {
        /// The backend's name.
        backend: &'static str,
        /// Why: not compiled for this target, or the CPU lacks a feature.
        reason: String,
    },
    /// Fewer NTT-friendly primes of that size exist than were asked for.
    NotEnoughPrimes {
        /// Bit size asked for.
        bits: u32,
        /// Transform size.
        n: usize,
        /// How many were asked for.
        count: usize,
    },
    /// The C side could not allocate a plan.
    OutOfMemory,
    /// An argument of a key-switching kernel is invalid (what is wrong is said).
    InvalidArgument(String),
}

/// Result of kernel operations.
pub type Result<T> = std::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotPrime(q) => write!(f, "modulus {q} is not prime"),
            Error::ModulusOutOfRange { q, max_bits } => {
                write!(f, "modulus {q} is not in [2, 2^{max_bits})")
            }
            Error::NotNttFriendly { q, n } => write!(
                f,
                "modulus {q} does not support a negacyclic NTT of size {n}: 2n must divide q - 1"
            ),
            Error::InvalidSize(n) => write!(
                f,
                "NTT size {n} is not a power of two between {} and {}",
                crate::MIN_NTT_SIZE,
                crate::MAX_NTT_SIZE
            ),
            Error::LengthMismatch { expected, got } => {
                write!(f, "slice length {got} does not match the expected {expected}")
            }
            Error::ScalarOutOfRange { value, q } => {
                write!(f, "scalar {value} is not reduced modulo {q}")
            }
            Error::UnknownBackend(name) => write!(
                f,
                "unknown kernel backend {name:?} (expected one of: portable, avx2, avx512, avx512ifma, aarch64, sve, neon)"
            ),
            Error::BackendUnavailable { backend, reason } => {
                write!(f, "kernel backend {backend} cannot run here: {reason}")
            }
            Error::NotEnoughPrimes { bits, n, count } => {
                write!(
                    f,
                    "fewer than {count} primes of {bits} bits are congruent to 1 modulo 2*{n}"
                )?;
                // ntt_primes needs 2^bits > 4n, and bits <= MAX_MODULUS_BITS.
                let least = n.trailing_zeros() + 3;
                if n.is_power_of_two() && (*bits < least || *bits > crate::MAX_MODULUS_BITS) {
                    let most = crate::MAX_MODULUS_BITS;
                    write!(f, " (NTT primes for n = {n} have {least} to {most} bits)")?;
                }
                Ok(())
            }
            Error::OutOfMemory => write!(f, "out of memory while building an NTT plan"),
            Error::InvalidArgument(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {}
