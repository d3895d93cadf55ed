//! The plugin kit: what a backend author implements ([`Backend`]) and the glue that exposes it
//! through the ABI table ([`export_backend!`](crate::export_backend)).
//!
//! The kit owns everything every plugin must get right the same way: decoding and validating
//! QIR, the version and capability checks (an unsupported op fails at compile time, naming
//! it), argument type checks at execute, handle tables, donation, and `catch_unwind` around
//! every entry point so a panic becomes an `Internal` error instead of aborting the host.

mod collectives;
mod entry;
mod event;
mod host_call;

pub use collectives::{dst_shape, Collective, Collectives, Communicator, DEFAULT_TIMEOUT};
pub use entry::{module, PluginEntry, PluginState};
pub use event::ReadyEvent;
pub use host_call::call_host;

use crate::abi::{AbiError, BufferExport};
use crate::qir::Program;
use crate::{DType, HostView, TensorType};
use std::any::Any;
use std::sync::Arc;

/// Rust-side description of a backend, turned into the ABI's `BackendInfo` by the kit.
#[derive(Clone, Debug)]
pub struct PluginInfo {
    pub name: String,
    pub version: String,
    pub qir_min: u32,
    pub qir_max: u32,
    /// (kind, name, memory bytes) per device.
    pub devices: Vec<(String, String, u64)>,
    pub ops: Vec<String>,
    pub dtypes: Vec<DType>,
    pub region_kinds: Vec<String>,
    pub synchronous_readback: bool,
    pub extensions: Vec<String>,
    /// The most bytes (in the host encoding) one value may have on this backend; 0 declares
    /// no limit beyond what the machine can address. The kit refuses, at compile and upload,
    /// any value larger than this, so an oversized program fails with a message instead of
    /// aborting on allocation.
    pub max_buffer_bytes: u64,
    /// The accuracy profile the backend's results meet: `exact` (the goldens' tolerances),
    /// `wgsl` or `webgpu` (see the conformance crate's `Precision`). The conformance runner
    /// holds the backend to it without being told.
    pub accuracy: String,
}

impl PluginInfo {
    /// A collectives plugin's description: no devices, no ops, every dtype, the
    /// `collectives` extension.
    ///
    /// ```
    /// let info = quabla_abi::plugin::PluginInfo::collectives_only("mpi", "0.1.0");
    /// assert!(info.devices.is_empty() && info.extensions == ["collectives"]);
    /// ```
    pub fn collectives_only(name: &str, version: &str) -> PluginInfo {
        PluginInfo {
            name: name.into(),
            version: version.into(),
            qir_min: crate::qir::QIR_VERSION_MIN,
            qir_max: crate::qir::QIR_VERSION,
            devices: vec![],
            ops: vec![],
            dtypes: DType::ALL.to_vec(),
            region_kinds: vec![],
            synchronous_readback: true,
            extensions: vec!["collectives".into()],
            max_buffer_bytes: 0,
            accuracy: "exact".into(),
        }
    }
}

/// A backend, as a plugin author writes it. The kit has already validated every program it
/// is given and checked it against the capabilities in [`Backend::info`].
pub trait Backend: Send + Sync + 'static {
    fn info(&self) -> PluginInfo;
    fn compile(&self, program: Program) -> Result<Arc<dyn Executable>, AbiError>;
    /// Copies an array the kit has checked (its size, and bool bytes 0 or 1) into a new
    /// buffer on `device`; the view reads the host's memory in place.
    fn upload(&self, device: u32, array: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError>;
    /// A new zero-filled buffer of a type the kit has checked, whose [`DeviceBuffer::export`]ed
    /// memory may be written until the buffer is first used (a collective's destination).
    /// The default declines; the host then uploads instead.
    fn allocate(&self, _device: u32, ty: TensorType) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        Err(AbiError::unimplemented(format!(
            "this backend cannot allocate a writable buffer ({ty})"
        )))
    }
    /// The plugin's collectives engine, when it is a collectives plugin.
    fn collectives(&self) -> Option<&dyn Collectives> {
        None
    }
}

/// One argument of an execution. A donated buffer is no longer reachable by the host, so the
/// executable may reuse its memory.
pub struct Arg {
    pub buffer: Arc<dyn DeviceBuffer>,
    pub donated: bool,
}

/// A compiled program. Argument types have been checked against the program's inputs.
pub trait Executable: Send + Sync {
    fn execute(&self, args: Vec<Arg>) -> Result<Vec<Arc<dyn DeviceBuffer>>, AbiError>;
}

/// Memory owned by the backend.
pub trait DeviceBuffer: Send + Sync + Any {
    fn ty(&self) -> &TensorType;
    fn download(&self) -> Result<Box<dyn DownloadEvent>, AbiError>;
    fn as_any(&self) -> &dyn Any;
    /// Returns once the buffer's value has been computed. The default downloads it and
    /// drops the bytes, which is right for any backend; one whose buffers are ready when
    /// `execute` returns (a synchronous backend) overrides it to copy nothing.
    fn block_until_ready(&self) -> Result<(), AbiError> {
        self.download()?.wait().map(drop)
    }
    /// The buffer's memory, for a reader in this process (see [`BufferExport`]). The default
    /// declines; the host then downloads.
    fn export(&self) -> Result<BufferExport, AbiError> {
        Err(AbiError::unimplemented(format!(
            "this backend does not export its buffers' memory ({})",
            self.ty()
        )))
    }
}

/// A download in flight.
pub trait DownloadEvent: Send {
    fn is_ready(&self) -> bool;
    /// Blocks until the bytes are there.
    fn wait(self: Box<Self>) -> Result<Vec<u8>, AbiError>;
    /// Arranges for `f` to run once ready (at once if already ready).
    fn on_ready(&mut self, f: Box<dyn FnOnce() + Send>);
}
