//! A device of a loaded backend, with its cache of compiled executables.

use crate::error::{Error, Result};
use quabla_abi::host::{Buffer, Executable, Plugin};
use quabla_abi::qir::{self, Program};
use quabla_abi::HostArray;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A device of a backend plugin. Arrays hold an `Arc<Device>`.
///
/// ```no_run
/// let dev = quabla::default_device().unwrap();
/// println!("running on {}", dev.platform());
/// ```
pub struct Device {
    plugin: Plugin,
    cache: Mutex<HashMap<Vec<u8>, Arc<Executable>>>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({})", self.plugin.name())
    }
}

impl Device {
    pub(crate) fn new(plugin: Plugin) -> Device {
        Device {
            plugin,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The platform name (`cpu`, `wgpu`...).
    pub fn platform(&self) -> &str {
        self.plugin.name()
    }

    /// The plugin behind this device.
    pub fn plugin(&self) -> &Plugin {
        &self.plugin
    }

    pub(crate) fn backend_err(&self, source: quabla_abi::abi::AbiError) -> Error {
        Error::Backend {
            backend: self.platform().to_string(),
            source,
        }
    }

    /// Copies a host array to the device.
    pub fn upload(&self, a: &HostArray) -> Result<Buffer> {
        self.plugin.upload(a).map_err(|e| self.backend_err(e))
    }

    /// Compiles `program`, reusing an earlier compilation of the same program (keyed by its
    /// exact encoding, so constants with different bits never share an executable).
    pub fn compile(self: &Arc<Self>, program: &Program) -> Result<Arc<Executable>> {
        let lowered = crate::passes::lower(program, self)?;
        crate::passes::dump("lowered", &lowered);
        let program = &lowered;
        let version = self.plugin.qir_version().map_err(|e| self.backend_err(e))?;
        let key = qir::encode(program, version).map_err(Error::Type)?;
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = cache.get(&key) {
            return Ok(e.clone());
        }
        let exe = self
            .plugin
            .compile_bytes(
                &key,
                version,
                program.inputs.clone(),
                program.output_types(),
            )
            .map(Arc::new)
            .map_err(|e| self.backend_err(e))?;
        cache.insert(key, exe.clone());
        Ok(exe)
    }

    /// Number of distinct programs compiled so far (for tests and diagnostics).
    pub fn compiled_count(&self) -> usize {
        self.cache.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}
