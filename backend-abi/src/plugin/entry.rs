//! The `extern "C"` entry points, generic over the plugin, and their shared state.

use super::collectives::{collectives_module, CommTable};
use super::{Arg, Backend, Collectives, DeviceBuffer, DownloadEvent, Executable, PluginInfo};
use crate::abi::*;
use crate::qir::{self, Program};
use crate::{DType, HostView, TensorType};
use abi_stable::prefix_type::PrefixTypeTrait;
use abi_stable::std_types::{RErr, ROk, ROption, RResult, RSlice, RString, RVec};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

struct CompiledEntry {
    exe: Arc<dyn Executable>,
    inputs: Vec<TensorType>,
}

/// Handle tables and the backend instance of one plugin.
pub struct PluginState {
    backend: Box<dyn Backend>,
    info: PluginInfo,
    executables: Mutex<HashMap<u64, CompiledEntry>>,
    buffers: Mutex<HashMap<u64, Arc<dyn DeviceBuffer>>>,
    events: Mutex<HashMap<u64, Box<dyn DownloadEvent>>>,
    comms: CommTable,
    next_handle: AtomicU64,
}

/// Ties the generic entry points to one plugin's state (implemented by `export_backend!`).
pub trait PluginEntry: 'static {
    fn state() -> &'static PluginState;
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned table only means an earlier call panicked (and was reported); the table
    // itself is still consistent because every mutation is a single insert/remove.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl PluginState {
    pub fn new(backend: Box<dyn Backend>) -> Self {
        let info = backend.info();
        PluginState {
            backend,
            info,
            executables: Mutex::new(HashMap::new()),
            buffers: Mutex::new(HashMap::new()),
            events: Mutex::new(HashMap::new()),
            comms: CommTable::default(),
            next_handle: AtomicU64::new(1),
        }
    }

    pub(super) fn collectives(&self) -> Option<&dyn Collectives> {
        self.backend.collectives()
    }

    pub(super) fn comm_table(&self) -> &CommTable {
        &self.comms
    }

    fn handle(&self) -> u64 {
        self.next_handle.fetch_add(1, Ordering::Relaxed)
    }

    fn buffer(&self, h: u64) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        lock(&self.buffers).get(&h).cloned().ok_or_else(|| {
            AbiError::invalid(format!(
                "buffer handle {h} is not live (released, donated, or never created)"
            ))
        })
    }

    fn insert_buffer(&self, b: Arc<dyn DeviceBuffer>) -> u64 {
        let h = self.handle();
        lock(&self.buffers).insert(h, b);
        h
    }

    fn check_program(&self, p: &Program) -> Result<(), AbiError> {
        for name in p.op_names() {
            if !self.info.ops.iter().any(|o| o == name) {
                return Err(AbiError::unimplemented(format!(
                    "backend `{}` does not support op `{name}`; run this program on a backend that lists it \
                     in its capabilities (the CPU backend supports every QIR op)",
                    self.info.name
                )));
            }
        }
        if let Some(t) = p.largest_value_type() {
            self.check_size(&t)?;
        }
        for d in p.dtypes() {
            if !self.info.dtypes.contains(&d) {
                let hint = if d == DType::F64 {
                    "; use f32, or the CPU backend for f64"
                } else {
                    ""
                };
                return Err(AbiError::unimplemented(format!(
                    "backend `{}` does not support dtype {d}{hint}",
                    self.info.name
                )));
            }
        }
        Ok(())
    }
}

impl PluginState {
    /// The type of a new buffer on `device`, refused unless the backend has that device and
    /// dtype and the size fits (see [`PluginState::check_size`]).
    fn checked_type(&self, device: u32, dtype: u8, shape: &[u64]) -> Result<TensorType, AbiError> {
        let dtype = DType::from_code(dtype)
            .ok_or_else(|| AbiError::invalid(format!("unknown dtype code {dtype}")))?;
        if !self.info.dtypes.contains(&dtype) {
            return Err(AbiError::unimplemented(format!(
                "backend `{}` does not support dtype {dtype}",
                self.info.name
            )));
        }
        if device as usize >= self.info.devices.len() {
            return Err(AbiError::invalid(format!(
                "device {device} does not exist ({} devices)",
                self.info.devices.len()
            )));
        }
        let shape = shape
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| AbiError::invalid(format!("shape {shape:?} does not fit this machine")))?;
        let ty = TensorType::new(dtype, shape);
        self.check_size(&ty)?;
        Ok(ty)
    }

    /// Refuses a value larger than the backend's declared `max_buffer_bytes`.
    fn check_size(&self, t: &TensorType) -> Result<(), AbiError> {
        let bytes = t
            .checked_size_bytes()
            .map_err(|e| AbiError::invalid(e.to_string()))?;
        let max = self.info.max_buffer_bytes;
        if max != 0 && bytes as u64 > max {
            return Err(AbiError::new(
                ErrorCode::ResourceExhausted,
                format!(
                    "backend `{}` holds at most {max} bytes in one buffer but a value of type {t} \
                     needs {bytes}; split the computation into smaller arrays",
                    self.info.name
                ),
            ));
        }
        Ok(())
    }
}

