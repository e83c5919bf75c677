//! The router's errors: each says which operation or input was wrong.

use std::fmt;

/// Errors of programs, plans and runs.
#[derive(Debug)]
pub enum Error {
    /// An operation was recorded with operands it cannot take.
    Program { op: String, msg: String },
    /// The planner refused the program before any work.
    Refused { op: String, msg: String },
    /// A feature the plan needs is not built.
    Unsupported(String),
    /// Run-time inputs did not match the program.
    Input(String),
    /// Program bytes that do not load.
    Format(String),
    /// The cost model: its cache, or a primitive that failed while
    /// calibrating it.
    Cache(String),
    /// The BFV engine's error, kept matchable.
    Bfv(triskel_bfv::Error),
    /// The CKKS engine's error (an exhausted flooding budget, a scale
    /// overflow, ...), kept matchable.
    Ckks(triskel_ckks::Error),
    /// The TFHE engine's error, kept matchable.
    Tfhe(triskel_tfhe::Error),
    /// The ring layer's error.
    Ring(triskel_ring::Error),
    /// The kernel layer's error.
    Kernel(triskel_kernels::Error),
    /// An attestation error (signing, verifying, records).
    Attest(triskel_attest::Error),
    /// A BFV/CKKS -> TFHE transition's error, except an unsupported
    /// transition ([`Error::Unsupported`]).
    Transition(crate::transition::Error),
    /// A failure inside the router itself (a plan that does not match what
    /// runs it), with what went wrong.
    Internal(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Program { op, msg } => write!(f, "{op}: {msg}"),
            Error::Refused { op, msg } => write!(f, "refused at {op}: {msg}"),
            Error::Unsupported(msg) => write!(f, "unsupported: {msg}"),
            Error::Input(msg) => write!(f, "inputs: {msg}"),
            Error::Format(msg) => write!(f, "program bytes: {msg}"),
            Error::Cache(msg) => write!(f, "cost model: {msg}"),
            Error::Bfv(e) => write!(f, "engine: bfv: {e}"),
            Error::Ckks(e) => write!(f, "engine: ckks: {e}"),
            Error::Tfhe(e) => write!(f, "engine: tfhe: {e}"),
            Error::Ring(e) => write!(f, "engine: ring: {e}"),
            Error::Kernel(e) => write!(f, "engine: kernels: {e}"),
            Error::Attest(e) => write!(f, "engine: attest: {e}"),
            Error::Transition(e) => write!(f, "engine: transition: {e}"),
            Error::Internal(msg) => write!(f, "internal: {msg}"),
        }
    }
}

impl std::error::Error for Error {}

macro_rules! from_engine {
    ($($t:ty => $variant:ident),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error::$variant(e)
            }
        }
    )*};
}

from_engine!(
    triskel_bfv::Error => Bfv,
    triskel_ckks::Error => Ckks,
    triskel_tfhe::Error => Tfhe,
    triskel_attest::Error => Attest,
    triskel_kernels::Error => Kernel,
    triskel_ring::Error => Ring
);

impl From<crate::transition::Error> for Error {
    fn from(e: crate::transition::Error) -> Error {
        match e {
            crate::transition::Error::Unsupported { .. } => Error::Unsupported(e.to_string()),
            e => Error::Transition(e),
        }
    }
}

/// Results of the router.
pub type Result<T> = std::result::Result<T, Error>;
