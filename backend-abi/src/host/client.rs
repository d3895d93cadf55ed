//! A safe client over a plugin's ABI table: handles are released on drop.

use super::load::{load_module, LoadError};
use crate::abi::*;
use crate::qir::{self, Program};
use crate::{DType, HostArray, HostView, TensorType};
use abi_stable::std_types::{RResult, RSlice};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn ok<T>(r: RResult<T, AbiError>) -> Result<T, AbiError> {
    r.into_result()
}

struct Inner {
    module: BackendModRef,
    info: BackendInfo,
    path: Option<PathBuf>,
}

/// A loaded backend plugin (or a statically registered one).
///
/// ```ignore
/// let cpu = quabla_abi::host::Plugin::load("target/debug/libquabla_cpu.so".as_ref())?;
/// println!("{}", cpu.name());
/// ```
#[derive(Clone)]
pub struct Plugin {
    inner: Arc<Inner>,
}

impl Plugin {
    /// Loads a plugin library from a file.
    pub fn load(path: &Path) -> Result<Plugin, LoadError> {
        let module = load_module(path)?;
        Self::with_path(module, Some(path.to_path_buf()))
    }

    /// Wraps a statically linked plugin's table.
    pub fn from_module(module: BackendModRef) -> Result<Plugin, LoadError> {
        Self::with_path(module, None)
    }

    fn with_path(module: BackendModRef, path: Option<PathBuf>) -> Result<Plugin, LoadError> {
        let v = (module.abi_version())();
        let shown = path.clone().unwrap_or_else(|| PathBuf::from("<static>"));
        if !accepts(v.major, v.minor) {
            return Err(LoadError::version_mismatch(shown, v.major, v.minor));
        }
        let info = ok((module.info())()).map_err(|e| LoadError::Info {
            path: shown,
            message: e.to_string(),
        })?;
        if let Some(set) = module.set_host_callback() {
            set(super::callbacks::host_callback_fn());
        }
        Ok(Plugin {
            inner: Arc::new(Inner { module, info, path }),
        })
    }

    pub fn info(&self) -> &BackendInfo {
        &self.inner.info
    }

    /// The platform name (`cpu`, `wgpu`...).
    pub fn name(&self) -> &str {
        self.inner.info.name.as_str()
    }

    /// The file it was loaded from, if any.
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// The same error with the plugin's name in front (once), so every message from a plugin
    /// says which plugin it came from.
    pub fn named(&self, e: AbiError) -> AbiError {
        if e.message().contains(&format!("`{}`", self.name())) {
            return e;
        }
        AbiError::new(
            e.code(),
            format!("plugin `{}`: {}", self.name(), e.message()),
        )
    }

    /// The accuracy profile the plugin declares (`exact` for an ABI 1.0 plugin, which cannot
    /// declare one).
    pub fn accuracy(&self) -> String {
        match self.inner.module.accuracy() {
            Some(f) => f().as_str().to_string(),
            None => "exact".into(),
        }
    }

    /// Whether the plugin lists `op` in its capabilities.
    pub fn supports_op(&self, op: &str) -> bool {
        self.inner
            .info
            .capabilities
            .ops
            .iter()
            .any(|o| o.as_str() == op)
    }

    pub fn supports_dtype(&self, d: DType) -> bool {
        self.inner.info.capabilities.dtypes.contains(&(d as u8))
    }

    /// The QIR version both sides speak: the newer of the two minimums must not exceed the
    /// older of the two maximums.
    pub fn qir_version(&self) -> Result<u32, AbiError> {
        let i = &self.inner.info;
        let v = qir::QIR_VERSION.min(i.qir_max);
        if v < i.qir_min.max(qir::QIR_VERSION_MIN) {
            return Err(AbiError::new(
                ErrorCode::FailedPrecondition,
                format!(
                    "plugin `{}` reads QIR {}..={} but this host writes {}..={}; update one of them",
                    i.name,
                    i.qir_min,
                    i.qir_max,
                    qir::QIR_VERSION_MIN,
                    qir::QIR_VERSION
                ),
            ));
        }
        Ok(v)
    }

    /// Serialises and compiles a program.
    pub fn compile(&self, program: &Program) -> Result<Executable, AbiError> {
        let version = self.qir_version()?;
        let bytes = qir::encode(program, version).map_err(AbiError::invalid)?;
        self.compile_bytes(
            &bytes,
            version,
            program.inputs.clone(),
            program.output_types(),
        )
    }