pub(super) fn guard<T>(f: impl FnOnce() -> Result<T, AbiError>) -> RResult<T, AbiError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => ROk(v),
        Ok(Err(e)) => RErr(e),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic payload".into());
            RErr(AbiError::internal(format!(
                "the plugin panicked: {msg}; this is a bug in the plugin"
            )))
        }
    }
}

extern "C" fn abi_version() -> AbiVersion {
    AbiVersion {
        major: ABI_MAJOR,
        minor: ABI_MINOR,
    }
}

extern "C" fn info<E: PluginEntry>() -> RResult<BackendInfo, AbiError> {
    guard(|| {
        let i = &E::state().info;
        let strings = |v: &[String]| {
            v.iter()
                .map(|s| RString::from(s.as_str()))
                .collect::<RVec<_>>()
        };
        Ok(BackendInfo {
            name: i.name.as_str().into(),
            version: i.version.as_str().into(),
            qir_min: i.qir_min,
            qir_max: i.qir_max,
            devices: i
                .devices
                .iter()
                .enumerate()
                .map(|(id, (kind, name, mem))| DeviceDescription {
                    id: id as u32,
                    kind: kind.as_str().into(),
                    name: name.as_str().into(),
                    memory_bytes: *mem,
                })
                .collect(),
            capabilities: Capabilities {
                ops: strings(&i.ops),
                dtypes: i.dtypes.iter().map(|d| *d as u8).collect(),
                region_kinds: strings(&i.region_kinds),
                f64: i.dtypes.contains(&DType::F64),
                synchronous_readback: i.synchronous_readback,
                extensions: strings(&i.extensions),
            },
        })
    })
}

extern "C" fn compile<E: PluginEntry>(
    format: u32,
    version: u32,
    bytes: RSlice<'_, u8>,
    _options: RSlice<'_, u8>,
) -> RResult<u64, AbiError> {
    guard(|| {
        let st = E::state();
        if format != FORMAT_QIR_BINARY {
            return Err(AbiError::unimplemented(format!(
                "program format {format} is not supported (0 = binary QIR)"
            )));
        }
        if version < st.info.qir_min || version > st.info.qir_max {
            return Err(AbiError::new(
                ErrorCode::FailedPrecondition,
                format!(
                    "backend `{}` reads QIR {}..={} but was given version {version}",
                    st.info.name, st.info.qir_min, st.info.qir_max
                ),
            ));
        }
        let program = qir::decode(bytes.as_slice()).map_err(AbiError::invalid)?;
        st.check_program(&program)?;
        let inputs = program.inputs.clone();
        let exe = st.backend.compile(program)?;
        let h = st.handle();
        lock(&st.executables).insert(h, CompiledEntry { exe, inputs });
        Ok(h)
    })
}

extern "C" fn upload<E: PluginEntry>(
    device: u32,
    dtype: u8,
    shape: RSlice<'_, u64>,
    bytes: RSlice<'_, u8>,
) -> RResult<u64, AbiError> {
    guard(|| {
        let st = E::state();
        let ty = st.checked_type(device, dtype, shape.as_slice())?;
        let array = HostView::new(ty, bytes.as_slice()).map_err(AbiError::invalid)?;
        let b = st.backend.upload(device, array)?;
        Ok(st.insert_buffer(b))
    })
}

extern "C" fn buffer_info<E: PluginEntry>(h: u64) -> RResult<BufferInfo, AbiError> {
    guard(|| {
        let b = E::state().buffer(h)?;
        let t = b.ty();
        Ok(BufferInfo {
            dtype: t.dtype as u8,
            shape: t.shape.iter().map(|&d| d as u64).collect(),
        })
    })
}

