//! Arrays on disk in the safetensors format (no pickle): `quabla.save` / `quabla.load` pass
//! the flattened leaves, their names and the tree's description (as metadata) through here.

use crate::array::RawArray;
use crate::errors::IntoPyResult;
use pyo3::exceptions::{PyIOError, PyValueError};
use pyo3::prelude::*;
use quabla::tensor_file::{read_safetensors, write_safetensors};
use quabla::{Array, HostArray};
use std::collections::HashMap;
use std::path::PathBuf;

/// Writes `arrays` under `names` with string `metadata` to `path`.
#[pyfunction]
fn save_tensors(
    py: Python<'_>,
    path: PathBuf,
    names: Vec<String>,
    arrays: Vec<RawArray>,
    metadata: HashMap<String, String>,
) -> PyResult<()> {
    if names.len() != arrays.len() {
        return Err(PyValueError::new_err("save: one name per array"));
    }
    let hosts: Vec<HostArray> = arrays
        .iter()
        .map(|a| {
            let a = a.inner.clone();
            py.detach(move || a.to_host()).py()
        })
        .collect::<PyResult<_>>()?;
    let named: Vec<(String, HostArray)> = names.into_iter().zip(hosts).collect();
    let bytes = write_safetensors(&named, &metadata)
        .map_err(|e| e.context("save"))
        .py()?;
    std::fs::write(&path, bytes)
        .map_err(|e| PyIOError::new_err(format!("save: writing {}: {e}", path.display())))
}

/// Named arrays and the file's metadata.
type Loaded = (Vec<(String, RawArray)>, HashMap<String, String>);

/// Reads `path`: the tensors sorted by name as `(name, array)` pairs, and the metadata.
#[pyfunction]
#[pyo3(signature = (path, platform = None))]
fn load_tensors(path: PathBuf, platform: Option<&str>) -> PyResult<Loaded> {
    let bytes = std::fs::read(&path)
        .map_err(|e| PyIOError::new_err(format!("load: reading {}: {e}", path.display())))?;
    let file = read_safetensors(&bytes)
        .map_err(|e| e.context(&format!("load: {}", path.display())))
        .py()?;
    let device = match platform {
        Some(p) => quabla::device(p).py()?,
        None => quabla::default_device().py()?,
    };
    let mut out = Vec::new();
    for (name, host) in file.tensors {
        out.push((
            name,
            RawArray::from(Array::from_host_on(&device, &host).py()?),
        ));
    }
    Ok((out, file.metadata))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(save_tensors, m)?)?;
    m.add_function(wrap_pyfunction!(load_tensors, m)?)?;
    Ok(())
}