    /// Compiles already-encoded QIR bytes (they are validated by the plugin).
    pub fn compile_bytes(
        &self,
        bytes: &[u8],
        version: u32,
        inputs: Vec<TensorType>,
        outputs: Vec<TensorType>,
    ) -> Result<Executable, AbiError> {
        let h = ok((self.inner.module.compile())(
            FORMAT_QIR_BINARY,
            version,
            RSlice::from_slice(bytes),
            RSlice::from_slice(&[]),
        ))
        .map_err(|e| self.named(e))?;
        Ok(Executable {
            plugin: self.clone(),
            handle: h,
            inputs,
            outputs,
        })
    }

    /// Copies host bytes to device 0; the plugin reads them in place, so the bytes cross
    /// once (for an owned array, pass `HostArray::view()`).
    pub fn upload(&self, a: HostView<'_>) -> Result<Buffer, AbiError> {
        let shape: Vec<u64> = a.ty.shape.iter().map(|&d| d as u64).collect();
        let h = ok((self.inner.module.upload())(
            0,
            a.ty.dtype as u8,
            RSlice::from_slice(&shape),
            RSlice::from_slice(a.bytes),
        ))
        .map_err(|e| self.named(e))?;
        Ok(Buffer {
            plugin: self.clone(),
            handle: h,
            ty: a.ty.clone(),
            live: true,
        })
    }

    /// The plugin's ABI table.
    pub(super) fn module(&self) -> BackendModRef {
        self.inner.module
    }

    /// Adopts a buffer handle the plugin returned, reading its type from the plugin.
    pub(super) fn adopt(&self, h: u64) -> Result<Buffer, AbiError> {
        let broken = |what: String| self.broken(what);
        let info = ok((self.inner.module.buffer_info())(h)).map_err(|e| {
            broken(format!(
                "returned buffer handle {h}, which it cannot describe ({e})"
            ))
        })?;
        let dtype = DType::from_code(info.dtype).ok_or_else(|| {
            broken(format!(
                "returned a buffer of unknown dtype code {}",
                info.dtype
            ))
        })?;
        let shape = info
            .shape
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| broken(format!("returned a buffer of shape {:?}", info.shape)))?;
        let ty = TensorType::new(dtype, shape);
        ty.checked_size_bytes()
            .map_err(|e| broken(format!("returned a buffer whose size overflows: {e}")))?;
        Ok(Buffer {
            plugin: self.clone(),
            handle: h,
            ty,
            live: true,
        })
    }

    /// The error for a plugin that broke the ABI's contract: its bug, not the user's.
    pub(super) fn broken(&self, what: String) -> AbiError {
        AbiError::internal(format!(
            "plugin `{}` ({}) broke the ABI contract: it {what}; this is a bug in the plugin, \
             report it to its authors",
            self.name(),
            self.path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "linked statically".into())
        ))
    }
}

/// A buffer on the plugin's device; released when dropped.
pub struct Buffer {
    plugin: Plugin,
    handle: u64,
    ty: TensorType,
    live: bool,
}

impl Buffer {
    pub fn ty(&self) -> &TensorType {
        &self.ty
    }

    pub fn plugin(&self) -> &Plugin {
        &self.plugin
    }

    pub(super) fn handle(&self) -> u64 {
        self.handle
    }

    /// Starts a download; the returned event yields the bytes.
    pub fn download(&self) -> Result<Event, AbiError> {
        let h = ok((self.plugin.inner.module.download())(self.handle))
            .map_err(|e| self.plugin.named(e))?;
        Ok(Event {
            plugin: self.plugin.clone(),
            handle: h,
            ty: self.ty.clone(),
            live: true,
        })
    }

    /// Forgets the handle without releasing it (the plugin owns it after a donation).
    fn disarm(mut self) {
        self.live = false;
    }

    /// Returns once the buffer's value has been computed, copying nothing where the plugin
    /// can say so (ABI 1.2); an older plugin's buffer is downloaded and the bytes dropped,
    /// under [`Event::wait`]'s timeout.
    pub fn block_until_ready(&self) -> Result<(), AbiError> {
        match self.plugin.inner.module.buffer_ready() {
            Some(ready) => ok(ready(self.handle)).map_err(|e| self.plugin.named(e)),
            None => self.to_host().map(drop),
        }
    }

