//! `Kind`, `Value` and the `Program` builder, mirroring the library's.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use triskel::{Cmp, Kind, Op, PlanOptions, Program, Scalar, Session, Value};

use crate::{err, values};

/// What an encrypted value holds: its kind and length.
#[pyclass(name = "Kind", module = "triskel", frozen, eq, skip_from_py_object)]
#[derive(Clone, PartialEq)]
pub struct PyKind(pub Kind);

#[pymethods]
impl PyKind {
    /// `len` integers modulo a prime `modulus` (exact, wrapping; BFV).
    #[staticmethod]
    fn modular(len: usize, modulus: u64) -> Self {
        PyKind(Kind::Modular { len, modulus })
    }

    /// `len` signed integers of absolute value at most `bound` (exact; BFV).
    #[staticmethod]
    fn signed(len: usize, bound: u64) -> Self {
        PyKind(Kind::Signed { len, bound })
    }

    /// `len` reals in [-1, 1] (approximate; CKKS).
    #[staticmethod]
    fn real(len: usize) -> Self {
        PyKind(Kind::Real { len })
    }

    /// `len` unsigned integers of `bits` bits: 8, 16, 32 or 64 (wrapping; TFHE).
    #[staticmethod]
    fn uint(len: usize, bits: u32) -> Self {
        PyKind(Kind::Uint { len, bits })
    }

    /// `len` bits (results of comparisons; TFHE).
    #[staticmethod]
    fn bit(len: usize) -> Self {
        PyKind(Kind::Bit { len })
    }

    /// The number of values.
    #[getter]
    fn len(&self) -> usize {
        self.0.len()
    }

    /// "modular", "signed", "real", "uint" or "bit".
    #[getter]
    fn name(&self) -> &'static str {
        match self.0 {
            Kind::Modular { .. } => "modular",
            Kind::Signed { .. } => "signed",
            Kind::Real { .. } => "real",
            Kind::Uint { .. } => "uint",
            Kind::Bit { .. } => "bit",
        }
    }

    /// The modulus of a modular kind, else None.
    #[getter]
    fn modulus(&self) -> Option<u64> {
        match self.0 {
            Kind::Modular { modulus, .. } => Some(modulus),
            _ => None,
        }
    }

    /// The bound of a signed kind, else None.
    #[getter]
    fn bound(&self) -> Option<u64> {
        match self.0 {
            Kind::Signed { bound, .. } => Some(bound),
            _ => None,
        }
    }

    /// The width of a uint kind, else None.
    #[getter]
    fn bits(&self) -> Option<u32> {
        match self.0 {
            Kind::Uint { bits, .. } => Some(bits),
            _ => None,
        }
    }

    /// The kind as the library's messages name it ("4 signed integers |v| <= 100").
    fn describe(&self) -> String {
        self.0.describe()
    }

    fn __repr__(&self) -> String {
        match self.0 {
            Kind::Modular { len, modulus } => format!("Kind.modular({len}, {modulus})"),
            Kind::Signed { len, bound } => format!("Kind.signed({len}, {bound})"),
            Kind::Real { len } => format!("Kind.real({len})"),
            Kind::Uint { len, bits } => format!("Kind.uint({len}, {bits})"),
            Kind::Bit { len } => format!("Kind.bit({len})"),
        }
    }
}

/// A handle to a value of one program, returned by its operations.
#[pyclass(name = "Value", module = "triskel", frozen, skip_from_py_object)]
#[derive(Clone)]
pub struct PyValue(Value);

#[pymethods]
impl PyValue {
    /// The value's index in its program.
    #[getter]
    fn index(&self) -> usize {
        self.0.index()
    }

    fn __repr__(&self) -> String {
        format!("Value(v{})", self.0.index())
    }
}

/// A constant operand: a Python int is an integer, a float a real.
fn scalar(c: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if let Ok(i) = c.extract::<i64>() {
        return Ok(Scalar::Int(i));
    }
    c.extract::<f64>().map(Scalar::Real).map_err(|_| {
        err(triskel::Error::Program {
            op: "scalar".into(),
            msg: format!("{c} is neither an int (in i64) nor a float"),
        })
    })
}

