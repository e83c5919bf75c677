//! `triskel.remote`: the client of `triskel serve`, which is the Rust
//! client (`triskel_serve::remote`) behind the GIL-free calls.

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use triskel_serve::remote::{self, JobStatus, Remote, RemoteError as Failure};

use crate::program::PyProgram;
use crate::split::{
    PyClient, PyEncryptedInputs, PyEncryptedOutputs, PyEvaluationKeys, PyPublicIdentity,
};
use crate::{err, RefusedError, RemoteError};

/// The Python exception of a failed call: the server's errors and transport
/// failures as `RemoteError` (with `status` and `code`, None for transport),
/// library errors as their own classes, the client's refusals as
/// `RefusedError`.
fn remote_err(py: Python<'_>, e: Failure) -> PyErr {
    let msg = e.to_string();
    let (status, code) = match e {
        Failure::Api { status, code, .. } => (Some(status), Some(code)),
        Failure::Transport(_) => (None, None),
        Failure::Triskel(e) => return err(e),
        Failure::Refused(_) => return RefusedError::new_err(msg),
    };
    let e = RemoteError::new_err(msg);
    // Setting attributes on a fresh exception instance cannot fail.
    let _ = e.value(py).setattr("status", status);
    let _ = e.value(py).setattr("code", code);
    e
}

/// A job's state as a dict: id, state, error, key_set, runs, created_ms,
/// started_ms, finished_ms.
fn job_dict<'py>(py: Python<'py>, job: &JobStatus) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &job.id)?;
    d.set_item("state", &job.state)?;
    d.set_item("error", &job.error)?;
    d.set_item("key_set", &job.key_set)?;
    d.set_item("runs", job.runs)?;
    d.set_item("created_ms", job.created_ms)?;
    d.set_item("started_ms", job.started_ms)?;
    d.set_item("finished_ms", job.finished_ms)?;
    Ok(d)
}

/// A client of one `triskel serve` server as one tenant.
#[pyclass(name = "Remote", module = "triskel.remote", frozen)]
pub struct PyRemote(Remote);

#[pymethods]
impl PyRemote {
    /// A client of the server at `url` (`http://host:port`) with the
    /// tenant's bearer `token`.
    #[new]
    #[pyo3(signature = (url, token = None))]
    fn new(py: Python<'_>, url: &str, token: Option<String>) -> PyResult<Self> {
        Remote::new(url, token)
            .map(PyRemote)
            .map_err(|e| remote_err(py, e))
    }

    /// The server's public attestation identity. Compare it with a copy
    /// obtained out of band before trusting its records.
    fn identity(&self, py: Python<'_>) -> PyResult<PyPublicIdentity> {
        py.detach(|| self.0.identity())
            .map(PyPublicIdentity)
            .map_err(|e| remote_err(py, e))
    }

    /// Uploads an evaluation-key bundle; returns its key-set id (hex).
    fn put_keys(&self, py: Python<'_>, keys: &PyEvaluationKeys) -> PyResult<String> {
        py.detach(|| self.0.put_keys(&keys.0.to_bytes()))
            .map_err(|e| remote_err(py, e))
    }

    /// Removes a key set of this tenant.
    fn delete_keys(&self, py: Python<'_>, key_set: &str) -> PyResult<()> {
        py.detach(|| self.0.delete_keys(key_set))
            .map_err(|e| remote_err(py, e))
    }

    /// Submits `program` on `inputs`, which must be encrypted under
    /// `key_set` (an id `put_keys` returned); a retry with the same
    /// `idempotency_key` returns the same job. Returns the job's state.
    #[pyo3(signature = (program, key_set, inputs, idempotency_key = None))]
    fn submit<'py>(
        &self,
        py: Python<'py>,
        program: &PyProgram,
        key_set: &str,
        inputs: &PyEncryptedInputs,
        idempotency_key: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let theirs = triskel::attest::hex(inputs.0.key_set());
        if !theirs.eq_ignore_ascii_case(key_set) {
            return Err(err(triskel::Error::Input(format!(
                "the inputs are encrypted under key set {theirs}, not {key_set}"
            ))));
        }
        let job = py
            .detach(|| self.0.submit(&program.0, &inputs.0, idempotency_key))
            .map_err(|e| remote_err(py, e))?;
        job_dict(py, &job)
    }

    /// The state of a job.
    fn job<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Bound<'py, PyDict>> {
        let job = py
            .detach(|| self.0.job(id))
            .map_err(|e| remote_err(py, e))?;
        job_dict(py, &job)
    }

    /// Polls a job until it is done, failed or cancelled; RefusedError
    /// when it is not after `timeout` seconds.
    fn wait<'py>(&self, py: Python<'py>, id: &str, timeout: f64) -> PyResult<Bound<'py, PyDict>> {
        let timeout = Duration::try_from_secs_f64(timeout).map_err(|_| {
            err(triskel::Error::Input(format!(
                "timeout {timeout}: a number of seconds >= 0 is expected"
            )))
        })?;
        let job = py
            .detach(|| self.0.wait(id, timeout))
            .map_err(|e| remote_err(py, e))?;
        job_dict(py, &job)
    }

    /// The encrypted outputs of a done job, with the server's records.
    /// Check them with `verify` (or `Client.decrypt`, which verifies).
    fn outputs(&self, py: Python<'_>, id: &str) -> PyResult<PyEncryptedOutputs> {
        py.detach(|| self.0.outputs(id))
            .map(PyEncryptedOutputs)
            .map_err(|e| remote_err(py, e))
    }

    /// Cancels a queued or running job; deletes a finished one and its
    /// outputs.
    fn cancel(&self, py: Python<'_>, id: &str) -> PyResult<()> {
        py.detach(|| self.0.cancel(id))
            .map_err(|e| remote_err(py, e))
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// Checks `outputs` against what `client` knows: its key set and program,
/// the inputs `sent` (their digests and context) and every record under
/// `server_public`. Raises AttestError when anything differs.
#[pyfunction]
#[pyo3(name = "_remote_verify")]
fn verify(
    py: Python<'_>,
    client: &Bound<'_, PyClient>,
    sent: &PyEncryptedInputs,
    outputs: &PyEncryptedOutputs,
    server_public: &PyPublicIdentity,
) -> PyResult<()> {
    let client = client.borrow();
    let inner = &client.0;
    py.detach(|| remote::verify(inner, &sent.0, &outputs.0, &server_public.0))
        .map_err(|e| match e {
            Failure::Refused(m) => crate::AttestError::new_err(m),
            e => remote_err(py, e),
        })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRemote>()?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    Ok(())
}