    /// Downloads and waits: the native way to read a buffer.
    pub fn to_host(&self) -> Result<HostArray, AbiError> {
        self.download()?.wait()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.live {
            // A failed release leaks one buffer in the plugin; nothing the host could do.
            let _ = (self.plugin.inner.module.release_buffer())(self.handle);
        }
    }
}

/// A download in flight.
pub struct Event {
    plugin: Plugin,
    handle: u64,
    ty: TensorType,
    live: bool,
}

impl Event {
    pub fn is_ready(&self) -> Result<bool, AbiError> {
        ok((self.plugin.inner.module.event_is_ready())(self.handle))
            .map_err(|e| self.plugin.named(e))
    }

    /// Calls `callback(user_data)` when ready (from whichever thread completes the download).
    pub fn on_ready(
        &self,
        callback: extern "C" fn(usize),
        user_data: usize,
    ) -> Result<(), AbiError> {
        ok((self.plugin.inner.module.event_on_ready())(
            self.handle,
            ReadyCallback { func: callback },
            user_data,
        ))
    }

    /// Blocks until ready and returns the array; gives up after [`download_timeout`].
    pub fn wait(self) -> Result<HostArray, AbiError> {
        self.wait_timeout(download_timeout())
    }

    /// Blocks until ready, at most `timeout`, and returns the array. The host polls
    /// `event_is_ready` before it lets the plugin block in `event_wait`, so an event that
    /// never becomes ready is an error after `timeout`, not a hung process. (In the browser
    /// nothing may block: a read that is not ready fails at once, with the plugin's message.)
    pub fn wait_timeout(mut self, timeout: Duration) -> Result<HostArray, AbiError> {
        let plugin = self.plugin.clone();
        if !self.is_ready()? {
            if plugin.info().capabilities.synchronous_readback {
                return Err(plugin.broken(
                    "declares synchronous readback but returned a download event that is not \
                     ready"
                        .into(),
                ));
            }
            self.poll_until_ready(timeout)?;
        }
        self.live = false;
        let bytes =
            ok((plugin.inner.module.event_wait())(self.handle)).map_err(|e| plugin.named(e))?;
        HostArray::new(self.ty.clone(), bytes.into_vec())
            .map_err(|m| plugin.broken(format!("downloaded malformed bytes: {m}")))
    }

    /// Polls without sleeping for the first [`SPIN_BEFORE_SLEEP`] (a training loop reading its
    /// loss waits a step's time, well under a millisecond on a GPU, and a sleep's wake-up
    /// would add as much again), then sleeps between polls, from 20 µs up to 2 ms.
    #[cfg(not(target_arch = "wasm32"))]
    fn poll_until_ready(&self, timeout: Duration) -> Result<(), AbiError> {
        let start = std::time::Instant::now();
        let deadline = start + timeout;
        let spin_until = start + SPIN_BEFORE_SLEEP.min(timeout);
        let mut pause = Duration::from_micros(20);
        while !self.is_ready()? {
            let now = std::time::Instant::now();
            if now < spin_until {
                std::thread::yield_now();
                continue;
            }
            if now >= deadline {
                return Err(AbiError::new(
                    ErrorCode::ResourceExhausted,
                    format!(
                        "plugin `{}`: a download of {} was not ready after {:.1} s; the device may \
                         be hung (raise QUABLA_DOWNLOAD_TIMEOUT, in seconds, for longer work)",
                        self.plugin.name(),
                        self.ty,
                        timeout.as_secs_f64()
                    ),
                ));
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(2));
        }
        Ok(())
    }

    /// wasm32 has no clock or sleep in std, and nothing may block there: `event_wait` says
    /// what to do with a read that is not ready.
    #[cfg(target_arch = "wasm32")]
    fn poll_until_ready(&self, _timeout: Duration) -> Result<(), AbiError> {
        Ok(())
    }
}

/// How long [`Event::wait`] polls a download that is not ready before it sleeps between polls.
pub const SPIN_BEFORE_SLEEP: Duration = Duration::from_millis(2);