fn scalars(cs: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<Scalar>> {
    cs.iter().map(scalar).collect()
}

fn cmp(op: &str) -> PyResult<Cmp> {
    Ok(match op {
        "==" | "eq" => Cmp::Eq,
        "!=" | "ne" => Cmp::Ne,
        "<" | "lt" => Cmp::Lt,
        "<=" | "le" => Cmp::Le,
        ">" | "gt" => Cmp::Gt,
        ">=" | "ge" => Cmp::Ge,
        _ => {
            return Err(err(triskel::Error::Program {
                op: "compare".into(),
                msg: format!("comparison {op:?}: one of ==, !=, <, <=, >, >="),
            }))
        }
    })
}

/// The planner's options from the keyword arguments every planning call takes.
pub(crate) fn plan_options(
    allow_round_trips: bool,
    ckks_scale_log2: Option<u32>,
    max_ciphertext_bytes: Option<u64>,
) -> PlanOptions {
    PlanOptions {
        allow_round_trips,
        ckks_scale_log2,
        max_ciphertext_bytes,
        threshold: None,
    }
}

/// A program of encrypted work: inputs by kind, operations, named outputs.
#[pyclass(name = "Program", module = "triskel")]
pub struct PyProgram(pub Program);

/// The result of one recording call as a Python value.
fn value(r: triskel::Result<Value>) -> PyResult<PyValue> {
    r.map(PyValue).map_err(err)
}

fn handles(vs: Vec<PyRef<'_, PyValue>>) -> Vec<Value> {
    vs.iter().map(|v| v.0).collect()
}

#[pymethods]
impl PyProgram {
    /// An empty program.
    #[new]
    fn new() -> Self {
        PyProgram(Program::new())
    }

    /// Declares an encrypted input named `name` of kind `kind`.
    fn input(&mut self, name: &str, kind: &PyKind) -> PyResult<PyValue> {
        value(self.0.input(name, kind.0))
    }

    /// Marks `v` as an output named `name`: decrypted for the key holder.
    fn output(&mut self, name: &str, v: &PyValue) -> PyResult<()> {
        self.0.output(name, v.0).map_err(err)
    }

    /// Element-wise a + b.
    fn add(&mut self, a: &PyValue, b: &PyValue) -> PyResult<PyValue> {
        value(self.0.add(a.0, b.0))
    }

    /// Element-wise a - b.
    fn sub(&mut self, a: &PyValue, b: &PyValue) -> PyResult<PyValue> {
        value(self.0.sub(a.0, b.0))
    }

    /// Element-wise product.
    fn mul(&mut self, a: &PyValue, b: &PyValue) -> PyResult<PyValue> {
        value(self.0.mul(a.0, b.0))
    }

    /// Element-wise a + c (an int for integer kinds, a float for reals).
    fn add_scalar(&mut self, a: &PyValue, c: &Bound<'_, PyAny>) -> PyResult<PyValue> {
        value(self.0.add_scalar(a.0, scalar(c)?))
    }

    /// Element-wise a * c (an int for integer kinds, a float for reals).
    fn mul_scalar(&mut self, a: &PyValue, c: &Bound<'_, PyAny>) -> PyResult<PyValue> {
        value(self.0.mul_scalar(a.0, scalar(c)?))
    }

    /// Inner product of two encrypted vectors.
    fn dot(&mut self, a: &PyValue, b: &PyValue) -> PyResult<PyValue> {
        value(self.0.dot(a.0, b.0))
    }

    /// Inner product with plaintext weights.
    fn dot_plain(&mut self, a: &PyValue, weights: Vec<Bound<'_, PyAny>>) -> PyResult<PyValue> {
        value(self.0.dot_plain(a.0, &scalars(weights)?))
    }

    /// The sum of a vector's values.
    fn sum(&mut self, a: &PyValue) -> PyResult<PyValue> {
        value(self.0.sum(a.0))
    }

    /// sum_i coeffs[i] x^i, element-wise.
    fn polynomial(&mut self, a: &PyValue, coeffs: Vec<Bound<'_, PyAny>>) -> PyResult<PyValue> {
        value(self.0.polynomial(a.0, &scalars(coeffs)?))
    }

    /// A Chebyshev series on [lo, hi], element-wise (reals).
    fn chebyshev(&mut self, a: &PyValue, coeffs: Vec<f64>, lo: f64, hi: f64) -> PyResult<PyValue> {
        value(self.0.chebyshev(a.0, &coeffs, lo, hi))
    }

    /// A plaintext matrix (rows of floats) times an encrypted real vector.
    fn matvec(&mut self, rows: Vec<Vec<f64>>, a: &PyValue) -> PyResult<PyValue> {
        value(self.0.matvec(&rows, a.0))
    }

    /// Element-wise comparison of two encrypted vectors (`op`: ==, !=, <, <=, >, >=): bits.
    fn compare(&mut self, a: &PyValue, op: &str, b: &PyValue) -> PyResult<PyValue> {
        value(self.0.compare(a.0, cmp(op)?, b.0))
    }

    /// Element-wise comparison with a constant: bits.
    fn compare_scalar(&mut self, a: &PyValue, op: &str, c: &Bound<'_, PyAny>) -> PyResult<PyValue> {
        value(self.0.compare_scalar(a.0, cmp(op)?, scalar(c)?))
    }

    /// Element-wise a >= threshold: bits.
    fn threshold(&mut self, a: &PyValue, threshold: &Bound<'_, PyAny>) -> PyResult<PyValue> {
        value(self.0.threshold(a.0, scalar(threshold)?))
    }

    /// Element-wise a >= threshold on signed integers, where values within
    /// 2^tolerance_bits of the threshold may be decided either way.
    fn threshold_within(
        &mut self,
        a: &PyValue,
        threshold: i64,
        tolerance_bits: u32,
    ) -> PyResult<PyValue> {
        value(self.0.threshold_within(a.0, threshold, tolerance_bits))
    }

    /// Element-wise a >= threshold on reals, right whenever |a - threshold| > tolerance.
    fn threshold_real(&mut self, a: &PyValue, threshold: f64, tolerance: f64) -> PyResult<PyValue> {
        value(self.0.threshold_real(a.0, threshold, tolerance))
    }

    /// The index of the largest value (the first on ties).
    fn argmax(&mut self, a: &PyValue) -> PyResult<PyValue> {
        value(self.0.argmax(a.0))
    }

    /// The index of a largest of the signed values of `values` (concatenated),
    /// where values within 2^tolerance_bits of the largest may win.
    fn argmax_within(
        &mut self,
        values: Vec<PyRef<'_, PyValue>>,
        tolerance_bits: u32,
    ) -> PyResult<PyValue> {
        value(self.0.argmax_within(&handles(values), tolerance_bits))
    }

    /// One bit: is any bit of `bits` (bit vectors) 1?
    fn any(&mut self, bits: Vec<PyRef<'_, PyValue>>) -> PyResult<PyValue> {
        value(self.0.any(&handles(bits)))
    }

    /// Element-wise table[x] as u8 (256 entries for u8 values, 2 B + 1 for
    /// signed values of bound B, entry x + B for x).
    fn lookup(&mut self, a: &PyValue, table: Vec<u8>) -> PyResult<PyValue> {
        value(self.0.lookup(a.0, &table))
    }

    /// u8..u32 values or bits as signed integers (a key-holder round trip).
    #[allow(clippy::wrong_self_convention)] // the library builder's name
    fn to_signed(&mut self, a: &PyValue) -> PyResult<PyValue> {
        value(self.0.to_signed(a.0))
    }

    /// Integers or bits times `scale` as reals (a key-holder round trip).
    #[allow(clippy::wrong_self_convention)] // the library builder's name
    fn to_real(&mut self, a: &PyValue, scale: f64) -> PyResult<PyValue> {
        value(self.0.to_real(a.0, scale))
    }

    /// Element-wise `a if cond else b`.
    fn select(&mut self, cond: &PyValue, a: &PyValue, b: &PyValue) -> PyResult<PyValue> {
        value(self.0.select(cond.0, a.0, b.0))
    }

    /// The kind of a value.
    fn kind(&self, v: &PyValue) -> PyResult<PyKind> {
        self.0.kind(v.0).map(PyKind).map_err(err)
    }

    /// The declared inputs, in order: (name, kind).
    fn inputs(&self) -> Vec<(String, PyKind)> {
        self.0
            .nodes()
            .iter()
            .filter_map(|n| match &n.op {
                Op::Input { name, kind } => Some((name.clone(), PyKind(*kind))),
                _ => None,
            })
            .collect()
    }

    /// The named outputs, in order: (name, kind).
    fn outputs(&self) -> Vec<(String, PyKind)> {
        self.0
            .outputs()
            .map(|(name, i)| (name.to_string(), PyKind(self.0.nodes()[i].kind)))
            .collect()
    }

    /// The number of recorded nodes (inputs and operations).
    fn __len__(&self) -> usize {
        self.0.nodes().len()
    }

    /// The plan of this program on this machine's cost model: each step's
    /// engine, parameter set and predicted time. Raises RefusedError for a
    /// program the planner refuses.
    #[pyo3(signature = (*, allow_round_trips = false, ckks_scale_log2 = None, max_ciphertext_bytes = None))]
    fn explain(
        &self,
        py: Python<'_>,
        allow_round_trips: bool,
        ckks_scale_log2: Option<u32>,
        max_ciphertext_bytes: Option<u64>,
    ) -> PyResult<String> {
        let options = plan_options(allow_round_trips, ckks_scale_log2, max_ciphertext_bytes);
        py.detach(|| Ok(Session::new().plan_with(&self.0, options)?.explain()))
            .map_err(err)
    }

    /// The program's versioned bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.to_bytes())
    }

    /// Loads `Program.to_bytes` output, checking every operation again.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Program::from_bytes(data).map(PyProgram).map_err(err)
    }

    fn __repr__(&self) -> String {
        format!(
            "Program({} nodes, outputs {:?})",
            self.0.nodes().len(),
            self.0.outputs().map(|(n, _)| n).collect::<Vec<_>>()
        )
    }
}

