//! The client and the server, and what passes between them: evaluation
//! keys, encrypted inputs and outputs, server identities.

use std::io::Write;
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use triskel::attest::{self, files, Identity, PublicIdentity};
use triskel::{Client, EncryptedInputs, EncryptedOutputs, EvaluationKeys, Server};

use crate::program::{plan_options, PyProgram};
use crate::{attest_err, err, values};

fn bytes<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, data)
}

/// The hex of a digest or key id.
fn hex(d: &[u8]) -> String {
    attest::hex(d)
}

/// The public material a server evaluates a program with, carrying the
/// plan choice it was made for.
#[pyclass(name = "EvaluationKeys", module = "triskel", frozen)]
pub struct PyEvaluationKeys(pub(crate) EvaluationKeys);

#[pymethods]
impl PyEvaluationKeys {
    /// The versioned bytes (seed-compressed), ending with the key-set id.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let data = py.detach(|| self.0.to_bytes());
        bytes(py, &data)
    }

    /// Loads `EvaluationKeys.to_bytes` output; every key is checked.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        py.detach(|| EvaluationKeys::from_bytes(data, data.len() as u64))
            .map(PyEvaluationKeys)
            .map_err(err)
    }

    /// The key-set id (hex).
    #[getter]
    fn key_set(&self) -> String {
        hex(&self.0.id())
    }

    /// The plan choice the keys were made for, in one line.
    #[getter]
    fn choice(&self) -> String {
        self.0.choice().describe()
    }

    fn __repr__(&self) -> String {
        format!("EvaluationKeys({})", self.key_set())
    }
}

/// Encrypted inputs, from `Client.encrypt`.
#[pyclass(name = "EncryptedInputs", module = "triskel", frozen)]
pub struct PyEncryptedInputs(pub(crate) EncryptedInputs);

#[pymethods]
impl PyEncryptedInputs {
    /// The versioned bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.0.to_bytes())
    }

    /// Loads `EncryptedInputs.to_bytes` output.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        EncryptedInputs::from_bytes(data, data.len() as u64)
            .map(PyEncryptedInputs)
            .map_err(err)
    }

    /// The key-set id (hex) they were encrypted under.
    #[getter]
    fn key_set(&self) -> String {
        hex(self.0.key_set())
    }

    /// The context the server's records bind.
    #[getter]
    fn context<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, self.0.context())
    }
}

/// Encrypted outputs with the server's signed records, from `Server.run`.
#[pyclass(name = "EncryptedOutputs", module = "triskel", frozen)]
pub struct PyEncryptedOutputs(pub(crate) EncryptedOutputs);

#[pymethods]
impl PyEncryptedOutputs {
    /// The versioned bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.0.to_bytes())
    }

    /// Loads `EncryptedOutputs.to_bytes` output.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        EncryptedOutputs::from_bytes(data, data.len() as u64)
            .map(PyEncryptedOutputs)
            .map_err(err)
    }

    /// True for the program's outputs; False for values the key holder must
    /// convert first (`Client.continue_round_trips`).
    #[getter]
    fn is_final(&self) -> bool {
        self.0.is_final()
    }

    /// The key-set id (hex) they were computed under.
    #[getter]
    fn key_set(&self) -> String {
        hex(self.0.key_set())
    }

    fn __len__(&self) -> usize {
        self.0.entries().len()
    }
}

/// The public part of a server identity: what clients verify records with.
#[pyclass(name = "PublicIdentity", module = "triskel", frozen)]
pub struct PyPublicIdentity(pub(crate) PublicIdentity);

#[pymethods]
impl PyPublicIdentity {
    /// The versioned bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.0.to_bytes())
    }

    /// Loads `PublicIdentity.to_bytes` output.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        PublicIdentity::from_bytes(data)
            .map(PyPublicIdentity)
            .map_err(attest_err)
    }

    /// The key id (hex).
    #[getter]
    fn key_id(&self) -> String {
        hex(self.0.key_id())
    }

    fn __repr__(&self) -> String {
        format!("PublicIdentity({})", self.key_id())
    }
}

/// A server's secret attestation identity: it signs the records of the
/// outputs it computes.
#[pyclass(name = "ServerIdentity", module = "triskel", frozen)]
pub struct PyServerIdentity(Identity);

impl PyServerIdentity {
    fn copy(&self) -> PyResult<Identity> {
        Identity::from_bytes(&self.0.to_bytes()).map_err(attest_err)
    }
}

/// Writes `data` to a new file `path` readable by its owner only (mode 0600
/// on Unix); an existing file is not replaced.
fn write_new_private(path: &PathBuf, data: &[u8]) -> PyResult<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let io = |e: std::io::Error| err(triskel::Error::Input(format!("{}: {e}", path.display())));
    let mut file = options.open(path).map_err(io)?;
    file.write_all(data).map_err(io)
}

#[pymethods]
impl PyServerIdentity {
    /// A new identity of the default signature suite.
    #[staticmethod]
    fn generate(py: Python<'_>) -> PyResult<Self> {
        py.detach(Identity::generate)
            .map(PyServerIdentity)
            .map_err(attest_err)
    }

    /// The public part.
    fn public(&self) -> PyPublicIdentity {
        PyPublicIdentity(self.0.public().clone())
    }

    /// The secret bytes (keep them secret).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.0.to_bytes())
    }

    /// Loads `ServerIdentity.to_bytes` output (each secret key checked against its public key).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Identity::from_bytes(data)
            .map(PyServerIdentity)
            .map_err(attest_err)
    }

    /// Writes the secret identity to a new file readable by its owner only.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        write_new_private(&path, &self.0.to_bytes())
    }

    /// Loads a file `save` (or `triskel server identity`) wrote; refused
    /// when group or others may access it.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        files::load_identity(&path, false)
            .map(PyServerIdentity)
            .map_err(attest_err)
    }

    fn __repr__(&self) -> String {
        format!("ServerIdentity({})", hex(self.0.public().key_id()))
    }
}

