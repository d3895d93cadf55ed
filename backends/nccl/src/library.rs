//! NCCL and the CUDA driver, opened at run time by our own binding (no crate on crates.io
//! binds NCCL alone; cudarc's `nccl` module looks for `libnccl.so`, not the `libnccl.so.2`
//! NVIDIA's wheels and packages ship). Only the calls this plugin makes are bound.

use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::PathBuf;
use std::sync::OnceLock;

/// `ncclUniqueId`: 128 opaque bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct UniqueId(pub [u8; 128]);

pub type Comm = *mut c_void;
pub type Stream = *mut c_void;
pub type Result = c_int;
/// `ncclInProgress`: a nonblocking communicator's call has not finished.
pub const IN_PROGRESS: Result = 7;

/// NCCL's entry points.
pub struct Nccl {
    _lib: Library,
    pub get_version: unsafe extern "C" fn(*mut c_int) -> Result,
    pub get_unique_id: unsafe extern "C" fn(*mut UniqueId) -> Result,
    pub comm_init_rank: unsafe extern "C" fn(*mut Comm, c_int, UniqueId, c_int) -> Result,
    pub comm_destroy: unsafe extern "C" fn(Comm) -> Result,
    pub comm_abort: unsafe extern "C" fn(Comm) -> Result,
    pub comm_get_async_error: unsafe extern "C" fn(Comm, *mut Result) -> Result,
    pub all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        Comm,
        Stream,
    ) -> Result,
    pub all_gather:
        unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, Comm, Stream) -> Result,
    pub broadcast: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        Comm,
        Stream,
    ) -> Result,
    pub reduce_scatter: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        Comm,
        Stream,
    ) -> Result,
    pub group_start: unsafe extern "C" fn() -> Result,
    pub group_end: unsafe extern "C" fn() -> Result,
    pub get_error_string: unsafe extern "C" fn(Result) -> *const c_char,
}

/// The CUDA driver's entry points this plugin needs.
pub struct Cuda {
    _lib: Library,
    pub init: unsafe extern "C" fn(u32) -> c_int,
    pub device_get_count: unsafe extern "C" fn(*mut c_int) -> c_int,
    pub device_get: unsafe extern "C" fn(*mut c_int, c_int) -> c_int,
    pub primary_ctx_retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int,
    pub ctx_set_current: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub stream_create: unsafe extern "C" fn(*mut Stream, u32) -> c_int,
    pub stream_query: unsafe extern "C" fn(Stream) -> c_int,
    pub stream_wait_event: unsafe extern "C" fn(Stream, *mut c_void, u32) -> c_int,
}

/// `CUDA_ERROR_NOT_READY`: a stream's work is still running.
pub const CUDA_NOT_READY: c_int = 600;

/// Where NCCL is looked for: `QUABLA_NCCL_DIR`, then the loader's own search (the library
/// path, the system's `libnccl2` package), each as `libnccl.so.2` then `libnccl.so`.
fn nccl_candidates() -> Vec<PathBuf> {
    let names = ["libnccl.so.2", "libnccl.so"];
    let mut v = Vec::new();
    if let Some(dir) = std::env::var_os("QUABLA_NCCL_DIR") {
        v.extend(names.iter().map(|n| PathBuf::from(&dir).join(n)));
    }
    v.extend(names.iter().map(PathBuf::from));
    v
}

macro_rules! sym {
    ($lib:expr, $name:literal) => {
        // SAFETY: the symbol's type is NCCL's / CUDA's documented signature, written above.
        *unsafe { $lib.get($name) }.map_err(|e| {
            format!(
                "{} lacks {}: {e}",
                stringify!($lib),
                String::from_utf8_lossy($name)
            )
        })?
    };
}

fn open_first(candidates: &[PathBuf]) -> std::result::Result<Library, Vec<String>> {
    let mut tried = Vec::new();
    for c in candidates {
        // SAFETY: loading NCCL or the CUDA driver runs their initialisers, which is what
        // every CUDA program does.
        match unsafe { Library::new(c) } {
            Ok(l) => return Ok(l),
            Err(e) => tried.push(format!("{}: {e}", c.display())),
        }
    }
    Err(tried)
}