/// Runs `program` in one process (the library's `Session`): plans it,
/// generates its keys, encrypts `inputs`, evaluates and decrypts. Returns
/// the outputs as a dict of numpy arrays.
#[pyfunction]
#[pyo3(signature = (program, inputs, *, allow_round_trips = false, ckks_scale_log2 = None, max_ciphertext_bytes = None))]
fn run_local<'py>(
    py: Python<'py>,
    program: &PyProgram,
    inputs: &Bound<'py, PyDict>,
    allow_round_trips: bool,
    ckks_scale_log2: Option<u32>,
    max_ciphertext_bytes: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let plain = values::plain_inputs(inputs)?;
    let options = plan_options(allow_round_trips, ckks_scale_log2, max_ciphertext_bytes);
    let outputs = py
        .detach(|| {
            let mut session = Session::new();
            let mut plan = session.plan_with(&program.0, options)?;
            session.run(&mut plan, &plain)
        })
        .map_err(err)?;
    values::outputs_dict(py, &outputs)
}

/// The deterministic int8 embeddings of the biometric demo (`count` of
/// them from `seed`), for `triskel.programs`.
#[pyfunction]
fn _sample_embeddings(count: usize, seed: u64) -> Vec<Vec<i64>> {
    triskel::bfv::biometric::sample_embeddings(count, seed)
        .iter()
        .map(|e| e.iter().map(|&v| i64::from(v)).collect())
        .collect()
}

/// The Chebyshev coefficients of the sigmoid on [lo, hi] of `degree`, for
/// `triskel.programs`.
#[pyfunction]
fn _sigmoid_coeffs(lo: f64, hi: f64, degree: usize) -> PyResult<Vec<f64>> {
    triskel::ckks::ChebyshevPolynomial::sigmoid(lo, hi, degree)
        .map(|p| p.coeffs().to_vec())
        .map_err(|e| err(triskel::Error::Ckks(e)))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKind>()?;
    m.add_class::<PyValue>()?;
    m.add_class::<PyProgram>()?;
    m.add_function(wrap_pyfunction!(run_local, m)?)?;
    m.add_function(wrap_pyfunction!(_sample_embeddings, m)?)?;
    m.add_function(wrap_pyfunction!(_sigmoid_coeffs, m)?)?;
    m.add("MAX_LEN", triskel::MAX_LEN)?;
    m.add("_BIOMETRIC_DIM", triskel::bfv::biometric::DIM)?;
    m.add(
        "_BIOMETRIC_MAX_FEATURE",
        triskel::bfv::biometric::MAX_FEATURE,
    )?;
    Ok(())
}