extern "C" fn execute<E: PluginEntry>(
    exe: u64,
    args: RSlice<'_, u64>,
    donate: RSlice<'_, bool>,
) -> RResult<RVec<u64>, AbiError> {
    guard(|| {
        let st = E::state();
        let (compiled, inputs) = {
            let t = lock(&st.executables);
            let e = t
                .get(&exe)
                .ok_or_else(|| AbiError::invalid(format!("executable handle {exe} is not live")))?;
            (e.exe.clone(), e.inputs.clone())
        };
        if args.len() != inputs.len() {
            return Err(AbiError::invalid(format!(
                "the program takes {} inputs but {} were given",
                inputs.len(),
                args.len()
            )));
        }
        if donate.len() != args.len() && !donate.is_empty() {
            return Err(AbiError::invalid(format!(
                "donation mask has {} entries for {} arguments",
                donate.len(),
                args.len()
            )));
        }
        let mut bufs = Vec::with_capacity(args.len());
        for (i, h) in args.iter().enumerate() {
            let b = st.buffer(*h)?;
            if b.ty() != &inputs[i] {
                return Err(AbiError::invalid(format!(
                    "input {i} must be {} but the buffer is {}",
                    inputs[i],
                    b.ty()
                )));
            }
            bufs.push(b);
        }
        let mut call = Vec::with_capacity(bufs.len());
        for (i, buffer) in bufs.into_iter().enumerate() {
            let donated = donate.get(i).copied().unwrap_or(false);
            if donated {
                lock(&st.buffers).remove(&args[i]);
            }
            call.push(Arg { buffer, donated });
        }
        let outs = compiled.execute(call)?;
        Ok(outs.into_iter().map(|b| st.insert_buffer(b)).collect())
    })
}

extern "C" fn download<E: PluginEntry>(h: u64) -> RResult<u64, AbiError> {
    guard(|| {
        let st = E::state();
        let ev = st.buffer(h)?.download()?;
        let id = st.handle();
        lock(&st.events).insert(id, ev);
        Ok(id)
    })
}

fn no_event(h: u64) -> AbiError {
    AbiError::invalid(format!(
        "event handle {h} is not live (already waited on or released)"
    ))
}

extern "C" fn event_is_ready<E: PluginEntry>(h: u64) -> RResult<bool, AbiError> {
    guard(|| {
        lock(&E::state().events)
            .get(&h)
            .map(|e| e.is_ready())
            .ok_or_else(|| no_event(h))
    })
}

extern "C" fn event_on_ready<E: PluginEntry>(
    h: u64,
    cb: ReadyCallback,
    user: usize,
) -> RResult<(), AbiError> {
    guard(|| {
        // Taken out of the table while registering, so a callback that runs at once may call
        // back into the plugin without deadlocking on the table.
        let st = E::state();
        let mut ev = lock(&st.events).remove(&h).ok_or_else(|| no_event(h))?;
        ev.on_ready(Box::new(move || (cb.func)(user)));
        lock(&st.events).insert(h, ev);
        Ok(())
    })
}

extern "C" fn event_wait<E: PluginEntry>(h: u64) -> RResult<RVec<u8>, AbiError> {
    guard(|| {
        let ev = lock(&E::state().events)
            .remove(&h)
            .ok_or_else(|| no_event(h))?;
        Ok(ev.wait()?.into())
    })
}

extern "C" fn release_buffer<E: PluginEntry>(h: u64) -> RResult<(), AbiError> {
    guard(|| {
        lock(&E::state().buffers)
            .remove(&h)
            .map(|_| ())
            .ok_or_else(|| AbiError::invalid(format!("buffer handle {h} is not live")))
    })
}

extern "C" fn release_executable<E: PluginEntry>(h: u64) -> RResult<(), AbiError> {
    guard(|| {
        lock(&E::state().executables)
            .remove(&h)
            .map(|_| ())
            .ok_or_else(|| AbiError::invalid(format!("executable handle {h} is not live")))
    })
}

extern "C" fn release_event<E: PluginEntry>(h: u64) -> RResult<(), AbiError> {
    guard(|| {
        lock(&E::state().events)
            .remove(&h)
            .map(|_| ())
            .ok_or_else(|| no_event(h))
    })
}

extern "C" fn accuracy<E: PluginEntry>() -> RString {
    // No error channel here: a plugin that cannot even describe itself has failed `info`.
    match catch_unwind(|| E::state().info.accuracy.clone()) {
        Ok(a) => a.as_str().into(),
        Err(_) => "exact".into(),
    }
}

extern "C" fn buffer_ready<E: PluginEntry>(h: u64) -> RResult<(), AbiError> {
    guard(|| E::state().buffer(h)?.block_until_ready())
}

extern "C" fn export_buffer<E: PluginEntry>(h: u64) -> RResult<BufferExport, AbiError> {
    guard(|| E::state().buffer(h)?.export())
}

extern "C" fn allocate<E: PluginEntry>(
    device: u32,
    dtype: u8,
    shape: RSlice<'_, u64>,
) -> RResult<u64, AbiError> {
    guard(|| {
        let st = E::state();
        let ty = st.checked_type(device, dtype, shape.as_slice())?;
        let b = st.backend.allocate(device, ty)?;
        Ok(st.insert_buffer(b))
    })
}

