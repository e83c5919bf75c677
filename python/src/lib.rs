//! The `triskel` Python module (`triskel._triskel`, re-exported by the
//! `triskel` package): programs, the client and the server, one-process runs,
//! and the exceptions that carry the library's errors.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use triskel::attest;

mod program;
mod remote;
mod split;
mod values;

create_exception!(
    triskel,
    Error,
    PyException,
    "Every error of triskel; the message is the library's."
);
create_exception!(
    triskel,
    ProgramError,
    Error,
    "An operation recorded with operands it cannot take (the message names the operation)."
);
create_exception!(
    triskel,
    RefusedError,
    Error,
    "Work refused before any of it ran: by the planner, or by a client or server checking what it was sent."
);
create_exception!(
    triskel,
    UnsupportedError,
    Error,
    "A feature the plan needs is not built."
);
create_exception!(
    triskel,
    InputError,
    Error,
    "Inputs that do not match the program (names, kinds, shapes, dtypes, ranges), or a file that does not read."
);
create_exception!(
    triskel,
    FormatError,
    Error,
    "Bytes that do not load: truncated, damaged, or of another type."
);
create_exception!(
    triskel,
    AttestError,
    Error,
    "A record that does not verify, or an identity that does not load or is not stored safely."
);
create_exception!(
    triskel,
    EngineError,
    Error,
    "An engine's error (BFV, CKKS, TFHE, ring, kernels, transitions) or the cost model's."
);
create_exception!(
    triskel,
    RemoteError,
    Error,
    "A call to a `triskel serve` server that failed: the server's answer (`status`, `code`) or the transport (both None)."
);
create_exception!(
    triskel,
    InternalError,
    Error,
    "A failure inside triskel itself."
);

/// The Python exception of a library error, with the library's message.
pub(crate) fn err(e: triskel::Error) -> PyErr {
    use triskel::Error as E;
    let msg = e.to_string();
    match e {
        E::Program { .. } => ProgramError::new_err(msg),
        E::Refused { .. } => RefusedError::new_err(msg),
        E::Unsupported(_) => UnsupportedError::new_err(msg),
        E::Input(_) => InputError::new_err(msg),
        E::Format(_) | E::Attest(attest::Error::Malformed { .. }) => FormatError::new_err(msg),
        E::Attest(_) => AttestError::new_err(msg),
        E::Internal(_) => InternalError::new_err(msg),
        _ => EngineError::new_err(msg),
    }
}

/// The Python exception of an attestation error.
pub(crate) fn attest_err(e: attest::Error) -> PyErr {
    err(triskel::Error::Attest(e))
}

#[pymodule]
fn _triskel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    for (name, class) in [
        ("Error", py.get_type::<Error>()),
        ("ProgramError", py.get_type::<ProgramError>()),
        ("RefusedError", py.get_type::<RefusedError>()),
        ("UnsupportedError", py.get_type::<UnsupportedError>()),
        ("InputError", py.get_type::<InputError>()),
        ("FormatError", py.get_type::<FormatError>()),
        ("AttestError", py.get_type::<AttestError>()),
        ("EngineError", py.get_type::<EngineError>()),
        ("InternalError", py.get_type::<InternalError>()),
        ("RemoteError", py.get_type::<RemoteError>()),
    ] {
        m.add(name, class)?;
    }
    program::register(m)?;
    split::register(m)?;
    remote::register(m)?;
    Ok(())
}
