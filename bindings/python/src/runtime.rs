//! The plugin host as seen from Python: search paths, platforms, devices.

use crate::errors::IntoPyResult;
use pyo3::prelude::*;
use quabla::runtime::Registry;
use std::path::PathBuf;

/// Adds a plugin file or a folder of plugins to the places the host searches: first (before
/// `QUABLA_PLUGIN_PATH`) or, with `fallback`, last (the wheel's own `quabla/plugins/`).
#[pyfunction]
#[pyo3(signature = (path, fallback = false))]
fn add_plugin_path(path: PathBuf, fallback: bool) {
    if fallback {
        Registry::global().add_fallback_search_path(&path);
    } else {
        Registry::global().add_search_path(&path);
    }
}

/// The platforms whose plugins were found (loading none of them).
#[pyfunction]
fn platforms() -> Vec<String> {
    quabla::runtime::platforms()
}

/// The default device's platform name (loads its plugin).
#[pyfunction]
fn default_platform() -> PyResult<String> {
    Ok(quabla::default_device().py()?.platform().to_string())
}

/// Checks that `platform`'s plugin loads, returning its name.
#[pyfunction]
fn load_platform(platform: &str) -> PyResult<String> {
    Ok(quabla::device(platform).py()?.platform().to_string())
}

/// A default-device scope opened from Python (`quabla.default_device`): `platform`'s
/// device is this thread's default until `close`.
#[pyclass(unsendable, module = "quabla._quabla")]
struct DefaultDeviceScope(Option<quabla::runtime::DefaultDeviceScope>);

#[pymethods]
impl DefaultDeviceScope {
    #[new]
    fn new(platform: &str) -> PyResult<Self> {
        let device = quabla::device(platform).py()?;
        Ok(DefaultDeviceScope(Some(
            quabla::runtime::default_device_scope(device),
        )))
    }

    /// Ends the scope (again: nothing).
    fn close(&mut self) {
        self.0 = None;
    }
}

/// Sets the process-wide default device to `platform`'s (None: discovery's choice again).
#[pyfunction]
fn set_default_platform(platform: Option<&str>) -> PyResult<()> {
    let device = platform.map(quabla::device).transpose().py()?;
    quabla::runtime::set_default_device(device);
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DefaultDeviceScope>()?;
    m.add_function(wrap_pyfunction!(set_default_platform, m)?)?;
    m.add_function(wrap_pyfunction!(add_plugin_path, m)?)?;
    m.add_function(wrap_pyfunction!(platforms, m)?)?;
    m.add_function(wrap_pyfunction!(default_platform, m)?)?;
    m.add_function(wrap_pyfunction!(load_platform, m)?)?;
    Ok(())
}
