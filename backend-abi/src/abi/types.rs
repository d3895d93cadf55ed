//! Plain data types that cross the plugin boundary.

use abi_stable::{
    std_types::{RSlice, RString, RVec},
    StableAbi,
};
use std::fmt;

/// An ABI version pair.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbiVersion {
    pub major: u32,
    pub minor: u32,
}

impl fmt::Display for AbiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Kinds of failure, as PJRT names them. Crosses the ABI as a `u32` so codes can be added
/// without a layout change; an unknown code reads as `Internal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    InvalidArgument = 0,
    Unimplemented = 1,
    ResourceExhausted = 2,
    FailedPrecondition = 3,
    Internal = 4,
    /// A peer of a collective failed or left (a dead rank, a broken link): retrying the
    /// same call will not help; the job must restart.
    Unavailable = 5,
    /// A deadline passed before the operation completed (a collective whose peers never
    /// arrived).
    DeadlineExceeded = 6,
}

impl ErrorCode {
    pub fn from_u32(c: u32) -> ErrorCode {
        match c {
            0 => ErrorCode::InvalidArgument,
            1 => ErrorCode::Unimplemented,
            2 => ErrorCode::ResourceExhausted,
            3 => ErrorCode::FailedPrecondition,
            5 => ErrorCode::Unavailable,
            6 => ErrorCode::DeadlineExceeded,
            _ => ErrorCode::Internal,
        }
    }
}

/// An error value returned across the boundary: a code and a message for the user.
///
/// ```
/// use quabla_abi::abi::{AbiError, ErrorCode};
/// let e = AbiError::new(ErrorCode::Unimplemented, "op `svd` is not supported");
/// assert_eq!(e.code(), ErrorCode::Unimplemented);
/// assert!(e.to_string().contains("svd"));
/// ```
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct AbiError {
    pub code: u32,
    pub message: RString,
}

impl AbiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AbiError {
            code: code as u32,
            message: RString::from(message.into()),
        }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }
    pub fn unimplemented(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unimplemented, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
    pub fn code(&self) -> ErrorCode {
        ErrorCode::from_u32(self.code)
    }
    pub fn message(&self) -> &str {
        self.message.as_str()
    }
}

impl fmt::Display for AbiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.code(), self.message)
    }
}

impl std::error::Error for AbiError {}

/// What a device is, separate from any live handle to it.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq)]
pub struct DeviceDescription {
    pub id: u32,
    /// `cpu`, `gpu`...
    pub kind: RString,
    pub name: RString,
    /// 0 when unknown.
    pub memory_bytes: u64,
}

/// What a backend can run; the host checks programs against it before compiling.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq)]
pub struct Capabilities {
    /// Op names as the QIR text form spells them.
    pub ops: RVec<RString>,
    /// dtype codes (`DType as u8`).
    pub dtypes: RVec<u8>,
    /// `cond`, `while`.
    pub region_kinds: RVec<RString>,
    pub f64: bool,
    /// True when a download's event is ready as soon as it is returned.
    pub synchronous_readback: bool,
    /// Optional feature groups (`collectives`, `profiling`) the host may query.
    pub extensions: RVec<RString>,
}

/// Identity and abilities of a backend.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq)]
pub struct BackendInfo {
    /// Platform name used by `QUABLA_PLATFORMS` (`cpu`, `wgpu`...).
    pub name: RString,
    pub version: RString,
    pub qir_min: u32,
    pub qir_max: u32,
    pub devices: RVec<DeviceDescription>,
    pub capabilities: Capabilities,
}

/// dtype code and shape of a buffer.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq)]
pub struct BufferInfo {
    pub dtype: u8,
    pub shape: RVec<u64>,
}

/// A host function the plugin calls (with the host's `user_data`) when a download is ready.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy)]
pub struct ReadyCallback {
    pub func: extern "C" fn(usize),
}

/// The host function a plugin calls to run a `host_callback` op: `(callback id, argument
/// memories, result memories)`. Every memory is host memory, dense and ready
/// ([`BufferExport::host`]); the host reads the arguments and fills every result's bytes,
/// whose dtypes and shapes the op declares, before it returns. It runs the callback on the
/// calling thread and returns its failure as an error; it never unwinds.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy)]
pub struct HostCallbackFn {
    pub func: extern "C" fn(
        u64,
        RSlice<'_, BufferExport>,
        RSlice<'_, BufferExport>,
    ) -> abi_stable::std_types::RResult<(), AbiError>,
}

/// DLPack's device type of host (CPU) memory: a [`BufferExport`] of this kind points into
/// the process's own address space.
pub const DEVICE_KIND_HOST: u32 = 1;
/// DLPack's device type of CUDA device memory.
pub const DEVICE_KIND_CUDA: u32 = 2;

/// A buffer's memory, as a compute plugin exposes it (ABI 1.3, DLPack style): another plugin
/// (a collectives one) or the host reads it, and writes it when the buffer came from
/// `allocate` and has not been used yet, without copying through the host.
///
/// The memory stays valid while the buffer's handle is live; the exporter keeps it. Bytes are
/// dense, row-major, in the host encoding of the dtype (bool: one byte, 0 or 1).
///
/// ```
/// use quabla_abi::abi::{BufferExport, DEVICE_KIND_HOST};
/// let data = [1.0f32, 2.0];
/// let e = BufferExport::host(data.as_ptr() as usize, 8, 3, &[2]);
/// assert_eq!((e.device_kind, e.byte_size, e.ready_event), (DEVICE_KIND_HOST, 8, 0));
/// ```
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct BufferExport {
    /// [`DEVICE_KIND_HOST`], [`DEVICE_KIND_CUDA`], or another DLPack device type.
    pub device_kind: u32,
    /// The device's ordinal within its kind (the CUDA device number; 0 for host memory).
    pub ordinal: u32,
    /// The address of the first byte.
    pub address: usize,
    pub byte_size: u64,
    pub dtype: u8,
    pub shape: RVec<u64>,
    /// 0 when the bytes are ready now; otherwise an event of the device's own API (a
    /// `CUevent` for CUDA) the reader waits on before reading.
    pub ready_event: u64,
}

impl BufferExport {
    /// Host memory that is ready now.
    pub fn host(address: usize, byte_size: u64, dtype: u8, shape: &[u64]) -> BufferExport {
        BufferExport {
            device_kind: DEVICE_KIND_HOST,
            ordinal: 0,
            address,
            byte_size,
            dtype,
            shape: shape.iter().copied().collect(),
            ready_event: 0,
        }
    }
}
