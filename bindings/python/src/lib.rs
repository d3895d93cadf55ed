//! `quabla._quabla`: the Rust half of the Python package. It exposes the core's arrays and
//! primitives (`RawArray`), its transformations over flat lists of arrays, and the plugin
//! host; the Python half (`python/quabla/`) adds pytrees, numpy names and operators on top,
//! the way `jax.numpy` sits on `lax`.

use pyo3::prelude::*;

mod array;
mod checkpoint_io;
mod control_flow;
mod distributed;
mod dlpack;
mod errors;
mod host_calls;
mod linalg;
mod numerics;
mod optim;
mod random;
mod runtime;
mod transforms;

pub use array::RawArray;

/// The extension module.
#[pymodule]
fn _quabla(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    array::register(m)?;
    runtime::register(m)?;
    transforms::register(m)?;
    control_flow::register(m)?;
    distributed::register(m)?;
    dlpack::register(m)?;
    checkpoint_io::register(m)?;
    optim::register(m)?;
    numerics::register(m)?;
    linalg::register(m)?;
    random::register(m)?;
    host_calls::register(m)?;
    Ok(())
}