/// NCCL, opened once; the error says where it was looked for and how to get it.
pub fn nccl() -> std::result::Result<&'static Nccl, String> {
    static N: OnceLock<std::result::Result<Nccl, String>> = OnceLock::new();
    N.get_or_init(|| {
        let lib = open_first(&nccl_candidates()).map_err(|tried| {
            format!(
                "no NCCL library found (tried {}); install it (`pip install nvidia-nccl-cu13`, \
                 then QUABLA_NCCL_DIR=<site-packages>/nvidia/nccl/lib, or Debian's libnccl2) \
                 or point QUABLA_NCCL_DIR at the folder holding libnccl.so.2",
                tried.join("; ")
            )
        })?;
        Ok(Nccl {
            get_version: sym!(lib, b"ncclGetVersion\0"),
            get_unique_id: sym!(lib, b"ncclGetUniqueId\0"),
            comm_init_rank: sym!(lib, b"ncclCommInitRank\0"),
            comm_destroy: sym!(lib, b"ncclCommDestroy\0"),
            comm_abort: sym!(lib, b"ncclCommAbort\0"),
            comm_get_async_error: sym!(lib, b"ncclCommGetAsyncError\0"),
            all_reduce: sym!(lib, b"ncclAllReduce\0"),
            all_gather: sym!(lib, b"ncclAllGather\0"),
            broadcast: sym!(lib, b"ncclBroadcast\0"),
            reduce_scatter: sym!(lib, b"ncclReduceScatter\0"),
            group_start: sym!(lib, b"ncclGroupStart\0"),
            group_end: sym!(lib, b"ncclGroupEnd\0"),
            get_error_string: sym!(lib, b"ncclGetErrorString\0"),
            _lib: lib,
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The CUDA driver, opened and initialised once.
pub fn cuda() -> std::result::Result<&'static Cuda, String> {
    static C: OnceLock<std::result::Result<Cuda, String>> = OnceLock::new();
    C.get_or_init(|| {
        let lib = open_first(&[PathBuf::from("libcuda.so.1"), PathBuf::from("libcuda.so")])
            .map_err(|tried| {
                format!(
                    "no CUDA driver (tried {}); NCCL needs an NVIDIA GPU and its driver",
                    tried.join("; ")
                )
            })?;
        let c = Cuda {
            init: sym!(lib, b"cuInit\0"),
            device_get_count: sym!(lib, b"cuDeviceGetCount\0"),
            device_get: sym!(lib, b"cuDeviceGet\0"),
            primary_ctx_retain: sym!(lib, b"cuDevicePrimaryCtxRetain\0"),
            ctx_set_current: sym!(lib, b"cuCtxSetCurrent\0"),
            stream_create: sym!(lib, b"cuStreamCreate\0"),
            stream_query: sym!(lib, b"cuStreamQuery\0"),
            stream_wait_event: sym!(lib, b"cuStreamWaitEvent\0"),
            _lib: lib,
        };
        // SAFETY: cuInit may be called any number of times.
        let rc = unsafe { (c.init)(0) };
        if rc != 0 {
            return Err(format!(
                "the CUDA driver failed to start (cuInit: error {rc}); no GPU?"
            ));
        }
        Ok(c)
    })
    .as_ref()
    .map_err(Clone::clone)
}

impl Nccl {
    /// NCCL's message for a result code.
    pub fn message(&self, r: Result) -> String {
        // SAFETY: NCCL returns a static string for every code.
        let p = unsafe { (self.get_error_string)(r) };
        if p.is_null() {
            return format!("NCCL error {r}");
        }
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// The version as NCCL encodes it (`major * 10000 + minor * 100 + patch` since 2.9).
    pub fn version(&self) -> std::result::Result<i32, String> {
        let mut v: c_int = 0;
        // SAFETY: writes one int.
        let r = unsafe { (self.get_version)(&mut v) };
        if r != 0 {
            return Err(self.message(r));
        }
        Ok(v)
    }
}
