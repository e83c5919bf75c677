//! Plain values between Python and the library: inputs from numpy arrays or
//! sequences (1-d, bool, integer or float), outputs
//! as numpy arrays (int64, or uint64 when a value exceeds 2^63 - 1; float64;
//! bool).

use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use triskel::{Outputs, PlainValue};

use crate::err;

fn input_err(msg: String) -> PyErr {
    err(triskel::Error::Input(msg))
}

/// One input as a plain value by its array's dtype: bool arrays are bits,
/// integer arrays integers, float arrays reals (the library then checks each
/// against the kind the program declares).
fn plain_value(
    numpy: &Bound<'_, PyModule>,
    name: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<PlainValue> {
    let array = numpy
        .call_method1("asarray", (value,))
        .map_err(|e| input_err(format!("input {name:?}: not an array: {e}")))?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    if shape.len() != 1 {
        return Err(input_err(format!(
            "input {name:?} must be a 1-d array, not of shape {shape:?}"
        )));
    }
    let dtype = array.getattr("dtype")?;
    let list = array.call_method0("tolist")?;
    Ok(match dtype.getattr("kind")?.extract::<String>()?.as_str() {
        "b" => PlainValue::Bits(list.extract()?),
        "i" | "u" => PlainValue::Ints(list.extract()?),
        "f" => PlainValue::Reals(list.extract()?),
        _ => {
            let dname: String = dtype.getattr("name")?.extract()?;
            return Err(input_err(format!(
                "input {name:?} must be an array of bools, integers or floats, not of {dname}"
            )));
        }
    })
}

/// Plain inputs from a dict of input names to numpy arrays or sequences;
/// the library checks them against the program's declarations.
pub(crate) fn plain_inputs(inputs: &Bound<'_, PyDict>) -> PyResult<BTreeMap<String, PlainValue>> {
    let numpy = inputs.py().import("numpy")?;
    let mut plain = BTreeMap::new();
    for (name, value) in inputs.iter() {
        let name: String = name
            .extract()
            .map_err(|_| input_err(format!("input names are strings, not {name}")))?;
        let v = plain_value(&numpy, &name, &value)?;
        plain.insert(name, v);
    }
    Ok(plain)
}

/// One plain value as a numpy array.
pub(crate) fn array<'py>(py: Python<'py>, value: &PlainValue) -> PyResult<Bound<'py, PyAny>> {
    let numpy = py.import("numpy")?;
    match value {
        PlainValue::Ints(v) => {
            let dtype = if v.iter().all(|&x| i64::try_from(x).is_ok()) {
                "int64"
            } else {
                "uint64"
            };
            numpy.call_method1("array", (v.clone(), dtype))
        }
        PlainValue::Reals(v) => numpy.call_method1("array", (v.clone(), "float64")),
        PlainValue::Bits(v) => numpy.call_method1("array", (v.clone(), "bool")),
    }
}

/// Decrypted outputs as a dict of numpy arrays, in the program's output order.
pub(crate) fn outputs_dict<'py>(
    py: Python<'py>,
    outputs: &Outputs,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, value) in &outputs.values {
        dict.set_item(name, array(py, value)?)?;
    }
    Ok(dict)
}