/// How long [`Event::wait`] waits for a download: `QUABLA_DOWNLOAD_TIMEOUT` seconds (read
/// once), or 600.
pub fn download_timeout() -> Duration {
    static TIMEOUT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *TIMEOUT.get_or_init(|| {
        std::env::var("QUABLA_DOWNLOAD_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64)
            .unwrap_or(Duration::from_secs(600))
    })
}

impl Drop for Event {
    fn drop(&mut self) {
        if self.live {
            let _ = (self.plugin.inner.module.release_event())(self.handle);
        }
    }
}

/// An argument to [`Executable::execute`]: borrowed, or donated (the plugin may reuse it).
pub enum Arg<'a> {
    Keep(&'a Buffer),
    Donate(Buffer),
}

/// A compiled program; released when dropped.
pub struct Executable {
    plugin: Plugin,
    handle: u64,
    inputs: Vec<TensorType>,
    outputs: Vec<TensorType>,
}

impl Executable {
    pub fn input_types(&self) -> &[TensorType] {
        &self.inputs
    }

    pub fn output_types(&self) -> &[TensorType] {
        &self.outputs
    }

    /// Runs with borrowed arguments.
    pub fn run(&self, args: &[&Buffer]) -> Result<Vec<Buffer>, AbiError> {
        self.execute(args.iter().map(|b| Arg::Keep(b)).collect())
    }

    /// Runs; donated buffers are consumed whether or not execution succeeds.
    pub fn execute(&self, args: Vec<Arg<'_>>) -> Result<Vec<Buffer>, AbiError> {
        let mut handles = Vec::with_capacity(args.len());
        let mut donate = Vec::with_capacity(args.len());
        let mut donated = Vec::new();
        for a in args {
            match a {
                Arg::Keep(b) => {
                    self.check_same_plugin(b)?;
                    handles.push(b.handle);
                    donate.push(false);
                }
                Arg::Donate(b) => {
                    self.check_same_plugin(&b)?;
                    handles.push(b.handle);
                    donate.push(true);
                    donated.push(b);
                }
            }
        }
        let r = ok((self.plugin.inner.module.execute())(
            self.handle,
            RSlice::from_slice(&handles),
            RSlice::from_slice(&donate),
        ));
        if r.is_ok() {
            donated.into_iter().for_each(Buffer::disarm);
        }
        let outs = r.map_err(|e| self.plugin.named(e))?;
        self.adopt_outputs(&outs)
    }

    /// Wraps the handles `execute` returned (so each is released, whatever happens next) and
    /// checks them against the program's output types: the host trusts no plugin.
    fn adopt_outputs(&self, handles: &[u64]) -> Result<Vec<Buffer>, AbiError> {
        let mut outs = Vec::with_capacity(handles.len());
        for (i, &h) in handles.iter().enumerate() {
            match self.plugin.adopt(h) {
                Ok(b) => outs.push(b),
                Err(e) => {
                    for &rest in &handles[i + 1..] {
                        let _ = (self.plugin.inner.module.release_buffer())(rest);
                    }
                    return Err(e);
                }
            }
        }
        let broken = |what: String| {
            self.plugin.broken(format!(
                "ran executable {} {} and {what}",
                self.handle,
                self.signature()
            ))
        };
        if outs.len() != self.outputs.len() {
            return Err(broken(format!(
                "returned {} outputs for the program's {}",
                outs.len(),
                self.outputs.len()
            )));
        }
        for (i, (b, want)) in outs.iter().zip(&self.outputs).enumerate() {
            if b.ty() != want {
                return Err(broken(format!(
                    "returned {} as output {i}, which must be {want}",
                    b.ty()
                )));
            }
        }
        Ok(outs)
    }

    /// `(input types) -> (output types)`, for messages.
    pub fn signature(&self) -> String {
        let list = |ts: &[TensorType]| {
            ts.iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!("({}) -> ({})", list(&self.inputs), list(&self.outputs))
    }

    fn check_same_plugin(&self, b: &Buffer) -> Result<(), AbiError> {
        if !Arc::ptr_eq(&self.plugin.inner, &b.plugin.inner) {
            return Err(AbiError::invalid(format!(
                "buffer lives on plugin `{}` but the executable on `{}`; transfer it first",
                b.plugin.name(),
                self.plugin.name()
            )));
        }
        Ok(())
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        let _ = (self.plugin.inner.module.release_executable())(self.handle);
    }
}
