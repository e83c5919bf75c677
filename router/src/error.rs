//! The router's errors: each says which operation or input was wrong.

use std::fmt;

/// Errors of programs, plans and runs.
///
/// # Examples
///
/// ```
/// use triskel::{plan, CostModel, Error, Kind, Program};
///
/// // Reals in a BFV operation are refused as the operation is recorded...
/// let mut p = Program::new();
/// let r = p.input("r", Kind::Real { len: 4 })?;
/// let x = p.input("x", Kind::Signed { len: 4, bound: 10 })?;
/// assert!(matches!(p.add(r, x), Err(Error::Program { op, .. }) if op == "add"));
///
/// // ...and a modulus no BFV set batches is refused by the planner.
/// let mut p = Program::new();
/// let m = p.input("m", Kind::Modular { len: 4, modulus: 15 })?;
/// p.output("m", m)?;
/// let err = plan(&p, &CostModel::builtin()).unwrap_err();
/// assert!(matches!(err, Error::Refused { .. }), "{err}");
/// # Ok::<(), triskel::Error>(())
/// ```
#[derive(Debug)]
pub enum Error {
    /// An operation was recorded with operands it cannot take.
    Program { op: String, msg: String },
    /// The planner refused the program before any work.
    Refused { op: String, msg: String },
    /// A feature the plan needs is not built.
    Unsupported(String),
    /// Threshold keys ([`crate::PlanOptions::threshold`]) for a plan that
    /// needs a piece no collective protocol makes: `piece` names it (TFHE
    /// keys, a transition key, a key-holder round trip, an output released
    /// as extracted coefficients).
    NotCollective { piece: String },
    /// Run-time inputs did not match the program.
    Input(String),
    /// Bytes that do not load (a program, keys, ciphertexts, a client's
    /// state): the message names the format and the fault.
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
    /// The run was cancelled by its caller
    /// ([`Server::run_cancellable`](crate::Server::run_cancellable)).
    Cancelled,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Program { op, msg } => write!(f, "{op}: {msg}"),
            Error::Refused { op, msg } => write!(f, "refused at {op}: {msg}"),
            Error::Unsupported(msg) => write!(f, "unsupported: {msg}"),
            Error::NotCollective { piece } => write!(
                f,
                "threshold keys: the plan needs {piece}, which no collective protocol makes"
            ),
            Error::Input(msg) => write!(f, "inputs: {msg}"),
            Error::Format(msg) => write!(f, "malformed bytes: {msg}"),
            Error::Cache(msg) => write!(f, "cost model: {msg}"),
            Error::Bfv(e) => write!(f, "engine: bfv: {e}"),
            Error::Ckks(e) => write!(f, "engine: ckks: {e}"),
            Error::Tfhe(e) => write!(f, "engine: tfhe: {e}"),
            Error::Ring(e) => write!(f, "engine: ring: {e}"),
            Error::Kernel(e) => write!(f, "engine: kernels: {e}"),
            Error::Attest(e) => write!(f, "engine: attest: {e}"),
            Error::Transition(e) => write!(f, "engine: transition: {e}"),
            Error::Internal(msg) => write!(f, "internal: {msg}"),
            Error::Cancelled => write!(f, "cancelled"),
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
///
/// # Examples
///
/// ```
/// use triskel::{Kind, Program, Value};
///
/// fn doubled(p: &mut Program) -> triskel::Result<Value> {
///     let x = p.input("x", Kind::Real { len: 2 })?;
///     p.add(x, x)
/// }
/// let mut p = Program::new();
/// assert_eq!(doubled(&mut p)?.index(), 1);
/// // A second input named "x" is refused.
/// assert!(matches!(doubled(&mut p), Err(triskel::Error::Program { .. })));
/// # Ok::<(), triskel::Error>(())
/// ```
pub type Result<T> = std::result::Result<T, Error>;
