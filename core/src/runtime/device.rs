//! A device of a loaded backend, with its cache of compiled executables.

use super::BoundedCache;
use crate::error::{Error, Result};
use quabla_abi::host::{Buffer, Executable, Plugin};
use quabla_abi::qir::{self, Program};
use quabla_abi::HostView;
use std::sync::Arc;

/// A device of a backend plugin. Arrays hold an `Arc<Device>`.
///
/// ```no_run
/// let dev = quabla::default_device().unwrap();
/// println!("running on {}", dev.platform());
/// ```
pub struct Device {
    plugin: Plugin,
    /// Executables by the exact encoding of their lowered program (bounded, LRU).
    cache: BoundedCache<Vec<u8>, Arc<Executable>>,
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
            cache: BoundedCache::new(),
        }
    }

    /// The platform name (`cpu`, `wgpu`...).
    ///
    /// ```no_run
    /// println!("{}", quabla::default_device()?.platform()); // "cpu"
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn platform(&self) -> &str {
        self.plugin.name()
    }

    /// The plugin behind this device.
    ///
    /// ```no_run
    /// let device = quabla::default_device()?;
    /// println!("{}", device.plugin().name());
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn plugin(&self) -> &Plugin {
        &self.plugin
    }

    pub(crate) fn backend_err(&self, source: quabla_abi::abi::AbiError) -> Error {
        Error::backend(self.platform(), source)
    }

    /// Refuses a program with an op the plugin does not list, before the plugin sees it, so
    /// the error names the op and the backend.
    fn check_supported(&self, program: &Program) -> Result<()> {
        match program
            .op_names()
            .into_iter()
            .find(|op| !self.plugin.supports_op(op))
        {
            Some(op) => Err(Error::Unsupported {
                op: op.to_string(),
                backend: self.platform().to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Copies host bytes to the device (once: the plugin reads them in place).
    ///
    /// ```no_run
    /// # use quabla::{DType, HostView, TensorType};
    /// let bytes: Vec<u8> = 1.0f32.to_le_bytes().to_vec();
    /// let view = HostView::new(TensorType::new(DType::F32, vec![1]), &bytes).map_err(quabla::Error::Shape)?;
    /// let buffer = quabla::default_device()?.upload(view)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn upload(&self, a: HostView<'_>) -> Result<Buffer> {
        self.plugin.upload(a).map_err(|e| self.backend_err(e))
    }

    /// Compiles `program`, reusing an earlier compilation of the same program (keyed by its
    /// exact encoding, so constants with different bits never share an executable). The
    /// cache holds the [`cache_capacity`](super::cache_capacity) most recently used ones.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32], &[1])?;
    /// let program = quabla::make_program(|a: &[Array]| Ok(vec![a[0].exp()?]), &[x])?;
    /// let exe = quabla::default_device()?.compile(&program)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn compile(self: &Arc<Self>, program: &Program) -> Result<Arc<Executable>> {
        // Lowering `scan` exposes its loop carries; reverse mode leaves some of them dead.
        // Programs without regions (every eager op) have no loop to look at.
        let mut lowered = crate::passes::lower(program, self)?;
        if lowered.nodes.iter().any(|n| !n.op.regions().is_empty()) {
            lowered = crate::passes::dce(&crate::passes::while_carries(&lowered));
        }
        crate::passes::dump("lowered", &lowered);
        let (key, version) = self.encode(&lowered)?;
        if let Some(e) = self.cache.get(&key) {
            return Ok(e);
        }
        // A cached executable passed this check when it was compiled.
        self.check_supported(&lowered)?;
        let exe = Arc::new(self.compile_encoded(&lowered, &key, version)?);
        self.cache.insert(key, exe.clone());
        Ok(exe)
    }

    /// Compiles an already lowered program without caching it: for one-off programs (constant
    /// folding) whose executables would only crowd the cache.
    pub(crate) fn compile_once(&self, program: &Program) -> Result<Executable> {
        self.check_supported(program)?;
        let (bytes, version) = self.encode(program)?;
        self.compile_encoded(program, &bytes, version)
    }

    fn encode(&self, program: &Program) -> Result<(Vec<u8>, u32)> {
        let version = self.plugin.qir_version().map_err(|e| self.backend_err(e))?;
        Ok((
            qir::encode(program, version).map_err(Error::Value)?,
            version,
        ))
    }

    fn compile_encoded(&self, program: &Program, bytes: &[u8], version: u32) -> Result<Executable> {
        self.plugin
            .compile_bytes(
                bytes,
                version,
                program.inputs.clone(),
                program.output_types(),
            )
            .map_err(|e| self.backend_err(e))
    }

    /// Number of programs in the executable cache (for tests and diagnostics); at most
    /// [`cache_capacity`](super::cache_capacity).
    ///
    /// ```no_run
    /// let before = quabla::default_device()?.compiled_count();
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn compiled_count(&self) -> usize {
        self.cache.len()
    }
}