extern "C" fn collectives<E: PluginEntry>() -> ROption<CollectivesModRef> {
    // No error channel: a plugin that panics here is reported as having no collectives.
    match catch_unwind(|| E::state().collectives().is_some()) {
        Ok(true) => ROption::RSome(collectives_module::<E>()),
        _ => ROption::RNone,
    }
}

extern "C" fn set_host_callback(f: HostCallbackFn) {
    super::host_call::set(f);
}

/// Builds the ABI table for plugin `E`. Used by `export_backend!` for the exported root module
/// and for static, in-process registration (the browser build, unit tests).
pub fn module<E: PluginEntry>() -> BackendModRef {
    BackendMod {
        abi_version,
        info: info::<E>,
        compile: compile::<E>,
        upload: upload::<E>,
        buffer_info: buffer_info::<E>,
        execute: execute::<E>,
        download: download::<E>,
        event_is_ready: event_is_ready::<E>,
        event_on_ready: event_on_ready::<E>,
        event_wait: event_wait::<E>,
        release_buffer: release_buffer::<E>,
        release_executable: release_executable::<E>,
        release_event: release_event::<E>,
        accuracy: accuracy::<E>,
        buffer_ready: buffer_ready::<E>,
        export_buffer: export_buffer::<E>,
        allocate: allocate::<E>,
        collectives: collectives::<E>,
        set_host_callback,
    }
    .leak_into_prefix()
}

/// Exports a [`Backend`](crate::plugin::Backend) as a plugin.
///
/// Expands to `backend_module()` (the table, for static registration) and, when the calling
/// crate's `export` feature is on, the two exported symbols a host loads: the version symbol
/// and abi_stable's library header (the root module). Keep `export` off when linking several
/// plugins statically into one binary (their symbols would clash). The plugin crate needs
/// `quabla-abi` as its only dependency, and a `[features] export = []` (on by default for a
/// `cdylib`); without it the library builds but a host refuses it, saying so.
///
/// ```ignore
/// quabla_abi::export_backend!(MyBackend::new());
/// ```
#[macro_export]
macro_rules! export_backend {
    ($ctor:expr) => {
        #[doc(hidden)]
        pub struct QuablaPluginEntry;

        impl $crate::plugin::PluginEntry for QuablaPluginEntry {
            fn state() -> &'static $crate::plugin::PluginState {
                static STATE: ::std::sync::OnceLock<$crate::plugin::PluginState> =
                    ::std::sync::OnceLock::new();
                STATE
                    .get_or_init(|| $crate::plugin::PluginState::new(::std::boxed::Box::new($ctor)))
            }
        }

        /// This plugin's ABI table, for in-process registration.
        pub fn backend_module() -> $crate::abi::BackendModRef {
            $crate::plugin::module::<QuablaPluginEntry>()
        }

        #[cfg(feature = "export")]
        $crate::export_table!(backend_module);
    };
}

/// Exports `$table: fn() -> BackendModRef` as a plugin library's entry points: the version
/// symbol and abi_stable's library header. [`export_backend!`](crate::export_backend) uses
/// it; a plugin that builds its table by hand (a test fixture wrapping the kit's entry points)
/// calls it directly. Only `quabla-abi` is needed: the header is written here with paths
/// through this crate, where abi_stable's own `#[export_root_module]` names `::abi_stable`.
#[macro_export]
macro_rules! export_table {
    ($table:path) => {
        #[no_mangle]
        pub extern "C" fn quabla_plugin_abi_version() -> u64 {
            $crate::abi::packed_abi_version()
        }

        /// abi_stable's library header, as `#[export_root_module]` writes it.
        #[export_name = "_1as_0lib_1header_0root_bmodule_bloader"]
        pub static QUABLA_LIB_HEADER: $crate::abi_stable::library::LibHeader = {
            extern "C" fn erased_root_module() -> $crate::abi_stable::library::RootModuleResult {
                $crate::abi_stable::library::__call_root_module_loader($table)
            }
            // SAFETY: the constructor returns the table of the module type named here, as
            // abi_stable's attribute macro guarantees for the code it writes.
            unsafe {
                $crate::abi_stable::library::LibHeader::from_constructor::<$crate::abi::BackendModRef>(
                    erased_root_module,
                    $crate::abi_stable::library::CheckTypeLayout::Yes,
                )
            }
        };
    };
}

#[cfg(test)]
mod tests {
    /// `export_table!` spells abi_stable's symbol name out (an attribute needs a literal).
    #[test]
    fn the_exported_header_has_abi_stables_symbol_name() {
        assert_eq!(
            abi_stable::library::ROOT_MODULE_LOADER_NAME,
            "_1as_0lib_1header_0root_bmodule_bloader"
        );
    }
}
