//! Arrays on disk in the safetensors format (no pickle): `quabla.save` / `quabla.load` pass
//! the flattened leaves, their names and the tree's description (as metadata) through here.

use crate::array::{dtype_from_name, RawArray};
use crate::errors::IntoPyResult;
use pyo3::exceptions::{PyIOError, PyValueError};
use pyo3::prelude::*;
use quabla::{Array, DType, HostArray, TensorType};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use std::collections::HashMap;
use std::path::PathBuf;

fn to_st(d: DType) -> Dtype {
    match d {
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
        DType::I32 => Dtype::I32,
        DType::U32 => Dtype::U32,
        DType::Bool => Dtype::BOOL,
    }
}

fn from_st(d: Dtype) -> PyResult<&'static str> {
    Ok(match d {
        Dtype::F32 => "float32",
        Dtype::F64 => "float64",
        Dtype::I32 => "int32",
        Dtype::U32 => "uint32",
        Dtype::BOOL => "bool",
        other => {
            return Err(PyValueError::new_err(format!(
                "the file holds a {other:?} tensor; Quabla reads float32, float64, int32, \
                 uint32 and bool"
            )))
        }
    })
}

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
    let views = names
        .iter()
        .zip(&hosts)
        .map(|(n, h)| {
            TensorView::new(to_st(h.ty.dtype), h.ty.shape.clone(), &h.bytes)
                .map(|v| (n.clone(), v))
                .map_err(|e| PyValueError::new_err(format!("save: tensor `{n}`: {e}")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    safetensors::tensor::serialize_to_file(views, Some(metadata), &path)
        .map_err(|e| PyIOError::new_err(format!("save: writing {}: {e}", path.display())))
}

/// Named arrays and the file's metadata.
type Loaded = (Vec<(String, RawArray)>, HashMap<String, String>);

/// Reads `path`: the tensors in file order as `(name, array)` pairs, and the metadata.
#[pyfunction]
#[pyo3(signature = (path, platform = None))]
fn load_tensors(path: PathBuf, platform: Option<&str>) -> PyResult<Loaded> {
    let bytes = std::fs::read(&path)
        .map_err(|e| PyIOError::new_err(format!("load: reading {}: {e}", path.display())))?;
    let bad = |e: safetensors::SafeTensorError| {
        PyValueError::new_err(format!(
            "load: {} is not a valid safetensors file: {e}",
            path.display()
        ))
    };
    let (_, meta) = SafeTensors::read_metadata(&bytes).map_err(bad)?;
    let st = SafeTensors::deserialize(&bytes).map_err(bad)?;
    let device = match platform {
        Some(p) => quabla::device(p).py()?,
        None => quabla::default_device().py()?,
    };
    let mut out = Vec::new();
    for (name, view) in st.iter() {
        let dtype = dtype_from_name(from_st(view.dtype())?)?;
        let ty = TensorType::new(dtype, view.shape().to_vec());
        let host = HostArray::new(ty, view.data().to_vec()).map_err(PyValueError::new_err)?;
        out.push((
            name.to_string(),
            RawArray::from(Array::from_host_on(&device, &host).py()?),
        ));
    }
    let metadata = meta.metadata().clone().unwrap_or_default();
    Ok((out, metadata.into_iter().collect()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(save_tensors, m)?)?;
    m.add_function(wrap_pyfunction!(load_tensors, m)?)?;
    Ok(())
}
