//! Collectives across processes as seen from Python: a communicator over the core's
//! `distributed` module; `quabla.distributed` adds pytrees and JAX's names.

use crate::array::RawArray;
use crate::errors::IntoPyResult;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use quabla::distributed::{self, Options, ReduceOp};
use std::sync::Arc;
use std::time::Duration;

/// One process's end of a communicator.
#[pyclass(frozen, module = "quabla._quabla")]
pub struct Communicator(Arc<distributed::Communicator>);

fn reduce_op(name: &str) -> PyResult<ReduceOp> {
    Ok(match name {
        "sum" => ReduceOp::Sum,
        "mean" => ReduceOp::Mean,
        "max" => ReduceOp::Max,
        "min" => ReduceOp::Min,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown reduction `{other}`; use sum, mean, max or min"
            )))
        }
    })
}

#[pymethods]
impl Communicator {
    #[getter]
    fn rank(&self) -> usize {
        self.0.rank()
    }

    #[getter]
    fn world_size(&self) -> usize {
        self.0.world_size()
    }

    fn all_reduce(&self, py: Python<'_>, x: RawArray, op: &str) -> PyResult<RawArray> {
        let op = reduce_op(op)?;
        let c = self.0.clone();
        Ok(py.detach(move || c.all_reduce(&x.inner, op)).py()?.into())
    }

    fn all_reduce_many(
        &self,
        py: Python<'_>,
        xs: Vec<RawArray>,
        op: &str,
    ) -> PyResult<Vec<RawArray>> {
        let op = reduce_op(op)?;
        let c = self.0.clone();
        let xs: Vec<quabla::Array> = xs.into_iter().map(|x| x.inner).collect();
        let out = py.detach(move || c.all_reduce_many(&xs, op)).py()?;
        Ok(out.into_iter().map(RawArray::from).collect())
    }

    fn all_gather(&self, py: Python<'_>, x: RawArray) -> PyResult<RawArray> {
        let c = self.0.clone();
        Ok(py.detach(move || c.all_gather(&x.inner)).py()?.into())
    }

    fn broadcast(&self, py: Python<'_>, x: RawArray, root: usize) -> PyResult<RawArray> {
        let c = self.0.clone();
        Ok(py.detach(move || c.broadcast(&x.inner, root)).py()?.into())
    }

    fn reduce_scatter(&self, py: Python<'_>, x: RawArray, op: &str) -> PyResult<RawArray> {
        let op = reduce_op(op)?;
        let c = self.0.clone();
        Ok(py
            .detach(move || c.reduce_scatter(&x.inner, op))
            .py()?
            .into())
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// The process's communicator: from the launcher (`mpirun`) when `world_size` is 0, the
/// process-wide one made once; otherwise a new one as the arguments say.
#[pyfunction(name = "distributed_initialize")]
#[pyo3(signature = (platform = None, world_size = 0, rank = 0, unique_id = Vec::new(), timeout = None))]
fn initialize(
    py: Python<'_>,
    platform: Option<String>,
    world_size: u32,
    rank: u32,
    unique_id: Vec<u8>,
    timeout: Option<f64>,
) -> PyResult<Communicator> {
    let defaults = Options::default();
    if platform.is_none() && world_size == 0 && timeout.is_none() {
        return Ok(Communicator(py.detach(distributed::initialize).py()?));
    }
    let timeout = match timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(PyValueError::new_err(format!(
                "timeout must be a positive number of seconds, not {t}"
            )))
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => defaults.timeout,
    };
    let options = Options {
        platform: platform.unwrap_or(defaults.platform),
        world_size,
        rank,
        unique_id,
        timeout,
    };
    let c = py
        .detach(move || distributed::initialize_with(&options))
        .py()?;
    Ok(Communicator(Arc::new(c)))
}

/// A new communicator id from `platform`'s collectives plugin (see `quabla.distributed`).
#[pyfunction(name = "distributed_unique_id")]
fn unique_id(py: Python<'_>, platform: String) -> PyResult<Vec<u8>> {
    py.detach(move || distributed::unique_id(&platform)).py()
}

/// Whether an MPI launcher started this process.
#[pyfunction]
fn launched_by_mpi() -> bool {
    distributed::launched_by_mpi()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Communicator>()?;
    m.add_function(wrap_pyfunction!(initialize, m)?)?;
    m.add_function(wrap_pyfunction!(launched_by_mpi, m)?)?;
    m.add_function(wrap_pyfunction!(unique_id, m)?)?;
    Ok(())
}