/// The key holder of one program: plans it, generates exactly the keys
/// the plan needs, encrypts inputs, and decrypts outputs after verifying
/// the server's records.
#[pyclass(name = "Client", module = "triskel")]
pub struct PyClient(pub(crate) Client);

#[pymethods]
impl PyClient {
    /// Plans `program` with this machine's cost model and generates its keys.
    #[new]
    #[pyo3(signature = (program, *, allow_round_trips = false, ckks_scale_log2 = None, max_ciphertext_bytes = None))]
    fn new(
        py: Python<'_>,
        program: &PyProgram,
        allow_round_trips: bool,
        ckks_scale_log2: Option<u32>,
        max_ciphertext_bytes: Option<u64>,
    ) -> PyResult<Self> {
        let options = plan_options(allow_round_trips, ckks_scale_log2, max_ciphertext_bytes);
        py.detach(|| Client::new(&program.0, options))
            .map(PyClient)
            .map_err(err)
    }

    /// The evaluation keys for a server (public material only). Raises
    /// UnsupportedError for a client loaded from its saved state.
    fn evaluation_keys(&self) -> PyResult<PyEvaluationKeys> {
        self.0
            .evaluation_keys()
            .map(|k| PyEvaluationKeys(k.clone()))
            .map_err(err)
    }

    /// Encrypts `inputs` (a dict of input names to numpy arrays or
    /// sequences), with a context the server's records bind.
    #[pyo3(signature = (inputs, context = b"".as_slice()))]
    fn encrypt(
        &mut self,
        py: Python<'_>,
        inputs: &Bound<'_, PyDict>,
        context: &[u8],
    ) -> PyResult<PyEncryptedInputs> {
        let plain = values::plain_inputs(inputs)?;
        let client = &mut self.0;
        py.detach(|| client.encrypt_with_context(&plain, context))
            .map(PyEncryptedInputs)
            .map_err(err)
    }

    /// Verifies every record of `outputs` against `server_public`, then
    /// decrypts them: a dict of numpy arrays in the program's output order.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        outputs: &PyEncryptedOutputs,
        server_public: &PyPublicIdentity,
    ) -> PyResult<Bound<'py, PyDict>> {
        let plain = py
            .detach(|| self.0.decrypt(&outputs.0, &server_public.0))
            .map_err(err)?;
        values::outputs_dict(py, &plain)
    }

    /// The key holder's half of the round trips `outputs` ask for: returns
    /// `sent` with the converted values added, for the server's next run.
    fn continue_round_trips(
        &mut self,
        py: Python<'_>,
        sent: &PyEncryptedInputs,
        outputs: &PyEncryptedOutputs,
        server_public: &PyPublicIdentity,
    ) -> PyResult<PyEncryptedInputs> {
        let client = &mut self.0;
        py.detach(|| client.continue_round_trips(&sent.0, &outputs.0, &server_public.0))
            .map(PyEncryptedInputs)
            .map_err(err)
    }

    /// The key-set id (hex) of its evaluation keys.
    #[getter]
    fn key_set(&self) -> String {
        hex(self.0.key_set())
    }

    /// The plan the keys were made for: each step's engine, parameter set
    /// and predicted time.
    fn explain(&self) -> String {
        self.0.plan().explain()
    }

    /// The secret state (keys, plan, the inputs sent); keep it secret.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.0.to_bytes())
    }

    /// Loads `Client.to_bytes` output.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        py.detach(|| Client::from_bytes(data, data.len() as u64))
            .map(PyClient)
            .map_err(err)
    }

    /// Writes the secret state to a new file readable by its owner only.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        self.0.save(&path).map_err(err)
    }

    /// Loads a state `save` wrote; refused when group or others may access it.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        py.detach(|| Client::load(&path)).map(PyClient).map_err(err)
    }

    fn __repr__(&self) -> String {
        format!("Client({})", self.key_set())
    }
}

/// The evaluator of outsourced work: holds its attestation identity and
/// nothing secret of any client.
#[pyclass(name = "Server", module = "triskel", frozen)]
pub struct PyServer(Server);

#[pymethods]
impl PyServer {
    /// A server signing its outputs' records with `identity`.
    #[new]
    fn new(identity: &PyServerIdentity) -> PyResult<Self> {
        Ok(PyServer(Server::new(identity.copy()?)))
    }

    /// The public part of its identity, which clients verify records with.
    fn public(&self) -> PyPublicIdentity {
        PyPublicIdentity(self.0.identity().public().clone())
    }

    /// Runs `program` with `keys` (as the plan choice they carry places it)
    /// on `inputs`; raises RefusedError, before any work, for keys or inputs
    /// that do not fit the program.
    fn run(
        &self,
        py: Python<'_>,
        program: &PyProgram,
        keys: &PyEvaluationKeys,
        inputs: &PyEncryptedInputs,
    ) -> PyResult<PyEncryptedOutputs> {
        py.detach(|| self.0.run(&program.0, keys.0.choice(), &keys.0, &inputs.0))
            .map(PyEncryptedOutputs)
            .map_err(err)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyEvaluationKeys>()?;
    m.add_class::<PyEncryptedInputs>()?;
    m.add_class::<PyEncryptedOutputs>()?;
    m.add_class::<PyPublicIdentity>()?;
    m.add_class::<PyServerIdentity>()?;
    m.add_class::<PyClient>()?;
    m.add_class::<PyServer>()?;
    Ok(())
}
