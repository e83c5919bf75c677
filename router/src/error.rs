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
    /// The cost-model cache.
    Cache(String),
    /// An engine or attestation error during a run.
    Engine(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Program { op, msg } => write!(f, "{op}: {msg}"),
            Error::Refused { op, msg } => write!(f, "refused at {op}: {msg}"),
            Error::Unsupported(msg) => write!(f, "unsupported: {msg}"),
            Error::Input(msg) => write!(f, "inputs: {msg}"),
            Error::Format(msg) => write!(f, "program bytes: {msg}"),
            Error::Cache(msg) => write!(f, "cost model cache: {msg}"),
            Error::Engine(msg) => write!(f, "engine: {msg}"),
        }
    }
}

impl std::error::Error for Error {}

macro_rules! from_engine {
    ($($t:ty => $name:literal),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error::Engine(format!("{}: {e}", $name))
            }
        }
    )*};
}

from_engine!(
    triskel_bfv::Error => "bfv",
    triskel_ckks::Error => "ckks",
    triskel_tfhe::Error => "tfhe",
    triskel_attest::Error => "attest",
    triskel_kernels::Error => "kernels",
    triskel_ring::Error => "ring"
);

impl From<crate::transition::Error> for Error {
    fn from(e: crate::transition::Error) -> Error {
        match e {
            crate::transition::Error::Unsupported { .. } => Error::Unsupported(e.to_string()),
            e => Error::Engine(format!("transition: {e}")),
        }
    }
}

/// Results of the router.
pub type Result<T> = std::result::Result<T, Error>;
